//! Metrics for a fleet: what `plugtop run` decided and did, exposed through
//! the engines sites already run — a Prometheus `/metrics` endpoint
//! ([`serve`]) and node_exporter's textfile collector ([`textfile`]). The
//! names are documented in `docs/metrics.md`.
//!
//! The control loop only sets atomics here ([`Metrics::observe`]); the text
//! is encoded when someone asks for it (a scrape, on the server's thread)
//! or once an interval for the textfile, so a scrape never delays an
//! interval.

pub mod format;
pub mod serve;
pub mod textfile;

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::SystemTime;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};

use crate::control::controller::{Action, Event, Mode};
use crate::control::session::{Session, Step};
use crate::engine::GroupStatus;
use crate::kernel::Sample;
use crate::kernel::machine::Identity;
use crate::rules::eval::Outcome;
use crate::rules::{RuleKind, SourceFile};

/// The longest label value taken from the guest's own files (a hostile
/// sysinfo line cannot make every scrape large).
const MAX_LABEL: usize = 128;

/// Bytes in one CMM page: the balloon counts 4 KiB pages on s390.
pub const CMM_PAGE_BYTES: i64 = 4096;

type Labels = Vec<(String, String)>;
type FloatGauge = Gauge<f64, AtomicU64>;

/// The handles the loop updates; the registry they are registered in is
/// shared with whoever encodes it.
pub struct Metrics {
    registry: Arc<Registry>,
    cpus_online: Gauge,
    cpus_present: Gauge,
    cmm_pages: Gauge,
    cmm_pool: Gauge,
    limits: Family<Labels, Gauge>,
    rule_true: Family<Labels, Gauge>,
    rule_value: Family<Labels, FloatGauge>,
    rule_evaluated: Family<Labels, Gauge>,
    decided: Family<Labels, Counter>,
    applied: Family<Labels, Counter>,
    skipped: Family<Labels, Counter>,
    variables: Family<Labels, FloatGauge>,
    flapping: Gauge,
    hints: Family<Labels, Gauge>,
    reversals: Counter,
    reversals_seen: u64,
    intervals: Counter,
    last_interval: FloatGauge,
    mode: Family<Labels, Gauge>,
    rules_info: Family<Labels, Gauge>,
    rules_loaded: FloatGauge,
    /// Series handles kept between intervals, so an interval sets atomics
    /// and allocates no labels.
    cache: Cache,
}

/// What a rule's series show now.
#[derive(Debug, Clone, Default)]
enum Shown {
    #[default]
    Nothing,
    Truth(Gauge),
    Number(FloatGauge),
}

