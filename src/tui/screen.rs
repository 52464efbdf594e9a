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

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::Write;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

use crossterm::event::{self, Event, KeyEventKind, KeyModifiers};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use super::app::App;
use super::arming::Progress;
use super::command::Command;
use super::control;
use super::dispatch;
use super::input::TermInput;
use super::keys::{KeyAction, action_for};
use super::layer_keys::{TERMINAL_KEYS, TerminalAction, action_in};
use super::mailbox::Mailbox;
use super::options::Options;
use super::run::{UiError, prepare};
use super::sized_backend::SizedBackend;
use super::stop::StopFlag;
use super::term_caps::TermCaps;
use super::update::{ScreenEnd, Update};
use super::view;

type Term = Terminal<SizedBackend<CrosstermBackend<FrameBuffer>>>;

/// Where ratatui draws a frame: memory, sent to the terminal whole by
/// [`FrameBuffer::send`]. The screen thread keeps a copy of the handle the
/// terminal draws into.
#[derive(Default, Clone)]
struct FrameBuffer(Rc<RefCell<Vec<u8>>>);

impl FrameBuffer {
    /// Sends what was drawn to the terminal.
    fn send(&self) -> std::io::Result<()> {
        let frame = std::mem::take(&mut *self.0.borrow_mut());
        if frame.is_empty() {
            return Ok(());
        }
        let mut out = std::io::stdout().lock();
        out.write_all(&frame)?;
        out.flush()
    }
}

impl Write for FrameBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    /// Nothing: the frame is sent whole by [`FrameBuffer::send`].
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Most inputs taken off the queue before the screen is drawn again: it
/// bounds how long a flood of input keeps the screen from drawing, it is
/// not a frame rate.
const BATCH: usize = 256;

/// What the screen thread waits for.
enum Input {
    /// What one read of the terminal decoded to.
    Term(Vec<TermInput>),
    /// The terminal changed size (SIGWINCH).
    Resize,
    /// A signal; a stop signal has raised the [`StopFlag`] first.
    Signal(i32),
    /// Something the screen holds changed on a thread of its own (a tune
    /// finished): only a redraw is needed.
    Redraw,
    /// The control thread has posted what changed (a write starting or
    /// ending among it) to the [`Mailbox`].
    Mail,
}

/// What this terminal can do, looked up once ([`TermCaps`]).
fn caps() -> TermCaps {
    static CAPS: std::sync::OnceLock<TermCaps> = std::sync::OnceLock::new();
    *CAPS.get_or_init(TermCaps::from_env)
}

/// Restores the terminal; called on every way out. Only what was asked of
/// it is undone: a terminal without mouse reports gets no sequence for them.
fn restore_terminal() {
    let _ = disable_raw_mode();
    let mut out = std::io::stdout();
    let _ = crossterm::queue!(out, LeaveAlternateScreen);
    if caps().mouse {
        let _ = crossterm::queue!(out, event::DisableMouseCapture);
    }
    if caps().paste {
        let _ = crossterm::queue!(out, event::DisableBracketedPaste);
    }
    let _ = execute!(out, crossterm::cursor::Show);
    discard_pending_input();
}

/// Drops what was typed or pasted into plugtop and not read yet: after a
/// signal ends the screen with a paste still arriving, its rest must not
/// reach the shell that comes next (as commands run as root).
fn discard_pending_input() {
    use rustix::termios::{QueueSelector, tcflush};
    use std::io::IsTerminal;
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        let _ = tcflush(&stdin, QueueSelector::IFlush);
    } else if let Ok(tty) = std::fs::File::open("/dev/tty") {
        let _ = tcflush(&tty, QueueSelector::IFlush);
    }
}

