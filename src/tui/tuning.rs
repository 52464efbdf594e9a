//! The screen's tune (`T`, on `--sim`): the loaded rules tuned against the
//! scenario on a thread of its own, so the screen stays live with a
//! progress bar — the same judged search as `plugtop tune` with its
//! defaults (forms, portfolio, budget), so both recommend the same point;
//! then the front to pick from (the current rules as its first row, the
//! recommendation marked), and the picked point loaded into the what-if
//! editor (every changed rule, limit and variable as an edit, run at once).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::rules::{RuleSet, SourceFile};
use crate::sim::Scenario;
use crate::tui::whatif::{Field, WhatIfEditor};
use crate::tune::knobs::Knob;
use crate::tune::score::{Score, front_by_cpus};
use crate::tune::{TuneOptions, Tuned, Workload};

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
    /// The front row the cursor is on, once moved (before: the
    /// recommendation's row).
    cursor: Option<usize>,
}

/// One row of the front as the overlay lists it.
#[derive(Debug, Clone)]
pub struct FrontRow {
    pub index: usize,
    pub score: Score,
    pub recommended: bool,
    /// The form it is of (none: the loaded rules' own form).
    pub form: Option<String>,
}

impl TuneJob {
    /// Starts tuning `file` against `scenario` on a thread of its own as
    /// `plugtop tune` does by default (`budget` candidates instead of the
    /// default, when given); `wake` is called when the result is in.
    pub fn start(
        rules: &RuleSet,
        file: &SourceFile,
        scenario: &Scenario,
        old_kernel: bool,
        budget: Option<usize>,
        wake: Wake,
    ) -> Self {
        let workload = Workload {
            scenario: scenario.clone(),
            old_kernel,
            duration: None,
        };
        let mut options = TuneOptions::defaults(&workload);
        if let Some(b) = budget {
            options.budget = b.max(1);
        }
        let facts = workload.facts();
        let present = facts.present_cpus.as_ref().map_or(1, |n| *n);
        // The same knobs the command line searches; a file whose knobs
        // cannot be chosen is still tuned through its forms.
        let found = crate::tune::narrow::chosen(rules, file, &[], present, options.objective)
            .unwrap_or_default();
        Self::start_with(file, workload, options, found, wake)
    }

