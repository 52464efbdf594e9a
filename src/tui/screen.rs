//! The screen thread: it owns the terminal, reads keys and signals, and
//! draws. It never waits for the guest: readings and writes run on the
//! control thread ([`super::control`]); while that thread holds the app (a
//! CPU going offline), the screen shows what is in progress and queues the
//! keys. No fixed frame rate: it draws when a key, a signal or a reading
//! arrives.

use std::collections::VecDeque;
use std::io::Stdout;
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex, TryLockError};

use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers, MouseEventKind};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use super::app::{App, Dialog};
use super::arming::ProgressState;
use super::control::{self, Command, Report, Shared, needs_control};
use super::keys::{KeyAction, action_for};
use super::run::{Options, ScreenEnd, UiError, prepare};
use super::view;

type Term = Terminal<CrosstermBackend<Stdout>>;

/// What the screen thread waits for.
enum Input {
    Term(Event),
    Signal(i32),
    Report(Report),
    /// The actuator started or finished a write.
    Progress,
}

/// Restores the terminal; called on every way out.
fn restore_terminal() {
    let _ = disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        LeaveAlternateScreen,
        event::DisableMouseCapture,
        crossterm::cursor::Show
    );
}

fn enter_screen() -> std::io::Result<()> {
    enable_raw_mode()?;
    execute!(
        std::io::stdout(),
        EnterAlternateScreen,
        event::EnableMouseCapture
    )
}

/// Mouse reporting on (clicks and the wheel reach plugtop) or off (the
/// terminal selects text for copying).
fn set_mouse(on: bool) -> std::io::Result<()> {
    if on {
        execute!(std::io::stdout(), event::EnableMouseCapture)
    } else {
        execute!(std::io::stdout(), event::DisableMouseCapture)
    }
}

/// Ctrl-Z or SIGTSTP: give the terminal back, stop, and on `fg` take it
/// again with a full redraw.
fn suspend(terminal: &mut Term) -> std::io::Result<()> {
    restore_terminal();
    signal_hook::low_level::emulate_default_handler(signal_hook::consts::SIGTSTP)?;
    enter_screen()?;
    redraw_all(terminal)
}

/// Makes the next draw repaint every cell: the screen is cleared and
/// ratatui forgets what it drew (`Terminal::clear` would ask the terminal
/// for the cursor position, and the keys thread reads the answer).
fn redraw_all(terminal: &mut Term) -> std::io::Result<()> {
    use crossterm::terminal::{Clear, ClearType};
    execute!(std::io::stdout(), Clear(ClearType::All))?;
    terminal.current_buffer_mut().reset();
    terminal.swap_buffers();
    Ok(())
}

/// The full-screen UI. Every way out restores the terminal; an armed guest
/// is put back on quit and on SIGHUP (an SSH drop), SIGTERM and SIGINT.
pub fn run_screen(options: &Options) -> Result<ScreenEnd, UiError> {
    let (app, mut source) = prepare(options)?;
    let shared = Shared {
        app: Mutex::new(app),
        progress: Arc::new(ProgressState::default()),
    };
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        previous(info);
    }));
    enter_screen()?;
    let (inputs, input_rx) = channel();
    let (commands, command_rx) = channel();
    let progress = inputs.clone();
    shared.progress.on_change(move || {
        let _ = progress.send(Input::Progress);
    });
    let result = spawn_inputs(&inputs).and_then(|()| {
        std::thread::scope(|scope| {
            let reports = inputs.clone();
            let control_options = options.clone();
            let shared = &shared;
            let source = source.as_mut();
            scope.spawn(move || {
                control::run(control_options, shared, source, &command_rx, |r| {
                    reports.send(Input::Report(r)).is_ok()
                })
            });
            let ended = screen_loop(shared, &input_rx, &commands);
            // Whatever ended the screen, the control thread puts the guest
            // back before it ends.
            let _ = commands.send(Command::Quit);
            ended
        })
    });
    restore_terminal();
    result
}

fn spawn_inputs(inputs: &Sender<Input>) -> Result<(), UiError> {
    use signal_hook::consts::{SIGCONT, SIGHUP, SIGINT, SIGTERM, SIGTSTP, SIGWINCH};
    let keys = inputs.clone();
    super::input::spawn(move |ev| keys.send(Input::Term(ev)).is_ok())?;
    let mut signals =
        signal_hook::iterator::Signals::new([SIGHUP, SIGTERM, SIGINT, SIGTSTP, SIGCONT, SIGWINCH])?;
    let tx = inputs.clone();
    std::thread::Builder::new()
        .name("plugtop-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                let input = if signal == SIGWINCH {
                    let (w, h) = crossterm::terminal::size().unwrap_or((80, 24));
                    Input::Term(Event::Resize(w, h))
                } else {
                    Input::Signal(signal)
                };
                if tx.send(input).is_err() {
                    break;
                }
            }
        })?;
    Ok(())
}

