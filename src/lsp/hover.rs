//! Hover: what a name means to cpuplugd, a variable's full expansion, and,
//! when the root has readings, the live value now: a reading's, a
//! variable's as the engine computes it, a rule's verdict with its reason
//! in the screen's words.

use crate::kernel::Sample;
use crate::kernel::live::wall_clock;
use crate::kernel::root::RootReader;
use crate::rules::expr::CpuStat;
use crate::rules::{Assigned, RuleKind};

use super::live::Live;
use super::names::{Occurrence, predefined};

/// The longest expansion shown (a variable can expand to megabytes).
const MAX_EXPANSION: usize = 2000;

/// What a setting or rule name means (`HOTPLUG: rule; ...`), empty for
/// any other name.
pub fn setting_doc(name: &str) -> String {
    Assigned::by_file_name(name)
        .map(|a| format!("{name}: {}", a.doc()))
        .unwrap_or_default()
}

/// What a keyword without a prefix means.
fn keyword_doc(name: &str) -> Option<String> {
    let share = |what: &str| {
        format!(
            "`{name}`: the share of the last interval spent {what}, in percent of one CPU, summed over online CPUs (0 to 100 × onumcpus). Needs history depth 1."
        )
    };
    Some(match name {
        "loadavg" => "`loadavg`: the 1-minute load average, the first field of /proc/loadavg.".into(),
        "runnable_proc" => "`runnable_proc`: runnable processes, the number before `/` in the fourth field of /proc/loadavg.".into(),
        "onumcpus" => "`onumcpus`: how many CPUs are online now (/sys/devices/system/cpu/online).".into(),
        "user" | "nice" | "system" | "idle" | "iowait" | "irq" | "softirq" | "steal" | "guest" | "guest_nice" => {
            share(&format!("in `{name}` ticks"))
        }
        "swaprate" => "`swaprate`: pages swapped in and out per second over the last interval (vmstat pswpin + pswpout).".into(),
        "apcr" => "`apcr`: pages paged in and out per second over the last interval (vmstat pgpgin + pgpgout).".into(),
        "freemem" => "`freemem`: free memory in MB (meminfo.MemFree / 1024).".into(),
        "time" => "`time[n]`: the wall-clock time of the reading n intervals ago, in seconds.".into(),
        _ => return None,
    })
}

/// The word around byte `offset`: letters, digits, `_`, `.`, and a
/// history index right after it.
pub fn word_at(text: &str, offset: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let part = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
    let offset = offset.min(bytes.len());
    let mut s = offset;
    while s > 0 && part(bytes[s - 1]) {
        s -= 1;
    }
    let mut e = offset;
    while e < bytes.len() && part(bytes[e]) {
        e += 1;
    }
    if bytes.get(e) == Some(&b'[')
        && let Some(close) = text[e..].find(']')
        && close <= 5
    {
        e += close + 1;
    }
    (s < e).then_some((s, e))
}

/// Splits `cpustat.idle[2]` into ("cpustat", "idle", 2).
fn reading(word: &str) -> (Option<&str>, &str, u32) {
    let (base, index) = match word.split_once('[') {
        Some((b, i)) => (b, i.trim_end_matches(']').parse().unwrap_or(0)),
        None => (word, 0),
    };
    match base.split_once('.') {
        Some((p, f)) => (Some(p), f, index),
        None => (None, base, index),
    }
}

/// The value of `prefix.field` in `sample`.
fn reading_value(sample: &Sample, prefix: Option<&str>, field: &str) -> Option<f64> {
    match (prefix, field) {
        (Some("meminfo"), f) => sample.meminfo.get(f),
        (Some("vmstat"), f) => sample.vmstat.get(f),
        (Some("cpustat") | None, "onumcpus") => Some(f64::from(sample.online.count)),
        (Some("cpustat") | None, "loadavg") => Some(sample.loadavg),
        (Some("cpustat") | None, "runnable_proc") => Some(sample.runnable),
        (Some("cpustat"), "total_ticks") => Some(sample.ticks.total() as f64),
        (Some("cpustat"), f) => {
            let i = CpuStat::ALL.iter().position(|s| s.name() == f)?;
            // The ten tick columns follow onumcpus, loadavg, runnable_proc.
            sample
                .ticks
                .columns()
                .get(i.checked_sub(3)?)
                .map(|v| *v as f64)
        }
        (None, "time") => Some(sample.stamp.seconds()),
        (None, "freemem") => sample.meminfo.get("MemFree").map(|v| v / 1024.0),
        _ => None,
    }
}

