//! How many entries of a list fit on the screen: the rows a line takes
//! once wrapped as the screen wraps it, and how far one page moves. The
//! Log and Flips views draw with it and PgUp/PgDn page with it, so a page
//! moves by what the screen shows and never skips an entry.

/// Rows `text` takes on a screen `width` columns wide, wrapped as
/// [`hanging`] wraps it (at least one).
pub fn rows(text: &str, width: u16) -> usize {
    // A line that fits takes one row without wrapping it.
    if crate::report::words::cols(text) <= usize::from(width.max(1)) {
        return 1;
    }
    hanging(text, width).len().max(1)
}

/// `text` in rows of at most `width` columns, word by word, every row
/// after the first indented two blanks deeper than the text is: a
/// continuation never reads as an entry of its own (the Log's entries
/// start with their time, Flips' with a change or two blanks).
pub fn hanging(text: &str, width: u16) -> Vec<String> {
    let width = usize::from(width.max(1));
    if crate::report::words::cols(text) <= width {
        return vec![text.to_string()];
    }
    let lead = text.len() - text.trim_start_matches(' ').len();
    let indent = (lead + 2).min(width / 2);
    let body = &text[lead..];
    crate::report::words::wrap_hanging(body, width - lead, width - indent)
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            let pad = if i == 0 { lead } else { indent };
            format!("{}{row}", " ".repeat(pad))
        })
        .collect()
}

/// How many entries, taken in order with these heights, fit in `room`
/// rows; at least one, so that a page always moves.
pub fn fitting(heights: impl IntoIterator<Item = usize>, room: usize) -> usize {
    let mut used = 0;
    let mut count = 0;
    for h in heights {
        used += h;
        if used > room {
            break;
        }
        count += 1;
    }
    count.max(1)
}

/// How far one page moves when `shown` entries fit: all of them but one,
/// which stays on screen so the eye keeps its place (as `less` keeps a
/// line); at least one.
pub fn page(shown: usize) -> usize {
    shown.saturating_sub(1).max(1)
}

/// The furthest back a list can scroll: its oldest entry at the top of a
/// full screen. `heights` are the entries' rows, newest first.
pub fn furthest(heights: &[usize], room: usize) -> usize {
    heights
        .len()
        .saturating_sub(fitting(heights.iter().rev().copied(), room))
}

/// Where a list scrolled `scroll` entries back from its newest goes with
/// one page back (`back`) or on: the entry at the far end of the screen
/// stays on it, at the near end. `heights` are the entries' rows, newest
/// first; never further back than [`furthest`].
pub fn paged(heights: &[usize], room: usize, scroll: usize, back: bool) -> usize {
    if heights.is_empty() {
        return 0;
    }
    let furthest = furthest(heights, room);
    let now = scroll.min(furthest);
    let next = if back {
        now + page(fitting(heights[now..].iter().copied(), room))
    } else {
        now.saturating_sub(page(fitting(heights[..=now].iter().rev().copied(), room)))
    };
    next.min(furthest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_takes_the_rows_it_wraps_to_and_a_page_always_moves() {
        assert_eq!(rows("short", 80), 1);
        assert_eq!(rows("", 80), 1, "an empty line still takes its row");
        assert_eq!(rows(&"word ".repeat(40), 80), 3);
        assert_eq!(
            rows("anything", 0),
            8,
            "no width: one column, never a panic"
        );
        assert_eq!(fitting([2, 2, 2], 5), 2);
        assert_eq!(
            fitting([9], 5),
            1,
            "an entry taller than the room still shows"
        );
        assert_eq!(fitting(std::iter::empty(), 5), 1);
        assert_eq!(fitting([1, 1, 1], 10), 3);
        assert_eq!((page(0), page(1), page(2), page(20)), (1, 1, 1, 19));
    }

    /// The entries a screen of `room` rows shows scrolled `scroll` back.
    fn on_screen(heights: &[usize], room: usize, scroll: usize) -> std::ops::Range<usize> {
        let shown = fitting(heights[scroll..].iter().copied(), room);
        scroll..(scroll + shown).min(heights.len())
    }

    #[test]
    fn paging_back_and_on_keeps_one_entry_and_skips_none() {
        // Entries of one to three rows, on a screen of seven.
        let heights: Vec<usize> = (0..40).map(|i| 1 + i % 3).collect();
        let room = 7;
        let furthest = furthest(&heights, room);
        assert!(on_screen(&heights, room, furthest).end == heights.len());
        let mut scroll = 0;
        let mut seen = vec![false; heights.len()];
        loop {
            let here = on_screen(&heights, room, scroll);
            here.clone().for_each(|i| seen[i] = true);
            let next = paged(&heights, room, scroll, true);
            if next == scroll {
                break;
            }
            assert!(
                on_screen(&heights, room, next).contains(&(here.end - 1)),
                "the oldest shown stays on screen"
            );
            scroll = next;
        }
        assert_eq!(scroll, furthest, "paging back ends at the oldest");
        assert!(seen.iter().all(|s| *s), "no entry skipped");
        loop {
            let next = paged(&heights, room, scroll, false);
            if next == scroll {
                break;
            }
            assert!(
                on_screen(&heights, room, next).contains(&scroll),
                "the newest shown stays on screen"
            );
            scroll = next;
        }
        assert_eq!(scroll, 0, "paging on ends at the newest");
        // Nothing listed, or a scroll past the end: nothing out of range.
        assert_eq!(paged(&[], room, 5, true), 0);
        assert!(
            paged(&heights, room, 10_000, false) < furthest,
            "from the oldest"
        );
        assert_eq!(
            paged(&[20, 20], room, 0, true),
            1,
            "entries taller than the screen"
        );
    }
}
