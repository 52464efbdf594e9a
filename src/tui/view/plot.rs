//! One graph of the Graphs view: which kept values it draws (a window that
//! follows the interval shown), the scale of its bars, and the time axis
//! under the graphs.

use crate::kernel::Stamp;
use crate::tui::graph_scale::GraphScale;

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// Which of the kept values a graph draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The newest values left out on the right: the window went back in
    /// time to show the interval shown.
    pub newer: usize,
    /// Columns drawn; the rest, on the left, is empty.
    pub drawn: usize,
}

impl Window {
    /// The window of a graph `width` columns wide over `kept` values that
    /// shows the interval `back` intervals before the newest: ending at the
    /// newest while that one is in it, else moved back half a width at a
    /// time, so stepping back moves the picture seldom and the interval
    /// shown never leaves it.
    pub fn showing(kept: usize, width: usize, back: usize) -> Window {
        let width = width.max(1);
        let half = (width / 2).max(1);
        let newer = ((back / half).saturating_sub(1) * half).min(kept.saturating_sub(width));
        Window {
            newer,
            drawn: kept.saturating_sub(newer).min(width),
        }
    }

    /// The values drawn, oldest first, of a series kept oldest first.
    pub fn of<'a>(&self, values: &'a [f64]) -> &'a [f64] {
        let end = values.len().saturating_sub(self.newer);
        &values[end.saturating_sub(self.drawn)..end]
    }

    /// How many intervals before the newest the value drawn in `column`
    /// (from the left of a graph `width` wide) is, if one is drawn there.
    pub fn back_at(&self, width: usize, column: usize) -> Option<usize> {
        let from_right = width.checked_sub(column + 1)?;
        (from_right < self.drawn).then_some(self.newer + from_right)
    }

    /// The column of the value `back` intervals before the newest, if drawn.
    pub fn column(&self, width: usize, back: usize) -> Option<usize> {
        let from_right = back.checked_sub(self.newer)?;
        (from_right < self.drawn && from_right < width).then(|| width - 1 - from_right)
    }
}

/// The lowest and highest finite value, if there is one.
pub fn range(values: &[f64]) -> Option<(f64, f64)> {
    values
        .iter()
        .filter(|v| v.is_finite())
        .fold(None, |range, v| match range {
            None => Some((*v, *v)),
            Some((lo, hi)) => Some((lo.min(*v), hi.max(*v))),
        })
}

/// The values at the bottom and the top of the bars for the values
/// `drawn` under `scale`: `natural` is what the quantity can reach when it
/// has a bound (shares 0..1), `kept` every value kept (the fixed scale of
/// a quantity without a bound reaches the highest one). `None` when
/// nothing drawn is a number.
pub fn bounds(
    scale: GraphScale,
    drawn: &[f64],
    kept: &[f64],
    natural: Option<(f64, f64)>,
) -> Option<(f64, f64)> {
    let (lo, hi) = range(drawn)?;
    Some(match scale {
        GraphScale::FromZero => (lo.min(0.0), hi.max(0.0)),
        GraphScale::Range => (lo, hi),
        GraphScale::Fixed => {
            let (klo, khi) = range(kept).unwrap_or((lo, hi));
            let (nlo, nhi) = natural.unwrap_or((0.0, 0.0));
            (klo.min(nlo).min(0.0), khi.max(nhi).max(0.0))
        }
    })
}

/// `values` as bars `width` columns wide between `lo` (the lowest bar)
/// and `hi` (the full one), the newest at the right edge: fewer values
/// are padded on the left, and a value that could not be computed is a
/// gap, not a shifted column.
pub fn bars(values: &[f64], width: usize, (lo, hi): (f64, f64)) -> String {
    let tail = &values[values.len().saturating_sub(width)..];
    let mut out = " ".repeat(width - tail.len());
    out.extend(tail.iter().map(|v| {
        if !v.is_finite() {
            return ' ';
        }
        let level = if hi > lo {
            ((v - lo) / (hi - lo) * 7.0).round().clamp(0.0, 7.0) as usize
        } else {
            0
        };
        BARS[level]
    }));
    out
}

