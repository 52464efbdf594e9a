//! The screen's tune (`T`, on `--sim`): the loaded rules tuned against the
//! scenario on a thread of its own, so the screen stays live with a
//! progress bar; then the front to pick from, and the picked point loaded
//! into the what-if editor (every changed rule, limit and variable as an
//! edit, run at once).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::rules::{RuleKind, RuleSet, SourceFile};
use crate::sim::Scenario;
use crate::tui::whatif::{Field, WhatIfEditor};
use crate::tune::knobs::{self, Knob};
use crate::tune::score::{Score, front_by_cpus};
use crate::tune::{TuneOptions, Tuned, Workload};

/// Candidates a screen tune evaluates (on one thread, a few seconds).
pub const SCREEN_BUDGET: usize = 200;

/// A tune running or done.
pub struct TuneJob {
    pub done: Arc<AtomicUsize>,
    pub budget: usize,
    result: Arc<Mutex<Option<Tuned>>>,
    thread: Option<JoinHandle<()>>,
    /// The front row the cursor is on.
    pub cursor: usize,
}

/// One row of the front as the overlay lists it.
#[derive(Debug, Clone)]
pub struct FrontRow {
    pub index: usize,
    pub score: Score,
    pub recommended: bool,
}

impl TuneJob {
    /// Starts tuning `file` against `scenario` on a thread of its own.
    pub fn start(
        rules: &RuleSet,
        file: &SourceFile,
        scenario: &Scenario,
        old_kernel: bool,
    ) -> Self {
        let found = knobs::find(rules, file);
        let done = Arc::new(AtomicUsize::new(0));
        let result = Arc::new(Mutex::new(None));
        let (file, scenario) = (file.clone(), scenario.clone());
        let (counter, slot) = (Arc::clone(&done), Arc::clone(&result));
        let thread = std::thread::Builder::new()
            .name("plugtop-tune".into())
            .spawn(move || {
                let workload = Workload {
                    scenario,
                    old_kernel,
                    duration: None,
                };
                let options = TuneOptions {
                    budget: SCREEN_BUDGET,
                    objective: Default::default(),
                    seed: 1,
                    threads: 1,
                };
                let tuned = crate::tune::tune(&file, found, &workload, None, &options, &counter);
                if let Ok(mut s) = slot.lock() {
                    *s = Some(tuned);
                }
            })
            .ok();
        TuneJob {
            done,
            budget: SCREEN_BUDGET,
            result,
            thread,
            cursor: 0,
        }
    }

    /// Candidates evaluated so far.
    pub fn progress(&self) -> usize {
        self.done.load(Ordering::Relaxed).min(self.budget)
    }

    /// Whether the result is in.
    pub fn finished(&self) -> bool {
        self.result.lock().map(|r| r.is_some()).unwrap_or(true)
    }

    /// Waits for the tune to end (tests; the screen polls instead).
    pub fn wait(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// The front (the fewest CPUs first), once finished: the start and the
    /// recommendation marked.
    pub fn front(&self) -> Vec<FrontRow> {
        let Ok(guard) = self.result.lock() else {
            return Vec::new();
        };
        let Some(t) = guard.as_ref() else {
            return Vec::new();
        };
        let scores: Vec<&Score> = t.candidates.iter().map(|c| &c.1).collect();
        let front = front_by_cpus(&scores, t.recommended);
        // Points that read the same on screen are one row (the
        // recommendation kept where it is one of them).
        let shown = |i: usize| {
            let s = scores[i];
            format!(
                "{:.1} {:.2} {:.2} {} {} {}",
                s.unmet_cpu_seconds,
                s.avg_online_cpus,
                s.guest_to_working_set,
                s.direct_scan_stalls,
                s.cpu_changes + s.pool_changes,
                s.reversals
            )
        };
        let mut kept: Vec<usize> = Vec::new();
        for i in front {
            match kept.iter().position(|&k| shown(k) == shown(i)) {
                Some(p) if Some(i) == t.recommended => kept[p] = i,
                Some(_) => {}
                None => kept.push(i),
            }
        }
        let front = kept;
        front
            .into_iter()
            .map(|i| FrontRow {
                index: i,
                score: scores[i].clone(),
                recommended: Some(i) == t.recommended,
            })
            .collect()
    }

    /// The what-if editor holding candidate `index`'s numbers: one edit
    /// per rule, limit or variable whose text changed.
    pub fn editor(&self, rules: &RuleSet, file: &SourceFile, index: usize) -> Option<WhatIfEditor> {
        let guard = self.result.lock().ok()?;
        let t = guard.as_ref()?;
        let values = &t.candidates.get(index)?.0;
        let changes: Vec<(&Knob, f64)> = t.knobs.iter().zip(values.iter().copied()).collect();
        let tuned = SourceFile::new(file.name(), knobs::rewrite(file, &changes));
        let mut editor = WhatIfEditor::open(rules, file, RuleKind::Hotplug);
        let edits: Vec<(Field, String)> = Field::all(rules)
            .into_iter()
            .filter_map(|f| {
                let line = f.line(rules, file)?;
                let new = value_of(tuned.line_bytes(line))?;
                (new != value_of(file.line_bytes(line))?).then_some((f, new))
            })
            .collect();
        if let Some((first, text)) = edits.first().cloned() {
            editor.field = first;
            editor.input = crate::tui::line_input::LineInput::new(text);
        }
        editor.edits = edits;
        Some(editor)
    }
}

/// The text between the quotes of a `NAME="value"` line.
fn value_of(line: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(line);
    let (_, rest) = text.split_once('"')?;
    let (value, _) = rest.rsplit_once('"')?;
    Some(value.to_string())
}
