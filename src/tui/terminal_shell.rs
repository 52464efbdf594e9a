//! The terminal shell of the three full screens (the main screen,
//! `plugtop train`, `plugtop fleet`): taking the terminal ([`enter`]) and
//! giving it back ([`leave`], [`restore`], [`restore_on_panic`]), the keys
//! thread (plugtop's own decoder, [`super::input`], which never swallows
//! the keyboard after an unfinished escape sequence) and the signal thread
//! ([`spawn_inputs`]), and drawing ([`ShellScreen`]: each frame drawn in
//! memory and sent whole). Bracketed paste and mouse reports are asked of
//! a terminal only where it has them ([`TermCaps`]).
//!
//! After a stop signal, a terminal nobody reads (a stalled SSH session, a
//! paused `tmux` pane) can block the screen thread in a write for good:
//! once the guest is given back and [`GRACE`] has passed, the signal
//! thread ends the process itself, leaving the terminal with what needs
//! no waiting ([`leave_without_waiting`]).

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crossterm::event::{DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste};
use crossterm::event::{EnableMouseCapture, Event, KeyEvent, KeyEventKind};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::backend::CrosstermBackend;
use ratatui::{Frame, Terminal};

use super::frame_diff::DiffTerminal;
use super::input::TermInput;
use super::layer_keys::{TERMINAL_KEYS, TerminalAction, action_in};
use super::sized_backend::SizedBackend;
use super::stop::StopFlag;
use super::term_caps::TermCaps;

/// What the terminal and the signals say to a screen.
#[derive(Debug)]
pub enum ShellEvent {
    /// What one read of the terminal decoded to.
    Keys(Vec<TermInput>),
    /// The terminal changed size (SIGWINCH).
    Resize,
    /// SIGTSTP, or Ctrl-Z read from the terminal: give the terminal back
    /// and stop ([`ShellScreen::suspend`]).
    Suspend,
    /// SIGCONT: back from a stop; the screen is drawn anew.
    Continue,
    /// A stop signal: the screen ends, and the process with 128 + it.
    Stop(i32),
}

/// What this terminal can do, looked up once ([`TermCaps`]).
fn caps() -> TermCaps {
    static CAPS: std::sync::OnceLock<TermCaps> = std::sync::OnceLock::new();
    *CAPS.get_or_init(TermCaps::from_env)
}

/// Mouse reports are on (asked by [`enter`] or [`ShellScreen::set_mouse`]).
static MOUSE: AtomicBool = AtomicBool::new(false);

/// Raw mode, the alternate screen, bracketed paste so that pasted text
/// arrives as text, never as keys, and mouse reports when `mouse`: the
/// last two where the terminal has them ([`TermCaps`]).
pub fn enter(mouse: bool) -> std::io::Result<()> {
    enable_raw_mode()?;
    let mut out = std::io::stdout();
    crossterm::queue!(out, EnterAlternateScreen)?;
    if caps().paste {
        crossterm::queue!(out, EnableBracketedPaste)?;
    }
    queue_mouse(&mut out, mouse)?;
    out.flush()
}

/// Mouse reports on or off, never asked of a terminal without them.
fn queue_mouse(out: &mut impl Write, on: bool) -> std::io::Result<()> {
    if !caps().mouse {
        return Ok(());
    }
    MOUSE.store(on, Ordering::SeqCst);
    if on {
        crossterm::queue!(out, EnableMouseCapture)
    } else {
        crossterm::queue!(out, DisableMouseCapture)
    }
}

/// Gives the terminal back, at once: raw mode off, the alternate screen
/// left, what [`enter`] asked for undone (and only that), the cursor
/// shown, and what was typed or pasted and not read yet dropped.
pub fn restore() {
    let _ = disable_raw_mode();
    let mut out = std::io::stdout();
    let _ = crossterm::queue!(out, LeaveAlternateScreen);
    if caps().mouse && MOUSE.load(Ordering::SeqCst) {
        let _ = crossterm::queue!(out, DisableMouseCapture);
    }
    if caps().paste {
        let _ = crossterm::queue!(out, DisableBracketedPaste);
    }
    let _ = crossterm::execute!(out, crossterm::cursor::Show);
    discard_pending_input();
}

/// The screen's way out: a paste still arriving (a signal cut it) is let
/// end first, so that its rest is dropped with what is unread rather than
/// reach the shell that comes next (as commands, run as root).
pub fn leave() {
    super::input::let_paste_end(super::input::PASTE_WAIT);
    restore();
}

/// Drops what was typed or pasted into plugtop and not read yet.
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

