//! What `plugtop tune` prints: the knobs found, a table of the Pareto
//! front like the seed paper's (the start and the reference beside it),
//! the recommended file as a unified diff, and the recommendation on other
//! seeds beside the training one.

use std::fmt::Write as _;

use super::Tuned;
use super::knobs::Knob;
use super::run::{Prepared, Said};
use super::score::{Score, front_by_cpus};

/// The most front rows shown (the fewest CPUs first).
const MAX_ROWS: usize = 12;

/// The width of the label column of the main table.
const LABEL: usize = 19;

/// The columns of a table row past its label: the figures and the flaps
/// mark (`FLAPS`), so a row with a [`LABEL`]-wide label is 80 wide.
const FIGURES: usize = 59;

fn row_at(out: &mut String, label: &str, s: &Score, width: usize) {
    if let Some(f) = &s.fatal {
        let _ = writeln!(out, "  {label:<width$} stops cpuplugd: {f}");
        return;
    }
    let _ = writeln!(
        out,
        "  {label:<width$} {:>7.1} {:>6.2} {:>7.2} {:>6} {:>6.1}% {:>4} {:>4} {:>4} {}",
        s.unmet_cpu_seconds,
        s.avg_online_cpus,
        s.guest_to_working_set,
        s.direct_scan_stalls,
        s.throughput_ratio * 100.0,
        s.cpu_changes,
        s.pool_changes,
        s.reversals,
        match (s.flapping, s.flaps_at_steady) {
            (true, _) => "FLAPS".to_string(),
            // Flaps at a steady load of this many threads.
            (false, Some(t)) => format!("@{t:.2}"),
            // Thresholds less than a CPU apart: it would flap between them.
            (false, None) if s.narrow => "<1CPU".to_string(),
            (false, None) => "no".to_string(),
        },
    );
}

fn header_at(out: &mut String, width: usize) {
    let heads = [
        ("unmet", "CPU-s", 7),
        ("CPUs", "avg", 6),
        ("guest/", "WS", 7),
        ("stalls", "", 6),
        ("thru-", "put", 7),
        ("CPU", "chg", 4),
        ("pool", "chg", 4),
        ("rev", "", 4),
        ("flaps", "", 0),
    ];
    for line in 0..2 {
        let mut text = format!("  {:<width$}", "");
        for (top, bottom, width) in heads {
            let word = if line == 0 { top } else { bottom };
            let _ = write!(text, " {word:>width$}");
        }
        let _ = writeln!(out, "{}", text.trim_end());
    }
}

/// The knobs, one a line, with where they are written and their range.
pub fn knobs_text(knobs: &[Knob]) -> String {
    use super::knobs::KnobKind;
    let mut out = String::new();
    for k in knobs {
        let kind = match k.kind {
            KnobKind::Threshold => "threshold",
            KnobKind::Percent => "threshold (% of a CPU)",
            KnobKind::Offset => "offset",
            KnobKind::CpuOffset => "offset (CPUs)",
            KnobKind::Divisor => "divisor",
            KnobKind::Limit(_) => "limit",
        };
        let _ = writeln!(
            out,
            "  {:>5}:{:<4} {:<12} {:>8}  {kind}, searched over {}..{}",
            k.line,
            k.column,
            k.owner,
            k.text(k.value),
            k.text(k.range.0),
            k.text(k.range.1)
        );
    }
    out
}

/// The table: start, reference, and the front spread over its range of
/// CPUs (one row per distinct outcome), the recommendation marked.
pub fn table(t: &Tuned, against: Option<&str>) -> String {
    let mut out = String::new();
    header_at(&mut out, LABEL);
    row_at(&mut out, "start", &t.candidates[0].1, LABEL);
    if let Some(name) = against {
        let full = format!("ref {}", crate::report::file_name(name));
        let label: String = if full.chars().count() > LABEL {
            full.chars().take(LABEL - 1).chain(['…']).collect()
        } else {
            full
        };
        row_at(&mut out, &label, &t.reference, LABEL);
    }
    let scores = t.front_scores();
    let mut front = front_by_cpus(&scores, None);
    // Candidates whose outcomes read the same in the table are one row.
    front.dedup_by(|a, b| row_text(scores[*a]) == row_text(scores[*b]));
    let mut listed: Vec<usize> = if front.len() <= MAX_ROWS {
        front.clone()
    } else {
        (0..MAX_ROWS)
            .map(|k| front[k * (front.len() - 1) / (MAX_ROWS - 1)])
            .collect()
    };
    if let Some(r) = t.recommended
        && !listed.contains(&r)
    {
        listed.push(r);
    }
    for i in listed {
        let label = if Some(i) == t.recommended {
            format!("★ recommended #{i}")
        } else {
            format!("front #{i}")
        };
        row_at(&mut out, &label, scores[i], LABEL);
    }
    if front.len() > MAX_ROWS {
        let _ = writeln!(
            out,
            "  ({} distinct outcomes on the front; --format json lists every one)",
            front.len()
        );
    }
    out
}

