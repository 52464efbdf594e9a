//! PgUp, PgDn, Home and End on the Log and Flips views: a page moves by
//! what the screen shows ([`crate::tui::list_rows`]), so no entry is skipped.

use super::{App, Command, KeyAction, View, loads};
use crate::tui::{flip_rows, list_rows};

impl App {
    /// PgUp (`up`) or PgDn: a page of the list the view shows (the CPUs
    /// outside the Log and Flips).
    pub(super) fn page(&mut self, up: bool) {
        match self.selection.view() {
            View::Log => {
                let heights = self.log_heights();
                let room = usize::from(self.list_area.1);
                self.log
                    .scroll_to(list_rows::paged(&heights, room, self.log.scroll(), up));
            }
            View::Flips => {
                let (heights, room) = self.flips_heights();
                let scroll = self.selection.flips_scroll();
                self.selection
                    .set_flips_scroll(list_rows::paged(&heights, room, scroll, up));
            }
            _ if up => self.selection.cpus_mut().page_up(loads(&self.timeline)),
            _ => self.selection.cpus_mut().page_down(loads(&self.timeline)),
        }
    }

    /// Home (`top`) or End: the oldest or newest of the Log or the Flips;
    /// in the other views the oldest or newest interval, as `g` and `G`.
    pub(super) fn go_to_end(&mut self, top: bool) -> Option<Command> {
        match self.selection.view() {
            View::Log => {
                let heights = self.log_heights();
                let room = usize::from(self.list_area.1);
                self.log.scroll_to(if top {
                    list_rows::furthest(&heights, room)
                } else {
                    0
                });
            }
            View::Flips => {
                let (heights, room) = self.flips_heights();
                self.selection.set_flips_scroll(if top {
                    list_rows::furthest(&heights, room)
                } else {
                    0
                });
            }
            _ if top => return self.update(KeyAction::Oldest),
            _ => return self.update(KeyAction::Newest),
        }
        None
    }

    /// The rows each line the Log view lists takes, newest first.
    pub(super) fn log_heights(&self) -> Vec<usize> {
        let width = self.list_area.0;
        self.log_shown()
            .filter(|l| self.log.matches(l))
            .rev()
            .map(|l| list_rows::rows(&l.row_text(), width))
            .collect()
    }

    /// The rows each change the Flips view lists takes, newest first, and
    /// the rows left for them under what the watch found (less the rows
    /// that say how many are older and newer).
    pub(super) fn flips_heights(&self) -> (Vec<usize>, usize) {
        let (width, rows) = self.list_area;
        let found = flip_rows::findings(self.flips_shown(), &self.hints);
        let room = usize::from(rows).saturating_sub(flip_rows::height(&found, width) + 2);
        let heights = self
            .flips_shown()
            .changes()
            .iter()
            .rev()
            .map(|c| flip_rows::height(&flip_rows::change(c), width))
            .collect();
        (heights, room)
    }
}
