//! The fleet as rows: one [`FleetGuest`] per plugtop Prometheus knows, what
//! troubles each (ranked, so the worst come first), sorting, filtering and
//! the rule-file drift groups. Pure: no clock, no I/O; the time of the
//! answer is part of the [`Fleet`].

use std::collections::BTreeMap;

use serde::Serialize;

/// One guest, as its plugtop's metrics last said (values of a plugtop that
/// stopped are its last ones, and its age says it stopped).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FleetGuest {
    /// The `job` label.
    pub job: String,
    /// The `instance` label: with `job`, what tells guests apart.
    pub instance: String,
    /// `zvm_name` of `plugtop_guest_info` (empty when not a z/VM guest).
    pub zvm_name: String,
    /// The LPAR the z/VM runs in (`lpar`), or the host name outside z/VM.
    pub system: String,
    /// CPUs online at the last reading.
    pub online: Option<f64>,
    /// CPUs present at the last reading.
    pub present: Option<f64>,
    /// CPU_MAX in force (absent while the CPU group is off).
    pub cpu_max: Option<f64>,
    /// CPUs online over the window, oldest first (the sparkline).
    pub online_history: Vec<f64>,
    /// The CMM pool in pages (absent without CMM).
    pub pool_pages: Option<f64>,
    /// CMM_MAX in pages (absent while the memory group is off).
    pub pool_max_pages: Option<f64>,
    pub mode: Option<String>,
    /// The CPU count or the pool flaps now.
    pub flapping: bool,
    /// Seconds per cycle while flapping, when the exposition says it.
    pub flap_period: Option<f64>,
    /// Rules that faulted at 5% or more of the window's readings, twice
    /// at least: trouble.
    pub faulting: Vec<String>,
    /// Every rule that faulted in the window, however rarely: the FAULTS
    /// column (docs/fleet.md).
    pub faulted: Vec<String>,
    /// Faults in the window by rule, and the readings in the window, as
    /// the faults query answered; [`FleetGuest::settle_faults`] makes
    /// `faulting` and `faulted` of them.
    #[serde(skip)]
    pub fault_counts: Vec<(String, f64)>,
    #[serde(skip)]
    pub readings_in_window: Option<f64>,
    /// The same over the last [`FAULTING_NOW_SECONDS`]: a rule that
    /// faulted at every one of those readings (two at least) faults now.
    #[serde(skip)]
    pub recent_fault_counts: Vec<(String, f64)>,
    #[serde(skip)]
    pub readings_recently: Option<f64>,
    /// Actions written per hour (over the last hour).
    pub actions_per_hour: Option<f64>,
    /// When the last reading was taken (seconds since the epoch).
    pub last_reading: Option<f64>,
    /// UPDATE in force, in seconds (how stale is stale).
    pub update: Option<f64>,
    /// The rule file's path on the guest.
    pub rules_file: Option<String>,
    /// Its CRC-32: what drift groups by.
    pub rules_crc: Option<String>,
    /// HOTPLUG held at the last interval.
    pub wants_cpu: bool,
    /// MEMUNPLUG held at the last interval.
    pub wants_pool: bool,
    /// The last change of decision and the comparisons that flipped it.
    pub last_change: Option<String>,
    /// When that change was (seconds since the epoch; 0 when unknown).
    #[serde(skip)]
    pub last_change_at: f64,
    /// Prometheus held more than one series of a value the guest exports
    /// once (an extra label, two exporters): the worst of them is shown.
    pub duplicated: bool,
    /// Its series went stale: its target stopped answering (`up == 0`)
    /// or stopped exporting them (a textfile removed at a clean stop).
    /// Stopped at once, whatever the age of its last reading.
    pub gone: bool,
}

/// What troubles a guest, worst first (the order is the ranking).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trouble {
    Stopped,
    /// Its last reading is from the future: its clock is ahead, and how
    /// long ago it read cannot be told (it may have stopped).
    ClockAhead,
    /// Two series say different things of it ([`FleetGuest::duplicated`]).
    Duplicated,
    Faulting,
    Flapping,
    AtCpuMax,
    PoolAtMax,
}

