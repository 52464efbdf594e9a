//! The intervals the screen can go back to, which one it shows, and the
//! graphs' history with the values pinned to it. Bounded in count and in
//! the /proc text the intervals hold together.

use std::collections::VecDeque;
use std::sync::Arc;

use super::flips::Flips;
use super::keys::KeyAction;
use crate::control::flap::Moves;
use crate::engine::Decision;
use crate::kernel::Sample;
use crate::kernel::deltas::{CpuLoad, IntervalLoads};
use crate::rules::eval::Trace;
use crate::rules::{RuleSet, SourceFile};
use crate::tui::graph_series::History;

/// How many intervals the screens can go back to.
pub const FRAMES: usize = 600;
/// The most /proc text and per-CPU loads the kept intervals may hold
/// together. A kernel's meminfo and vmstat are a few kilobytes and a guest
/// a few CPUs, so 600 intervals hold about 3 MB; files of megabytes (a
/// damaged or hostile root) or 65,536 CPUs (a replay held 4.4 GB of their
/// loads) shorten the history instead of growing memory by hundreds of
/// times their size.
pub const FRAME_BYTES: u64 = 32 << 20;

/// One interval as the screens show it.
#[derive(Debug, Clone)]
pub struct Interval {
    pub number: usize,
    pub sample: Arc<Sample>,
    pub decision: Option<Decision>,
    pub trace: Trace,
    /// Its CPUs' loads, worked out when something shows them.
    pub loads: IntervalLoads,
    /// Each user variable some rule names, with its value this interval.
    pub variables: Vec<(String, Option<f64>)>,
    /// What was really done to the guest this interval (nothing in observe
    /// mode, an approval's actions in step-confirm).
    pub applied: Moves,
    /// The rules that decided this interval, and their file: the trace
    /// points into them, so after a reload (`r`, an applied edit) an
    /// earlier interval is still explained by the rules that decided it.
    pub rules: Arc<RuleSet>,
    pub file: Arc<SourceFile>,
    /// What the watch over flips had found by this interval: the Flips
    /// view of an interval paused on or travelled to lists nothing newer.
    pub flips: Flips,
}

impl Interval {
    /// The value a pinned name had in this interval: a CPU's busy share in
    /// percent ([`cpu_pin`]) or a rule variable's value; NaN when it had
    /// none.
    pub fn pinned_value(&self, name: &str) -> f64 {
        match cpu_of_pin(name) {
            Some(id) => self
                .loads
                .get()
                .iter()
                .find(|l| l.id() == id)
                .and_then(CpuLoad::busy)
                .map_or(f64::NAN, |b| b * 100.0),
            None => self
                .variables
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| *v)
                .unwrap_or(f64::NAN),
        }
    }
}

/// The pinned name of a CPU's busy share; it cannot be a variable's (no
/// variable name holds a space).
pub fn cpu_pin(id: u32) -> String {
    format!("cpu{id} busy%")
}

/// The CPU a pinned name stands for, if it is one.
pub fn cpu_of_pin(name: &str) -> Option<u32> {
    name.strip_prefix("cpu")?
        .strip_suffix(" busy%")?
        .parse()
        .ok()
}

/// The kept intervals, newest first, and where the screen stands in them.
#[derive(Default)]
pub struct Timeline {
    frames: VecDeque<Interval>,
    /// `None` follows the newest interval; `Some(k)` shows the k-th newest.
    cursor: Option<usize>,
    paused: bool,
    /// The interval held (paused or travelled to) fell out of the kept
    /// window: a live guest's readings go on, so the one shown is now the
    /// oldest kept and moves on with each reading (the header says so).
    slid: bool,
    history: History,
    /// Names whose values the graphs follow, in the order pinned.
    pinned: Vec<String>,
}

impl Timeline {
    /// No interval yet, following the newest.
    pub fn new() -> Self {
        Timeline {
            frames: VecDeque::with_capacity(FRAMES),
            ..Timeline::default()
        }
    }

    /// The intervals kept, newest first.
    pub fn frames(&self) -> &VecDeque<Interval> {
        &self.frames
    }

    /// The interval the screens show now.
    pub fn frame(&self) -> Option<&Interval> {
        self.frames.get(self.cursor.unwrap_or(0))
    }

