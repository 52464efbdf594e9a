//! The screen's control thread: it owns the session and the actuator
//! ([`Core`]), takes the readings, runs the session (decisions and, when
//! armed, the sysfs writes), arms and disarms the guest and carries out
//! every key that needs the outside world. It tells the screen what
//! changed by messages ([`Update`]) and never shares what the screen draws
//! from, so slow I/O (a CPU going offline can take seconds on s390) blocks
//! neither drawing nor keys.

pub mod read_ahead;

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::arming::{ArmError, Progress, Tracked, arm, arm_check, disarm};
use super::command::Command;
use super::core::Core;
use super::edited::EditedRules;
use super::keys::KeyAction;
use super::log_book::LogKind;
use super::modal::Dialog;
use super::options::{Options, read_rules};
use super::seek::SeekTo;
use super::stop::StopFlag;
use super::update::{ScreenEnd, Update};
use crate::control::controller::Mode;
use crate::control::guard::Guard;
use crate::kernel::actuator::RootActuator;
use crate::kernel::{Sample, Source};
use read_ahead::{Leg, ReadAhead};

/// The control thread's state between wake-ups.
struct Control {
    options: Options,
    live: bool,
    armed: Option<Guard>,
    speed: f64,
    paused: bool,
    exhausted: bool,
    next: Instant,
    cpu_mark: (Instant, Option<u64>),
    start_mode: Option<Mode>,
    progress: Progress,
    /// A replay being read ahead (`G`, `J`), between its legs.
    seeking: Option<ReadAhead>,
    /// Who else acted on the live guest when last looked up, and the
    /// readings until the next look.
    others: (Option<crate::control::lock::Actor>, u32),
    /// The dead run whose journal was found when last looked up.
    dead_run: Option<crate::control::guard::DeadRun>,
}

/// Every how many readings an observing screen looks up who else acts on
/// the guest (the pid file and the lock table: a few system calls).
const LOOK_FOR_OTHERS_EVERY: u32 = 5;

/// How long one leg of a seek reads before the control thread looks at
/// its commands again (a quit, a signal) and says how far it got.
const SEEK_LEG: Duration = Duration::from_millis(100);