fn row_text(s: &Score) -> String {
    let mut out = String::new();
    row_at(&mut out, "", s, LABEL);
    out
}

/// A unified diff of two rule files: changed numbers, and the lines a form
/// put in or took out.
pub fn diff(old_name: &str, old: &[u8], new_name: &str, new: &[u8]) -> String {
    let old_text = String::from_utf8_lossy(old);
    let new_text = String::from_utf8_lossy(new);
    let a: Vec<&str> = old_text.split_inclusive('\n').collect();
    let b: Vec<&str> = new_text.split_inclusive('\n').collect();
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    let line = |out: &mut String, sign: char, l: &str| {
        out.push(sign);
        out.push_str(l);
        if !l.ends_with('\n') {
            out.push('\n');
        }
    };
    // Each run of changes between common lines is a hunk, with its place
    // in both files.
    use crate::report::line_diff::LineStep;
    let steps = crate::report::line_diff::steps(&a, &b);
    let mut k = 0;
    while k < steps.len() {
        if let LineStep::Same(..) = steps[k] {
            k += 1;
            continue;
        }
        let (mut gone, mut added) = (Vec::new(), Vec::new());
        let (mut at_a, mut at_b) = (None, None);
        while k < steps.len() {
            match steps[k] {
                LineStep::Same(..) => break,
                LineStep::Taken(i) => {
                    at_a.get_or_insert(i);
                    gone.push(a[i]);
                }
                LineStep::Put(j) => {
                    at_b.get_or_insert(j);
                    added.push(b[j]);
                }
            }
            k += 1;
        }
        // Where an empty side stands: after the common line before it.
        let before = |at: Option<usize>, k: usize, side_a: bool| {
            at.map_or_else(
                || {
                    steps[..k]
                        .iter()
                        .rev()
                        .find_map(|s| match s {
                            LineStep::Same(i, j) => Some(if side_a { *i + 1 } else { *j + 1 }),
                            _ => None,
                        })
                        .unwrap_or(0)
                },
                |x| x + 1,
            )
        };
        let _ = writeln!(
            out,
            "@@ -{},{} +{},{} @@",
            before(at_a, k, true),
            gone.len(),
            before(at_b, k, false),
            added.len()
        );
        for l in gone {
            line(&mut out, '-', l);
        }
        for l in added {
            line(&mut out, '+', l);
        }
    }
    out
}

/// The reference (called `reference`: the start, or the `--against` file)
/// and the recommendation on the portfolio: each built-in scenario a row,
/// the steady sweep one line.
pub fn portfolio_table(
    rows: &[super::PortfolioRow],
    reference: &str,
    columns: Option<usize>,
) -> String {
    let mut out = String::new();
    let labelled: Vec<(String, &super::PortfolioRow)> = rows
        .iter()
        .filter(|r| r.steady.is_none())
        .map(|r| (r.workload.clone(), r))
        .collect();
    let width = labelled
        .iter()
        .map(|(w, _)| w.chars().count() + "recommended ".len())
        .max()
        .unwrap_or(0)
        .max(LABEL);
    let table: Vec<(&str, &str, &Score)> = labelled
        .iter()
        .flat_map(|(w, r)| {
            [
                (reference, w.as_str(), &r.reference),
                ("recommended", w.as_str(), &r.recommended),
            ]
        })
        .collect();
    rows_by_workload(&mut out, &table, width, columns);
    let steady: Vec<&super::PortfolioRow> = rows.iter().filter(|r| r.steady.is_some()).collect();
    if !steady.is_empty() {
        let flaps = |s: &Score| s.flapping;
        let by = |pick: fn(&super::PortfolioRow) -> &Score| {
            steady.iter().filter(|r| flaps(pick(r))).count()
        };
        let _ = writeln!(
            out,
            "  steady loads {:.2} to {:.2} threads: flaps at {} of {} recommended, {} {reference}",
            steady.first().and_then(|r| r.steady).unwrap_or(0.0),
            steady.last().and_then(|r| r.steady).unwrap_or(0.0),
            by(|r| &r.recommended),
            steady.len(),
            by(|r| &r.reference),
        );
    }
    out
}

