//! The fleet screen's state and the only place it changes: keys become
//! [`FleetAction`]s ([`KEYS`] is what the key line says of them), answers
//! arrive as whole [`Fleet`]s or [`GuestDetail`]s, and [`FleetApp::update`] returns
//! what to ask Prometheus next. No I/O and no clock here: the shell
//! ([`super::screen`]) does both.

use super::diff::{self, RulesDiffLine};
use super::fetch::GuestDetail;
use super::model::{DriftGroup, Fleet, FleetColumn, drift, order};
use super::query::without_credentials;
use crate::tui::line_input::LineInput;
use crate::tui::list_rows;

/// The longest filter, in characters.
const FILTER_LONGEST: usize = 64;

/// What the screen shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FleetView {
    Table,
    Drift,
    /// The selected drift group's file against the most common one's,
    /// scrolled like the main screen's long lists.
    Diff,
    GuestDetail,
}

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FleetAction {
    Quit,
    Up,
    Down,
    PageUp,
    PageDown,
    /// Home: the top of what scrolls.
    Home,
    /// End: its end.
    End,
    Open,
    Back,
    Refresh,
    SortNext,
    SortReverse,
    Filter,
    Drift,
    Diff,
    Earlier,
    Later,
    /// `?`: the help over the screen, or closes it.
    Help,
}

/// The views a key does something in everywhere.
const EVERY_VIEW: &[FleetView] = &[
    FleetView::Table,
    FleetView::Drift,
    FleetView::Diff,
    FleetView::GuestDetail,
];

/// Every key of the screen as the key line shows it: (keys, views where
/// it does something, what it does). `super::screen` maps the keys.
pub const KEYS: &[(&str, &[FleetView], &str)] = &[
    ("q", EVERY_VIEW, "quit"),
    // Second, so the key line says it at any width that shows a key.
    ("?", EVERY_VIEW, "help"),
    ("Enter", &[FleetView::Table], "open"),
    ("/", &[FleetView::Table], "filter"),
    ("s", &[FleetView::Table], "sort"),
    ("S", &[FleetView::Table], "reverse"),
    ("d", &[FleetView::Table], "drift"),
    ("↑↓", &[FleetView::Drift], "group"),
    ("D", &[FleetView::Drift], "diff"),
    ("↑↓", &[FleetView::Diff], "scroll"),
    ("←→", &[FleetView::GuestDetail], "window"),
    ("r", &[FleetView::Table, FleetView::GuestDetail], "refresh"),
    ("Esc", EVERY_VIEW, "back"),
];

/// What the app wants from Prometheus.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// The whole fleet, now.
    Fleet,
    /// One guest over the `window` seconds that end `back` seconds
    /// before the moment it is asked: the asker's clock places it, so
    /// each refresh of the detail moves its window on with the time, as
    /// the list's refreshes do.
    GuestDetail {
        job: String,
        instance: String,
        back: f64,
        window: f64,
    },
}

/// How the last answer went, for the header.
#[derive(Debug, Clone, PartialEq)]
pub enum Link {
    /// Nothing answered yet.
    Waiting,
    /// The last refresh answered, `partial` queries failing.
    Up {
        partial: usize,
        of: usize,
        took_ms: u64,
    },
    /// The last refresh got nothing: why, and what is shown is older.
    Down(String),
}

