//! The screen thread: it owns the terminal and the screen's state
//! ([`App`]), reads keys and signals, and draws. It never waits for the
//! guest: readings and writes run on the control thread
//! ([`super::control`]), which owns the session and sends what changed as
//! messages; a write in progress (a CPU going offline) is one of them, drawn
//! in the status line while keys go on working. No fixed frame rate: it
//! draws when a key, a signal or a message arrives, once for everything
//! that arrived meanwhile (a paste, or keys faster than a redraw, cost one
//! redraw). A stop signal is acted on before any input still queued. The
//! two threads share nothing but channels and the stop flag, so a terminal
//! nobody reads cannot stop the control thread from putting the guest back.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

use crossterm::event::KeyModifiers;

use super::app::App;
use super::arming::Progress;
use super::command::Command;
use super::control;
use super::dispatch;
use super::input::TermInput;
use super::keys::{KeyAction, action_for};
use super::options::Options;
use super::run::{UiError, prepare};
use super::stop::StopFlag;
use super::terminal_shell::{self as shell, PanicScope, ShellEvent, ShellScreen};
use super::update::{ScreenEnd, ScreenOutcome, Update};
use super::update_backlog::Mailbox;
use super::view;

/// Most inputs taken off the queue before the screen is drawn again: it
/// bounds how long a flood of input keeps the screen from drawing, it is
/// not a frame rate.
const BATCH: usize = 256;

/// What the screen thread waits for.
enum Input {
    /// The terminal or a signal ([`shell::spawn_inputs`]); a stop signal
    /// has raised the [`StopFlag`] first.
    Shell(ShellEvent),
    /// Something the screen holds changed on a thread of its own (a tune
    /// finished): only a redraw is needed.
    Redraw,
    /// The control thread has posted what changed (a write starting or
    /// ending among it) to the [`Mailbox`].
    Mail,
}

/// The full-screen UI. Every way out restores the terminal; an armed guest
/// is put back on quit and on SIGHUP (an SSH drop), SIGTERM and SIGINT.
pub fn run_screen(options: &Options) -> Result<ScreenOutcome, UiError> {
    let (prepared, mut source) = prepare(options)?;
    let (core, mut app) = prepared.into_parts();
    let stop = StopFlag::new();
    // The terminal first: the failure policy that runs next ends the
    // process on a panic in any thread.
    shell::restore_on_panic(PanicScope::AnyThread);
    shell::enter(true)?;
    let (inputs, input_rx) = channel();
    let (commands, command_rx) = channel();
    // What the control thread says waits in the mailbox, bounded however
    // long the screen is stuck; the screen's queue holds one wake-up.
    let waker = inputs.clone();
    let mailbox = Arc::new(Mailbox::new(move || waker.send(Input::Mail).is_ok()));
    let tuned = inputs.clone();
    app.set_wake(Arc::new(move || {
        let _ = tuned.send(Input::Redraw);
    }));
    let working = Arc::clone(&mailbox);
    let progress: Progress = Arc::new(move |what| {
        working.post(vec![Update::Working(what)]);
    });
    let result = spawn_inputs(&inputs, &commands, &stop).and_then(|()| {
        std::thread::scope(|scope| {
            let reports = Arc::clone(&mailbox);
            let control_options = options.clone();
            let stop = &stop;
            let source = source.as_mut();
            scope.spawn(move || {
                control::run(
                    control_options,
                    core,
                    source,
                    &command_rx,
                    stop,
                    progress,
                    |updates| reports.post(updates),
                )
            });
            let ended = screen_loop(&mut app, stop, &input_rx, &mailbox, &commands);
            // Whatever ended the screen, the control thread puts the guest
            // back before it ends.
            let _ = commands.send(Command::Quit);
            ended
        })
    });
    shell::leave();
    // What the screen showed as an alarm is said again on the normal
    // terminal, where it stays after the screen is gone.
    result.map(|end| ScreenOutcome {
        end,
        warnings: app.damage().map(str::to_string).into_iter().collect(),
    })
}

/// The shell's keys and signal threads. A stop signal also wakes the
/// control thread itself, so it does not wait behind queued input to put
/// the guest back; the shell ends the process once that is done if the
/// screen thread has not.
fn spawn_inputs(
    inputs: &Sender<Input>,
    commands: &Sender<Command>,
    stop: &StopFlag,
) -> Result<(), UiError> {
    let tx = inputs.clone();
    let control = commands.clone();
    shell::spawn_inputs(stop, move |event| {
        if let ShellEvent::Stop(signal) = event {
            let _ = control.send(Command::Stop(signal));
        }
        tx.send(Input::Shell(event)).is_ok()
    })?;
    Ok(())
}