/// Runs `core` until the screen quits or a signal raises `stop`; then puts
/// the guest back and says how that went. Every change goes to `notify`
/// as one batch of updates per wake-up; the actuator's progress goes to
/// `progress` as it happens.
pub fn run(
    options: Options,
    mut core: Core,
    source: &mut dyn Source,
    commands: &Receiver<Command>,
    stop: &StopFlag,
    progress: Progress,
    notify: impl Fn(Vec<Update>) -> bool,
) {
    let live = options.replay.is_none();
    let start_mode =
        (options.mode != Mode::Observe && live && options.sim.is_none()).then_some(options.mode);
    let mut c = Control {
        options,
        live,
        armed: None,
        speed: 1.0,
        paused: false,
        exhausted: false,
        next: Instant::now(),
        cpu_mark: (Instant::now(), crate::kernel::machine::own_cpu_ns()),
        start_mode,
        progress,
        seeking: None,
        others: (None, 0),
        dead_run: None,
    };
    let end = loop {
        let sampling = !c.exhausted && (c.live_guest() || !c.paused);
        let wait = if c.seeking.is_some() {
            Duration::ZERO
        } else if sampling {
            c.next.saturating_duration_since(Instant::now())
        } else {
            // Nothing to read: wake only to keep plugtop's own CPU
            // figure true (it falls once a replay ends or pauses).
            core.session()
                .rules()
                .pace(c.options.interval)
                .max(Duration::from_secs(1))
        };
        let command = commands.recv_timeout(wait);
        // A signal goes before the commands queued ahead of its own
        // `Stop` (thousands, if keys were pasted into the screen).
        if let Some(signal) = stop.raised() {
            break ScreenEnd::signal(signal);
        }
        let mut updates = Vec::new();
        match command {
            Ok(Command::Act(action)) => c.handle(&mut core, action, &mut updates),
            Ok(Command::SetMode(mode)) => updates.push(core.set_mode(mode)),
            Ok(Command::Arm(mode)) => c.arm_now(&mut core, mode, &mut updates),
            Ok(Command::Accept(shown)) => updates.push(core.accept(&shown)),
            Ok(Command::Reject) => updates.push(core.reject()),
            Ok(Command::Export { path, text }) => {
                updates.extend(crate::tui::log_export::write(&path, &text));
            }
            Ok(Command::Seek(to)) => c.seek(to, &mut updates),
            // Esc while reading ahead: it stops where it stands.
            Ok(Command::StopSeek) => {
                if let Some(mut passage) = c.seeking.take() {
                    passage.stop();
                    c.end_seek(passage, &core, source, &mut updates);
                }
            }
            Ok(Command::ApplyRules(rules)) => c.apply_rules(&mut core, &rules, &mut updates),
            Ok(Command::WriteRules {
                path,
                rules,
                replace,
            }) => c.write_rules(&path, &rules, replace, &mut updates),
            Ok(Command::Wake { paused }) => {
                c.paused = paused;
                continue;
            }
            Ok(Command::Quit) => break ScreenEnd::Quit,
            Ok(Command::Stop(signal)) => break ScreenEnd::signal(signal),
            Err(RecvTimeoutError::Timeout) if c.seeking.is_some() => {
                c.seek_on(&mut core, source, &mut updates);
            }
            Err(RecvTimeoutError::Timeout) if sampling => c.tick(&mut core, source, &mut updates),
            Err(RecvTimeoutError::Timeout) => c.own_cpu(Instant::now(), &mut updates),
            Err(RecvTimeoutError::Disconnected) => break ScreenEnd::Quit,
        }
        // Nothing changed (a key with nothing to do here): no redraw.
        if !updates.is_empty() && !notify(updates) {
            break ScreenEnd::Quit;
        }
    };
    let mut said = Vec::new();
    let mut restored = Vec::new();
    let end = match c.armed.take() {
        Some(armed) => match disarm(armed, core.take_actuator(), &mut |kind, line| {
            if kind == LogKind::Note {
                restored.push(line.clone());
            }
            said.push(Update::Note(kind, line))
        }) {
            Ok(()) if matches!(end, ScreenEnd::Quit) => ScreenEnd::GaveBack(restored),
            Ok(()) => put_back(end),
            Err(why) => ScreenEnd::RestoreFailed(why),
        },
        None => end,
    };
    // Quitting a simulated guest puts nothing back: it says what ended
    // there, as a served root says what it put back (adversary F9).
    let end = match (end, c.options.sim.is_some(), core.latest()) {
        (ScreenEnd::Quit, true, Some(last)) => ScreenEnd::GaveBack(vec![discarded(last)]),
        (end, ..) => end,
    };
    // From here on the process may end without the screen thread (stuck
    // writing to a terminal nobody reads) once a signal asked it to.
    stop.given_back(end.exit_status(), end.done(c.options.sim.is_some()));
    said.push(Update::Ended(end));
    let _ = notify(said);
}

/// The Log's line for a plugtop that ended without putting the guest
/// back: who, when, what it found (what restoring puts back) against what
/// is online `now`, and the command that restores it.
fn left_changed_line(
    dead: &crate::control::guard::DeadRun,
    now: Option<&crate::kernel::cpulist::CpuList>,
) -> String {
    let since = dead.since.map_or(String::new(), |t| {
        format!(
            ", started {}",
            crate::report::time_of_day(crate::kernel::Stamp::new(t, 0))
        )
    });
    let now = now.map_or(String::new(), |n| {
        format!(" (now {})", crate::report::words::online_list(n))
    });
    format!(
        "a plugtop (pid {}{since}) ended without putting this guest back: its journal {} holds what it found, {}{now}; `{}` puts that back (arming is refused until then)",
        dead.pid, dead.journal, dead.found, dead.restore
    )
}

/// A signal's ending once the armed guest was put back: it says so.
fn put_back(end: ScreenEnd) -> ScreenEnd {
    match end {
        ScreenEnd::Signal { signal, .. } => ScreenEnd::Signal {
            signal,
            put_back: true,
        },
        end => end,
    }
}

/// What quitting the simulator leaves: the simulated guest as its last
/// reading had it, discarded; nothing outside plugtop was changed.
fn discarded(last: &crate::kernel::Sample) -> String {
    let online = crate::report::words::online_list(&last.online);
    let pool = last
        .cmm_pages
        .map_or(String::new(), |p| format!(", cmm_pages {p}"));
    format!(
        "the simulated guest ended with {online}{pool} and is discarded; nothing on this machine was changed"
    )
}

