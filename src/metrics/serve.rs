//! The `/metrics` endpoint (`plugtop run --metrics-listen ADDR:PORT`): one
//! thread, one `poll` loop, no HTTP crate and no runtime. It answers each
//! scrape by encoding the registry there and then, so the control loop
//! never waits for a scraper and wakes no more often when nobody scrapes.
//!
//! Written to be unbreakable by any client, since plugtop runs as root and
//! a panic anywhere ends it (the failure policy):
//! - a request head is at most [`HEAD_BYTES`]; more is answered 431 and closed;
//! - a client has [`HEAD_TIME`] to send its head and [`WRITE_TIME`] to read
//!   the answer, else it is dropped;
//! - at most [`CONNECTIONS`] clients at once: a new one takes the place of
//!   the oldest still sending its head (idle connections cannot lock out a
//!   scraper), or is closed at once when all are being answered;
//! - one request per connection (`Connection: close`): a pipelining client
//!   gets its first answer, nothing is queued for it;
//! - GET and HEAD only; errors of `accept` (EMFILE) are backed off and
//!   retried, said once in the log line the caller reads from [`MetricsServer::trouble`];
//! - dropping the server wakes the thread (an eventfd) and stops it at
//!   once, whatever the clients do.
//!
//! With no client connected the thread sleeps in `poll` without a timeout:
//! an idle endpoint costs no wake-ups.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use prometheus_client::registry::Registry;
use rustix::event::{EventfdFlags, PollFd, PollFlags, eventfd, poll};

use super::format;

/// The largest request head read (request line and headers).
pub const HEAD_BYTES: usize = 8 << 10;
/// How long a client may take to send its request head.
pub const HEAD_TIME: Duration = Duration::from_secs(5);
/// How long a client may take to read its answer.
pub const WRITE_TIME: Duration = Duration::from_secs(5);
/// The most clients served at once.
pub const CONNECTIONS: usize = 16;
/// How long accepting rests after it failed (out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(500);

/// A running endpoint; dropping it stops the thread.
pub struct MetricsServer {
    /// Written to stop the thread.
    stop: Arc<OwnedFd>,
    thread: Option<JoinHandle<()>>,
    trouble: Arc<Mutex<Option<String>>>,
    /// Where it listens (the port the system chose when asked for 0).
    pub addr: SocketAddr,
}

/// Why the endpoint could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot listen on {addr} for metrics: {why}")]
pub struct ServeError {
    addr: String,
    why: String,
}