/// Keys and redraws until the control thread says everything is put back.
fn screen_loop(
    app: &mut App,
    stop: &StopFlag,
    inputs: &Receiver<Input>,
    mailbox: &Mailbox<impl Fn() -> bool>,
    commands: &Sender<Command>,
) -> Result<ScreenEnd, UiError> {
    let mut terminal = ShellScreen::new()?;
    let mut screen = Screen {
        queued: VecDeque::new(),
        stopping: false,
        mouse: true,
    };
    loop {
        let Ok(first) = inputs.recv() else {
            return Ok(ScreenEnd::Quit);
        };
        // Everything that arrived meanwhile is taken before one redraw.
        for input in std::iter::once(first).chain(inputs.try_iter().take(BATCH - 1)) {
            if let Some(end) = screen.take(input, app, &mut terminal, stop, mailbox)? {
                return Ok(end);
            }
        }
        screen.draw(&mut terminal, app, stop, commands)?;
    }
}

/// The screen thread's state between redraws.
struct Screen {
    /// Keys, clicks and pastes not yet applied to the app.
    queued: VecDeque<TermInput>,
    /// Quit or a stop signal: keys are dropped now.
    stopping: bool,
    mouse: bool,
}

impl Screen {
    /// Sorts one input: the control thread's updates go into the app,
    /// signals and the terminal's own keys (Ctrl-Z, Ctrl-L) are acted on
    /// at once, the rest queued for the app. How the screen ended, when
    /// the control thread says so.
    fn take(
        &mut self,
        input: Input,
        app: &mut App,
        terminal: &mut ShellScreen,
        stop: &StopFlag,
        mailbox: &Mailbox<impl Fn() -> bool>,
    ) -> Result<Option<ScreenEnd>, UiError> {
        // Signals first: a stop drops whatever input is still queued.
        if stop.raised().is_some() {
            self.stopping = true;
            self.queued.clear();
        }
        match input {
            Input::Mail => {
                for update in mailbox.take() {
                    if let Update::Ended(end) = update {
                        return Ok(Some(end));
                    }
                    app.apply(update);
                }
            }
            // A stop signal: seen through `stop` above.
            Input::Shell(ShellEvent::Stop(_)) | Input::Redraw => {}
            // Stopping, the guest is being given back: no key, and no
            // Ctrl-Z or SIGTSTP, stops that.
            Input::Shell(ShellEvent::Keys(_) | ShellEvent::Suspend) if self.stopping => {}
            Input::Shell(ShellEvent::Keys(events)) => {
                for ev in events {
                    if repaint_key(&ev) {
                        terminal.redraw_all()?;
                    } else {
                        self.queued.push_back(ev);
                    }
                }
            }
            Input::Shell(event) => {
                terminal.follow(&event)?;
            }
        }
        Ok(None)
    }

    /// Applies the queued input to the app, sends what the keys ask of the
    /// control thread, and draws once: into memory, then to the terminal.
    fn draw(
        &mut self,
        terminal: &mut ShellScreen,
        app: &mut App,
        stop: &StopFlag,
        commands: &Sender<Command>,
    ) -> Result<(), UiError> {
        let size = terminal.size()?;
        let area = ratatui::layout::Rect::new(0, 0, size.width, size.height);
        app.set_screen_size(size.width, size.height, view::cpu_panel_size(area));
        let (width, rows) = view::list_area(area);
        app.set_list_area(width, rows);
        app.set_help_keys(view::help_keys_inside(app));
        for command in dispatch::apply(app, &mut self.queued, stop) {
            self.stopping |= command == Command::Quit;
            let _ = commands.send(command);
        }
        if app.mouse() != self.mouse {
            self.mouse = app.mouse();
            terminal.set_mouse(self.mouse)?;
        }
        terminal.draw(|f| view::draw(f, app))?;
        app.drawn();
        Ok(())
    }
}

/// Ctrl-L (repaint, the screen's [`KeyAction::Redraw`]) belongs to the
/// terminal, whatever has the focus (Ctrl-Z too: the shell makes it a
/// [`ShellEvent::Suspend`] for every screen).
fn repaint_key(input: &TermInput) -> bool {
    shell::pressed(input).is_some_and(|k| {
        k.modifiers.contains(KeyModifiers::CONTROL) && action_for(k) == Some(KeyAction::Redraw)
    })
}
