//! Scenario files: a guest (CPUs, memory, hypervisor contention) and its
//! workload as timed phases. TOML; documented in examples/scenarios/README.md.

use serde::Deserialize;

use crate::number::brief as short;
use crate::safe_text::cut_to;
use crate::toml_file::FileKind;

/// One stretch of time with a steady workload.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    /// A name for reports and the UI.
    #[serde(default)]
    pub name: String,
    /// When the phase starts, "H:MM" or "M:SS"-style minutes:seconds, or seconds.
    pub start: String,
    /// Runnable threads.
    #[serde(default)]
    pub threads: f64,
    /// Share of a CPU each thread wants (0..1).
    #[serde(default = "one")]
    pub cpu_per_thread: f64,
    /// Share of the CPU time spent in the kernel.
    #[serde(default = "default_system")]
    pub system_share: f64,
    /// Share of the CPU time that is niced.
    #[serde(default)]
    pub nice_share: f64,
    /// Page-cache growth from file I/O, MiB per second.
    #[serde(default)]
    pub io_mib_per_s: f64,
    /// Share of thread time waiting for I/O.
    #[serde(default)]
    pub iowait_share: f64,
    /// Anonymous memory the workload touches, MiB.
    #[serde(default)]
    pub working_set_mib: f64,
    /// Shared memory (tmpfs, SysV), MiB.
    #[serde(default)]
    pub shared_mib: f64,
    /// A square-wave pulse: the load is on for half of each period (seconds).
    #[serde(default)]
    pub pulse_period_s: f64,
}

fn one() -> f64 {
    1.0
}

fn default_system() -> f64 {
    0.1
}

/// The guest and its workload.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// CPUs defined for the guest (present).
    pub cpus: u32,
    /// CPUs online when the guest starts.
    #[serde(default = "one_cpu")]
    pub online: u32,
    /// Memory defined for the guest, MiB.
    pub memory_mib: f64,
    /// Share of CPU time other guests take from this one while it runs (steal).
    #[serde(default)]
    pub contention: f64,
    /// Total length, "M:SS" or seconds.
    pub duration: String,
    /// Seed for the small jitter the model adds.
    #[serde(default)]
    pub seed: u64,
    /// Demand varies ±3% from step to step (off for a recorded workload,
    /// whose demand already varies as it did).
    #[serde(default = "yes")]
    pub jitter: bool,
    /// The workload; none is an idle guest.
    #[serde(default)]
    pub phases: Vec<Phase>,
    /// Each phase's start in seconds, in order (filled by `parse`), so the
    /// phase at a moment is found by binary search, not by parsing.
    #[serde(skip)]
    starts: Vec<f64>,
}

fn yes() -> bool {
    true
}

fn one_cpu() -> u32 {
    1
}

/// Why a scenario cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("cannot read {0}")]
    Read(String, #[source] std::io::Error),
    /// `FILE:LINE:COL` (or the name alone) and what is wrong, one line.
    #[error("{0}: error: {1}")]
    Parse(String, String),
}

