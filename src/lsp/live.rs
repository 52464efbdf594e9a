//! Live values for the editor: while a rule file that cpuplugd would load is
//! open and the root has readings, the kernel is read every UPDATE seconds
//! and each open file's rules are decided on those readings by the same
//! engine the screen and the daemon use. Hover and inlay hints read the
//! outcome from here, so the editor says what the screen says.
//!
//! Without readings (a root with no /proc, a machine that is not Linux) or
//! without an open file that loads, nothing is read and the server sleeps
//! until the client writes.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::Engine;
use crate::kernel::Sample;
use crate::kernel::live::wall_clock;
use crate::kernel::root::RootReader;
use crate::report::trace;
use crate::rules::config::MAX_HISTORY;
use crate::rules::eval::{NoTrace, Stop, Trace};
use crate::rules::{LoadOutcome, RuleKind, RuleSet, SourceFile};

/// The longest pause between two readings, whatever UPDATE says: an editor
/// user waits for a value, cpuplugd's guest does not.
const LONGEST_PERIOD: Duration = Duration::from_secs(60);

/// The most terms the files decided on may hold together: one file at the
/// most cpuplugd expands to.
pub const MAX_LIVE_TERMS: usize = 1_000_000;

/// One open file's rules, deciding on the readings.
struct OpenRules {
    source: SourceFile,
    engine: Engine,
    /// The trace of the last decision (empty while the history fills).
    trace: Trace,
    decided: bool,
}

impl OpenRules {
    fn rules(&self) -> &Arc<RuleSet> {
        self.engine.rules()
    }
}

/// The readings and every open file's verdicts on them.
pub struct Live {
    root: PathBuf,
    reader: RootReader,
    /// The newest readings, as many as the deepest history a file may name.
    samples: VecDeque<Sample>,
    /// Whether the last reading worked (no timer runs after one fails,
    /// unless one worked before: see `lost`).
    readable: bool,
    /// Whether the root gave readings and then stopped (its files gone
    /// mid-session, `plugtop sim --serve` restarting): it is tried again
    /// every period, as cpuplugd would, and nothing from before is shown
    /// as "now".
    lost: bool,
    watches: HashMap<String, OpenRules>,
}

impl Live {
    /// Live values from the kernel under `root`; nothing is read until a
    /// file that loads is opened.
    pub fn new(root: PathBuf) -> Self {
        Live {
            root,
            reader: RootReader::new(),
            samples: VecDeque::new(),
            readable: false,
            lost: false,
            watches: HashMap::new(),
        }
    }

    /// Takes the newest check of `uri`: a file cpuplugd would load is
    /// decided on from now on, replaying the readings kept so that its
    /// values show at once; a refused one has no live values.
    ///
    /// What the files decided on hold together is bounded by their terms
    /// ([`MAX_LIVE_TERMS`]), not their text: 292 bytes of variables that
    /// double each other expand to 900,000 terms (44 MB of rules, programs
    /// and traces), and 40 such files held 1.76 GB. A file past the bound
    /// alone gets no live values; otherwise the largest others are given
    /// up to make room (they come back when they change).
    pub fn set(&mut self, uri: &str, source: SourceFile, outcome: LoadOutcome) {
        let terms = outcome.rules.nodes.len();
        if outcome.refusal.is_some() || terms > MAX_LIVE_TERMS {
            self.close(uri);
            return;
        }
        self.watches.remove(uri);
        loop {
            let held: usize = self.watches.values().map(|w| w.rules().nodes.len()).sum();
            if held + terms <= MAX_LIVE_TERMS {
                break;
            }
            let largest = self
                .watches
                .iter()
                .max_by_key(|(_, w)| w.rules().nodes.len())
                .map(|(u, _)| u.clone());
            match largest {
                Some(u) => self.close(&u),
                None => break,
            }
        }
        if self.watches.is_empty() || self.samples.is_empty() {
            // The first file: one reading now, so that a hover or a hint
            // has the kernel's values before the first UPDATE passes.
            self.read();
        }
        let mut watch = OpenRules {
            source,
            engine: Engine::new(Arc::new(outcome.rules)),
            trace: Trace::new(),
            decided: false,
        };
        let depth = watch.rules().history_depth as usize + 1;
        let skip = self.samples.len().saturating_sub(depth);
        let last = self.samples.len().saturating_sub(1);
        for (i, sample) in self.samples.iter().enumerate().skip(skip) {
            if i == last {
                watch.decided = watch.engine.push(sample, &mut watch.trace).is_some();
            } else {
                watch.engine.push(sample, &mut NoTrace);
            }
        }
        self.watches.insert(uri.to_string(), watch);
    }

    /// Forgets `uri`'s live values (closed, or changed into a file that
    /// does not load).
    pub fn close(&mut self, uri: &str) {
        self.watches.remove(uri);
        if self.watches.is_empty() {
            self.samples.clear();
            self.lost = false;
        }
    }

