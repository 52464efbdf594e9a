//! `plugtop tune`: search a rule file's thresholds against a workload on
//! the simulated guest, closed loop, and show the trade-off the seed paper
//! tabulated by hand — unmet demand against CPUs and memory against
//! stability — with a recommended file that changes only the numbers.
//!
//! The workload is a scenario file or a recording of the user's own guest
//! ([`recorded`]); candidates run on the compiled rules
//! ([`crate::rules::compiled`]), by default on as many threads as the
//! machine has CPUs (`--threads`). The screen's `T` (on `--sim`) runs the
//! same search.

pub mod forms;
pub mod knobs;
pub mod limits;
pub mod narrow;
pub mod portfolio;
pub mod recommended_file;
pub mod recorded;
pub mod report;
pub mod robust;
pub mod rounding;
pub mod run;
pub mod score;
pub mod search;
pub mod switched;
pub mod threads;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};

use crate::rules::{SourceFile, SystemFacts, load};
use crate::sim::Scenario;
use crate::sim::run::{SimOptions, simulate_loaded};
use knobs::Knob;
use score::Score;

/// What the rules are tuned against: a scenario on the simulated guest.
#[derive(Debug, Clone)]
pub struct Workload {
    pub scenario: Scenario,
    pub old_kernel: bool,
    /// Overrides the scenario's duration, seconds.
    pub duration: Option<f64>,
}

impl Workload {
    /// The machine the rules are loaded against.
    pub fn facts(&self) -> SystemFacts {
        crate::sim::facts(&crate::sim::Guest::new(&self.scenario, self.old_kernel))
    }

    /// The same workload played with another seed (the overfitting check).
    pub fn with_seed(&self, seed: u64) -> Workload {
        let mut w = self.clone();
        w.scenario.seed = seed;
        w
    }

    /// A rule file's run: its score, or why cpuplugd would refuse it.
    pub fn score(&self, file: &SourceFile, facts: &SystemFacts) -> Score {
        match self.report(file, facts) {
            Ok(r) => Score::of(&r),
            Err(why) => Score::refused(why),
        }
    }

    /// A rule file's run: the simulator's whole report (the training
    /// course's goals are written over all of it), or why cpuplugd would
    /// refuse the file.
    pub fn report(
        &self,
        file: &SourceFile,
        facts: &SystemFacts,
    ) -> Result<crate::sim::report::SimReport, String> {
        let outcome = load(file, facts);
        if let Some(r) = outcome.refusal {
            return Err(r.message);
        }
        let options = SimOptions {
            duration: self.duration,
            old_kernel: self.old_kernel,
            ..SimOptions::default()
        };
        simulate_loaded(
            &self.scenario,
            Arc::new(outcome.rules),
            file,
            &options,
            &mut |_| {},
            &mut |_| {},
        )
        .map(|o| o.report)
        .map_err(|e| crate::error_chain::text(&e))
    }
}

/// How to tune.
#[derive(Debug, Clone)]
pub struct TuneOptions {
    pub budget: usize,
    /// At most this many candidates are judged on the portfolio, on a
    /// guest of up to 16 CPUs (fewer on a bigger one, see [`size_share`]).
    pub judged: usize,
    /// What to improve while holding the rest to the reference.
    pub objective: score::Objective,
    pub seed: u64,
    pub threads: usize,
    /// Judge the recommendation on the portfolio (the built-in scenarios
    /// and the steady sweep) and keep candidates that flap at a steady
    /// load out of the search; off, only the workload itself counts.
    pub portfolio: bool,
    /// The forms searched beside the file's own numbers (none:
    /// `--only-thresholds`, only the numbers move).
    pub forms: Vec<forms::Form>,
    /// The `--knob` specifications: a form put into the file takes those
    /// that name a limit (`UPDATE=3`), as the file itself does.
    pub knob_specs: Vec<String>,
}

impl TuneOptions {
    /// What `plugtop tune` does unless told otherwise, and the screen's `T`
    /// always: the default budget for the workload, seed 1, the portfolio,
    /// the shipped forms, a thread per CPU (the result is the same for any
    /// number of threads).
    pub fn defaults(workload: &Workload) -> TuneOptions {
        TuneOptions {
            budget: default_budget(workload),
            judged: MAX_JUDGED,
            objective: score::Objective::Cpu,
            seed: 1,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            portfolio: true,
            forms: forms::built_in(),
            knob_specs: Vec::new(),
        }
    }
}

