//! The CPU panel of a big guest: compact meters that show every CPU at
//! once (64 at 80×24, 256 at 160×48), `c` for the per-CPU table, `b` for
//! busiest first, clicks on a meter, and paging that survives a resize.

use std::path::Path;
use std::sync::Arc;

use plugtop::control::controller::Mode;
use plugtop::kernel::cpulist::CpuList;
use plugtop::kernel::snapshots::SnapshotSource;
use plugtop::kernel::{CpuTicks, Source};
use plugtop::rules::{SourceFile, SystemFacts, load};
use plugtop::tui::app::SourceLabel;
use plugtop::tui::keys::KeyAction;
use plugtop::tui::local::Local;
use plugtop::tui::view;
use ratatui::layout::Rect;

use crate::tui_views::screen;

/// CPUs kept offline in [`guest`]: every sixteenth, from cpu13.
fn offline(id: u32) -> bool {
    id % 16 == 13
}

/// The CPU that comes online in [`guest`]'s last reading only.
const FRESH: u32 = 7;

/// The share of its time [`guest`]'s CPU `id` is busy, in percent: all
/// sorts of shares, none of two neighbours alike.
fn busy(id: u32) -> u64 {
    u64::from(id * 37 % 101)
}

/// The fixture series as a guest of `cpus` CPUs, each busy its own share,
/// some offline and one just come online.
fn guest(cpus: u32) -> Local {
    let mut source = SnapshotSource::open(Path::new("tests/fixtures/series/oldkernel"))
        .expect("the fixture series");
    let facts = source.facts();
    let text = std::fs::read("examples/rules/recommended-default.conf").expect("rules");
    let mut app = replaying(SourceFile::new("recommended-default.conf", text), &facts);
    let samples: Vec<_> = std::iter::from_fn(|| source.next_sample())
        .map(|s| s.expect("a fixture reading"))
        .collect();
    let last = samples.len() as u64;
    for (step, mut s) in (1u64..).zip(samples) {
        let online: Vec<u32> = (0..cpus)
            .filter(|id| !offline(*id) && (*id != FRESH || step == last))
            .collect();
        s.per_cpu = online
            .iter()
            .map(|id| {
                let ticks = CpuTicks {
                    user: step * busy(*id),
                    idle: step * (100 - busy(*id)),
                    ..CpuTicks::default()
                };
                (*id, ticks)
            })
            .collect();
        s.ticks = s
            .per_cpu
            .iter()
            .fold(CpuTicks::default(), |a, (_, t)| CpuTicks {
                user: a.user + t.user,
                idle: a.idle + t.idle,
                ..a
            });
        s.online = CpuList {
            count: online.len() as i32,
            ids: online.into(),
        };
        s.present = CpuList {
            ids: (0..cpus).collect(),
            count: cpus as i32,
        };
        app.ingest(s);
    }
    app
}

/// A screen observing a replay of `big.rec` under the rules of `file`.
pub fn replaying(file: SourceFile, facts: &SystemFacts) -> Local {
    let outcome = load(&file, facts);
    Local::new(
        Arc::new(outcome.rules),
        file,
        SourceLabel::Replay {
            file: "big.rec".into(),
            speed: 1.0,
        },
        Mode::Observe,
    )
}

/// Tells the app the screen is `width`×`height`, as the screen loop does.
fn sized(app: &mut Local, width: u16, height: u16) {
    let size = Rect::new(0, 0, width, height);
    app.app_mut()
        .set_screen_size(width, height, view::cpu_panel_size(size));
}

/// One meter on the screen: where its CPU number starts, and the number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Meter {
    pub row: usize,
    pub column: usize,
    /// Where the meters of one column line up: the number's first digit
    /// after `cpu`, else its last (numbers alone are right-aligned).
    pub aligned: usize,
    pub id: u32,
}

/// The meters of the CPU panel, the panel being the first `width`
/// columns between the `all` row and the Rules panel: every number not
/// followed by `%` (a share) is a CPU's, with or without `cpu` before it.
pub fn meters(screen: &str, width: usize) -> Vec<Meter> {
    let lines: Vec<&str> = screen.lines().collect();
    let top = lines
        .iter()
        .position(|l| l.starts_with("all "))
        .unwrap_or_else(|| panic!("no `all` row:\n{screen}"));
    let mut out = Vec::new();
    for (row, line) in lines.iter().enumerate().skip(top + 1) {
        if line.starts_with(" Rules") {
            break;
        }
        if line.starts_with('…') {
            continue;
        }
        let cells: Vec<char> = line.chars().take(width).collect();
        let mut i = 0;
        while i < cells.len() {
            if !cells[i].is_ascii_digit() {
                i += 1;
                continue;
            }
            let start = i;
            while i < cells.len() && cells[i].is_ascii_digit() {
                i += 1;
            }
            if cells.get(i) == Some(&'%') {
                continue;
            }
            let id: String = cells[start..i].iter().collect();
            let named = start >= 3 && cells[start - 3..start] == ['c', 'p', 'u'];
            out.push(Meter {
                row,
                column: start,
                aligned: if named { start } else { i - 1 },
                id: id.parse().expect("digits"),
            });
        }
    }
    out
}

