//! How CPU meters are laid out in a panel: as many columns of bars as it
//! takes to show every CPU at once (as htop and btop do for big machines),
//! each cell as rich as the room allows, filled column by column.

/// Blank columns between two columns of meters.
const GAP: usize = 1;
/// The share after a bar: " 100%".
const PERCENT: usize = 5;
/// The shortest bar a named cell (`cpu12 ███ 45%`) is drawn with.
const NAMED_BAR: usize = 8;
/// The shortest bar a numbered cell (`12 ███ 45%`) is drawn with.
const NUMBERED_BAR: usize = 3;

/// What one meter shows besides its bar: the richer, the fewer fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// `cpu12 ████···· 45%`: a column or two, as on a small guest.
    Named,
    /// `12 ███· 45%`: the number and the share.
    Numbered,
    /// `12██`: the number and a short bar only, for the biggest guests.
    Bare,
}

impl Cell {
    /// The richest cell that fits in `width` columns with CPU numbers of
    /// `digits` digits, and its bar's length.
    fn richest(width: usize, digits: usize) -> Option<(Cell, usize)> {
        let named = 3 + digits + 1 + PERCENT;
        let numbered = digits + 1 + PERCENT;
        if width >= named + NAMED_BAR {
            Some((Cell::Named, width - named))
        } else if width >= numbered + NUMBERED_BAR {
            Some((Cell::Numbered, width - numbered))
        } else if width > digits {
            Some((Cell::Bare, width - digits))
        } else {
            None
        }
    }
}

/// A grid of meters: where each CPU's cell goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeterGrid {
    /// Columns of cells.
    pub columns: usize,
    /// Cells in each column (the last column may hold fewer).
    pub rows: usize,
    /// What each cell shows.
    pub cell: Cell,
    /// Digits of the widest CPU number: numbers are aligned to it.
    pub digits: usize,
    /// The bar's length in each cell.
    pub bar: usize,
    /// Whether the CPUs take more than one page (a row goes to "… more").
    pub paged: bool,
}

impl MeterGrid {
    /// Every one of `count` CPUs (numbers up to `digits` digits) in
    /// `width` × `rows`, in as few columns as that takes so each cell is
    /// as rich as it can be; `None` when even bare cells do not fit.
    pub fn fit(width: usize, rows: usize, count: usize, digits: usize) -> Option<MeterGrid> {
        if rows == 0 {
            return None;
        }
        let columns = count.max(1).div_ceil(rows);
        let cell_width = ((width + GAP) / columns).checked_sub(GAP)?;
        let (cell, bar) = Cell::richest(cell_width, digits)?;
        Some(MeterGrid {
            columns,
            rows: count.max(1).div_ceil(columns),
            cell,
            digits,
            bar,
            paged: false,
        })
    }

    /// The most bare cells `width` × `rows` hold with one row kept for
    /// "… more": a page of CPUs when they do not all fit.
    pub fn paged(width: usize, rows: usize, digits: usize) -> MeterGrid {
        let stride = digits + 1 + GAP;
        MeterGrid {
            columns: ((width + GAP) / stride).max(1),
            rows: rows.saturating_sub(1).max(1),
            cell: Cell::Bare,
            digits,
            bar: 1,
            paged: true,
        }
    }

    /// Cells one page holds.
    pub fn capacity(&self) -> usize {
        self.columns * self.rows
    }

    /// Columns one cell takes (the gap after it not counted).
    pub fn cell_width(&self) -> usize {
        match self.cell {
            Cell::Named => 3 + self.digits + 1 + self.bar + PERCENT,
            Cell::Numbered => self.digits + 1 + self.bar + PERCENT,
            Cell::Bare => self.digits + self.bar,
        }
    }

    /// The column (from the panel's left) and row of the `i`-th cell on a
    /// page: down the first column, then the next.
    pub fn place(&self, i: usize) -> (usize, usize) {
        let rows = self.rows.max(1);
        ((i / rows) * (self.cell_width() + GAP), i % rows)
    }

