//! `plugtop whatif`: re-decide every interval of a recording with another
//! rule file, against a second file or against what the guest really did,
//! and show side by side what each would have done, how often it changed
//! its mind, whether it flaps or feeds itself, and the first intervals where
//! the two differ, with both traces.
//!
//! A recording is open loop: its readings are replayed as they were, so a
//! what-if cannot know how the guest would have reacted to other actions.

use std::fmt::Write as _;
use std::sync::Arc;

use crate::control::controller::Mode;
use crate::control::flap::{FlapConfig, FlapDetector, Flapping, Moves};
use crate::control::session::Session;
use crate::control::watch::ChangedDecision;
use crate::engine::{CpuAction, Decision, GroupStatus};
use crate::kernel::actuator::NoWrites;
use crate::kernel::{Sample, Source};
use crate::report::trace::{explain, rule as rule_tree};
use crate::report::{Layout, hms, shown_file_name};
use crate::rules::{Outcome, RuleKind, RuleSet, SourceFile};

/// How many differing intervals are shown in full.
pub const SHOWN_DIFFERENCES: usize = 10;

/// Why a what-if could not run.
#[derive(Debug, thiserror::Error)]
pub enum WhatIfError {
    #[error(transparent)]
    Rules(#[from] crate::rules::LoadError),
    #[error(transparent)]
    Source(#[from] crate::kernel::SourceError),
}

/// One side's tallies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SideTally {
    pub name: String,
    pub plugs: usize,
    pub unplugs: usize,
    pub pool_up: usize,
    pub pool_down: usize,
    pub reversals: usize,
    /// Where it flapped, if it did.
    pub flapping: Option<FlapSpan>,
    pub loops: Vec<String>,
    /// The last explained changes of decision (why it flaps).
    pub changes: Vec<ChangedDecision>,
    /// Known patterns, with their evidence.
    pub hints: Vec<String>,
    /// Why cpuplugd would exit under this file, and where
    /// ([`crate::sim::report::cpuplugd_stops`]): it decides nothing after.
    pub stopped: Option<String>,
}

/// Where a side flapped: from the reading it was first found at, and the
/// last window it was found in, said as the screen's Flips view says it at
/// that reading (docs/incidents.md: the period is twice the mean distance
/// between that window's reversals), so a replay's Flips at the end and
/// the what-if give one period, not the first window's beside the last's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlapSpan {
    pub from: usize,
    /// The reading the last window found flapping ends at.
    pub last: usize,
    pub finding: Flapping,
}

impl FlapSpan {
    /// Follows `detector` after the reading `at`: starts where it first
    /// flaps, and keeps its newest finding while it flaps.
    fn follow(span: &mut Option<FlapSpan>, at: usize, detector: &FlapDetector) {
        let quantity = span.map(|s| s.finding.what);
        let now = match quantity {
            Some(what) => detector.finding(what),
            None => detector.findings().first().copied(),
        };
        if let Some(finding) = now {
            let from = span.map_or(at, |s| s.from);
            *span = Some(FlapSpan {
                from,
                last: at,
                finding,
            });
        }
    }
}

impl SideTally {
    fn count(&mut self, moves: Moves) {
        match moves.cpu {
            1 => self.plugs += 1,
            -1 => self.unplugs += 1,
            _ => {}
        }
        match moves.pool {
            1 => self.pool_up += 1,
            -1 => self.pool_down += 1,
            _ => {}
        }
    }
}

/// A rule file being re-decided: the same [`Session`] every front end
/// runs, observing (it never writes), with its tallies.
struct Candidate {
    session: Session,
    tally: SideTally,
    /// The decision on the reading last decided.
    last: Option<Decision>,
}

impl Candidate {
    fn new(rules: RuleSet, file: SourceFile, flap: FlapConfig) -> Self {
        let hints = crate::control::patterns::from_rules(&rules, &file)
            .iter()
            .map(|h| h.to_string())
            .collect();
        Candidate {
            tally: SideTally {
                name: shown_file_name(file.name()),
                hints,
                ..SideTally::default()
            },
            session: Session::new(Arc::new(rules), file, Mode::Observe, flap),
            last: None,
        }
    }