    /// The interval before the one shown.
    pub fn previous_frame(&self) -> Option<&Interval> {
        self.frames.get(self.cursor.unwrap_or(0) + 1)
    }

    /// `None` when following the newest, else how many intervals back.
    pub fn cursor(&self) -> Option<usize> {
        self.cursor
    }

    /// Whether the interval shown is an earlier one than the newest
    /// (time travel): what the panels show is "then", not "now".
    pub fn travelling(&self) -> bool {
        self.cursor.is_some_and(|k| k > 0)
    }

    /// Whether new readings wait to be shown (the screen stays put).
    pub fn paused(&self) -> bool {
        self.paused
    }

    /// Whether the interval held fell out of the kept window since it
    /// was chosen: what is shown is the oldest kept, moving on.
    pub fn slid(&self) -> bool {
        self.slid && self.cursor.is_some_and(|k| k > 0)
    }

    /// The graphs' series, pinned values included.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The names pinned to the graphs.
    pub fn pinned(&self) -> &[String] {
        &self.pinned
    }

    /// Takes a new interval: its values go to the graphs (each pinned name
    /// looked up in it), the oldest intervals go past the bounds, and an
    /// interval travelled to stays the one shown.
    pub fn push(&mut self, frame: Interval) {
        self.history.push(Arc::clone(&frame.sample));
        for name in &self.pinned {
            self.history.record_pinned(name, frame.pinned_value(name));
        }
        self.frames.push_front(frame);
        let mut bytes: u64 = self.frames.iter().map(frame_bytes).sum();
        while self.frames.len() > FRAMES || (self.frames.len() > 2 && bytes > FRAME_BYTES) {
            if let Some(old) = self.frames.pop_back() {
                bytes -= frame_bytes(&old);
            }
        }
        if let Some(k) = self.cursor.as_mut() {
            let last = self.frames.len() - 1;
            self.slid |= *k + 1 > last;
            *k = (*k + 1).min(last);
        }
    }

    /// Starts again from no interval (a seek went past more than are kept:
    /// the old ones would stand next to the new as if one came after the
    /// other); `before` is the reading just before the next interval, its
    /// rates are taken against it. The names pinned stay pinned.
    pub fn restart(&mut self, before: Option<Arc<Sample>>) {
        self.slid = false;
        self.frames.clear();
        self.cursor = None;
        self.history = History::after(before);
        for name in &self.pinned {
            self.history.pin(name);
        }
    }

    /// Shows the first interval kept at or after `at` and holds it there
    /// (`J` with a time the screen keeps).
    pub fn travel_to(&mut self, at: crate::kernel::Stamp) {
        // Newest first: the intervals at or after `at` lead.
        if let Some(k) = self.frames.iter().rposition(|f| f.sample.stamp >= at) {
            self.cursor = Some(k);
            self.paused = true;
            self.slid = false;
        }
    }

    /// Shows the newest interval and holds it there: where a seek to a
    /// time arrived.
    pub fn hold_newest(&mut self) {
        self.cursor = Some(0);
        self.paused = true;
        self.slid = false;
    }

    /// Pins `name` to the graphs, its series filled with the values it
    /// had in the intervals kept; or unpins it if it was.
    pub fn toggle_pin(&mut self, name: String) {
        if let Some(i) = self.pinned.iter().position(|p| *p == name) {
            self.pinned.remove(i);
            self.history.unpin(&name);
        } else {
            let kept = self.frames.iter().rev().map(|f| f.pinned_value(&name));
            self.history.pin_filled(&name, kept);
            self.pinned.push(name);
        }
    }

    /// Whether the decision changed at the `k`-th newest interval: it
    /// decided otherwise than the interval before it (the oldest kept has
    /// none before it). `[` and `]` land on these, so each undoes the other.
    fn changed_at(&self, k: usize) -> bool {
        let moves = |k: usize| {
            self.frames
                .get(k)
                .map(|f| f.decision.as_ref().map(Moves::of))
        };
        match (moves(k), moves(k + 1)) {
            (Some(now), Some(before)) => now != before,
            _ => false,
        }
    }

