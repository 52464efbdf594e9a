//! Step-confirm on a simulated guest whose pool target moves every interval:
//! the box follows the rules (and marks what changed), `y` applies exactly
//! the amount on screen, the log says so, and `Esc` hides the box.

use crate::common;

use std::sync::Arc;

use plugtop::control::controller::Mode;
use plugtop::kernel::Source;
use plugtop::sim::run::{SimOptions, guest_for};
use plugtop::sim::{SharedGuest, SimActuator, SimSource, facts};
use plugtop::tui::app::{App, SourceLabel};
use plugtop::tui::keys::KeyAction;
use plugtop::tui::local::Local;
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

/// The screen in step-confirm on the daytrader simulation under the rule
/// file `name` holding `text`, its actions going to the simulated guest;
/// the simulation's readings; the guest.
fn step_on_daytrader(name: &str, text: String) -> (Local, SimSource, SharedGuest) {
    let scenario = common::scenario("daytrader");
    let guest = SharedGuest::new(guest_for(&scenario, &SimOptions::default()));
    let facts = facts(&guest.borrow());
    let source = SimSource::new(guest.clone(), 1.0);
    let file = plugtop::rules::SourceFile::new(name, text.into_bytes());
    let outcome = plugtop::rules::load(&file, &facts);
    assert!(outcome.refusal.is_none(), "{:?}", outcome.refusal);
    let label = SourceLabel::Sim {
        scenario: scenario.name.clone(),
        speed: 1.0,
    };
    let mut app = Local::new(Arc::new(outcome.rules), file, label, Mode::Step);
    app.core_mut()
        .set_actuator(Box::new(SimActuator::new(guest.clone())));
    (app, source, guest)
}

#[test]
fn the_box_follows_the_rules_and_y_applies_exactly_what_is_on_screen() {
    // Only the memory group, so the pool is the whole proposal.
    let text = std::fs::read_to_string("examples/rules/recommended-modern.conf")
        .expect("rules")
        .replace("HOTPLUG=", "#HOTPLUG=");
    let (mut app, mut source, guest) = step_on_daytrader("pool-only.conf", text);
    let mut next = |app: &mut Local| match source.next_sample() {
        Some(Ok(s)) => app.ingest(s),
        other => panic!("the simulator stopped: {other:?}"),
    };
    for _ in 0..8 {
        next(&mut app);
    }
    let first = screen(app.app(), 160, 48);
    let Some(proposed) = shown_target(&first) else {
        panic!("no pool proposal on screen:\n{first}")
    };
    assert_eq!(guest.borrow().pool(), 0, "nothing written while it waits");
    // A later interval asks for another amount (the middleware starts at
    // 0:29 and eats free memory): the box shows it, marked.
    let mut second = first.clone();
    for _ in 0..100 {
        next(&mut app);
        second = screen(app.app(), 160, 48);
        if shown_target(&second).is_some_and(|t| t != proposed) {
            break;
        }
    }
    let revised = shown_target(&second).expect("still proposed");
    assert_ne!(revised, proposed, "the target moved:\n{second}");
    assert!(second.contains("(changed)"), "{second}");
    assert!(second.contains("revised ×"), "{second}");
    assert_eq!(guest.borrow().pool(), 0);
    app.key(KeyAction::Yes);
    assert_eq!(
        guest.borrow().pool(),
        revised,
        "exactly the amount on screen"
    );
    let log: Vec<&str> = app
        .app()
        .log()
        .lines()
        .iter()
        .map(|l| l.text.as_str())
        .collect();
    assert!(
        log.contains(&format!("approved: set cmm_pages 0 -> {revised}").as_str()),
        "{log:?}"
    );
    // The next proposal: Esc hides the box, the badge stays.
    next(&mut app);
    assert!(screen(app.app(), 160, 48).contains("Proposed:"));
    app.key(KeyAction::Later);
    let hidden = screen(app.app(), 160, 48);
    assert!(!hidden.contains("Proposed:"), "{hidden}");
    assert!(hidden.contains("PROPOSAL WAITING"), "{hidden}");
    // A revision brings it back, and n rejects it without writing.
    next(&mut app);
    assert!(screen(app.app(), 160, 48).contains("Proposed:"));
    let before = guest.borrow().pool();
    app.key(KeyAction::No);
    assert_eq!(guest.borrow().pool(), before);
}

/// The line of `text` that contains `what`, if any.
fn line_with<'a>(text: &'a str, what: &str) -> Option<&'a str> {
    text.lines().find(|l| l.contains(what))
}