    /// Decides `sample`; returns what the decision does, or `None` while
    /// the history fills (or when the reading is skipped).
    fn decide(&mut self, reading: usize, sample: &Arc<Sample>) -> Option<Moves> {
        if self.tally.stopped.is_some() {
            return None;
        }
        let step = self
            .session
            .step(Arc::clone(sample), &mut NoWrites::blind());
        self.last.clone_from(&step.decision);
        if let Some(f) = &step.fatal {
            let at = format!("would stop cpuplugd at #{reading}");
            self.tally.stopped = Some(crate::sim::report::cpuplugd_stops(
                &self.tally.name,
                &at,
                &f.message,
                None,
            ));
        }
        let d = step.decision.as_ref()?;
        let moves = Moves::of(d);
        self.tally.count(moves);
        self.tally
            .hints
            .extend(step.hints.iter().map(|h| h.to_string()));
        FlapSpan::follow(
            &mut self.tally.flapping,
            d.reading,
            &self.session.watch().flap,
        );
        Some(moves)
    }

    /// Explanations of the four conditions, and the tree of `kind`.
    fn show(&self, kind: RuleKind, out: &mut String) {
        for k in crate::report::flips::CONDITIONS {
            let (rules, file, trace) = (
                self.session.rules(),
                self.session.file(),
                self.session.trace(),
            );
            if let Some(line) = explain(rules, file, trace, k)
                && rules.rule(k).is_some()
                && !line.ends_with("not evaluated")
            {
                let _ = writeln!(out, "    {line}");
            }
        }
        let s = &self.session;
        if let Some(note) = self.last.as_ref().and_then(|d| limit_note(s.rules(), d)) {
            let _ = writeln!(out, "    {note}");
        }
        let evaluated = s
            .rules()
            .rule(kind)
            .is_some_and(|r| s.trace().outcome(r.root) != Outcome::NotEvaluated);
        if !evaluated {
            let why = not_evaluated(s.rules(), self.last.as_ref(), kind);
            let _ = writeln!(out, "      {} not evaluated: {why}", kind.file_name());
            return;
        }
        for line in rule_tree(s.rules(), s.file(), s.trace(), kind).lines() {
            let _ = writeln!(out, "      {line}");
        }
    }

    fn finish(mut self) -> SideTally {
        let watch = self.session.watch();
        self.tally.reversals = watch.flap.total_reversals();
        self.tally.loops = watch.loops.iter().map(|l| l.to_string()).collect();
        self.tally.changes = watch.changes.iter().cloned().collect();
        self.tally
    }
}

/// Why the rule `kind` was not evaluated on the reading `decision` was
/// made on, in the words of cpuplugd's order of evaluation.
fn not_evaluated(rules: &RuleSet, decision: Option<&Decision>, kind: RuleKind) -> String {
    let memory = matches!(
        kind,
        RuleKind::Memplug | RuleKind::Memunplug | RuleKind::CmmInc | RuleKind::CmmDec
    );
    if memory && !rules.mem_enabled {
        return "the memory rules are off for this file: cpuplugd runs them only with CMM_MIN, CMM_MAX (at least CMM_MIN), CMM_INC, MEMPLUG and MEMUNPLUG set, and a cmm_pages file".into();
    }
    if !memory && !rules.cpu_enabled {
        return "the CPU rules are off for this file: cpuplugd runs them only with CPU_MIN, CPU_MAX, HOTPLUG and HOTUNPLUG set".into();
    }
    let Some(d) = decision else {
        return "no decision yet: the history is still filling".into();
    };
    let status = if memory {
        d.mem.map(|m| m.status)
    } else {
        d.cpu.map(|c| c.status)
    };
    match (kind, status) {
        (_, Some(GroupStatus::Fault(f))) => format!("{f} skipped its group this interval"),
        (_, Some(GroupStatus::Vertical)) => {
            "vertical polarization: cpuplugd changes no CPUs then".into()
        }
        (RuleKind::Hotunplug, _) if d.cpu.and_then(|c| c.hotplug) == Some(true) => {
            "HOTPLUG was true, and it goes first".into()
        }
        (RuleKind::Memunplug, _) if d.mem.and_then(|m| m.memplug) == Some(true) => {
            "MEMPLUG was true, and it goes first".into()
        }
        _ if d.fatal.is_some() => "cpuplugd would have exited before it".into(),
        _ => "its group did not run this interval".into(),
    }
}