impl Trouble {
    /// The short word the table and the batch output show.
    pub fn word(self) -> &'static str {
        match self {
            Trouble::Stopped => "stopped",
            Trouble::ClockAhead => "clock-ahead",
            Trouble::Duplicated => "duplicated",
            Trouble::Faulting => "faulting",
            Trouble::Flapping => "flapping",
            Trouble::AtCpuMax => "cpu-max",
            Trouble::PoolAtMax => "pool-max",
        }
    }
}

/// How far ahead of Prometheus's clock a guest's reading may be, in
/// seconds, before its clock counts as wrong (scrape delays and clocks a
/// little apart are normal).
pub const CLOCK_SLACK: f64 = 60.0;

/// The share of the window's readings at which a rule that faults is
/// trouble (`faulting`).
pub const FAULTING_SHARE: f64 = 0.05;

/// How far back "faulting now" looks, in seconds: a rule that faulted at
/// every reading of this span, two at least, makes its guest `faulting`
/// at once, without waiting for [`FAULTING_SHARE`] of the window (at
/// least two scrapes at Prometheus's default interval of a minute).
pub const FAULTING_NOW_SECONDS: u64 = 120;

/// The longest UPDATE interval a guest's own interval counts as, in
/// seconds: a day, the longest `plugtop tune` proposes.
pub const MAX_UPDATE: f64 = 86_400.0;

impl FleetGuest {
    /// Seconds since the last reading at `now`.
    pub fn age(&self, now: f64) -> Option<f64> {
        self.last_reading.map(|t| (now - t).max(0.0))
    }

    /// Whether its plugtop stopped reading: its series went stale
    /// ([`FleetGuest::gone`]), or no reading for `stale_after` seconds, or
    /// three of its own intervals if those are longer. Its
    /// interval is what the guest exports (`plugtop_update_seconds`), so
    /// it counts up to [`MAX_UPDATE`] only: an UPDATE of 1e308 would
    /// otherwise keep a guest that stopped years ago from ever being
    /// stopped.
    pub fn stopped(&self, now: f64, stale_after: f64) -> bool {
        if self.gone {
            return true;
        }
        let update = self.update.unwrap_or(0.0).clamp(0.0, MAX_UPDATE);
        let limit = stale_after.max(3.0 * update);
        self.age(now).is_none_or(|a| a > limit)
    }

    /// Whether its last reading is from the future, by more than
    /// [`CLOCK_SLACK`]: an age clamped at 0 read as a guest reading now.
    pub fn clock_ahead(&self, now: f64) -> bool {
        self.last_reading.is_some_and(|t| t - now > CLOCK_SLACK)
    }

    /// `faulted` (every rule that faulted in the window) and `faulting`
    /// (those that faulted at [`FAULTING_SHARE`] of the window's readings or
    /// more, twice at least: the fault or two of a start whose first
    /// readings are alike is not trouble; or those that faulted at every
    /// reading of the last [`FAULTING_NOW_SECONDS`], two at least: they
    /// fault now) from the counts the faults queries gave. Without a count
    /// of readings, two faults are trouble.
    pub fn settle_faults(&mut self) {
        let mut counts = std::mem::take(&mut self.fault_counts);
        counts.sort_by(|a, b| a.0.cmp(&b.0));
        counts.dedup_by(|a, b| a.0 == b.0);
        let readings = self.readings_in_window;
        self.faulted = counts.iter().map(|(r, _)| r.clone()).collect();
        let recently = self.readings_recently.filter(|n| *n > 1.5);
        let faults_now = |rule: &str| {
            self.recent_fault_counts
                .iter()
                .any(|(r, n)| r == rule && recently.is_some_and(|all| *n >= all - 0.5))
        };
        self.faulting = counts
            .iter()
            .filter(|(rule, n)| {
                let often =
                    *n > 1.5 && readings.is_none_or(|all| all <= 0.0 || n / all >= FAULTING_SHARE);
                often || faults_now(rule)
            })
            .map(|(r, _)| r.clone())
            .collect();
        self.recent_fault_counts.clear();
    }

