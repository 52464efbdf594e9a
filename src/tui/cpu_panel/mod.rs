//! The CPU panel's state: the per-CPU table or compact meters, the order
//! of the CPUs, and the page shown. Kept apart from the drawing so the
//! keys (PgUp/PgDn, `c`, `b`) and the screen agree on what a page holds.

mod grid;
mod order;

pub use grid::{Cell, MeterGrid};
pub use order::{CpuOrder, arrange, busy_ticks};

use crate::kernel::deltas::CpuLoad;

/// Which way the panel shows the CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpuLayout {
    /// The table while every CPU fits in it, the meters when not: no CPU
    /// is ever out of sight unasked.
    #[default]
    Auto,
    /// One row a CPU with every tick column, paged when they do not fit.
    Table,
    /// Columns of bars, as many CPUs as fit at once.
    Meters,
}

/// Columns kept blank at the meters' right, between them and the next
/// panel.
pub const MARGIN: u16 = 1;

/// The inside of the CPU panel (below its top border), in cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PanelSize {
    pub width: u16,
    pub height: u16,
}

/// What the panel shows in its area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuShape {
    /// One row a CPU: `rows` rows below the column heads and `all`.
    Table { rows: usize },
    /// Meters below the `all` row.
    Meters(MeterGrid),
}

impl CpuShape {
    /// What `layout` shows of `loads` in a panel of `size`.
    pub fn of(layout: CpuLayout, size: PanelSize, loads: &[CpuLoad]) -> CpuShape {
        let rows = usize::from(size.height).saturating_sub(2);
        let table = CpuShape::Table { rows };
        match layout {
            CpuLayout::Table => table,
            CpuLayout::Auto if loads.len() <= rows => table,
            CpuLayout::Auto | CpuLayout::Meters => {
                let width = usize::from(size.width.saturating_sub(MARGIN));
                let rows = usize::from(size.height).saturating_sub(1);
                let digits = grid::digits(loads.iter().map(CpuLoad::id).max().unwrap_or(0));
                CpuShape::Meters(
                    MeterGrid::fit(width, rows, loads.len(), digits)
                        .unwrap_or_else(|| MeterGrid::paged(width, rows, digits)),
                )
            }
        }
    }

    /// How many of `count` CPUs one page shows: all of them when they
    /// fit, else a page with a row kept for "… more".
    pub fn page(&self, count: usize) -> usize {
        match self {
            CpuShape::Table { rows } if count > *rows => rows.saturating_sub(1).max(1),
            CpuShape::Meters(grid) if grid.paged => grid.capacity().max(1),
            CpuShape::Table { .. } | CpuShape::Meters(_) => count.max(1),
        }
    }
}

/// The first CPU (by place in the order shown) of the page that holds the
/// `anchor`-th of `count` CPUs, pages being `page` CPUs long.
pub fn page_start(anchor: usize, count: usize, page: usize) -> usize {
    let page = page.max(1);
    anchor.min(count.saturating_sub(1)) / page * page
}

/// The panel's layout, order and page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuPanel {
    layout: CpuLayout,
    order: CpuOrder,
    /// A place in the order the page shown holds. The page is found from
    /// it each time (never kept as a first row), so a resize, the other
    /// layout or fewer CPUs cannot leave a stale scroll with empty rows.
    anchor: usize,
    /// The panel's size on the screen, as last drawn: what keys page by.
    size: PanelSize,
}

impl Default for CpuPanel {
    fn default() -> Self {
        CpuPanel {
            layout: CpuLayout::Auto,
            order: CpuOrder::Number,
            anchor: 0,
            // The panel on an 80×24 screen, until the screen says.
            size: PanelSize {
                width: 40,
                height: 9,
            },
        }
    }
}

impl CpuPanel {
    /// Table, meters or whichever fits.
    pub fn layout(&self) -> CpuLayout {
        self.layout
    }

    /// The order of the CPUs.
    pub fn order(&self) -> CpuOrder {
        self.order
    }

    /// The place of the first CPU shown on a page of `page` of `count`.
    pub fn first(&self, count: usize, page: usize) -> usize {
        page_start(self.anchor, count, page)
    }

    /// The screen's CPU panel is now `size`.
    pub fn set_size(&mut self, size: PanelSize) {
        self.size = size;
    }

    /// What the panel shows of `loads` on the screen as last drawn.
    pub fn shape(&self, loads: &[CpuLoad]) -> CpuShape {
        CpuShape::of(self.layout, self.size, loads)
    }

    /// The next page of `loads`, if there is one.
    pub fn page_down(&mut self, loads: &[CpuLoad]) {
        let page = self.shape(loads).page(loads.len());
        let next = self.first(loads.len(), page) + page;
        if next < loads.len() {
            self.anchor = next;
        }
    }

    /// The page before, if there is one.
    pub fn page_up(&mut self, loads: &[CpuLoad]) {
        let page = self.shape(loads).page(loads.len());
        self.anchor = self.first(loads.len(), page).saturating_sub(page);
    }

