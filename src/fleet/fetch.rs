//! The queries behind one refresh, and the fleet assembled from their
//! answers. A refresh asks a fixed list of queries, one per metric family
//! and never one per guest, so a thousand guests cost what ten do; a query
//! that fails leaves its column empty and is named in [`Health`].

use std::collections::BTreeMap;
use std::time::Instant;

use super::model::{Fleet, FleetGuest, Health};
use super::query::{PromLabels, PromPoint, PromSeries, Prometheus, QueryError};

/// What the user asked to see: which series (a label matcher), over which
/// window, and when a guest counts as stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct Scope {
    /// Label matchers without braces (`job="plugtop"`), or empty.
    pub matcher: String,
    /// The window of sparklines, faults and changes, in seconds.
    pub window: f64,
    /// Seconds without a reading after which a guest counts as stopped.
    pub stale_after: f64,
    /// How far back a stopped guest's identity and last reading are
    /// looked for, in seconds (at least the window).
    pub lookback: f64,
}

impl Scope {
    /// A scope from `--match`, with or without its braces.
    pub fn new(matcher: &str, window: f64, stale_after: f64) -> Scope {
        let m = matcher.trim();
        let m = m
            .strip_prefix('{')
            .and_then(|m| m.strip_suffix('}'))
            .unwrap_or(m);
        Scope {
            matcher: m.trim().to_string(),
            window: window.max(60.0),
            stale_after,
            lookback: LOOKBACK,
        }
    }

    /// `name{matcher,extra}`.
    pub fn selector(&self, name: &str, extra: &str) -> String {
        let parts: Vec<&str> = [self.matcher.as_str(), extra]
            .into_iter()
            .filter(|p| !p.is_empty())
            .collect();
        format!("{name}{{{}}}", parts.join(","))
    }

    fn range(&self) -> String {
        format!("[{}s]", self.window.round() as u64)
    }

    /// As [`Scope::last`] over the lookback (or the window, if longer):
    /// the guest's identity and last reading, so a guest stopped for
    /// longer than the window is still listed (two queries only: the
    /// others stay within the window, which keeps a refresh cheap).
    fn last_long(&self, name: &str) -> String {
        format!(
            "last_over_time({}[{}s])",
            self.selector(name, ""),
            self.window.max(self.lookback).round() as u64
        )
    }

    /// `last_over_time(name{matcher}[window])`: a stopped guest keeps its
    /// last value, so it is shown as stopped rather than dropped.
    fn last(&self, name: &str) -> String {
        format!(
            "last_over_time({}{})",
            self.selector(name, ""),
            self.range()
        )
    }

    /// The instant queries of one refresh, by what they fill.
    pub fn instant_queries(&self) -> Vec<(Family, String)> {
        use Family::*;
        vec![
            (Info, self.last_long("plugtop_guest_info")),
            (
                Last,
                self.last_long("plugtop_last_interval_timestamp_seconds"),
            ),
            (Online, self.last("plugtop_cpus_online")),
            (Present, self.last("plugtop_cpus_present")),
            (CpuMax, self.last("plugtop_cpu_max")),
            (Pool, self.last("plugtop_cmm_pages")),
            (PoolMax, self.last("plugtop_cmm_max_pages")),
            (Update, self.last("plugtop_update_seconds")),
            (Flapping, self.last("plugtop_flapping")),
            (FlapPeriod, self.last("plugtop_flap_period_seconds")),
            (Mode, format!("{} == 1", self.last("plugtop_mode"))),
            (Rules, self.last("plugtop_rules_info")),
            (RuleTrue, self.last("plugtop_rule_true")),
            (
                Faults,
                // A rule that faulted at 5% of the window's readings or
                // more (and twice at least): the fault or two of a start
                // whose first readings are alike is not trouble.
                format!(
                    "(increase({f}{r}) > 1.5) / on (job, instance) group_left increase({n}{r}) > 0.05",
                    f = self.selector("plugtop_rule_faults_total", ""),
                    n = self.selector("plugtop_readings_total", ""),
                    r = self.range()
                ),
            ),
            (
                Actions,
                format!(
                    "sum by (job, instance) (increase({}[1h]))",
                    self.selector("plugtop_applied_actions_total", "")
                ),
            ),
            (Change, self.last("plugtop_last_change_timestamp_seconds")),
        ]
    }