impl Control {
    /// One reading, decided and acted on.
    fn tick(&mut self, core: &mut Core, source: &mut dyn Source, updates: &mut Vec<Update>) {
        let now = Instant::now();
        let reading = source.next_sample();
        let warning = source.warning();
        updates.push(Update::Status(source.status()));
        match reading {
            Some(Ok(s)) => {
                // `--mode step|auto` arms on the first reading, before it
                // is decided: the session then starts acting with it and
                // applies the start limits as cpuplugd does at its start.
                if let Some(mode) = self.start_mode.take() {
                    self.arm_at_start(core, mode, &s, updates);
                }
                updates.push(core.step(s));
                for e in source.events() {
                    updates.push(Update::Note(LogKind::Action, e));
                }
            }
            Some(Err(e)) => updates.push(Update::Note(
                LogKind::Problem,
                format!("skipping this interval: {}", crate::error_chain::text(&e)),
            )),
            None => {
                self.exhausted = true;
                updates.push(Update::Note(LogKind::Note, "end of the recording".into()));
            }
        }
        if let Some(w) = warning {
            updates.push(Update::Note(LogKind::Problem, w.clone()));
            updates.push(Update::Damaged(w));
        }
        self.look_for_others(core, updates);
        self.pace_from(core, now);
        self.own_cpu(now, updates);
    }

    /// Whether the source is a real guest, whose readings go on while the
    /// screen is paused (its time does not wait). A replay and the
    /// simulator wait: paused, no reading is taken (the simulated guest
    /// stands still too), so what is shown stays until resumed.
    fn live_guest(&self) -> bool {
        self.live && self.options.sim.is_none()
    }

    /// Says who else acts on the live guest observed (cpuplugd, another
    /// plugtop), looked up every [`LOOK_FOR_OTHERS_EVERY`] readings while
    /// this screen does not act itself (acting, it holds the lock).
    /// A plugtop that ended without putting the guest back (its journal
    /// below the root) is looked up with them, and said at once.
    fn look_for_others(&mut self, core: &Core, updates: &mut Vec<Update>) {
        let observing = self.live_guest() && self.armed.is_none();
        let (found, dead) = if observing {
            if self.others.1 > 0 {
                self.others.1 -= 1;
                return;
            }
            self.others.1 = LOOK_FOR_OTHERS_EVERY - 1;
            (
                crate::control::lock::acting_on(&self.options.root),
                crate::tui::arming::dead_run(&self.options),
            )
        } else {
            (None, None)
        };
        if found != self.others.0 {
            self.others.0.clone_from(&found);
            updates.push(Update::Acting(found));
        }
        if dead != self.dead_run {
            match (&dead, &self.dead_run) {
                (Some(d), _) => updates.push(Update::Note(
                    LogKind::Problem,
                    left_changed_line(d, core.latest().map(|s| &s.online)),
                )),
                // The alarm goes with a line that says why (nu54 M16).
                (None, Some(gone)) => updates.push(Update::Note(
                    LogKind::Note,
                    format!(
                        "the journal of plugtop pid {} is gone ({}): the guest was put back (plugtop restore) or another run took it over",
                        gone.pid, gone.journal
                    ),
                )),
                (None, None) => {}
            }
            self.dead_run.clone_from(&dead);
            updates.push(Update::LeftChanged(dead.map(Box::new)));
        }
    }

    /// The next reading is one interval (at the replay's speed) after `now`.
    fn pace_from(&mut self, core: &Core, now: Instant) {
        let interval = core.session().rules().pace(self.options.interval);
        let wait = crate::pace::scaled(interval, self.speed).max(Duration::from_millis(10));
        self.next = crate::pace::deadline(now, wait);
    }

    /// plugtop's own CPU use since it was last said, as of `now`.
    fn own_cpu(&mut self, now: Instant, updates: &mut Vec<Update>) {
        if let (Some(before), Some(after)) = (self.cpu_mark.1, crate::kernel::machine::own_cpu_ns())
        {
            let wall = now.duration_since(self.cpu_mark.0).as_secs_f64();
            if wall > 0.0 {
                updates.push(Update::OwnCpu(
                    (after.saturating_sub(before)) as f64 / 1e9 / wall * 100.0,
                ));
            }
            self.cpu_mark = (now, Some(after));
        }
    }

