//! `plugtop tune`: the command around [`plugtop::tune`] — reading the
//! workload and the rules, the `--knob` narrowing, progress, the table, the
//! diff, the other seeds, and `--write`.

use std::ffi::{OsStr, OsString};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context;

use crate::cli::{CheckFormat, TuneArgs};
use plugtop::commands::Status;
use plugtop::kernel::fs::{FsError, Placing, Replace, Root};
use plugtop::rules::SourceFile;
use plugtop::sim::report::SimReport;
use plugtop::tune::knobs::Knob;
use plugtop::tune::narrow;
use plugtop::tune::{TuneOptions, Tuned, Workload, report};

/// Seeds the recommendation is tried on besides the scenario's own.
const OTHER_SEEDS: u64 = 3;

/// Carries out `plugtop tune`.
pub fn run(args: TuneArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    // Before any work: a tune that cannot save its result is refused now.
    let target = args.write.as_deref().map(write_target).transpose()?;
    let Chosen {
        scenario,
        name: source_name,
        old_kernel,
        held_out: held,
    } = workload_of(&args)?;
    let duration = duration_of(args.duration.as_deref())?;
    let workload = Workload {
        scenario,
        old_kernel,
        duration,
    };
    let facts = workload.facts();
    let (rules, file) = plugtop::rules::load_path(&args.config, &facts).map_err(|e| {
        // The hint only where a /proc/vmstat name is what failed.
        let text = plugtop::error_chain::text(&e);
        let hint = !args.old_kernel && text.contains("vmstat");
        anyhow::anyhow!(
            "{text}{}",
            if hint {
                "\n(the seed paper's files need --old-kernel)"
            } else {
                ""
            }
        )
    })?;
    let reference = match &args.against {
        Some(p) => Some(
            plugtop::commands::eval::read_rule_file(p)
                .with_context(|| format!("cannot read {}", p.display()))?,
        ),
        None => None,
    };
    let options = options_of(&args, &workload)?;
    let found = knobs_of(
        &args,
        &rules,
        &file,
        &workload,
        options.objective,
        &facts,
        !options.forms.is_empty(),
    )?;
    refuse_missing_symbols(&args, &file, &workload, &facts, &options)?;
    if let Some(hint) = objective_hint(&rules, options.objective) {
        eprintln!("plugtop: {}: {hint}", file.name());
    }
    let done = AtomicUsize::new(0);
    let finished = std::sync::atomic::AtomicBool::new(false);
    let tuned = std::thread::scope(|scope| {
        if std::io::stderr().is_terminal() {
            scope.spawn(|| progress(&done, options.budget, &finished));
        }
        let t = plugtop::tune::tune(
            &file,
            found.clone(),
            &workload,
            reference.as_ref(),
            &options,
            &done,
            &std::sync::atomic::AtomicBool::new(false),
        );
        finished.store(true, Ordering::Relaxed);
        t
    });
    for note in &tuned.form_notes {
        eprintln!("plugtop: {}", plugtop::report::terminal_safe(note));
    }
    let held = held_out(held, &workload, options.portfolio);
    let seeds = held_out_rows(&tuned, &file, &held, reference.as_ref());
    let recommended_text = tuned.recommended.map(|i| rewritten(&tuned, i));
    let cost = tuned.recommended.and_then(|i| {
        let start = workload.report(&file, &facts).ok()?;
        let now = workload.report(&tuned.file_of(i), &facts).ok()?;
        Some((start, now))
    });
    let said = Said {
        recommended: recommended_text.as_deref(),
        seeds: &seeds,
        cost: cost.as_ref(),
    };
    match args.format {
        CheckFormat::Text => text(
            &mut plugtop::report::TerminalText::new(&mut *out),
            &args,
            &source_name,
            &file,
            &tuned,
            &said,
        )?,
        CheckFormat::Json => json(out, &file, &tuned, &said)?,
    }
    write_if_recommended(&args, target.as_ref(), &source_name, &tuned, &facts)?;
    Ok(if tuned.recommended.is_some() {
        Status::Ok
    } else {
        Status::Failed
    })
}