/// Candidates when no budget is given: 2,000 (a few seconds for a
/// benchmark-length scenario), scaled down for workloads over an hour so
/// a day's recording takes about a minute (200), and for guests of more
/// than 16 CPUs, whose every simulated second costs as many times more
/// (at least 20: a 4,096-CPU scenario is tuned in minutes, not hours).
pub fn default_budget(workload: &Workload) -> usize {
    let seconds = workload.duration.unwrap_or_else(|| {
        crate::sim::scenario::seconds(&workload.scenario.duration).unwrap_or(3600.0)
    });
    let by_length = (2000.0 * 3600.0 / seconds.max(1.0)).clamp(200.0, 2000.0);
    let by_size = size_share(workload.scenario.cpus);
    (by_length * by_size).max(20.0) as usize
}

/// A rule file whose numbers the search moves: the user's own, or a form
/// put into it.
#[derive(Debug, Clone)]
pub struct TunedShape {
    pub file: SourceFile,
    pub knobs: Vec<Knob>,
    /// The form, for a form put into the user's file.
    pub form: Option<forms::FormUse>,
}

impl TunedShape {
    /// The file with the knobs at `values`.
    pub fn file_of(&self, values: &[f64]) -> SourceFile {
        let changes: Vec<(&Knob, f64)> = self.knobs.iter().zip(values.iter().copied()).collect();
        SourceFile::new(self.file.name(), knobs::rewrite(&self.file, &changes))
    }
}

/// A finished tune.
pub struct Tuned {
    /// The knobs of the user's file.
    pub knobs: Vec<Knob>,
    /// The user's file first, then every form put into it.
    pub shapes: Vec<TunedShape>,
    /// Every candidate: its knob values (of its shape's knobs) and score;
    /// the start first.
    pub candidates: Vec<(Vec<f64>, Score)>,
    /// The shape of each candidate.
    pub shape_of: Vec<usize>,
    /// The candidate the recommendation is written in fewer digits of,
    /// when rounding added it.
    pub rounded_from: Option<usize>,
    /// Forms of the user's own (`--forms`) that could not be searched, and why.
    pub form_notes: Vec<String>,
    /// The reference's score (the `--against` file, else the start).
    pub reference: Score,
    /// The candidate recommended: within the reference's CPUs, memory and
    /// stalls, the least unmet demand, and better than the reference;
    /// never one that flaps or stops cpuplugd.
    pub recommended: Option<usize>,
    /// The candidates judged on the portfolio, best first, with what each
    /// showed (empty without the portfolio).
    pub judged: Vec<(usize, robust::Verdict)>,
    /// The portfolio with the reference's and the recommendation's scores
    /// on each workload (empty without the portfolio or a recommendation).
    pub portfolio: Vec<PortfolioRow>,
    /// What the recommendation's numbers switched off, in words.
    pub switched_off: Vec<String>,
    /// Whether the recommendation beats the reference or, when no candidate
    /// that beat it held up, only ties it.
    pub standing: Standing,
    /// What the tune improved, for the report's words.
    pub objective: score::Objective,
    /// The candidates the search was allowed (`--budget`): more than
    /// `candidates` holds, see [`report::candidates_words`].
    pub budget: usize,
}

/// How the recommendation stands against the `--against` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// Better on the workload, and within the tolerance everywhere else.
    #[default]
    Beats,
    /// No candidate that beat the reference held up elsewhere; this one is
    /// within the tolerance of the reference on the workload and on the
    /// whole portfolio, and better than the file being tuned. `judged_from`
    /// is where its pass starts in `judged`.
    Ties { judged_from: usize },
}

/// The reference and the recommendation on one workload of the portfolio.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PortfolioRow {
    pub workload: String,
    /// Threads, for a steady load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steady: Option<f64>,
    /// The working set's share of memory, for a steady load under memory
    /// pressure (a memory tune's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pressure: Option<f64>,
    pub reference: Score,
    pub recommended: Score,
}

/// By default, at most this many of the best candidates on the workload
/// are judged on the portfolio before the search gives up on recommending
/// one (on a guest of up to 16 CPUs; fewer on a bigger one, whose steady
/// loads cost as many times more, down to 4).
const MAX_JUDGED: usize = 64;

/// How many of `at_most` candidates a guest of `cpus` CPUs has judged.
fn judged_at_most(at_most: usize, cpus: u32) -> usize {
    let scaled = at_most as f64 * size_share(cpus);
    (scaled as usize).max(4.min(at_most))
}

/// The share of a tune's default work a guest of `cpus` CPUs gets: all of
/// it up to 16 CPUs, then 16/CPUs (every simulated second of a bigger guest
/// costs as many times more).
pub fn size_share(cpus: u32) -> f64 {
    (16.0 / f64::from(cpus.max(1))).min(1.0)
}

/// Stands for a candidate outside its knobs' ranges where the front is
/// made: never usable, so it neither enters the front nor hides another.
static OUTSIDE: Score = Score {
    flapping: true,
    ..Score::WORST
};