    /// `G` or `J` in a replay (or the simulator): read ahead to `to`,
    /// from where a seek under way stands. Nothing is left to read once a
    /// replay ended, and a live guest is never read faster than its pace.
    fn seek(&mut self, to: SeekTo, updates: &mut Vec<Update>) {
        if self.live_guest() {
            return;
        }
        // A replay read to its end already: said again, not in silence.
        if self.exhausted {
            updates.push(Update::SeekEnd(crate::tui::seek::SeekEnd {
                to,
                at: None,
                readings: 0,
                reached: false,
                stopped: false,
            }));
            return;
        }
        match &mut self.seeking {
            Some(passage) => passage.retarget(to),
            None => self.seeking = Some(ReadAhead::new(to)),
        }
        updates.push(Update::Working(Some(seeking_to(to, None))));
    }

    /// One leg of the seek under way: how far it got, or all it read.
    fn seek_on(&mut self, core: &mut Core, source: &mut dyn Source, updates: &mut Vec<Update>) {
        let Some(mut passage) = self.seeking.take() else {
            return;
        };
        let leg = passage.run(core, source, Some(Instant::now() + SEEK_LEG));
        if leg == Leg::Going {
            updates.push(Update::Working(Some(seeking_to(
                passage.to(),
                passage.at(),
            ))));
            self.seeking = Some(passage);
            return;
        }
        self.end_seek(passage, core, source, updates);
    }

    /// A seek done (or stopped): the screen is told what it passed and
    /// where it stands.
    fn end_seek(
        &mut self,
        passage: ReadAhead,
        core: &Core,
        source: &mut dyn Source,
        updates: &mut Vec<Update>,
    ) {
        let held = passage.held();
        self.exhausted |= !held;
        // A replay or the simulator stops at the time sought, as if paused
        // there.
        self.paused |= held && !self.live_guest();
        updates.extend(passage.finish());
        updates.push(Update::Status(source.status()));
        updates.push(Update::Working(None));
        let now = Instant::now();
        self.pace_from(core, now);
        self.own_cpu(now, updates);
    }

    /// `--mode step|auto` on a live root: the command line is the consent,
    /// but the machine must still be one plugtop may change.
    fn arm_at_start(
        &mut self,
        core: &mut Core,
        mode: Mode,
        first: &Sample,
        updates: &mut Vec<Update>,
    ) {
        let pool = core.session().rules().mem_enabled;
        let armed = arm_check(&self.options, mode, Some(first), pool)
            .and_then(|_| arm(&self.options, Some(first), &self.progress, pool));
        // The Log, the lasting record, says what happened, not what was
        // asked (the box that says why is closed and gone).
        updates.push(match &armed {
            Ok(_) => Update::Note(LogKind::Note, format!("starting in {mode} mode")),
            Err(e) => Update::Note(
                LogKind::Problem,
                format!(
                    "{mode} mode refused at the start, observing: {}",
                    crate::error_chain::text(e)
                ),
            ),
        });
        self.take_arms(core, mode, armed, "staying in observe mode", updates);
    }

    /// `y` on the arming question.
    fn arm_now(&mut self, core: &mut Core, mode: Mode, updates: &mut Vec<Update>) {
        let latest = core.latest().cloned();
        let pool = core.session().rules().mem_enabled;
        let armed = arm(&self.options, latest.as_deref(), &self.progress, pool);
        self.take_arms(
            core,
            mode,
            armed,
            "plugtop cannot change this guest",
            updates,
        );
    }

    /// Acts in `mode` from now on when arming worked; says why not (after
    /// `refused`) when it did not.
    fn take_arms(
        &mut self,
        core: &mut Core,
        mode: Mode,
        armed: Result<(Guard, Tracked<RootActuator>), ArmError>,
        refused: &str,
        updates: &mut Vec<Update>,
    ) {
        match armed {
            Ok((guard, actuator)) => {
                core.set_actuator(Box::new(actuator));
                self.armed = Some(guard);
                updates.push(core.set_mode(mode));
            }
            Err(e) => updates.push(Update::Show(Dialog::Message(format!(
                "{refused}: {}",
                crate::error_chain::text(&e)
            )))),
        }
    }

