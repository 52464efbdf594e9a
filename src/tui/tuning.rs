//! The screen's tune (`T`, on `--sim`): the loaded rules tuned against the
//! scenario on a thread of its own, so the screen stays live with a
//! progress bar; then the front to pick from, and the picked point loaded
//! into the what-if editor (every changed rule, limit and variable as an
//! edit, run at once).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::rules::{RuleSet, SourceFile};
use crate::sim::Scenario;
use crate::tui::whatif::{Field, WhatIfEditor};
use crate::tune::knobs::{self, Knob};
use crate::tune::score::{Score, front_by_cpus};
use crate::tune::{TuneOptions, Tuned, Workload};

/// Candidates a screen tune evaluates (on one thread, a few seconds).
pub const SCREEN_BUDGET: usize = 200;

/// Tells the screen something changed that no message from the control
/// thread carries (a tune that finished), so it draws it without waiting
/// for a key.
pub type Wake = Arc<dyn Fn() + Send + Sync>;

/// A tune running or done. Dropping it (the rules were reloaded) stops
/// its thread: a tune of rules no longer loaded is wasted CPU.
pub struct TuneJob {
    done: Arc<AtomicUsize>,
    budget: usize,
    result: Arc<Mutex<Option<Tuned>>>,
    thread: Option<JoinHandle<()>>,
    cancelled: Arc<AtomicBool>,
    /// The front row the cursor is on.
    cursor: usize,
}

/// One row of the front as the overlay lists it.
#[derive(Debug, Clone)]
pub struct FrontRow {
    pub index: usize,
    pub score: Score,
    pub recommended: bool,
}

impl TuneJob {
    /// Starts tuning `file` against `scenario` on a thread of its own;
    /// `wake` is called when the result is in.
    pub fn start(
        rules: &RuleSet,
        file: &SourceFile,
        scenario: &Scenario,
        old_kernel: bool,
        wake: Wake,
    ) -> Self {
        Self::start_with(rules, file, scenario, old_kernel, SCREEN_BUDGET, wake)
    }

    /// [`TuneJob::start`] with `budget` candidates.
    fn start_with(
        rules: &RuleSet,
        file: &SourceFile,
        scenario: &Scenario,
        old_kernel: bool,
        budget: usize,
        wake: Wake,
    ) -> Self {
        let found = knobs::find(rules, file);
        let done = Arc::new(AtomicUsize::new(0));
        let result = Arc::new(Mutex::new(None));
        let cancelled = Arc::new(AtomicBool::new(false));
        let (file, scenario) = (file.clone(), scenario.clone());
        let (counter, slot) = (Arc::clone(&done), Arc::clone(&result));
        let cancel = Arc::clone(&cancelled);
        let thread = std::thread::Builder::new()
            .name("plugtop-tune".into())
            .spawn(move || {
                let workload = Workload {
                    scenario,
                    old_kernel,
                    duration: None,
                };
                let options = TuneOptions {
                    budget,
                    objective: Default::default(),
                    seed: 1,
                    threads: 1,
                    portfolio: false,
                };
                let tuned =
                    crate::tune::tune(&file, found, &workload, None, &options, &counter, &cancel);
                if cancel.load(Ordering::Relaxed) {
                    return;
                }
                if let Ok(mut s) = slot.lock() {
                    *s = Some(tuned);
                }
                wake();
            })
            .ok();
        TuneJob {
            done,
            budget,
            result,
            thread,
            cancelled,
            cursor: 0,
        }
    }

    /// Stops the search (its thread ends after the candidate it is on);
    /// no result will come.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// Candidates the tune evaluates in all.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// The front row the cursor is on.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Moves the cursor a row up the front.
    pub fn cursor_up(&mut self) {
        self.cursor = self.cursor.saturating_sub(1);
    }

    /// Moves the cursor a row down the front, never past its last row.
    pub fn cursor_down(&mut self) {
        let rows = self.front().len();
        self.cursor = (self.cursor + 1).min(rows.saturating_sub(1));
    }

    /// Candidates evaluated so far.
    pub fn progress(&self) -> usize {
        self.done.load(Ordering::Relaxed).min(self.budget)
    }

    /// Whether the result is in.
    pub fn finished(&self) -> bool {
        self.result.lock().map(|r| r.is_some()).unwrap_or(true)
    }

