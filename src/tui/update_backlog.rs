//! What the control thread has told the screen and the screen has not
//! taken yet. A terminal nobody reads (a stalled SSH link) blocks the
//! screen thread in a write for as long as it likes, while the control
//! thread goes on taking readings: what waits must stay bounded, and the
//! control thread must never wait for the screen (it acts on the guest).
//! So the control thread posts into a [`Mailbox`] that never blocks and
//! coalesces what is waiting into a [`Backlog`] no larger than what the
//! screen could show anyway: the readings its timeline holds, the lines
//! its log holds, the latest of each state, and every ending.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use super::log_book::{LOG_LINES, LogKind};
use super::modal::Dialog;
use super::timeline::FRAMES;
use super::update::Update;

/// Most dialogs kept waiting: more than anyone reads at once; an older
/// message goes to the log instead.
pub const DIALOGS: usize = 8;

/// The most updates a [`Backlog`] ever holds: readings, notes, dialogs,
/// one of each state (status, CPU use, speed, working, who else acts, a
/// dead run's journal), one answer, one reload, the ending, the count of
/// readings not shown, and a seek's passage and end.
pub const MOST: usize = FRAMES + LOG_LINES + DIALOGS + 6 + 2 + 1 + 1 + 2;

/// The updates waiting for the screen, coalesced as they come so that
/// there are never more than [`MOST`]; applied in order, they leave the
/// screen as all of them would have (but for readings and lines older than
/// the screen keeps).
#[derive(Debug, Default)]
pub struct Backlog {
    updates: VecDeque<Update>,
    /// The latest status, CPU use, speed, write in progress, who else
    /// acts, the source's damage and a dead run's journal: each only sets
    /// what the screen shows, so one of each does.
    latest: [Option<Update>; 7],
    readings: usize,
    notes: usize,
    dialogs: usize,
    /// Readings dropped since the screen last took the backlog.
    missed: usize,
}

impl Backlog {
    /// Adds `update`, dropping or merging what it makes needless.
    pub fn push(&mut self, update: Update) {
        match &update {
            // Only the latest state counts, wherever it comes.
            Update::Status(_) => return self.latest[0] = Some(update),
            Update::OwnCpu(_) => return self.latest[1] = Some(update),
            Update::Speed(_) => return self.latest[2] = Some(update),
            Update::Working(_) => return self.latest[3] = Some(update),
            Update::Acting(_) => return self.latest[4] = Some(update),
            Update::Damaged(_) => return self.latest[5] = Some(update),
            Update::LeftChanged(_) => return self.latest[6] = Some(update),
            // A later answer or reload does all an earlier one would (the
            // board, the proposal shown again, the tune dropped), and one
            // seek's passage and end wait at most (keys read while the
            // terminal was not written): the earlier one leaves only its
            // lines.
            Update::Acted { .. }
            | Update::Reloaded { .. }
            | Update::Passed(_)
            | Update::SeekEnd(_) => {
                let kind = std::mem::discriminant(&update);
                if let Some(at) = self
                    .updates
                    .iter()
                    .position(|u| std::mem::discriminant(u) == kind)
                {
                    self.leave_lines(at);
                }
            }
            Update::Reading(_) => self.readings += 1,
            Update::Note(..) => self.notes += 1,
            Update::Show(_) => self.dialogs += 1,
            Update::Missed(readings) => {
                self.missed += readings;
                return;
            }
            Update::Ended(_) => {}
        }
        self.updates.push_back(update);
        while self.readings > FRAMES {
            self.drop_oldest(|u| matches!(u, Update::Reading(_)));
        }
        while self.dialogs > DIALOGS {
            // A question waits for its answer: old messages go to the log
            // first, and a question only when nothing else is left.
            if !self.drop_oldest(|u| {
                matches!(
                    u,
                    Update::Show(Dialog::Message(_) | Dialog::ReloadFailed(_))
                )
            }) {
                self.drop_oldest(|u| matches!(u, Update::Show(_)));
            }
        }
        while self.notes > LOG_LINES {
            self.drop_oldest(|u| matches!(u, Update::Note(..)));
        }
    }

