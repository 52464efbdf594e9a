//! Metrics for a fleet: what `plugtop run` read, decided, did and failed
//! to do, exposed through the engines sites already run — a Prometheus
//! `/metrics` endpoint ([`serve`]) and node_exporter's textfile collector
//! ([`textfile`]). The names are documented in `docs/metrics.md` and listed
//! in [`families`].
//!
//! The control loop only sets atomics here ([`Metrics::observe`]), through
//! series handles created once (an interval allocates no labels); the text
//! is encoded when someone asks for it (a scrape, on the server's thread)
//! or once an interval for the textfile, so a scrape never delays an
//! interval.

pub mod actions;
pub mod endpoint;
pub mod families;
pub mod format;
pub mod optional_gauge;
pub mod own_process;
pub mod skips;
pub mod textfile;

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, SystemTime};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};

pub use families::{FAMILIES, PROCESS_FAMILIES, is_exported, is_plugtop_family};

use crate::control::controller::Mode;
use crate::control::session::{Session, Step};
use crate::kernel::machine::Identity;
use crate::kernel::{Sample, SourceError};
use crate::rules::eval::Outcome;
use crate::rules::{RuleKind, RuleSet, SourceFile};
use actions::ActionCounters;
use families::help;
use format::Exposition;
use optional_gauge::OptionalGauge;
use skips::SkipCounters;

/// The longest label value taken from the guest's own files (a hostile
/// sysinfo line cannot make every scrape large).
const MAX_LABEL: usize = 128;

/// Bytes in one CMM page: the balloon counts 4 KiB pages on s390.
pub const CMM_PAGE_BYTES: i64 = 4096;

/// The patterns `plugtop_hint` knows, shown at 0 until seen.
const HINTS: [&str; 3] = [
    "loadavg-cpu-rules",
    "steal-while-cmm-grows",
    "shmem-counted-free",
];

type Labels = Vec<(String, String)>;
type FloatGauge = Gauge<f64, AtomicU64>;

/// The handles the loop updates; the registries they are registered in
/// are shared with whoever encodes them.
pub struct Metrics {
    registry: Arc<Registry>,
    process: Arc<Registry>,
    cpus_online: Gauge,
    cpus_present: Gauge,
    cpus_configured: OptionalGauge,
    cpus_standby: OptionalGauge,
    cmm_available: Gauge,
    cmm_pages: OptionalGauge,
    cmm_pool: OptionalGauge,
    /// CPU_MIN, CPU_MAX, CMM_MIN, CMM_MAX.
    limits: [OptionalGauge; 4],
    update: FloatGauge,
    rule_true: Family<Labels, Gauge>,
    rule_value: Family<Labels, FloatGauge>,
    rule_evaluated: Family<Labels, Gauge>,
    actions: ActionCounters,
    skips: SkipCounters,
    variables: Family<Labels, FloatGauge>,
    flapping: Gauge,
    /// Seconds per flapping cycle, while flapping.
    flap_period: OptionalGauge,
    /// The pace in force, to turn a period in intervals into seconds.
    pace: f64,
    /// Faults by rule, in [`RuleKind::ALL`]'s order.
    rule_faults: Vec<Counter>,
    /// The last change of decision, one series at a time.
    last_change: Family<Labels, FloatGauge>,
    /// Intervals spent flapping: a scrape every minute sees flapping that
    /// came and went between two scrapes, which the gauge does not show.
    flapping_intervals: Counter,
    hints: Family<Labels, Gauge>,
    reversals: Counter,
    reversals_seen: u64,
    readings: Counter,
    last_interval: FloatGauge,
    interval_duration: FloatGauge,
    mode: Family<Labels, Gauge>,
    rules_info: Family<Labels, Gauge>,
    rules_loaded: FloatGauge,
    reloads: [Counter; 2],
    reload_ok: Gauge,
    /// Series handles kept between intervals, so an interval sets atomics
    /// and allocates no labels.
    cache: Cache,
}

/// A rule's series while it is shown (absent while not evaluated).
#[derive(Debug, Clone)]
enum Shown {
    Truth(Gauge),
    Amount(FloatGauge),
}