    /// Waits for the tune's thread to end (tests: the screen is woken by
    /// the thread instead).
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
        let edits: Vec<(Field, String)> = Field::all(rules)
            .into_iter()
            .filter_map(|f| {
                let line = f.line(rules, file)?;
                let new = value_of(tuned.line_bytes(line))?;
                (new != value_of(file.line_bytes(line))?).then_some((f, new))
            })
            .collect();
        Some(WhatIfEditor::with_edits(rules, file, edits))
    }
}

impl Drop for TuneJob {
    /// A tune nobody will look at stops (the thread is not waited for).
    fn drop(&mut self) {
        self.cancel();
    }
}

/// The text between the quotes of a `NAME="value"` line.
fn value_of(line: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(line);
    let (_, rest) = text.split_once('"')?;
    let (value, _) = rest.rsplit_once('"')?;
    Some(value.to_string())
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::channel;

    use super::*;

    fn rules_and_scenario() -> (RuleSet, SourceFile, Scenario) {
        let text = "name = \"short\"\ncpus = 4\nonline = 2\nmemory_mib = 1024\nduration = \"0:30\"\nseed = 1\n\n[[phases]]\nname = \"busy\"\nstart = \"0:00\"\nthreads = 3\ncpu_per_thread = 1\nworking_set_mib = 100\n";
        let scenario = Scenario::parse("short", text).expect("scenario");
        let facts = crate::sim::facts(&crate::sim::Guest::new(&scenario, false));
        let file = SourceFile::new(
            "plug.conf",
            b"UPDATE=\"2\"\nCPU_MIN=\"1\"\nCPU_MAX=\"4\"\nHOTPLUG=\"idle < 50\"\nHOTUNPLUG=\"idle > 150\"\n"
                .to_vec(),
        );
        let rules = crate::rules::load(&file, &facts).rules;
        (rules, file, scenario)
    }

    #[test]
    fn a_finished_tune_wakes_the_screen_once() {
        let (rules, file, scenario) = rules_and_scenario();
        let (woken, wakes) = channel();
        let wake: Wake = Arc::new(move || {
            let _ = woken.send(());
        });
        let mut job = TuneJob::start_with(&rules, &file, &scenario, false, 3, wake);
        job.wait();
        assert!(job.finished());
        assert!(wakes.try_recv().is_ok(), "the screen is woken");
        assert!(wakes.try_recv().is_err(), "once");
    }

    #[test]
    fn a_cancelled_tune_stops_without_a_result_or_a_wake() {
        let (rules, file, scenario) = rules_and_scenario();
        let (woken, wakes) = channel();
        let wake: Wake = Arc::new(move || {
            let _ = woken.send(());
        });
        let mut job = TuneJob::start_with(&rules, &file, &scenario, false, SCREEN_BUDGET, wake);
        job.cancel();
        job.wait();
        // At most the candidate being evaluated when it was cancelled.
        assert!(job.progress() <= 1, "{} evaluated", job.progress());
        assert!(!job.finished());
        assert!(job.front().is_empty());
        assert!(wakes.try_recv().is_err(), "no wake for a cancelled tune");
    }

    #[test]
    fn dropping_a_tune_stops_its_thread() {
        let (rules, file, scenario) = rules_and_scenario();
        let (woken, wakes) = channel();
        let wake: Wake = Arc::new(move || {
            let _ = woken.send(());
        });
        let job = TuneJob::start_with(&rules, &file, &scenario, false, SCREEN_BUDGET, wake);
        drop(job);
        // The thread ends (dropping the wake) without finishing: a tune
        // run to its end would have woken the screen first.
        assert!(wakes.recv().is_err(), "the dropped tune ran to its end");
    }

    #[test]
    fn the_cursor_stays_on_the_front() {
        let (rules, file, scenario) = rules_and_scenario();
        let mut job = TuneJob::start_with(&rules, &file, &scenario, false, 3, Arc::new(|| {}));
        job.wait();
        let rows = job.front().len();
        assert!(rows >= 1);
        job.cursor_up();
        assert_eq!(job.cursor(), 0);
        for _ in 0..rows + 5 {
            job.cursor_down();
        }
        assert_eq!(job.cursor(), rows - 1);
        assert_eq!(job.budget(), 3);
    }
}