    /// Which cell on a page is at `column`, `row` (from the grid's top
    /// left), if any: the gap between columns is no cell.
    pub fn cell_at(&self, column: usize, row: usize) -> Option<usize> {
        let stride = self.cell_width() + GAP;
        let (col, within) = (column / stride, column % stride);
        (row < self.rows && col < self.columns && within < self.cell_width())
            .then_some(col * self.rows + row)
    }
}

/// Digits of `id` in decimal.
pub fn digits(id: u32) -> usize {
    id.checked_ilog10().map_or(1, |d| d as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_guests_fit_the_panels_of_the_smallest_and_a_large_screen() {
        // The CPU panel at 80×24: 40 columns, 8 rows below `all`.
        let g = MeterGrid::fit(40, 8, 64, 2).expect("64 CPUs fit at 80×24");
        assert_eq!((g.columns, g.rows, g.cell), (8, 8, Cell::Bare));
        assert!(g.bar >= 2, "{g:?}");
        // At 160×48: 62 columns, 28 rows.
        let g = MeterGrid::fit(62, 28, 256, 3).expect("256 CPUs fit at 160×48");
        assert!(g.capacity() >= 256 && g.bar >= 2, "{g:?}");
        // Every column of cells, gaps included, inside the panel.
        let (x, _) = g.place(255);
        assert!(x + g.cell_width() <= 62, "{g:?}");
    }

    #[test]
    fn cells_get_richer_as_room_allows() {
        let g = MeterGrid::fit(40, 8, 8, 1).expect("eight CPUs, one column");
        assert_eq!((g.columns, g.cell, g.cell_width()), (1, Cell::Named, 40));
        let g = MeterGrid::fit(40, 8, 16, 2).expect("two columns");
        assert_eq!((g.columns, g.cell, g.bar), (2, Cell::Named, 8));
        let g = MeterGrid::fit(40, 8, 24, 2).expect("three columns");
        assert_eq!((g.columns, g.cell, g.bar), (3, Cell::Numbered, 4));
        assert_eq!(MeterGrid::fit(40, 8, 400, 3), None, "not even bare cells");
        assert_eq!(MeterGrid::fit(40, 0, 1, 1), None, "no rows at all");
    }

    #[test]
    fn every_fitted_cell_lies_inside_the_panel_and_is_found_again_by_its_place() {
        for width in [1usize, 5, 17, 40, 62, 133] {
            for rows in 1..12 {
                for count in [1usize, 2, 7, 64, 100, 256, 1000] {
                    let d = digits(count as u32 - 1);
                    let grids = [
                        MeterGrid::fit(width, rows, count, d),
                        Some(MeterGrid::paged(width, rows, d)),
                    ];
                    for g in grids.into_iter().flatten() {
                        let shown = if g.paged { g.capacity() } else { count };
                        for i in 0..shown {
                            let (x, y) = g.place(i);
                            assert!(y < rows.max(1), "{g:?} {i}");
                            if !g.paged {
                                assert!(x + g.cell_width() <= width, "{g:?} {i}");
                            }
                            assert_eq!(g.cell_at(x, y), Some(i), "{g:?}");
                            assert_eq!(g.cell_at(x + g.cell_width() - 1, y), Some(i));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn clicks_on_gaps_and_below_the_cells_find_nothing() {
        let g = MeterGrid::fit(40, 8, 64, 2).expect("fits");
        assert_eq!(g.cell_at(g.cell_width(), 0), None, "the gap");
        assert_eq!(g.cell_at(0, g.rows), None, "below the grid");
        assert_eq!(g.cell_at(g.columns * (g.cell_width() + 1), 0), None);
    }

    #[test]
    fn digits_of_cpu_numbers() {
        assert_eq!(
            [0, 9, 10, 99, 100, 4095, u32::MAX].map(digits),
            [1, 1, 2, 2, 3, 4, 10]
        );
    }
}