/// Everything the screen draws.
#[derive(Debug, Clone)]
pub struct FleetApp {
    /// The Prometheus asked (shown in the header).
    pub prometheus: String,
    /// The last fleet that answered (kept while Prometheus is down).
    pub fleet: Fleet,
    /// How the last answer went.
    pub link: Link,
    /// The wall time of the latest answer or failure (set by the shell).
    pub now: f64,
    /// A request is out.
    pub busy: bool,
    /// Refreshes answered so far (the header counts them, so a reader
    /// of the screen sees each one).
    pub refreshes: u64,
    /// The column the rows are sorted by.
    pub sort: FleetColumn,
    /// The sort turned around (`S`).
    pub reverse: bool,
    /// The filter (`/`): a substring of any text column.
    pub filter: LineInput,
    /// The filter is being typed.
    pub filtering: bool,
    /// Indexes of the shown guests, in order (kept in step with the rest).
    pub rows: Vec<usize>,
    /// The selected row, an index into `rows`.
    pub selected: usize,
    /// The first row shown (scrolling).
    pub offset: usize,
    /// The view shown.
    pub view: FleetView,
    /// The rule-file groups of the last fleet, the most common first.
    pub drift: Vec<DriftGroup>,
    /// The selected drift group.
    pub drift_selected: usize,
    /// The diff of the selected drift group's file against the majority's
    /// (the diff view), or why there is none (the drift view says it).
    pub diff: Option<Result<Vec<RulesDiffLine>, String>>,
    /// Lines of the diff scrolled past (its first line shown).
    pub diff_scroll: usize,
    /// The guest in detail, once it answered.
    pub detail: Option<GuestDetail>,
    /// How far before now the detail's window ends, in windows.
    pub shift: u32,
    /// The window of the detail view, in seconds.
    pub window: f64,
    /// Seconds without a reading after which a guest is stopped.
    pub stale_after: f64,
    /// Rows the table has room for (set by the shell from the terminal).
    pub page: usize,
    /// Lines of the diff the diff view shows (set by the shell from the
    /// terminal's rows: `super::table::diff_room`; 17 at 80×24).
    pub diff_rows: usize,
    /// Where guests' rule files are gathered on this machine (`--rules-root`).
    pub rules_root: Option<std::path::PathBuf>,
    /// The `?` help is over the screen: keys other than `?`, Esc (which
    /// close it) and `q` do nothing until it is closed, so a key read
    /// while looking up another does not act behind the help.
    pub help: bool,
}

impl FleetApp {
    /// An empty screen waiting for its first answer.
    pub fn new(prometheus: &str, window: f64, stale_after: f64) -> FleetApp {
        FleetApp {
            prometheus: without_credentials(prometheus),
            fleet: Fleet::default(),
            link: Link::Waiting,
            now: 0.0,
            busy: false,
            refreshes: 0,
            sort: FleetColumn::Trouble,
            reverse: false,
            filter: LineInput::default(),
            filtering: false,
            rows: Vec::new(),
            selected: 0,
            offset: 0,
            view: FleetView::Table,
            drift: Vec::new(),
            drift_selected: 0,
            diff: None,
            diff_scroll: 0,
            detail: None,
            shift: 0,
            window,
            stale_after,
            page: 20,
            diff_rows: 17,
            rules_root: None,
            help: false,
        }
    }

    /// A refresh came back.
    pub fn on_fleet(&mut self, fleet: Fleet, now: f64) {
        self.busy = false;
        self.now = now;
        self.refreshes += 1;
        let h = &fleet.health;
        if h.down() {
            self.link = Link::Down(h.failed.first().cloned().unwrap_or_default());
            return;
        }
        self.link = Link::Up {
            partial: h.failed.len(),
            of: h.queries,
            took_ms: h.took_ms,
        };
        let keep = self.selected_key();
        self.fleet = fleet;
        self.drift = drift(&self.fleet);
        self.reorder();
        if let Some(k) = keep
            && let Some(pos) = self.rows.iter().position(|&i| {
                let g = &self.fleet.guests[i];
                (g.job.as_str(), g.instance.as_str()) == (k.0.as_str(), k.1.as_str())
            })
        {
            self.selected = pos;
        }
        self.clamp();
    }

