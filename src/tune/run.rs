//! One `plugtop tune` from what was asked to what is reported: the
//! workload chosen and what is held out to check the recommendation on,
//! the rules and the reference read, the options, the knobs narrowed by
//! `--knob`, the files refused before any search, and the held-out rows
//! and the cost of the recommendation after it.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize};

use anyhow::Context;

use super::knobs::Knob;
use super::score::{Objective, Score};
use super::{TuneOptions, Tuned, Workload, narrow};
use crate::kernel::fs::Root;
use crate::report::terminal_safe;
use crate::rules::{RuleSet, Setting, SourceFile, SystemFacts};
use crate::sim::Scenario;
use crate::sim::report::SimReport;

/// Seeds the recommendation is tried on besides the scenario's own.
const OTHER_SEEDS: u64 = 3;

/// What `plugtop tune` was asked, as its command line says it.
#[derive(Debug, Clone, Default)]
pub struct Asked {
    /// The scenario file (unless `replay`).
    pub workload: Option<PathBuf>,
    /// A recording played as the workload.
    pub replay: Option<PathBuf>,
    /// The whole recording, nothing held out.
    pub whole: bool,
    pub config: PathBuf,
    pub against: Option<PathBuf>,
    /// `--duration`, as written.
    pub duration: Option<String>,
    pub old_kernel: bool,
    pub objective: Objective,
    pub budget: Option<u64>,
    pub judge: Option<u64>,
    pub seed: u64,
    pub threads: Option<u64>,
    pub only_workload: bool,
    pub knob: Vec<String>,
    pub forms: Option<PathBuf>,
    pub only_thresholds: bool,
    pub write: Option<PathBuf>,
}

/// A tune ready to search: everything read and checked.
pub struct Prepared {
    pub asked: Asked,
    pub workload: Workload,
    /// The workload as the report names it.
    pub source_name: String,
    pub file: SourceFile,
    pub facts: SystemFacts,
    pub reference: Option<SourceFile>,
    pub options: TuneOptions,
    pub knobs: Vec<Knob>,
    held: HeldOut,
    /// Where `--write` puts the recommendation, checked before the search.
    target: Option<(Root, OsString)>,
}

/// What the report says beside the tune itself: the recommended file,
/// the held-out rows, and what the recommendation costs.
pub struct Said {
    pub recommended: Option<Vec<u8>>,
    pub seeds: Vec<(String, String, Score)>,
    pub cost: Option<(SimReport, SimReport)>,
}

/// What the recommendation is checked on besides what it was tuned on.
enum HeldOut {
    /// Other seeds of the scenario.
    Seeds,
    /// The recording's second half.
    SecondHalf(Scenario),
    /// Nothing (`--whole`).
    Nothing,
}

/// Reads and checks everything a tune needs before its search; `say`
/// hears what the user is told on the way (on standard error).
pub fn prepare(asked: Asked, say: &mut dyn FnMut(String)) -> anyhow::Result<Prepared> {
    // Before any work: a tune that cannot save its result is refused now.
    let target = asked
        .write
        .as_deref()
        .map(super::recommended_file::target)
        .transpose()?;
    let (scenario, source_name, old_kernel, held) = workload_of(&asked, say)?;
    let workload = Workload {
        scenario,
        old_kernel,
        duration: asked
            .duration
            .as_deref()
            .map(crate::sim::scenario::duration_arg)
            .transpose()?,
    };
    let facts = workload.facts();
    // The hint only where a /proc/vmstat name is what failed; the error
    // stays a rule file's, so its diagnostics are laid out as `check`'s.
    let (rules, file) = crate::rules::load_path(&asked.config, &facts).map_err(|e| match e {
        crate::rules::LoadError::Refused { first, report }
            if !asked.old_kernel && report.contains("vmstat") =>
        {
            crate::rules::LoadError::Refused {
                first,
                report: format!("{report}{OLD_KERNEL_HINT}"),
            }
        }
        e => e,
    })?;
    let reference = match &asked.against {
        Some(p) => Some(SourceFile::new(
            crate::rules::rule_file_name(p),
            crate::rules::read_rule_bytes(p)
                .with_context(|| format!("cannot read {}", p.display()))?,
        )),
        None => None,
    };
    let options = options_of(&asked, &workload, say)?;
    let knobs = knobs_of(&asked, &rules, &file, &workload, &facts, &options)?;
    let prepared = Prepared {
        asked,
        workload,
        source_name,
        file,
        facts,
        reference,
        options,
        knobs,
        held,
        target,
    };
    prepared.refuse_missing_symbols(say)?;
    if let Some(hint) = objective_hint(&rules, prepared.options.objective) {
        say(format!("{}: {hint}", prepared.file.name()));
    }
    Ok(prepared)
}

/// Said where a rule file may need the zone-suffixed /proc/vmstat names.
const OLD_KERNEL_HINT: &str = "\n(the seed paper's files need --old-kernel)";

impl Prepared {
    /// The search, counting the candidates run in `done`.
    pub fn tune(&self, done: &AtomicUsize) -> Tuned {
        super::tune(
            &self.file,
            self.knobs.clone(),
            &self.workload,
            self.reference.as_ref(),
            &self.options,
            done,
            &AtomicBool::new(false),
        )
    }

