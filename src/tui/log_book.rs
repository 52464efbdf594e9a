//! The screen's log: lines said by the control loop and the screen, with a
//! repeat said again in a row counted rather than repeated, bounded in
//! length, plus the Log view's scroll and search text. Kept by the screen
//! thread; the control thread sends it lines ([`super::update::Update`]).

use std::borrow::Cow;
use std::collections::VecDeque;

use crate::kernel::Stamp;
use crate::tui::line_input::one_line;

/// How many lines the log keeps: the oldest go first.
pub const LOG_LINES: usize = 1000;

/// How many of the newest repeats the log keeps the time of, so a line
/// counted on past the interval shown is counted as of it: twice as many
/// as the intervals the screens can go back to.
const REPEATS_KEPT: usize = 2 * crate::tui::timeline::FRAMES;

/// What kind of line the log holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    Decision,
    Action,
    Problem,
    Note,
}

/// One log line; the same line said again in a row is counted, not
/// repeated (observe mode says "would unplug cpu3" every interval).
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    pub stamp: Stamp,
    pub kind: LogKind,
    pub text: String,
    /// How many times in a row it was said (1 for once).
    pub times: u32,
    /// When it was last said.
    pub last: Stamp,
    /// Which line of the log it is (counted from the first ever added),
    /// so its repeats can be found.
    seq: u64,
}

/// A line said again at `stamp`, `times` times: the newest are kept.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Repeat {
    line: u64,
    stamp: Stamp,
    times: u32,
}

impl LogLine {
    /// The line as the Log view shows it: its time, then the text.
    pub fn row_text(&self) -> String {
        format!(
            "{} {}",
            crate::report::time_of_day(self.stamp),
            self.shown()
        )
    }

    /// The text with its repeat count, as shown and exported.
    pub fn shown(&self) -> String {
        if self.times > 1 {
            format!(
                "{} ×{} (last {})",
                self.text,
                self.times,
                crate::report::time_of_day(self.last)
            )
        } else {
            self.text.clone()
        }
    }
}

/// The lines, how far the Log view is scrolled back, and its search.
#[derive(Debug, Default)]
pub struct LogBook {
    lines: VecDeque<LogLine>,
    /// Lines back from the newest, in the Log view (never past the oldest).
    scroll: usize,
    /// The Log view's search (`/`): lines containing this text, any case.
    filter: Option<String>,
    /// How many of the first lines were said before the first reading,
    /// when there was no time to give them yet.
    undated: usize,
    /// How many entries went past the bound: once any did, the oldest
    /// line kept says how many (a note in their place).
    dropped: u64,
    /// The newest repeats, oldest first, at most [`REPEATS_KEPT`]: what a
    /// line counted on after an interval had said by then.
    repeats: VecDeque<Repeat>,
    /// The number the next line added is given.
    next_seq: u64,
}

impl LogBook {
    /// An empty log.
    pub fn new() -> Self {
        LogBook {
            lines: VecDeque::with_capacity(LOG_LINES),
            scroll: 0,
            filter: None,
            undated: 0,
            dropped: 0,
            repeats: VecDeque::new(),
            next_seq: 0,
        }
    }

    /// Adds a line said before the first reading: it is given that
    /// reading's time when it comes ([`LogBook::date_undated`]), so the
    /// log keeps to the one clock the readings have.
    pub fn note_undated(&mut self, kind: LogKind, text: String) {
        let before = self.lines.len();
        self.note(crate::kernel::Stamp::default(), kind, text);
        if self.lines.len() > before {
            self.undated += 1;
        }
    }

    /// Gives the lines said before the first reading that reading's time.
    pub fn date_undated(&mut self, stamp: Stamp) {
        for line in self.lines.iter_mut().take(self.undated) {
            line.stamp = stamp;
            line.last = stamp;
            for r in self.repeats.iter_mut().filter(|r| r.line == line.seq) {
                r.stamp = stamp;
            }
        }
        self.undated = 0;
    }

    /// Adds a line said at `stamp`, or counts it when it repeats the last.
    pub fn note(&mut self, stamp: Stamp, kind: LogKind, text: String) {
        self.take(LogLine {
            stamp,
            kind,
            text,
            times: 1,
            last: stamp,
            seq: 0,
        });
    }