    /// A detail came back.
    pub fn on_detail(&mut self, detail: GuestDetail, now: f64) {
        self.busy = false;
        self.now = now;
        // In the detail view only the detail is asked: its answer is the
        // refresh the header counts and times, as the list's is (its own
        // failures are in the view), and what says Prometheus is back.
        self.refreshes += 1;
        if detail.health.down() {
            self.link = Link::Down(detail.health.failed.first().cloned().unwrap_or_default());
        } else {
            self.link = Link::Up {
                partial: 0,
                of: detail.health.queries,
                took_ms: detail.health.took_ms,
            };
        }
        self.detail = Some(detail);
    }

    fn selected_key(&self) -> Option<(String, String)> {
        let g = &self.fleet.guests[*self.rows.get(self.selected)?];
        Some((g.job.clone(), g.instance.clone()))
    }

    fn reorder(&mut self) {
        self.rows = order(
            &self.fleet,
            self.sort,
            self.reverse,
            self.filter.text(),
            self.stale_after,
        );
        self.clamp();
    }

    fn clamp(&mut self) {
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
        let page = self.page.max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + page {
            self.offset = self.selected + 1 - page;
        }
    }

    fn detail_request(&self) -> Option<Request> {
        let (job, instance) = match &self.detail {
            Some(d) => (d.job.clone(), d.instance.clone()),
            None => self.selected_key()?,
        };
        Some(Request::GuestDetail {
            job,
            instance,
            back: f64::from(self.shift) * self.window,
            window: self.window,
        })
    }

    /// A typed character while the filter is being typed; `None` ends it
    /// (Enter keeps it, Esc clears it: `keep`).
    pub fn filter_key(&mut self, c: Option<char>, keep: bool) {
        match c {
            Some(c) => {
                self.filter_change(|input| {
                    input.insert_str(c.encode_utf8(&mut [0; 4]));
                });
            }
            None => {
                self.filtering = false;
                if !keep {
                    self.filter = LineInput::default();
                }
                self.refilter();
            }
        }
    }

    /// An editing key ([`LineInput::key`]: Backspace, Delete, the arrows,
    /// Home/End, Ctrl-A/E/U) while the filter is typed.
    pub fn filter_edit(&mut self, key: crossterm::event::KeyEvent) {
        self.filter_change(|input| {
            input.key(key);
        });
    }

    /// Pasted text, made one line, into the filter being typed.
    pub fn filter_paste(&mut self, text: &str) {
        self.filter_change(|input| {
            input.insert_str(text);
        });
    }

    /// Edits the filter, cut to [`FILTER_LONGEST`] characters, and shows
    /// what it matches.
    fn filter_change(&mut self, edit: impl FnOnce(&mut LineInput)) {
        edit(&mut self.filter);
        if self.filter.text().chars().count() > FILTER_LONGEST {
            self.filter = LineInput::new(
                self.filter
                    .text()
                    .chars()
                    .take(FILTER_LONGEST)
                    .collect::<String>(),
            );
        }
        self.refilter();
    }

    /// The table from the top, as the filter now narrows it.
    fn refilter(&mut self) {
        self.selected = 0;
        self.offset = 0;
        self.reorder();
    }