    /// How many updates wait.
    pub fn len(&self) -> usize {
        self.updates.len() + self.latest.iter().flatten().count()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Everything waiting, in order, and empties the backlog; the latest
    /// states and how many readings were dropped meanwhile come last
    /// (before the ending), so that the log keeps saying it.
    pub fn take(&mut self) -> Vec<Update> {
        let missed = std::mem::take(&mut self.missed);
        self.readings = 0;
        self.notes = 0;
        self.dialogs = 0;
        let mut all = Vec::from(std::mem::take(&mut self.updates));
        let at = all
            .iter()
            .position(|u| matches!(u, Update::Ended(_)))
            .unwrap_or(all.len());
        let missed = (missed > 0).then_some(Update::Missed(missed));
        let latest = self.latest.iter_mut().filter_map(Option::take);
        all.splice(at..at, latest.chain(missed));
        all
    }

    /// Takes the oldest update `which` holds out of the backlog; what it
    /// says in the log stays.
    /// Whether there was one to take.
    fn drop_oldest(&mut self, which: impl Fn(&Update) -> bool) -> bool {
        match self.updates.iter().position(which) {
            Some(at) => {
                self.leave_lines(at);
                true
            }
            None => false,
        }
    }

    /// Replaces the update at `at` with its log lines, in its place.
    fn leave_lines(&mut self, at: usize) {
        let Some(update) = self.updates.remove(at) else {
            return;
        };
        let lines = match update {
            Update::Reading(reading) => {
                self.readings -= 1;
                self.missed += 1;
                reading.into_lines()
            }
            Update::Acted { lines, .. } => lines,
            Update::Passed(passed) => passed
                .log
                .lines()
                .iter()
                .map(|l| (l.kind, l.shown()))
                .collect(),
            Update::Reloaded { mut lines, .. } => {
                lines.insert(0, (LogKind::Note, "rules reloaded".into()));
                lines
            }
            Update::Show(dialog) => {
                self.dialogs -= 1;
                match dialog {
                    Dialog::Message(text) | Dialog::ReloadFailed(text) => {
                        vec![(LogKind::Problem, text)]
                    }
                    Dialog::Written(path) => {
                        vec![(LogKind::Note, format!("the edited rules are in {path}"))]
                    }
                    Dialog::Exported(path) => {
                        vec![(LogKind::Note, format!("the log is in {path}"))]
                    }
                    Dialog::ConfirmAuto
                    | Dialog::Arm(_)
                    | Dialog::Apply(_)
                    | Dialog::Replace(_) => vec![(
                        LogKind::Problem,
                        "a question was not shown: the terminal was not read (ask again)".into(),
                    )],
                }
            }
            // A note dropped for the log's bound: the log would have
            // dropped it too.
            Update::Note(..) => {
                self.notes -= 1;
                Vec::new()
            }
            _ => Vec::new(),
        };
        for (offset, (kind, text)) in lines.into_iter().enumerate() {
            self.updates.insert(at + offset, Update::Note(kind, text));
            self.notes += 1;
        }
    }
}

/// Where the control thread posts updates and the screen thread takes
/// them: posting never blocks (but for the lock, held only to push or to
/// take) and never grows past [`MOST`]. The screen is woken once per
/// batch: `wake` is called only when the backlog was taken since the last
/// wake-up, so the screen's own queue holds at most one wake-up.
pub struct Mailbox<W> {
    backlog: Mutex<(Backlog, bool)>,
    wake: W,
}

impl<W: Fn() -> bool> Mailbox<W> {
    /// An empty mailbox; `wake` tells the screen there is something to
    /// take, and says whether the screen is still there.
    pub fn new(wake: W) -> Self {
        Mailbox {
            backlog: Mutex::new((Backlog::default(), false)),
            wake,
        }
    }

    /// Adds `updates`; whether the screen is still there (as far as is
    /// known: a screen already woken is not asked again).
    pub fn post(&self, updates: Vec<Update>) -> bool {
        let must_wake = {
            let mut guard = self.backlog.lock().unwrap_or_else(PoisonError::into_inner);
            let (backlog, woken) = &mut *guard;
            for update in updates {
                backlog.push(update);
            }
            !std::mem::replace(woken, true)
        };
        !must_wake || (self.wake)()
    }

    /// Everything waiting, in order; the next post wakes the screen again.
    pub fn take(&self) -> Vec<Update> {
        let mut guard = self.backlog.lock().unwrap_or_else(PoisonError::into_inner);
        let (backlog, woken) = &mut *guard;
        *woken = false;
        backlog.take()
    }