/// In words: what the recommendation changed, why it is safer than a file
/// tuned on the workload alone, and how it did on what it never saw.
pub fn summary(t: &Tuned, held: &[(String, String, Score)]) -> String {
    let mut out = String::new();
    let Some(i) = t.recommended else {
        if let Some((j, v)) = t.judged.first() {
            let _ = writeln!(
                out,
                "The best candidate on the workload (#{j}) {}; {} judged on the built-in scenarios \
                 and the steady loads, and none held up.",
                v.words(),
                match t.judged.len() {
                    1 => "it was the only one".to_string(),
                    n => format!("{n} of the best were"),
                }
            );
        }
        return out;
    };
    out.push_str(&changed_words(t, i));
    for note in &t.switched_off {
        let _ = writeln!(out, "Note: {note}.");
    }
    if let Some(words) = ties_words(t, i) {
        let _ = writeln!(out, "{words}");
    }
    if !t.portfolio.is_empty() {
        let pressure = t.portfolio.iter().filter(|r| r.pressure.is_some()).count();
        let steady = t.portfolio.iter().filter(|r| r.steady.is_some()).count();
        let scenarios = t.portfolio.len() - steady - pressure;
        let skipped = match t.standing {
            super::Standing::Beats => t.judged.len().saturating_sub(1),
            super::Standing::Ties { .. } => 0,
        };
        let _ = writeln!(
            out,
            "Safer: it flaps at none of {steady} steady loads and loses to the reference on none \
             of the {scenarios} other built-in scenarios{}{}.",
            if pressure > 0 {
                format!(" and {pressure} steady loads under memory pressure")
            } else {
                String::new()
            },
            if skipped > 0 {
                format!(
                    " ({skipped} candidate{} that did better on the workload alone did not hold up)",
                    if skipped == 1 { "" } else { "s" }
                )
            } else {
                String::new()
            }
        );
    }
    let (mut wins, mut losses, mut total) = (0, Vec::new(), 0);
    // Other seeds change only the scenario's jitter: shown, not counted.
    let mut workloads: Vec<&String> = held.iter().map(|x| &x.1).filter(|w| !is_seed(w)).collect();
    workloads.dedup();
    for w in workloads {
        let of = |file: &str| held.iter().find(|x| &x.1 == w && x.0 == file).map(|x| &x.2);
        let (Some(r), Some(c)) = (of("reference").or_else(|| of("start")), of("recommended"))
        else {
            continue;
        };
        total += 1;
        if super::robust::loses(c, r, t.objective, Default::default()).is_none() {
            wins += 1;
        } else {
            losses.push(w.clone());
        }
    }
    if total > 0 {
        let _ = writeln!(
            out,
            "Held out: it beats or ties the reference on {wins} of {total} workloads it never saw{}.",
            if losses.is_empty() {
                String::new()
            } else {
                format!("; it loses on {}", losses.join(", "))
            }
        );
    }
    out
}

/// What the recommendation `i` changed, in words: its form, or its numbers.
fn changed_words(t: &Tuned, i: usize) -> String {
    let mut out = String::new();
    let shape = t.shape(i);
    let changed: Vec<String> = shape
        .knobs
        .iter()
        .zip(&t.candidates[i].0)
        .filter(|(k, v)| k.text(**v) != k.text(k.value))
        .map(|(k, v)| format!("{} {} → {}", k.owner, k.text(k.value), k.text(*v)))
        .collect();
    match &shape.form {
        Some(form) => {
            let _ = writeln!(
                out,
                "Form changed: the {} form (from {}). {}",
                form.title(),
                form.origin,
                form.intent
            );
            if !changed.is_empty() {
                let _ = writeln!(
                    out,
                    "Its numbers moved from the form's defaults: {}.",
                    changed.join(", ")
                );
            }
            let _ = writeln!(out, "{}", form_wins(t, i, form));
        }
        // The start itself: its numbers as written.
        None if changed.is_empty() && (i == 0 || t.rounded_from == Some(0)) => {
            let _ = writeln!(
                out,
                "Changed: nothing: your file as written is the recommendation."
            );
        }
        None if changed.is_empty() => {
            let _ = writeln!(out, "Changed: nothing but digits.");
        }
        None => {
            let _ = writeln!(out, "Changed: {}.", changed.join(", "));
        }
    }
    out
}