    /// Applies `action`; what to ask Prometheus for, if anything.
    pub fn update(&mut self, action: FleetAction) -> Option<Request> {
        if self.help {
            if matches!(action, FleetAction::Help | FleetAction::Back) {
                self.help = false;
            }
            return None;
        }
        match (self.view, action) {
            (_, FleetAction::Quit) => None,
            (_, FleetAction::Help) => {
                self.help = true;
                None
            }
            (FleetView::GuestDetail, FleetAction::Refresh) => self.detail_request(),
            (_, FleetAction::Refresh) => Some(Request::Fleet),
            (
                FleetView::Table,
                FleetAction::Up
                | FleetAction::Down
                | FleetAction::PageUp
                | FleetAction::PageDown
                | FleetAction::Home
                | FleetAction::End,
            ) => {
                self.select(action);
                None
            }
            (FleetView::Table, FleetAction::SortNext) => {
                self.sort = self.sort.next();
                self.reorder();
                None
            }
            (FleetView::Table, FleetAction::SortReverse) => {
                self.reverse = !self.reverse;
                self.reorder();
                None
            }
            (FleetView::Table, FleetAction::Filter) => {
                self.filtering = true;
                None
            }
            (FleetView::Table, FleetAction::Open) => {
                if self.rows.is_empty() {
                    return None;
                }
                self.view = FleetView::GuestDetail;
                self.shift = 0;
                self.detail = None;
                self.detail_request()
            }
            (FleetView::Table, FleetAction::Drift) => {
                self.view = FleetView::Drift;
                self.diff = None;
                None
            }
            (FleetView::Drift, FleetAction::Up) => {
                self.drift_selected = self.drift_selected.saturating_sub(1);
                self.diff = None;
                None
            }
            (FleetView::Drift, FleetAction::Down) => {
                self.drift_selected =
                    (self.drift_selected + 1).min(self.drift.len().saturating_sub(1));
                self.diff = None;
                None
            }
            (FleetView::Drift, FleetAction::Diff | FleetAction::Open) => {
                self.open_diff();
                None
            }
            (FleetView::Diff, action) => {
                self.diff_key(action);
                None
            }
            (FleetView::GuestDetail, FleetAction::Earlier) => {
                self.shift = self.shift.saturating_add(1).min(1000);
                self.detail_request()
            }
            (FleetView::GuestDetail, FleetAction::Later) => {
                self.shift = self.shift.saturating_sub(1);
                self.detail_request()
            }
            // The list is not asked while the detail is open: back from
            // it, the list is asked at once rather than shown as it was.
            (FleetView::Drift | FleetView::GuestDetail, FleetAction::Back) => {
                let from_detail = self.view == FleetView::GuestDetail;
                self.view = FleetView::Table;
                self.detail = None;
                from_detail.then_some(Request::Fleet)
            }
            (FleetView::Table, FleetAction::Back) => {
                self.filter = LineInput::default();
                self.reorder();
                None
            }
            _ => None,
        }
    }

    /// A key that moves the table's selection: a row, a page, to the
    /// first or the last.
    fn select(&mut self, action: FleetAction) {
        let page = self.page.max(1);
        self.selected = match action {
            FleetAction::Up => self.selected.saturating_sub(1),
            FleetAction::Down => self.selected + 1,
            FleetAction::PageUp => self.selected.saturating_sub(page),
            FleetAction::PageDown => self.selected + page,
            FleetAction::Home => 0,
            _ => self.rows.len(),
        };
        self.clamp();
    }

    /// `D`: the diff view at the diff's first change, or why there is no
    /// diff (said in the drift view).
    fn open_diff(&mut self) {
        let diff = self.drift_diff();
        if let Ok(lines) = &diff {
            self.view = FleetView::Diff;
            self.diff_scroll = first_change(lines);
        }
        self.diff = Some(diff);
        self.scroll_diff(|now, _, _| now);
    }

    /// A key on the diff: ↑↓ PgUp PgDn Home End scroll it, Esc goes back
    /// to the groups, to pick another.
    fn diff_key(&mut self, action: FleetAction) {
        match action {
            FleetAction::Up => self.scroll_diff(|now, _, _| now.saturating_sub(1)),
            FleetAction::Down => self.scroll_diff(|now, _, _| now + 1),
            FleetAction::PageUp | FleetAction::PageDown => {
                let down = action == FleetAction::PageDown;
                self.scroll_diff(|now, heights, room| list_rows::paged(heights, room, now, down));
            }
            FleetAction::Home => self.diff_scroll = 0,
            FleetAction::End => self.scroll_diff(|_, _, _| usize::MAX),
            FleetAction::Back => {
                self.view = FleetView::Drift;
                self.diff = None;
            }
            _ => {}
        }
    }