/// A rule that fired while a limit stopped it ("HOTUNPLUG true, but
/// CPU_MIN reached"), so "nothing" is not read as the rule being false.
fn limit_note(rules: &RuleSet, d: &Decision) -> Option<String> {
    let cpu = d.cpu?;
    if !cpu.limited || cpu.action != CpuAction::None {
        return None;
    }
    let s = rules.settings;
    Some(if cpu.hotplug == Some(true) {
        format!(
            "but CPU_MAX is reached ({} of {} online): nothing to plug",
            cpu.onumcpus, s.cpu_max
        )
    } else {
        format!(
            "but CPU_MIN is reached ({} online, CPU_MIN {}): nothing to unplug",
            cpu.onumcpus, s.cpu_min
        )
    })
}

/// The rule that makes `moves` happen, for showing its trace.
fn deciding_rule(moves: Moves) -> RuleKind {
    match (moves.cpu, moves.pool) {
        (-1, _) => RuleKind::Hotunplug,
        (1, _) => RuleKind::Hotplug,
        (_, 1) => RuleKind::Memunplug,
        (_, -1) => RuleKind::Memplug,
        _ => RuleKind::Hotplug,
    }
}

/// The finished comparison.
#[derive(Debug, Clone)]
pub struct WhatIf {
    pub source_name: String,
    pub readings: usize,
    pub first: Option<Sample>,
    pub last: Option<Sample>,
    pub new: SideTally,
    pub old: SideTally,
    /// Intervals where the two differ.
    pub differing: usize,
    /// Against the recording: intervals where the guest acted while the
    /// file decided nothing (its history still filling, a group that
    /// faulted): not a difference of decisions, but a count the file's
    /// column lacks.
    pub acted_undecided: usize,
    /// Against the recording: the file's decision on the last reading does
    /// something the recording cannot answer (nothing was read after it).
    pub last_unanswered: bool,
    /// The first [`SHOWN_DIFFERENCES`] of them, rendered.
    pub shown: Vec<String>,
    /// Whether `old` is the recorded guest rather than a rule file.
    pub against_recording: bool,
}