/// How many candidates a tune ran, as `plugtop tune` and the screen's
/// tune box both say it, with the budget when it ran fewer: the budget is
/// a cap, its shares among the forms round down, and a candidate met twice
/// is run once (docs/tune.md). The recommendation rewritten in fewer
/// digits is recorded beside them and said apart, so the count never
/// passes the budget.
pub fn candidates_words(t: &Tuned) -> String {
    let rounded = usize::from(t.rounded_from.is_some());
    let n = t.candidates.len() - rounded;
    let mut words = if n >= t.budget {
        format!("{n} candidates")
    } else {
        format!("{n} candidates (budget {})", t.budget)
    };
    if rounded == 1 {
        words.push_str(" and the recommendation in fewer digits");
    }
    words
}

/// What the other seeds showed when on every one of them the start and
/// the recommendation changed CPUs and the pool as on the workload itself:
/// a seed moves only the demand's ±3% jitter, which no decision felt, so
/// those rows are no check of overfitting (and the held-out verdict does
/// not count them).
pub fn seeds_note(t: &Tuned, rows: &[(String, String, Score)]) -> Option<String> {
    let seeds: Vec<&(String, String, Score)> = rows.iter().filter(|(_, w, _)| is_seed(w)).collect();
    let trained = |file: &str| match file {
        "start" => Some(&t.candidates.first()?.1),
        "recommended" => Some(&t.candidates.get(t.recommended?)?.1),
        _ => None,
    };
    let alike = |a: &Score, b: &Score| {
        a.avg_online_cpus == b.avg_online_cpus
            && (a.cpu_changes, a.pool_changes, a.reversals)
                == (b.cpu_changes, b.pool_changes, b.reversals)
    };
    let all_alike = seeds
        .iter()
        .all(|(file, _, s)| trained(file).is_some_and(|at| alike(at, s)));
    if seeds.is_empty() || !all_alike {
        return None;
    }
    let mut names: Vec<&str> = seeds.iter().map(|(_, w, _)| w.as_str()).collect();
    names.dedup();
    Some(format!(
        "On the other seeds ({}) both files changed CPUs and the pool exactly as on the \
         workload: a seed moves only the demand's ±3% jitter, which no decision felt, so their \
         rows differ from the workload's by that jitter alone; they are shown, not counted as \
         held out.",
        names.join(", ")
    ))
}

/// Whether a held-out row's workload is another seed (`s2`), not a
/// workload of its own.
fn is_seed(workload: &str) -> bool {
    workload
        .strip_prefix('s')
        .is_some_and(|n| n.parse::<u64>().is_ok())
}

/// The start, the reference and the recommendation on what they were not
/// tuned on (other seeds, or a recording's second half).
pub fn seeds_table(rows: &[(String, String, Score)], columns: Option<usize>) -> String {
    let mut out = String::new();
    let width = rows
        .iter()
        .map(|(l, w, _)| l.chars().count() + 1 + w.chars().count())
        .max()
        .unwrap_or(0)
        .max(LABEL);
    let rows: Vec<(&str, &str, &Score)> = rows
        .iter()
        .map(|(l, w, s)| (l.as_str(), w.as_str(), s))
        .collect();
    rows_by_workload(&mut out, &rows, width, columns);
    out
}

/// Rows of (file, workload, score), each labelled `file workload` in a
/// column `width` wide; where that is wider than `columns` (a terminal
/// narrower than the table), each workload's name on a line of its own and
/// its files' rows under it, so every line fits.
fn rows_by_workload(
    out: &mut String,
    rows: &[(&str, &str, &Score)],
    width: usize,
    columns: Option<usize>,
) {
    if columns.is_none_or(|c| 2 + width + 1 + FIGURES <= c) {
        header_at(out, width);
        for (file, workload, s) in rows {
            row_at(out, &format!("{file} {workload}"), s, width);
        }
        return;
    }
    header_at(out, LABEL);
    let mut last: Option<&str> = None;
    for (file, workload, s) in rows {
        if last != Some(workload) {
            let _ = writeln!(out, "  {workload}:");
            last = Some(workload);
        }
        row_at(out, &format!("  {file}"), s, LABEL);
    }
}

/// For a recommendation that only ties the reference: that it does not
/// beat it, why, and how it does better than the user's file.
fn ties_words(t: &Tuned, i: usize) -> Option<String> {
    let super::Standing::Ties { judged_from } = t.standing else {
        return None;
    };
    let start = &t.candidates[0].1;
    let now = &t.candidates[i].1;
    // The objective's measure (a count of changes for steady).
    let (measure, digits) = match t.objective {
        super::score::Objective::Cpu => ("unmet CPU-s", 1),
        super::score::Objective::Steady => ("CPU or pool changes and reversals", 0),
        super::score::Objective::Memory => ("× the working set", 2),
    };
    let was = start.preference(t.objective).0;
    let is = now.preference(t.objective).0;
    Some(format!(
        "Ties, does not beat: no candidate that did better than the reference on the workload \
         held up elsewhere{}. This one is within 5% of the reference on the workload and on \
         every built-in scenario, and better than your file: {is:.digits$} {measure} against \
         {was:.digits$}.",
        match t.judged.first() {
            Some((j, v)) if judged_from > 0 => format!(" (the best, #{j}, {})", v.words()),
            _ => " (none did better on the workload)".to_string(),
        }
    ))
}