    /// The held-out rows and the cost of `tuned`'s recommendation.
    pub fn said(&self, tuned: &Tuned) -> Said {
        let Some(i) = tuned.recommended else {
            return Said {
                recommended: None,
                seeds: Vec::new(),
                cost: None,
            };
        };
        let recommended = tuned.file_of(i).bytes().to_vec();
        let named = SourceFile::new("recommended", recommended.clone());
        let mut files = vec![("start", &self.file)];
        if let Some(r) = &self.reference {
            files.push(("reference", r));
        }
        files.push(("recommended", &named));
        let mut seeds = Vec::new();
        for (label, w) in self.held_out() {
            let facts = w.facts();
            for (name, f) in &files {
                seeds.push((name.to_string(), label.clone(), w.score(f, &facts)));
            }
        }
        let cost = (|| {
            let start = self.workload.report(&self.file, &self.facts).ok()?;
            let now = self.workload.report(&tuned.file_of(i), &self.facts).ok()?;
            Some((start, now))
        })();
        Said {
            recommended: Some(recommended),
            seeds,
            cost,
        }
    }

    /// The held-out workloads, labelled: with the portfolio, the built-in
    /// scenarios lighter and heavier too.
    fn held_out(&self) -> Vec<(String, Workload)> {
        let workload = &self.workload;
        let mut out = match &self.held {
            HeldOut::Nothing => Vec::new(),
            HeldOut::SecondHalf(second) => vec![(
                super::recorded::SECOND_HALF.into(),
                Workload {
                    scenario: second.clone(),
                    ..workload.clone()
                },
            )],
            HeldOut::Seeds => {
                let base = workload.scenario.seed;
                (base + 1..=base + OTHER_SEEDS)
                    .map(|seed| (format!("s{seed}"), workload.with_seed(seed)))
                    .collect()
            }
        };
        if self.options.portfolio {
            out.extend(
                super::portfolio::held_out(workload)
                    .into_iter()
                    .map(|m| (m.name, m.workload)),
            );
        }
        out
    }

    /// `--write`: the recommendation written to the target checked before
    /// the search, or why nothing was.
    pub fn write(&self, tuned: &Tuned, say: &mut dyn FnMut(String)) -> anyhow::Result<()> {
        let Some(path) = &self.asked.write else {
            return Ok(());
        };
        let shown = terminal_safe(&path.display().to_string()).into_owned();
        match (&self.target, tuned.recommended) {
            (_, None) => say(format!(
                "nothing recommended, so nothing written to {shown}"
            )),
            (Some((dir, name)), Some(i)) => {
                let bytes = self.as_written(tuned, i);
                super::recommended_file::write_new(dir, name, &bytes, &self.facts)?;
                say(format!("wrote {shown} (cpuplugd would load it)"));
            }
            (None, Some(_)) => {}
        }
        Ok(())
    }

    /// Candidate `i` as `--write` writes it: a comment on top says which tune
    /// made it and of what form.
    fn as_written(&self, tuned: &Tuned, i: usize) -> Vec<u8> {
        let asked = &self.asked;
        let form = match tuned.form_of(i) {
            Some(f) => format!("the {} form", f.title()),
            None => "the file's own form, numbers moved".to_string(),
        };
        let against = asked.against.as_ref().unwrap_or(&asked.config);
        let mut out = format!(
            "# Written by plugtop tune on {} against {} (seed {}, objective {}): {form}.\n",
            terminal_safe(&self.source_name),
            terminal_safe(&against.display().to_string()),
            asked.seed,
            asked.objective.word(),
        )
        .into_bytes();
        out.extend_from_slice(tuned.file_of(i).bytes());
        out
    }

    /// Refuses, before any search, a file that names a /proc value the
    /// simulated kernel does not have: cpuplugd stops at its first
    /// interval, and no number the tune could change brings the value
    /// back. A form can (it replaces the rule that names it): with memory
    /// forms searched, that is said and the search goes on.
    fn refuse_missing_symbols(&self, say: &mut dyn FnMut(String)) -> anyhow::Result<()> {
        // Memory forms replace the memory rules, which are what names /proc
        // fields a kernel may lack.
        let forms = !self.options.forms.is_empty() && self.options.objective == Objective::Memory;
        let Some(why) = self.workload.score(&self.file, &self.facts).fatal else {
            return Ok(());
        };
        if !(why.starts_with("Symbol ") && why.contains("not found")) {
            return Ok(());
        }
        let config = self.asked.config.display().to_string();
        if forms {
            say(format!(
                "{}: cpuplugd would stop at its first interval on this workload ({}); only a form that replaces that rule can help",
                terminal_safe(&config),
                terminal_safe(&why)
            ));
            return Ok(());
        }
        anyhow::bail!(
            "{config}: cpuplugd would stop at its first interval on this workload: {}{}",
            terminal_safe(&why),
            if self.asked.old_kernel {
                ""
            } else {
                OLD_KERNEL_HINT
            }
        )
    }
}