    /// Moves the diff's first line shown to `to(now, heights, room)`: the
    /// Log's paging ([`list_rows`]) over lines one row each, never past
    /// the top of a full screen of the diff's last lines.
    fn scroll_diff(&mut self, to: impl FnOnce(usize, &[usize], usize) -> usize) {
        let Some(Ok(lines)) = &self.diff else { return };
        let heights = vec![1; lines.len()];
        let room = self.diff_rows.max(1);
        let furthest = list_rows::furthest(&heights, room);
        self.diff_scroll = to(self.diff_scroll.min(furthest), &heights, room).min(furthest);
    }

    /// The diff of the selected group's file against the largest group's
    /// (both read on this machine).
    fn drift_diff(&self) -> Result<Vec<RulesDiffLine>, String> {
        let pick = |group: &DriftGroup| -> Result<String, String> {
            let &i = group.members.first().ok_or("an empty group")?;
            let g = &self.fleet.guests[i];
            let path = g
                .rules_file
                .as_deref()
                .ok_or_else(|| format!("{} exports no rule file path", g.instance))?;
            diff::read_guest_file(self.rules_root.as_deref(), &g.instance, path)
        };
        let base = self.drift.first().ok_or("no guests")?;
        let other = self
            .drift
            .get(self.drift_selected.max(1))
            .ok_or("every guest runs the same rule file")?;
        Ok(diff::diff(&pick(base)?, &pick(other)?))
    }
}