    /// Time travel: pause, step back and forth, jump to the ends or to
    /// where the decision changed. Other actions do nothing.
    pub fn travel(&mut self, action: KeyAction) {
        self.slid = false;
        match action {
            KeyAction::Pause => {
                self.paused = !self.paused;
                if self.paused && self.cursor.is_none() {
                    self.cursor = Some(0);
                } else if !self.paused {
                    self.cursor = None;
                }
            }
            KeyAction::Back => {
                let k = self.cursor.unwrap_or(0);
                if k + 1 < self.frames.len() {
                    self.cursor = Some(k + 1);
                    self.paused = true;
                }
            }
            KeyAction::Forward => match self.cursor {
                Some(0) | None => {
                    self.cursor = None;
                    self.paused = false;
                }
                Some(k) => self.cursor = Some(k - 1),
            },
            KeyAction::Oldest => {
                self.cursor = Some(self.frames.len().saturating_sub(1));
                self.paused = true;
            }
            KeyAction::PreviousChange | KeyAction::NextChange => {
                let here = self.cursor.unwrap_or(0);
                let found = if action == KeyAction::PreviousChange {
                    (here + 1..self.frames.len()).find(|k| self.changed_at(*k))
                } else {
                    (0..here).rev().find(|k| self.changed_at(*k))
                };
                if let Some(k) = found {
                    self.cursor = Some(k);
                    self.paused = true;
                }
            }
            KeyAction::Newest => {
                self.cursor = None;
                self.paused = false;
            }
            _ => {}
        }
    }
}