/// The value a scenario's check refused: a top-level key, or a key of the
/// phase at an index (a key left out points at its phase).
#[derive(Debug, Clone, Copy)]
enum Refused {
    Top(&'static str),
    Phase(usize, &'static str),
}

/// Where each value of a scenario file is, read again with places (only
/// after the check refused one: the common path reads the file once).
#[derive(Deserialize)]
struct Places {
    cpus: Option<toml::Spanned<toml::Value>>,
    online: Option<toml::Spanned<toml::Value>>,
    memory_mib: Option<toml::Spanned<toml::Value>>,
    contention: Option<toml::Spanned<toml::Value>>,
    duration: Option<toml::Spanned<toml::Value>>,
    #[serde(default)]
    phases: Vec<std::collections::BTreeMap<String, toml::Spanned<toml::Value>>>,
}

impl Places {
    /// The byte offset in `text` of the value `at` names, when the file
    /// has it (a phase's key left out: the phase's first value).
    fn at(text: &str, at: Refused) -> Option<usize> {
        let places: Places = toml::from_str(text).ok()?;
        let value = match at {
            Refused::Top("cpus") => places.cpus,
            Refused::Top("online") => places.online,
            Refused::Top("memory_mib") => places.memory_mib,
            Refused::Top("contention") => places.contention,
            Refused::Top("duration") => places.duration,
            Refused::Top(_) => return places.phases.first().and_then(first_key),
            Refused::Phase(i, key) => {
                let phase = places.phases.get(i)?;
                return phase
                    .get(key)
                    .map(|v| v.span().start)
                    .or_else(|| first_key(phase));
            }
        };
        value.map(|v| v.span().start)
    }
}

/// Where a phase's first key's value is (a phase has no place of its own).
fn first_key(
    phase: &std::collections::BTreeMap<String, toml::Spanned<toml::Value>>,
) -> Option<usize> {
    phase.values().map(|v| v.span().start).min()
}

/// The numbers of phase `p` checked: threads and shares in range, sizes
/// and rates numbers of 0 or more, a pulse period 0 or long enough; a
/// refusal names the key it is about.
fn phase_numbers(p: &Phase) -> Result<(), (&'static str, String)> {
    if !(p.threads >= 0.0 && p.threads <= 100_000.0) {
        return Err((
            "threads",
            format!(
                "phase {:?}: threads = {} must be a number from 0 to 100000",
                p.name,
                short(p.threads)
            ),
        ));
    }
    for (key, v) in [
        ("cpu_per_thread", p.cpu_per_thread),
        ("system_share", p.system_share),
        ("nice_share", p.nice_share),
        ("iowait_share", p.iowait_share),
    ] {
        if !(0.0..=1.0).contains(&v) {
            return Err((
                key,
                format!(
                    "phase {:?}: {key} = {} must be a number from 0 to 1",
                    p.name,
                    short(v)
                ),
            ));
        }
    }
    if p.system_share + p.nice_share > 1.0 {
        return Err((
            "system_share",
            format!(
                "phase {:?}: system_share + nice_share is more than 1",
                p.name
            ),
        ));
    }
    for (key, v, most, unit) in [
        (
            "io_mib_per_s",
            p.io_mib_per_s,
            LARGEST_MIB,
            "MiB/s (16 TiB/s)",
        ),
        (
            "working_set_mib",
            p.working_set_mib,
            LARGEST_MIB,
            "MiB (16 TiB, the largest guest)",
        ),
        (
            "shared_mib",
            p.shared_mib,
            LARGEST_MIB,
            "MiB (16 TiB, the largest guest)",
        ),
        ("pulse_period_s", p.pulse_period_s, LONGEST, "s (366 days)"),
    ] {
        if !v.is_finite() {
            return Err((
                key,
                format!(
                    "phase {:?}: {key} = {} is not a number (sizes and rates are numbers of 0 or more)",
                    p.name,
                    short(v)
                ),
            ));
        }
        if v < 0.0 {
            return Err((
                key,
                format!(
                    "phase {:?}: {key} = {} is negative (sizes and rates cannot be)",
                    p.name,
                    short(v)
                ),
            ));
        }
        if v > most {
            return Err((
                key,
                format!(
                    "phase {:?}: {key} = {} is more than {} {unit}",
                    p.name,
                    short(v),
                    short(most)
                ),
            ));
        }
    }
    if p.pulse_period_s > 0.0 && p.pulse_period_s < SHORTEST_PULSE {
        return Err((
            "pulse_period_s",
            format!(
                "phase {:?}: pulse_period_s = {} is shorter than {SHORTEST_PULSE} s, two of the simulator's steps (0 means no pulse)",
                p.name,
                short(p.pulse_period_s)
            ),
        ));
    }
    Ok(())
}

/// The largest memory size a scenario names, in MiB: a guest's limit, 16 TiB
/// (`memory_mib` is held to it too).
const LARGEST_MIB: f64 = 16.0 * 1024.0 * 1024.0;

/// The longest run a scenario or `--duration` may ask for.
pub const LONGEST: f64 = 366.0 * 86_400.0;

/// Seconds from a duration as people write them: "H:MM:SS" or "M:SS",
/// a plain number of seconds, or numbers with units — `90s`, `15m`, `1h`,
/// `24h`, `2d`, `1h30m`, `1.5h`. Every part a finite number, none
/// negative, the result at most [`LONGEST`] (`-0:30:00`, `1:-30`, `1e18`
/// and `5x` are not durations).
pub fn seconds(text: &str) -> Option<f64> {
    let text = text.trim();
    let total = if text.ends_with(|c: char| c.is_ascii_alphabetic()) {
        with_units(text)?
    } else {
        clock(text)?
    };
    (total <= LONGEST).then_some(total)
}

/// `--duration` as a command line gives it (`sim`, `tune`): a length of
/// more than 0 s, in seconds.
pub fn duration_arg(d: &str) -> anyhow::Result<f64> {
    match seconds(d) {
        Some(s) if s > 0.0 => Ok(s),
        Some(_) => anyhow::bail!(
            "--duration {d:?} is no time at all: give a length like 1h, 15m, 90s or 12:00"
        ),
        None => anyhow::bail!(
            "--duration {d:?} is not a duration like 1h, 15m, 90s or 12:00 (at most 366 days)"
        ),
    }
}

/// "H:MM:SS", "M:SS" or plain seconds.
fn clock(text: &str) -> Option<f64> {
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() > 3 {
        return None;
    }
    let mut total = 0.0;
    for (i, p) in parts.iter().enumerate() {
        let v = p.trim().parse::<f64>().ok()?;
        let capped = i > 0 && v >= 60.0;
        if !v.is_finite() || v < 0.0 || p.trim().starts_with(['-', '+']) || capped {
            return None;
        }
        total = total * 60.0 + v;
    }
    Some(total)
}

/// Numbers each followed by a unit: s, m, h or d.
fn with_units(text: &str) -> Option<f64> {
    let mut total = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, tail) = rest.split_at(digits);
        let letters = tail
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(letters);
        let v: f64 = number.parse().ok()?;
        let scale = match unit {
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "d" => 86_400.0,
            _ => return None,
        };
        if !v.is_finite() {
            return None;
        }
        total += v * scale;
        rest = tail;
    }
    Some(total)
}