#[derive(Debug, Default)]
struct Cache {
    evaluated: Vec<Gauge>,
    shown: [Option<Shown>; 6],
    variables: std::collections::HashMap<String, FloatGauge>,
}

/// Label values can come from files (a rule file's path or variable
/// names, the guest's host name and sysinfo): control characters are
/// escaped as on a terminal, since `curl .../metrics` prints them to one.
fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), label_safe(v)))
        .collect()
}

/// `text` with every character that could act on a terminal written as
/// `\xNN` or `\uNNNN` (no braces: some exposition parsers stop at a `}`
/// even inside quotes).
fn label_safe(text: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if !crate::report::acts_on_terminal(c) {
            out.push(c);
        } else if u32::from(c) < 0x100 {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        } else {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        }
    }
    out
}

/// Seconds since the epoch, for the `*_timestamp_seconds` gauges.
fn epoch_seconds(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A metric registered under `name` with its help, returned for updating.
fn register<M: prometheus_client::registry::Metric + Clone + Default>(
    r: &mut Registry,
    name: &str,
) -> M {
    let m = M::default();
    r.register(name, help(name), m.clone());
    m
}

/// As [`register`], the name taking `unit`'s suffix.
fn register_in<M: prometheus_client::registry::Metric + Clone + Default>(
    r: &mut Registry,
    name: &str,
    unit: Unit,
) -> M {
    let m = M::default();
    r.register_with_unit(name, help(name), unit, m.clone());
    m
}

impl Metrics {
    /// Every family registered, the known series at 0, the build and the
    /// guest's identity set.
    pub fn new(identity: &Identity) -> Self {
        let mut r = Registry::with_prefix("plugtop");
        let build: Family<Labels, Gauge> = register(&mut r, "build_info");
        build
            .get_or_create(&labels(&[("version", env!("CARGO_PKG_VERSION"))]))
            .set(1);
        let guest: Family<Labels, Gauge> = register(&mut r, "guest_info");
        guest.get_or_create(&guest_labels(identity)).set(1);
        let pages = || Unit::Other("pages".into());
        let hints: Family<Labels, Gauge> = register(&mut r, "hint");
        for h in HINTS {
            hints.get_or_create(&labels(&[("pattern", h)])).set(0);
        }
        let reloads: Family<Labels, Counter> = register(&mut r, "reloads");
        let reloads = ["success", "failure"]
            .map(|result| reloads.get_or_create_owned(&labels(&[("result", result)])));
        let rule_faults: Family<Labels, Counter> = register(&mut r, "rule_faults");
        let rule_faults = RuleKind::ALL
            .iter()
            .map(|k| rule_faults.get_or_create_owned(&labels(&[("rule", k.file_name())])))
            .collect();
        let metrics = Metrics {
            cpus_configured: register(&mut r, "cpus_configured"),
            cpus_standby: register(&mut r, "cpus_standby"),
            cpus_online: register(&mut r, "cpus_online"),
            cpus_present: register(&mut r, "cpus_present"),
            cmm_available: register(&mut r, "cmm_available"),
            cmm_pages: register(&mut r, "cmm_pages"),
            cmm_pool: register_in(&mut r, "cmm_pool", Unit::Bytes),
            limits: [
                register(&mut r, "cpu_min"),
                register(&mut r, "cpu_max"),
                register_in(&mut r, "cmm_min", pages()),
                register_in(&mut r, "cmm_max", pages()),
            ],
            update: register_in(&mut r, "update", Unit::Seconds),
            rule_true: register(&mut r, "rule_true"),
            rule_value: register(&mut r, "rule_value"),
            rule_evaluated: register(&mut r, "rule_evaluated"),
            actions: ActionCounters::register(&mut r),
            skips: SkipCounters::register(&mut r),
            variables: register(&mut r, "variable_value"),
            flapping: register(&mut r, "flapping"),
            flap_period: register_in(&mut r, "flap_period", Unit::Seconds),
            pace: 1.0,
            rule_faults,
            last_change: register(&mut r, "last_change_timestamp_seconds"),
            flapping_intervals: register(&mut r, "flapping_intervals"),
            hints,
            reversals: register(&mut r, "reversals"),
            reversals_seen: 0,
            readings: register(&mut r, "readings"),
            last_interval: register(&mut r, "last_interval_timestamp_seconds"),
            interval_duration: register_in(&mut r, "interval_duration", Unit::Seconds),
            mode: register(&mut r, "mode"),
            rules_info: register(&mut r, "rules_info"),
            rules_loaded: register(&mut r, "rules_loaded_timestamp_seconds"),
            reloads,
            reload_ok: register(&mut r, "rules_last_reload_successful"),
            cache: Cache::default(),
            registry: Arc::new(r),
            process: Arc::new(process_registry()),
        };
        metrics.reload_ok.set(1);
        metrics.set_counts(identity);
        metrics
    }

    /// What the HTTP endpoint serves: plugtop's families and the process's.
    pub fn exposition(&self) -> Exposition {
        Exposition::new(vec![Arc::clone(&self.registry), Arc::clone(&self.process)])
    }

    /// The guest's configured and standby CPUs (start, reload).
    pub fn set_counts(&self, identity: &Identity) {
        self.cpus_configured
            .set(identity.cpus_configured.map(f64::from));
        self.cpus_standby.set(identity.cpus_standby.map(f64::from));
    }

    /// A rule file was loaded (at start or on SIGHUP): its checksum and
    /// time, its limits and pace, and the user variables of the old file
    /// dropped.
    pub fn set_rules(&mut self, file: &SourceFile, path: &str, at: SystemTime) {
        self.rules_info.clear();
        let checksum = format!("{:08x}", crc32fast::hash(file.bytes()));
        self.rules_info
            .get_or_create(&labels(&[("file", path), ("crc32", &checksum)]))
            .set(1);
        self.rules_loaded.set(epoch_seconds(at));
        self.variables.clear();
        self.cache.variables.clear();
    }

    /// The limits and the pace of `rules` (start, reload): a group that is
    /// off has no limits, and an unset limit is no series.
    pub fn set_limits(&mut self, rules: &RuleSet, pace: Duration) {
        self.pace = pace.as_secs_f64();
        let s = &rules.settings;
        let set = |value: i64| (value >= 0).then_some(value as f64);
        let cpu = |v: i64| if rules.cpu_enabled { set(v) } else { None };
        let mem = |v: i64| if rules.mem_enabled { set(v) } else { None };
        self.limits[0].set(cpu(s.cpu_min));
        self.limits[1].set(cpu(s.cpu_max));
        self.limits[2].set(mem(s.cmm_min));
        self.limits[3].set(mem(s.cmm_max));
        self.update.set(pace.as_secs_f64());
    }

    /// A reload (SIGHUP) that worked or failed (the old rules kept).
    pub fn reloaded(&self, ok: bool) {
        self.reloads[usize::from(!ok)].inc();
        self.reload_ok.set(i64::from(ok));
    }

    /// A reading that failed, by the file that failed.
    pub fn read_error(&self, error: &SourceError) {
        self.skips.read_error(error);
    }

    /// Writes done or failed outside an interval's step (a reload's limits).
    pub fn outcomes(&self, events: &[crate::control::controller::Event]) {
        self.actions
            .outcomes(events, epoch_seconds(SystemTime::now()));
    }

    /// The mode now.
    pub fn set_mode(&self, mode: Mode) {
        for m in [Mode::Observe, Mode::Step, Mode::Auto] {
            self.mode
                .get_or_create(&labels(&[("mode", m.key())]))
                .set(i64::from(m == mode));
        }
    }

    /// One interval: the reading, what the rules said and what was done;
    /// `took` is how long the interval took plugtop.
    pub fn observe(&mut self, session: &Session, step: &Step, sample: &Sample, took: Duration) {
        self.cpus_online.set(i64::from(sample.online.count));
        self.cpus_present.set(i64::from(sample.present.count));
        self.cmm_available
            .set(i64::from(sample.cmm_pages.is_some()));
        self.cmm_pages.set(sample.cmm_pages.map(|p| p as f64));
        self.cmm_pool.set(
            sample
                .cmm_pages
                .map(|p| p.saturating_mul(CMM_PAGE_BYTES) as f64),
        );
        let at = sample.stamp.micros as f64 / 1e6;
        self.last_interval.set(at);
        self.interval_duration.set(took.as_secs_f64());
        self.readings.inc();
        self.skips.count(session.rules(), step);
        for h in &step.hints {
            self.hints
                .get_or_create(&labels(&[("pattern", h.name)]))
                .set(1);
        }
        if step.skipped.is_none() {
            self.rules_and_variables(session, step);
        }
        if let Some(d) = &step.decision {
            self.actions.decided(d);
        }
        self.actions.outcomes(&step.limits, at);
        self.actions.outcomes(&step.events, at);
        let watch = session.watch();
        let flaps = watch.flapping();
        let flapping = !flaps.is_empty();
        self.flapping.set(i64::from(flapping));
        self.flap_period.set(
            flaps
                .iter()
                .map(|f| f.period * self.pace)
                .filter(|p| p.is_finite())
                .reduce(f64::min),
        );
        self.changes(step, at);
        if flapping {
            self.flapping_intervals.inc();
        }
        let total = watch.flap.total_reversals() as u64;
        if total > self.reversals_seen {
            self.reversals.inc_by(total - self.reversals_seen);
            self.reversals_seen = total;
        }
    }

    /// The last change of decision, with the comparisons that flipped it
    /// as its `why` label (bounded; the one series replaced at each change,
    /// so a guest has one at a time).
    fn changes(&mut self, step: &Step, at: f64) {
        use crate::control::watch::Finding;
        let Some(change) = step.findings.iter().rev().find_map(|f| match f {
            Finding::Changed(c) => Some(c),
            _ => None,
        }) else {
            return;
        };
        let mut why = format!("{} → {}", change.before, change.after);
        for w in &change.why {
            why.push_str("; ");
            why.push_str(w);
        }
        let why: String = why.chars().take(MAX_LABEL * 2).collect();
        self.last_change.clear();
        self.last_change
            .get_or_create(&labels(&[("why", &why)]))
            .set(at);
    }

    /// Each rule's outcome and each variable's value at this interval.
    fn rules_and_variables(&mut self, session: &Session, step: &Step) {
        let rules = session.rules();
        let trace = session.trace();
        if self.cache.evaluated.is_empty() {
            self.cache.evaluated = RuleKind::ALL
                .iter()
                .map(|k| {
                    self.rule_evaluated
                        .get_or_create_owned(&labels(&[("rule", k.file_name())]))
                })
                .collect();
        }
        for (i, kind) in RuleKind::ALL.into_iter().enumerate() {
            let outcome = rules
                .rule(kind)
                .filter(|_| step.decision.is_some())
                .map_or(Outcome::NotEvaluated, |r| trace.outcome(r.root));
            if matches!(
                outcome,
                Outcome::Fault(_) | Outcome::Aborted | Outcome::Fatal
            ) {
                self.rule_faults[i].inc();
            }
            let value = match outcome {
                Outcome::Truth(t) => Some(f64::from(u8::from(t))),
                Outcome::Number(v) => Some(v),
                _ => None,
            };
            self.cache.evaluated[i].set(i64::from(value.is_some()));
            self.show_rule(i, kind, value);
        }
        self.variables(session);
    }

    /// Each user variable a rule uses; absent while it has no finite value.
    fn variables(&mut self, session: &Session) {
        let engine = session.engine();
        for (i, v) in session.rules().variables.iter().enumerate() {
            if v.uses == 0 {
                continue;
            }
            match engine.variable_at(i).and_then(Result::ok) {
                Some(value) if value.is_finite() => {
                    if let Some(g) = self.cache.variables.get(&v.name) {
                        g.set(value);
                        continue;
                    }
                    let g = self
                        .variables
                        .get_or_create_owned(&labels(&[("variable", &v.name)]));
                    g.set(value);
                    self.cache.variables.insert(v.name.clone(), g);
                }
                _ => {
                    if self.cache.variables.remove(&v.name).is_some() {
                        self.variables.remove(&labels(&[("variable", &v.name)]));
                    }
                }
            }
        }
    }

    /// A rule's series: its truth (a number true when not 0, as cpuplugd
    /// reads a condition) or its amount, created when the rule is
    /// evaluated and removed when it is not.
    fn show_rule(&mut self, i: usize, kind: RuleKind, value: Option<f64>) {
        let shown = &mut self.cache.shown[i];
        match (value, &*shown) {
            (Some(v), Some(Shown::Truth(g))) => {
                g.set(i64::from(v != 0.0));
            }
            (Some(v), Some(Shown::Amount(g))) => {
                g.set(v);
            }
            (Some(v), None) => {
                let key = labels(&[("rule", kind.file_name())]);
                *shown = Some(if kind.is_amount() {
                    let g = self.rule_value.get_or_create_owned(&key);
                    g.set(v);
                    Shown::Amount(g)
                } else {
                    let g = self.rule_true.get_or_create_owned(&key);
                    g.set(i64::from(v != 0.0));
                    Shown::Truth(g)
                });
            }
            (None, Some(_)) => {
                let key = labels(&[("rule", kind.file_name())]);
                if kind.is_amount() {
                    self.rule_value.remove(&key);
                } else {
                    self.rule_true.remove(&key);
                }
                *shown = None;
            }
            (None, None) => {}
        }
    }

    /// The exposition in the OpenMetrics text format (plugtop's families).
    pub fn openmetrics(&self) -> String {
        format::openmetrics(std::slice::from_ref(&self.registry))
    }

    /// The exposition in the Prometheus text format (node_exporter's
    /// textfile collector and `promtool` read this one): plugtop's
    /// families, without the process's, which node_exporter has its own of.
    pub fn prometheus_text(&self) -> String {
        format::prometheus_text(std::slice::from_ref(&self.registry))
    }
}

/// The registry of the `process_*` families (no prefix).
fn process_registry() -> Registry {
    let mut r = Registry::default();
    r.register_collector(Box::new(own_process::ProcessCollector::new()));
    r
}

/// The guest's identity as labels; what is unknown is an empty value, so
/// every guest's series have the same label names. No numbers that change
/// while the guest runs: those are gauges of their own.
fn guest_labels(id: &Identity) -> Labels {
    // What a root's files say is bounded and escaped, as every label is.
    let short = |v: &str| label_safe(v).chars().take(MAX_LABEL).collect::<String>();
    let text = |v: &Option<String>| short(v.as_deref().unwrap_or_default());
    vec![
        ("host".into(), short(&id.host)),
        ("architecture".into(), short(&id.architecture)),
        ("zvm_guest".into(), id.zvm_guest.to_string()),
        ("zvm_name".into(), text(&id.guest_name)),
        ("zvm_version".into(), text(&id.zvm_version)),
        ("lpar".into(), text(&id.lpar_name)),
        ("machine_type".into(), text(&id.machine_type)),
    ]
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::control::flap::FlapConfig;
    use crate::control::patterns::Hint;
    use crate::rules::{SourceFile, SystemFacts, load};

    #[test]
    fn a_hint_of_a_step_becomes_a_series_by_pattern() {
        let scenario =
            crate::sim::Scenario::load(std::path::Path::new("examples/scenarios/daytrader.toml"))
                .expect("a shipped scenario");
        let sample = crate::sim::Guest::new(&scenario, false).sample();
        let file = SourceFile::new(
            "t.conf",
            b"UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n"
                .to_vec(),
        );
        let outcome = load(&file, &SystemFacts::any_machine(4, "test"));
        let session = Session::new(
            Arc::new(outcome.rules),
            file,
            Mode::Observe,
            FlapConfig::default(),
        );
        let mut metrics = Metrics::new(&crate::kernel::machine::identity(std::path::Path::new(
            "/nonexistent",
        )));
        let step = Step {
            hints: vec![Hint {
                name: "shmem-counted-free",
                advice: "use Cached - Shmem",
                evidence: "Shmem 40% of Cached".into(),
            }],
            ..Step::default()
        };
        metrics.observe(&session, &step, &sample, Duration::ZERO);
        let text = metrics.prometheus_text();
        assert!(
            text.contains("plugtop_hint{pattern=\"shmem-counted-free\"} 1"),
            "{text}"
        );
    }
}