/// The time axis under graphs `width` columns wide: each label is the
/// time of day (UTC) of the column its arrow points at. The newest column
/// drawn is labelled at the right edge, the others every 11 columns
/// leftwards; `stamp_at(back)` is the time of the interval `back` before
/// the newest, when it is still kept.
pub fn time_axis(
    window: Window,
    width: usize,
    stamp_at: impl Fn(usize) -> Option<Stamp>,
) -> String {
    let label = |stamp: Stamp| crate::report::time_of_day(stamp);
    let mut row: Vec<char> = vec![' '; width];
    let first = width - window.drawn.min(width);
    let len = 9;
    // The newest drawn: right-aligned, its arrow last.
    let mut free_until = width;
    if let Some(stamp) = window.back_at(width, width - 1).and_then(&stamp_at)
        && width >= len
    {
        let text: Vec<char> = format!("{}↑", label(stamp)).chars().collect();
        row[width - len..].copy_from_slice(&text);
        free_until = width - len;
    }
    // Then leftwards, each arrow first, two blanks between labels.
    let mut column = free_until.checked_sub(len + 2);
    while let Some(c) = column.filter(|c| *c >= first) {
        if let Some(stamp) = window.back_at(width, c).and_then(&stamp_at) {
            let text: Vec<char> = format!("↑{}", label(stamp)).chars().collect();
            row[c..c + len].copy_from_slice(&text);
        }
        column = c.checked_sub(len + 2);
    }
    row.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_ends_at_the_newest_until_the_interval_shown_leaves_it() {
        let w = Window::showing(600, 54, 0);
        assert_eq!(
            w,
            Window {
                newer: 0,
                drawn: 54
            }
        );
        assert_eq!(Window::showing(600, 54, 53).newer, 0);
        // Past the left edge: back half a width, the interval shown drawn.
        for back in 0..600 {
            let w = Window::showing(600, 54, back);
            let column = w.column(54, back);
            assert!(column.is_some(), "{back} back is not drawn: {w:?}");
            assert_eq!(column.and_then(|c| w.back_at(54, c)), Some(back));
        }
        // Fewer kept than the width: all drawn, padded on the left.
        let w = Window::showing(20, 54, 19);
        assert_eq!(
            w,
            Window {
                newer: 0,
                drawn: 20
            }
        );
        assert_eq!(w.column(54, 19), Some(34));
        assert_eq!(w.back_at(54, 33), None, "the padding is no interval");
        assert_eq!(w.of(&[1.0; 20]).len(), 20);
        // Nothing kept, no width: nothing drawn, nothing out of range.
        let w = Window::showing(0, 0, 5);
        assert_eq!((w.drawn, w.of(&[]).len(), w.column(0, 5)), (0, 0, None));
    }

    #[test]
    fn steady_data_is_a_steady_bar_from_zero_and_swings_only_when_zoomed() {
        let steady = [0.184, 0.2, 0.19, 0.184, 0.2];
        let from_zero = bounds(GraphScale::FromZero, &steady, &steady, Some((0.0, 1.0)));
        assert_eq!(from_zero, Some((0.0, 0.2)));
        let drawn = bars(&steady, 5, from_zero.unwrap_or_default());
        assert_eq!(drawn, "▇██▇█", "steady, near the top");
        let zoomed = bounds(GraphScale::Range, &steady, &steady, Some((0.0, 1.0)));
        assert_eq!(bars(&steady, 5, zoomed.unwrap_or_default()), "▁█▄▁█");
        let fixed = bounds(GraphScale::Fixed, &steady, &steady, Some((0.0, 1.0)));
        assert_eq!(fixed, Some((0.0, 1.0)));
        assert_eq!(bars(&steady, 5, fixed.unwrap_or_default()), "▂▂▂▂▂");
        // Without a natural bound, fixed reaches the highest value kept,
        // and a value past a natural bound stretches it.
        let kept = [0.0, 50.0, 10.0];
        assert_eq!(
            bounds(GraphScale::Fixed, &kept[2..], &kept, None),
            Some((0.0, 50.0))
        );
        assert_eq!(
            bounds(GraphScale::Fixed, &[9.0], &[9.0], Some((0.0, 4.0))),
            Some((0.0, 9.0))
        );
        // Below zero, from zero means from the lowest value.
        assert_eq!(
            bounds(GraphScale::FromZero, &[-2.0, 3.0], &[], None),
            Some((-2.0, 3.0))
        );
        assert_eq!(bounds(GraphScale::FromZero, &[f64::NAN], &[], None), None);
        assert_eq!(
            bars(&[f64::NAN, 0.0], 4, (0.0, 0.0)),
            "   ▁",
            "a gap, padding"
        );
    }

    #[test]
    fn the_time_axis_labels_the_newest_at_the_edge_and_never_overlaps() {
        let stamp = |back: usize| Some(Stamp::new(43_200 - back as i64, 0));
        let w = Window::showing(600, 54, 0);
        let axis = time_axis(w, 54, stamp);
        assert_eq!(axis.chars().count(), 54);
        assert!(axis.ends_with("12:00:00↑"), "{axis:?}");
        // Each left label's arrow sits at the column of its time.
        for (c, ch) in axis.chars().enumerate() {
            if ch == '↑' && c + 1 < 54 {
                let text: String = axis.chars().skip(c + 1).take(8).collect();
                let back = w.back_at(54, c).unwrap_or(usize::MAX);
                assert_eq!(
                    Some(text),
                    stamp(back).map(crate::report::time_of_day),
                    "{axis:?}"
                );
            }
        }
        assert!(
            !axis.contains("↑↑") && axis.matches('↑').count() >= 4,
            "{axis:?}"
        );
        // Narrower than a label, or nothing kept: blank, never a panic.
        assert_eq!(time_axis(w, 5, stamp), "     ");
        assert_eq!(time_axis(Window::showing(0, 54, 0), 54, stamp).trim(), "");
        // A time no longer kept is not made up.
        assert_eq!(time_axis(w, 54, |_| None).trim(), "");
    }
}