/// What a predefined reading (`cpustat.idle[1]`, `meminfo.MemFree`) means.
fn reading_doc(prefix: Option<&str>, field: &str, index: u32) -> Option<String> {
    let ago = match index {
        0 => "now (this interval's reading)".to_string(),
        1 => "one interval ago".to_string(),
        n => format!("{n} intervals ago"),
    };
    let depth = if index > crate::rules::config::MAX_HISTORY {
        format!(
            " cpuplugd keeps at most {} intervals of history: it refuses the file.",
            crate::rules::config::MAX_HISTORY
        )
    } else if index > 0 {
        format!(
            " Implies a history depth of at least {index}: cpuplugd decides only once it has \
             {} readings.",
            index + 1
        )
    } else {
        String::new()
    };
    let what = match prefix? {
        "cpustat" if field == "total_ticks" => {
            "the sum of the ten tick columns of the aggregate `cpu` line of /proc/stat".to_string()
        }
        "cpustat" if CpuStat::from_name(field).is_some() => match field {
            "onumcpus" | "loadavg" | "runnable_proc" => keyword_doc(field)?,
            _ => format!(
                "`{field}` ticks of the aggregate `cpu` line of /proc/stat, summed over online CPUs"
            ),
        },
        "cpustat" => return Some(format!("`cpustat.{field}` is not a field cpuplugd knows")),
        "meminfo" => format!(
            "the `{field}:` line of /proc/meminfo, in kB (case-sensitive; a missing name stops cpuplugd when evaluated)"
        ),
        "vmstat" => format!(
            "the `{field}` line of /proc/vmstat (case-sensitive; a missing name stops cpuplugd when evaluated)"
        ),
        _ => return None,
    };
    Some(format!(
        "`{}.{field}[{index}]`: {what}, {ago}.{depth}",
        prefix?
    ))
}

/// A variable's text with every variable it names expanded in
/// parentheses, as cpuplugd inlines them (cut at [`MAX_EXPANSION`]).
pub fn expansion(text: &str, occurrences: &[Occurrence], name: &str, depth: u32) -> String {
    let Some(def) = occurrences.iter().find(|o| o.definition && o.name == name) else {
        return name.to_string();
    };
    let Some((s, e)) = super::names::lines(&text[def.start..])
        .next()
        .and_then(|l| l.value)
    else {
        return String::new();
    };
    let (s, e) = (def.start + s, def.start + e);
    if depth > 16 {
        return "…".into();
    }
    let mut out = String::new();
    let mut at = s;
    for o in occurrences
        .iter()
        .filter(|o| !o.definition && o.start >= s && o.end <= e)
    {
        out.push_str(&text[at..o.start]);
        out.push('(');
        out.push_str(&expansion(text, occurrences, &o.name, depth + 1));
        out.push(')');
        at = o.end;
        if out.len() > MAX_EXPANSION {
            return format!("{}…", out.chars().take(MAX_EXPANSION).collect::<String>());
        }
    }
    out.push_str(&text[at..e]);
    out.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The hover text at byte `offset` of `text` (open as `uri`), or `None`
/// for nothing known.
pub fn hover(text: &str, offset: usize, live: &Live, uri: &str) -> Option<String> {
    if super::names::in_comment(text, offset) {
        return None;
    }
    let occurrences = super::names::occurrences(text);
    if let Some(o) = super::names::at(&occurrences, offset) {
        let line = text[..o.start].matches('\n').count() + 1;
        let def = occurrences
            .iter()
            .find(|d| d.definition && d.name == o.name)
            .map(|d| text[..d.start].matches('\n').count() + 1)
            .unwrap_or(line);
        let full = expansion(text, &occurrences, &o.name, 0);
        let now = live
            .variable(uri, &o.name)
            .map(|v| format!("\n\nnow under {}: {v}", live.root().display()))
            .unwrap_or_default();
        return Some(format!(
            "user variable `{}` (defined on line {def})\n\nexpands to: `{full}`{now}",
            o.name
        ));
    }
    let (s, e) = word_at(text, offset)?;
    let word = &text[s..e];
    if let Some(p) = predefined(word) {
        let line_start = text[..s].rfind('\n').map_or(0, |i| i + 1);
        if !text[line_start..s].contains('=') {
            let verdict = RuleKind::ALL
                .into_iter()
                .find(|k| k.file_name() == p)
                .and_then(|k| live.rule(uri, k))
                .map(|v| format!("\n\nnow under {}: {v}", live.root().display()))
                .unwrap_or_default();
            return Some(format!("{}{verdict}", setting_doc(p)));
        }
    }
    let (prefix, field, index) = reading(word);
    let doc = match prefix {
        Some(_) => reading_doc(prefix, field, index)?,
        None => keyword_doc(field)?,
    };
    let root = live.root();
    // The newest live reading, or one taken now for a file that does not
    // load (no readings are kept for it).
    let now = match live.latest() {
        Some(sample) => reading_value(sample, prefix, field),
        None => RootReader::new()
            .read(root, wall_clock())
            .ok()
            .and_then(|sample| reading_value(&sample, prefix, field)),
    };
    Some(match now {
        // The newest reading is what a hover shows: an older index shows
        // what the kernel reads now, and says so.
        Some(v) if index > 0 => format!(
            "{doc}\n\nnow under {} (this interval's reading, not the one {index} ago): {v}",
            root.display()
        ),
        Some(v) => format!("{doc}\n\nnow under {}: {v}", root.display()),
        None => doc,
    })
}