/// `--write`: the recommendation written to the target checked before the
/// search, or why nothing was.
fn write_if_recommended(
    args: &TuneArgs,
    target: Option<&(Root, OsString)>,
    source_name: &str,
    tuned: &Tuned,
    facts: &plugtop::rules::SystemFacts,
) -> anyhow::Result<()> {
    if let (Some(path), None) = (&args.write, tuned.recommended) {
        eprintln!(
            "plugtop: nothing recommended, so nothing written to {}",
            plugtop::report::terminal_safe(&path.display().to_string())
        );
    }
    if let (Some((dir, name)), Some(path), Some(i)) = (target, &args.write, tuned.recommended) {
        write_new(dir, name, &as_written(args, source_name, tuned, i), facts)?;
        eprintln!(
            "plugtop: wrote {} (cpuplugd would load it)",
            plugtop::report::terminal_safe(&path.display().to_string())
        );
    }
    Ok(())
}

/// `--duration`, seconds: a duration of more than 0, or none.
fn duration_of(text: Option<&str>) -> anyhow::Result<Option<f64>> {
    let Some(d) = text else {
        return Ok(None);
    };
    let s = plugtop::sim::scenario::seconds(d).with_context(|| {
        format!("--duration {d:?} is not a duration like 1h, 15m, 90s or 12:00")
    })?;
    if s <= 0.0 {
        anyhow::bail!("--duration {d:?}: a run must last longer than 0 s");
    }
    Ok(Some(s))
}

/// The knobs to search (none is an error only when no form is searched
/// either): those of the file, each `--knob` applied (refused
/// with the knob's valid range when it cannot take it), a run long enough
/// for the longest UPDATE tried, and those left with a single value that
/// is the file's own dropped.
fn knobs_of(
    args: &TuneArgs,
    rules: &plugtop::rules::RuleSet,
    file: &SourceFile,
    workload: &Workload,
    objective: plugtop::tune::score::Objective,
    facts: &plugtop::rules::SystemFacts,
    forms: bool,
) -> anyhow::Result<Vec<Knob>> {
    let present = facts
        .present_cpus
        .as_ref()
        .map_or_else(|_| rules.settings.cpu_max.max(1) as u32, |n| *n);
    let found = plugtop::tune::narrow::chosen(rules, file, &args.knob, present, objective)?;
    let seconds = workload
        .duration
        .or_else(|| plugtop::sim::scenario::seconds(&workload.scenario.duration));
    if let Some(seconds) = seconds {
        let update = (rules.settings.update > 0).then_some(rules.settings.update as f64);
        narrow::check_duration(&found, update, seconds)?;
        narrow::check_decides(&found, update, rules.history_depth, seconds)?;
    }
    let found: Vec<Knob> = found
        .into_iter()
        .filter(|k| k.range.0 < k.range.1 || k.value != k.range.0)
        .collect();
    // A file without a number to move is still tuned through the forms.
    if found.is_empty() && !forms {
        anyhow::bail!(
            "{} has no numbers to tune{}",
            args.config.display(),
            if objective == plugtop::tune::score::Objective::Memory {
                " for --objective memory (it tunes the memory rules; name a CPU knob with --knob to tune it too)"
            } else {
                ""
            }
        );
    }
    Ok(found)
}

