//! The names and help texts of every family plugtop exposes, in one table:
//! `docs/metrics.md` documents each and a test keeps the two in step, and
//! the alerts and the dashboard may name only these.

/// Every `plugtop_` family (without the prefix, and without the unit or
/// `_total` suffix the client adds), with its help text.
pub const FAMILIES: &[(&str, &str)] = &[
    ("build_info", "plugtop's version (always 1)"),
    (
        "guest_info",
        "The guest's identity from /proc/sysinfo and /proc/cpuinfo (always 1; no numbers in labels)",
    ),
    (
        "cpus_configured",
        "The guest's configured CPUs (VM00 CPUs Configured in /proc/sysinfo), read at start and reload; absent when unknown",
    ),
    (
        "cpus_standby",
        "The guest's standby CPUs (VM00 CPUs Standby in /proc/sysinfo), read at start and reload; absent when unknown",
    ),
    ("cpus_online", "CPUs online at the last reading"),
    ("cpus_present", "CPUs present at the last reading"),
    (
        "cmm_available",
        "1 when /proc/sys/vm/cmm_pages could be read at the last reading, 0 without CMM",
    ),
    (
        "cmm_pages",
        "The CMM pool in pages (cmm_pages) at the last reading; absent without CMM",
    ),
    (
        "cmm_pool",
        "The CMM pool at the last reading; absent without CMM",
    ),
    (
        "cpu_min",
        "CPU_MIN in force, in CPUs; absent while the CPU group is off",
    ),
    (
        "cpu_max",
        "CPU_MAX in force, in CPUs (0 resolved to the CPUs present); absent while the CPU group is off",
    ),
    (
        "cmm_min",
        "CMM_MIN in force; absent while the memory group is off",
    ),
    (
        "cmm_max",
        "CMM_MAX in force; absent while the memory group is off",
    ),
    ("update", "The interval between readings in force (UPDATE)"),
    (
        "rule_true",
        "Whether HOTPLUG, HOTUNPLUG, MEMPLUG or MEMUNPLUG held at the last interval (1) or not (0), a number counting as true when not 0; absent when not evaluated",
    ),
    (
        "rule_value",
        "CMM_INC and CMM_DEC at the last interval, in pages; absent when not evaluated",
    ),
    (
        "rule_evaluated",
        "Whether the rule was evaluated at the last interval",
    ),
    (
        "decided_actions",
        "Actions the rules decided, by `action` (plug, unplug, pool_up, pool_down), in every mode",
    ),
    (
        "applied_actions",
        "Actions written to the guest, by `action` (start limits included)",
    ),
    (
        "failed_actions",
        "Actions that could not be written, by `action` and `reason` (write: a write failed; no_cpu: no CPU could be taken)",
    ),
    (
        "last_action_timestamp_seconds",
        "When an action was last written to the guest (the reading's time, seconds since the epoch); absent before the first",
    ),
    (
        "skipped_intervals",
        "Intervals a rule group did not decide, by `group` and `reason` (fault, history_filling, group_off, polarization, clock)",
    ),
    (
        "read_errors",
        "Readings that failed and were skipped, by the `file` that could not be read",
    ),
    (
        "variable_value",
        "Each user variable a rule uses, at the last interval",
    ),
    ("flapping", "1 while the CPU count or the pool flaps"),
    (
        "flap_period",
        "While flapping, the time of one cycle there and back (the shortest of the CPU count's and the pool's); absent otherwise",
    ),
    (
        "rule_faults",
        "Intervals at which the rule faulted (a division by zero, a missing value, a history not yet filled), by `rule`",
    ),
    (
        "last_change_timestamp_seconds",
        "When the decision last changed (seconds since the epoch), labelled `why` with the comparisons that flipped it; absent before the first change",
    ),
    (
        "flapping_intervals",
        "Intervals during which the CPU count or the pool flapped, so flapping between two scrapes is seen",
    ),
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
        "interval_duration",
        "How long the last interval took plugtop: reading, deciding, acting and these metrics",
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
    (
        "reloads",
        "Reloads of the rule file (SIGHUP), by `result` (success, failure)",
    ),
    (
        "rules_last_reload_successful",
        "0 when the last reload failed and the old rules were kept, else 1",
    ),
];

/// The process families of the HTTP endpoint (the names every Prometheus
/// client library uses, so fleet-wide queries find plugtop's too), without
/// the unit or `_total` suffix.
pub const PROCESS_FAMILIES: &[(&str, &str)] = &[
    ("process_cpu", "User and system CPU time spent"),
    ("process_resident_memory", "Resident memory size"),
    ("process_virtual_memory", "Virtual memory size"),
    ("process_open_fds", "Open file descriptors"),
    ("process_max_fds", "The limit of open file descriptors"),
    ("process_threads", "Threads in the process"),
    (
        "process_start_time",
        "When the process started (seconds since the epoch)",
    ),
];

/// The suffixes the client adds to a family's name (its unit, `_total`).
const SUFFIXES: [&str; 6] = [
    "",
    "_total",
    "_bytes",
    "_seconds",
    "_pages",
    "_seconds_total",
];

/// Whether `name` is a sample or family name of one of `families` after
/// `prefix`, with any suffix the client adds.
fn named_in(name: &str, prefix: &str, families: &[(&str, &str)]) -> bool {
    name.strip_prefix(prefix).is_some_and(|rest| {
        families.iter().any(|(family, _)| {
            rest.strip_prefix(family)
                .is_some_and(|suffix| SUFFIXES.contains(&suffix))
        })
    })
}

/// Whether plugtop's textfile may hold a sample or family named `name`:
/// one of [`FAMILIES`] (the metrics textfile has no process families).
pub fn is_plugtop_family(name: &str) -> bool {
    named_in(name, "plugtop_", FAMILIES)
}

/// Whether plugtop exports a sample or family named `name` anywhere: one
/// of [`FAMILIES`] or, on the endpoint, [`PROCESS_FAMILIES`].
pub fn is_exported(name: &str) -> bool {
    is_plugtop_family(name) || named_in(name, "", PROCESS_FAMILIES)
}

/// The help text of a family in [`FAMILIES`] or [`PROCESS_FAMILIES`].
pub fn help(name: &str) -> &'static str {
    FAMILIES
        .iter()
        .chain(PROCESS_FAMILIES)
        .find(|(n, _)| *n == name)
        .map_or("", |(_, h)| h)
}