    /// How many updates wait.
    pub fn len(&self) -> usize {
        self.backlog
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::sync::Arc;

    use super::*;
    use crate::control::controller::Mode;
    use crate::kernel::Source;
    use crate::tui::app::{App, SourceLabel};
    use crate::tui::local::Local;
    use crate::tui::update::{DecidedReading, ScreenEnd};

    /// A real reading from the simulator, to copy, and a screen's state.
    fn reading_and_app() -> (DecidedReading, App) {
        let text = "name = \"one\"\ncpus = 2\nonline = 1\nmemory_mib = 1024\nduration = \"10:00\"\nseed = 1\n\n[[phases]]\nname = \"busy\"\nstart = \"0:00\"\nthreads = 1\ncpu_per_thread = 1\nworking_set_mib = 100\n";
        let scenario = crate::sim::Scenario::parse("one", text).expect("scenario");
        let guest = crate::sim::SharedGuest::new(crate::sim::Guest::new(&scenario, false));
        let facts = crate::sim::facts(&guest.borrow());
        let mut source = crate::sim::SimSource::new(guest, 1.0);
        let file = crate::rules::SourceFile::new(
            "plug.conf",
            b"UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"2\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n"
                .to_vec(),
        );
        let rules = Arc::new(crate::rules::load(&file, &facts).rules);
        let label = SourceLabel::Sim {
            scenario: "one".into(),
            speed: 1.0,
        };
        let (mut core, app) = Local::new(rules, file, label, Mode::Observe).into_parts();
        let mut reading = None;
        // The first reading has nothing to compare with; the second shows.
        for _ in 0..2 {
            let sample = source.next_sample().expect("a reading").expect("read");
            reading = match core.step(sample) {
                Update::Reading(r) => Some(*r),
                other => panic!("{other:?}"),
            };
        }
        let reading = reading.expect("a reading");
        assert!(reading.frame.is_some(), "the second reading shows");
        (reading, app)
    }

    fn numbered(reading: &DecidedReading, number: usize) -> Update {
        let mut copy = reading.clone();
        if let Some(frame) = copy.frame.as_mut() {
            frame.number = number;
        }
        copy.lines = vec![(LogKind::Note, format!("reading {number}"))];
        Update::Reading(Box::new(copy))
    }

    #[test]
    fn a_screen_never_read_keeps_the_backlog_bounded_and_sees_the_newest_and_the_end() {
        let (reading, mut app) = reading_and_app();
        let wakes = Cell::new(0);
        let mailbox = Mailbox::new(|| {
            wakes.set(wakes.get() + 1);
            true
        });
        let total = 100_000;
        let mut most = 0;
        for n in 0..total {
            let mut batch = vec![
                Update::Status(Some(format!("phase {n}"))),
                numbered(&reading, n),
                Update::OwnCpu(n as f64),
                Update::Working(Some(format!("write {n}"))),
                Update::Working(None),
            ];
            if n % 3 == 0 {
                batch.push(Update::Note(LogKind::Problem, format!("note {n}")));
            }
            if n % 1000 == 0 {
                batch.push(Update::Show(Dialog::Message(format!("dialog {n}"))));
            }
            assert!(mailbox.post(batch), "the screen is there");
            most = most.max(mailbox.len());
        }
        assert!(mailbox.post(vec![Update::Note(LogKind::Note, "put back".into())]));
        assert!(mailbox.post(vec![Update::Ended(ScreenEnd::Quit)]));
        // Posting more after the end (a late progress report) loses nothing.
        assert!(mailbox.post(vec![Update::Working(None)]));
        assert!(most <= MOST, "{most} > {MOST}");
        assert!(
            most <= FRAMES + LOG_LINES + DIALOGS + 8,
            "readings, lines and dialogs at most: {most}"
        );
        assert_eq!(wakes.get(), 1, "one wake-up while the screen was stuck");

        // The screen drains at last, as the screen thread does.
        let mut ended = None;
        for update in mailbox.take() {
            match update {
                Update::Ended(end) => {
                    ended = Some(end);
                    break;
                }
                other => app.apply(other),
            }
        }
        assert!(matches!(ended, Some(ScreenEnd::Quit)), "{ended:?}");
        assert_eq!(app.frame().map(|f| f.number), Some(total - 1), "the newest");
        assert_eq!(app.timeline().frames().len(), FRAMES);
        assert_eq!(app.readings(), total, "every reading counted");
        let log: Vec<&str> = app.log().lines().iter().map(|l| l.text.as_str()).collect();
        assert!(log.contains(&"put back"), "{log:?}");
        assert!(
            log.contains(&"reading 99999"),
            "the newest reading's lines: {:?}",
            &log[log.len().saturating_sub(5)..]
        );
        assert!(
            log.iter().any(|l| l.contains("readings not shown")),
            "says readings were dropped"
        );
        assert!(mailbox.is_empty(), "taken");
        assert!(mailbox.post(vec![Update::Working(None)]));
        assert_eq!(wakes.get(), 2, "once taken, the next post wakes again");
    }

    #[test]
    fn states_keep_only_the_latest_and_answers_only_the_latest_with_every_line() {
        let (reading, _) = reading_and_app();
        let mut backlog = Backlog::default();
        for n in 0..10 {
            backlog.push(Update::Speed(f64::from(n)));
            backlog.push(Update::Working(Some(format!("w{n}"))));
            backlog.push(Update::Acted {
                board: Box::new(reading.board.clone()),
                lines: vec![(LogKind::Note, format!("acted {n}"))],
            });
            backlog.push(Update::Reloaded {
                board: Box::new(reading.board.clone()),
                lines: vec![(LogKind::Note, format!("reloaded {n}"))],
            });
        }
        let taken = backlog.take();
        let count = |want: fn(&Update) -> bool| taken.iter().filter(|u| want(u)).count();
        assert_eq!(count(|u| matches!(u, Update::Speed(_))), 1);
        assert_eq!(count(|u| matches!(u, Update::Working(_))), 1);
        assert_eq!(count(|u| matches!(u, Update::Acted { .. })), 1);
        assert_eq!(count(|u| matches!(u, Update::Reloaded { .. })), 1);
        assert!(matches!(
            taken.iter().find(|u| matches!(u, Update::Speed(_))),
            Some(Update::Speed(s)) if *s == 9.0
        ));
        let notes: Vec<&str> = taken
            .iter()
            .filter_map(|u| match u {
                Update::Note(_, t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        for n in 0..9 {
            assert!(notes.contains(&format!("acted {n}").as_str()), "{notes:?}");
            assert!(
                notes.contains(&format!("reloaded {n}").as_str()),
                "{notes:?}"
            );
        }
        assert!(backlog.is_empty());
    }

    #[test]
    fn dialogs_and_notes_stay_within_what_the_screen_shows() {
        let mut backlog = Backlog::default();
        for n in 0..(LOG_LINES * 3) {
            backlog.push(Update::Note(LogKind::Note, format!("n{n}")));
            backlog.push(Update::Show(Dialog::ConfirmAuto));
        }
        assert!(backlog.len() <= LOG_LINES + DIALOGS, "{}", backlog.len());
        let taken = backlog.take();
        assert!(
            matches!(taken.last(), Some(Update::Show(Dialog::ConfirmAuto))),
            "the latest dialog stays"
        );
        assert!(
            taken.iter().any(
                |u| matches!(u, Update::Note(_, t) if *t == format!("n{}", LOG_LINES * 3 - 1))
            ),
            "the newest note stays"
        );
        assert!(
            !taken
                .iter()
                .any(|u| matches!(u, Update::Note(_, t) if t == "n0")),
            "the oldest note went"
        );
    }

    /// A question waiting for its answer outlives any number of messages
    /// (they go to the log), and one that must go says so in the log.
    #[test]
    fn a_question_is_never_dropped_for_messages_and_never_silently() {
        let mut backlog = Backlog::default();
        backlog.push(Update::Show(Dialog::ConfirmAuto));
        for n in 0..(DIALOGS * 4) {
            backlog.push(Update::Show(Dialog::Message(format!("m{n}"))));
        }
        assert!(backlog.len() <= DIALOGS + LOG_LINES, "{}", backlog.len());
        let taken = backlog.take();
        assert!(
            taken
                .iter()
                .any(|u| matches!(u, Update::Show(Dialog::ConfirmAuto))),
            "the question waits"
        );
        assert!(
            taken
                .iter()
                .any(|u| matches!(u, Update::Note(LogKind::Problem, t) if t == "m0")),
            "an old message is in the log"
        );
        let mut questions = Backlog::default();
        for _ in 0..=DIALOGS {
            questions.push(Update::Show(Dialog::ConfirmAuto));
        }
        let taken = questions.take();
        assert_eq!(
            taken
                .iter()
                .filter(|u| matches!(u, Update::Show(_)))
                .count(),
            DIALOGS
        );
        assert!(
            taken.iter().any(
                |u| matches!(u, Update::Note(LogKind::Problem, t) if t.contains("question was not shown"))
            ),
            "a dropped question says so"
        );
    }

    #[test]
    fn a_screen_gone_is_told_to_the_poster() {
        let mailbox = Mailbox::new(|| false);
        assert!(!mailbox.post(vec![Update::Working(None)]));
    }
}