    /// A key that needs the outside world.
    fn handle(&mut self, core: &mut Core, action: KeyAction, updates: &mut Vec<Update>) {
        let unarmed =
            self.armed.is_none() && !core.armed() && core.cannot_act().is_none() && self.live;
        let wants = match action {
            KeyAction::Step => Some(Mode::Step),
            KeyAction::Autonomous => Some(Mode::Auto),
            _ => None,
        };
        // Acting on a live guest asks first, saying what will be taken and
        // what will be put back.
        if let Some(mode) = wants
            && unarmed
        {
            let latest = core.latest().cloned();
            updates.push(Update::Show(
                match arm_check(
                    &self.options,
                    mode,
                    latest.as_deref(),
                    core.session().rules().mem_enabled,
                ) {
                    Ok(info) => Dialog::Arm(info),
                    Err(why) => Dialog::Message(format!(
                        "plugtop will not change this machine: {}",
                        crate::error_chain::text(&why)
                    )),
                },
            ));
            return;
        }
        match action {
            KeyAction::Step => updates.push(core.set_mode(Mode::Step)),
            KeyAction::Autonomous => updates.push(core.ask_autonomous()),
            KeyAction::Reload => self.reload(core, updates),
            KeyAction::Faster | KeyAction::Slower if !self.live || self.options.sim.is_some() => {
                self.speed = if action == KeyAction::Faster {
                    (self.speed * 2.0).min(64.0)
                } else {
                    (self.speed / 2.0).max(0.125)
                };
                updates.push(Update::Speed(self.speed));
            }
            _ => {}
        }
    }

    fn reload(&self, core: &mut Core, updates: &mut Vec<Update>) {
        let Some(path) = &self.options.rules else {
            updates.push(Update::Show(Dialog::Message(
                "the built-in rules have no file to reload; start with -c FILE".into(),
            )));
            return;
        };
        let facts = match self.facts() {
            Ok(facts) => facts,
            Err(why) => {
                updates.push(Update::Show(Dialog::Message(why)));
                return;
            }
        };
        match read_rules(path, &facts) {
            Ok((rules, file)) => updates.push(core.reload(rules, file)),
            Err(e) => {
                updates.push(Update::Note(
                    LogKind::Problem,
                    "reload failed; the old rules stay active".into(),
                ));
                updates.push(Update::Show(Dialog::ReloadFailed(
                    crate::error_chain::text(&e),
                )));
            }
        }
    }

    /// `y` on applying edited rules: loaded against the machine as it is
    /// now and taken as `r` takes a reloaded file (the history is kept).
    fn apply_rules(&self, core: &mut Core, rules: &EditedRules, updates: &mut Vec<Update>) {
        match self.facts() {
            Ok(facts) => updates.extend(core.apply(rules, &facts, self.options.rules.as_deref())),
            Err(why) => updates.push(Update::Show(Dialog::Message(why))),
        }
    }

    /// Ctrl-S, then Enter: the edited rules written to `path` (over a
    /// file there after a yes to `replace`), checked against the machine
    /// as it is now.
    fn write_rules(
        &self,
        path: &std::path::Path,
        rules: &EditedRules,
        replace: bool,
        updates: &mut Vec<Update>,
    ) {
        match self.facts() {
            Ok(facts) => {
                updates.extend(crate::tui::rules_file::write(path, rules, replace, &facts))
            }
            Err(why) => updates.push(Update::Show(Dialog::Message(why))),
        }
    }

    /// What the machine offers now, as a rule file is loaded against: the
    /// simulated guest's, or the root's read again.
    fn facts(&self) -> Result<crate::rules::SystemFacts, String> {
        match &self.options.sim {
            Some(file) => match crate::sim::Scenario::load(file) {
                Ok(s) => Ok(crate::sim::facts(&crate::sim::Guest::new(
                    &s,
                    self.options.old_kernel,
                ))),
                Err(e) => Err(crate::error_chain::text(&e)),
            },
            None => Ok(crate::kernel::root::RootReader::new().facts(&self.options.root)),
        }
    }
}

/// What the status line says while a seek reads: where to, and where it
/// stands.
fn seeking_to(to: SeekTo, at: Option<crate::kernel::Stamp>) -> String {
    let target = match to {
        SeekTo::End => "the end".to_string(),
        SeekTo::At(t) => crate::report::time_of_day(t),
        SeekTo::NextChange(_) => "the next change".to_string(),
    };
    // A time of day alone wraps past midnight: what is left to read says
    // how far it still is, falling as it reads (days included).
    let left = match to {
        SeekTo::At(t) => at.map(|at| format!(", {} to go", span(t.secs() - at.secs()))),
        _ => None,
    };
    match at {
        Some(at) => format!(
            "reading ahead to {target}: at {}{}",
            crate::report::time_of_day(at),
            left.unwrap_or_default()
        ),
        None => format!("reading ahead to {target}"),
    }
}