/// Why a tune recommends nothing, in words.
pub fn why_nothing(t: &Tuned) -> String {
    // As the tune counts better: beating the reference, and not dominated
    // by the start (more CPUs for nothing is not better).
    let start = t.candidates.first().map(|c| &c.1);
    let beat = (0..t.candidates.len())
        .filter(|&i| {
            let s = &t.candidates[i].1;
            super::robust::beats(s, &t.reference, t.objective)
                && !start.is_some_and(|st| st.dominates_beyond_noise(s))
        })
        .count();
    let mut out = if beat == 0 {
        format!(
            "none, because no candidate of {} did better than the current rules within what \
             the objective holds fixed, without flapping",
            t.candidates.len()
        )
    } else {
        // One of each outcome is judged, at most --judge of them.
        format!(
            "none, because none of the {} judged of the {beat} candidates that did better on \
             the workload held up on the built-in scenarios and the steady loads",
            t.judged.len()
        )
    };
    if let Some((j, v)) = t.judged.first() {
        let _ = write!(out, " (the best, #{j}, {})", v.words());
    }
    if beat > 0 {
        out.push_str(
            "; a front row can still be tried in `plugtop sim --compare`, or more of them \
             judged with `plugtop tune --judge N`",
        );
    }
    out
}

/// Why candidate `i` is not the recommendation, in words; `None` for the
/// recommendation itself.
pub fn why_not(t: &Tuned, i: usize) -> Option<String> {
    if Some(i) == t.recommended {
        return None;
    }
    let s = &t.candidates.get(i)?.1;
    if i == 0 {
        return Some("these are the rules as loaded".to_string());
    }
    if let Some(f) = &s.fatal {
        return Some(format!("cpuplugd would stop on it: {f}"));
    }
    if s.flapping {
        return Some("it flaps on the workload".to_string());
    }
    if let Some(load) = s.flaps_at_steady {
        return Some(format!("it flaps at a steady load of {load:.2} threads"));
    }
    if s.narrow {
        return Some("its plug and unplug thresholds lie less than a CPU apart".to_string());
    }
    if let Some((_, v)) = t.judged.iter().find(|(j, _)| *j == i) {
        return Some(format!("on the built-in scenarios it {}", v.words()));
    }
    let r = &t.reference;
    if !s.within(r, t.objective) {
        return Some(format!(
            "it uses more than the reference holds fixed: {:.2} CPUs on average against {:.2}, \
             a guest of {:.2} × its working set against {:.2}, {} stalls against {}",
            s.avg_online_cpus,
            r.avg_online_cpus,
            s.guest_to_working_set,
            r.guest_to_working_set,
            s.direct_scan_stalls,
            r.direct_scan_stalls
        ));
    }
    if !s.improves_on(r, t.objective) {
        return Some(format!(
            "it is no better than the reference by more than noise ({:.1} unmet CPU-s against \
             {:.1}, {} against {})",
            s.unmet_cpu_seconds,
            r.unmet_cpu_seconds,
            s.instability_words(),
            r.instability_words()
        ));
    }
    Some(match t.recommended {
        Some(k) => format!(
            "the recommendation ranks before it ({:.1} unmet CPU-s at {:.2} CPUs; this one {:.1} at {:.2}) and held up on the built-in scenarios",
            t.candidates[k].1.unmet_cpu_seconds,
            t.candidates[k].1.avg_online_cpus,
            s.unmet_cpu_seconds,
            s.avg_online_cpus
        ),
        None => "it was not among the best judged on the built-in scenarios".to_string(),
    })
}

/// What the recommendation costs against the start on the workload:
/// average and peak CPUs, memory, swap.
pub fn cost(start: &crate::sim::report::SimReport, now: &crate::sim::report::SimReport) -> String {
    let cpus = change(now.avg_online_cpus - start.avg_online_cpus);
    format!(
        "Cost against your file on the workload: {:.2} → {:.2} CPUs on average ({}), peak {} → {}; \
         guest memory {:.0} → {:.0} MiB on average; in swap {:.0} → {:.0} MiB on average, peak {:.0} → {:.0} MiB.",
        start.avg_online_cpus,
        now.avg_online_cpus,
        cpus,
        start.peak_online_cpus,
        now.peak_online_cpus,
        start.avg_guest_mib,
        now.avg_guest_mib,
        start.avg_swapped_mib,
        now.avg_swapped_mib,
        start.peak_swapped_mib,
        now.peak_swapped_mib,
    )
}