/// The knobs to search (none is an error only when no form is searched
/// either): those of the file, each `--knob` applied (refused with the
/// knob's valid range when it cannot take it), a run long enough for the
/// longest UPDATE tried, and those left with a single value that is the
/// file's own dropped.
fn knobs_of(
    asked: &Asked,
    rules: &RuleSet,
    file: &SourceFile,
    workload: &Workload,
    facts: &SystemFacts,
    options: &TuneOptions,
) -> anyhow::Result<Vec<Knob>> {
    let objective = options.objective;
    let present = facts
        .present_cpus
        .as_ref()
        .map_or_else(|_| rules.settings.cpu_max.max(1) as u32, |n| *n);
    let found = narrow::chosen(rules, file, &asked.knob, present, objective)?;
    let seconds = workload
        .duration
        .or_else(|| crate::sim::scenario::seconds(&workload.scenario.duration));
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
    if found.is_empty() && options.forms.is_empty() {
        anyhow::bail!(
            "{} has no numbers to tune{}",
            asked.config.display(),
            if objective == Objective::Memory {
                " for --objective memory (it tunes the memory rules; name a CPU knob with --knob to tune it too)"
            } else {
                ""
            }
        );
    }
    Ok(found)
}

/// The search's settings from the command line: the forms of `--forms`
/// before the shipped ones, none with `--only-thresholds`.
fn options_of(
    asked: &Asked,
    workload: &Workload,
    say: &mut dyn FnMut(String),
) -> anyhow::Result<TuneOptions> {
    let mut options = TuneOptions::defaults(workload);
    options.objective = asked.objective;
    if let Some(b) = asked.budget {
        options.budget = b as usize;
    }
    if let Some(j) = asked.judge {
        options.judged = j as usize;
    }
    options.seed = asked.seed;
    if let Some(t) = asked.threads {
        options.threads = t as usize;
    }
    options.portfolio = !asked.only_workload;
    options.knob_specs = asked.knob.clone();
    // The user's own forms first: a budget too small for every form (it
    // is a cap) reaches those the user asked for.
    if let Some(dir) = &asked.forms {
        options.forms.splice(0..0, super::forms::load_dir(dir)?);
    }
    // A knob narrowed by its rule, variable or place is a number of this
    // file: the user asked for its numbers, so no form replaces them.
    let limit = |spec: &String| {
        let name = spec.split('=').next().unwrap_or("").trim();
        Setting::TUNED
            .iter()
            .any(|l| name.eq_ignore_ascii_case(l.file_name()))
    };
    if let Some(spec) = asked.knob.iter().find(|s| !limit(s))
        && !asked.only_thresholds
        && !options.forms.is_empty()
    {
        say(format!(
            "--knob {}: a number of the file is narrowed, so only the file's own form is searched (as with --only-thresholds)",
            terminal_safe(spec)
        ));
        options.forms.clear();
    }
    if asked.only_thresholds {
        options.forms.clear();
    }
    Ok(options)
}

/// The scenario to play, its name and kernel, and what is held out: the
/// file given, or the recording turned into one (read once; said, with how
/// much of its demand was censored) and cut in halves unless `--whole`.
fn workload_of(
    asked: &Asked,
    say: &mut dyn FnMut(String),
) -> anyhow::Result<(Scenario, String, bool, HeldOut)> {
    let Some(path) = &asked.replay else {
        let path = asked
            .workload
            .as_ref()
            .context("give a scenario file or --replay FILE")?;
        let scenario = Scenario::load(path)?;
        return Ok((
            scenario,
            path.display().to_string(),
            asked.old_kernel,
            HeldOut::Seeds,
        ));
    };
    let recorded = super::recorded::scenario(path)?;
    let c = recorded.censoring;
    say(format!(
        "{} as a workload: {} intervals; every online CPU was busy in {} (demand censored there: the runnable tasks raised {} of them; see docs/tune.md)",
        terminal_safe(&path.display().to_string()),
        c.intervals,
        c.censored,
        c.raised
    ));
    let old_kernel = asked.old_kernel || recorded.old_kernel;
    if asked.whole {
        let name = path.display().to_string();
        return Ok((recorded.scenario, name, old_kernel, HeldOut::Nothing));
    }
    let (first, second) = super::recorded::halves(&recorded.scenario)?;
    let name = format!("{} (first half)", path.display());
    Ok((first, name, old_kernel, HeldOut::SecondHalf(second)))
}

/// A CPU tune (the default) of a file whose CPU group is off: it would put
/// a CPU form into a file that manages memory only; `--objective memory`
/// tunes what the file has.
fn objective_hint(rules: &RuleSet, objective: Objective) -> Option<String> {
    if objective != Objective::Cpu || rules.cpu_enabled {
        return None;
    }
    Some(format!(
        "its CPU group is off (it needs {}), so this CPU tune can only put a CPU form into it; \
         --objective memory tunes its memory rules{}",
        crate::rules::ruleset::describe_missing_cpu(rules),
        if rules.mem_enabled {
            ""
        } else {
            " (once its memory group can run)"
        }
    ))
}
