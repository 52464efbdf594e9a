//! What drawing works out and keeps from frame to frame, with what it was
//! worked out from: the cells of a list's entries (each drawn again only
//! when it, the width or the colours changed, copied as it was otherwise)
//! and the units of a rule set's values (worked out once per node). Memos, not state: what is
//! drawn stays a pure function of the app's state, as each key holds
//! everything the kept value was worked out from.

use std::borrow::Borrow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};

use crate::report::trace;
use crate::report::units::ValueUnit;
use crate::rules::{NodeId, RuleSet};

/// The units of the values of one rule set's nodes, each worked out once
/// ([`trace::unit_of`]) and kept until the rules asked about are others
/// (held, so another rule set can never pass for them).
#[derive(Debug, Default)]
pub struct UnitMemo {
    kept: RefCell<Option<RuleUnits>>,
}

/// A rule set, held, and the units worked out for its nodes.
type RuleUnits = (Arc<RuleSet>, HashMap<NodeId, ValueUnit>);

impl UnitMemo {
    /// The unit of the value at `node` of `rules`.
    pub fn unit_of(&self, rules: &Arc<RuleSet>, node: NodeId) -> ValueUnit {
        let Ok(mut kept) = self.kept.try_borrow_mut() else {
            return trace::unit_of(rules, node);
        };
        if !kept.as_ref().is_some_and(|(r, _)| Arc::ptr_eq(r, rules)) {
            *kept = Some((Arc::clone(rules), HashMap::new()));
        }
        match kept.as_mut() {
            Some((_, units)) => *units
                .entry(node)
                .or_insert_with(|| trace::unit_of(rules, node)),
            None => trace::unit_of(rules, node),
        }
    }
}

/// The cells each entry of a list was drawn as (its own rows, at the
/// list's width), kept while the entry is among those drawn: a list that
/// gains an entry draws that one alone. The log's panel on the overview.
#[derive(Debug)]
pub struct EntryMemo<K, E> {
    kept: RefCell<Option<Entries<K, E>>>,
}

/// What all kept entries were drawn with (`K`: the width, the colours),
/// and each entry with the rows it counts for and its cells.
type Entries<K, E> = (K, Vec<(E, usize, Buffer)>);

impl<K, E> Default for EntryMemo<K, E> {
    fn default() -> Self {
        EntryMemo {
            kept: RefCell::new(None),
        }
    }
}

impl<K: PartialEq, E: PartialEq + Clone> EntryMemo<K, E> {
    /// Puts into `buf` the newest entries that fit in `area`'s rows, the
    /// oldest of them at the top: `newest` gives them newest first, `draw`
    /// draws one (with `look`) as the rows it counts for and its cells,
    /// at most as wide as `area`; each is drawn only when not kept for
    /// `look`. An entry whose rows would overflow `area` ends the list;
    /// cells past `area`'s bottom are cut (that entry is kept too, as the
    /// next frame asks for it again). `area` must be empty in `buf`.
    pub fn put<B: Borrow<E>>(
        &self,
        buf: &mut Buffer,
        area: Rect,
        look: K,
        newest: impl Iterator<Item = B>,
        mut draw: impl FnMut(&E) -> (usize, Buffer),
    ) {
        let mut scratch = None;
        let mut borrowed = self.kept.try_borrow_mut();
        let kept = match borrowed.as_deref_mut() {
            Ok(kept) => kept,
            Err(_) => &mut scratch,
        };
        let mut old = match kept.take() {
            Some((k, entries)) if k == look => entries,
            _ => Vec::new(),
        };
        let room = usize::from(area.height);
        let mut used = 0;
        let mut kept_now: Vec<(E, usize, Buffer)> = Vec::new();
        let mut fit = 0;
        for entry in newest {
            let entry = entry.borrow();
            let (rows, cells) = match old.iter().position(|(e, _, _)| e == entry) {
                Some(i) => {
                    let (_, rows, cells) = old.swap_remove(i);
                    (rows, cells)
                }
                None => draw(entry),
            };
            used += rows;
            kept_now.push((entry.clone(), rows, cells));
            if used > room {
                break;
            }
            fit += 1;
        }
        let mut y = area.y;
        for (_, _, cells) in kept_now[..fit].iter().rev() {
            copy_at(cells, buf, Position::new(area.x, y), area);
            y = y.saturating_add(cells.area.height);
        }
        *kept = Some((look, kept_now));
    }
}

