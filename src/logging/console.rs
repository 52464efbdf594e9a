//! The terminal's writer for [`super::Console`]: lines go through a
//! bounded queue to a thread that writes them, so the thread that logs
//! never waits on a terminal or a pipe that is not being read. What does
//! not fit the queue is counted and said once there is room again.

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::time::Duration;

use super::Level;

/// Lines that may wait for the terminal before new ones are dropped.
const QUEUE: usize = 1024;

/// How long [`Writer::flush`] waits for the queue to be written (the last
/// lines of a run, "terminated" among them): past it, the stream is not
/// being read and the process ends without them.
const FLUSH_WAIT: Duration = Duration::from_secs(2);

/// What the writing thread is handed.
#[derive(Debug)]
enum Out {
    Line(Level, String),
    /// Answered once every line before it is written.
    Flush(SyncSender<()>),
}

/// The logging side of the queue.
#[derive(Debug)]
pub(super) struct Writer {
    queue: SyncSender<Out>,
    closed: Arc<AtomicBool>,
    /// Lines dropped since the last one that went into the queue.
    dropped: u64,
}

impl Writer {
    /// Starts the writing thread; `None` where no thread can be had (the
    /// caller then writes itself). A closed stream wakes the thread that
    /// started it, which [`crate::pace::park_until`] may be waiting in.
    pub(super) fn start() -> Option<Writer> {
        let (queue, lines) = std::sync::mpsc::sync_channel(QUEUE);
        let closed = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&closed);
        let owner = std::thread::current();
        std::thread::Builder::new()
            .name("plugtop-console".into())
            .spawn(move || write_all(&lines, &seen, &owner))
            .ok()?;
        Some(Writer {
            queue,
            closed,
            dropped: 0,
        })
    }

    /// Queues `line`; a full queue drops it and counts it.
    pub(super) fn send(&mut self, level: Level, line: String) {
        if self.dropped > 0 {
            let note = format!(
                "({} log lines were dropped: the terminal or pipe was not being read)",
                self.dropped
            );
            if self.queue.try_send(Out::Line(Level::Error, note)).is_err() {
                self.dropped += 1;
                return;
            }
            self.dropped = 0;
        }
        match self.queue.try_send(Out::Line(level, line)) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => self.dropped += 1,
            // The thread is gone (it never ends first): written here.
            Err(TrySendError::Disconnected(Out::Line(level, line))) => write(level, &line),
            Err(TrySendError::Disconnected(Out::Flush(_))) => {}
        }
    }

    /// Whether stdout or stderr was closed by its reader.
    pub(super) fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Waits up to [`FLUSH_WAIT`] for the lines queued so far to be written.
    pub(super) fn flush(&self) {
        let (done, written) = std::sync::mpsc::sync_channel(1);
        if self.queue.try_send(Out::Flush(done)).is_ok() {
            let _ = written.recv_timeout(FLUSH_WAIT);
        }
    }
}

/// The writing thread: every line in order until the logging side is
/// dropped. A stream closed by its reader gets no more lines (they are
/// taken and dropped, so the queue never fills behind it); the other one
/// still gets its own.
fn write_all(lines: &Receiver<Out>, closed: &AtomicBool, owner: &std::thread::Thread) {
    let mut gone = [false; 2];
    for out in lines {
        match out {
            Out::Line(level, line) => {
                let stream = usize::from(level == Level::Error);
                if gone[stream] {
                    continue;
                }
                if let Err(e) = write_line(level, &line)
                    && e.kind() == std::io::ErrorKind::BrokenPipe
                {
                    gone[stream] = true;
                    closed.store(true, Ordering::SeqCst);
                    owner.unpark();
                }
            }
            Out::Flush(done) => {
                let _ = done.try_send(());
            }
        }
    }
}

fn write_line(level: Level, line: &str) -> std::io::Result<()> {
    match level {
        Level::Info => writeln!(std::io::stdout(), "{line}"),
        Level::Error => writeln!(std::io::stderr(), "{line}"),
    }
}

/// Whether a write to stdout or stderr may wait for someone: a terminal
/// (Ctrl-S), a pipe or a socket (a reader that stops reading). Regular
/// files and other devices (/dev/null) are written on the logging thread,
/// as ever, and cost no thread and no hand-over.
pub(super) fn may_hold() -> bool {
    fn holds(fd: std::os::fd::BorrowedFd<'_>) -> bool {
        use rustix::fs::FileType;
        rustix::termios::isatty(fd)
            || rustix::fs::fstat(fd).is_ok_and(|st| {
                matches!(
                    FileType::from_raw_mode(st.st_mode),
                    FileType::Fifo | FileType::Socket
                )
            })
    }
    use std::os::fd::AsFd as _;
    holds(std::io::stdout().as_fd()) || holds(std::io::stderr().as_fd())
}

/// Writes one line on the calling thread, whatever becomes of it (a closed
/// terminal must not stop the daemon).
pub(super) fn write(level: Level, line: &str) {
    let _ = write_line(level, line);
}
