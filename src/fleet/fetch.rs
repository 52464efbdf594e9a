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

    /// The guests whose plugtop stopped now: a timestamp series seen in
    /// the window (or over `--stale-after`, if longer) that has no value
    /// now. Prometheus marks a target's series stale at the first scrape
    /// that fails (`up == 0`: `plugtop run` stopped, its listener gone)
    /// and a series stale when the target stops exporting it (the
    /// textfile a clean stop removes), so the guest is stopped at once,
    /// not `--stale-after` later; only those guests are answered.
    fn gone(&self) -> String {
        let name = Family::Last.metric();
        format!(
            "last_over_time({sel}[{}s]) unless {sel}",
            self.window
                .max(self.stale_after)
                .min(self.lookback.max(self.window))
                .round() as u64,
            sel = self.selector(name, "")
        )
    }

    /// The instant queries of one refresh, by what they fill.
    pub fn instant_queries(&self) -> Vec<(Family, String)> {
        use Family::*;
        let last_long = [Info, Last];
        let last = [
            Online, Present, CpuMax, Pool, PoolMax, Update, Flapping, FlapPeriod,
        ];
        // Every rule that faulted over `r`, with its count, and beside them
        // (no `rule` label) the readings over `r`.
        let faults = |r: &str| {
            format!(
                "increase({f}{r}) > 0 or increase({n}{r})",
                f = self.selector(Faults.metric(), ""),
                n = self.selector("plugtop_readings_total", ""),
            )
        };
        let mut queries: Vec<(Family, String)> = last_long
            .into_iter()
            .map(|f| (f, self.last_long(f.metric())))
            .chain(last.into_iter().map(|f| (f, self.last(f.metric()))))
            .collect();
        queries.extend([
            (Mode, format!("{} == 1", self.last(Mode.metric()))),
            (Rules, self.last(Rules.metric())),
            (RuleTrue, self.last(RuleTrue.metric())),
            // In the window: the FAULTS column lists the rules, and a rule
            // that faulted at 5% of the readings is trouble
            // (`FleetGuest::settle_faults`).
            (Faults, faults(&self.range())),
            // The same over the last two minutes: a rule that faulted at
            // each of those readings faults now.
            (
                FaultsNow,
                faults(&format!("[{}s]", super::model::FAULTING_NOW_SECONDS)),
            ),
            (
                Actions,
                format!(
                    "sum by (job, instance) (increase({}[1h]))",
                    self.selector(Actions.metric(), "")
                ),
            ),
            (Change, self.last(Change.metric())),
            (Gone, self.gone()),
        ]);
        queries
    }

    /// The range query of the sparklines.
    pub fn history_query(&self) -> String {
        self.selector("plugtop_cpus_online", "")
    }
}

/// Why `matcher` (label matchers without their braces, as [`Scope`] keeps
/// them) is not a list of label matchers, if it is not. `--match` is put
/// inside every query's braces as it is: unchecked, a `}` in it would end
/// the selector and the rest be PromQL of the user's (`job="a"} or
/// vector(1) or x{y="z"`), a query of another shape than the decoding
/// expects, with answers that would pass for guests.
pub fn check_matcher(matcher: &str) -> Result<(), String> {
    let near = |rest: &str| -> String { rest.chars().take(24).collect() };
    let mut rest = matcher.trim_start();
    while !rest.is_empty() {
        rest = match rest.strip_prefix('"') {
            // A quoted (UTF-8) label name, as Prometheus 3 takes.
            Some(after) => quoted(after, '"')?,
            None => {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                if end == 0 || rest.starts_with(|c: char| c.is_ascii_digit()) {
                    return Err(format!("a label name expected at `{}`", near(rest)));
                }
                &rest[end..]
            }
        }
        .trim_start();
        let op = ["=~", "!~", "!=", "="]
            .into_iter()
            .find(|op| rest.starts_with(op))
            .ok_or_else(|| format!("=, !=, =~ or !~ expected at `{}`", near(rest)))?;
        rest = rest[op.len()..].trim_start();
        rest = match rest.chars().next() {
            Some(q @ ('"' | '\'' | '`')) => quoted(&rest[1..], q)?,
            _ => return Err(format!("a quoted value expected at `{}`", near(rest))),
        }
        .trim_start();
        if rest.is_empty() {
            break;
        }
        rest = rest
            .strip_prefix(',')
            .ok_or_else(|| format!("`,` or the end expected at `{}`", near(rest)))?
            .trim_start();
    }
    Ok(())
}

