//! `?` lists every key: drawn at 80×24 (two pages, turned with PgDn and
//! PgUp, any other key closes) and at 160×48 (one page, two columns), and
//! every key of every table is somewhere on its pages, whole.

use std::path::Path;

use plugtop::control::controller::Mode;
use plugtop::tui::help::{HelpEntry, entries, inside, layout};
use plugtop::tui::keys::KeyAction;
use plugtop::tui::local::Local;
use plugtop::tui::run::app_from_snapshots;
use plugtop::tui::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn app() -> Local {
    app_from_snapshots(
        Path::new("examples/rules/recommended-default.conf"),
        Path::new("tests/fixtures/series/oldkernel"),
        6,
        Mode::Observe,
    )
    .expect("app")
}

fn screen(local: &mut Local, width: u16, height: u16) -> String {
    local.app_mut().set_screen_size(
        width,
        height,
        plugtop::tui::view::cpu_panel_size(ratatui::layout::Rect::new(0, 0, width, height)),
    );
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("backend");
    terminal.draw(|f| view::draw(f, local.app())).expect("draw");
    plugtop::tui::export::text(terminal.backend().buffer())
}

/// Everything the help's pages show at `width`×`height`, page by page.
fn pages(width: u16, height: u16) -> Vec<String> {
    let mut a = app();
    a.app_mut().set_screen_size(
        width,
        height,
        plugtop::tui::view::cpu_panel_size(ratatui::layout::Rect::new(0, 0, width, height)),
    );
    a.key(KeyAction::Help);
    let mut out = vec![screen(&mut a, width, height)];
    while out.last().is_some_and(|p| p.contains("▼ more on page")) {
        a.key(KeyAction::PageDown);
        out.push(screen(&mut a, width, height));
        assert!(out.len() < 10, "the pages never end");
    }
    out
}

#[test]
fn at_80x24_the_keys_take_two_pages_turned_with_pgdn_and_pgup() {
    let shown = pages(80, 24);
    assert_eq!(shown.len(), 2, "{shown:#?}");
    assert!(shown[0].contains("page 1 of 2"), "{}", shown[0]);
    assert!(
        shown[1].contains("▲ page 2 of 2: PgUp goes back"),
        "{}",
        shown[1]
    );
    assert_snapshot_of!("help_keys", "page_2_80x24", shown[1].clone());
    // PgUp goes back, any other key closes.
    let mut a = app();
    a.app_mut().set_screen_size(
        80,
        24,
        plugtop::tui::view::cpu_panel_size(ratatui::layout::Rect::new(0, 0, 80, 24)),
    );
    a.key(KeyAction::Help);
    a.key(KeyAction::PageDown);
    assert_eq!(a.app().help_page(), 1);
    a.key(KeyAction::PageDown);
    assert_eq!(a.app().help_page(), 1, "no page past the last");
    a.key(KeyAction::PageUp);
    assert_eq!(a.app().help_page(), 0);
    a.key(KeyAction::NextRule);
    assert!(a.app().modals().is_empty(), "t closed it");
    // Opened again, it starts at its first page.
    a.key(KeyAction::Help);
    assert_eq!(a.app().help_page(), 0);
}

#[test]
fn at_160x48_every_key_is_on_one_page() {
    let shown = pages(160, 48);
    assert_eq!(shown.len(), 1);
    assert!(shown[0].contains("Keys (any key closes)"));
    // PgDn with one page closes it, as any key does.
    let mut a = app();
    a.app_mut().set_screen_size(
        160,
        48,
        plugtop::tui::view::cpu_panel_size(ratatui::layout::Rect::new(0, 0, 160, 48)),
    );
    a.key(KeyAction::Help);
    a.key(KeyAction::PageDown);
    assert!(a.app().modals().is_empty());
}

#[test]
fn every_row_of_the_layout_is_drawn_whole_on_its_page() {
    for (w, h) in [(80, 24), (160, 48), (100, 30)] {
        let shown = pages(w, h);
        let (iw, ih) = inside(w, h);
        let l = layout(iw, ih);
        assert_eq!(shown.len(), l.pages.len(), "{w}x{h}");
        for (page, screen) in l.pages.iter().zip(&shown) {
            for row in page.iter().flatten().filter(|r| !r.text.is_empty()) {
                let drawn = format!("{}{}", row.keys, row.text);
                assert!(
                    screen.contains(&drawn),
                    "{drawn:?} not drawn at {w}x{h}:\n{screen}"
                );
            }
        }
        // And the layout holds every entry: the keys the issue named too.
        let keys: Vec<&str> = entries()
            .into_iter()
            .filter_map(|e| match e {
                HelpEntry::Keys { shown, .. } => Some(shown),
                HelpEntry::Heading(_) => None,
            })
            .collect();
        for key in [
            "Ctrl-Z", "Ctrl-O", "Ctrl-C", "Ctrl-R", "Ctrl-S", "wheel", "click",
        ] {
            assert!(keys.contains(&key), "{key} missing");
            assert!(shown.concat().contains(key), "{key} not drawn at {w}x{h}");
        }
    }
}