/// Raw mode, the alternate screen, mouse reports, and bracketed paste so
/// that pasted text arrives as text, never as keys: the last two where the
/// terminal has them ([`TermCaps`]).
fn enter_screen() -> std::io::Result<()> {
    enable_raw_mode()?;
    let mut out = std::io::stdout();
    crossterm::queue!(out, EnterAlternateScreen)?;
    if caps().mouse {
        crossterm::queue!(out, event::EnableMouseCapture)?;
    }
    if caps().paste {
        crossterm::queue!(out, event::EnableBracketedPaste)?;
    }
    out.flush()
}

/// Mouse reporting on (clicks and the wheel reach plugtop) or off (the
/// terminal selects text for copying); never asked of a terminal without it.
fn set_mouse(out: &mut impl Write, on: bool) -> std::io::Result<()> {
    if !caps().mouse {
        return Ok(());
    }
    if on {
        crossterm::queue!(out, event::EnableMouseCapture)
    } else {
        crossterm::queue!(out, event::DisableMouseCapture)
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

/// Makes the next draw repaint every cell: the screen is cleared (with
/// that frame) and ratatui forgets what it drew (`Terminal::clear` would
/// ask the terminal for the cursor position, and the keys thread reads the
/// answer).
fn redraw_all(terminal: &mut Term) -> std::io::Result<()> {
    use crossterm::terminal::{Clear, ClearType};
    // Back from Ctrl-Z, the terminal may have another size.
    terminal.backend().forget_size();
    crossterm::queue!(terminal.backend_mut(), Clear(ClearType::All))?;
    terminal.current_buffer_mut().reset();
    terminal.swap_buffers();
    Ok(())
}

/// The full-screen UI. Every way out restores the terminal; an armed guest
/// is put back on quit and on SIGHUP (an SSH drop), SIGTERM and SIGINT.
pub fn run_screen(options: &Options) -> Result<ScreenEnd, UiError> {
    let (prepared, mut source) = prepare(options)?;
    let (core, mut app) = prepared.into_parts();
    let stop = StopFlag::new();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // The terminal first (the failure policy that runs next ends the
        // process), but never at the guest's cost: a terminal nobody reads
        // blocks the writes that restore it, so they get a second, on a
        // thread of their own, and then the guest is given back anyway.
        let (done, restored) = std::sync::mpsc::channel();
        let restoring = std::thread::Builder::new().spawn(move || {
            restore_terminal();
            let _ = done.send(());
        });
        if restoring.is_ok() {
            let _ = restored.recv_timeout(std::time::Duration::from_secs(1));
        }
        previous(info);
    }));
    enter_screen()?;
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
    // A paste cut by a signal: take its rest before the terminal goes back
    // to the shell (then what is left unread is dropped).
    super::input::let_paste_end(super::input::PASTE_WAIT);
    restore_terminal();
    result
}