    /// Everything that troubles it, worst first.
    pub fn troubles(&self, now: f64, stale_after: f64) -> Vec<Trouble> {
        let mut t = Vec::new();
        if self.stopped(now, stale_after) {
            t.push(Trouble::Stopped);
        }
        if self.clock_ahead(now) {
            t.push(Trouble::ClockAhead);
        }
        if self.duplicated {
            t.push(Trouble::Duplicated);
        }
        if !self.faulting.is_empty() {
            t.push(Trouble::Faulting);
        }
        if self.flapping {
            t.push(Trouble::Flapping);
        }
        if let (Some(on), Some(max)) = (self.online, self.cpu_max)
            && on >= max
            && self.wants_cpu
        {
            t.push(Trouble::AtCpuMax);
        }
        if let (Some(pool), Some(max)) = (self.pool_pages, self.pool_max_pages)
            && max > 0.0
            && pool >= max
        {
            t.push(Trouble::PoolAtMax);
        }
        t
    }

    /// The rule file as one text: path and checksum.
    pub fn rules(&self) -> String {
        match (&self.rules_file, &self.rules_crc) {
            (Some(f), Some(c)) => format!("{f} {c}"),
            (Some(f), None) => f.clone(),
            (None, Some(c)) => c.clone(),
            (None, None) => String::new(),
        }
    }
}

/// How the last refresh went: shown in the header, never hidden.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Health {
    /// Queries asked in this refresh.
    pub queries: usize,
    /// Those that failed, with why (a partial answer).
    pub failed: Vec<String>,
    /// Warnings Prometheus gave (or the decoding added).
    pub warnings: Vec<String>,
    /// How long the refresh took, in milliseconds.
    pub took_ms: u64,
}

impl Health {
    /// Whether every query failed: Prometheus is down or refuses.
    pub fn down(&self) -> bool {
        self.queries > 0 && self.failed.len() == self.queries
    }
}

/// The fleet at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fleet {
    /// Every guest, in no order (see [`order`]).
    pub guests: Vec<FleetGuest>,
    /// The evaluation time of the queries (seconds since the epoch).
    pub at: f64,
    /// How the refresh went.
    pub health: Health,
}

/// The columns the table shows and sorts by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FleetColumn {
    Trouble,
    Instance,
    FleetGuest,
    System,
    Cpus,
    Pool,
    Mode,
    Flap,
    Faults,
    Actions,
    Age,
    Rules,
}

impl FleetColumn {
    /// Every column, in the table's order.
    pub const ALL: [FleetColumn; 12] = [
        FleetColumn::Trouble,
        FleetColumn::Instance,
        FleetColumn::FleetGuest,
        FleetColumn::System,
        FleetColumn::Cpus,
        FleetColumn::Pool,
        FleetColumn::Mode,
        FleetColumn::Flap,
        FleetColumn::Faults,
        FleetColumn::Actions,
        FleetColumn::Age,
        FleetColumn::Rules,
    ];

    /// Its heading.
    pub fn title(self) -> &'static str {
        match self {
            FleetColumn::Trouble => "TROUBLE",
            FleetColumn::Instance => "INSTANCE",
            FleetColumn::FleetGuest => "GUEST",
            FleetColumn::System => "SYSTEM",
            FleetColumn::Cpus => "CPUS",
            FleetColumn::Pool => "POOL MiB",
            FleetColumn::Mode => "MODE",
            FleetColumn::Flap => "FLAP",
            FleetColumn::Faults => "FAULTS",
            FleetColumn::Actions => "ACT/H",
            FleetColumn::Age => "AGE",
            FleetColumn::Rules => "RULES",
        }
    }

    /// The next column (the sort key cycles with `s`).
    pub fn next(self) -> FleetColumn {
        let i = FleetColumn::ALL
            .iter()
            .position(|c| *c == self)
            .unwrap_or(0);
        FleetColumn::ALL[(i + 1) % FleetColumn::ALL.len()]
    }
}

/// A guest's trouble as a number for sorting: more and worse troubles
/// rank higher.
fn rank(t: &[Trouble]) -> u32 {
    t.iter().map(|x| 1u32 << (10 - *x as u32)).sum()
}

