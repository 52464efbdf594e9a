//! What the user asks of the knobs before a tune starts: `--knob
//! NAME=LO..HI` narrows (or widens) a knob's range and `--knob NAME=VALUE`
//! pins it, each refused with the knob's valid range when it asks for a
//! value the knob cannot take; and a run too short for the longest UPDATE
//! the search may try is refused. A refusal here costs no search time.

use std::fmt;

use super::knobs::{Knob, KnobKind};
use crate::rules::{RuleSet, Setting, SourceFile};

/// The longest UPDATE a knob may be given, seconds (a day: reading the
/// guest less often than that decides nothing a tune could measure).
pub const MAX_UPDATE: f64 = 86_400.0;

/// The largest magnitude of any other knob: beyond it a number is no
/// threshold of anything a guest reports, and its written form is noise.
pub const MAX_MAGNITUDE: f64 = 1e12;

/// The values a knob can take at all, whatever range a search covers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub low: f64,
    pub high: f64,
    /// `low` itself is excluded (a divisor of 0 divides by zero).
    pub above_low: bool,
    /// Only whole numbers (UPDATE, CPU_MIN, CPU_MAX are read as integers).
    pub whole: bool,
    /// What the numbers are, for the message.
    pub unit: &'static str,
}

impl Bounds {
    /// Whether the knob can take `v`.
    pub fn holds(&self, v: f64) -> bool {
        let above = if self.above_low {
            v > self.low
        } else {
            v >= self.low
        };
        v.is_finite() && above && v <= self.high && (!self.whole || v.fract() == 0.0)
    }
}

impl fmt::Display for Bounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.whole {
            "a whole number"
        } else {
            "a number"
        };
        if self.above_low {
            write!(
                f,
                "{kind} above {} up to {}",
                shown(self.low),
                shown(self.high)
            )?;
        } else {
            write!(f, "{kind} in {}..{}", shown(self.low), shown(self.high))?;
        }
        if !self.unit.is_empty() {
            write!(f, " ({})", self.unit)?;
        }
        Ok(())
    }
}

/// A bound as a person reads it: `1e12`, not thirteen digits.
fn shown(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// The values `knob` can take on a guest with `present_cpus` CPUs.
pub fn bounds(knob: &Knob, present_cpus: u32) -> Bounds {
    let present = f64::from(present_cpus.max(1));
    let any = Bounds {
        low: -MAX_MAGNITUDE,
        high: MAX_MAGNITUDE,
        above_low: false,
        whole: false,
        unit: "",
    };
    match knob.kind {
        KnobKind::Limit(Setting::Update) => Bounds {
            low: 1.0,
            high: MAX_UPDATE,
            whole: true,
            unit: "seconds",
            ..any
        },
        KnobKind::Limit(_) => Bounds {
            low: 1.0,
            high: present,
            whole: true,
            unit: "the CPUs present",
            ..any
        },
        KnobKind::Percent => Bounds {
            low: 0.0,
            high: 100.0 * present,
            unit: "% of a CPU, 100 for each CPU present",
            ..any
        },
        KnobKind::Divisor => Bounds {
            low: 0.0,
            above_low: true,
            unit: "a divisor",
            ..any
        },
        KnobKind::Threshold | KnobKind::Offset | KnobKind::CpuOffset => any,
    }
}

/// Why a `--knob` or the run's duration is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KnobError {
    #[error("--knob {spec:?}: write NAME=LO..HI or NAME=VALUE")]
    Form { spec: String },
    #[error("--knob {spec:?}: no knob is named or written at {name:?}; the knobs are {knobs}")]
    Unknown {
        spec: String,
        name: String,
        knobs: String,
    },
    #[error("--knob {spec:?}: {text:?} is not a number; {knob} takes {bounds}")]
    NotANumber {
        spec: String,
        text: String,
        knob: String,
        bounds: Bounds,
    },
    #[error("--knob {spec:?}: the range is inverted ({lo} is above {hi}); write LO..HI")]
    Inverted {
        spec: String,
        lo: String,
        hi: String,
    },
    #[error("--knob {spec:?}: {knob} takes {bounds}; {value} is not one")]
    OutOfBounds {
        spec: String,
        knob: String,
        value: String,
        bounds: Bounds,
    },
    #[error(
        "--knob: CPU_MIN is at least {min} and CPU_MAX at most {max}; cpuplugd refuses a CPU_MIN above CPU_MAX"
    )]
    MinAboveMax { min: f64, max: f64 },
    #[error("the duration must be a positive number of seconds, not {seconds}")]
    BadDuration { seconds: f64 },
    #[error(
        "a run of {seconds} s is shorter than UPDATE={update}, the longest interval this tune may try: such a run reads nothing and would score as perfect; give a longer --duration{hint}"
    )]
    ShortDuration {
        seconds: f64,
        update: f64,
        hint: String,
    },
    #[error(
        "a run of {seconds} s decides nothing at UPDATE={update}: the rules look back {history} intervals, so cpuplugd's first decision comes after {needed} s; give a longer --duration or narrow UPDATE"
    )]
    NoDecision {
        seconds: f64,
        update: f64,
        history: u32,
        needed: f64,
    },
}