/// Which panics give the terminal back before they are told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PanicScope {
    /// Any thread's: the process ends on any panic (the failure policy).
    AnyThread,
    /// Only the calling (screen) thread's: a panic elsewhere is news the
    /// screen shows, and the screen goes on.
    ThisThread,
}

/// Installs the panic hook that restores the terminal, then tells the
/// panic as before. Never at the guest's cost: a terminal nobody reads
/// blocks the writes that restore it, so they get a second, on a thread
/// of their own, and then the hook goes on anyway.
pub fn restore_on_panic(scope: PanicScope) {
    let screen_thread = std::thread::current().id();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if scope == PanicScope::ThisThread && std::thread::current().id() != screen_thread {
            previous(info);
            return;
        }
        let (done, restored) = std::sync::mpsc::channel();
        let restoring = std::thread::Builder::new().spawn(move || {
            restore();
            let _ = done.send(());
        });
        if restoring.is_ok() {
            let _ = restored.recv_timeout(std::time::Duration::from_secs(1));
        }
        previous(info);
    }));
}

/// The keys thread and the signal thread, both handing what came to
/// `deliver` (the keys thread ends when it returns false). A stop signal
/// (any signal that would end the process, [`crate::stop_signals`])
/// raises `stop` before it is delivered, so nothing waits behind queued
/// input; once `stop` is given back, the screen has [`GRACE`] to end.
pub fn spawn_inputs(
    stop: &StopFlag,
    deliver: impl Fn(ShellEvent) -> bool + Send + Sync + 'static,
) -> std::io::Result<()> {
    use signal_hook::consts::{SIGCONT, SIGTSTP, SIGWINCH};
    let deliver = Arc::new(deliver);
    let keys = Arc::clone(&deliver);
    super::input::spawn(move |batch| keyboard(batch).into_iter().all(|event| keys(event)))?;
    let mut caught = crate::stop_signals::catchable();
    caught.extend([SIGTSTP, SIGCONT, SIGWINCH]);
    let mut signals = signal_hook::iterator::Signals::new(&caught)?;
    let stop = stop.clone();
    std::thread::Builder::new()
        .name("plugtop-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                let event = match signal {
                    SIGWINCH => ShellEvent::Resize,
                    SIGTSTP => ShellEvent::Suspend,
                    SIGCONT => ShellEvent::Continue,
                    _ => {
                        stop.raise(signal);
                        ShellEvent::Stop(signal)
                    }
                };
                let stopping = matches!(event, ShellEvent::Stop(_));
                let _ = deliver(event);
                if stopping {
                    // Normally the process ends on the screen's way out first.
                    let (status, done) = stop.wait_given_back();
                    std::thread::sleep(GRACE);
                    leave_without_waiting(status, done);
                    std::process::exit(status);
                }
            }
        })?;
    Ok(())
}

/// One read of the terminal as the screens get it. Ctrl-Z belongs to the
/// terminal whatever has the focus ([`TERMINAL_KEYS`]): raw mode makes it a
/// key, not SIGTSTP, so it becomes [`ShellEvent::Suspend`] in its place,
/// between the keys read before and after it, and every screen stops on
/// it as on SIGTSTP.
fn keyboard(batch: Vec<TermInput>) -> Vec<ShellEvent> {
    let mut events = Vec::new();
    let mut keys = Vec::new();
    for input in batch {
        if pressed(&input)
            .is_some_and(|k| action_in(TERMINAL_KEYS, k) == Some(TerminalAction::Suspend))
        {
            if !keys.is_empty() {
                events.push(ShellEvent::Keys(std::mem::take(&mut keys)));
            }
            events.push(ShellEvent::Suspend);
        } else {
            keys.push(input);
        }
    }
    if !keys.is_empty() {
        events.push(ShellEvent::Keys(keys));
    }
    events
}

/// A key pressed or repeated (not released), among what the keys thread
/// decoded.
pub fn pressed(input: &TermInput) -> Option<KeyEvent> {
    match input {
        TermInput::Event(Event::Key(k)) if k.kind != KeyEventKind::Release => Some(*k),
        _ => None,
    }
}

/// How long the screen thread has, once the guest is given back after a
/// stop signal, to give the terminal back itself.
pub const GRACE: Duration = Duration::from_secs(2);