/// Refuses, before any search, a file that names a /proc value the
/// simulated kernel does not have: cpuplugd stops at its first interval,
/// and no number the tune could change brings the value back. A form can
/// (it replaces the rule that names it): with `forms` (memory forms are
/// searched), that is said and the search goes on.
fn refuse_missing_symbols(
    args: &TuneArgs,
    file: &SourceFile,
    workload: &Workload,
    facts: &plugtop::rules::SystemFacts,
    options: &TuneOptions,
) -> anyhow::Result<()> {
    // Memory forms replace the memory rules, which are what names /proc
    // fields a kernel may lack.
    let forms =
        !options.forms.is_empty() && options.objective == plugtop::tune::score::Objective::Memory;
    let start = workload.score(file, facts);
    match start.fatal {
        Some(why) if forms && why.starts_with("Symbol ") && why.contains("not found") => {
            eprintln!(
                "plugtop: {}: cpuplugd would stop at its first interval on this workload ({}); only a form that replaces that rule can help",
                plugtop::report::terminal_safe(&args.config.display().to_string()),
                plugtop::report::terminal_safe(&why)
            );
            Ok(())
        }
        Some(why) if why.starts_with("Symbol ") && why.contains("not found") => {
            anyhow::bail!(
                "{}: cpuplugd would stop at its first interval on this workload: {}{}",
                args.config.display(),
                plugtop::report::terminal_safe(&why),
                if args.old_kernel {
                    ""
                } else {
                    "\n(the seed paper's files need --old-kernel)"
                }
            )
        }
        _ => Ok(()),
    }
}

/// What `--objective` asks to improve.
fn objective(args: &TuneArgs) -> plugtop::tune::score::Objective {
    match args.objective {
        crate::cli::TuneObjective::Cpu => plugtop::tune::score::Objective::Cpu,
        crate::cli::TuneObjective::Memory => plugtop::tune::score::Objective::Memory,
        crate::cli::TuneObjective::Steady => plugtop::tune::score::Objective::Steady,
    }
}

/// The search's settings from the command line: the forms of
/// `--forms` beside the shipped ones, none with `--only-thresholds`.
fn options_of(args: &TuneArgs, workload: &Workload) -> anyhow::Result<TuneOptions> {
    let mut options = TuneOptions::defaults(workload);
    options.objective = objective(args);
    if let Some(b) = args.budget {
        options.budget = b as usize;
    }
    if let Some(j) = args.judge {
        options.judged = j as usize;
    }
    options.seed = args.seed;
    if let Some(t) = args.threads {
        options.threads = t as usize;
    }
    options.portfolio = !args.only_workload;
    options.knob_specs = args.knob.clone();
    if let Some(dir) = &args.forms {
        options.forms.extend(plugtop::tune::forms::load_dir(dir)?);
    }
    // A knob narrowed by its rule, variable or place is a number of this
    // file: the user asked for its numbers, so no form replaces them.
    let limit = |spec: &String| {
        let name = spec.split('=').next().unwrap_or("").trim();
        plugtop::rules::Setting::TUNED
            .iter()
            .any(|l| name.eq_ignore_ascii_case(l.file_name()))
    };
    if let Some(spec) = args.knob.iter().find(|s| !limit(s))
        && !args.only_thresholds
        && !options.forms.is_empty()
    {
        eprintln!(
            "plugtop: --knob {}: a number of the file is narrowed, so only the file's own form is searched (as with --only-thresholds)",
            plugtop::report::terminal_safe(spec)
        );
        options.forms.clear();
    }
    if args.only_thresholds {
        options.forms.clear();
    }
    Ok(options)
}

/// What the rules are tuned on, and what is held out to check them on.
struct Chosen {
    scenario: plugtop::sim::Scenario,
    name: String,
    old_kernel: bool,
    held_out: HeldOut,
}

/// What the recommendation is checked on besides what it was tuned on.
enum HeldOut {
    /// Other seeds of the scenario.
    Seeds,
    /// The recording's second half.
    SecondHalf(plugtop::sim::Scenario),
    /// Nothing (`--whole`).
    Nothing,
}

