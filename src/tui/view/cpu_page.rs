//! The page of CPUs the CPU panel shows, table or meters alike, and the
//! line that says what paging would show.

use crate::kernel::deltas::CpuLoad;
use crate::tui::app::App;
use crate::tui::cpu_panel::CpuShape;

/// One page of the CPUs, in the order shown, and how many are off it.
pub struct Page<'a> {
    pub cpus: &'a [&'a CpuLoad],
    pub above: usize,
    pub below: usize,
}

impl<'a> Page<'a> {
    /// The page of `order` the panel shows as `shape`, where the user
    /// paged to.
    pub fn of(app: &App, order: &'a [&'a CpuLoad], shape: &CpuShape) -> Page<'a> {
        let count = order.len();
        let size = shape.page(count);
        let first = app.selection().cpus().first(count, size);
        let cpus = order.get(first..(first + size).min(count)).unwrap_or(&[]);
        Page {
            cpus,
            above: first,
            below: count - first - cpus.len(),
        }
    }
}

/// "… 3 more below (PgDn)": what paging would show, with `hint` added
/// when it still fits in `width`.
pub fn more_line(page: &Page<'_>, hint: &str, width: usize) -> Option<String> {
    let text = |hint: &str| match (page.above, page.below) {
        (0, 0) => None,
        (0, below) => Some(format!("… {below} more below (PgDn{hint})")),
        (above, 0) => Some(format!("… {above} above (PgUp{hint})")),
        (above, below) => Some(format!(
            "… {below} more below, {above} above (PgDn/PgUp{hint})"
        )),
    };
    text(hint)
        .filter(|t| t.chars().count() <= width)
        .or_else(|| text(""))
}