#[derive(Debug, Default)]
struct Cache {
    limits: Option<[i64; 4]>,
    evaluated: Vec<Gauge>,
    shown: Vec<Shown>,
    variables: std::collections::HashMap<String, FloatGauge>,
    skipped: std::collections::HashMap<(&'static str, &'static str), Counter>,
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

/// Every family plugtop exposes (without the `plugtop_` prefix and the
/// unit or `_total` suffix the client adds), with its help text:
/// `docs/metrics.md` documents each one and a test keeps the two in step.
pub const FAMILIES: &[(&str, &str)] = &[
    ("build_info", "plugtop's version (always 1)"),
    (
        "guest_info",
        "The guest's identity from /proc/sysinfo and /proc/cpuinfo (always 1)",
    ),
    ("cpus_online", "CPUs online at the last reading"),
    ("cpus_present", "CPUs present at the last reading"),
    (
        "cmm_pages",
        "The CMM pool in pages (cmm_pages) at the last reading",
    ),
    ("cmm_pool", "The CMM pool at the last reading"),
    (
        "limit",
        "CPU_MIN, CPU_MAX (CPUs) and CMM_MIN, CMM_MAX (pages) in force, by `limit`",
    ),
    (
        "rule_true",
        "Whether the rule was true at the last interval (1) or false (0); absent when not evaluated",
    ),
    (
        "rule_value",
        "CMM_INC and CMM_DEC at the last interval, in pages",
    ),
    (
        "rule_evaluated",
        "Whether the rule was evaluated at the last interval",
    ),
    (
        "decided_actions",
        "Actions the rules decided, by `action` (plug, unplug, pool_up, pool_down), in any mode",
    ),
    (
        "applied_actions",
        "Actions written to the guest, by `action`",
    ),
    (
        "skipped_intervals",
        "Intervals a rule group did not decide, by `group` and `reason` (fault, history_filling, group_off, polarization, clock)",
    ),
    (
        "variable_value",
        "Each user variable a rule uses, at the last interval",
    ),
    ("flapping", "1 while the CPU count or the pool flaps"),
    (
        "hint",
        "1 once a known pattern was seen on this guest (loadavg lag, steal while the pool grows, Shmem counted as free), by pattern",
    ),
    (
        "reversals",
        "Reversals of direction (plug after unplug, and so on) since the start",
    ),
    (
        "readings",
        "Readings taken since the start, those a group skipped included",
    ),
    (
        "last_interval_timestamp_seconds",
        "When the last interval was read (seconds since the epoch)",
    ),
    (
        "mode",
        "The mode plugtop runs in (1 for the current one, by `mode`)",
    ),
    (
        "rules_info",
        "The rule file in force: its path and CRC-32 checksum (always 1)",
    ),
    (
        "rules_loaded_timestamp_seconds",
        "When the rule file in force was loaded (seconds since the epoch)",
    ),
];

impl Metrics {
    /// Every family registered, the build and the guest's identity set
    /// (they do not change while plugtop runs).
    pub fn new(identity: &Identity) -> Self {
        let mut r = Registry::with_prefix("plugtop");
        let build: Family<Labels, Gauge> = register(&mut r, "build_info");
        build
            .get_or_create(&labels(&[("version", env!("CARGO_PKG_VERSION"))]))
            .set(1);
        let guest: Family<Labels, Gauge> = register(&mut r, "guest_info");
        guest.get_or_create(&guest_labels(identity)).set(1);
        Metrics {
            cpus_online: register(&mut r, "cpus_online"),
            cpus_present: register(&mut r, "cpus_present"),
            cmm_pages: register(&mut r, "cmm_pages"),
            cmm_pool: {
                let g = Gauge::default();
                r.register_with_unit("cmm_pool", help("cmm_pool"), Unit::Bytes, g.clone());
                g
            },
            limits: register(&mut r, "limit"),
            rule_true: register(&mut r, "rule_true"),
            rule_value: register(&mut r, "rule_value"),
            rule_evaluated: register(&mut r, "rule_evaluated"),
            decided: register(&mut r, "decided_actions"),
            applied: register(&mut r, "applied_actions"),
            skipped: register(&mut r, "skipped_intervals"),
            variables: register(&mut r, "variable_value"),
            flapping: register(&mut r, "flapping"),
            hints: register(&mut r, "hint"),
            reversals: register(&mut r, "reversals"),
            reversals_seen: 0,
            intervals: register(&mut r, "readings"),
            last_interval: register(&mut r, "last_interval_timestamp_seconds"),
            mode: register(&mut r, "mode"),
            rules_info: register(&mut r, "rules_info"),
            rules_loaded: register(&mut r, "rules_loaded_timestamp_seconds"),
            cache: Cache::default(),
            registry: Arc::new(r),
        }
    }

    /// The registry, for a server thread to encode on demand.
    pub fn registry(&self) -> Arc<Registry> {
        Arc::clone(&self.registry)
    }

    /// A rule file was loaded (at start or on SIGHUP): its checksum and
    /// time, and the user variables of the old file dropped.
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

    /// The mode now.
    pub fn set_mode(&self, mode: Mode) {
        for m in [Mode::Observe, Mode::Step, Mode::Auto] {
            self.mode
                .get_or_create(&labels(&[("mode", m.key())]))
                .set(i64::from(m == mode));
        }
    }