/// Re-decides every reading of `source` with `new`, and with `old` or
/// against the recorded actions when `old` is `None`.
pub fn compare(
    source: &mut dyn Source,
    source_name: &str,
    new: &std::path::Path,
    old: Option<&std::path::Path>,
    flap: FlapConfig,
) -> Result<WhatIf, WhatIfError> {
    let facts = source.facts();
    let load = |p: &std::path::Path| {
        crate::rules::load_path(p, &facts)
            .map(|(r, f)| Candidate::new(r, f, flap))
            .map_err(WhatIfError::from)
    };
    let mut a = load(new)?;
    let mut b = match old {
        Some(p) => Some(load(p)?),
        None => None,
    };
    let mut recorded = SideTally {
        name: "recorded".into(),
        ..SideTally::default()
    };
    let mut recorded_flap = crate::control::flap::FlapDetector::new(flap);
    let mut previous: Option<Arc<Sample>> = None;
    let mut first = None;
    let mut readings = 0usize;
    let mut differing = 0usize;
    let mut acted_undecided = 0usize;
    let mut shown = Vec::new();
    let mut last_moves: Option<Moves> = None;
    while let Some(next) = source.next_sample() {
        let sample = Arc::new(next?);
        // What the guest did after the previous reading answers the decision
        // made on it; compare before `a` moves on to this reading.
        if b.is_none()
            && let Some(prev) = &previous
        {
            let w = Moves::between(prev, &sample);
            recorded.count(w);
            recorded_flap.observe(readings - 1, w);
            FlapSpan::follow(&mut recorded.flapping, readings - 1, &recorded_flap);
            match last_moves {
                Some(x) if x != w => {
                    differing += 1;
                    if shown.len() < SHOWN_DIFFERENCES {
                        shown.push(difference(readings - 1, prev, &a, None, x, w));
                    }
                }
                // Not after cpuplugd stopped: nothing decides then.
                None if w != Moves::default() && a.tally.stopped.is_none() => acted_undecided += 1,
                _ => {}
            }
        }
        readings += 1;
        let wa = a.decide(readings - 1, &sample);
        if let Some(b) = &mut b
            && let (Some(x), Some(y)) = (wa, b.decide(readings - 1, &sample))
            && x != y
        {
            differing += 1;
            if shown.len() < SHOWN_DIFFERENCES {
                shown.push(difference(readings - 1, &sample, &a, Some(b), x, y));
            }
        }
        last_moves = wa;
        if first.is_none() {
            first = Some(Sample::clone(&sample));
        }
        previous = Some(sample);
    }
    // The last reading has no recorded answer: the recorded window still
    // slides on to it, so both columns' last windows end at one reading.
    if b.is_none() && readings > 0 {
        recorded_flap.observe(readings - 1, Moves::default());
        FlapSpan::follow(&mut recorded.flapping, readings - 1, &recorded_flap);
    }
    recorded.reversals = recorded_flap.total_reversals();
    Ok(WhatIf {
        source_name: shown_file_name(source_name),
        readings,
        first,
        last: previous.map(|s| Sample::clone(&s)),
        new: a.finish(),
        old: match b {
            Some(b) => b.finish(),
            None => recorded,
        },
        differing,
        acted_undecided,
        last_unanswered: old.is_none() && last_moves.is_some_and(|m| m != Moves::default()),
        shown,
        against_recording: old.is_none(),
    })
}

/// One differing interval, with both sides' reasons and traces.
fn difference(
    reading: usize,
    sample: &Sample,
    a: &Candidate,
    b: Option<&Candidate>,
    x: Moves,
    y: Moves,
) -> String {
    let mut text = format!(
        "#{reading} {}  {}: {x}   {}: {y}\n",
        crate::report::time_of_day(sample.stamp),
        a.tally.name,
        b.map_or("recorded", |b| b.tally.name.as_str()),
    );
    let kind = deciding_rule(if x.is_none() { y } else { x });
    let _ = writeln!(text, "  {}", a.tally.name);
    a.show(kind, &mut text);
    if let Some(b) = b {
        let _ = writeln!(text, "  {}", b.tally.name);
        b.show(kind, &mut text);
    }
    text
}

/// The columns of the side-by-side table's labels.
const LABEL_COLUMNS: usize = 18;

/// One of a side's counts.
type Count = fn(&SideTally) -> usize;

/// The two rule files' tallies, one row per quantity
/// ([`crate::report::side_by_side`]: narrow, a long file name is cut in
/// its middle); a flapping's period is written shorter where the long
/// form does not fit.
fn side_by_side(out: &mut String, w: &WhatIf, layout: Layout) {
    let room = crate::report::side_by_side::room(LABEL_COLUMNS, layout);
    let flap = |t: &SideTally| match t.flapping {
        Some(FlapSpan {
            from: at,
            finding: Flapping { period, .. },
            ..
        }) => {
            let long = format!("from #{at}, every {period:.1} intervals");
            if crate::report::words::cols(&long) <= room {
                long
            } else {
                format!("#{at}, every {period:.1}")
            }
        }
        None => "no".into(),
    };
    let row = |label: &str, a: String, b: String| (label.to_string(), a, b);
    let counts: [(&str, Count); 5] = [
        ("  plug a CPU", |t| t.plugs),
        ("  unplug a CPU", |t| t.unplugs),
        ("  grow the pool", |t| t.pool_up),
        ("  shrink the pool", |t| t.pool_down),
        ("reversals", |t| t.reversals),
    ];
    let mut rows = vec![
        row("", w.new.name.clone(), w.old.name.clone()),
        row("intervals that", String::new(), String::new()),
    ];
    rows.extend(
        counts
            .iter()
            .map(|(label, n)| row(label, n(&w.new).to_string(), n(&w.old).to_string())),
    );
    rows.push(row("flapping", flap(&w.new), flap(&w.old)));
    if !w.against_recording || !w.new.loops.is_empty() {
        rows.push(row(
            "feedback loops",
            w.new.loops.len().to_string(),
            if w.against_recording {
                "-".into()
            } else {
                w.old.loops.len().to_string()
            },
        ));
    }
    crate::report::side_by_side::rows(out, &rows, LABEL_COLUMNS, layout);
}

