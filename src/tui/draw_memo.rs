//! What drawing works out and keeps from frame to frame, with what it was
//! worked out from: a panel's cells (drawn again only when what they were
//! drawn from changed, copied as they were otherwise) and the units of a
//! rule set's values (worked out once per node). Memos, not state: what is
//! drawn stays a pure function of the app's state, as each key holds
//! everything the kept value was worked out from.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

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

/// The cells a panel was last drawn as, and its key then.
#[derive(Debug)]
pub struct PanelMemo<K> {
    kept: RefCell<Option<(K, Buffer)>>,
}

impl<K> Default for PanelMemo<K> {
    fn default() -> Self {
        PanelMemo {
            kept: RefCell::new(None),
        }
    }
}

impl<K: PartialEq> PanelMemo<K> {
    /// Puts the panel into `buf` at `area`: the cells kept when they were
    /// drawn at this `area` for this `key`, or else what `draw` draws into
    /// an empty buffer of `area`, kept for the next frame. `area` must be
    /// empty in `buf` (nothing drawn there yet in this frame), as `draw`
    /// draws on empty cells.
    pub fn put(&self, buf: &mut Buffer, area: Rect, key: K, draw: impl FnOnce(&mut Buffer)) {
        let area = area.intersection(buf.area);
        let Ok(mut kept) = self.kept.try_borrow_mut() else {
            let mut fresh = Buffer::empty(area);
            draw(&mut fresh);
            copy(&fresh, buf);
            return;
        };
        if let Some((k, cells)) = kept.as_ref()
            && *k == key
            && cells.area == area
        {
            copy(cells, buf);
            return;
        }
        let mut fresh = Buffer::empty(area);
        draw(&mut fresh);
        copy(&fresh, buf);
        *kept = Some((key, fresh));
    }
}

/// `from`'s cells into `to` at the same places (`from`'s area inside `to`'s).
fn copy(from: &Buffer, to: &mut Buffer) {
    let area = from.area.intersection(to.area);
    let width = usize::from(area.width);
    for y in area.top()..area.bottom() {
        let at = |b: &Buffer| {
            usize::from(y - b.area.y) * usize::from(b.area.width) + usize::from(area.x - b.area.x)
        };
        let (src, dst) = (at(from), at(to));
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

    fn drawn(text: &str) -> impl FnOnce(&mut Buffer) + '_ {
        move |b: &mut Buffer| {
            let area = b.area;
            b.set_string(area.x, area.y, text, Style::default().fg(Color::Red));
        }
    }

    /// The same key gives the cells drawn for it, without drawing; another
    /// key, or another place, draws again.
    #[test]
    fn draws_again_only_for_another_key_or_place() {
        let memo = PanelMemo::default();
        let screen = Rect::new(0, 0, 10, 4);
        let panel = Rect::new(2, 1, 5, 2);
        let mut first = Buffer::empty(screen);
        memo.put(&mut first, panel, 1, drawn("abc"));
        let mut expected = Buffer::empty(screen);
        expected.set_string(2, 1, "abc", Style::default().fg(Color::Red));
        assert_eq!(first, expected);
        let mut again = Buffer::empty(screen);
        memo.put(&mut again, panel, 1, |_| panic!("drawn although kept"));
        assert_eq!(again, expected);
        let mut other = Buffer::empty(screen);
        memo.put(&mut other, panel, 2, drawn("xy"));
        assert_eq!(other[(2, 1)].symbol(), "x");
        assert_eq!(other[(4, 1)].symbol(), " ");
        let moved = Rect::new(3, 2, 5, 2);
        let mut elsewhere = Buffer::empty(screen);
        memo.put(&mut elsewhere, moved, 2, drawn("xy"));
        assert_eq!(elsewhere[(3, 2)].symbol(), "x");
        assert_eq!(elsewhere[(2, 1)].symbol(), " ");
    }

    /// A panel partly off the screen is cut at the screen's edge.
    #[test]
    fn a_panel_past_the_edge_is_cut() {
        let memo = PanelMemo::default();
        let screen = Rect::new(0, 0, 4, 2);
        let mut buf = Buffer::empty(screen);
        memo.put(&mut buf, Rect::new(2, 1, 6, 3), (), drawn("abcdef"));
        assert_eq!(buf[(2, 1)].symbol(), "a");
        assert_eq!(buf[(3, 1)].symbol(), "b");
        let mut again = Buffer::empty(screen);
        memo.put(&mut again, Rect::new(2, 1, 6, 3), (), |_| panic!("drawn"));
        assert_eq!(again, buf);
    }
}