/// Where a diff opens: at its first changed line that cpuplugd reads as a
/// setting (a line with `=` that is not a comment), so a first screen
/// shows the rules that differ rather than the files' header comments;
/// at the first changed line of any kind when only comments differ.
fn first_change(diff: &[RulesDiffLine]) -> usize {
    fn changed(l: &RulesDiffLine) -> Option<&str> {
        match l {
            RulesDiffLine::Same(_) => None,
            RulesDiffLine::Removed(t) | RulesDiffLine::Added(t) => Some(t),
        }
    }
    let setting = |t: &str| t.contains('=') && !t.trim_start().starts_with('#');
    diff.iter()
        .position(|l| changed(l).is_some_and(setting))
        .or_else(|| diff.iter().position(|l| changed(l).is_some()))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_the_url_are_not_shown() {
        assert_eq!(
            without_credentials("http://me:secret@prom:9090/p"),
            "http://prom:9090/p"
        );
        assert_eq!(without_credentials("http://prom:9090"), "http://prom:9090");
        assert_eq!(
            without_credentials("http://prom:9090/a@b"),
            "http://prom:9090/a@b"
        );
    }
    use crate::fleet::model::{FleetGuest, Health};

    fn fleet(n: usize) -> Fleet {
        Fleet {
            guests: (0..n)
                .map(|i| FleetGuest {
                    job: "plugtop".into(),
                    instance: format!("g{i:02}"),
                    last_reading: Some(100.0),
                    ..FleetGuest::default()
                })
                .collect(),
            at: 100.0,
            health: Health {
                queries: 17,
                ..Health::default()
            },
        }
    }

    #[test]
    fn the_selection_follows_its_guest_across_refreshes() {
        let mut app = FleetApp::new("http://p", 3600.0, 60.0);
        app.on_fleet(fleet(5), 100.0);
        app.update(FleetAction::Down);
        app.update(FleetAction::Down);
        let mut next = fleet(5);
        next.guests[4].flapping = true;
        app.on_fleet(next, 115.0);
        assert_eq!(app.fleet.guests[app.rows[app.selected]].instance, "g02");
    }

    /// The filter is the one line input: Backspace deletes the character
    /// before the cursor (once typed as a `'\u{8}'` character), the arrows
    /// move it, and a hostile paste (a megabyte, line breaks, escape
    /// sequences) becomes at most [`FILTER_LONGEST`] plain characters.
    #[test]
    fn the_filter_edits_as_a_line_and_a_paste_stays_bounded() {
        use crossterm::event::{KeyCode, KeyEvent};
        let mut app = FleetApp::new("http://p", 3600.0, 60.0);
        app.on_fleet(fleet(12), 100.0);
        app.update(FleetAction::Filter);
        for c in "g11".chars() {
            app.filter_edit(KeyEvent::from(KeyCode::Char(c)));
        }
        assert_eq!(app.rows.len(), 1);
        app.filter_edit(KeyEvent::from(KeyCode::Backspace));
        assert_eq!(app.filter.text(), "g1");
        assert_eq!(app.rows.len(), 2, "g10, g11");
        app.filter_edit(KeyEvent::from(KeyCode::Left));
        app.filter_edit(KeyEvent::from(KeyCode::Char('0')));
        assert_eq!(app.filter.text(), "g01");
        assert_eq!(app.rows.len(), 1);
        app.filter_key(None, false);
        assert!(!app.filtering && app.filter.text().is_empty());
        app.update(FleetAction::Filter);
        let hostile = "\x1b[31mq\r\n\u{202e}".repeat(1 << 18);
        app.filter_paste(&hostile);
        assert_eq!(app.filter.text().chars().count(), FILTER_LONGEST);
        assert!(app.filter.text().chars().all(|c| "[31mq ".contains(c)));
        assert!(app.rows.is_empty());
    }

    /// nu53 F12: a diff opens at the first setting that differs, past
    /// differing comments; at the first comment when only comments differ.
    #[test]
    fn a_diff_opens_at_its_first_differing_setting() {
        let d = diff::diff(
            "# a\nUPDATE=\"1\"\nB=\"2\"\n",
            "# b\nUPDATE=\"1\"\nB=\"3\"\n",
        );
        assert_eq!(
            d[first_change(&d)],
            RulesDiffLine::Removed("B=\"2\"".into())
        );
        let d = diff::diff("# a\nUPDATE=\"1\"\n", "# b\nUPDATE=\"1\"\n");
        assert_eq!(first_change(&d), 0);
        let d = diff::diff("A=1\n", "A=1\n");
        assert_eq!(first_change(&d), 0);
    }

    #[test]
    fn a_refresh_that_fails_keeps_the_last_fleet() {
        let mut app = FleetApp::new("http://p", 3600.0, 60.0);
        app.on_fleet(fleet(3), 100.0);
        let mut down = Fleet::default();
        down.health.queries = 17;
        down.health.failed = vec!["x".into(); 17];
        app.on_fleet(down, 115.0);
        assert_eq!(app.rows.len(), 3);
        assert!(matches!(app.link, Link::Down(_)));
    }

    #[test]
    fn a_detail_that_answers_after_one_that_did_not_says_prometheus_is_back() {
        let mut app = FleetApp::new("http://p", 3600.0, 60.0);
        app.on_fleet(fleet(3), 100.0);
        app.update(FleetAction::Open);
        let mut down = GuestDetail::default();
        down.health.queries = 7;
        down.health.failed = vec!["x".into(); 7];
        app.on_detail(down, 115.0);
        assert!(matches!(app.link, Link::Down(_)));
        let mut back = GuestDetail::default();
        back.health.queries = 7;
        app.on_detail(back, 130.0);
        assert!(matches!(app.link, Link::Up { .. }), "{:?}", app.link);
    }

    #[test]
    fn enter_asks_for_the_guests_window_and_arrows_move_it() {
        let mut app = FleetApp::new("http://p", 3600.0, 60.0);
        app.on_fleet(fleet(3), 100.0);
        let r = app.update(FleetAction::Open);
        assert!(matches!(r, Some(Request::GuestDetail { back, .. }) if back == 0.0));
        let r = app.update(FleetAction::Earlier);
        assert!(matches!(r, Some(Request::GuestDetail { back, .. }) if back == 3600.0));
        // Back in the list, the list is asked at once.
        assert_eq!(app.update(FleetAction::Back), Some(Request::Fleet));
    }
}