impl MetricsServer {
    /// Listens on `addr` and serves `registry` at `/metrics`.
    pub fn start(addr: &str, registry: Arc<Registry>) -> Result<Self, ServeError> {
        let error = |why: String| ServeError {
            addr: addr.to_string(),
            why,
        };
        let listener = TcpListener::bind(addr).map_err(|e| error(e.to_string()))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| error(e.to_string()))?;
        let bound = listener.local_addr().map_err(|e| error(e.to_string()))?;
        let stop = Arc::new(
            eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
                .map_err(|e| error(e.to_string()))?,
        );
        let trouble = Arc::new(Mutex::new(None));
        let mut endpoint = Endpoint {
            listener,
            registry,
            clients: Vec::new(),
            resting_until: None,
            trouble: Arc::clone(&trouble),
            requests: 0,
        };
        let stopping = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("plugtop-metrics".into())
            .spawn(move || endpoint.serve(&stopping))
            .map_err(|e| error(e.to_string()))?;
        Ok(MetricsServer {
            stop,
            thread: Some(thread),
            trouble,
            addr: bound,
        })
    }

    /// A problem the endpoint ran into since last asked (accepting failed),
    /// for the caller's log; each kind is said once until it clears.
    pub fn trouble(&self) -> Option<String> {
        self.trouble
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        let _ = rustix::io::write(self.stop.as_fd(), &1u64.to_ne_bytes());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One client: reading its head, then writing its answer.
struct Client {
    stream: TcpStream,
    since: Instant,
    head: Vec<u8>,
    /// The answer, once the head is in, and how much of it went out.
    answer: Option<(Vec<u8>, usize)>,
}

/// The endpoint's state, owned by its thread.
struct Endpoint {
    listener: TcpListener,
    registry: Arc<Registry>,
    clients: Vec<Client>,
    /// Accepting failed: not before then.
    resting_until: Option<Instant>,
    trouble: Arc<Mutex<Option<String>>>,
    requests: usize,
}

impl Endpoint {
    /// Serves until `stop` is written to.
    fn serve(&mut self, stop: &OwnedFd) {
        loop {
            let accepting = self.resting_until.is_none_or(|t| Instant::now() >= t);
            let Some((listen_ready, ready)) = self.wait(accepting, stop) else {
                return;
            };
            // Clients first, highest index first: the indices are the
            // poll's, and both removing and accepting reorder the list.
            for i in ready {
                self.step(i);
            }
            if listen_ready {
                self.accept();
            }
            let now = Instant::now();
            self.clients.retain(|c| {
                let limit = if c.answer.is_some() {
                    WRITE_TIME
                } else {
                    HEAD_TIME
                };
                now.duration_since(c.since) < limit
            });
        }
    }

    /// Waits for the listener (when `accepting`) or a client to be ready,
    /// or for the next deadline (a client's, the end of resting); which
    /// are. `None` once `stop` was written to.
    fn wait(&self, accepting: bool, stop: &OwnedFd) -> Option<(bool, Vec<usize>)> {
        let mut fds = Vec::with_capacity(self.clients.len() + 2);
        fds.push(PollFd::from_borrowed_fd(stop.as_fd(), PollFlags::IN));
        let listen = if accepting {
            PollFlags::IN
        } else {
            PollFlags::empty()
        };
        fds.push(PollFd::new(&self.listener, listen));
        for c in &self.clients {
            let wants = if c.answer.is_some() {
                PollFlags::OUT
            } else {
                PollFlags::IN
            };
            fds.push(PollFd::from_borrowed_fd(c.stream.as_fd(), wants));
        }
        let timeout = self.next_deadline().map(|at| {
            let left = at.saturating_duration_since(Instant::now());
            rustix::event::Timespec {
                tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
                tv_nsec: left.subsec_nanos().into(),
            }
        });
        if poll(&mut fds, timeout.as_ref()).is_err() {
            return Some((false, Vec::new()));
        }
        if !fds[0].revents().is_empty() {
            return None;
        }
        let listen = accepting && !fds[1].revents().is_empty();
        let ready = fds[2..]
            .iter()
            .enumerate()
            .filter(|(_, f)| !f.revents().is_empty())
            .map(|(i, _)| i)
            .rev()
            .collect();
        Some((listen, ready))
    }

    /// When the loop must look again without anything to read or write:
    /// the earliest client timeout, or the end of resting from accepting.
    fn next_deadline(&self) -> Option<Instant> {
        let clients = self.clients.iter().map(|c| {
            c.since
                + if c.answer.is_some() {
                    WRITE_TIME
                } else {
                    HEAD_TIME
                }
        });
        clients.chain(self.resting_until).min()
    }

    /// Takes every waiting connection; beyond [`CONNECTIONS`] they are
    /// closed at once.
    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    if stream.set_nonblocking(true).is_err() || !self.make_room() {
                        continue;
                    }
                    self.clients.push(Client {
                        stream,
                        since: Instant::now(),
                        head: Vec::new(),
                        answer: None,
                    });
                    self.resting_until = None;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                // A reset before accept, a peer gone: nothing to do.
                Err(e) if e.kind() == ErrorKind::ConnectionAborted => {}
                Err(e) => {
                    // Out of descriptors (EMFILE) and the like: rest, retry.
                    if self.resting_until.is_none() {
                        let mut t = self.trouble.lock().unwrap_or_else(|p| p.into_inner());
                        *t = Some(format!(
                            "metrics endpoint: cannot accept ({e}); retrying every {} ms",
                            ACCEPT_BACKOFF.as_millis()
                        ));
                    }
                    self.resting_until = Some(Instant::now() + ACCEPT_BACKOFF);
                    return;
                }
            }
        }
    }

    /// Room for one more client: true when there is, evicting the oldest
    /// client still sending its head when all places are taken.
    fn make_room(&mut self) -> bool {
        if self.clients.len() < CONNECTIONS {
            return true;
        }
        let oldest = self
            .clients
            .iter()
            .enumerate()
            .filter(|(_, c)| c.answer.is_none())
            .min_by_key(|(_, c)| c.since)
            .map(|(i, _)| i);
        match oldest {
            Some(i) => {
                self.clients.swap_remove(i);
                true
            }
            None => false,
        }
    }

    /// Moves client `i` on: reads its head or writes its answer; removes
    /// it when done or broken.
    fn step(&mut self, i: usize) {
        let done = match self.clients.get(i).map(|c| c.answer.is_some()) {
            Some(false) => self.read_head(i),
            Some(true) => self.write_answer(i),
            None => return,
        };
        if done {
            self.clients.swap_remove(i);
        }
    }

    /// Reads what client `i` sent; true when it is to be dropped.
    fn read_head(&mut self, i: usize) -> bool {
        let mut buf = [0u8; 2048];
        let Some(c) = self.clients.get_mut(i) else {
            return true;
        };
        loop {
            match c.stream.read(&mut buf) {
                Ok(0) => return true,
                Ok(n) => {
                    c.head.extend_from_slice(&buf[..n]);
                    if let Some(end) = find(&c.head, b"\r\n\r\n") {
                        c.head.truncate(end);
                        break;
                    }
                    if c.head.len() > HEAD_BYTES {
                        c.head.clear();
                        c.answer = Some((
                            response(431, "text/plain", b"request head too large\n", false),
                            0,
                        ));
                        c.since = Instant::now();
                        return false;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return true,
            }
        }
        self.requests += 1;
        crate::faults::panic_at(crate::faults::Site::Metrics, self.requests);
        let answer = answer(&c.head, &self.registry);
        c.head = Vec::new();
        c.answer = Some((answer, 0));
        c.since = Instant::now();
        false
    }

    /// Writes what is left of client `i`'s answer; true when done or broken.
    fn write_answer(&mut self, i: usize) -> bool {
        let Some(c) = self.clients.get_mut(i) else {
            return true;
        };
        let Some((bytes, sent)) = c.answer.as_mut() else {
            return true;
        };
        while *sent < bytes.len() {
            match c.stream.write(&bytes[*sent..]) {
                Ok(0) => return true,
                Ok(n) => *sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return true,
            }
        }
        let _ = c.stream.shutdown(std::net::Shutdown::Both);
        true
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The answer to one request head.
fn answer(head: &[u8], registry: &Registry) -> Vec<u8> {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let mut words = lines.next().unwrap_or_default().split(' ');
    let method = words.next().unwrap_or_default();
    let target = words.next().unwrap_or_default();
    let head_only = method == "HEAD";
    if method != "GET" && !head_only {
        return response(405, "text/plain", b"only GET and HEAD\n", false);
    }
    let path = target.split('?').next().unwrap_or_default();
    match path {
        "/metrics" => {
            let accept = lines.find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.trim()
                    .eq_ignore_ascii_case("accept")
                    .then(|| value.trim().to_string())
            });
            let (body, content_type) = if format::wants_openmetrics(accept.as_deref()) {
                (format::openmetrics(registry), format::OPENMETRICS_TYPE)
            } else {
                (format::prometheus_text(registry), format::PROMETHEUS_TYPE)
            };
            response(200, content_type, body.as_bytes(), head_only)
        }
        "/" => response(
            200,
            "text/plain; charset=utf-8",
            b"plugtop: metrics are at /metrics\n",
            head_only,
        ),
        _ => response(
            404,
            "text/plain; charset=utf-8",
            b"not found; metrics are at /metrics\n",
            head_only,
        ),
    }
}

/// A whole HTTP/1.1 response that closes the connection.
fn response(status: u16, content_type: &str, body: &[u8], head_only: bool) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        _ => "Error",
    };
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if !head_only {
        out.extend_from_slice(body);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_get_and_head_are_answered_and_head_has_no_body() {
        let registry = Registry::default();
        let post =
            String::from_utf8(answer(b"POST /metrics HTTP/1.1", &registry)).unwrap_or_default();
        assert!(post.starts_with("HTTP/1.1 405"), "{post}");
        let head = String::from_utf8(answer(b"HEAD / HTTP/1.1", &registry)).unwrap_or_default();
        assert!(
            head.starts_with("HTTP/1.1 200") && head.ends_with("\r\n\r\n"),
            "{head}"
        );
        let lost = String::from_utf8(answer(b"GET /x HTTP/1.1", &registry)).unwrap_or_default();
        assert!(lost.starts_with("HTTP/1.1 404"), "{lost}");
        let garbage = String::from_utf8(answer(b"\xff\xfe", &registry)).unwrap_or_default();
        assert!(garbage.starts_with("HTTP/1.1 405"), "{garbage}");
    }
}