/// Every CPU of `0..cpus` once, in number order, down each column first.
fn assert_every_cpu_once(found: &[Meter], cpus: u32, screen: &str) {
    let mut by_place = found.to_vec();
    by_place.sort_by_key(|m| (m.aligned, m.row));
    let ids: Vec<u32> = by_place.iter().map(|m| m.id).collect();
    assert_eq!(ids, (0..cpus).collect::<Vec<u32>>(), "{screen}");
}

#[test]
fn sixty_four_cpus_at_80x24_and_256_at_160x48_all_in_sight() {
    for (cpus, width, height, panel) in [(64, 80, 24, 40), (256, 160, 48, 62)] {
        let mut app = guest(cpus);
        sized(&mut app, width, height);
        let text = screen(&app, width, height);
        assert_every_cpu_once(&meters(&text, panel), cpus, &text);
        assert!(!cpus_below(&text), "{text}");
        assert_snapshot_of!("cpu_meters", format!("{cpus}_cpus_{width}x{height}"), text);
    }
}

/// Whether the CPU panel says more CPUs are below ("… 3 more below
/// (PgDn)", "… 3 more below, 6 above (PgDn/PgUp)"); the Values panel
/// beside it says "… 19 more below (↓)" of its own rows.
fn cpus_below(text: &str) -> bool {
    text.contains("more below (PgDn") || text.contains("more below, ")
}

#[test]
fn a_guest_bigger_than_the_screen_pages_its_meters_and_says_so() {
    let mut app = guest(256);
    sized(&mut app, 80, 24);
    let mut seen = Vec::new();
    let mut text = screen(&app, 80, 24);
    assert!(text.contains("more below (PgDn)"), "{text}");
    loop {
        let page = meters(&text, 40);
        assert!(!page.is_empty(), "an empty page:\n{text}");
        let mut page: Vec<Meter> = page;
        page.sort_by_key(|m| (m.aligned, m.row));
        seen.extend(page.iter().map(|m| m.id));
        if !cpus_below(&text) {
            break;
        }
        assert!(seen.len() < 256, "pages overlap: {seen:?}");
        app.key(KeyAction::PageDown);
        text = screen(&app, 80, 24);
    }
    assert_eq!(seen, (0..256).collect::<Vec<u32>>());
    assert!(text.contains("above (PgUp)"), "{text}");
    assert_snapshot_of!("cpu_meters", "256_cpus_last_page_80x24", text);
}

#[test]
fn b_puts_the_busiest_first_and_back_in_number_order() {
    let mut app = guest(64);
    sized(&mut app, 160, 48);
    app.key(KeyAction::CpuOrder);
    let text = screen(&app, 160, 48);
    let mut found = meters(&text, 62);
    found.sort_by_key(|m| (m.aligned, m.row));
    let ids: Vec<u32> = found.iter().map(|m| m.id).collect();
    // Busy CPUs by share, most first, then the one just online, then the
    // offline ones by number.
    let mut want: Vec<u32> = (0..64).filter(|id| !offline(*id) && *id != FRESH).collect();
    want.sort_by_key(|id| std::cmp::Reverse(busy(*id)));
    want.push(FRESH);
    want.extend((0..64).filter(|id| offline(*id)));
    assert_eq!(ids, want, "{text}");
    assert!(text.contains("busiest first"), "the order is said:\n{text}");
    assert_snapshot_of!("cpu_meters", "64_cpus_busiest_first_160x48", text);
    app.key(KeyAction::CpuOrder);
    let text = screen(&app, 160, 48);
    assert_every_cpu_once(&meters(&text, 62), 64, &text);
    // An earlier interval's shares are "then", not "now".
    assert!(text.contains("busy % now, by number"), "{text}");
    app.key(KeyAction::Back);
    let text = screen(&app, 160, 48);
    assert!(text.contains("busy % then, by number"), "{text}");
}