/// What follows the string that `text` starts inside (after its opening
/// `quote`), as PromQL reads it: escapes in `"` and `'`, none in `` ` ``.
fn quoted(text: &str, quote: char) -> Result<&str, String> {
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' if quote != '`' => {
                chars.next();
            }
            '\n' if quote != '`' => return Err("a line break inside a quoted value".into()),
            c if c == quote => return Ok(&text[i + c.len_utf8()..]),
            _ => {}
        }
    }
    Err(format!("a value whose {quote} is never closed"))
}

/// `text` as a PromQL double-quoted string's inside: `\`, `"` and every
/// control character escaped. A label value comes from Prometheus
/// (untrusted, and it may hold a line break, which a PromQL string may
/// not): put in a query raw, it would make that query fail, or say more
/// than one label's value.
pub fn promql_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
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
    FaultsNow,
    Actions,
    Change,
    Gone,
}

impl Family {
    /// The metric its query asks for (named when the query fails).
    pub fn metric(self) -> &'static str {
        match self {
            Family::Info => "plugtop_guest_info",
            Family::Last => "plugtop_last_interval_timestamp_seconds",
            Family::Online => "plugtop_cpus_online",
            Family::Present => "plugtop_cpus_present",
            Family::CpuMax => "plugtop_cpu_max",
            Family::Pool => "plugtop_cmm_pages",
            Family::PoolMax => "plugtop_cmm_max_pages",
            Family::Update => "plugtop_update_seconds",
            Family::Flapping => "plugtop_flapping",
            Family::FlapPeriod => "plugtop_flap_period_seconds",
            Family::Mode => "plugtop_mode",
            Family::Rules => "plugtop_rules_info",
            Family::RuleTrue => "plugtop_rule_true",
            Family::Faults => "plugtop_rule_faults_total",
            Family::FaultsNow => "plugtop_rule_faults_total (the last two minutes)",
            Family::Actions => "plugtop_applied_actions_total",
            Family::Change => "plugtop_last_change_timestamp_seconds",
            Family::Gone => "plugtop_last_interval_timestamp_seconds gone stale",
        }
    }
}

/// A failed query as [`Health::failed`] lists it: what went wrong, then
/// which metric was asked for (an error reads as the error first, as
/// every other of plugtop's).
fn failure(why: &dyn std::fmt::Display, metric: &str) -> String {
    format!("{why} (asking for {metric})")
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
    let mut guests: BTreeMap<(String, String), (FleetGuest, u32)> = BTreeMap::new();
    // Once Prometheus cannot be reached (refused, timed out), the rest of
    // the refresh is not asked: a dead or black-holed server costs one
    // timeout per refresh, not one per query.
    let mut unreachable: Option<String> = None;
    for (family, query) in scope.instant_queries() {
        health.queries += 1;
        if let Some(why) = &unreachable {
            health
                .failed
                .push(failure(&format_args!("not asked: {why}"), family.metric()));
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
                if matches!(
                    e,
                    QueryError::Timeout(_)
                        | QueryError::Transport(_)
                        | QueryError::NothingListens(_)
                ) {
                    unreachable = Some(e.to_string());
                }
                health.failed.push(failure(&e, family.metric()));
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
                    && let Some((g, _)) = guests.get_mut(&k)
                {
                    g.online_history = s.points.iter().map(|p| p.1).collect();
                }
            }
        }
        Err(e) => health.failed.push(failure(
            &e,
            &format!("the history of {}", Family::Online.metric()),
        )),
    }
    health.warnings.sort();
    health.warnings.dedup();
    health.warnings.truncate(8);
    for (g, _) in guests.values_mut() {
        g.settle_faults();
    }
    health.took_ms = started.elapsed().as_millis() as u64;
    Fleet {
        guests: guests.into_values().map(|(g, _)| g).collect(),
        at,
        health,
    }
}

/// Whether a guest exports one series of `family` (its others are one per
/// rule, fault or change).
fn one_per_guest(family: Family) -> bool {
    !matches!(
        family,
        Family::RuleTrue
            | Family::Faults
            | Family::FaultsNow
            | Family::Change
            | Family::Info
            | Family::Gone
    )
}