    /// The range query of the sparklines.
    pub fn history_query(&self) -> String {
        self.selector("plugtop_cpus_online", "")
    }
}

/// How long a stopped guest stays listed by default, in seconds: a day.
pub const LOOKBACK: f64 = 86_400.0;

/// What an instant query fills in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Info,
    Last,
    Online,
    Present,
    CpuMax,
    Pool,
    PoolMax,
    Update,
    Flapping,
    FlapPeriod,
    Mode,
    Rules,
    RuleTrue,
    Faults,
    Actions,
    Change,
}

/// A guest's key: its job and instance.
fn key(labels: &PromLabels) -> Option<(String, String)> {
    let instance = labels.get("instance")?;
    Some((
        labels.get("job").cloned().unwrap_or_default(),
        instance.clone(),
    ))
}

fn label(labels: &PromLabels, name: &str) -> String {
    labels.get(name).cloned().unwrap_or_default()
}

/// Points the sparkline takes over the window.
pub const SPARK_POINTS: f64 = 60.0;

/// The whole fleet at `at` (seconds since the epoch): the fixed queries,
/// asked one after another, and the rows made from what came back.
pub fn fleet(p: &dyn Prometheus, scope: &Scope, at: f64) -> Fleet {
    let started = Instant::now();
    let mut health = Health::default();
    let mut guests: BTreeMap<(String, String), FleetGuest> = BTreeMap::new();
    // Once Prometheus cannot be reached (refused, timed out), the rest of
    // the refresh is not asked: a dead or black-holed server costs one
    // timeout per refresh, not one per query.
    let mut unreachable: Option<String> = None;
    for (family, query) in scope.instant_queries() {
        health.queries += 1;
        if let Some(why) = &unreachable {
            health.failed.push(format!("{family:?}: not asked: {why}"));
            continue;
        }
        match p.instant(&query, at) {
            Ok(answer) => {
                health.warnings.extend(answer.warnings);
                for point in &answer.data {
                    fill(&mut guests, family, point);
                }
            }
            Err(e) => {
                if matches!(e, QueryError::Timeout(_) | QueryError::Transport(_)) {
                    unreachable = Some(e.to_string());
                }
                health.failed.push(format!("{family:?}: {e}"));
            }
        }
    }
    health.queries += 1;
    let step = (scope.window / SPARK_POINTS).max(1.0);
    let history = match &unreachable {
        Some(why) => Err(QueryError::Transport(format!("not asked: {why}"))),
        None => p.range(&scope.history_query(), at - scope.window, at, step),
    };
    match history {
        Ok(answer) => {
            health.warnings.extend(answer.warnings);
            for s in answer.data {
                if let Some(k) = key(&s.labels)
                    && let Some(g) = guests.get_mut(&k)
                {
                    g.online_history = s.points.iter().map(|p| p.1).collect();
                }
            }
        }
        Err(e) => health.failed.push(format!("history: {e}")),
    }
    health.warnings.sort();
    health.warnings.dedup();
    health.warnings.truncate(8);
    for g in guests.values_mut() {
        g.faulting.sort();
        g.faulting.dedup();
    }
    health.took_ms = started.elapsed().as_millis() as u64;
    Fleet {
        guests: guests.into_values().collect(),
        at,
        health,
    }
}

/// One series' value into its guest (made when first seen).
fn fill(guests: &mut BTreeMap<(String, String), FleetGuest>, family: Family, point: &PromPoint) {
    let Some(k) = key(&point.labels) else { return };
    let g = guests.entry(k.clone()).or_insert_with(|| FleetGuest {
        job: k.0.clone(),
        instance: k.1.clone(),
        ..FleetGuest::default()
    });
    let v = point.value;
    let l = &point.labels;
    match family {
        Family::Info => {
            g.zvm_name = label(l, "zvm_name");
            g.system = label(l, "lpar");
            if g.system.is_empty() {
                g.system = label(l, "host");
            }
        }
        Family::Last => g.last_reading = v,
        Family::Online => g.online = v,
        Family::Present => g.present = v,
        Family::CpuMax => g.cpu_max = v,
        Family::Pool => g.pool_pages = v,
        Family::PoolMax => g.pool_max_pages = v,
        Family::Update => g.update = v,
        Family::Flapping => g.flapping = v.is_some_and(|v| v >= 1.0),
        Family::FlapPeriod => g.flap_period = v,
        Family::Mode => g.mode = l.get("mode").cloned(),
        Family::Rules => {
            g.rules_file = l.get("file").cloned();
            g.rules_crc = l.get("crc32").cloned();
        }
        Family::RuleTrue => {
            let on = v.is_some_and(|v| v >= 1.0);
            match l.get("rule").map(String::as_str) {
                Some("HOTPLUG") => g.wants_cpu = on,
                Some("MEMUNPLUG") => g.wants_pool = on,
                _ => {}
            }
        }
        Family::Faults => {
            if let Some(rule) = l.get("rule")
                && g.faulting.len() < 8
            {
                g.faulting.push(rule.clone());
            }
        }
        Family::Actions => g.actions_per_hour = v,
        Family::Change => {
            // The newest change of the window (each text is a series).
            let newest = v.unwrap_or(0.0);
            if g.last_change.is_none() || newest > g.last_change_at {
                g.last_change = l.get("why").cloned();
                g.last_change_at = newest;
            }
        }
    }
}