/// `seconds` as "H:MM:SS", with the days before it when there are any
/// ("83d 22:32:08").
fn span(seconds: i64) -> String {
    let s = seconds.max(0);
    let clock = format!("{}:{:02}:{:02}", s % 86_400 / 3600, s % 3600 / 60, s % 60);
    match s / 86_400 {
        0 => clock,
        days => format!("{days}d {clock}"),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Arc;
    use std::sync::mpsc::{Receiver, Sender, channel};

    use super::*;
    use crate::kernel::actuator::{ActError, Actuator};
    use crate::kernel::cpu_choice::CpuChange;
    use crate::tui::app::{App, SourceLabel};
    use crate::tui::arming::Tracked;
    use crate::tui::input::TermInput;
    use crate::tui::local::Local;
    use crate::tui::timeline::FRAMES;
    use crate::tui::view::drawn_text;

    /// An actuator whose writes wait until the test lets them through, as
    /// taking a CPU offline on s390 can take seconds; it says when a write
    /// has begun.
    struct Gate {
        entered: Sender<()>,
        release: Receiver<()>,
    }

    impl Gate {
        fn write(&mut self) {
            let _ = self.entered.send(());
            // Returns at once once the test dropped its end.
            let _ = self.release.recv();
        }
    }

    impl Actuator for Gate {
        fn plug(&mut self, _: &mut Vec<String>) -> Result<u32, ActError> {
            self.write();
            Ok(1)
        }
        fn unplug(&mut self, _: &mut Vec<String>) -> Result<u32, ActError> {
            self.write();
            Ok(1)
        }
        fn set_pool(&mut self, _: i64) -> Result<(), ActError> {
            self.write();
            Ok(())
        }
        fn set_online(&mut self, _: &[u32], _: &mut Vec<String>) -> Result<(), ActError> {
            self.write();
            Ok(())
        }
        fn would_take(&self, _: CpuChange, _: usize) -> Vec<u32> {
            vec![1]
        }
    }

    /// Applies updates to `app` until `want` holds of one of them (the
    /// screen thread's part), at most `readings` readings in.
    fn until(
        updates: &Receiver<Vec<Update>>,
        app: &mut App,
        readings: usize,
        want: impl Fn(&Update) -> bool,
    ) -> Option<ScreenEnd> {
        loop {
            assert!(app.readings() <= readings, "never came");
            let batch = updates
                .recv()
                .unwrap_or_else(|e| panic!("the control thread ended: {e}"));
            let mut found = false;
            for update in batch {
                found |= want(&update);
                match update {
                    Update::Ended(end) => return Some(end),
                    other => app.apply(other),
                }
            }
            if found {
                return None;
            }
        }
    }

    #[test]
    fn a_write_blocked_on_a_slow_sysfs_blocks_neither_drawing_nor_keys() {
        let text = "name = \"two\"\ncpus = 2\nonline = 1\nmemory_mib = 1024\nduration = \"10:00\"\nseed = 1\n\n[[phases]]\nname = \"busy\"\nstart = \"0:00\"\nthreads = 2\ncpu_per_thread = 1\nworking_set_mib = 100\n";
        let scenario = crate::sim::Scenario::parse("two", text).unwrap_or_else(|e| panic!("{e}"));
        let guest = crate::sim::SharedGuest::new(crate::sim::Guest::new(&scenario, false));
        let facts = crate::sim::facts(&guest.borrow());
        let mut source = crate::sim::SimSource::new(guest, 1.0);
        let file = crate::rules::SourceFile::new(
            "plug.conf",
            b"UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"2\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\n"
                .to_vec(),
        );
        let rules = Arc::new(crate::rules::load(&file, &facts).rules);
        let label = SourceLabel::Sim {
            scenario: "two".into(),
            speed: 1.0,
        };
        let (updates_tx, updates) = channel::<Vec<Update>>();
        let working = updates_tx.clone();
        let progress: Progress = Arc::new(move |what| {
            let _ = working.send(vec![Update::Working(what)]);
        });
        let (entered_tx, entered) = channel();
        let (release, release_rx) = channel();
        let mut local = Local::new(rules, file, label, Mode::Auto);
        local.core_mut().set_actuator(Box::new(Tracked {
            inner: Gate {
                entered: entered_tx,
                release: release_rx,
            },
            progress: Arc::clone(&progress),
        }));
        let (core, mut app) = local.into_parts();
        let options = Options {
            rules: None,
            root: "/nonexistent".into(),
            replay: None,
            mode: Mode::Auto,
            batch: false,
            mono: true,
            interval: Some(0.0),
            count: None,
            sim: Some("two.toml".into()),
            old_kernel: false,
            tune_budget: None,
            allow_non_zvm: false,
        };
        let stop = StopFlag::new();
        let (commands, command_rx) = channel();
        std::thread::scope(|scope| {
            let stop = &stop;
            let source = &mut source;
            scope.spawn(move || {
                run(options, core, source, &command_rx, stop, progress, |u| {
                    updates_tx.send(u).is_ok()
                })
            });
            // The control thread starts a write and waits in it.
            let started = until(&updates, &mut app, 50, |u| {
                matches!(u, Update::Working(Some(_)))
            });
            assert!(started.is_none(), "ended before writing");
            entered
                .recv()
                .unwrap_or_else(|e| panic!("the write began: {e}"));
            // Meanwhile the screen draws what is going on, and keys work:
            // the help opens, and the view changes, while the write waits.
            let screen = drawn_text(&app);
            assert!(screen.contains("… plugging a CPU"), "{screen}");
            let mut keys: VecDeque<TermInput> = "?"
                .chars()
                .map(|c| {
                    TermInput::Event(crossterm::event::Event::Key(
                        crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char(c)),
                    ))
                })
                .collect();
            let asked = crate::tui::dispatch::apply(&mut app, &mut keys, stop);
            assert_eq!(asked, vec![Command::Wake { paused: false }]);
            for c in asked {
                commands.send(c).unwrap_or_else(|e| panic!("{e}"));
            }
            let screen = drawn_text(&app);
            assert!(screen.contains("Keys (any key closes"), "{screen}");
            assert!(screen.contains("… plugging a CPU"), "{screen}");
            // Let every write through: the write ends and says so.
            drop(release);
            let ended = until(&updates, &mut app, usize::MAX, |u| {
                matches!(u, Update::Working(None))
            });
            assert!(ended.is_none());
            assert!(!drawn_text(&app).contains("… plugging"), "the line goes");
            commands
                .send(Command::Quit)
                .unwrap_or_else(|e| panic!("{e}"));
            // Quitting the simulator says what ended there (nothing real
            // is put back).
            let end = until(&updates, &mut app, usize::MAX, |_| false);
            assert!(
                matches!(&end, Some(ScreenEnd::GaveBack(lines))
                    if lines.iter().any(|l| l.contains("simulated guest ended"))),
                "{end:?}"
            );
        });
    }

    /// A replay of `n` readings of a simulated two-CPU guest, in memory,
    /// with rules for it, and the options that replay it at full speed.
    fn replay(n: usize) -> (crate::kernel::recording::RecordingSource, Local, Options) {
        use crate::kernel::recording::{Header, RecordingSource, RecordingWriter};
        let text = "name = \"two\"\ncpus = 2\nonline = 1\nmemory_mib = 1024\nduration = \"1:00:00\"\nseed = 1\n\n[[phases]]\nname = \"busy\"\nstart = \"0:00\"\nthreads = 2\ncpu_per_thread = 1\nworking_set_mib = 100\n";
        let scenario = crate::sim::Scenario::parse("two", text).unwrap_or_else(|e| panic!("{e}"));
        let guest = crate::sim::SharedGuest::new(crate::sim::Guest::new(&scenario, false));
        let facts = crate::sim::facts(&guest.borrow());
        let mut sim = crate::sim::SimSource::new(guest, 1.0);
        let header = Header {
            host: "two".into(),
            kernel: "simulated".into(),
            cpu_model: String::new(),
            root: "/".into(),
            page_size: 4096,
            present_cpus: 2,
            interval_us: 1_000_000,
            started: crate::kernel::Stamp::default(),
            imported: None,
        };
        let mut writer =
            RecordingWriter::new(Vec::new(), &header).unwrap_or_else(|e| panic!("{e}"));
        for _ in 0..n {
            let sample = sim.next_sample().and_then(Result::ok).expect("a reading");
            writer.append(&sample).unwrap_or_else(|e| panic!("{e}"));
        }
        let source = RecordingSource::from_bytes("two.rec", writer.into_inner())
            .unwrap_or_else(|e| panic!("{e}"));
        let file = crate::rules::SourceFile::new(
            "plug.conf",
            b"UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"2\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\n"
                .to_vec(),
        );
        let rules = Arc::new(crate::rules::load(&file, &facts).rules);
        let label = SourceLabel::Replay {
            file: "two.rec".into(),
            speed: 1.0,
        };
        let options = Options {
            rules: None,
            root: "/nonexistent".into(),
            replay: Some("two.rec".into()),
            mode: Mode::Observe,
            batch: false,
            mono: true,
            interval: Some(0.0),
            count: None,
            sim: None,
            old_kernel: false,
            tune_budget: None,
            allow_non_zvm: false,
        };
        (
            source,
            Local::new(rules, file, label, Mode::Observe),
            options,
        )
    }

    /// Runs the control thread on [`replay`]`(n)` with `queued` waiting
    /// for it before it starts; `screen` plays the screen thread, with the
    /// updates, the app and where to send more commands.
    fn replaying(
        n: usize,
        queued: impl IntoIterator<Item = Command>,
        screen: impl FnOnce(&Receiver<Vec<Update>>, &mut App, &Sender<Command>),
    ) {
        let (mut source, local, options) = replay(n);
        let (core, mut app) = local.into_parts();
        let (updates_tx, updates) = channel::<Vec<Update>>();
        let (commands, command_rx) = channel();
        for command in queued {
            commands.send(command).unwrap_or_else(|e| panic!("{e}"));
        }
        let stop = StopFlag::new();
        std::thread::scope(|scope| {
            let stop = &stop;
            let source = &mut source;
            scope.spawn(move || {
                run(
                    options,
                    core,
                    source,
                    &command_rx,
                    stop,
                    Arc::new(|_| {}),
                    |u| updates_tx.send(u).is_ok(),
                )
            });
            screen(&updates, &mut app, &commands);
        });
    }

    #[test]
    fn a_seek_reads_to_the_end_in_legs_and_the_screen_gets_what_it_keeps() {
        let seek = [Command::Seek(SeekTo::End)];
        replaying(FRAMES + 100, seek, |updates, app, commands| {
            let said = std::cell::RefCell::new(Vec::new());
            let ended = until(updates, app, usize::MAX, |u| {
                said.borrow_mut().push(match u {
                    Update::Working(Some(w)) => w.clone(),
                    Update::Passed(p) => format!("passed {}", p.readings),
                    Update::SeekEnd(s) => format!("sought {} {}", s.readings, s.reached),
                    _ => String::new(),
                });
                matches!(u, Update::SeekEnd(_))
            });
            assert!(ended.is_none());
            let said = said.into_inner();
            assert_eq!(
                said.first().map(String::as_str),
                Some("reading ahead to the end")
            );
            assert!(said.contains(&"passed 100".to_string()), "{said:?}");
            assert!(
                said.contains(&format!("sought {} false", FRAMES + 100)),
                "{said:?}"
            );
            assert_eq!(app.readings(), FRAMES + 100, "every reading decided");
            assert_eq!(app.timeline().frames().len(), FRAMES);
            assert!(
                app.log()
                    .lines()
                    .iter()
                    .any(|l| l.text == "end of the recording"),
                "the end is said once, by the seek"
            );
            // A `J` past the end once the replay ended is answered, not
            // dropped in silence (issue 45): nothing more is read.
            commands
                .send(Command::Seek(SeekTo::End))
                .unwrap_or_else(|e| panic!("{e}"));
            let again = std::cell::RefCell::new(None);
            let ended = until(updates, app, usize::MAX, |u| match u {
                Update::SeekEnd(s) => {
                    *again.borrow_mut() = Some((s.readings, s.reached));
                    true
                }
                _ => false,
            });
            assert!(ended.is_none());
            assert_eq!(again.into_inner(), Some((0, false)));
            assert_eq!(app.readings(), FRAMES + 100, "nothing more was read");
            commands
                .send(Command::Quit)
                .unwrap_or_else(|e| panic!("{e}"));
            let end = until(updates, app, usize::MAX, |_| false);
            assert!(matches!(end, Some(ScreenEnd::Quit)), "{end:?}");
            let ends = app
                .log()
                .lines()
                .iter()
                .filter(|l| l.text == "end of the recording")
                .count();
            assert_eq!(ends, 1);
        });
    }

    #[test]
    fn a_quit_waiting_behind_a_seek_is_taken_before_another_leg() {
        let queued = [Command::Seek(SeekTo::End), Command::Quit];
        replaying(50, queued, |updates, app, _| {
            let end = until(updates, app, usize::MAX, |_| false);
            assert!(matches!(end, Some(ScreenEnd::Quit)), "{end:?}");
            assert_eq!(app.readings(), 0, "no leg ran before the quit");
        });
    }
}