#[cfg(test)]
mod duration_tests {
    use super::seconds;

    #[test]
    fn durations_as_people_write_them() {
        for (text, want) in [
            ("1h", 3600.0),
            ("90s", 90.0),
            ("15m", 900.0),
            ("24h", 86_400.0),
            ("1h30m", 5400.0),
            ("1.5h", 5400.0),
            ("2d", 172_800.0),
            ("12:00", 720.0),
            ("1:00:00", 3600.0),
            ("720", 720.0),
            (" 45s ", 45.0),
        ] {
            assert_eq!(seconds(text), Some(want), "{text}");
        }
    }

    #[test]
    fn what_is_not_a_duration() {
        for text in [
            "", "h", "5x", "1h-30m", "-1h", "1e18", "1:-30", "-0:30:00", "400d", "1..5h", "1h 30m",
            "5 s",
        ] {
            assert_eq!(seconds(text), None, "{text:?}");
        }
    }
}

/// The largest scenario file read, checked before it is parsed: reading
/// TOML costs about 45 bytes of memory per byte of file (a 10 MB file of
/// phases peaked at 347 MB before the phase limit refused it), so this
/// keeps a parse near 50 MB; 10,000 phases of a few lines each fit.
pub const MOST_SCENARIO_BYTES: u64 = 1 << 20;

/// The most of a name or a time from the file that a message or a report
/// quotes (cut with how much was left out).
const QUOTED: usize = 200;

/// The shortest pulse period: two of the model's steps (`model::STEP`,
/// 0.1 s; a test there keeps the two in step), so that a pulse's on half
/// is seen by a step.
pub const SHORTEST_PULSE: f64 = 0.2;