/// One guest over a window: what the detail screen draws.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuestDetail {
    /// The guest: its job label.
    pub job: String,
    /// The guest: its instance label.
    pub instance: String,
    /// The window (seconds since the epoch).
    pub start: f64,
    /// The window's end (seconds since the epoch).
    pub end: f64,
    /// CPUs online: (time, value).
    pub online: Vec<(f64, f64)>,
    /// CPUs present: (time, value).
    pub present: Vec<(f64, f64)>,
    /// The CMM pool in pages: (time, value).
    pub pool: Vec<(f64, f64)>,
    /// Each rule's truth (or amount) over the window, by rule name.
    pub rules: Vec<(String, Vec<(f64, f64)>)>,
    /// Whether it flapped: (time, 0 or 1).
    pub flapping: Vec<(f64, f64)>,
    /// When the decision changed and the comparisons that flipped it,
    /// oldest first.
    pub changes: Vec<(f64, String)>,
    /// How the queries went.
    pub health: Health,
}

/// Points of each detail series over its window.
pub const DETAIL_POINTS: f64 = 120.0;

/// One guest's series over `start..end`: a fixed number of range queries.
pub fn detail(
    p: &dyn Prometheus,
    scope: &Scope,
    job: &str,
    instance: &str,
    start: f64,
    end: f64,
) -> GuestDetail {
    let started = Instant::now();
    let esc = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
    let one = format!("job=\"{}\",instance=\"{}\"", esc(job), esc(instance));
    let step = ((end - start) / DETAIL_POINTS).max(1.0);
    let mut d = GuestDetail {
        job: job.into(),
        instance: instance.into(),
        start,
        end,
        ..GuestDetail::default()
    };
    let mut ask = |name: &str| -> Vec<PromSeries> {
        d.health.queries += 1;
        match p.range(&scope.selector(name, &one), start, end, step) {
            Ok(a) => {
                d.health.warnings.extend(a.warnings);
                a.data
            }
            Err(e) => {
                d.health.failed.push(format!("{name}: {e}"));
                Vec::new()
            }
        }
    };
    let first = |s: Vec<PromSeries>| s.into_iter().next().map(|s| s.points).unwrap_or_default();
    let online = first(ask("plugtop_cpus_online"));
    let present = first(ask("plugtop_cpus_present"));
    let pool = first(ask("plugtop_cmm_pages"));
    let flapping = first(ask("plugtop_flapping"));
    let mut rules: Vec<(String, Vec<(f64, f64)>)> = ask("plugtop_rule_true")
        .into_iter()
        .chain(ask("plugtop_rule_value"))
        .map(|s| (label(&s.labels, "rule"), s.points))
        .collect();
    rules.sort_by(|a, b| a.0.cmp(&b.0));
    let mut changes: Vec<(f64, String)> = ask("plugtop_last_change_timestamp_seconds")
        .into_iter()
        .flat_map(|s| {
            let why = label(&s.labels, "why");
            let mut at: Vec<f64> = s.points.iter().map(|p| p.1).collect();
            at.dedup();
            at.into_iter().map(move |t| (t, why.clone()))
        })
        .collect();
    changes.sort_by(|a, b| a.0.total_cmp(&b.0));
    changes.dedup();
    d.online = online;
    d.present = present;
    d.pool = pool;
    d.flapping = flapping;
    d.rules = rules;
    d.changes = changes;
    d.health.took_ms = started.elapsed().as_millis() as u64;
    d
}