/// A run must last long enough for cpuplugd to decide at least once at the
/// longest UPDATE the tune may try: the rules read `history` intervals back,
/// so the first decision needs `history + 1` readings. A shorter run scores
/// as a guest nobody touched, which looks nearly perfect.
pub fn check_decides(
    knobs: &[Knob],
    file_update: Option<f64>,
    history: u32,
    seconds: f64,
) -> Result<(), KnobError> {
    let update = knobs
        .iter()
        .find(|k| k.kind == KnobKind::Limit(Setting::Update))
        .map(|k| k.range.1.max(k.value))
        .or(file_update)
        .unwrap_or(1.0);
    let needed = update * (f64::from(history) + 1.0);
    if seconds < needed {
        return Err(KnobError::NoDecision {
            seconds,
            update,
            history,
            needed,
        });
    }
    Ok(())
}

/// Applies one `--knob NAME=LO..HI` (or `NAME=VALUE`, a pin: LO = HI) to
/// every knob NAME names — a limit (`CPU_MAX`), the rule or variable that
/// holds it (all its numbers), or `LINE:COL`. A knob's `value` stays the
/// file's (the start is the file as written); the search settles it within
/// the new range. A range with a fraction makes a knob written whole
/// searched in fractions (but UPDATE, CPU_MIN and CPU_MAX are whole).
pub fn apply(knobs: &mut [Knob], spec: &str, present_cpus: u32) -> Result<(), KnobError> {
    let (name, range) = spec.split_once('=').ok_or_else(|| KnobError::Form {
        spec: spec.to_string(),
    })?;
    let name = name.trim();
    let position = |k: &Knob| format!("{}:{}", k.line, k.column);
    let named: Vec<usize> = (0..knobs.len())
        .filter(|&i| knobs[i].owner == name || position(&knobs[i]) == name)
        .collect();
    if named.is_empty() {
        let list: Vec<String> = knobs
            .iter()
            .map(|k| format!("{} ({})", k.owner, position(k)))
            .collect();
        return Err(KnobError::Unknown {
            spec: spec.to_string(),
            name: name.to_string(),
            knobs: list.join(", "),
        });
    }
    let (lo_text, hi_text) = range.split_once("..").unwrap_or((range, range));
    let mut ranges = Vec::with_capacity(named.len());
    for &i in &named {
        let k = &knobs[i];
        let b = bounds(k, present_cpus);
        let number = |t: &str| {
            t.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| KnobError::NotANumber {
                    spec: spec.to_string(),
                    text: t.to_string(),
                    knob: k.name(),
                    bounds: b,
                })
        };
        let (lo, hi) = (number(lo_text)?, number(hi_text)?);
        if lo > hi {
            return Err(KnobError::Inverted {
                spec: spec.to_string(),
                lo: shown(lo),
                hi: shown(hi),
            });
        }
        // `CPU_MAX=0` pins cpuplugd's "no limit", as the file writes it.
        let unlimited = k.kind == KnobKind::Limit(Setting::CpuMax) && lo == 0.0 && hi == 0.0;
        if let Some(value) = [lo, hi].into_iter().find(|v| !b.holds(*v) && !unlimited) {
            return Err(KnobError::OutOfBounds {
                spec: spec.to_string(),
                knob: k.name(),
                value: shown(value),
                bounds: b,
            });
        }
        ranges.push((i, lo, hi));
    }
    // Nothing changes unless every knob named takes the range.
    for (i, lo, hi) in ranges {
        let k = &mut knobs[i];
        // No limit pinned where the file already means every CPU: left as
        // written (the knob drops out, a single value that is its own).
        let (lo, hi) = if k.kind == KnobKind::Limit(Setting::CpuMax)
            && hi == 0.0
            && k.value >= f64::from(present_cpus.max(1))
        {
            (k.value, k.value)
        } else {
            (lo, hi)
        };
        k.range = (lo, hi);
        if lo.fract() != 0.0 || hi.fract() != 0.0 {
            k.integer = false;
        }
    }
    Ok(())
}