/// A change to two decimals with its sign; one that rounds to nothing is
/// `±0.00`, never `-0.00`.
fn change(d: f64) -> String {
    let text = format!("{d:+.2}");
    match text.as_str() {
        "+0.00" | "-0.00" => "±0.00".to_string(),
        _ => text,
    }
}

/// Why a recommendation of another form wins, in figures: the form the
/// user's file has (when it has a known one), and the workload and the
/// built-in scenario where it gains most against the reference.
fn form_wins(t: &Tuned, i: usize, form: &super::forms::FormUse) -> String {
    let mut out = String::new();
    let group_of = |name: &str| name.split('-').next().unwrap_or("").to_string();
    let was: Vec<super::forms::FormUse> =
        super::forms::matching(&t.shapes[0].file, &super::forms::built_in())
            .into_iter()
            .filter(|f| group_of(&f.name) == group_of(&form.name))
            .collect();
    match was.first() {
        Some(w) if w.title() == form.title() => {
            let _ = write!(
                out,
                "Your file has this form already; the tune moved its numbers. "
            );
        }
        Some(w) => {
            let _ = write!(out, "Your file has the {} form. ", w.title());
        }
        // `plugtop check` may name the file's form of the other group.
        None => {
            let group = group_of(&form.name);
            let _ = write!(
                out,
                "Your file's {} rules have a form of their own (no built-in {group}- form). ",
                if group == "cpu" { "CPU" } else { "memory" }
            );
        }
    }
    let (s, r) = (&t.candidates[i].1, &t.reference);
    let _ = write!(
        out,
        "Why it wins: on the workload {:.1} unmet CPU-s against the reference's {:.1}, at {:.2} CPUs against {:.2}, with {} against {}",
        s.unmet_cpu_seconds,
        r.unmet_cpu_seconds,
        s.avg_online_cpus,
        r.avg_online_cpus,
        s.instability_words(),
        r.instability_words()
    );
    let gain = |row: &super::PortfolioRow| match t.objective {
        super::score::Objective::Memory => {
            row.reference.guest_to_working_set - row.recommended.guest_to_working_set
        }
        _ => row.reference.unmet_cpu_seconds - row.recommended.unmet_cpu_seconds,
    };
    let best = t
        .portfolio
        .iter()
        .filter(|r| r.steady.is_none() && r.pressure.is_none())
        .filter(|r| gain(r).is_finite())
        .max_by(|a, b| gain(a).total_cmp(&gain(b)));
    if let Some(row) = best.filter(|r| gain(r) > 0.0) {
        let _ = write!(
            out,
            "; on {}, where it gains most, {}",
            row.workload,
            match t.objective {
                super::score::Objective::Memory => format!(
                    "a guest of {:.2} × its working set against {:.2}",
                    row.recommended.guest_to_working_set, row.reference.guest_to_working_set
                ),
                _ => format!(
                    "{:.1} unmet CPU-s against {:.1}",
                    row.recommended.unmet_cpu_seconds, row.reference.unmet_cpu_seconds
                ),
            }
        );
    }
    out.push('.');
    out
}