/// What an interval holds that grows with the guest: its /proc text, its
/// `cpuN` lines and its CPUs' loads, counted as if worked out (the screen
/// works them out when it shows the interval; the CPU lists are shared
/// between readings).
fn frame_bytes(f: &Interval) -> u64 {
    let lines = f.sample.per_cpu.len() * std::mem::size_of::<(u32, crate::kernel::CpuTicks)>();
    let loads = f.loads.most() * std::mem::size_of::<CpuLoad>();
    u64::from(f.sample.proc_bytes.meminfo)
        + u64::from(f.sample.proc_bytes.vmstat)
        + (lines + loads) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{CpuTicks, Stamp};

    fn interval(number: usize) -> Interval {
        let empty = SourceFile::new("empty.conf", Vec::new());
        Interval {
            number,
            sample: Arc::new(Sample::bare(
                Stamp::new(number as i64, 0),
                CpuTicks::default(),
                1,
                2,
            )),
            decision: None,
            trace: Trace::new(),
            loads: IntervalLoads::default(),
            variables: Vec::new(),
            applied: Moves::default(),
            rules: Arc::new(
                crate::rules::load(&empty, &crate::rules::SystemFacts::any_machine(2, "test"))
                    .rules,
            ),
            file: Arc::new(empty),
            flips: Flips::of(
                &crate::control::watch::Watch::new(crate::control::flap::FlapConfig::default()),
                &mut Arc::default(),
            ),
        }
    }

    #[test]
    fn an_interval_travelled_to_stays_shown_as_new_ones_arrive_and_the_oldest_go() {
        let mut t = Timeline::new();
        t.travel(KeyAction::Back);
        t.travel(KeyAction::Oldest);
        assert_eq!(t.frame().map(|f| f.number), None, "nothing to show yet");
        t.travel(KeyAction::Newest);
        for n in 0..3 {
            t.push(interval(n));
        }
        t.travel(KeyAction::Back);
        assert_eq!((t.frame().map(|f| f.number), t.paused()), (Some(1), true));
        t.push(interval(3));
        assert_eq!(
            t.frame().map(|f| f.number),
            Some(1),
            "still the one travelled to"
        );
        assert!(!t.slid());
        for n in 4..FRAMES + 10 {
            t.push(interval(n));
        }
        assert_eq!(t.frames().len(), FRAMES);
        assert_eq!(
            t.cursor(),
            Some(FRAMES - 1),
            "gone past: the oldest kept shows"
        );
        assert!(t.slid(), "and it is said to move on");
        t.travel(KeyAction::Back);
        assert!(!t.slid(), "a key chose it again");
        t.travel(KeyAction::Newest);
        assert_eq!((t.cursor(), t.paused()), (None, false));
        t.travel(KeyAction::Forward);
        assert_eq!(t.cursor(), None, "forward from now stays at now");
    }

    #[test]
    fn brackets_land_on_the_interval_where_the_decision_changed_both_ways() {
        use crate::engine::CpuAction;
        let decided = |number: usize, action: CpuAction| Interval {
            decision: Some(crate::control::flap::tests::cpu(number, action)),
            ..interval(number)
        };
        // Changes at #2 (plug), #4 (nothing) and #5 (unplug).
        let mut t = Timeline::new();
        for (n, action) in [
            CpuAction::None,
            CpuAction::None,
            CpuAction::Plug,
            CpuAction::Plug,
            CpuAction::None,
            CpuAction::Unplug,
        ]
        .into_iter()
        .enumerate()
        {
            t.push(decided(n, action));
        }
        let shown = |t: &Timeline| t.frame().map(|f| f.number);
        let mut path = Vec::new();
        for key in [KeyAction::PreviousChange; 3] {
            t.travel(key);
            path.push(shown(&t));
        }
        assert_eq!(
            path,
            [Some(4), Some(2), Some(2)],
            "each change, then none before #2: the oldest has nothing to differ from"
        );
        assert!(t.paused());
        t.travel(KeyAction::NextChange);
        assert_eq!(shown(&t), Some(4), "`]` undoes `[`");
        t.travel(KeyAction::NextChange);
        assert_eq!(shown(&t), Some(5));
        t.travel(KeyAction::PreviousChange);
        assert_eq!(shown(&t), Some(4));
    }

    #[test]
    fn a_pinned_name_starts_with_the_values_kept_and_follows_each_new_interval() {
        let with_x = |n: usize| Interval {
            variables: vec![("x".into(), Some(n as f64 + 7.0))],
            ..interval(n)
        };
        let mut t = Timeline::new();
        // An interval before "x" was named, then three that name it.
        t.push(interval(0));
        for n in 1..4 {
            t.push(with_x(n));
        }
        let series = |t: &Timeline, name: &str| {
            t.history()
                .pinned()
                .find(|(n, _)| *n == name)
                .map(|(_, s)| {
                    s.values()
                        .map(|v| (!v.is_nan()).then_some(v))
                        .collect::<Vec<_>>()
                })
        };
        t.toggle_pin("x".into());
        assert_eq!(
            series(&t, "x"),
            Some(vec![None, Some(8.0), Some(9.0), Some(10.0)]),
            "filled from the kept intervals, lined up with the graphs"
        );
        t.push(with_x(4));
        assert_eq!(
            series(&t, "x").map(|s| s.last().copied()),
            Some(Some(Some(11.0)))
        );
        assert_eq!(
            series(&t, "x").map(|s| s.len()),
            Some(
                t.history()
                    .series(crate::tui::graph_series::Metric::Busy)
                    .len()
            )
        );
        // A CPU's busy share: no loads kept, so gaps, never made-up values.
        t.toggle_pin(cpu_pin(3));
        assert_eq!(series(&t, "cpu3 busy%"), Some(vec![None; 5]));
        assert_eq!(cpu_of_pin(&cpu_pin(3)), Some(3));
        assert_eq!(cpu_of_pin("cpu3"), None);
        t.toggle_pin("x".into());
        assert_eq!(t.pinned(), ["cpu3 busy%".to_string()]);
        assert_eq!(series(&t, "x"), None);
    }

    #[test]
    fn a_pinned_cpu_counts_as_busy_what_the_cpu_panel_counts() {
        // Interrupts are work: the panel's bars count them, so the pinned
        // graph must too (10 of 100 ticks busy, 4 of them irq/softirq).
        let delta = CpuTicks {
            user: 5,
            system: 1,
            irq: 3,
            softirq: 1,
            idle: 85,
            steal: 5,
            ..CpuTicks::default()
        };
        let load = CpuLoad::Active {
            id: 2,
            total: delta.total(),
            delta,
        };
        let frame = Interval {
            loads: IntervalLoads::known(vec![load]),
            ..interval(0)
        };
        let panel = crate::tui::cpu_panel::busy_ticks(&delta) as f64 / delta.total() as f64;
        assert_eq!(delta.total(), 100);
        assert_eq!(panel, 0.10);
        assert_eq!(frame.pinned_value(&cpu_pin(2)), panel * 100.0);
    }
}
