//! The fleet screen's shell: the terminal, the threads, the clock. Keys
//! come from the keys thread, answers from the query thread (Prometheus
//! is never asked on the screen's thread, so a slow or dead one never
//! freezes it), refreshes from a timer; each becomes an update of
//! [`FleetApp`] and one redraw. Every way out gives the terminal back.

use std::io::Write;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, SystemTime};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use super::FleetError;
use super::app::{FleetAction, FleetApp, Request};
use super::fetch::{self, GuestDetail, Scope};
use super::model::Fleet;
use super::query::Prometheus;
use crate::tui::input::TermInput;

/// What the screen waits for.
enum Msg {
    Keys(Vec<TermInput>),
    Fleet(Fleet, f64),
    GuestDetail(GuestDetail, f64),
    Tick,
    Resize,
    Stop,
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

fn restore() {
    let _ = crossterm::terminal::disable_raw_mode();
    let _ = crossterm::execute!(
        std::io::stdout(),
        LeaveAlternateScreen,
        crossterm::event::DisableBracketedPaste,
        crossterm::cursor::Show
    );
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
            start,
            end,
        }) = detail
        {
            let d = fetch::detail(client.as_ref(), &scope, &job, &instance, start, end);
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
fn action(app: &FleetApp, key: KeyEvent) -> Option<FleetAction> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    Some(match key.code {
        KeyCode::Char('c') if ctrl => FleetAction::Quit,
        KeyCode::Char('q') => FleetAction::Quit,
        KeyCode::Up | KeyCode::Char('k') => FleetAction::Up,
        KeyCode::Down | KeyCode::Char('j') => FleetAction::Down,
        KeyCode::PageUp => FleetAction::PageUp,
        KeyCode::PageDown => FleetAction::PageDown,
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
        _ => {
            let _ = app;
            return None;
        }
    })
}

/// The fleet screen until `q` or a stop signal.
pub fn run(client: Box<dyn Prometheus>, options: FleetOptions) -> Result<(), FleetError> {
    let (tx, rx) = channel();
    let (requests, request_rx) = channel();
    let scope = options.scope.clone();
    let answers = tx.clone();
    std::thread::Builder::new()
        .name("plugtop-fleet-query".into())
        .spawn(move || worker(client, scope, request_rx, answers))?;
    let ticks = tx.clone();
    let every = options.refresh.max(Duration::from_millis(500));
    std::thread::Builder::new()
        .name("plugtop-fleet-timer".into())
        .spawn(move || {
            loop {
                std::thread::sleep(every);
                if ticks.send(Msg::Tick).is_err() {
                    break;
                }
            }
        })?;
    let signals_tx = tx.clone();
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGWINCH,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
    ])?;
    std::thread::Builder::new()
        .name("plugtop-fleet-signals".into())
        .spawn(move || {
            for s in signals.forever() {
                let msg = if s == signal_hook::consts::SIGWINCH {
                    Msg::Resize
                } else {
                    Msg::Stop
                };
                if signals_tx.send(msg).is_err() {
                    break;
                }
            }
        })?;
    let keys = tx.clone();
    crate::tui::input::spawn(move |batch| keys.send(Msg::Keys(batch)).is_ok())?;
    drop(tx);

    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
    crossterm::terminal::enable_raw_mode()?;
    let result = crossterm::execute!(
        std::io::stdout(),
        EnterAlternateScreen,
        crossterm::event::EnableBracketedPaste
    )
    .map_err(FleetError::from)
    .and_then(|()| screen_loop(&options, &rx, &requests));
    restore();
    result
}

fn screen_loop(
    options: &FleetOptions,
    rx: &Receiver<Msg>,
    requests: &Sender<Request>,
) -> Result<(), FleetError> {
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
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
    loop {
        let size = terminal.size()?;
        app.page = usize::from(size.height.saturating_sub(6)).max(1);
        terminal.draw(|f| super::table::draw(f, &app))?;
        let Ok(msg) = rx.recv() else {
            return Ok(());
        };
        match msg {
            Msg::Stop => return Ok(()),
            Msg::Resize => {
                terminal.autoresize()?;
            }
            Msg::Tick => {
                if !app.busy {
                    let r = match app.view {
                        super::app::FleetView::GuestDetail => app.update(FleetAction::Refresh),
                        _ => Some(Request::Fleet),
                    };
                    if let Some(r) = r {
                        ask(&mut app, r);
                    }
                }
            }
            Msg::Fleet(f, at) => app.on_fleet(f, at),
            Msg::GuestDetail(d, at) => app.on_detail(d, at),
            Msg::Keys(batch) => {
                for input in batch {
                    let TermInput::Event(event) = input else {
                        continue;
                    };
                    match event {
                        Event::Paste(text) if app.filtering => {
                            for c in text.chars().take(64) {
                                app.filter_key(Some(c), true);
                            }
                        }
                        // Raw mode makes Ctrl-C a key, not SIGINT: it quits
                        // while a filter is typed too (it typed a `c`), and
                        // other Ctrl keys type nothing.
                        Event::Key(key)
                            if app.filtering
                                && key.modifiers.contains(KeyModifiers::CONTROL)
                                && key.code == KeyCode::Char('c') =>
                        {
                            return Ok(());
                        }
                        Event::Key(key)
                            if app.filtering && key.modifiers.contains(KeyModifiers::CONTROL) => {}
                        Event::Key(key) if app.filtering => match key.code {
                            KeyCode::Enter => app.filter_key(None, true),
                            KeyCode::Esc => app.filter_key(None, false),
                            KeyCode::Backspace => app.filter_key(Some('\u{8}'), true),
                            KeyCode::Char(c) => app.filter_key(Some(c), true),
                            _ => {}
                        },
                        Event::Key(key) => {
                            let Some(a) = action(&app, key) else { continue };
                            if a == FleetAction::Quit {
                                return Ok(());
                            }
                            if let Some(r) = app.update(a) {
                                ask(&mut app, r);
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        let _ = std::io::stdout().flush();
    }
}