fn cmp_opt(a: Option<f64>, b: Option<f64>) -> std::cmp::Ordering {
    a.unwrap_or(f64::NEG_INFINITY)
        .total_cmp(&b.unwrap_or(f64::NEG_INFINITY))
}

/// The indexes of `fleet`'s guests that match `filter` (a case-insensitive
/// substring of any text column), sorted by `column` (the worst trouble,
/// the most CPUs, the oldest reading first; names alphabetically), the
/// order turned around when `reverse`. Ties keep the instance order.
pub fn order(
    fleet: &Fleet,
    column: FleetColumn,
    reverse: bool,
    filter: &str,
    stale_after: f64,
) -> Vec<usize> {
    let needle = filter.to_lowercase();
    let now = fleet.at;
    let mut rows: Vec<usize> = (0..fleet.guests.len())
        .filter(|&i| needle.is_empty() || matches(&fleet.guests[i], &needle, now, stale_after))
        .collect();
    let g = |i: usize| &fleet.guests[i];
    // Ranked once per guest, not once per comparison.
    let ranks: Vec<u32> = if column == FleetColumn::Trouble {
        fleet
            .guests
            .iter()
            .map(|g| rank(&g.troubles(now, stale_after)))
            .collect()
    } else {
        Vec::new()
    };
    rows.sort_by(|&a, &b| {
        let (x, y) = (g(a), g(b));
        use std::cmp::Ordering;
        let primary = match column {
            FleetColumn::Trouble => ranks[b].cmp(&ranks[a]),
            FleetColumn::Instance => Ordering::Equal,
            FleetColumn::FleetGuest => x.zvm_name.cmp(&y.zvm_name),
            FleetColumn::System => x.system.cmp(&y.system),
            FleetColumn::Cpus => cmp_opt(y.online, x.online),
            FleetColumn::Pool => cmp_opt(y.pool_pages, x.pool_pages),
            FleetColumn::Mode => x.mode.cmp(&y.mode),
            FleetColumn::Flap => y.flapping.cmp(&x.flapping),
            FleetColumn::Faults => y
                .faulting
                .len()
                .cmp(&x.faulting.len())
                .then(y.faulted.len().cmp(&x.faulted.len())),
            FleetColumn::Actions => cmp_opt(y.actions_per_hour, x.actions_per_hour),
            FleetColumn::Age => cmp_opt(x.last_reading.map(|t| -t), y.last_reading.map(|t| -t)),
            FleetColumn::Rules => x.rules().cmp(&y.rules()),
        };
        primary
            .then_with(|| x.instance.cmp(&y.instance))
            .then_with(|| x.job.cmp(&y.job))
    });
    if reverse {
        rows.reverse();
    }
    rows
}

/// Whether `needle` (lower case) is in any text column of `g` (the
/// FAULTS column's rule names among them: `/HOTPLUG` finds the guests
/// whose HOTPLUG faults) or one of its trouble words.
fn matches(g: &FleetGuest, needle: &str, now: f64, stale_after: f64) -> bool {
    let troubles = g.troubles(now, stale_after);
    g.faulted
        .iter()
        .any(|rule| rule.to_lowercase().contains(needle))
        || [
            g.instance.as_str(),
            &g.job,
            &g.zvm_name,
            &g.system,
            g.mode.as_deref().unwrap_or_default(),
            &g.rules(),
        ]
        .iter()
        .any(|t| t.to_lowercase().contains(needle))
        || troubles.iter().any(|t| t.word().contains(needle))
}

/// Guests that run one rule file (by checksum).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriftGroup {
    /// The CRC-32 of the file; empty when the guests export none.
    pub crc32: String,
    /// The paths the file has on those guests.
    pub files: Vec<String>,
    /// The guests' instances.
    pub instances: Vec<String>,
    /// Indexes into the fleet's guests.
    #[serde(skip)]
    pub members: Vec<usize>,
}