    /// Adds `line` as it was kept elsewhere (its count and its times: the
    /// lines of readings passed by a read-ahead), or adds its count to the
    /// last when it repeats it.
    pub fn take(&mut self, mut line: LogLine) {
        if let Some(last) = self.lines.back_mut()
            && last.kind == line.kind
            && last.text == line.text
        {
            last.times = last.times.saturating_add(line.times);
            last.last = line.last;
            let seq = last.seq;
            self.repeated(seq, line.last, line.times);
            return;
        }
        if self.lines.len() >= LOG_LINES {
            self.drop_oldest();
        }
        line.seq = self.next_seq;
        self.next_seq += 1;
        if line.times > 1 {
            // Counted elsewhere up to its last time (a read-ahead's).
            self.repeated(line.seq, line.last, line.times - 1);
        }
        self.lines.push_back(line);
    }

    /// Keeps that line `seq` was said `times` times more at `stamp`, the
    /// newest [`REPEATS_KEPT`] repeats only.
    fn repeated(&mut self, seq: u64, stamp: Stamp, times: u32) {
        if let Some(r) = self.repeats.back_mut()
            && r.line == seq
            && r.stamp == stamp
        {
            r.times = r.times.saturating_add(times);
            return;
        }
        if self.repeats.len() >= REPEATS_KEPT {
            self.repeats.pop_front();
        }
        self.repeats.push_back(Repeat {
            line: seq,
            stamp,
            times,
        });
    }