impl Scenario {
    /// Reads and checks a scenario file.
    pub fn load(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
        let shown = path.display().to_string();
        // Bounded, non-blocking, regular files only: a FIFO or /dev/zero
        // given as a scenario is refused, not waited on or read forever.
        let bytes = crate::kernel::fs::read_named(path, MOST_SCENARIO_BYTES)
            .map_err(|e| match e.kind() {
                // Refused before it is parsed, and said as the limit it is.
                std::io::ErrorKind::FileTooLarge => std::io::Error::new(
                    e.kind(),
                    format!(
                        "larger than 1 MiB ({MOST_SCENARIO_BYTES} bytes), the most a scenario file holds; refusing to read it"
                    ),
                ),
                _ => e,
            })
            .map_err(|e| ScenarioError::Read(shown.clone(), e))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            // Placed as the reader's own errors are: the line and column
            // of the first byte that is no UTF-8.
            let good = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let before = std::str::from_utf8(&bytes[..good]).unwrap_or_default();
            ScenarioError::Parse(
                crate::toml_file::place(&shown, before, good),
                format!(
                    "byte 0x{:02X} is not UTF-8 (a scenario file is UTF-8 text)",
                    bytes[good]
                ),
            )
        })?;
        Scenario::parse(&shown, &text)
    }

    /// Parses scenario text; `name` is used in messages.
    pub fn parse(name: &str, text: &str) -> Result<Scenario, ScenarioError> {
        let s: Scenario = toml::from_str(text).map_err(|e| {
            let (offset, message) = crate::toml_file::syntax_error(&e);
            let message = FileKind::explained(FileKind::Scenario, text, message);
            let place = offset.map_or_else(
                || name.to_string(),
                |at| crate::toml_file::place(name, text, at),
            );
            ScenarioError::Parse(place, message)
        })?;
        Scenario::checked(s).map_err(|(at, what)| {
            // The value the check refused, as `file:line:col`, as the
            // TOML reader's own errors.
            let place = Places::at(text, at)
                .map(|offset| crate::toml_file::place(name, text, offset))
                .unwrap_or_else(|| name.to_string());
            ScenarioError::Parse(place, what)
        })
    }

    /// A scenario made in code (a recording turned into a workload), checked
    /// as a file's would be.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        name: &str,
        cpus: u32,
        online: u32,
        memory_mib: f64,
        contention: f64,
        duration: String,
        jitter: bool,
        phases: Vec<Phase>,
    ) -> Result<Scenario, ScenarioError> {
        let s = Scenario {
            name: name.to_string(),
            description: String::new(),
            cpus,
            online,
            memory_mib,
            contention,
            duration,
            seed: 1,
            jitter,
            phases,
            starts: Vec::new(),
        };
        Scenario::checked(s).map_err(|(_, what)| ScenarioError::Parse(name.into(), what))
    }

    /// The checks every scenario passes, and the phases' starts in seconds;
    /// a refusal names the value it is about ([`Refused`]) and why.
    fn checked(mut s: Scenario) -> Result<Scenario, (Refused, String)> {
        // Names are only shown: a long one is cut once here, so no report,
        // banner or message quotes more of it than that.
        let cut = |text: &mut String| {
            if text.len() > QUOTED {
                *text = cut_to(text, QUOTED).into_owned();
            }
        };
        cut(&mut s.name);
        for p in &mut s.phases {
            cut(&mut p.name);
        }
        let top = |key| move |what: String| Err((Refused::Top(key), what));
        let bad = top(if s.cpus == 0 { "cpus" } else { "online" });
        if s.cpus == 0 || s.online == 0 || s.online > s.cpus {
            return bad(format!(
                "cpus = {} and online = {} must satisfy 1 <= online <= cpus",
                s.cpus, s.online
            ));
        }
        // Written so that NaN fails too.
        if !(s.memory_mib >= 256.0 && s.memory_mib <= LARGEST_MIB) {
            return top("memory_mib")(format!(
                "memory_mib = {} must be a number from 256 to 16777216 (16 TiB)",
                short(s.memory_mib)
            ));
        }
        if s.cpus > 4096 {
            return top("cpus")(format!("cpus = {} is more than 4096", s.cpus));
        }
        if s.phases.len() > 100_000 {
            return top("phases")(format!("{} phases are more than 100000", s.phases.len()));
        }
        if seconds(&s.duration).is_none_or(|d| d <= 0.0) {
            return top("duration")(format!(
                "duration {:?} is not a duration like 1h, 15m, 90s or 12:00 (at most 366 days)",
                cut_to(&s.duration, QUOTED)
            ));
        }
        let mut previous: Option<(f64, &Phase)> = None;
        for (i, p) in s.phases.iter().enumerate() {
            let at = |key| move |what: String| Err((Refused::Phase(i, key), what));
            let Some(start) = seconds(&p.start) else {
                return at("start")(format!(
                    "phase {:?}: start {:?} is not a time",
                    p.name,
                    cut_to(&p.start, QUOTED)
                ));
            };
            if let Some((before, q)) = previous
                && start <= before
            {
                return at("start")(format!(
                    "phase {:?} starts at {}, not after the phase before it, {:?} (at {})",
                    p.name,
                    cut_to(&p.start, QUOTED),
                    q.name,
                    cut_to(&q.start, QUOTED)
                ));
            }
            previous = Some((start, p));
            phase_numbers(p).map_err(|(key, what)| (Refused::Phase(i, key), what))?;
        }
        if !(0.0..=0.95).contains(&s.contention) {
            return top("contention")(format!(
                "contention = {} must be between 0 and 0.95",
                short(s.contention)
            ));
        }
        s.starts = s.phases.iter().filter_map(|p| seconds(&p.start)).collect();
        Ok(s)
    }

    /// Length in seconds.
    pub fn length(&self) -> f64 {
        seconds(&self.duration).unwrap_or(0.0)
    }

    /// The phase running at `t` seconds (the last one started), if any.
    pub fn phase_at(&self, t: f64) -> Option<&Phase> {
        if self.starts.len() != self.phases.len() {
            // Built without `parse` (a test): look the slow way.
            return self
                .phases
                .iter()
                .rfind(|p| seconds(&p.start).is_some_and(|s| s <= t));
        }
        let n = self.starts.partition_point(|s| *s <= t);
        n.checked_sub(1).and_then(|i| self.phases.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUEST: &str = "name = \"t\"\ncpus = 2\nmemory_mib = 1024\nduration = \"1:00\"\n";

    fn error(text: &str) -> String {
        match Scenario::parse("t.toml", &format!("{GUEST}{text}")) {
            Ok(s) => panic!("accepted: {s:?}"),
            Err(e) => e.to_string(),
        }
    }

    /// adv52 #6: each refused value is placed at its own key, quoted
    /// briefly, and sizes past a guest's 16 TiB are refused.
    #[test]
    fn refusals_are_placed_at_the_key_they_are_about() {
        for (text, place, says) in [
            (
                "[[phases]]\nstart = \"0\"\nthreads = 1\nsystem_share = nan\n",
                "t.toml:8:16",
                "system_share = NaN must be a number from 0 to 1",
            ),
            (
                "[[phases]]\nstart = \"0\"\ncpu_per_thread = inf\n",
                "t.toml:7:18",
                "cpu_per_thread = inf must be",
            ),
            (
                "[[phases]]\nstart = \"0\"\nnice_share = 1e308\n",
                "t.toml:7:14",
                "nice_share = 1e308 must be",
            ),
            (
                "[[phases]]\nstart = \"0\"\nthreads = -1\n",
                "t.toml:7:11",
                "threads = -1 must be a number from 0 to 100000",
            ),
            ("online = 0\n", "t.toml:5:10", "cpus = 2 and online = 0"),
            ("online = 3\n", "t.toml:5:10", "cpus = 2 and online = 3"),
            (
                "[[phases]]\nstart = \"0\"\nworking_set_mib = 1e308\n",
                "t.toml:7:19",
                "working_set_mib = 1e308 is more than 16777216 MiB (16 TiB, the largest guest)",
            ),
            (
                "[[phases]]\nstart = \"0\"\nshared_mib = 16777217\n",
                "t.toml:7:14",
                "shared_mib = 16777217 is more than",
            ),
            (
                "[[phases]]\nstart = \"0\"\nio_mib_per_s = 1e20\n",
                "t.toml:7:16",
                "io_mib_per_s = 1e20 is more than",
            ),
            (
                "[[phases]]\nstart = \"0\"\npulse_period_s = 1e308\n",
                "t.toml:7:18",
                "pulse_period_s = 1e308 is more than 31622400 s (366 days)",
            ),
        ] {
            let e = error(text);
            assert!(e.starts_with(&format!("{place}: error: ")), "{text:?}: {e}");
            assert!(e.contains(says), "{text:?}: {e}");
        }
        let text = format!("{GUEST}[[phases]]\nstart = \"0\"\nworking_set_mib = 16777216\n");
        assert!(Scenario::parse("t.toml", &text).is_ok());
    }

    /// adv52 #6a: a file that is not UTF-8 is placed at its first bad byte.
    #[test]
    fn invalid_utf8_is_placed_by_line_and_column() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("s.toml");
        let mut bytes = GUEST.as_bytes().to_vec();
        bytes.extend_from_slice(b"# \xc3\xa9 ok \xff\xfe bad\n");
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{e}"));
        let e = match Scenario::load(&path) {
            Ok(s) => panic!("accepted: {s:?}"),
            Err(e) => e.to_string(),
        };
        assert!(
            e.ends_with(
                "s.toml:5:8: error: byte 0xFF is not UTF-8 (a scenario file is UTF-8 text)"
            ),
            "{e}"
        );
    }

    #[test]
    fn times_read_as_minutes_and_seconds() {
        assert_eq!(seconds("1:41"), Some(101.0));
        assert_eq!(seconds("1:00:05"), Some(3605.0));
        assert_eq!(seconds("90"), Some(90.0));
        assert_eq!(seconds("1:x"), None);
    }

    #[test]
    fn the_running_phase_is_the_last_one_started() {
        let s = match Scenario::parse(
            "t",
            &format!(
                "{GUEST}[[phases]]\nname = \"a\"\nstart = \"0\"\n[[phases]]\nname = \"b\"\nstart = \"0:30\"\n"
            ),
        ) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(s.phase_at(29.9).map(|p| p.name.as_str()), Some("a"));
        assert_eq!(s.phase_at(30.0).map(|p| p.name.as_str()), Some("b"));
        assert_eq!(s.length(), 60.0);
    }

    #[test]
    fn mistakes_are_named() {
        // Each names the value it is about by line and column (the GUEST
        // lines come first), and a number as it is short.
        let order = error("[[phases]]\nstart = \"0:30\"\n[[phases]]\nstart = \"0:10\"\n");
        assert!(order.contains("not after the phase before it"), "{order}");
        assert!(order.starts_with("t.toml:8:9: error: "), "{order}");
        let huge = error("contention = 1e308\n");
        assert!(
            huge.starts_with("t.toml:5:14: error: contention = 1e308 must be"),
            "{huge}"
        );
        assert!(error("[[phases]]\nstart = \"0\"\nsystem_share = 1.5\n").contains("from 0 to 1"));
        assert!(error("contention = 2\n").contains("contention"));
        assert!(error("[[phases]]\nstart = \"soon\"\n").contains("not a time"));
        let unknown = error("[[phases]]\nstart = \"0\"\nthread = 2\n");
        assert!(
            unknown.starts_with("t.toml:7:1: error: unknown field `thread`"),
            "{unknown}"
        );
    }

    #[test]
    fn every_number_is_checked_with_its_name() {
        let guest = |mem: &str, duration: &str| {
            Scenario::parse(
                "t.toml",
                &format!("name = \"t\"\ncpus = 2\nmemory_mib = {mem}\nduration = \"{duration}\"\n"),
            )
            .map(|_| ())
            .map_err(|e| e.to_string())
        };
        for mem in ["nan", "inf", "1e308", "100"] {
            let e = guest(mem, "1:00").err().unwrap_or_default();
            assert!(e.contains("memory_mib"), "{mem}: {e}");
        }
        for d in [
            "-0:30:00",
            "1:-30",
            "1e18",
            "876000:00:00",
            "1:99",
            "inf",
            "1:2:3:4",
        ] {
            let e = guest("1024", d).err().unwrap_or_default();
            assert!(e.contains("duration"), "{d}: {e}");
        }
        assert!(guest("1024", "12:30").is_ok());
        assert_eq!(seconds("1:00:00"), Some(3600.0));
        assert!(error("[[phases]]\nstart = \"0:10\"\nthreads = nan\n").contains("threads"));
    }

    #[test]
    fn phases_are_found_by_their_start() {
        let mut text = String::from(GUEST);
        for i in 0..1000 {
            text.push_str(&format!("[[phases]]\nname = \"p{i}\"\nstart = \"{i}\"\n"));
        }
        let s = Scenario::parse("t.toml", &text).map_err(|e| e.to_string());
        let Ok(s) = s else { panic!("{s:?}") };
        assert_eq!(s.phase_at(0.5).map(|p| p.name.as_str()), Some("p0"));
        assert_eq!(s.phase_at(999.0).map(|p| p.name.as_str()), Some("p999"));
        assert_eq!(s.phase_at(-1.0), None);
    }

    #[test]
    fn toml_errors_are_one_bounded_line_at_their_place() {
        // adv51: the reader's own errors quoted the whole line under a
        // caret row (a 5 MB line gave a 10 MB message) and were not in the
        // FILE:LINE:COL form of the value errors.
        let long = error(&format!("zz = \"{}\" x\n", "B".repeat(5_000_000)));
        assert!(long.starts_with("t.toml:5:"), "{long:.200}");
        assert!(long.contains(": error: "), "{long:.200}");
        assert!(long.len() < 1000 && !long.contains('\n'), "{long:.2000}");
        for text in [
            "cpus = 99999999999\n",
            "seed = -1\n",
            "[phases.sub]\n",
            "x = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
        ] {
            let e = Scenario::parse("t.toml", &format!("{GUEST}{text}"))
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.starts_with("t.toml:"), "{text}: {e}");
            assert!(e.contains(": error: ") && !e.contains('\n'), "{text}: {e}");
        }
        let key = error(&format!("{} = 1\n", "K".repeat(1_000_000)));
        assert!(key.len() < 1000, "{}", key.len());
    }

    #[test]
    fn long_names_and_times_are_quoted_cut() {
        let name = "N".repeat(10_000_000);
        let s = Scenario::parse(
            "t.toml",
            &GUEST.replace("name = \"t\"", &format!("name = \"{name}\"")),
        )
        .map_err(|e| e.to_string());
        let Ok(s) = s else { panic!("{s:?}") };
        assert!(s.name.len() < 300, "{}", s.name.len());
        assert!(s.name.ends_with("bytes more)"), "{}", &s.name[190..]);
        let start = error(&format!(
            "[[phases]]\nstart = \"{}\"\n",
            "9".repeat(1_000_000)
        ));
        assert!(
            start.contains("is not a time") && start.len() < 1000,
            "{}",
            start.len()
        );
    }

    #[test]
    fn sizes_that_are_not_numbers_and_too_short_pulses_are_named() {
        // adv51: NaN was called negative, at the phase, and a pulse of
        // 1e-300 s was taken.
        let nan = error("[[phases]]\nstart = \"0\"\nworking_set_mib = nan\n");
        assert!(
            nan.starts_with("t.toml:7:19: error: ")
                && nan.contains("working_set_mib = NaN is not a number"),
            "{nan}"
        );
        let negative = error("[[phases]]\nstart = \"0\"\nshared_mib = -1\n");
        assert!(
            negative.contains("shared_mib = -1 is negative"),
            "{negative}"
        );
        for short in ["1e-300", "0.1"] {
            let e = error(&format!(
                "[[phases]]\nstart = \"0\"\npulse_period_s = {short}\n"
            ));
            assert!(e.contains("is shorter than 0.2 s"), "{short}: {e}");
        }
        for fine in ["0", "0.2", "30"] {
            let text = format!("{GUEST}[[phases]]\nstart = \"0\"\npulse_period_s = {fine}\n");
            assert!(Scenario::parse("t.toml", &text).is_ok(), "{fine}");
        }
    }
}