impl Tuned {
    /// The shape candidate `i` is of.
    pub fn shape(&self, i: usize) -> &TunedShape {
        &self.shapes[self.shape_of.get(i).copied().unwrap_or(0)]
    }

    /// Candidate `i` as a rule file.
    pub fn file_of(&self, i: usize) -> SourceFile {
        self.shape(i).file_of(&self.candidates[i].0)
    }

    /// The form candidate `i` is of, if it is not the user's file.
    pub fn form_of(&self, i: usize) -> Option<&forms::FormUse> {
        self.shape(i).form.as_ref()
    }

    /// The candidates' scores as the front is made from them: the start
    /// stands as unusable when `--knob` put it outside a knob's range (it
    /// is the user's file as written, shown as "start", but not what was
    /// asked for).
    pub fn front_scores(&self) -> Vec<&Score> {
        self.candidates
            .iter()
            .enumerate()
            .map(|(i, (v, s))| {
                if knobs::within_ranges(&self.shape(i).knobs, v) {
                    s
                } else {
                    &OUTSIDE
                }
            })
            .collect()
    }
}

/// Tunes the `knobs` of `file` against `workload`, and with them every
/// form of `options.forms` put into `file` ([`forms::instantiate`]);
/// `reference` is the file to beat (the start when `None`). `done` counts
/// the candidates evaluated; raising `cancelled` ends the search early
/// (the screen's tune of rules that were reloaded meanwhile).
pub fn tune(
    file: &SourceFile,
    knobs: Vec<Knob>,
    workload: &Workload,
    reference: Option<&SourceFile>,
    options: &TuneOptions,
    done: &AtomicUsize,
    cancelled: &AtomicBool,
) -> Tuned {
    let facts = workload.facts();
    let proxy = if options.portfolio {
        robust::SteadyProxy::new(workload)
    } else {
        robust::SteadyProxy::none()
    };
    let score_file = |f: &SourceFile| {
        let mut s = workload.score(f, &facts);
        if s.usable() {
            s.flaps_at_steady = proxy.flaps_at(f);
            // Only a portfolio tune holds files to a CPU's hysteresis.
            s.narrow = options.portfolio && robust::narrow_pair(f, &facts).is_some();
        }
        s
    };
    let against = reference.map(score_file);
    let mut shapes = vec![TunedShape {
        file: file.clone(),
        knobs: knobs.clone(),
        form: None,
    }];
    let forms = with_reference(options, reference);
    let mut form_notes = Vec::new();
    shapes.extend(form_shapes(file, options, &forms, &facts, &mut form_notes));
    let (candidates, shape_of) = search_shapes(
        &shapes,
        options,
        against.as_ref(),
        &score_file,
        done,
        cancelled,
    );
    let reference_score = against.unwrap_or_else(|| candidates[0].1.clone());
    // Only a candidate that does better than the reference within its
    // resources is recommended; when none does, nothing is.
    let objective = options.objective;
    // Nor one the start beats by more than noise somewhere while no worse
    // anywhere (more CPUs for nothing: adversary F8).
    let start = candidates[0].1.clone();
    let beats = |s: &Score, reference: &Score, start: &Score| {
        robust::beats(s, reference, objective) && !start.dominates_beyond_noise(s)
    };
    let better = |s: &Score| beats(s, &reference_score, &start);
    let mut order: Vec<usize> = (0..candidates.len())
        .filter(|&i| knobs::within_ranges(&shapes[shape_of[i]].knobs, &candidates[i].0))
        .filter(|&i| better(&candidates[i].1))
        .collect();
    sort_by_preference(&mut order, &candidates, objective);
    if objective == score::Objective::Cpu && reference_score.flapping {
        steady_at_no_more_cpus_first(&mut order, &candidates, &reference_score);
    }
    let mut tuned = Tuned {
        knobs,
        shapes,
        candidates,
        shape_of,
        rounded_from: None,
        form_notes,
        reference: reference_score,
        recommended: None,
        judged: Vec::new(),
        portfolio: Vec::new(),
        switched_off: Vec::new(),
        standing: Standing::Beats,
        objective,
        budget: options.budget,
    };
    if !options.portfolio {
        tuned.recommended = order.first().copied();
        round_recommendation(&mut tuned, &beats, &score_file, &|_| true);
    } else {
        let candidates = Candidates {
            evaluate: &score_file,
            threads: options.threads.max(1),
        };
        let judging = Judging {
            workload,
            reference: reference.unwrap_or(file),
            against: reference.is_some(),
            at_most: options.judged,
            cancelled,
        };
        judge_and_recommend(&mut tuned, order, &judging, &candidates);
    }
    if let Some(i) = tuned.recommended {
        tuned.switched_off = switched::notes(&tuned.file_of(i), &facts);
    }
    tuned
}