/// The scenario to play: the file given, or the recording turned into
/// one (read once; said on stderr, with how much of its demand was
/// censored) and cut in halves unless `--whole`.
fn workload_of(args: &TuneArgs) -> anyhow::Result<Chosen> {
    if let Some(path) = &args.replay {
        let recorded = plugtop::tune::recorded::scenario(path)?;
        let c = recorded.censoring;
        eprintln!(
            "plugtop: {} as a workload: {} intervals; every online CPU was busy in {} (demand censored there: the runnable tasks raised {} of them; see docs/tune.md)",
            plugtop::report::terminal_safe(&path.display().to_string()),
            c.intervals,
            c.censored,
            c.raised
        );
        let old_kernel = args.old_kernel || recorded.old_kernel;
        if args.whole {
            return Ok(Chosen {
                scenario: recorded.scenario,
                name: path.display().to_string(),
                old_kernel,
                held_out: HeldOut::Nothing,
            });
        }
        let (first, second) = plugtop::tune::recorded::halves(&recorded.scenario)?;
        return Ok(Chosen {
            scenario: first,
            name: format!("{} (first half)", path.display()),
            old_kernel,
            held_out: HeldOut::SecondHalf(second),
        });
    }
    let path = args
        .workload
        .as_ref()
        .context("give a scenario file or --replay FILE")?;
    Ok(Chosen {
        scenario: plugtop::sim::Scenario::load(path)?,
        name: path.display().to_string(),
        old_kernel: args.old_kernel,
        held_out: HeldOut::Seeds,
    })
}

/// A CPU tune (the default) of a file whose CPU group is off: it would put
/// a CPU form into a file that manages memory only; `--objective memory`
/// tunes what the file has.
fn objective_hint(
    rules: &plugtop::rules::RuleSet,
    objective: plugtop::tune::score::Objective,
) -> Option<String> {
    if objective != plugtop::tune::score::Objective::Cpu || rules.cpu_enabled {
        return None;
    }
    Some(format!(
        "its CPU group is off (it needs {}), so this CPU tune can only put a CPU form into it; \
         --objective memory tunes its memory rules{}",
        plugtop::rules::ruleset::describe_missing_cpu(rules),
        if rules.mem_enabled {
            ""
        } else {
            " (once its memory group can run)"
        }
    ))
}