/// The keys thread and the signal thread. A stop signal (any signal that
/// would end the process, [`crate::stop_signals`]) raises `stop` and wakes
/// the control thread itself, so neither waits behind queued input; the
/// signal thread then ends the process once the guest is given back if
/// the screen thread has not ([`super::stuck_terminal`]).
fn spawn_inputs(
    inputs: &Sender<Input>,
    commands: &Sender<Command>,
    stop: &StopFlag,
) -> Result<(), UiError> {
    use signal_hook::consts::{SIGCONT, SIGTSTP, SIGWINCH};
    let keys = inputs.clone();
    super::input::spawn(move |batch| keys.send(Input::Term(batch)).is_ok())?;
    let mut caught = crate::stop_signals::catchable();
    caught.extend([SIGTSTP, SIGCONT, SIGWINCH]);
    let mut signals = signal_hook::iterator::Signals::new(&caught)?;
    let tx = inputs.clone();
    let control = commands.clone();
    let stop = stop.clone();
    std::thread::Builder::new()
        .name("plugtop-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                match signal {
                    SIGWINCH => {
                        let _ = tx.send(Input::Resize);
                    }
                    SIGTSTP | SIGCONT => {
                        let _ = tx.send(Input::Signal(signal));
                    }
                    _ => {
                        stop.raise(signal);
                        let _ = control.send(Command::Stop(signal));
                        let _ = tx.send(Input::Signal(signal));
                        super::stuck_terminal::end_once_given_back(
                            &stop,
                            super::stuck_terminal::GRACE,
                        );
                    }
                }
            }
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
    // Never dropped: ratatui's drop shows the cursor and, when that fails
    // (the terminal is gone: an SSH drop, `tmux kill-session`), reports it
    // with a print that panics on a closed stderr. restore_terminal() puts
    // the cursor back on every way out instead.
    let frames = FrameBuffer::default();
    let mut terminal = std::mem::ManuallyDrop::new(Terminal::new(SizedBackend::new(
        CrosstermBackend::new(frames.clone()),
    ))?);
    let mut screen = Screen {
        frames,
        queued: VecDeque::new(),
        stopping: false,
        mouse: true,
    };
    // The first frame paints every cell on a cleared screen: some
    // terminals show what was on the alternate screen before.
    redraw_all(&mut terminal)?;
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
    /// What the terminal drew and has not been sent yet.
    frames: FrameBuffer,
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
        terminal: &mut Term,
        stop: &StopFlag,
        mailbox: &Mailbox<impl Fn() -> bool>,
    ) -> Result<Option<ScreenEnd>, UiError> {
        use signal_hook::consts::{SIGCONT, SIGTSTP};
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
            Input::Signal(SIGTSTP) => suspend(terminal)?,
            Input::Signal(SIGCONT) => redraw_all(terminal)?,
            // A stop signal: seen through `stop` above.
            Input::Signal(_) => {}
            Input::Resize => {
                terminal.backend().forget_size();
                terminal.autoresize()?;
            }
            Input::Redraw => {}
            Input::Term(_) if self.stopping => {}
            Input::Term(events) => {
                for ev in events {
                    match control_key(&ev) {
                        Some('z') => suspend(terminal)?,
                        Some('l') => redraw_all(terminal)?,
                        _ => self.queued.push_back(ev),
                    }
                }
            }
        }
        Ok(None)
    }

    /// Applies the queued input to the app, sends what the keys ask of the
    /// control thread, and draws once: into memory, then to the terminal.
    fn draw(
        &mut self,
        terminal: &mut Term,
        app: &mut App,
        stop: &StopFlag,
        commands: &Sender<Command>,
    ) -> Result<(), UiError> {
        let size = terminal.size()?;
        let area = ratatui::layout::Rect::new(0, 0, size.width, size.height);
        app.set_screen_size(size.width, size.height, view::cpu_panel_size(area));
        let (width, rows) = view::list_area(area);
        app.set_list_area(width, rows);
        for command in dispatch::apply(app, &mut self.queued, stop) {
            self.stopping |= command == Command::Quit;
            let _ = commands.send(command);
        }
        if app.mouse() != self.mouse {
            self.mouse = app.mouse();
            set_mouse(terminal.backend_mut(), self.mouse)?;
        }
        terminal.draw(|f| view::draw(f, app))?;
        Ok(self.frames.send()?)
    }
}

/// Ctrl-Z (suspend, [`TERMINAL_KEYS`]) and Ctrl-L (repaint, the screen's
/// [`KeyAction::Redraw`]) belong to the terminal, whatever has the focus:
/// their letter.
fn control_key(input: &TermInput) -> Option<char> {
    let TermInput::Event(Event::Key(k)) = input else {
        return None;
    };
    if k.kind == KeyEventKind::Release || !k.modifiers.contains(KeyModifiers::CONTROL) {
        return None;
    }
    if action_in(TERMINAL_KEYS, *k) == Some(TerminalAction::Suspend) {
        return Some('z');
    }
    (action_for(*k) == Some(KeyAction::Redraw)).then_some('l')
}