/// The forms a tune searches: `options.forms`, and before them the
/// reference's own rules, their numbers moved (a file that beats the
/// reference by a little and ties it everywhere else is found near it).
fn with_reference(options: &TuneOptions, reference: Option<&SourceFile>) -> Vec<forms::Form> {
    let mut forms = options.forms.clone();
    if let Some(r) = reference.filter(|_| !forms.is_empty()) {
        let group = options.objective.group();
        let text = String::from_utf8_lossy(r.bytes());
        forms.insert(
            0,
            forms::Form::of_file(REFERENCE_FORM, r.name(), group, &text),
        );
    }
    forms
}

/// Every variant of every form of `forms` whose group the
/// objective tunes, put into `file`, with the knobs a tune of it searches
/// (the `--knob` limits applied, a number hole's range its own). Left out:
/// a variant that names a /proc field this kernel lacks, one cpuplugd would
/// refuse, one whose knobs a `--knob` cannot be applied to.
fn form_shapes(
    file: &SourceFile,
    options: &TuneOptions,
    forms: &[forms::Form],
    facts: &SystemFacts,
    notes: &mut Vec<String>,
) -> Vec<TunedShape> {
    let group = options.objective.group();
    let present = facts.present_cpus.as_ref().map_or(1, |n| *n);
    // Only the limits carry over: a rule's name or a LINE:COL means the
    // user's file.
    let specs: Vec<String> = options
        .knob_specs
        .iter()
        .filter(|s| {
            let name = s.split('=').next().unwrap_or("").trim();
            crate::rules::Setting::TUNED
                .iter()
                .any(|l| name.eq_ignore_ascii_case(l.file_name()))
        })
        .cloned()
        .collect();
    let mut shapes = Vec::new();
    for form in forms.iter().filter(|f| f.group == group) {
        let mut taken = 0;
        let mut why_not = None;
        for variant in form.variants() {
            let instance = match forms::instantiate(form, &variant, file) {
                Ok(i) => i,
                Err(e) => {
                    why_not.get_or_insert(e);
                    continue;
                }
            };
            if !names_known(&instance.file, facts) {
                why_not.get_or_insert("it names a /proc field this kernel lacks".to_string());
                continue;
            }
            let outcome = load(&instance.file, facts);
            if let Some(r) = outcome.refusal {
                why_not.get_or_insert(format!("cpuplugd would refuse it: {}", r.message));
                continue;
            }
            let mut found = match crate::tune::narrow::chosen(
                &outcome.rules,
                &instance.file,
                &specs,
                present,
                options.objective,
            ) {
                Ok(found) => found,
                Err(e) => {
                    why_not.get_or_insert(e.to_string());
                    continue;
                }
            };
            taken += 1;
            for k in &mut found {
                if let Some((_, range)) = instance
                    .numbers
                    .iter()
                    .find(|(at, _)| *at == k.span.start as usize)
                {
                    k.range = (range.0.min(k.value), range.1.max(k.value));
                }
            }
            found.retain(|k| k.range.0 < k.range.1 || k.value != k.range.0);
            shapes.push(TunedShape {
                file: instance.file,
                knobs: found,
                form: Some(instance.form),
            });
        }
        // A form of the user's own that never fits is said, not dropped
        // in silence (a shipped form's variant for another kernel is
        // expected not to).
        if taken == 0 && !form.origin.starts_with("built-in ") {
            notes.push(format!(
                "the form {} ({}) was not searched: no variant of it loads in {}: {}",
                form.name,
                form.origin,
                file.name(),
                why_not.unwrap_or_else(|| "it has no variant".to_string())
            ));
        }
    }
    shapes
}

/// Whether every `meminfo.` and `vmstat.` field `file` names is one the
/// kernel has (when its names are known): a form's variant for another
/// kernel's names is not searched.
fn names_known(file: &SourceFile, facts: &SystemFacts) -> bool {
    // What the rules read, not what a comment says.
    let text: String = String::from_utf8_lossy(file.bytes())
        .split('\n')
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let fields = |prefix: &str, known: &Option<Vec<String>>| {
        let Some(known) = known else {
            return true;
        };
        text.match_indices(prefix).all(|(at, _)| {
            let rest = &text[at + prefix.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphabetic() || c == '_'))
                .unwrap_or(rest.len());
            known.iter().any(|k| k == &rest[..end])
        })
    };
    fields("meminfo.", &facts.meminfo_names) && fields("vmstat.", &facts.vmstat_names)
}