    /// How long until the next reading; `None` when none is due (no file
    /// that loads is open, or the root has no readings).
    pub fn period(&self) -> Option<Duration> {
        if !self.readable && !self.lost {
            return None;
        }
        self.watches
            .values()
            .map(|w| w.rules().pace(None))
            .min()
            .map(|p| p.clamp(Duration::from_secs(1), LONGEST_PERIOD))
    }

    /// Reads the kernel once and decides every open file on it; whether a
    /// reading was taken.
    pub fn tick(&mut self) -> bool {
        if !self.read() {
            return false;
        }
        if let Some(sample) = self.samples.back() {
            for watch in self.watches.values_mut() {
                watch.decided = watch.engine.push(sample, &mut watch.trace).is_some();
            }
        }
        true
    }

    fn read(&mut self) -> bool {
        match self.reader.read(&self.root, wall_clock()) {
            Ok(sample) => {
                if self.samples.len() > MAX_HISTORY as usize {
                    self.samples.pop_front();
                }
                self.samples.push_back(sample);
                self.readable = true;
            }
            Err(_) => {
                if self.readable || self.lost {
                    self.forget();
                }
                self.readable = false;
            }
        }
        self.readable
    }

    /// Drops the readings and every decision on them: the root stopped
    /// giving readings, and a verdict from before is not the kernel's now.
    /// Kept trying while a file that loads is open.
    fn forget(&mut self) {
        self.samples.clear();
        self.lost = !self.watches.is_empty();
        for watch in self.watches.values_mut() {
            watch.engine = Engine::new(Arc::clone(watch.rules()));
            watch.trace = Trace::new();
            watch.decided = false;
        }
    }

    /// The newest reading, if any.
    pub fn latest(&self) -> Option<&Sample> {
        self.samples.back()
    }

    /// Where the readings come from, for the words "now under /".
    pub fn root(&self) -> &std::path::Path {
        &self.root
    }

    /// A variable's value now in `uri`, in words: the number, why there is
    /// none yet, or that cpuplugd never computes it.
    pub fn variable(&self, uri: &str, name: &str) -> Option<String> {
        let watch = self.watches.get(uri)?;
        let filling = filling(watch, self.period())?;
        if let Some(f) = filling {
            return Some(f);
        }
        Some(match watch.engine.variable(name) {
            None => "not computed: no rule uses it".into(),
            Some(Ok(v)) => trace::outcome(crate::rules::eval::Outcome::Number(v)),
            Some(Err(Stop::Fault { fault, .. })) => format!("FAULT: {fault}"),
            Some(Err(Stop::Fatal { .. })) => "cpuplugd would exit evaluating it".into(),
        })
    }

    /// A rule's verdict now in `uri`, with its reason, in the words the
    /// screen uses ("HOTPLUG false because …").
    pub fn rule(&self, uri: &str, kind: RuleKind) -> Option<String> {
        let watch = self.watches.get(uri)?;
        watch.rules().rule(kind)?;
        if let Some(f) = filling(watch, self.period())? {
            return Some(f);
        }
        trace::explain(watch.rules(), &watch.source, &watch.trace, kind)
    }

    /// A rule's outcome now in `uri`, short: `true`, `false`, a number,
    /// or a fault.
    pub fn rule_short(&self, uri: &str, kind: RuleKind) -> Option<String> {
        let watch = self.watches.get(uri)?;
        let rule = watch.rules().rule(kind)?;
        if filling(watch, self.period())?.is_some() {
            return Some("…".into());
        }
        Some(trace::outcome(watch.trace.outcome(rule.root)))
    }

    /// The rule set decided for `uri`, for lines and names.
    pub fn rules(&self, uri: &str) -> Option<&RuleSet> {
        self.watches.get(uri).map(|w| &**w.rules())
    }
}