/// The guests grouped by rule file, the most common first: every group
/// after the first runs another file than most of the fleet.
pub fn drift(fleet: &Fleet) -> Vec<DriftGroup> {
    let mut by: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, g) in fleet.guests.iter().enumerate() {
        by.entry(g.rules_crc.as_deref().unwrap_or_default())
            .or_default()
            .push(i);
    }
    let mut groups: Vec<DriftGroup> = by
        .into_iter()
        .map(|(crc, members)| {
            let mut files: Vec<String> = members
                .iter()
                .filter_map(|&i| fleet.guests[i].rules_file.clone())
                .collect();
            files.sort();
            files.dedup();
            DriftGroup {
                crc32: crc.to_string(),
                files,
                instances: members
                    .iter()
                    .map(|&i| fleet.guests[i].instance.clone())
                    .collect(),
                members,
            }
        })
        .collect();
    groups.sort_by(|a, b| {
        b.members
            .len()
            .cmp(&a.members.len())
            .then_with(|| a.crc32.cmp(&b.crc32))
    });
    groups
}

/// One line about a drift group after the first: "3 guests run other
/// rules: rules.conf (crc 1234abcd)" (not "another rules.conf", which read
/// as a variant of the same file when the names differ).
pub fn drift_line(group: &DriftGroup) -> String {
    let n = group.members.len();
    let file = group
        .files
        .first()
        .map(|f| f.rsplit('/').next().unwrap_or(f).to_string())
        .unwrap_or_else(|| "rule file".into());
    let crc = if group.crc32.is_empty() {
        "no checksum".to_string()
    } else {
        format!("crc {}", group.crc32)
    };
    format!(
        "{n} guest{} run{} other rules: {file} ({crc})",
        if n == 1 { "" } else { "s" },
        if n == 1 { "s" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_finds_a_rule_in_the_faults_column() {
        let fleet = Fleet {
            guests: vec![
                FleetGuest {
                    instance: "a".into(),
                    faulted: vec!["HOTPLUG".into()],
                    ..FleetGuest::default()
                },
                FleetGuest {
                    instance: "b".into(),
                    ..FleetGuest::default()
                },
            ],
            at: 0.0,
            health: Health::default(),
        };
        assert_eq!(
            order(&fleet, FleetColumn::Instance, false, "hotplug", 60.0),
            [0]
        );
    }

    #[test]
    fn a_huge_update_interval_does_not_keep_a_stopped_guest_well() {
        let g = FleetGuest {
            last_reading: Some(0.0),
            update: Some(1e308),
            ..FleetGuest::default()
        };
        assert!(g.stopped(1e9, 60.0));
        assert!(!g.stopped(3.0 * MAX_UPDATE, 60.0));
    }

    fn guest(instance: &str) -> FleetGuest {
        FleetGuest {
            instance: instance.into(),
            job: "plugtop".into(),
            last_reading: Some(100.0),
            update: Some(1.0),
            ..FleetGuest::default()
        }
    }

    #[test]
    fn the_stopped_come_first_then_faulting_then_flapping() {
        let mut a = guest("a");
        a.flapping = true;
        let mut b = guest("b");
        b.last_reading = Some(0.0);
        let mut c = guest("c");
        c.faulting = vec!["HOTPLUG".into()];
        let d = guest("d");
        let fleet = Fleet {
            guests: vec![a, b, c, d],
            at: 100.0,
            health: Health::default(),
        };
        let rows = order(&fleet, FleetColumn::Trouble, false, "", 60.0);
        assert_eq!(rows, [1, 2, 0, 3]);
        assert_eq!(
            order(&fleet, FleetColumn::Trouble, false, "flap", 60.0),
            [0]
        );
    }

    #[test]
    fn drift_puts_the_majority_first() {
        let mut guests: Vec<FleetGuest> = (0..5).map(|i| guest(&i.to_string())).collect();
        for (i, g) in guests.iter_mut().enumerate() {
            g.rules_file = Some("/etc/cpuplugd.conf".into());
            g.rules_crc = Some(if i < 2 { "bbbb" } else { "aaaa" }.into());
        }
        let fleet = Fleet {
            guests,
            ..Fleet::default()
        };
        let groups = drift(&fleet);
        assert_eq!(groups[0].crc32, "aaaa");
        assert_eq!(
            drift_line(&groups[1]),
            "2 guests run other rules: cpuplugd.conf (crc bbbb)"
        );
    }
}