/// How candidates `a` and `b` of a search rank when the budget for forms
/// is shared out: one that beats `reference` first, then one within its
/// resources, then the rest, each by the objective's preference, the
/// earlier first on a tie.
fn by_rank(
    a: usize,
    b: usize,
    candidates: &[(Vec<f64>, Score)],
    reference: &Score,
    objective: score::Objective,
) -> std::cmp::Ordering {
    let rank = |s: &Score| {
        let class = if robust::beats(s, reference, objective) {
            0
        } else if s.usable() && s.within(reference, objective) {
            1
        } else {
            2
        };
        (class, s.preference(objective))
    };
    rank(&candidates[a].1)
        .partial_cmp(&rank(&candidates[b].1))
        .unwrap_or(std::cmp::Ordering::Equal)
        .then(a.cmp(&b))
}

/// The name of the `--against` file's rules as a form: with a space, so no
/// form file can take it.
pub const REFERENCE_FORM: &str = "reference rules";

/// Shapes that get a second round: the best few forms after the first.
const FORMS_REFINED: usize = 4;

/// Searches every shape: the user's file with half the budget, every form
/// with a share of a quarter, then the [`FORMS_REFINED`] forms whose best
/// candidate ranks highest with the last quarter, around that best; never
/// more than the budget in all (a share is at least 6, so a small budget
/// reaches fewer forms, in order). The candidates of all, each once, and
/// the shape of each; the same for a seed whatever the threads.
fn search_shapes(
    shapes: &[TunedShape],
    options: &TuneOptions,
    against: Option<&Score>,
    score_file: &(dyn Fn(&SourceFile) -> Score + Sync),
    done: &AtomicUsize,
    cancelled: &AtomicBool,
) -> (Vec<(Vec<f64>, Score)>, Vec<usize>) {
    let run =
        |shape: &TunedShape, start: &[f64], budget: usize, seed: u64, reference: Option<&Score>| {
            let evaluate = |values: &[f64]| score_file(&shape.file_of(values));
            let opts = TuneOptions {
                budget,
                seed,
                ..options.clone()
            };
            search::search(
                &shape.knobs,
                start,
                &opts,
                reference,
                &evaluate,
                done,
                cancelled,
            )
            .candidates
        };
    let user = &shapes[0];
    let user_start: Vec<f64> = user.knobs.iter().map(|k| k.value).collect();
    let forms = shapes.len() - 1;
    let user_budget = if forms == 0 {
        options.budget
    } else {
        (options.budget / 2).max(1)
    };
    let mut candidates = run(user, &user_start, user_budget, options.seed, against);
    let mut shape_of = vec![0; candidates.len()];
    if forms == 0 || candidates.is_empty() {
        return (candidates, shape_of);
    }
    let reference = against.cloned().unwrap_or_else(|| candidates[0].1.clone());
    let mut seen: std::collections::HashSet<(usize, Vec<String>)> =
        std::collections::HashSet::new();
    let mut add = |s: usize,
                   found: Vec<(Vec<f64>, Score)>,
                   candidates: &mut Vec<(Vec<f64>, Score)>,
                   shape_of: &mut Vec<usize>| {
        for (v, score) in found {
            if seen.insert((s, search::key(&shapes[s].knobs, &v))) {
                candidates.push((v, score));
                shape_of.push(s);
            }
        }
    };
    // The budget is a cap: what the user's file left, shared out in turn;
    // a small budget tries fewer forms rather than evaluating more.
    let mut left = options.budget.saturating_sub(candidates.len());
    let first = ((options.budget / 4) / forms).max(6);
    let mut best: Vec<(usize, usize)> = Vec::new();
    for (s, shape) in shapes.iter().enumerate().skip(1) {
        if cancelled.load(std::sync::atomic::Ordering::Relaxed) || left == 0 {
            break;
        }
        let start: Vec<f64> = shape.knobs.iter().map(|k| k.value).collect();
        let from = candidates.len();
        let found = run(
            shape,
            &start,
            first.min(left),
            options.seed + s as u64,
            Some(&reference),
        );
        left = left.saturating_sub(found.len());
        add(s, found, &mut candidates, &mut shape_of);
        if let Some(b) = (from..candidates.len())
            .min_by(|&a, &b| by_rank(a, b, &candidates, &reference, options.objective))
        {
            best.push((s, b));
        }
    }
    let best = refined(best, &candidates, &reference, options.objective, shapes);
    let second = ((options.budget / 4) / best.len().max(1)).max(6);
    for (s, b) in best {
        if cancelled.load(std::sync::atomic::Ordering::Relaxed) || left == 0 {
            break;
        }
        let start = candidates[b].0.clone();
        let found = run(
            &shapes[s],
            &start,
            second.min(left),
            options.seed + 1000 + s as u64,
            Some(&reference),
        );
        left = left.saturating_sub(found.len());
        add(s, found, &mut candidates, &mut shape_of);
    }
    (candidates, shape_of)
}