/// Keys and redraws until the control thread says everything is put back.
fn screen_loop(
    shared: &Shared,
    inputs: &std::sync::mpsc::Receiver<Input>,
    commands: &Sender<Command>,
) -> Result<ScreenEnd, UiError> {
    use signal_hook::consts::{SIGCONT, SIGTSTP};
    // Never dropped: ratatui's drop shows the cursor and, when that fails
    // (the terminal is gone: an SSH drop, `tmux kill-session`), reports it
    // with a print that panics on a closed stderr. restore_terminal() puts
    // the cursor back on every way out instead.
    let mut terminal =
        std::mem::ManuallyDrop::new(Terminal::new(CrosstermBackend::new(std::io::stdout()))?);
    let mut queued: VecDeque<Event> = VecDeque::new();
    // The busy line was written past ratatui's buffers: redraw all next time.
    let mut scribbled = false;
    let mut stopping = false;
    let mut mouse = true;
    loop {
        let Ok(input) = inputs.recv() else {
            return Ok(ScreenEnd::Quit);
        };
        match input {
            Input::Report(Report::Ended(end)) => return Ok(end),
            Input::Report(Report::Changed) | Input::Progress => {}
            Input::Signal(SIGTSTP) => suspend(&mut terminal)?,
            Input::Signal(SIGCONT) => redraw_all(&mut terminal)?,
            Input::Signal(signal) => {
                stopping = true;
                let _ = commands.send(Command::Stop(signal));
            }
            Input::Term(Event::Key(k))
                if k.kind != KeyEventKind::Release
                    && k.code == KeyCode::Char('z')
                    && k.modifiers.contains(KeyModifiers::CONTROL) =>
            {
                suspend(&mut terminal)?;
            }
            Input::Term(Event::Key(k))
                if k.kind != KeyEventKind::Release
                    && k.code == KeyCode::Char('l')
                    && k.modifiers.contains(KeyModifiers::CONTROL) =>
            {
                redraw_all(&mut terminal)?;
            }
            Input::Term(Event::Resize(..)) => terminal.autoresize()?,
            Input::Term(ev) if !stopping => queued.push_back(ev),
            Input::Term(_) => {}
        }
        match shared.app.try_lock() {
            Ok(mut app) => {
                let size = terminal.size()?;
                app.screen_size = (size.width, size.height);
                app.cpu_page =
                    view::cpu_page(ratatui::layout::Rect::new(0, 0, size.width, size.height));
                while let Some(ev) = queued.pop_front() {
                    if let Some(command) = key(&mut app, ev) {
                        stopping |= command == Command::Quit;
                        let _ = commands.send(command);
                    }
                }
                if app.mouse != mouse {
                    mouse = app.mouse;
                    set_mouse(mouse)?;
                }
                if std::mem::take(&mut scribbled) {
                    redraw_all(&mut terminal)?;
                }
                terminal.draw(|f| view::draw(f, &app))?;
            }
            Err(TryLockError::WouldBlock) => {
                busy(&mut terminal, shared)?;
                scribbled = true;
            }
            Err(TryLockError::Poisoned(p)) => {
                let app = p.into_inner();
                terminal.draw(|f| view::draw(f, &app))?;
            }
        }
    }
}

/// The control thread holds the app (a write in progress): the last screen
/// stays, with what is being done written over its bottom line.
fn busy(terminal: &mut Term, shared: &Shared) -> std::io::Result<()> {
    use crossterm::cursor::MoveTo;
    use crossterm::style::{Attribute, Print, SetAttribute};
    let what = shared.progress.text().unwrap_or_else(|| "working".into());
    let area = terminal.size()?;
    let text = format!(" … {what} (keys wait) ");
    let text: String = text.chars().take(usize::from(area.width)).collect();
    execute!(
        std::io::stdout(),
        MoveTo(0, area.height.saturating_sub(1)),
        SetAttribute(Attribute::Reverse),
        Print(text),
        SetAttribute(Attribute::Reset)
    )
}

/// One key or mouse event on the app; what the control thread must do.
fn key(app: &mut App, ev: Event) -> Option<Command> {
    if let Event::Key(k) = ev
        && k.kind != KeyEventKind::Release
        && app.tune_shown
        && app.whatif.is_none()
    {
        app.tune_key(k);
        return None;
    }
    if let Event::Key(k) = ev
        && k.kind != KeyEventKind::Release
        && app.export_prompt.is_some()
    {
        return app.export_key(k).map(Command::Export);
    }
    if let Event::Key(k) = ev
        && k.kind != KeyEventKind::Release
        && app.whatif.is_some()
    {
        app.whatif_key(k);
        return None;
    }
    if let Event::Key(k) = ev
        && k.kind != KeyEventKind::Release
        && app.log_filter_editing
    {
        app.search_key(k);
        return None;
    }
    let action = match ev {
        // Any key closes the help or a message, bound or not.
        Event::Key(k)
            if k.kind != KeyEventKind::Release
                && (app.help || matches!(app.dialog, Some(Dialog::Message(_)))) =>
        {
            Some(action_for(k).unwrap_or(KeyAction::Later))
        }
        Event::Key(k) if k.kind != KeyEventKind::Release => action_for(k),
        Event::Mouse(m) => match m.kind {
            MouseEventKind::ScrollUp => Some(KeyAction::Up),
            MouseEventKind::ScrollDown => Some(KeyAction::Down),
            MouseEventKind::Down(crossterm::event::MouseButton::Left) => {
                view::click(app, m.column, m.row);
                None
            }
            _ => None,
        },
        _ => None,
    }?;
    let closes_message = app.help || matches!(app.dialog, Some(Dialog::Message(_)));
    // `y` approves the proposal on screen now, even if the control thread
    // revises it before it gets to the key.
    if action == KeyAction::Yes
        && app.dialog.is_none()
        && !app.help
        && let Some(shown) = app.session.controller().pending()
    {
        return Some(Command::Accept(Box::new(shown.clone())));
    }
    if needs_control(action) && !closes_message {
        return Some(Command::Act(action));
    }
    app.update(action);
    if app.quit {
        return Some(Command::Quit);
    }
    Some(Command::Wake)
}
