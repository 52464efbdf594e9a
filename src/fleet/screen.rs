//! The fleet screen's loop on the terminal shell
//! ([`crate::tui::terminal_shell`]): keys and signals come from the
//! shell's threads, answers from the query thread (Prometheus is never
//! asked on the screen's thread, so a slow or dead one never freezes it),
//! refreshes when the refresh interval has passed without one; each
//! becomes an update of [`FleetApp`] and one redraw. Every way out gives
//! the terminal back.

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant, SystemTime};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

use super::FleetError;
use super::app::{FleetAction, FleetApp, Request};
use super::fetch::{self, GuestDetail, Scope};
use super::model::Fleet;
use super::query::Prometheus;
use crate::tui::input::TermInput;
use crate::tui::stop::StopFlag;
use crate::tui::terminal_shell::{self as shell, PanicScope, ShellEvent, ShellScreen};

/// What the screen waits for.
enum Msg {
    /// The terminal or a signal.
    Shell(ShellEvent),
    Fleet(Fleet, f64),
    GuestDetail(GuestDetail, f64),
}

/// How the screen runs.
pub struct FleetOptions {
    /// The URL, for the header.
    pub prometheus: String,
    /// What to ask.
    pub scope: Scope,
    /// Time between refreshes.
    pub refresh: Duration,
    /// Where guests' rule files are gathered (`--rules-root`).
    pub rules_root: Option<std::path::PathBuf>,
}

/// Seconds since the epoch, now.
pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The query thread: the latest request of each kind, answered in turn.
fn worker(
    client: Box<dyn Prometheus>,
    scope: Scope,
    requests: Receiver<Request>,
    out: Sender<Msg>,
) {
    while let Ok(first) = requests.recv() {
        let mut pending = vec![first];
        pending.extend(requests.try_iter());
        // Only the newest of each kind matters.
        let fleet = pending.iter().any(|r| matches!(r, Request::Fleet));
        let detail = pending
            .iter()
            .rev()
            .find(|r| matches!(r, Request::GuestDetail { .. }))
            .cloned();
        if let Some(Request::GuestDetail {
            job,
            instance,
            back,
            window,
        }) = detail
        {
            let end = now() - back;
            let d = fetch::detail(client.as_ref(), &scope, &job, &instance, end - window, end);
            if out.send(Msg::GuestDetail(d, now())).is_err() {
                return;
            }
        }
        if fleet {
            let f = fetch::fleet(client.as_ref(), &scope, now());
            if out.send(Msg::Fleet(f, now())).is_err() {
                return;
            }
        }
    }
}

/// A key as an action, or as text for the filter being typed.
fn action(key: KeyEvent) -> Option<FleetAction> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    Some(match key.code {
        KeyCode::Char('c') if ctrl => FleetAction::Quit,
        KeyCode::Char('q') => FleetAction::Quit,
        KeyCode::Up | KeyCode::Char('k') => FleetAction::Up,
        KeyCode::Down | KeyCode::Char('j') => FleetAction::Down,
        KeyCode::PageUp => FleetAction::PageUp,
        KeyCode::PageDown => FleetAction::PageDown,
        KeyCode::Home => FleetAction::Home,
        KeyCode::End => FleetAction::End,
        KeyCode::Enter => FleetAction::Open,
        KeyCode::Esc => FleetAction::Back,
        KeyCode::Char('r') => FleetAction::Refresh,
        KeyCode::Char('s') => FleetAction::SortNext,
        KeyCode::Char('S') => FleetAction::SortReverse,
        KeyCode::Char('/') => FleetAction::Filter,
        KeyCode::Char('?') | KeyCode::F(1) => FleetAction::Help,
        KeyCode::Char('d') => FleetAction::Drift,
        KeyCode::Char('D') => FleetAction::Diff,
        KeyCode::Left | KeyCode::Char('h') => FleetAction::Earlier,
        KeyCode::Right | KeyCode::Char('l') => FleetAction::Later,
        _ => return None,
    })
}