/// Which shapes get the second round, with the candidate it starts from:
/// the [`FORMS_REFINED`] whose best (`best`, a candidate per shape) ranks
/// highest, the reference's rules among them.
fn refined(
    mut best: Vec<(usize, usize)>,
    candidates: &[(Vec<f64>, Score)],
    reference: &Score,
    objective: score::Objective,
    shapes: &[TunedShape],
) -> Vec<(usize, usize)> {
    best.sort_by(|&(_, a), &(_, b)| by_rank(a, b, candidates, reference, objective));
    // The reference's rules (a shape named `reference`, first after the
    // user's file) are always refined: a small move from them is the
    // likeliest to tie the reference everywhere and beat it on the workload.
    let reference_shape = shapes
        .iter()
        .position(|s| s.form.as_ref().is_some_and(|f| f.name == REFERENCE_FORM));
    if let Some(r) = reference_shape
        && let Some(at) = best.iter().position(|(s, _)| *s == r)
    {
        let kept = best.remove(at);
        best.insert(0, kept);
    }
    best.truncate(FORMS_REFINED);
    best
}

/// How the judging of candidates scores a file, and how many at once.
struct Candidates<'a> {
    evaluate: &'a (dyn Fn(&SourceFile) -> Score + Sync),
    /// Threads judging at once.
    threads: usize,
}

/// What the judging of a tune needs beside its candidates.
struct Judging<'a> {
    workload: &'a Workload,
    /// The file judged against: the `--against` file, else the start.
    reference: &'a SourceFile,
    /// Whether `reference` is another file (`--against`), which opens the
    /// fallback of a candidate that only ties it.
    against: bool,
    /// At most this many candidates judged (before [`size_share`]).
    at_most: usize,
    cancelled: &'a AtomicBool,
}

/// Judges the best candidates on the portfolio and recommends the first
/// that holds up; against another file, when none that beats it holds up,
/// the first that ties it and beats the start ([`Standing::Ties`]). Fills
/// the portfolio's rows for the report.
fn judge_and_recommend(
    tuned: &mut Tuned,
    order: Vec<usize>,
    judging: &Judging,
    candidates: &Candidates,
) {
    let objective = tuned.objective;
    let judge = robust::Judge::new(
        portfolio::portfolio(judging.workload, objective),
        judging.reference,
        objective,
        robust::Tolerance::default(),
    );
    let beats = |s: &Score, reference: &Score, start: &Score| {
        robust::beats(s, reference, objective) && !start.dominates_beyond_noise(s)
    };
    // Against another file, a quarter of the judging is kept for the
    // fallback below.
    let mut left = judged_at_most(judging.at_most, judging.workload.scenario.cpus);
    let first_pass = if judging.against {
        left - left / 4
    } else {
        left
    };
    let cancelled = judging.cancelled;
    recommend_on_portfolio(
        tuned, order, &judge, &beats, first_pass, cancelled, candidates,
    );
    left -= tuned.judged.len();
    // A candidate that only ties the other file everywhere still serves
    // the user when it is better than their own file.
    if tuned.recommended.is_none() && judging.against && left > 0 {
        let judged_from = tuned.judged.len();
        let ties = |s: &Score, reference: &Score, start: &Score| {
            robust::ties(s, reference, start, objective)
        };
        let start = tuned.candidates[0].1.clone();
        let judged: Vec<usize> = tuned.judged.iter().map(|(i, _)| *i).collect();
        let mut order: Vec<usize> = (0..tuned.candidates.len())
            .filter(|i| !judged.contains(i))
            .filter(|&i| knobs::within_ranges(&tuned.shape(i).knobs, &tuned.candidates[i].0))
            .filter(|&i| ties(&tuned.candidates[i].1, &tuned.reference, &start))
            .filter(|&i| !start.dominates_beyond_noise(&tuned.candidates[i].1))
            .collect();
        sort_by_preference(&mut order, &tuned.candidates, objective);
        recommend_on_portfolio(tuned, order, &judge, &ties, left, cancelled, candidates);
        // One judged late may still be better than the reference on the
        // workload: only one that is not is said to tie.
        if let Some(i) = tuned.recommended
            && !beats(&tuned.candidates[i].1, &tuned.reference, &start)
        {
            tuned.standing = Standing::Ties { judged_from };
        }
    }
    if let Some(i) = tuned.recommended {
        let recommended = tuned.file_of(i);
        tuned.portfolio = judge
            .members()
            .map(|(m, reference)| PortfolioRow {
                workload: m.name.clone(),
                steady: match m.role {
                    portfolio::Role::Steady(t) => Some(t),
                    _ => None,
                },
                pressure: match m.role {
                    portfolio::Role::Pressure(share) => Some(share),
                    _ => None,
                },
                reference: reference.clone(),
                recommended: m.workload.score(&recommended, &m.workload.facts()),
            })
            .collect();
    }
}