/// After every `--knob`: a CPU_MIN whose lowest value is above CPU_MAX's
/// highest leaves no candidate cpuplugd would load.
pub fn check_limits(knobs: &[Knob]) -> Result<(), KnobError> {
    let limit = |setting: Setting| {
        knobs
            .iter()
            .find(|k| k.kind == KnobKind::Limit(setting))
            .map(|k| k.range)
    };
    // A CPU_MAX pinned at 0 is no limit: every CPU, so no CPU_MIN is above it.
    if let (Some(min), Some(max)) = (limit(Setting::CpuMin), limit(Setting::CpuMax))
        && max.1 > 0.0
        && min.0 > max.1
    {
        return Err(KnobError::MinAboveMax {
            min: min.0,
            max: max.1,
        });
    }
    Ok(())
}

/// Refuses a run of `seconds` that is not positive, or shorter than the
/// longest UPDATE the tune may run (the UPDATE knob's highest value or the
/// file's own, else `file_update`, the file's UPDATE when it is no knob):
/// a run with no interval reads nothing and scores as perfect. Refused
/// rather than UPDATE's range clamped to the run: a tune of UPDATE on a run
/// shorter than it measures nothing the user would deploy.
pub fn check_duration(
    knobs: &[Knob],
    file_update: Option<f64>,
    seconds: f64,
) -> Result<(), KnobError> {
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(KnobError::BadDuration { seconds });
    }
    let update = knobs
        .iter()
        .find(|k| k.kind == KnobKind::Limit(Setting::Update))
        .map(|k| k.range.1.max(k.value))
        .or(file_update);
    match update {
        Some(update) if seconds < update => {
            let fits = seconds.floor();
            let start = knobs
                .iter()
                .find(|k| k.kind == KnobKind::Limit(Setting::Update))
                .map_or(update, |k| k.value);
            let hint = if fits >= 1.0 && start <= seconds {
                format!(" or narrow UPDATE (--knob UPDATE=1..{fits})")
            } else {
                String::new()
            };
            Err(KnobError::ShortDuration {
                seconds,
                update,
                hint,
            })
        }
        _ => Ok(()),
    }
}