/// The comparison as text, its table laid out for `layout` (the prose is
/// wrapped by the caller).
pub fn render(w: &WhatIf, layout: Layout) -> String {
    let mut out = String::new();
    let span = match (&w.first, &w.last) {
        (Some(a), Some(b)) => {
            let secs = (b.stamp.micros - a.stamp.micros) / 1_000_000;
            format!(
                " from {}, {} long",
                crate::report::time_of_day(a.stamp),
                hms(secs)
            )
        }
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "what-if over {}: {} readings{span}",
        w.source_name, w.readings
    );
    let _ = writeln!(
        out,
        "open loop: the recorded readings are replayed as they were; they cannot show how the guest would have reacted to other actions."
    );
    let _ = writeln!(out);
    side_by_side(&mut out, w, layout);
    let _ = writeln!(
        out,
        "{}",
        if w.against_recording {
            "(a rule file's count: intervals whose decision does it, each decided again on the readings as they were; the recording's: intervals in which the guest did it)"
        } else {
            "(intervals whose decision does it, each decided again on the readings as they were)"
        }
    );
    let _ = writeln!(out);
    for t in [&w.new, &w.old] {
        if let Some(stopped) = &t.stopped {
            let _ = writeln!(
                out,
                "{stopped}; it decides nothing after that, so its counts end there"
            );
            let _ = writeln!(out);
        }
    }
    for t in [&w.new, &w.old] {
        for l in &t.loops {
            let _ = writeln!(out, "{}: {l}", t.name);
        }
        for h in &t.hints {
            let _ = writeln!(out, "{}: {h}", t.name);
        }
        if let Some(span) = &t.flapping {
            // In the Flips view's words at that reading.
            let _ = writeln!(out, "{} at #{}: {}", t.name, span.last, span.finding);
        }
        if t.flapping.is_some() && !t.changes.is_empty() {
            let _ = writeln!(out, "why {} flaps (its last changes of decision):", t.name);
            for c in t.changes.iter().rev().take(3).rev() {
                let _ = writeln!(out, "  {c}");
            }
        }
    }
    let mut aside = Vec::new();
    if w.acted_undecided > 0 {
        aside.push(format!(
            "in {} intervals the guest acted while the file decided nothing (its history still \
             filling, or a group that faulted)",
            w.acted_undecided
        ));
    }
    if w.last_unanswered {
        aside.push(
            "the file's decision on the last reading has no recorded answer (nothing was read \
             after it)"
                .to_string(),
        );
    }
    if w.differing == 0 && aside.is_empty() {
        let _ = writeln!(out, "they decide the same in every interval");
    } else if w.differing == 0 {
        let _ = writeln!(
            out,
            "they decide the same in every interval both decided; {}",
            aside.join("; ")
        );
    } else {
        for a in &aside {
            let _ = writeln!(out, "also: {a}");
        }
        let _ = writeln!(
            out,
            "{} intervals differ; the first {}:",
            w.differing,
            w.shown.len()
        );
        for s in &w.shown {
            let _ = writeln!(out);
            out.push_str(s);
        }
    }
    out
}