/// A guest that flaps asks a tune first of all to stop it, and on z/VM
/// without costing CPUs (the request `--objective steady` makes alone):
/// when the reference flaps, the candidates that do not flap at no more of
/// its CPUs are judged first, in their order, and only then those that buy
/// less unmet demand with more CPUs (which the judge allows where they
/// leave a fifth less unmet). The front shows both.
fn steady_at_no_more_cpus_first(
    order: &mut [usize],
    candidates: &[(Vec<f64>, Score)],
    reference: &Score,
) {
    let within = |i: &usize| {
        let s = &candidates[*i].1;
        !s.flapping && s.avg_online_cpus <= reference.avg_online_cpus + 1e-9
    };
    // A stable sort on one key keeps each half in its order.
    order.sort_by_key(|i| !within(i));
}

/// Orders candidate indices by the objective's preference, the earlier
/// candidate first among equals (the order decides, not the threads).
fn sort_by_preference(
    order: &mut [usize],
    candidates: &[(Vec<f64>, Score)],
    objective: score::Objective,
) {
    order.sort_by(|&a, &b| {
        let (x, y) = (&candidates[a].1, &candidates[b].1);
        x.preference(objective)
            .partial_cmp(&y.preference(objective))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
}

/// What a recommendation must be on the workload, given the reference's
/// and the start's scores: better than the reference, or (the fallback)
/// as good as it and better than the start.
type Standard<'a> = dyn Fn(&Score, &Score, &Score) -> bool + 'a;

/// Judges at most `at_most` candidates of `order` (the best on the
/// workload first, one of each outcome) on the portfolio with `judge`, and
/// recommends the first that holds up, rounded to the fewest digits that
/// keep it to `standard`.
fn recommend_on_portfolio(
    tuned: &mut Tuned,
    mut order: Vec<usize>,
    judge: &robust::Judge,
    standard: &Standard,
    at_most: usize,
    cancelled: &AtomicBool,
    candidates: &Candidates,
) {
    let first_judged = tuned.judged.len();
    // Candidates of one shape that ran the workload alike are likely to
    // run the portfolio alike: one of each outcome is judged. (A memory
    // tune's candidates mostly share the CPU figures, so the guest's size
    // and the stalls tell its outcomes apart; two forms that run the
    // workload alike may well differ elsewhere, so the shape counts too.)
    let mut outcomes: Vec<(usize, u64, u64, u64, u64)> = Vec::new();
    order.retain(|&i| {
        let s = &tuned.candidates[i].1;
        let outcome = (
            tuned.shape_of[i],
            (s.unmet_cpu_seconds * 10.0).round() as u64,
            (s.avg_online_cpus * 100.0).round() as u64,
            (s.guest_to_working_set * 100.0).round() as u64,
            s.direct_scan_stalls,
        );
        let fresh = !outcomes.contains(&outcome);
        outcomes.push(outcome);
        fresh
    });
    spread(&mut order, at_most);
    let files: Vec<SourceFile> = order.iter().map(|&i| tuned.file_of(i)).collect();
    for (chunk_at, chunk) in files.chunks(candidates.threads).enumerate() {
        if cancelled.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let verdicts = judge_all(judge, chunk);
        let first = chunk_at * candidates.threads;
        for (k, v) in verdicts.into_iter().enumerate() {
            tuned.judged.push((order[first + k], v));
        }
        // The first that holds, in order; those judged after it in the same
        // batch are dropped, so the record is the same whatever `--threads`.
        if let Some(at) = tuned.judged[first_judged..]
            .iter()
            .position(|(_, v)| v.holds())
        {
            let at = first_judged + at;
            tuned.judged.truncate(at + 1);
            tuned.recommended = Some(tuned.judged[at].0);
            break;
        }
    }
    let holds = |f: &SourceFile| judge.verdict(f).holds();
    round_recommendation(tuned, standard, candidates.evaluate, &holds);
}

/// Keeps at most `n` of `order`: the first half as they come, the rest
/// spread evenly over what follows, in order. When the best on the
/// workload do not hold up elsewhere (the most aggressive often do not),
/// milder ones further down still get judged.
fn spread(order: &mut Vec<usize>, n: usize) {
    if order.len() <= n {
        return;
    }
    let head = n - n / 2;
    let rest: Vec<usize> = order[head..].to_vec();
    let picks = n - head;
    order.truncate(head);
    order.extend((0..picks).map(|k| rest[k * rest.len() / picks]));
}

/// Rewrites the recommendation in the fewest digits that keep its score
/// (within noise, and still better than the reference) and `holds` (the
/// portfolio's verdict), and recommends that: the shortened candidate is
/// added to the record, the longer one stays in it.
fn round_recommendation(
    tuned: &mut Tuned,
    standard: &Standard,
    evaluate: &dyn Fn(&SourceFile) -> Score,
    holds: &dyn Fn(&SourceFile) -> bool,
) {
    let Some(i) = tuned.recommended else {
        return;
    };
    let shape_index = tuned.shape_of[i];
    let shape = tuned.shapes[shape_index].clone();
    let (values, original) = tuned.candidates[i].clone();
    let reference = tuned.reference.clone();
    let start = tuned.candidates[0].1.clone();
    let mut keeps = |v: &[f64]| {
        let s = evaluate(&shape.file_of(v));
        (rounding::same_within_noise(&s, &original) && standard(&s, &reference, &start))
            .then_some(s)
    };
    let (rounded, score) = rounding::fewest_digits(&shape.knobs, &values, &mut keeps);
    if let Some(score) = score
        && holds(&shape.file_of(&rounded))
    {
        tuned.candidates.push((rounded, score));
        tuned.shape_of.push(shape_index);
        tuned.rounded_from = Some(i);
        tuned.recommended = Some(tuned.candidates.len() - 1);
    }
}

/// The verdicts of `files`, in their order, each judged on a thread of its
/// own (the order, not the scheduling, decides which is recommended).
fn judge_all(judge: &robust::Judge, files: &[SourceFile]) -> Vec<robust::Verdict> {
    threads::in_order(files.len(), files.len(), &|i| {
        let verdict = std::panic::AssertUnwindSafe(|| judge.verdict(&files[i]));
        std::panic::catch_unwind(verdict).ok()
    })
    .into_iter()
    .map(|v| {
        v.unwrap_or_else(|| robust::Verdict::Stops {
            workload: "the portfolio".to_string(),
            why: "the judging thread failed".to_string(),
        })
    })
    .collect()
}

#[cfg(test)]
mod judged_tests {
    /// Against a flapping reference at 1.5 CPUs, the steady candidates at no
    /// more CPUs go first, each half in its order.
    #[test]
    fn a_flapping_reference_has_the_steady_candidates_at_its_cpus_judged_first() {
        use super::score::example;
        let mut reference = example(300.0, 1.5);
        reference.flapping = true;
        let mut flaps = example(100.0, 1.2);
        flaps.flapping = true;
        let candidates: Vec<(Vec<f64>, super::Score)> = vec![
            (vec![], example(20.0, 3.4)),
            (vec![], flaps),
            (vec![], example(300.0, 1.0)),
            (vec![], example(150.0, 2.0)),
            (vec![], example(290.0, 1.5)),
        ];
        let mut order = vec![0, 1, 3, 2, 4];
        super::steady_at_no_more_cpus_first(&mut order, &candidates, &reference);
        assert_eq!(order, vec![2, 4, 0, 1, 3]);
    }

    #[test]
    fn judging_takes_the_best_first_then_spreads_over_the_rest() {
        let mut order: Vec<usize> = (0..100).collect();
        super::spread(&mut order, 8);
        assert_eq!(order, vec![0, 1, 2, 3, 4, 28, 52, 76]);
        let mut short: Vec<usize> = (0..5).collect();
        super::spread(&mut short, 8);
        assert_eq!(short, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_bigger_guest_has_fewer_candidates_judged_but_never_none() {
        assert_eq!(super::judged_at_most(64, 4), 64);
        assert_eq!(super::judged_at_most(64, 16), 64);
        assert_eq!(super::judged_at_most(64, 256), 4);
        assert_eq!(super::judged_at_most(64, 4096), 4);
        assert_eq!(super::judged_at_most(64, 0), 64);
        assert_eq!(super::judged_at_most(2, 4096), 2);
        assert_eq!(super::judged_at_most(10_000, 4), 10_000);
    }
}

/// Failing test from the r40 review.
#[cfg(test)]
mod names_review {
    /// `names_known` scanned the whole text, comments included: a comment
    /// naming an old kernel's counter kept every form out of the search.
    #[test]
    fn a_comment_naming_an_old_counter_does_not_hide_the_forms() {
        let text = "# on 2.6 we read vmstat.pgscan_direct_dma here\nUPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"loadavg > onumcpus + 0.75\"\nHOTUNPLUG=\"loadavg < onumcpus - 0.25\"\n";
        let file = super::SourceFile::new("c.conf", text.as_bytes().to_vec());
        let scenario = crate::sim::Scenario::parse(
            "t",
            "name = \"t\"\ncpus = 4\nonline = 2\nmemory_mib = 2048\nduration = \"1:00\"\n[[phases]]\nstart = \"0:00\"\nthreads = 1\n",
        )
        .expect("scenario");
        let facts = crate::sim::facts(&crate::sim::Guest::new(&scenario, false));
        assert!(super::names_known(&file, &facts));
    }
}
