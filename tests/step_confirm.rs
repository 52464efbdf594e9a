//! Step-confirm on a simulated guest whose pool target moves every interval:
//! the box follows the rules (and marks what changed), `y` applies exactly
//! the amount on screen, the log says so, and `Esc` hides the box.

mod common;

use std::sync::Arc;

use plugtop::control::controller::Mode;
use plugtop::kernel::Source;
use plugtop::sim::run::{SimOptions, guest_for};
use plugtop::sim::{SharedGuest, SimActuator, SimSource, facts};
use plugtop::tui::app::{App, SourceLabel};
use plugtop::tui::keys::KeyAction;
use plugtop::tui::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn screen(app: &App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test backend");
    terminal.draw(|f| view::draw(f, app)).expect("draw");
    let buffer = terminal.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..height {
        for x in 0..width {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// The `N` of the `set cmm_pages A -> N` the box shows.
fn shown_target(text: &str) -> Option<i64> {
    let line = text.lines().find(|l| l.contains("Proposed:"))?;
    let after = &line[line.find("set cmm_pages")?..];
    let arrow = after.find("-> ")?;
    after[arrow + 3..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

#[test]
fn the_box_follows_the_rules_and_y_applies_exactly_what_is_on_screen() {
    let scenario = common::scenario("daytrader");
    let guest = SharedGuest::new(guest_for(&scenario, &SimOptions::default()));
    let facts = facts(&guest.borrow());
    let mut source = SimSource::new(guest.clone(), 1.0);
    // Only the memory group, so the pool is the whole proposal.
    let text = std::fs::read_to_string("examples/rules/recommended-modern.conf")
        .expect("rules")
        .replace("HOTPLUG=", "#HOTPLUG=");
    let file = plugtop::rules::SourceFile::new("pool-only.conf", text.into_bytes());
    let outcome = plugtop::rules::load(&file, &facts);
    assert!(outcome.refusal.is_none(), "{:?}", outcome.refusal);
    let label = SourceLabel::Sim {
        scenario: scenario.name.clone(),
        speed: 1.0,
    };
    let mut app = App::new(Arc::new(outcome.rules), file, label, Mode::Step);
    app.actuator = Some(Box::new(SimActuator::new(guest.clone())));
    let mut next = |app: &mut App| match source.next_sample() {
        Some(Ok(s)) => app.ingest(s),
        other => panic!("the simulator stopped: {other:?}"),
    };
    for _ in 0..8 {
        next(&mut app);
    }
    let first = screen(&app, 160, 48);
    let Some(proposed) = shown_target(&first) else {
        panic!("no pool proposal on screen:\n{first}")
    };
    assert_eq!(guest.borrow().pool(), 0, "nothing written while it waits");
    // A later interval asks for another amount (the middleware starts at
    // 0:29 and eats free memory): the box shows it, marked.
    let mut second = first.clone();
    for _ in 0..100 {
        next(&mut app);
        second = screen(&app, 160, 48);
        if shown_target(&second).is_some_and(|t| t != proposed) {
            break;
        }
    }
    let revised = shown_target(&second).expect("still proposed");
    assert_ne!(revised, proposed, "the target moved:\n{second}");
    assert!(second.contains("(changed)"), "{second}");
    assert!(second.contains("revised ×"), "{second}");
    assert_eq!(guest.borrow().pool(), 0);
    app.update(KeyAction::Yes);
    assert_eq!(
        guest.borrow().pool(),
        revised,
        "exactly the amount on screen"
    );
    let log: Vec<&str> = app.log.iter().map(|l| l.text.as_str()).collect();
    assert!(
        log.contains(&format!("approved: set cmm_pages 0 -> {revised}").as_str()),
        "{log:?}"
    );
    // The next proposal: Esc hides the box, the badge stays.
    next(&mut app);
    assert!(screen(&app, 160, 48).contains("Proposed:"));
    app.update(KeyAction::Later);
    let hidden = screen(&app, 160, 48);
    assert!(!hidden.contains("Proposed:"), "{hidden}");
    assert!(hidden.contains("PROPOSAL WAITING"), "{hidden}");
    // A revision brings it back, and n rejects it without writing.
    next(&mut app);
    assert!(screen(&app, 160, 48).contains("Proposed:"));
    let before = guest.borrow().pool();
    app.update(KeyAction::No);
    assert_eq!(guest.borrow().pool(), before);
}