#[test]
fn c_shows_the_per_cpu_table_and_the_meters_again() {
    let mut app = guest(64);
    sized(&mut app, 80, 24);
    app.key(KeyAction::CpuLayout);
    let text = screen(&app, 80, 24);
    assert!(
        text.contains("% now   us"),
        "the table's column heads:\n{text}"
    );
    assert!(
        text.contains("… 58 more below (PgDn; c meters)"),
        "the table pages and says how to get the meters back:\n{text}"
    );
    app.key(KeyAction::CpuLayout);
    let text = screen(&app, 80, 24);
    assert!(!text.contains("% now   us"), "{text}");
    assert_every_cpu_once(&meters(&text, 40), 64, &text);
    // A small guest shows the table; `c` gives it meters, a row a CPU.
    let mut small = guest(4);
    sized(&mut small, 80, 24);
    assert!(screen(&small, 80, 24).contains("% now   us"));
    small.key(KeyAction::CpuLayout);
    let text = screen(&small, 80, 24);
    assert!(
        text.contains("cpu0 ") && !text.contains("% now   us"),
        "{text}"
    );
    assert_every_cpu_once(&meters(&text, 40), 4, &text);
}

#[test]
fn a_click_on_any_meter_selects_its_cpu_and_a_gap_selects_none() {
    for (cpus, width, height, panel) in [(64, 80, 24, 40), (256, 160, 48, 62), (8, 80, 24, 40)] {
        let mut app = guest(cpus);
        sized(&mut app, width, height);
        let text = screen(&app, width, height);
        let found = meters(&text, panel);
        assert_eq!(found.len(), cpus as usize, "{text}");
        for m in &found {
            view::click(app.app_mut(), m.column as u16, m.row as u16);
            assert_eq!(app.app().selection().selected_cpu(), Some(m.id), "{m:?}");
        }
        app.app_mut().selection_mut().drop_cpu();
        // The `all` row, the margin at the panel's right, below the grid.
        let all = text
            .lines()
            .position(|l| l.starts_with("all "))
            .unwrap_or(0);
        for (column, row) in [(0, all), (panel - 1, all + 1), (0, all + 1 + 40)] {
            view::click(app.app_mut(), column as u16, row as u16);
            assert_eq!(app.app().selection().selected_cpu(), None, "{column},{row}");
        }
    }
    // The selected CPU's number is drawn reversed: the same text.
    let mut app = guest(64);
    sized(&mut app, 80, 24);
    let before = screen(&app, 80, 24);
    let m = meters(&before, 40)[20];
    view::click(app.app_mut(), m.column as u16, m.row as u16);
    let after = screen(&app, 80, 24);
    assert!(
        after.contains(&format!("cpu{}: p pins its busy %", m.id)),
        "{after}"
    );
}

/// The CPU rows of the per-CPU table on `screen`, by number.
fn table_rows(screen: &str) -> Vec<u32> {
    screen
        .lines()
        .filter_map(|l| {
            let digits: String = l
                .strip_prefix("cpu")?
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .collect()
}

#[test]
fn a_resize_never_leaves_the_table_scrolled_to_empty_rows() {
    // Paged down on a small screen, then made larger and smaller: each
    // screen shows the page holding the CPU paged to, every row used, and
    // the pages from there still reach every CPU once.
    let sizes = [
        (80, 24),
        (160, 48),
        (80, 30),
        (160, 90),
        (120, 40),
        (80, 24),
    ];
    for downs in 0..12 {
        let mut app = guest(64);
        sized(&mut app, 80, 24);
        app.key(KeyAction::CpuLayout);
        for _ in 0..downs {
            app.key(KeyAction::PageDown);
        }
        // The first CPU of the page paged to stays in sight.
        let paged_to = table_rows(&screen(&app, 80, 24))[0];
        assert_eq!(paged_to, 6 * downs.min(10), "PgDn pages by what is shown");
        for (width, height) in sizes {
            sized(&mut app, width, height);
            let text = screen(&app, width, height);
            let rows = table_rows(&text);
            assert!(
                rows.contains(&paged_to),
                "{downs} down, {width}x{height}: cpu{paged_to} went out of sight\n{text}"
            );
            assert_eq!(
                rows.len(),
                rows.last().map_or(0, |l| l + 1 - rows[0]) as usize,
                "a row for each CPU from the first shown to the last"
            );
            if height == 90 {
                assert_eq!(rows, (0..64).collect::<Vec<u32>>(), "all fit:\n{text}");
            }
            let last = *rows.last().expect("CPU rows");
            if last < 63 {
                let under = text
                    .lines()
                    .skip_while(|l| !l.starts_with(&format!("cpu{last} ")))
                    .nth(1)
                    .unwrap_or_default();
                assert!(under.starts_with("… "), "a row left empty:\n{text}");
            }
        }
        // From where it stands, PgUp to the start and PgDn to the end
        // cover every CPU once.
        for _ in 0..64 {
            app.key(KeyAction::PageUp);
        }
        let mut seen = Vec::new();
        loop {
            let text = screen(&app, 80, 24);
            seen.extend(table_rows(&text));
            if !cpus_below(&text) {
                break;
            }
            app.key(KeyAction::PageDown);
        }
        assert_eq!(seen, (0..64).collect::<Vec<u32>>());
    }
}