/// `from`'s cells into `to` with `from`'s top left corner at `origin`,
/// cut to `clip` and `to`'s area.
fn copy_at(from: &Buffer, to: &mut Buffer, origin: Position, clip: Rect) {
    let place = Rect::new(origin.x, origin.y, from.area.width, from.area.height);
    let area = place.intersection(clip).intersection(to.area);
    let width = usize::from(area.width);
    for y in area.top()..area.bottom() {
        let src =
            usize::from(y - place.y) * usize::from(from.area.width) + usize::from(area.x - place.x);
        let dst = usize::from(y - to.area.y) * usize::from(to.area.width)
            + usize::from(area.x - to.area.x);
        if let (Some(src), Some(dst)) = (
            from.content.get(src..src + width),
            to.content.get_mut(dst..dst + width),
        ) {
            dst.clone_from_slice(src);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Style};

    /// An entry drawn as its text on one row, or two when it ends in `+`.
    fn drawn(draws: &RefCell<Vec<String>>) -> impl FnMut(&String) -> (usize, Buffer) + '_ {
        move |text: &String| {
            draws.borrow_mut().push(text.clone());
            let rows: u16 = if text.ends_with('+') { 2 } else { 1 };
            let mut b = Buffer::empty(Rect::new(0, 0, 6, rows));
            b.set_string(0, rows - 1, text, Style::default().fg(Color::Red));
            (usize::from(rows), b)
        }
    }

    /// The newest entries that fit, oldest at the top; an entry kept is
    /// not drawn again, another look draws all again.
    #[test]
    fn draws_only_the_entries_not_kept() {
        let memo = EntryMemo::default();
        let draws = RefCell::new(Vec::new());
        let screen = Rect::new(0, 0, 10, 5);
        let panel = Rect::new(2, 1, 6, 3);
        let list: Vec<String> = ["a", "b+", "c"].map(String::from).to_vec();
        let mut first = Buffer::empty(screen);
        memo.put(&mut first, panel, 1, list.iter().rev(), drawn(&draws));
        // "a" overflows the panel: drawn to know its rows, and kept.
        assert_eq!(*draws.borrow(), ["c", "b+", "a"]);
        let mut expected = Buffer::empty(screen);
        let red = Style::default().fg(Color::Red);
        expected.set_string(2, 2, "b+", red);
        expected.set_string(2, 3, "c", red);
        assert_eq!(first, expected);
        let longer: Vec<String> = ["a", "b+", "c", "d"].map(String::from).to_vec();
        let mut second = Buffer::empty(screen);
        memo.put(&mut second, panel, 1, longer.iter().rev(), drawn(&draws));
        assert_eq!(*draws.borrow(), ["c", "b+", "a", "d"]);
        // "b+" no longer fits below "c" and "d"; the rows left stay empty.
        let mut expected = Buffer::empty(screen);
        expected.set_string(2, 1, "c", red);
        expected.set_string(2, 2, "d", red);
        assert_eq!(second, expected);
        let mut third = Buffer::empty(screen);
        memo.put(&mut third, panel, 2, longer.iter().rev(), drawn(&draws));
        assert_eq!(draws.borrow().len(), 7);
        assert_eq!(third, second);
    }

    /// An entry taller than the panel ends the list; rows past the
    /// screen's edge are cut.
    #[test]
    fn an_entry_too_tall_ends_the_list_and_the_edge_cuts() {
        let memo = EntryMemo::default();
        let draws = RefCell::new(Vec::new());
        let screen = Rect::new(0, 0, 4, 2);
        let list: Vec<String> = ["x+", "y"].map(String::from).to_vec();
        let mut buf = Buffer::empty(screen);
        memo.put(
            &mut buf,
            Rect::new(1, 0, 6, 2),
            (),
            list.iter().rev(),
            drawn(&draws),
        );
        assert_eq!(buf[(1, 0)].symbol(), "y");
        assert_eq!(buf[(3, 0)].symbol(), " ");
        assert_eq!(buf[(1, 1)].symbol(), " ");
        let mut small = Buffer::empty(screen);
        memo.put(
            &mut small,
            Rect::new(2, 1, 6, 1),
            (),
            list.iter().rev(),
            drawn(&draws),
        );
        assert_eq!(small[(2, 1)].symbol(), "y");
    }
}