    /// [`TuneJob::start`] with `options`.
    fn start_with(
        file: &SourceFile,
        workload: Workload,
        options: TuneOptions,
        found: Vec<Knob>,
        wake: Wake,
    ) -> Self {
        let budget = options.budget;
        let done = Arc::new(AtomicUsize::new(0));
        let result = Arc::new(Mutex::new(None));
        let cancelled = Arc::new(AtomicBool::new(false));
        let file = file.clone();
        let (counter, slot) = (Arc::clone(&done), Arc::clone(&result));
        let cancel = Arc::clone(&cancelled);
        let thread = std::thread::Builder::new()
            .name("plugtop-tune".into())
            .spawn(move || {
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
            cursor: None,
        }
    }

    /// Stops the search (its thread ends after the candidate it is on);
    /// no result will come.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// Candidates the tune may evaluate in all (`--budget`).
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// How many candidates the finished tune ran, in the words of
    /// `plugtop tune` (the budget until it is finished).
    pub fn candidates_words(&self) -> String {
        match self.result.lock().ok().as_deref() {
            Some(Some(t)) => crate::tune::report::candidates_words(t),
            _ => format!("{} candidates", self.budget),
        }
    }

    /// The front row the cursor is on: the recommendation's until the
    /// cursor is moved.
    pub fn cursor(&self) -> usize {
        self.cursor
            .unwrap_or_else(|| self.front().iter().position(|r| r.recommended).unwrap_or(0))
    }

    /// Moves the cursor a row up the front.
    pub fn cursor_up(&mut self) {
        self.cursor = Some(self.cursor().saturating_sub(1));
    }

    /// Moves the cursor a row down the front, never past its last row.
    pub fn cursor_down(&mut self) {
        let rows = self.front().len();
        self.cursor = Some((self.cursor() + 1).min(rows.saturating_sub(1)));
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

    /// The front (the fewest CPUs first), once finished: the current
    /// rules as the first row, the recommendation marked.
    pub fn front(&self) -> Vec<FrontRow> {
        let Ok(guard) = self.result.lock() else {
            return Vec::new();
        };
        let Some(t) = guard.as_ref() else {
            return Vec::new();
        };
        let scores = t.front_scores();
        let front = front_by_cpus(&scores, t.recommended);
        // Points that read the same on screen are one row (the
        // recommendation kept where it is one of them).
        let shown = |i: usize| {
            let s = &t.candidates[i].1;
            format!(
                "{:.1} {:.2} {:.2} {} {} {}",
                s.unmet_cpu_seconds,
                s.avg_online_cpus,
                s.guest_to_working_set,
                s.direct_scan_stalls,
                s.changes(),
                s.reversals
            )
        };
        let mut kept: Vec<usize> = vec![0];
        for i in front.into_iter().filter(|&i| i != 0) {
            match kept.iter().position(|&k| k != 0 && shown(k) == shown(i)) {
                Some(p) if Some(i) == t.recommended => kept[p] = i,
                Some(_) => {}
                None => kept.push(i),
            }
        }
        kept.into_iter()
            .map(|i| FrontRow {
                index: i,
                score: t.candidates[i].1.clone(),
                recommended: Some(i) == t.recommended,
                form: t.form_of(i).map(|f| f.title()),
            })
            .collect()
    }

    /// Why the tune recommends nothing, or `None` when it recommends a
    /// point (or is not finished).
    pub fn nothing_recommended(&self) -> Option<String> {
        let guard = self.result.lock().ok()?;
        let t = guard.as_ref()?;
        if t.recommended.is_some() {
            return None;
        }
        Some(crate::tune::report::why_nothing(t))
    }

    /// Why candidate `index` is not the recommendation, in words (`None`
    /// for the recommendation itself).
    pub fn not_recommended_because(&self, index: usize) -> Option<String> {
        let guard = self.result.lock().ok()?;
        let t = guard.as_ref()?;
        crate::tune::report::why_not(t, index)
    }

    /// The what-if editor holding candidate `index`: one edit per rule,
    /// limit or variable whose text changed, and each variable a form
    /// brings in.
    pub fn editor(
        &self,
        rules: &RuleSet,
        file: &SourceFile,
        facts: &crate::rules::SystemFacts,
        index: usize,
    ) -> Option<WhatIfEditor> {
        let guard = self.result.lock().ok()?;
        let t = guard.as_ref()?;
        if index >= t.candidates.len() {
            return None;
        }
        let tuned = t.file_of(index);
        let theirs = crate::rules::load(&tuned, facts).rules;
        let mut edits: Vec<(Field, String)> = Vec::new();
        for f in Field::all(&theirs) {
            let new = f.text(&theirs, &tuned);
            if new != f.text(rules, file) && !new.is_empty() {
                edits.push((f, new));
            }
        }
        Some(WhatIfEditor::with_edits(rules, file, edits))
    }
}

impl Drop for TuneJob {
    /// A tune nobody will look at stops (the thread is not waited for).
    fn drop(&mut self) {
        self.cancel();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::channel;

    use super::*;

    /// A quick job: the workload alone, no forms, one thread.
    fn quick(
        rules: &RuleSet,
        file: &SourceFile,
        scenario: &Scenario,
        budget: usize,
        wake: Wake,
    ) -> TuneJob {
        let workload = Workload {
            scenario: scenario.clone(),
            old_kernel: false,
            duration: None,
        };
        let mut options = TuneOptions::defaults(&workload);
        options.budget = budget;
        options.portfolio = false;
        options.forms.clear();
        options.threads = 1;
        TuneJob::start_with(
            file,
            workload,
            options,
            crate::tune::knobs::find(rules, file),
            wake,
        )
    }

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
        let mut job = quick(&rules, &file, &scenario, 3, wake);
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
        // A budget no machine finishes before the cancel: the threads may
        // have started a few candidates by then (how many depends on the
        // scheduler), never the whole search.
        let budget = 100_000;
        let mut job = quick(&rules, &file, &scenario, budget, wake);
        job.cancel();
        job.wait();
        assert!(job.progress() < budget, "{} evaluated", job.progress());
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
        let job = quick(&rules, &file, &scenario, 100_000, wake);
        drop(job);
        // The thread ends (dropping the wake) without finishing: a tune
        // run to its end would have woken the screen first.
        assert!(wakes.recv().is_err(), "the dropped tune ran to its end");
    }

    #[test]
    fn the_cursor_stays_on_the_front() {
        let (rules, file, scenario) = rules_and_scenario();
        let mut job = quick(&rules, &file, &scenario, 3, Arc::new(|| {}));
        job.wait();
        let rows = job.front().len();
        assert!(rows >= 1);
        for _ in 0..rows + 5 {
            job.cursor_up();
        }
        assert_eq!(job.cursor(), 0);
        for _ in 0..rows + 5 {
            job.cursor_down();
        }
        assert_eq!(job.cursor(), rows - 1);
        assert_eq!(job.budget(), 3);
    }
}