/// A progress bar on stderr until `finished`.
fn progress(done: &AtomicUsize, budget: usize, finished: &std::sync::atomic::AtomicBool) {
    while !finished.load(Ordering::Relaxed) {
        let n = done.load(Ordering::Relaxed).min(budget);
        let filled = n * 30 / budget.max(1);
        eprint!(
            "\r  tuning [{}{}] {n} of at most {budget} candidates",
            "#".repeat(filled),
            ".".repeat(30 - filled)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    eprint!("\r{}\r", " ".repeat(60));
}

/// Candidate `i` as the file it makes.
fn rewritten(tuned: &Tuned, i: usize) -> Vec<u8> {
    tuned.file_of(i).bytes().to_vec()
}

/// The recommendation as written by `--write`: a comment on top says which
/// tune made it and of what form.
fn as_written(args: &TuneArgs, source_name: &str, tuned: &Tuned, i: usize) -> Vec<u8> {
    let form = match tuned.form_of(i) {
        Some(f) => format!("the {} form", f.title()),
        None => "the file's own form, numbers moved".to_string(),
    };
    let mut out = format!(
        "# Written by plugtop tune on {} against {} (seed {}, objective {}): {form}.\n",
        plugtop::report::terminal_safe(source_name),
        plugtop::report::terminal_safe(&args.against.as_ref().map_or_else(
            || args.config.display().to_string(),
            |p| p.display().to_string()
        )),
        args.seed,
        match args.objective {
            crate::cli::TuneObjective::Cpu => "cpu",
            crate::cli::TuneObjective::Memory => "memory",
            crate::cli::TuneObjective::Steady => "steady",
        }
    )
    .into_bytes();
    out.extend_from_slice(&rewritten(tuned, i));
    out
}

/// The held-out workloads, labelled: with the `portfolio`, the built-in
/// scenarios lighter and heavier too.
fn held_out(held: HeldOut, workload: &Workload, portfolio: bool) -> Vec<(String, Workload)> {
    let mut out = held_out_of(held, workload);
    if portfolio {
        out.extend(
            plugtop::tune::portfolio::held_out(workload)
                .into_iter()
                .map(|m| (m.name, m.workload)),
        );
    }
    out
}

/// The held-out workloads of the workload itself.
fn held_out_of(held: HeldOut, workload: &Workload) -> Vec<(String, Workload)> {
    match held {
        HeldOut::Nothing => Vec::new(),
        HeldOut::SecondHalf(second) => vec![(
            plugtop::tune::recorded::SECOND_HALF.into(),
            Workload {
                scenario: second,
                ..workload.clone()
            },
        )],
        HeldOut::Seeds => {
            let base = workload.scenario.seed;
            (base + 1..=base + OTHER_SEEDS)
                .map(|seed| (format!("s{seed}"), workload.with_seed(seed)))
                .collect()
        }
    }
}

/// The start, the reference and the recommendation on the held-out
/// workloads.
fn held_out_rows(
    tuned: &Tuned,
    file: &SourceFile,
    held: &[(String, Workload)],
    reference: Option<&SourceFile>,
) -> Vec<(String, String, plugtop::tune::score::Score)> {
    let Some(i) = tuned.recommended else {
        return Vec::new();
    };
    let recommended = SourceFile::new("recommended", rewritten(tuned, i));
    let mut files = vec![("start", file.clone())];
    if let Some(r) = reference {
        files.push(("reference", r.clone()));
    }
    files.push(("recommended", recommended));
    let mut rows = Vec::new();
    for (label, w) in held {
        let facts = w.facts();
        for (name, f) in &files {
            rows.push((name.to_string(), label.clone(), w.score(f, &facts)));
        }
    }
    rows
}

/// What the report says beside the tune itself: the recommended file,
/// the held-out rows, and what the recommendation costs.
struct Said<'a> {
    recommended: Option<&'a [u8]>,
    seeds: &'a [(String, String, plugtop::tune::score::Score)],
    cost: Option<&'a (SimReport, SimReport)>,
}

fn text(
    out: &mut dyn Write,
    args: &TuneArgs,
    source_name: &str,
    file: &SourceFile,
    tuned: &Tuned,
    said: &Said,
) -> anyhow::Result<()> {
    let Said {
        recommended,
        seeds,
        cost,
    } = *said;
    // Prose wraps at the terminal's width (80 into a file or a pipe); the
    // tables and the diff stay as they are.
    let width = plugtop::report::text_width();
    let say = |out: &mut dyn Write, text: String| -> std::io::Result<()> {
        write!(out, "{}", plugtop::report::prose(&text, width))
    };
    writeln!(out, "knobs of {}:", file.name())?;
    write!(out, "{}", report::knobs_text(&tuned.knobs))?;
    let forms = tuned.shapes.len() - 1;
    say(
        out,
        format!(
            "\n{} on {source_name} (seed {}){}:",
            report::candidates_words(tuned),
            args.seed,
            if forms > 0 {
                format!(", the file's own numbers and {forms} variants of the rule forms")
            } else {
                String::new()
            }
        ),
    )?;
    let against = args.against.as_ref().map(|p| p.display().to_string());
    write!(out, "{}", report::table(tuned, against.as_deref()))?;
    match recommended {
        Some(bytes) => {
            if let plugtop::tune::Standing::Ties { .. } = tuned.standing {
                say(
                    out,
                    format!(
                        "\nno candidate did better than the reference and held up elsewhere; the \
                         best that ties it everywhere and does better than {} is recommended",
                        file.name()
                    ),
                )?;
            }
            say(
                out,
                format!("\nrecommended, as a diff against {}:", file.name()),
            )?;
            write!(
                out,
                "{}",
                report::diff(file.name(), file.bytes(), "recommended", bytes)
            )?;
            if !tuned.portfolio.is_empty() {
                say(
                    out,
                    "\non the built-in scenarios and the steady loads (checked before \
                     recommending):"
                        .to_string(),
                )?;
                write!(
                    out,
                    "{}",
                    report::portfolio_table(&tuned.portfolio, plugtop::report::terminal_columns())
                )?;
            }
            say(
                out,
                "\non what it was never tuned or checked on (other seeds, a recording's second \
                 half, the built-in scenarios lighter and heavier):"
                    .to_string(),
            )?;
            write!(
                out,
                "{}",
                report::seeds_table(seeds, plugtop::report::terminal_columns())
            )?;
            if let Some(note) = report::seeds_note(tuned, seeds) {
                say(out, note)?;
            }
            if let Some(said) = plugtop::tune::recorded::second_half_verdict(seeds, objective(args))
            {
                say(out, said)?;
            }
            say(out, format!("\n{}", report::summary(tuned, seeds)))?;
            if let Some((start, now)) = cost {
                say(out, report::cost(start, now))?;
            }
        }
        None => say(out, nothing_words(args, tuned))?,
    }
    Ok(())
}

/// Why nothing is recommended, and what would have been.
fn nothing_words(args: &TuneArgs, tuned: &Tuned) -> String {
    format!(
        "\nrecommended: {} ({}); the front above shows the trade-off",
        report::why_nothing(tuned),
        match args.objective {
            crate::cli::TuneObjective::Cpu =>
                "less unmet demand at no more stalls or memory, and 5% more CPUs at most \
                 unless a fifth less demand is left unmet",
            crate::cli::TuneObjective::Memory =>
                "a smaller guest at no more stalls, CPUs or unmet demand",
            crate::cli::TuneObjective::Steady => "fewer changes at no more CPUs, memory or stalls",
        }
    )
}

fn json(out: &mut dyn Write, file: &SourceFile, tuned: &Tuned, said: &Said) -> anyhow::Result<()> {
    let Said {
        recommended,
        seeds,
        cost,
    } = *said;
    let front = plugtop::tune::score::pareto_front(&tuned.front_scores());
    let knob_json: Vec<_> = tuned
        .knobs
        .iter()
        .map(|k| {
            serde_json::json!({
                "name": k.name(), "owner": k.owner, "line": k.line, "column": k.column,
                "value": k.value, "range": [k.range.0, k.range.1], "integer": k.integer,
            })
        })
        .collect();
    let candidate = |i: usize| serde_json::json!({"index": i, "values": tuned.candidates[i].0, "score": tuned.candidates[i].1, "form": tuned.form_of(i).map(|f| f.title())});
    let v = serde_json::json!({
        "rules": file.name(),
        "knobs": knob_json,
        "candidates": tuned.candidates.len(),
        "start": tuned.candidates[0].1,
        "reference": tuned.reference,
        "front": front.iter().map(|&i| candidate(i)).collect::<Vec<_>>(),
        "recommended": tuned.recommended.map(candidate),
        "recommended_form": tuned.recommended.and_then(|i| tuned.form_of(i)),
        "rounded_from": tuned.rounded_from,
        "cost": cost.map(|(start, now)| serde_json::json!({
            "start": {"avg_cpus": start.avg_online_cpus, "peak_cpus": start.peak_online_cpus, "avg_guest_mib": start.avg_guest_mib, "avg_swapped_mib": start.avg_swapped_mib, "peak_swapped_mib": start.peak_swapped_mib},
            "recommended": {"avg_cpus": now.avg_online_cpus, "peak_cpus": now.peak_online_cpus, "avg_guest_mib": now.avg_guest_mib, "avg_swapped_mib": now.avg_swapped_mib, "peak_swapped_mib": now.peak_swapped_mib},
        })),
        "forms_searched": tuned.shapes.iter().enumerate().skip(1).map(|(k, shape)| serde_json::json!({
            "form": shape.form.as_ref().map(|f| f.title()),
            "origin": shape.form.as_ref().map(|f| f.origin.clone()),
            "candidates": tuned.shape_of.iter().filter(|s| **s == k).count(),
        })).collect::<Vec<_>>(),
        "standing": tuned.recommended.map(|_| match tuned.standing {
            plugtop::tune::Standing::Beats => "beats",
            plugtop::tune::Standing::Ties { .. } => "ties",
        }),
        "recommended_diff": recommended.map(|b| report::diff(file.name(), file.bytes(), "recommended", b)),
        "judged": tuned.judged.iter().map(|(i, v)| serde_json::json!({
            "index": i,
            "form": tuned.form_of(*i).map(|f| f.title()),
            "score": tuned.candidates[*i].1,
            "verdict": v.words(),
        })).collect::<Vec<_>>(),
        "portfolio": tuned.portfolio,
        "held_out": seeds.iter().map(|(l, s, sc)| serde_json::json!({"file": l, "workload": s, "score": sc})).collect::<Vec<_>>(),
    });
    writeln!(
        out,
        "{}",
        plugtop::report::terminal_safe_json(&v.to_string())
    )?;
    Ok(())
}

/// Where `--write` will put the recommendation, checked before the search:
/// the directory held open, and a name at which nothing stands yet (a
/// file, a link or anything else there is refused, never overwritten) in a
/// directory a file can be created in.
fn write_target(path: &Path) -> anyhow::Result<(Root, OsString)> {
    let shown = path.display();
    let refused = |e: FsError| match e {
        FsError::NotReplaceable { kind, .. } => anyhow::anyhow!(
            "--write {shown}: that is {kind}; --write creates a new file only, nothing tuned"
        ),
        FsError::Exists { .. } => anyhow::anyhow!(
            "--write {shown}: that file exists already and is never overwritten, nothing tuned"
        ),
        e => anyhow::anyhow!(
            "--write {shown}: {}; nothing tuned",
            plugtop::error_chain::text(&e)
        ),
    };
    let (dir, name) = Root::of_file(path).map_err(refused)?;
    dir.check(Path::new(&name), Replace::Nothing)
        .map_err(refused)?;
    dir.check_writable().map_err(refused)?;
    Ok((dir, name))
}

/// Writes the recommended file as `name` in `dir`, after checking
/// cpuplugd would load it: created whole under a temporary name, never
/// through a link, and moved to `name` only where nothing stands.
fn write_new(
    dir: &Root,
    name: &OsStr,
    bytes: &[u8],
    facts: &plugtop::rules::SystemFacts,
) -> anyhow::Result<()> {
    let shown = Path::new(name).display().to_string();
    let outcome = plugtop::rules::load(&SourceFile::new(shown, bytes.to_vec()), facts);
    if let Some(r) = outcome.refusal {
        anyhow::bail!(
            "the recommended file would be refused ({}); nothing written",
            r.message
        );
    }
    dir.write_file(Path::new(name), bytes, Placing::new(Replace::Nothing))
        .map_err(|e| {
            anyhow::anyhow!(
                "{} (an existing file is never overwritten); nothing written",
                plugtop::error_chain::text(&e)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(cpus: u32, duration: &str) -> Workload {
        let text = format!(
            "name = \"t\"\ncpus = {cpus}\nonline = 1\nmemory_mib = 4096\nduration = \"{duration}\"\n\
             [[phases]]\nstart = \"0:00\"\nthreads = 1\n"
        );
        Workload {
            scenario: plugtop::sim::Scenario::parse("t", &text)
                .unwrap_or_else(|e| panic!("scenario: {e}")),
            old_kernel: false,
            duration: None,
        }
    }

    #[test]
    fn the_default_budget_shrinks_with_length_and_size_but_never_to_nothing() {
        use plugtop::tune::default_budget;
        assert_eq!(default_budget(&workload(4, "12:30")), 2000);
        assert_eq!(default_budget(&workload(4, "24h")), 200);
        assert_eq!(default_budget(&workload(256, "20:00")), 125);
        assert_eq!(default_budget(&workload(4096, "24h")), 20);
    }
}