/// Failing test from the r40 review.
/// The report of `plugtop tune` as text: the knobs, the table, and the
/// recommendation as a diff with how it did elsewhere, or why there is
/// none. Narrow (the default), prose wraps at the terminal's width (80
/// into a file or a pipe) and a table wider than that puts each workload's
/// name on a line of its own; wide, every line is as long as it gets. The
/// diff stays as it is in both.
pub fn text(
    out: &mut dyn std::io::Write,
    p: &Prepared,
    t: &Tuned,
    said: &Said,
    layout: crate::report::Layout,
) -> std::io::Result<()> {
    let columns = layout.width();
    // Each text a line (or lines) of its own, wrapped only when narrow.
    let say = |out: &mut dyn std::io::Write, text: &str| {
        writeln!(out, "{}", layout.prose(text).trim_end_matches('\n'))
    };
    // Without --against the file judged against is the start.
    let reference = if p.reference.is_some() {
        "reference"
    } else {
        "start"
    };
    let file = &p.file;
    say(out, &format!("knobs of {}:", file.name()))?;
    write!(out, "{}", knobs_text(&t.knobs))?;
    let forms = t.shapes.len() - 1;
    let tried = t
        .shape_of
        .iter()
        .filter(|s| **s > 0)
        .collect::<std::collections::HashSet<_>>()
        .len();
    let variants = match forms {
        0 => String::new(),
        _ if tried == forms => {
            format!(", the file's own numbers and {forms} variants of the rule forms")
        }
        _ => format!(
            ", the file's own numbers and {tried} of {forms} variants of the rule forms (the budget reached no more)"
        ),
    };
    let words = candidates_words(t);
    say(
        out,
        &format!(
            "\n{words} on {} (seed {}){variants}:",
            p.source_name, p.asked.seed
        ),
    )?;
    let against = p.asked.against.as_ref().map(|a| a.display().to_string());
    write!(out, "{}", table(t, against.as_deref()))?;
    let Some(bytes) = &said.recommended else {
        let why = why_nothing(t);
        let wanted = p.options.objective.wanted();
        return say(
            out,
            &format!("\nrecommended: {why} ({wanted}); the front above shows the trade-off"),
        );
    };
    if let super::Standing::Ties { .. } = t.standing {
        say(
            out,
            &format!(
                "\nno candidate did better than the reference and held up elsewhere; the \
             best that ties it everywhere and does better than {} is recommended",
                file.name()
            ),
        )?;
    }
    say(
        out,
        &format!("\nrecommended, as a diff against {}:", file.name()),
    )?;
    write!(
        out,
        "{}",
        diff(file.name(), file.bytes(), "recommended", bytes)
    )?;
    if !t.portfolio.is_empty() {
        say(
            out,
            "\non the built-in scenarios and the steady loads (checked before recommending):",
        )?;
        write!(out, "{}", portfolio_table(&t.portfolio, reference, columns))?;
    }
    say(
        out,
        "\non what it was never tuned or checked on (other seeds, a recording's second \
         half, the built-in scenarios lighter and heavier):",
    )?;
    write!(out, "{}", seeds_table(&said.seeds, columns))?;
    let notes = [
        seeds_note(t, &said.seeds),
        super::recorded::second_half_verdict(&said.seeds, p.options.objective),
        Some(format!("\n{}", summary(t, &said.seeds))),
        said.cost.as_ref().map(|(start, now)| cost(start, now)),
    ];
    for note in notes.iter().flatten() {
        say(out, note)?;
    }
    Ok(())
}