    /// The table if the meters are shown, the meters if the table is.
    pub fn toggle_layout(&mut self, loads: &[CpuLoad]) {
        self.layout = match self.shape(loads) {
            CpuShape::Table { .. } => CpuLayout::Meters,
            CpuShape::Meters(_) => CpuLayout::Table,
        };
    }

    /// Busiest first, or by number again.
    pub fn toggle_order(&mut self) {
        self.order = self.order.toggled();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offline(count: u32) -> Vec<CpuLoad> {
        (0..count).map(|id| CpuLoad::Offline { id }).collect()
    }

    const SMALL: PanelSize = PanelSize {
        width: 40,
        height: 9,
    };
    const LARGE: PanelSize = PanelSize {
        width: 62,
        height: 29,
    };

    #[test]
    fn auto_shows_the_table_while_every_cpu_fits_then_meters() {
        let shape = |n, size| CpuShape::of(CpuLayout::Auto, size, &offline(n));
        assert_eq!(shape(7, SMALL), CpuShape::Table { rows: 7 });
        assert!(matches!(shape(8, SMALL), CpuShape::Meters(g) if !g.paged));
        assert!(matches!(shape(64, SMALL), CpuShape::Meters(g) if !g.paged));
        assert!(matches!(shape(256, LARGE), CpuShape::Meters(g) if !g.paged));
        assert!(matches!(shape(256, SMALL), CpuShape::Meters(g) if g.paged));
        assert!(matches!(
            CpuShape::of(CpuLayout::Meters, SMALL, &offline(2)),
            CpuShape::Meters(_)
        ));
        assert_eq!(
            CpuShape::of(CpuLayout::Table, SMALL, &offline(64)),
            CpuShape::Table { rows: 7 }
        );
    }

    #[test]
    fn pages_cover_every_cpu_once_whatever_the_anchor() {
        for count in 0..40usize {
            for page in 1..12usize {
                for anchor in 0..50usize {
                    let first = page_start(anchor, count, page);
                    assert_eq!(first % page, 0, "a page starts where PgDn puts it");
                    assert!(first < count.max(1), "{count} {page} {anchor}");
                    if count > 0 {
                        assert!(first <= anchor.min(count - 1), "holds the anchor");
                        assert!(anchor.min(count - 1) < first + page);
                    }
                }
            }
        }
    }

    #[test]
    fn paging_stops_at_both_ends() {
        let loads = offline(20);
        let mut panel = CpuPanel::default();
        panel.toggle_layout(&loads);
        assert_eq!(
            panel.layout(),
            CpuLayout::Table,
            "meters fit, so c shows the table"
        );
        let page = panel.shape(&loads).page(loads.len());
        assert_eq!(page, 6, "7 rows, one kept for … more");
        for _ in 0..10 {
            panel.page_down(&loads);
        }
        assert_eq!(panel.first(20, page), 18, "the last page, never past it");
        for _ in 0..10 {
            panel.page_up(&loads);
        }
        assert_eq!(panel.first(20, page), 0);
        panel.page_up(&[]);
        panel.page_down(&[]);
        assert_eq!(panel.first(0, 1), 0, "no CPUs: nowhere to go");
    }

    #[test]
    fn a_larger_panel_shows_the_page_holding_the_cpus_shown_before() {
        let loads = offline(64);
        let mut panel = CpuPanel::default();
        panel.toggle_layout(&loads);
        assert_eq!(panel.layout(), CpuLayout::Table);
        for _ in 0..5 {
            panel.page_down(&loads);
        }
        let small = panel.shape(&loads).page(64);
        let before = panel.first(64, small);
        assert_eq!(before, 30);
        panel.set_size(LARGE);
        let large = panel.shape(&loads).page(64);
        let after = panel.first(64, large);
        assert_eq!(after % large, 0, "a page start of the new size");
        assert!(after <= before && before < after + large, "{after} {large}");
        // All fit: the first page, whatever was paged before.
        panel.set_size(PanelSize {
            width: 62,
            height: 200,
        });
        assert_eq!(panel.first(64, panel.shape(&loads).page(64)), 0);
        // Fewer CPUs than the page shown before: still a page with CPUs.
        panel.set_size(SMALL);
        assert_eq!(panel.first(3, panel.shape(&offline(3)).page(3)), 0);
    }

    #[test]
    fn c_switches_between_what_is_shown_and_the_other() {
        let mut panel = CpuPanel::default();
        let big = offline(64);
        panel.toggle_layout(&big);
        assert_eq!(panel.layout(), CpuLayout::Table);
        panel.toggle_layout(&big);
        assert_eq!(panel.layout(), CpuLayout::Meters);
        let mut panel = CpuPanel::default();
        panel.toggle_layout(&offline(2));
        assert_eq!(panel.layout(), CpuLayout::Meters);
        panel.toggle_order();
        assert_eq!(panel.order(), CpuOrder::Busy);
    }
}