    /// One interval: the reading, what the rules said and what was done.
    pub fn observe(&mut self, session: &Session, step: &Step, sample: &Sample) {
        let rules = session.rules();
        self.cpus_online.set(i64::from(sample.online.count));
        self.cpus_present.set(i64::from(sample.present.count));
        if let Some(pages) = sample.cmm_pages {
            self.cmm_pages.set(pages);
            self.cmm_pool.set(pages.saturating_mul(CMM_PAGE_BYTES));
        }
        let s = &rules.settings;
        let limits = [s.cpu_min, s.cpu_max, s.cmm_min, s.cmm_max];
        if self.cache.limits != Some(limits) {
            self.cache.limits = Some(limits);
            for (name, value) in ["CPU_MIN", "CPU_MAX", "CMM_MIN", "CMM_MAX"]
                .iter()
                .zip(limits)
            {
                self.limits
                    .get_or_create(&labels(&[("limit", name)]))
                    .set(value);
            }
        }
        self.last_interval.set(sample.stamp.micros as f64 / 1e6);
        self.intervals.inc();
        self.count_skips(session, step);
        for h in &step.hints {
            self.hints
                .get_or_create(&labels(&[("pattern", h.name)]))
                .set(1);
        }
        if step.skipped.is_none() {
            self.rules_and_variables(session, step);
        }
        for e in &step.events {
            match e {
                Event::Would { action, .. } => self.count(&self.decided, action),
                Event::Applied { action, .. } => {
                    self.count(&self.applied, action);
                    if session.controller().mode() == Mode::Auto {
                        self.count(&self.decided, action);
                    }
                }
                Event::Proposed(p) => {
                    for a in &p.actions {
                        self.count(&self.decided, a);
                    }
                }
                _ => {}
            }
        }
        let watch = session.watch();
        self.flapping.set(i64::from(!watch.flapping().is_empty()));
        let total = watch.flap.total_reversals() as u64;
        if total > self.reversals_seen {
            self.reversals.inc_by(total - self.reversals_seen);
            self.reversals_seen = total;
        }
    }

    fn count(&self, family: &Family<Labels, Counter>, action: &Action) {
        let name = match action {
            Action::PlugCpu => "plug",
            Action::UnplugCpu => "unplug",
            Action::Pool { from, to } if to > from => "pool_up",
            Action::Pool { .. } => "pool_down",
        };
        family.get_or_create(&labels(&[("action", name)])).inc();
    }

    /// Why a group did not decide this interval, counted.
    fn count_skips(&mut self, session: &Session, step: &Step) {
        let rules = session.rules();
        let (family, cache) = (&self.skipped, &mut self.cache.skipped);
        let mut skip = |group: &'static str, reason: &'static str| {
            cache
                .entry((group, reason))
                .or_insert_with(|| {
                    family.get_or_create_owned(&labels(&[("group", group), ("reason", reason)]))
                })
                .inc();
        };
        let groups = [("cpu", rules.cpu_enabled), ("memory", rules.mem_enabled)];
        if step.skipped.is_some() {
            for (group, _) in groups {
                skip(group, "clock");
            }
            return;
        }
        for (group, enabled) in groups {
            if !enabled {
                skip(group, "group_off");
            } else if step.decision.is_none() {
                skip(group, "history_filling");
            }
        }
        let Some(d) = &step.decision else { return };
        if let Some(c) = &d.cpu {
            match c.status {
                GroupStatus::Fault(_) => skip("cpu", "fault"),
                GroupStatus::Vertical => skip("cpu", "polarization"),
                GroupStatus::Ok => {}
            }
        }
        if let Some(m) = &d.mem
            && matches!(m.status, GroupStatus::Fault(_))
        {
            skip("memory", "fault");
        }
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
            self.cache.shown = vec![Shown::Nothing; RuleKind::ALL.len()];
        }
        for (i, kind) in RuleKind::ALL.into_iter().enumerate() {
            let outcome = rules
                .rule(kind)
                .filter(|_| step.decision.is_some())
                .map_or(Outcome::NotEvaluated, |r| trace.outcome(r.root));
            let evaluated = !matches!(outcome, Outcome::NotEvaluated | Outcome::Aborted);
            self.cache.evaluated[i].set(i64::from(evaluated));
            self.show_rule(i, kind, outcome);
        }
        let engine = session.engine();
        for v in rules.variables.iter().filter(|v| v.uses > 0) {
            match engine.variable(&v.name).and_then(Result::ok) {
                Some(value) if value.is_finite() => {
                    let family = &self.variables;
                    self.cache
                        .variables
                        .entry(v.name.clone())
                        .or_insert_with(|| {
                            family.get_or_create_owned(&labels(&[("variable", &v.name)]))
                        })
                        .set(value);
                }
                _ => {
                    if self.cache.variables.remove(&v.name).is_some() {
                        self.variables.remove(&labels(&[("variable", &v.name)]));
                    }
                }
            }
        }
    }