/// The report of `plugtop tune` as JSON.
pub fn json(p: &Prepared, t: &Tuned, said: &Said) -> serde_json::Value {
    use serde_json::json;
    let file = &p.file;
    let front = super::score::pareto_front(&t.front_scores());
    let knobs: Vec<_> = t
        .knobs
        .iter()
        .map(|k| {
            json!({
                "name": k.name(), "owner": k.owner, "line": k.line, "column": k.column,
                "value": k.value, "range": [k.range.0, k.range.1], "integer": k.integer,
            })
        })
        .collect();
    let candidate = |i: usize| json!({"index": i, "values": t.candidates[i].0, "score": t.candidates[i].1, "form": t.form_of(i).map(|f| f.title())});
    let run = |r: &crate::sim::report::SimReport| json!({"avg_cpus": r.avg_online_cpus, "peak_cpus": r.peak_online_cpus, "avg_guest_mib": r.avg_guest_mib, "avg_swapped_mib": r.avg_swapped_mib, "peak_swapped_mib": r.peak_swapped_mib});
    json!({
        "rules": file.name(),
        "knobs": knobs,
        "candidates": t.candidates.len(),
        "start": t.candidates[0].1,
        "reference": t.reference,
        "front": front.iter().map(|&i| candidate(i)).collect::<Vec<_>>(),
        "recommended": t.recommended.map(candidate),
        "recommended_form": t.recommended.and_then(|i| t.form_of(i)),
        "rounded_from": t.rounded_from,
        "cost": said.cost.as_ref().map(|(start, now)| json!({"start": run(start), "recommended": run(now)})),
        "forms_searched": t.shapes.iter().enumerate().skip(1).map(|(k, shape)| json!({
            "form": shape.form.as_ref().map(|f| f.title()),
            "origin": shape.form.as_ref().map(|f| f.origin.clone()),
            "candidates": t.shape_of.iter().filter(|s| **s == k).count(),
        })).collect::<Vec<_>>(),
        "standing": t.recommended.map(|_| match t.standing {
            super::Standing::Beats => "beats",
            super::Standing::Ties { .. } => "ties",
        }),
        "recommended_diff": said.recommended.as_ref().map(|b| diff(file.name(), file.bytes(), "recommended", b)),
        "judged": t.judged.iter().map(|(i, v)| json!({
            "index": i,
            "form": t.form_of(*i).map(|f| f.title()),
            "score": t.candidates[*i].1,
            "verdict": v.words(),
        })).collect::<Vec<_>>(),
        "portfolio": t.portfolio,
        "held_out": said.seeds.iter().map(|(l, s, sc)| json!({"file": l, "workload": s, "score": sc})).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod diff_review {
    /// Past 2,000 lines the diff paired line i with line i: one line put
    /// on top (a form's comment) made every line after it a hunk, and the
    /// lines past the shorter file were left out.
    #[test]
    fn a_long_file_with_one_line_put_on_top_is_one_hunk() {
        let old: String = (0..2100).map(|i| format!("# c{i}\n")).collect();
        let new = format!("# plugtop tune\n{old}");
        let d = super::diff("old", old.as_bytes(), "new", new.as_bytes());
        assert_eq!(d.matches("\n@@ ").count(), 1, "{}", &d[..d.len().min(400)]);
    }
}

#[cfg(test)]
mod change_review {
    /// Issue 45: `2.70 → 2.70 CPUs on average (-0.00)`.
    #[test]
    fn a_change_that_rounds_to_nothing_has_no_sign() {
        assert_eq!(super::change(-0.0006), "±0.00");
        assert_eq!(super::change(0.004), "±0.00");
        assert_eq!(super::change(-0.25), "-0.25");
        assert_eq!(super::change(1.531), "+1.53");
    }
}

#[cfg(test)]
mod narrow_review {
    use super::*;
    use crate::tui::view::fit::cols;

    /// Issue 45: the held-out table's `recommended kernel-compile heavier`
    /// labels made it 100 wide; in a terminal narrower than that each
    /// workload gets a line of its own and every line fits.
    #[test]
    fn a_table_wider_than_the_terminal_puts_each_workload_on_a_line_of_its_own() {
        let s = Score::refused("x".into());
        let rows: Vec<(String, String, Score)> = ["start", "recommended"]
            .iter()
            .map(|f| {
                (
                    f.to_string(),
                    "kernel-compile heavier".to_string(),
                    s.clone(),
                )
            })
            .collect();
        let wide = seeds_table(&rows, None);
        assert!(
            wide.contains("  recommended kernel-compile heavier "),
            "{wide}"
        );
        let narrow = seeds_table(&rows, Some(80));
        assert!(
            narrow.contains("\n  kernel-compile heavier:\n    start "),
            "{narrow}"
        );
        assert!(narrow.lines().all(|l| l.chars().count() <= 80), "{narrow}");
        assert_eq!(seeds_table(&rows, Some(200)), wide);
    }

    /// The built-in scenarios' table names the file judged against as the
    /// other tables do (`start` without `--against`) and fits 80 columns
    /// with the longest workload names, which used to make it 95 wide.
    #[test]
    fn the_portfolio_table_fits_80_columns_and_names_the_start_as_start() {
        // The README's own example's widest row.
        let score = Score {
            unmet_cpu_seconds: 1245.8,
            avg_online_cpus: 5.8,
            guest_to_working_set: 3.05,
            direct_scan_stalls: 0,
            throughput_ratio: 0.682,
            cpu_changes: 38,
            reversals: 25,
            flapping: true,
            ..Score::WORST
        };
        let row = |workload: &str, steady: Option<f64>| super::super::PortfolioRow {
            workload: workload.to_string(),
            steady,
            pressure: None,
            reference: score.clone(),
            recommended: score.clone(),
        };
        let rows = [
            row("kernel-compile at 140%", None),
            row("steady 0.10", Some(0.1)),
            row("steady 3.90", Some(3.9)),
        ];
        let narrow = portfolio_table(&rows, "start", Some(80));
        assert!(narrow.lines().all(|l| cols(l) <= 80), "{narrow}");
        assert!(
            narrow.contains("\n  kernel-compile at 140%:\n    start "),
            "{narrow}"
        );
        assert!(
            narrow.contains("flaps at 2 of 2 recommended, 2 start"),
            "{narrow}"
        );
        assert!(!narrow.contains("reference"), "{narrow}");
        let wide = portfolio_table(&rows, "reference", None);
        assert!(
            wide.contains("  reference kernel-compile at 140%"),
            "{wide}"
        );
        assert!(wide.lines().any(|l| cols(l) > 80), "{wide}");
    }
}