#[test]
fn a_standing_proposal_shows_the_newest_values_and_since_when_it_stands() {
    // Twelve CPUs, two online: cpuplugd would plug cpu10 first.
    let text = "name = \"twelve\"\ncpus = 12\nonline = 2\nmemory_mib = 4096\nduration = \"5:00\"\nseed = 1\n\n[[phases]]\nname = \"busy\"\nstart = \"0:00\"\nthreads = 6\ncpu_per_thread = 1\nworking_set_mib = 300\n";
    let scenario = plugtop::sim::Scenario::parse("twelve", text).expect("scenario");
    let guest = SharedGuest::new(guest_for(&scenario, &SimOptions::default()));
    let facts = facts(&guest.borrow());
    let mut source = SimSource::new(guest.clone(), 1.0);
    // HOTPLUG holds at every interval while its value (the load) moves.
    let rules =
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"12\"\nHOTPLUG=\"loadavg > -1\"\nHOTUNPLUG=\"0\"\n";
    let file = plugtop::rules::SourceFile::new("load.conf", rules.as_bytes().to_vec());
    let outcome = plugtop::rules::load(&file, &facts);
    assert!(outcome.refusal.is_none(), "{:?}", outcome.refusal);
    let label = SourceLabel::Sim {
        scenario: scenario.name.clone(),
        speed: 1.0,
    };
    let mut app = Local::new(Arc::new(outcome.rules), file, label, Mode::Step);
    app.core_mut()
        .set_actuator(Box::new(SimActuator::new(guest.clone())));
    let mut loads = Vec::new();
    let mut screens = Vec::new();
    for _ in 0..8 {
        match source.next_sample() {
            Some(Ok(s)) => app.ingest(s),
            other => panic!("the simulator stopped: {other:?}"),
        }
        let newest = app.app().timeline().frames().front().expect("a frame");
        loads.push((newest.number, newest.sample.loadavg));
        screens.push(screen(app.app(), 160, 48));
    }
    let first = app
        .app()
        .board()
        .pending()
        .map(|p| p.since)
        .expect("a proposal stands");
    let (newest, load) = *loads.last().expect("readings");
    let (_, first_load) = loads[first];
    assert_ne!(
        plugtop::report::trace::number(load),
        plugtop::report::trace::number(first_load),
        "the load moved, so a box stuck at the first interval would show"
    );
    let now = screens.last().expect("a screen");
    assert!(
        line_with(now, "Proposed:").is_some_and(|l| l.contains("plug cpu10")),
        "{now}"
    );
    let standing = newest - first;
    assert!(
        now.contains(&format!(
            "proposed since interval #{first} ({standing} intervals)"
        )),
        "{now}"
    );
    assert!(
        now.contains(&format!("interval #{newest}: HOTPLUG true")),
        "{now}"
    );
    let reason = line_with(now, "│HOTPLUG true because").unwrap_or_else(|| panic!("{now}"));
    assert!(
        reason.contains(&format!("= {} ", plugtop::report::trace::number(load))),
        "the newest load in the reason: {reason}\n{now}"
    );
    // Every screen on the way showed its own interval's load.
    for ((number, load), text) in loads.iter().zip(&screens).skip(first) {
        let reason = line_with(text, "│HOTPLUG true because").unwrap_or_else(|| panic!("{text}"));
        assert!(
            reason.contains(&format!("= {} ", plugtop::report::trace::number(*load))),
            "interval #{number}: {reason}"
        );
    }
    // `y` applies exactly what is on screen: cpu10.
    assert_eq!(guest.borrow().cpu_online(10), Some(false));
    app.key(KeyAction::Yes);
    assert_eq!(guest.borrow().cpu_online(10), Some(true));
    let log: Vec<&str> = app
        .app()
        .log()
        .lines()
        .iter()
        .map(|l| l.text.as_str())
        .collect();
    assert!(log.contains(&"approved: plug cpu10"), "{log:?}");
    assert!(log.contains(&"plugged cpu10"), "{log:?}");
}

/// nu53 M4: `y` pressed after the control thread withdrew the proposal
/// (the rules no longer ask for it, or the mode changed) says so in the
/// Log instead of nothing.
#[test]
fn y_after_a_withdrawn_proposal_says_nothing_is_left_to_confirm() {
    let text = std::fs::read_to_string("examples/rules/recommended-modern.conf").expect("rules");
    let (mut app, mut source, _guest) = step_on_daytrader("modern.conf", text);
    let said = |app: &Local, what: &str| {
        app.app()
            .log()
            .lines()
            .iter()
            .filter(|l| l.text.contains(what))
            .count()
    };
    app.key(KeyAction::Yes);
    assert_eq!(
        said(&app, "nothing to confirm: no proposal is waiting"),
        1,
        "y with nothing proposed says so"
    );
    for _ in 0..200 {
        if app.app().board().pending().is_some() {
            break;
        }
        match source.next_sample() {
            Some(Ok(s)) => app.ingest(s),
            other => panic!("the simulator stopped: {other:?}"),
        }
    }
    assert!(app.app().board().pending().is_some(), "nothing proposed");
    // Leaving step mode withdraws the proposal (as the rules' no longer
    // asking for it does), without an answer from this screen.
    app.key(KeyAction::Observe);
    assert!(app.app().board().pending().is_none(), "withdrawn");
    assert_eq!(
        said(&app, "nothing to confirm: the proposal was withdrawn"),
        0
    );
    app.key(KeyAction::Yes);
    assert_eq!(
        said(&app, "nothing to confirm: the proposal was withdrawn"),
        1,
        "{:?}",
        app.app()
            .log()
            .lines()
            .iter()
            .map(|l| &l.text)
            .collect::<Vec<_>>()
    );
}