    /// A rule's truth or value series set, created or removed only when
    /// what it shows changes kind.
    fn show_rule(&mut self, i: usize, kind: RuleKind, outcome: Outcome) {
        let key = || labels(&[("rule", kind.file_name())]);
        let shown = &mut self.cache.shown[i];
        match (outcome, &*shown) {
            (Outcome::Truth(t), Shown::Truth(g)) => {
                g.set(i64::from(t));
                return;
            }
            (Outcome::Number(v), Shown::Number(g)) => {
                g.set(v);
                return;
            }
            _ => {}
        }
        match shown {
            Shown::Truth(_) => {
                self.rule_true.remove(&key());
            }
            Shown::Number(_) => {
                self.rule_value.remove(&key());
            }
            Shown::Nothing => {}
        }
        *shown = match outcome {
            Outcome::Truth(t) => {
                let g = self.rule_true.get_or_create_owned(&key());
                g.set(i64::from(t));
                Shown::Truth(g)
            }
            Outcome::Number(v) => {
                let g = self.rule_value.get_or_create_owned(&key());
                g.set(v);
                Shown::Number(g)
            }
            _ => Shown::Nothing,
        };
    }

    /// The exposition in the OpenMetrics text format.
    pub fn openmetrics(&self) -> String {
        format::openmetrics(&self.registry)
    }

    /// The exposition in the Prometheus text format (node_exporter's
    /// textfile collector and `promtool` read this one).
    pub fn prometheus_text(&self) -> String {
        format::prometheus_text(&self.registry)
    }
}

/// The help text of a family in [`FAMILIES`].
fn help(name: &str) -> &'static str {
    FAMILIES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("", |(_, h)| h)
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

/// The guest's identity as labels; what is unknown is an empty value, so
/// every guest's series have the same label names.
fn guest_labels(id: &Identity) -> Labels {
    // What a root's files say is bounded and escaped, as every label is.
    let short = |v: &str| label_safe(v).chars().take(MAX_LABEL).collect::<String>();
    let text = |v: &Option<String>| short(v.as_deref().unwrap_or_default());
    let number = |v: Option<u32>| v.map_or(String::new(), |n| n.to_string());
    vec![
        ("host".into(), short(&id.host)),
        ("architecture".into(), short(&id.architecture)),
        ("zvm_guest".into(), id.zvm_guest.to_string()),
        ("zvm_name".into(), text(&id.guest_name)),
        ("zvm_version".into(), text(&id.zvm_version)),
        ("lpar".into(), text(&id.lpar_name)),
        ("machine_type".into(), text(&id.machine_type)),
        ("cpus_configured".into(), number(id.cpus_configured)),
        ("cpus_standby".into(), number(id.cpus_standby)),
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
        metrics.observe(&session, &step, &sample);
        let text = metrics.prometheus_text();
        assert!(
            text.contains("plugtop_hint{pattern=\"shmem-counted-free\"} 1"),
            "{text}"
        );
    }
}