/// The knobs a tune searches: every knob of the file with each `--knob`
/// `spec` applied (refused with the knob's valid range when it cannot take
/// it), the limits left alone unless named ([`super::limits`]), and only
/// the numbers of the objective's rules unless named: a memory tune leaves
/// the CPU rules alone, a CPU tune the memory rules (UPDATE paces both, so
/// only a CPU tune searches it unless named). The command line, the
/// screen's `T` and every form a search puts in use this one choice.
pub fn chosen(
    rules: &RuleSet,
    file: &SourceFile,
    specs: &[String],
    present_cpus: u32,
    objective: crate::tune::score::Objective,
) -> Result<Vec<Knob>, KnobError> {
    let mut found = crate::tune::knobs::find(rules, file);
    for spec in specs {
        apply(&mut found, spec, present_cpus)?;
    }
    check_limits(&found)?;
    let found = crate::tune::limits::leave_unlimited(found, specs, present_cpus);
    let named: Vec<&str> = specs
        .iter()
        .filter_map(|spec| spec.split_once('=').map(|(name, _)| name))
        .collect();
    Ok(crate::tune::knobs::for_objective(
        found, rules, objective, &named,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{SourceFile, SystemFacts, load};

    #[test]
    fn cpu_max_pinned_at_zero_is_no_limit() {
        let knobs_of = |max: &str| {
            let text = format!(
                "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"{max}\"\n\
                 HOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 150\"\n"
            );
            let file = SourceFile::new("t.conf", text.into_bytes());
            let outcome = load(&file, &SystemFacts::any_machine(4, "test"));
            crate::tune::knobs::find(&outcome.rules, &file)
        };
        let cpu_max = |k: &[Knob]| {
            k.iter()
                .find(|k| k.kind == KnobKind::Limit(Setting::CpuMax))
                .map(|k| k.range)
        };
        // A cap of 2 pinned to no limit: every candidate writes 0.
        let mut knobs = knobs_of("2");
        apply(&mut knobs, "CPU_MAX=0", 4).expect("0 is cpuplugd's no limit");
        apply(&mut knobs, "CPU_MIN=3", 4).expect("pin");
        check_limits(&knobs).expect("no limit is above any CPU_MIN");
        assert_eq!(cpu_max(&knobs), Some((0.0, 0.0)));
        assert!(
            apply(&mut knobs, "CPU_MAX=0..2", 4).is_err(),
            "0 only as a pin"
        );
        // A file that already means every CPU keeps what it wrote.
        let mut knobs = knobs_of("4");
        apply(&mut knobs, "CPU_MAX=0", 4).expect("no limit");
        assert_eq!(cpu_max(&knobs), Some((4.0, 4.0)));
    }

    #[test]
    fn a_run_too_short_for_one_decision_is_refused() {
        assert!(check_decides(&[], Some(10.0), 3, 40.0).is_ok());
        let e = check_decides(&[], Some(10.0), 3, 39.0).expect_err("39 < 4 × 10");
        assert!(e.to_string().contains("after 40 s"), "{e}");
        assert!(check_decides(&[], None, 0, 1.0).is_ok());
        assert!(check_decides(&[], None, 0, 0.5).is_err());
    }

    /// The knobs of the paper's loadavg rules on 4 CPUs: UPDATE, CPU_MIN,
    /// CPU_MAX, `onumcpus + 0.75` (4:32), `idle < 10.0` (4:48), `onumcpus
    /// - 0.25` (5:34), `idle > 50` (5:50).
    fn loadavg() -> Vec<Knob> {
        let path = "examples/rules/cpu-loadavg.conf";
        let file = SourceFile::new(path, std::fs::read(path).unwrap_or_default());
        let outcome = load(&file, &SystemFacts::any_machine(4, "test"));
        crate::tune::knobs::find(&outcome.rules, &file)
    }

    fn knob<'a>(knobs: &'a [Knob], name: &str) -> &'a Knob {
        knobs
            .iter()
            .find(|k| k.owner == name || format!("{}:{}", k.line, k.column) == name)
            .unwrap_or_else(|| panic!("{name}: {knobs:?}"))
    }

    #[test]
    fn hostile_knobs_are_refused_with_the_knob_and_its_valid_range() {
        // (spec, what the message must say)
        let table: &[(&str, &[&str])] = &[
            (
                "CPU_MAX=5",
                &["CPU_MAX", "whole number in 1..4", "5 is not one"],
            ),
            ("CPU_MAX=0..2", &["CPU_MAX", "1..4"]),
            ("CPU_MIN=2..9", &["CPU_MIN", "1..4", "9 is not one"]),
            (
                "UPDATE=0",
                &["UPDATE", "whole number in 1..86400 (seconds)"],
            ),
            (
                "UPDATE=0.5..2",
                &["UPDATE", "whole number", "0.5 is not one"],
            ),
            ("UPDATE=1..2.5", &["UPDATE", "2.5 is not one"]),
            ("UPDATE=-3", &["UPDATE", "-3 is not one"]),
            ("UPDATE=1e300", &["UPDATE", "1e300 is not one"]),
            ("UPDATE=9..2", &["inverted", "9 is above 2"]),
            ("4:48=300..100", &["inverted"]),
            (
                "UPDATE=nan",
                &[
                    "\"nan\" is not a number",
                    "UPDATE takes a whole number in 1..86400",
                ],
            ),
            ("UPDATE=NaN..3", &["\"NaN\" is not a number"]),
            ("UPDATE=inf", &["\"inf\" is not a number"]),
            (
                "4:32=-inf..1",
                &["\"-inf\" is not a number", "HOTPLUG 0.75 (4:32)"],
            ),
            ("4:32=1e999", &["\"1e999\" is not a number"]),
            ("4:32=1e13", &["HOTPLUG 0.75 (4:32)", "-1e12..1e12"]),
            (
                "4:48=401",
                &["HOTPLUG 10 (4:48)", "0..400", "100 for each CPU"],
            ),
            ("4:48=-1..50", &["-1 is not one"]),
            ("UPDATE=", &["\"\" is not a number"]),
            ("UPDATE=1..", &["\"\" is not a number"]),
            ("UPDATE=1..2..3", &["\"2..3\" is not a number"]),
            ("UPDATE", &["write NAME=LO..HI or NAME=VALUE"]),
            ("", &["write NAME=LO..HI"]),
            (
                "NOPE=1",
                &[
                    "no knob is named or written at \"NOPE\"",
                    "the knobs are",
                    "UPDATE (1:9)",
                ],
            ),
            ("4:33=1", &["no knob", "\"4:33\"", "HOTPLUG (4:32)"]),
            ("99:1=1", &["no knob", "\"99:1\""]),
            ("=1", &["no knob", "\"\""]),
        ];
        for (spec, words) in table {
            let mut knobs = loadavg();
            let before = knobs.clone();
            let e = apply(&mut knobs, spec, 4).expect_err(spec).to_string();
            for w in *words {
                assert!(e.contains(w), "{spec}: {e:?} lacks {w:?}");
            }
            assert_eq!(knobs, before, "{spec}: a refused --knob changes nothing");
        }
    }

    #[test]
    fn a_pin_keeps_the_file_s_value_as_the_start_and_a_range_may_turn_fractional() {
        let mut knobs = loadavg();
        apply(&mut knobs, "UPDATE=3", 4).expect("pin");
        let update = knob(&knobs, "UPDATE");
        assert_eq!(update.range, (3.0, 3.0));
        assert_eq!(update.value, 1.0, "the start stays the file as written");
        apply(&mut knobs, "5:50=20.5..60", 4).expect("narrow");
        let idle = knob(&knobs, "5:50");
        assert_eq!(idle.range, (20.5, 60.0));
        assert!(!idle.integer, "a fractional range is searched in fractions");
        apply(&mut knobs, "CPU_MAX=1..4", 4).expect("the whole range");
        apply(&mut knobs, "CPU_MIN=1", 4).expect("pin");
        check_limits(&knobs).expect("1 ≤ 4");
        apply(&mut knobs, "CPU_MIN=3", 4).expect("a pin alone is fine");
        apply(&mut knobs, "CPU_MAX=1..2", 4).expect("and so is this");
        let e = check_limits(&knobs).expect_err("3 > 2").to_string();
        assert!(
            e.contains("CPU_MIN is at least 3 and CPU_MAX at most 2"),
            "{e}"
        );
    }

    #[test]
    fn a_rule_name_narrows_every_number_it_holds_or_none() {
        let mut knobs = loadavg();
        apply(&mut knobs, "HOTPLUG=0..3", 4).expect("both fit");
        assert_eq!(knob(&knobs, "4:32").range, (0.0, 3.0));
        assert_eq!(knob(&knobs, "4:48").range, (0.0, 3.0));
        let before = knobs.clone();
        // -5 is a fine offset but no idle threshold: nothing changes.
        let e = apply(&mut knobs, "HOTPLUG=-5..3", 4).expect_err("idle < -5");
        assert!(e.to_string().contains("HOTPLUG 10 (4:48)"), "{e}");
        assert_eq!(knobs, before);
    }

    #[test]
    fn a_run_shorter_than_the_longest_update_tried_is_refused() {
        let knobs = loadavg();
        // UPDATE is searched over 1..10 by default.
        assert_eq!(knob(&knobs, "UPDATE").range, (1.0, 10.0));
        check_duration(&knobs, Some(1.0), 10.0).expect("10 s holds an interval of 10 s");
        let e = check_duration(&knobs, Some(1.0), 9.5).expect_err("9.5 < 10");
        assert!(
            e.to_string().contains("UPDATE=10") && e.to_string().contains("--knob UPDATE=1..9"),
            "{e}"
        );
        let mut narrowed = knobs.clone();
        apply(&mut narrowed, "UPDATE=1..5", 4).expect("narrow");
        check_duration(&narrowed, Some(1.0), 5.0).expect("now it fits");
        // No UPDATE knob: the file's own UPDATE decides.
        let none: Vec<Knob> = knobs
            .iter()
            .filter(|k| k.kind != KnobKind::Limit(Setting::Update))
            .cloned()
            .collect();
        check_duration(&none, Some(30.0), 60.0).expect("fits");
        assert!(check_duration(&none, Some(30.0), 29.0).is_err());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(
                matches!(
                    check_duration(&knobs, Some(1.0), bad),
                    Err(KnobError::BadDuration { .. })
                ),
                "{bad}"
            );
        }
    }
}