/// The fleet screen until `q` (`None`) or a stop signal (`Some` of it);
/// the terminal is given back either way.
pub fn run(client: Box<dyn Prometheus>, options: FleetOptions) -> Result<Option<i32>, FleetError> {
    let (tx, rx) = channel();
    let (requests, request_rx) = channel();
    let scope = options.scope.clone();
    let answers = tx.clone();
    std::thread::Builder::new()
        .name("plugtop-fleet-query".into())
        .spawn(move || worker(client, scope, request_rx, answers))?;
    // Nothing is held for a guest: a stop signal may end the process as
    // soon as the screen has had its time to give the terminal back.
    let stop = StopFlag::new();
    let given_back = stop.clone();
    shell::spawn_inputs(&stop, move |event| {
        if let ShellEvent::Stop(signal) = event {
            given_back.given_back(
                crate::stop_signals::exit_status(signal),
                "nothing was changed (fleet only reads Prometheus)",
            );
        }
        tx.send(Msg::Shell(event)).is_ok()
    })?;
    shell::restore_on_panic(PanicScope::ThisThread);
    let result = shell::enter(false)
        .map_err(FleetError::from)
        .and_then(|()| screen_loop(&options, &rx, &requests));
    shell::leave();
    result
}

fn screen_loop(
    options: &FleetOptions,
    rx: &Receiver<Msg>,
    requests: &Sender<Request>,
) -> Result<Option<i32>, FleetError> {
    let mut screen = ShellScreen::new()?;
    let mut app = FleetApp::new(
        &options.prometheus,
        options.scope.window,
        options.scope.stale_after,
    );
    app.rules_root = options.rules_root.clone();
    let ask = |app: &mut FleetApp, r: Request| {
        app.busy = true;
        let _ = requests.send(r);
    };
    ask(&mut app, Request::Fleet);
    let every = options.refresh.max(Duration::from_millis(500));
    let mut refresh_at = Instant::now() + every;
    loop {
        let size = screen.size()?;
        app.page = usize::from(size.height.saturating_sub(6)).max(1);
        app.diff_rows = super::table::diff_room(&app, size.height);
        screen.draw(|f| super::table::draw(f, &app))?;
        let msg = match rx.recv_timeout(refresh_at.saturating_duration_since(Instant::now())) {
            Ok(msg) => msg,
            Err(RecvTimeoutError::Timeout) => {
                refresh_at = Instant::now() + every;
                if !app.busy {
                    let r = match app.view {
                        super::app::FleetView::GuestDetail => app.update(FleetAction::Refresh),
                        _ => Some(Request::Fleet),
                    };
                    if let Some(r) = r {
                        ask(&mut app, r);
                    }
                }
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => return Ok(None),
        };
        match msg {
            Msg::Shell(ShellEvent::Stop(signal)) => return Ok(Some(signal)),
            Msg::Shell(ShellEvent::Keys(batch)) => {
                for input in batch {
                    match take_input(&mut app, input) {
                        FleetKeyOutcome::Quit => return Ok(None),
                        FleetKeyOutcome::Ask(r) => ask(&mut app, r),
                        FleetKeyOutcome::Nothing => {}
                    }
                }
            }
            Msg::Shell(event) => {
                screen.follow(&event)?;
            }
            Msg::Fleet(f, at) => app.on_fleet(f, at),
            Msg::GuestDetail(d, at) => app.on_detail(d, at),
        }
    }
}

/// What a key or a paste asks of the screen's loop.
enum FleetKeyOutcome {
    Quit,
    Ask(Request),
    Nothing,
}

/// A key or a paste: for the filter while it is typed, else an action.
fn take_input(app: &mut FleetApp, input: TermInput) -> FleetKeyOutcome {
    if let TermInput::Event(Event::Paste(text)) = &input {
        if app.filtering {
            app.filter_paste(text);
        }
        return FleetKeyOutcome::Nothing;
    }
    let Some(key) = shell::pressed(&input) else {
        return FleetKeyOutcome::Nothing;
    };
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if app.filtering {
        // Raw mode makes Ctrl-C a key, not SIGINT: it quits while a
        // filter is typed too (it typed a `c`).
        match key.code {
            KeyCode::Char('c') if ctrl => return FleetKeyOutcome::Quit,
            KeyCode::Enter => app.filter_key(None, true),
            KeyCode::Esc => app.filter_key(None, false),
            _ => app.filter_edit(key),
        }
        return FleetKeyOutcome::Nothing;
    }
    match action(key) {
        Some(FleetAction::Quit) => FleetKeyOutcome::Quit,
        Some(a) => app
            .update(a)
            .map_or(FleetKeyOutcome::Nothing, FleetKeyOutcome::Ask),
        None => FleetKeyOutcome::Nothing,
    }
}