/// Gives the terminal back as far as that never waits for its reader:
/// termios is set at once (no drain), and the closing sequences and a
/// line saying why go in one write on a non-blocking descriptor of its
/// own, dropped when the terminal has no room. `done` is what was done to
/// the guest, as the screen said it when it gave the guest back.
fn leave_without_waiting(status: i32, done: &str) {
    use rustix::fs::{Mode, OFlags, open};
    let _ = disable_raw_mode();
    let Ok(tty) = open(
        "/dev/tty",
        OFlags::WRONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    let _ = rustix::termios::tcflush(&tty, rustix::termios::QueueSelector::IFlush);
    let text = format!(
        "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1015l\x1b[?2004l\x1b[?25h\x1b[?1049l\r\nplugtop: the terminal took no output; ended without it: {done} (exit status {status})\r\n"
    );
    let _ = rustix::io::write(&tty, text.as_bytes());
}

/// Where ratatui draws a frame: memory, sent to the terminal whole by
/// [`FrameBuffer::send`]. The screen keeps a copy of the handle the
/// terminal draws into.
#[derive(Default, Clone)]
pub(crate) struct FrameBuffer(Rc<RefCell<Vec<u8>>>);

impl FrameBuffer {
    /// What was drawn and not sent yet, taken.
    #[cfg(test)]
    pub(crate) fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.borrow_mut())
    }

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

/// The terminal a screen draws on, its size asked only when it may have
/// changed ([`SizedBackend`]), each frame compared with the one before by
/// [`DiffTerminal`].
type ShellTerminal = DiffTerminal<SizedBackend<CrosstermBackend<FrameBuffer>>>;

/// A full screen's terminal after [`enter`]: each frame drawn into memory
/// and sent in one write.
pub struct ShellScreen {
    /// Never dropped: ratatui's drop shows the cursor and, when that fails
    /// (the terminal is gone: an SSH drop, `tmux kill-session`), reports
    /// it with a print that panics on a closed stderr. [`restore`] puts
    /// the cursor back on every way out instead.
    terminal: std::mem::ManuallyDrop<ShellTerminal>,
    frames: FrameBuffer,
}

impl ShellScreen {
    /// The terminal, its first frame to paint every cell on a cleared
    /// screen (some terminals show what was on the alternate screen
    /// before).
    pub fn new() -> std::io::Result<ShellScreen> {
        let frames = FrameBuffer::default();
        let terminal = DiffTerminal::new(Terminal::new(SizedBackend::new(CrosstermBackend::new(
            frames.clone(),
        )))?);
        let mut screen = ShellScreen {
            terminal: std::mem::ManuallyDrop::new(terminal),
            frames,
        };
        screen.redraw_all()?;
        Ok(screen)
    }

    /// The terminal's size.
    pub fn size(&self) -> std::io::Result<ratatui::layout::Size> {
        self.terminal.terminal().size()
    }

    /// Draws a frame and sends it.
    pub fn draw(&mut self, render: impl FnOnce(&mut Frame)) -> std::io::Result<()> {
        self.terminal.draw(render)?;
        self.frames.send()
    }

    /// The terminal changed size: the next frame fits the new one.
    pub fn resized(&mut self) -> std::io::Result<()> {
        self.terminal.terminal().backend().forget_size();
        self.terminal.autoresize()
    }

    /// Makes the next draw repaint every cell: the screen is cleared (with
    /// that frame) and the screen forgets what it sent (`Terminal::clear`
    /// would ask the terminal for the cursor position, and the keys thread
    /// reads the answer).
    pub fn redraw_all(&mut self) -> std::io::Result<()> {
        use crossterm::terminal::{Clear, ClearType};
        // Back from Ctrl-Z, the terminal may have another size.
        self.terminal.terminal().backend().forget_size();
        crossterm::queue!(
            self.terminal.terminal_mut().backend_mut(),
            Clear(ClearType::All)
        )?;
        self.terminal.forget_shown();
        Ok(())
    }

    /// Ctrl-Z or SIGTSTP: give the terminal back, stop, and on `fg` take
    /// it again (mouse reports as they were) with a full redraw.
    pub fn suspend(&mut self) -> std::io::Result<()> {
        let mouse = MOUSE.load(Ordering::SeqCst);
        restore();
        signal_hook::low_level::emulate_default_handler(signal_hook::consts::SIGTSTP)?;
        enter(mouse)?;
        self.redraw_all()
    }

    /// Mouse reporting on (clicks and the wheel reach plugtop) or off (the
    /// terminal selects text for copying).
    pub fn set_mouse(&mut self, on: bool) -> std::io::Result<()> {
        queue_mouse(self.terminal.terminal_mut().backend_mut(), on)
    }

    /// What an event asks of the terminal itself: a new size, a stop
    /// (SIGTSTP) or a repaint after one. Whether it was one of those.
    pub fn follow(&mut self, event: &ShellEvent) -> std::io::Result<bool> {
        match event {
            ShellEvent::Resize => self.resized()?,
            ShellEvent::Suspend => self.suspend()?,
            ShellEvent::Continue => self.redraw_all()?,
            ShellEvent::Keys(_) | ShellEvent::Stop(_) => return Ok(false),
        }
        Ok(true)
    }
}