    /// `line` as it stood at `until`: counted only as often as it had
    /// been said by then, and last said then at the latest. Borrowed when
    /// nothing was said again after `until`.
    fn as_of<'a>(&self, line: &'a LogLine, until: Stamp) -> Cow<'a, LogLine> {
        if line.last <= until {
            return Cow::Borrowed(line);
        }
        // The repeats are in the order said, so those after `until` are
        // the newest: counted back to the first not after it.
        let mut later = 0u32;
        let mut last = line.stamp;
        for r in self.repeats.iter().rev() {
            if r.stamp > until {
                if r.line == line.seq {
                    later = later.saturating_add(r.times);
                }
            } else if r.line == line.seq {
                last = r.stamp;
                break;
            } else if r.line < line.seq {
                break;
            }
        }
        let times = line.times.saturating_sub(later).max(1);
        Cow::Owned(LogLine {
            times,
            last: if times > 1 { last } else { line.stamp },
            ..line.clone()
        })
    }

    /// Makes room for one more line: the oldest goes, and the line that
    /// stands first says how many went and until when, so the Log never
    /// reads as if it began where it now begins.
    fn drop_oldest(&mut self) {
        // The note on what went stands first once there is one.
        let first = usize::from(self.dropped > 0);
        let mut until = None;
        // The first time, the note takes the place of a second line.
        for _ in 0..2 - first {
            if let Some(gone) = self.lines.remove(first) {
                self.dropped += 1;
                self.undated = self.undated.saturating_sub(1);
                until = Some(gone.last);
            }
        }
        let Some(until) = until else {
            return;
        };
        let note = LogLine {
            stamp: until,
            kind: LogKind::Note,
            text: format!(
                "{} older entries dropped before this time: the Log keeps the newest {LOG_LINES}",
                self.dropped
            ),
            times: 1,
            last: until,
            // Said once: no repeat of it is ever looked for.
            seq: u64::MAX,
        };
        if first == 1 {
            if let Some(line) = self.lines.front_mut() {
                *line = note;
            }
        } else {
            self.lines.push_front(note);
        }
    }

    /// How many entries went past the bound.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Every line kept, oldest first.
    pub fn lines(&self) -> &VecDeque<LogLine> {
        &self.lines
    }

    /// The lines said up to `until` (all of them for `None`), oldest
    /// first, each as it stood then: a line said again after `until` is
    /// counted as of `until` (the reader of a paused or earlier interval
    /// sees nothing newer, in the count and "last" time too).
    pub fn until(&self, until: Option<Stamp>) -> impl DoubleEndedIterator<Item = Cow<'_, LogLine>> {
        self.lines
            .iter()
            .filter(move |l| until.is_none_or(|u| l.stamp <= u))
            .map(move |l| match until {
                Some(u) => self.as_of(l, u),
                None => Cow::Borrowed(l),
            })
    }

    /// Lines back from the newest the Log view shows.
    pub fn scroll(&self) -> usize {
        self.scroll
    }

    /// One line back in time (`back`) or towards now, never past the oldest
    /// nor past `furthest` (the oldest line shown at the top of a full
    /// screen: ↑ beyond it would do nothing, and ↓ would then seem dead).
    pub fn scroll_by(&mut self, back: bool, furthest: usize) {
        self.scroll = if back {
            self.scroll + 1
        } else {
            self.scroll.saturating_sub(1)
        }
        .min(self.lines.len())
        .min(furthest);
    }

    /// Shows the lines from `back` lines before the newest (a page, the
    /// oldest, the newest), never past the oldest.
    pub fn scroll_to(&mut self, back: usize) {
        self.scroll = back.min(self.lines.len());
    }

    /// Whether the Log view lists `line` under the search (every line
    /// while there is none): its text, any case.
    pub fn matches(&self, line: &LogLine) -> bool {
        self.filter
            .as_ref()
            .is_none_or(|f| f.is_empty() || line.shown().to_lowercase().contains(&f.to_lowercase()))
    }

    /// The search text, while there is one.
    pub fn filter(&self) -> Option<&str> {
        self.filter.as_deref()
    }

    /// `/`: a new, empty search, from the newest line.
    pub fn start_search(&mut self) {
        self.filter = Some(String::new());
        self.scroll = 0;
    }

    /// Adds typed or pasted text to the search, made one line.
    pub fn type_text(&mut self, text: &str) {
        self.filter
            .get_or_insert_with(String::new)
            .push_str(&one_line(text));
        self.scroll = 0;
    }

    /// A key while the search is typed; whether it is still being typed
    /// (Enter keeps a non-empty search, Esc or Ctrl-C drops it, as Ctrl-C
    /// closes the export prompt and the what-if editor).
    pub fn search_key(&mut self, key: crossterm::event::KeyEvent) -> bool {
        use crossterm::event::{KeyCode, KeyModifiers};
        let text = self.filter.get_or_insert_with(String::new);
        let chord = key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let editing = match key.code {
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.filter = None;
                false
            }
            // Ctrl or Alt with a letter types nothing.
            KeyCode::Char(_) if chord => true,
            KeyCode::Char(c) => {
                text.push(c);
                true
            }
            KeyCode::Backspace => {
                text.pop();
                true
            }
            KeyCode::Enter => {
                if text.is_empty() {
                    self.filter = None;
                }
                false
            }
            KeyCode::Esc => {
                self.filter = None;
                false
            }
            _ => true,
        };
        self.scroll = 0;
        editing
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyEvent};

    fn at(seconds: i64) -> Stamp {
        Stamp::new(seconds, 0)
    }

    #[test]
    fn a_repeat_in_a_row_is_counted_and_the_log_keeps_its_newest_lines() {
        let mut log = LogBook::new();
        log.note(at(1), LogKind::Decision, "would unplug".into());
        log.note(at(2), LogKind::Decision, "would unplug".into());
        log.note(at(3), LogKind::Note, "would unplug".into());
        assert_eq!(log.lines().len(), 2, "another kind is another line");
        assert_eq!(log.lines()[0].times, 2);
        assert_eq!(log.lines()[0].last, at(2));
        for i in 0..LOG_LINES + 5 {
            log.note(at(4), LogKind::Note, format!("line {i}"));
        }
        assert_eq!(log.lines().len(), LOG_LINES);
        assert_eq!(
            log.lines().back().map(|l| l.text.as_str()),
            Some(format!("line {}", LOG_LINES + 4).as_str())
        );
        assert_eq!(log.until(Some(at(3))).count(), 0, "the early lines went");
        // The first line says how many went (2 + 5 + 1 for its own place).
        assert_eq!(log.dropped(), 8);
        assert_eq!(
            log.lines().front().map(|l| l.text.as_str()),
            Some("8 older entries dropped before this time: the Log keeps the newest 1000")
        );
        assert_eq!(
            log.lines().get(1).map(|l| l.text.as_str()),
            Some("line 6"),
            "the oldest kept follows it"
        );
    }

    #[test]
    fn a_line_said_again_after_a_time_is_counted_as_of_that_time() {
        let mut log = LogBook::new();
        for t in 1..=5 {
            log.note(at(t), LogKind::Decision, "minimum cpu limit".into());
        }
        log.note(at(6), LogKind::Note, "other".into());
        log.note(at(6), LogKind::Note, "other".into());
        log.note(at(7), LogKind::Note, "other".into());
        let shown = |u: i64| -> Vec<(String, u32, Stamp)> {
            log.until(Some(at(u)))
                .map(|l| (l.text.clone(), l.times, l.last))
                .collect()
        };
        let min = |times, last| ("minimum cpu limit".to_string(), times, at(last));
        assert_eq!(shown(1), vec![min(1, 1)]);
        assert_eq!(shown(3), vec![min(3, 3)]);
        assert_eq!(
            shown(6),
            vec![min(5, 5), ("other".to_string(), 2, at(6))],
            "a repeat in the same interval counts in it"
        );
        assert_eq!(shown(7)[1].1, 3);
        assert_eq!(log.until(None).map(|l| l.times).collect::<Vec<_>>(), [5, 3]);
        // A line counted elsewhere (a read-ahead's) then said again.
        let mut ahead = LogBook::new();
        for t in 10..=12 {
            ahead.note(at(t), LogKind::Note, "limit".into());
        }
        let mut log = LogBook::new();
        for l in ahead.lines() {
            log.take(l.clone());
        }
        log.note(at(13), LogKind::Note, "limit".into());
        log.note(at(14), LogKind::Note, "limit".into());
        let l = log.until(Some(at(13))).next().map(|l| (l.times, l.last));
        assert_eq!(l, Some((4, at(13))));
        let l = log.until(Some(at(12))).next().map(|l| (l.times, l.last));
        assert_eq!(l, Some((3, at(12))));
    }

    #[test]
    fn scrolling_stops_at_the_ends_and_an_empty_search_is_dropped() {
        let mut log = LogBook::new();
        log.scroll_by(false, 9);
        assert_eq!(log.scroll(), 0);
        log.note(at(1), LogKind::Note, "a".into());
        for _ in 0..5 {
            log.scroll_by(true, 9);
        }
        assert_eq!(log.scroll(), 1, "never past the oldest line");
        log.note(at(2), LogKind::Note, "b".into());
        log.note(at(3), LogKind::Note, "c".into());
        for _ in 0..5 {
            log.scroll_by(true, 2);
        }
        assert_eq!(log.scroll(), 2, "never past the top of a full screen");
        log.scroll_by(false, 2);
        assert_eq!(log.scroll(), 1, "so ↓ moves at once");
        log.start_search();
        assert_eq!((log.filter(), log.scroll()), (Some(""), 0));
        assert!(!log.search_key(KeyEvent::from(KeyCode::Enter)));
        assert_eq!(log.filter(), None, "Enter on nothing keeps no search");
        log.start_search();
        log.type_text("two\nlines");
        assert_eq!(log.filter(), Some("two lines"), "made one line");
        assert!(log.search_key(KeyEvent::from(KeyCode::Backspace)));
        assert!(!log.search_key(KeyEvent::from(KeyCode::Esc)));
        assert_eq!(log.filter(), None);
        // Ctrl-C drops the search as Esc does; a chord types nothing.
        use crossterm::event::KeyModifiers;
        log.start_search();
        assert!(log.search_key(KeyEvent::from(KeyCode::Char('a'))));
        assert!(log.search_key(KeyEvent::new(KeyCode::Char('x'), KeyModifiers::ALT)));
        assert_eq!(log.filter(), Some("a"));
        assert!(!log.search_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)));
        assert_eq!(log.filter(), None);
    }
}