/// One series' value into its guest (made when first seen). A second
/// series of a value exported once marks the guest duplicated, and the
/// worse of the two is kept: flapping over not, the older reading.
fn fill(
    guests: &mut BTreeMap<(String, String), (FleetGuest, u32)>,
    family: Family,
    point: &PromPoint,
) {
    let Some(k) = key(&point.labels) else { return };
    let (g, seen) = guests.entry(k.clone()).or_insert_with(|| {
        (
            FleetGuest {
                job: k.0.clone(),
                instance: k.1.clone(),
                ..FleetGuest::default()
            },
            0,
        )
    });
    let bit = 1u32 << (family as u32);
    let again = *seen & bit != 0;
    *seen |= bit;
    if again && one_per_guest(family) {
        g.duplicated = true;
        match family {
            Family::Flapping => g.flapping |= point.value.is_some_and(|v| v >= 1.0),
            Family::Last => {
                g.last_reading = match (g.last_reading, point.value) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    _ => None,
                }
            }
            _ => {}
        }
        return;
    }
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
        Family::Faults => match l.get("rule") {
            Some(rule) if g.fault_counts.len() < 8 => {
                g.fault_counts.push((rule.clone(), v.unwrap_or(0.0)));
            }
            Some(_) => {}
            None => g.readings_in_window = v,
        },
        Family::FaultsNow => match l.get("rule") {
            Some(rule) if g.recent_fault_counts.len() < 8 => {
                g.recent_fault_counts.push((rule.clone(), v.unwrap_or(0.0)));
            }
            Some(_) => {}
            None => g.readings_recently = v,
        },
        Family::Actions => g.actions_per_hour = v,
        Family::Gone => g.gone = true,
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
    let one = format!(
        "job=\"{}\",instance=\"{}\"",
        promql_string(job),
        promql_string(instance)
    );
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
                d.health.failed.push(failure(&e, name));
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn label_matchers_are_taken_and_anything_else_is_refused() {
        for ok in [
            "",
            r#"job="plugtop""#,
            r#"job="plugtop", site=~"b.*",instance!~'x\'y',"a.b"!="}",z=`a"b`,"#,
            r#"job="a\"} or vector(1)""#,
        ] {
            assert_eq!(check_matcher(ok), Ok(()), "{ok}");
        }
        for bad in [
            r#"{job="a"} or vector(1)"#,
            r#"job="a"} or vector(1) or x{y="z""#,
            r#"job="a" or vector(1)"#,
            r#"job="a"#,
            "job=\"a\nb\"",
            r#"job"#,
            r#"job=a"#,
            r#"1job="a""#,
            r#",job="a""#,
            r#"job=="a""#,
            r#"job="a"}"#,
        ] {
            assert!(check_matcher(bad).is_err(), "{bad} taken");
        }
    }

    /// Records the queries asked, answers nothing.
    struct Asked(Mutex<Vec<String>>);

    impl Prometheus for Asked {
        fn instant(
            &self,
            query: &str,
            _: f64,
        ) -> Result<super::super::query::PromAnswer<Vec<PromPoint>>, QueryError> {
            if let Ok(mut q) = self.0.lock() {
                q.push(query.into());
            }
            Err(QueryError::Transport("no".into()))
        }
        fn range(
            &self,
            query: &str,
            _: f64,
            _: f64,
            _: f64,
        ) -> Result<super::super::query::PromAnswer<Vec<PromSeries>>, QueryError> {
            if let Ok(mut q) = self.0.lock() {
                q.push(query.into());
            }
            Err(QueryError::Transport("no".into()))
        }
    }

    #[test]
    fn a_guest_whose_labels_hold_line_breaks_and_quotes_is_asked_for_as_itself() {
        let asked = Asked(Mutex::new(Vec::new()));
        let scope = Scope::new("", 3600.0, 60.0);
        detail(&asked, &scope, "a\"b", "x\ny\\\"}", 0.0, 3600.0);
        let queries = asked.0.into_inner().unwrap_or_default();
        assert_eq!(queries.len(), 7);
        for q in &queries {
            assert!(!q.chars().any(char::is_control), "{q:?}");
            assert!(
                q.ends_with(r#"{job="a\"b",instance="x\u000ay\\\"}"}"#),
                "{q}"
            );
        }
    }
}