/// `Some(Some(words))` while the history fills, `Some(None)` once decided,
/// `None` without any reading.
/// `every` is how often the server reads (UPDATE within its bounds, the
/// shortest of the open files'), not what the file says.
fn filling(watch: &OpenRules, every: Option<Duration>) -> Option<Option<String>> {
    let need = watch.rules().history_depth as usize + 1;
    let have = watch.engine.readings();
    if have == 0 {
        return None;
    }
    if !watch.decided || have < need {
        let every = every.map_or(String::new(), |p| format!(" (one every {} s)", p.as_secs()));
        return Some(Some(format!(
            "history filling: {have} of {need} readings{every}"
        )));
    }
    Some(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::SystemFacts;

    fn loaded(text: &str) -> (SourceFile, LoadOutcome) {
        let file = SourceFile::new("t", text.as_bytes().to_vec());
        let outcome = crate::rules::load(&file, &SystemFacts::any_machine(3, "test"));
        (file, outcome)
    }

    #[test]
    fn a_root_without_readings_sets_no_timer() {
        let dir = tempfile::tempdir().expect("dir");
        let mut live = Live::new(dir.path().to_path_buf());
        let (f, o) = loaded("UPDATE=\"2\"\nCPU_MIN=\"1\"\nCPU_MAX=\"2\"\nHOTPLUG=\"idle < 10\"\n");
        live.set("u", f, o);
        assert_eq!(live.period(), None);
        assert!(!live.tick());
        assert_eq!(live.rule("u", RuleKind::Hotplug), None);
    }

    #[test]
    fn a_simulated_guest_gives_values_verdicts_and_a_timer() {
        use crate::kernel::fs::Root;
        use crate::sim::{Guest, Scenario, published_root as serve};
        let dir = tempfile::tempdir().expect("dir");
        let text = "name = \"t\"\ncpus = 3\nonline = 2\nmemory_mib = 1024\nduration = \"1:00\"\nphases = []\n";
        let scenario = Scenario::parse("t", text).expect("scenario");
        let mut guest = Guest::new(&scenario, false);
        let root = Root::open(dir.path()).expect("root");
        serve::publish_all(&guest, &root).expect("published");
        let mut live = Live::new(dir.path().to_path_buf());
        let rules = "UPDATE=\"3\"\nCPU_MIN=\"1\"\nCPU_MAX=\"3\"\nbusy=\"onumcpus * 100 - idle\"\nspare=\"7\"\nHOTPLUG=\"busy > 1000\"\nHOTUNPLUG=\"onumcpus > 5\"\n";
        let (f, o) = loaded(rules);
        live.set("u", f, o);
        // One reading at once; the rules need two.
        assert_eq!(live.period(), Some(Duration::from_secs(3)));
        let words = live.rule("u", RuleKind::Hotplug).unwrap_or_default();
        assert!(words.contains("history filling: 1 of 2"), "{words}");
        guest.advance(3.0);
        serve::publish(&guest, &root).expect("published");
        assert!(live.tick());
        let busy = live.variable("u", "busy").unwrap_or_default();
        assert!(busy.parse::<f64>().is_ok(), "{busy}");
        assert_eq!(
            live.variable("u", "spare").as_deref(),
            Some("not computed: no rule uses it")
        );
        let hotplug = live.rule("u", RuleKind::Hotplug).unwrap_or_default();
        assert!(hotplug.starts_with("HOTPLUG false"), "{hotplug}");
        assert_eq!(
            live.rule_short("u", RuleKind::Hotunplug).as_deref(),
            Some("false")
        );
        assert_eq!(live.rule("u", RuleKind::Memplug), None);
        // A second file that loads sees the kept readings at once.
        let (f, o) = loaded(rules);
        live.set("v", f, o);
        assert_eq!(
            live.rule_short("v", RuleKind::Hotplug).as_deref(),
            Some("false")
        );
        live.close("u");
        live.close("v");
        assert_eq!(live.period(), None);
    }

    #[test]
    fn a_root_that_stops_giving_readings_shows_no_old_values_and_is_tried_again() {
        use crate::kernel::fs::Root;
        use crate::sim::{Guest, Scenario, published_root as serve};
        let dir = tempfile::tempdir().expect("dir");
        let text = "name = \"t\"\ncpus = 2\nonline = 2\nmemory_mib = 1024\nduration = \"1:00\"\nphases = []\n";
        let scenario = Scenario::parse("t", text).expect("scenario");
        let mut guest = Guest::new(&scenario, false);
        let root = Root::open(dir.path()).expect("root");
        serve::publish_all(&guest, &root).expect("published");
        let mut live = Live::new(dir.path().to_path_buf());
        let rules = "UPDATE=\"2\"\nCPU_MIN=\"1\"\nCPU_MAX=\"2\"\nHOTPLUG=\"onumcpus > 1\"\nHOTUNPLUG=\"0\"\n";
        let (f, o) = loaded(rules);
        live.set("u", f, o);
        guest.advance(2.0);
        serve::publish(&guest, &root).expect("published");
        assert!(live.tick());
        let before = live.rule("u", RuleKind::Hotplug).unwrap_or_default();
        assert!(before.starts_with("HOTPLUG true"), "{before}");
        // The root's /proc goes away: the old verdict is not "now".
        let proc = dir.path().join("proc");
        let kept = dir.path().join("proc.kept");
        std::fs::rename(&proc, &kept).expect("moved");
        assert!(!live.tick());
        assert_eq!(live.rule("u", RuleKind::Hotplug), None);
        assert_eq!(live.rule_short("u", RuleKind::Hotplug), None);
        // Still tried every UPDATE seconds, and values return with it.
        assert_eq!(live.period(), Some(Duration::from_secs(2)));
        std::fs::rename(&kept, &proc).expect("moved back");
        assert!(live.tick());
        let words = live.rule("u", RuleKind::Hotplug).unwrap_or_default();
        assert!(words.contains("history filling: 1 of 2"), "{words}");
        // Closing the file ends the tries.
        live.close("u");
        assert_eq!(live.period(), None);
    }

    #[test]
    fn a_refused_file_has_no_live_values() {
        let dir = tempfile::tempdir().expect("dir");
        let mut live = Live::new(dir.path().to_path_buf());
        let (f, o) = loaded("HOTPLUG=\"idle <\"\n");
        assert!(o.refusal.is_some());
        live.set("u", f, o);
        assert!(live.rules("u").is_none());
    }
}
