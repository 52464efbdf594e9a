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
//! - at most [`CONNECTIONS`] clients at once. What a new connection sent
//!   is read as it is accepted, and what every client sent before any is
//!   dropped to make room: one that is gone takes no place, one whose
//!   request is waiting is answered. Only then does the newcomer take the
//!   place of the client still sending its head that has been silent the
//!   longest, or is it closed at once when all are being answered. So
//!   neither idle connections nor a flood of connections that send
//!   nothing (or reset) can lock out or starve a scraper that has sent
//!   its request;
//! - at most [`ACCEPT_BATCH`] connections are taken between two looks at
//!   the clients and at `stop`, however fast they come;
//! - the last [`RESERVED_DESCRIPTORS`] file descriptors under the process's
//!   limit (`ulimit -n`) are left to the control loop, which opens the
//!   guest's files every interval: a client that would take one counts as
//!   one too many, so no number of connections can make an interval fail;
//! - one request per connection (`Connection: close`): a pipelining client
//!   gets its first answer, nothing is queued for it;
//! - GET and HEAD only; errors of `accept` (EMFILE) first free a place
//!   the same way, else are backed off and retried; each
//!   run of failures is said once, in the line the caller reads from
//!   [`MetricsServer::trouble`], until accepting drains the queue again;
//! - dropping the server wakes the thread (an eventfd) and stops it at
//!   once, whatever the clients do.
//!
//! With no client connected the thread sleeps in `poll` without a timeout:
//! an idle endpoint costs no wake-ups.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::event::{EventfdFlags, PollFd, PollFlags, eventfd, poll};

use super::format::{self, Exposition};

/// The largest request head read (request line and headers).
pub const HEAD_BYTES: usize = 8 << 10;
/// How long a client may take to send its request head.
pub const HEAD_TIME: Duration = Duration::from_secs(5);
/// How long a client may take to read its answer.
pub const WRITE_TIME: Duration = Duration::from_secs(5);
/// The most clients served at once.
pub const CONNECTIONS: usize = 16;
/// How many file descriptors under the process's limit the endpoint never
/// takes: the control loop opens the guest's files (a few at once) every
/// interval, and a client must not make one of those opens fail.
pub const RESERVED_DESCRIPTORS: u64 = 8;
/// How long accepting rests after it failed (out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(500);
/// The most connections taken in one round of accepting: a flood faster
/// than accepting must not keep the thread from answering the clients it
/// holds, or from seeing that it is to stop.
const ACCEPT_BATCH: usize = 64;

/// How much of the process an endpoint may take; [`Limits::default`] is
/// what `plugtop run` uses, other values let tests play a tight machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most clients served at once.
    pub connections: usize,
    /// Descriptors under the process's limit left to the rest of plugtop.
    pub reserved_descriptors: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: CONNECTIONS,
            reserved_descriptors: RESERVED_DESCRIPTORS,
        }
    }
}

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
    pub fn start(addr: &str, registry: impl Into<Exposition>) -> Result<Self, ServeError> {
        Self::start_with(addr, registry, Limits::default())
    }

    /// As [`MetricsServer::start`], within `limits`.
    pub fn start_with(
        addr: &str,
        registry: impl Into<Exposition>,
        limits: Limits,
    ) -> Result<Self, ServeError> {
        let error = |why: String| ServeError {
            addr: addr.to_string(),
            why,
        };
        // The system's words, not Rust's "(os error 98)" (nu54 F5).
        let said = |e: std::io::Error| error(crate::error_chain::innermost(&e));
        let listener = TcpListener::bind(addr).map_err(said)?;
        listener.set_nonblocking(true).map_err(said)?;
        let bound = listener.local_addr().map_err(said)?;
        let stop = Arc::new(
            eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
                .map_err(|e| error(e.to_string()))?,
        );
        let trouble = Arc::new(Mutex::new(None));
        let mut endpoint = Endpoint {
            listener,
            registry: registry.into(),
            clients: Vec::new(),
            limits,
            resting_until: None,
            accept_failing: false,
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
    /// for the caller's log; a run of failures is said once, not once per
    /// retry, until accepting drains the queue again.
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
    /// When its current stage (head, then answer) began: its timeout runs
    /// from here.
    since: Instant,
    /// When it last sent anything (or connected): of the clients still
    /// sending their heads, the one silent the longest is the first to go.
    heard: Instant,
    head: Vec<u8>,
    /// The answer, once the head is in, and how much of it went out.
    answer: Option<(Vec<u8>, usize)>,
}

/// What reading a client's pending bytes came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeadProgress {
    /// Its head is not all there yet: more may come.
    Partial,
    /// Its head is all there, or was too large and is answered 431.
    Complete,
    /// It closed or broke: there is no one to answer.
    Gone,
}

impl Client {
    fn new(stream: TcpStream) -> Self {
        let now = Instant::now();
        Client {
            stream,
            since: now,
            heard: now,
            head: Vec::new(),
            answer: None,
        }
    }

    /// Reads what the client has sent so far, without waiting.
    fn read_pending(&mut self) -> HeadProgress {
        let mut buf = [0u8; 2048];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => return HeadProgress::Gone,
                Ok(n) => {
                    self.heard = Instant::now();
                    self.head.extend_from_slice(&buf[..n]);
                    if let Some((start, end)) = head_bounds(&self.head) {
                        self.head.truncate(end);
                        self.head.drain(..start);
                        return HeadProgress::Complete;
                    }
                    if self.head.len() > HEAD_BYTES {
                        self.head = Vec::new();
                        self.answer = Some((
                            response(431, "text/plain", b"request head too large\n", false),
                            0,
                        ));
                        self.since = Instant::now();
                        return HeadProgress::Complete;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return HeadProgress::Partial,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return HeadProgress::Gone,
            }
        }
    }

    /// Writes what is left of the answer; true when done or broken.
    fn write_answer(&mut self) -> bool {
        let Some((bytes, sent)) = self.answer.as_mut() else {
            return true;
        };
        while *sent < bytes.len() {
            match self.stream.write(&bytes[*sent..]) {
                Ok(0) => return true,
                Ok(n) => *sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return true,
            }
        }
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
        true
    }
}

/// The endpoint's state, owned by its thread.
struct Endpoint {
    listener: TcpListener,
    registry: Exposition,
    clients: Vec<Client>,
    limits: Limits,
    /// Accepting failed: not before then.
    resting_until: Option<Instant>,
    /// Accepting has failed since the queue was last drained (said once).
    accept_failing: bool,
    trouble: Arc<Mutex<Option<String>>>,
    requests: usize,
}

impl Endpoint {
    /// Serves until `stop` is written to.
    fn serve(&mut self, stop: &OwnedFd) {
        loop {
            let accepting = self.rested(Instant::now());
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

    /// Whether accepting may go on at `now`: a rest that is over is
    /// forgotten, or its end (in the past) would be the next deadline of
    /// every `poll` and the thread would spin until a client came.
    fn rested(&mut self, now: Instant) -> bool {
        if self.resting_until.is_some_and(|t| now >= t) {
            self.resting_until = None;
        }
        self.resting_until.is_none()
    }

    /// Waits for the listener (when `accepting`) or a client to be ready,
    /// or for the next deadline (a client's, the end of resting); which
    /// are. `None` once `stop` was written to.
    fn wait(&self, accepting: bool, stop: &OwnedFd) -> Option<(bool, Vec<usize>)> {
        let listen = if accepting {
            PollFlags::IN
        } else {
            PollFlags::empty()
        };
        let mut fds = Vec::with_capacity(self.clients.len() + 2);
        fds.push(PollFd::from_borrowed_fd(stop.as_fd(), PollFlags::IN));
        fds.push(PollFd::new(&self.listener, listen));
        fds.extend(self.client_fds());
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
        Some((listen, ready_highest_first(&fds[2..])))
    }

    /// What each client waits for, in the order of `clients`: its head to
    /// come in, or room to write its answer.
    fn client_fds(&self) -> impl Iterator<Item = PollFd<'_>> {
        self.clients.iter().map(|c| {
            let wants = if c.answer.is_some() {
                PollFlags::OUT
            } else {
                PollFlags::IN
            };
            PollFd::from_borrowed_fd(c.stream.as_fd(), wants)
        })
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

    /// Takes the waiting connections, at most [`ACCEPT_BATCH`] at a time;
    /// beyond [`Limits::connections`], or into the descriptors reserved for
    /// the control loop, each takes the place of a client still sending
    /// its head (see [`Endpoint::free_one`]), or is closed at once.
    fn accept(&mut self) {
        let ceiling = descriptor_ceiling();
        for _ in 0..ACCEPT_BATCH {
            match self.listener.accept() {
                Ok((stream, _)) => self.admit(stream, ceiling),
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    self.accept_failing = false;
                    return;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                // A reset before accept, a peer gone: nothing to do.
                Err(e) if e.kind() == ErrorKind::ConnectionAborted => {}
                Err(e) => {
                    // Out of descriptors (EMFILE) and the like.
                    if !self.accept_failing {
                        self.accept_failing = true;
                        let mut t = self.trouble.lock().unwrap_or_else(|p| p.into_inner());
                        *t = Some(format!(
                            "metrics endpoint: cannot accept ({}); dropping idle clients and retrying every {} ms",
                            crate::error_chain::text(&e),
                            ACCEPT_BACKOFF.as_millis()
                        ));
                    }
                    // An idle client's descriptor is worth more to the one
                    // waiting (perhaps a scraper): try again at once.
                    if self.free_one() {
                        continue;
                    }
                    self.resting_until = Some(Instant::now() + ACCEPT_BACKOFF);
                    return;
                }
            }
        }
    }

    /// Places a new connection among the clients, or closes it. What it
    /// already sent is read first: one that is gone (a reset, a close)
    /// takes no one's place, and one whose request is all there is
    /// answered at once.
    fn admit(&mut self, stream: TcpStream, ceiling: Option<u64>) {
        self.resting_until = None;
        if stream.set_nonblocking(true).is_err() {
            return;
        }
        let mut client = Client::new(stream);
        let reading = client.read_pending();
        if reading == HeadProgress::Gone {
            return;
        }
        let Some(stream) = self.make_room(client.stream, ceiling) else {
            return;
        };
        let mut client = Client { stream, ..client };
        if reading == HeadProgress::Complete {
            answer_head(&mut client, &self.registry, &mut self.requests);
            if client.write_answer() {
                return;
            }
        }
        self.clients.push(client);
    }

    /// Room for `stream` among the clients: when the endpoint is full, or
    /// the stream's descriptor is one of those reserved, a client makes
    /// room (see [`Endpoint::free_one`]) and the stream moves to its freed
    /// descriptor (descriptors are handed out lowest first). `None`, and
    /// the stream closed, when there is no room.
    fn make_room(&mut self, stream: TcpStream, ceiling: Option<u64>) -> Option<TcpStream> {
        let reserved = self.limits.reserved_descriptors;
        let in_reserve = |s: &TcpStream| {
            takes_reserve(
                u64::try_from(s.as_raw_fd()).unwrap_or(u64::MAX),
                ceiling,
                reserved,
            )
        };
        let full = self.clients.len() >= self.limits.connections;
        if !full && !in_reserve(&stream) {
            return Some(stream);
        }
        if !self.free_one() {
            return None;
        }
        if !in_reserve(&stream) {
            return Some(stream);
        }
        let lower = TcpStream::from(rustix::io::fcntl_dupfd_cloexec(&stream, 0).ok()?);
        (!in_reserve(&lower)).then_some(lower)
    }

    /// Frees a client's place; false when every client is being answered.
    /// Before anyone is dropped, every client is moved on as far as it can
    /// go without waiting: those gone leave, and those whose request came
    /// in since the last look are answered, never dropped for a newcomer.
    /// Only when that freed nothing does the client still sending its head
    /// that has been silent the longest go: a flood of connections that
    /// send nothing pushes out its own, not a scraper that has spoken.
    fn free_one(&mut self) -> bool {
        let before = self.clients.len();
        self.sweep();
        self.clients.len() < before || self.drop_longest_silent()
    }

    /// Moves on every client that can move without waiting (one `poll`
    /// that does not sleep, then a read or write for each one ready).
    fn sweep(&mut self) {
        let mut fds: Vec<PollFd<'_>> = self.client_fds().collect();
        let now = rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        if poll(&mut fds, Some(&now)).is_err() {
            return;
        }
        let ready = ready_highest_first(&fds);
        drop(fds);
        for i in ready {
            self.step(i);
        }
    }

    /// Drops the client still sending its head that has been silent the
    /// longest; false when every client is being answered.
    fn drop_longest_silent(&mut self) -> bool {
        let silent = self
            .clients
            .iter()
            .enumerate()
            .filter(|(_, c)| c.answer.is_none())
            .min_by_key(|(_, c)| c.heard)
            .map(|(i, _)| i);
        match silent {
            Some(i) => {
                self.clients.swap_remove(i);
                true
            }
            None => false,
        }
    }

    /// Moves client `i` on: reads its head and, once it is in, writes its
    /// answer as far as the socket takes it; removes the client when done
    /// or broken.
    fn step(&mut self, i: usize) {
        let Some(c) = self.clients.get_mut(i) else {
            return;
        };
        let done = match c.answer {
            Some(_) => c.write_answer(),
            None => match c.read_pending() {
                HeadProgress::Partial => false,
                HeadProgress::Gone => true,
                HeadProgress::Complete => {
                    answer_head(c, &self.registry, &mut self.requests);
                    c.write_answer()
                }
            },
        };
        if done {
            self.clients.swap_remove(i);
        }
    }
}

/// Makes the answer to `c`'s complete head (unless it already has one, a
/// 431), counting it among the `requests`; its write timeout starts now.
fn answer_head(c: &mut Client, registry: &Exposition, requests: &mut usize) {
    if c.answer.is_some() {
        return;
    }
    *requests += 1;
    crate::faults::panic_at(crate::faults::Site::Metrics, *requests);
    c.answer = Some((answer(&c.head, registry), 0));
    c.head = Vec::new();
    c.since = Instant::now();
}

/// The indices of the descriptors `poll` found ready, highest first, so
/// that removing one (`swap_remove`) leaves the others' indices valid.
fn ready_highest_first(fds: &[PollFd<'_>]) -> Vec<usize> {
    fds.iter()
        .enumerate()
        .filter(|(_, f)| !f.revents().is_empty())
        .map(|(i, _)| i)
        .rev()
        .collect()
}

/// The process's soft limit on file descriptors; `None` when unlimited.
/// Read at each round of accepting (not per interval), so a limit changed
/// while running is followed.
fn descriptor_ceiling() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

/// Whether a client on descriptor `fd` eats into the `reserved` descriptors
/// below `ceiling`. Descriptors are handed out lowest first, so all below
/// `fd` are taken and at most `ceiling - fd - 1` are left.
fn takes_reserve(fd: u64, ceiling: Option<u64>, reserved: u64) -> bool {
    ceiling.is_some_and(|c| fd >= c || c - fd - 1 < reserved)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Where a whole request head lies in what a client sent, once it has all
/// come: after the empty lines a client may send before the request line,
/// up to the empty line that ends it. Lines end in CRLF or, as RFC 9112
/// (section 2.2) lets a server take them, a bare LF.
fn head_bounds(sent: &[u8]) -> Option<(usize, usize)> {
    let mut start = 0;
    loop {
        match sent.get(start..) {
            Some([b'\r', b'\n', ..]) => start += 2,
            Some([b'\n', ..]) => start += 1,
            Some([b'\r']) | Some([]) | None => return None,
            Some(_) => break,
        }
    }
    let rest = &sent[start..];
    let lf_lf = find(rest, b"\n\n");
    let lf_crlf = find(rest, b"\n\r\n");
    let end = match (lf_lf, lf_crlf) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b)?,
    };
    Some((start, start + end))
}

/// The path of a request target: origin-form (`/metrics?x`) as it is,
/// absolute-form (`http://host:9100/metrics`, RFC 9112 section 3.2.2)
/// without its scheme and authority.
fn target_path(target: &str) -> &str {
    let path = target.split('?').next().unwrap_or_default();
    let lower = path.get(..8).unwrap_or(path).to_ascii_lowercase();
    let after = if lower.starts_with("http://") {
        7
    } else if lower.starts_with("https://") {
        8
    } else {
        return path;
    };
    let rest = &path[after..];
    rest.find('/').map_or("/", |i| &rest[i..])
}

/// The answer to one request head.
fn answer(head: &[u8], registry: &Exposition) -> Vec<u8> {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let mut words = lines.next().unwrap_or_default().split(' ');
    let method = words.next().unwrap_or_default();
    let target = words.next().unwrap_or_default();
    let head_only = method == "HEAD";
    if method != "GET" && !head_only {
        return response(405, "text/plain", b"only GET and HEAD\n", false);
    }
    match target_path(target) {
        "/metrics" => {
            let accept = lines.find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.trim()
                    .eq_ignore_ascii_case("accept")
                    .then(|| value.trim().to_string())
            });
            let (body, content_type) = if format::wants_openmetrics(accept.as_deref()) {
                (registry.openmetrics(), format::OPENMETRICS_TYPE)
            } else {
                (registry.prometheus_text(), format::PROMETHEUS_TYPE)
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
    // A 405 must say what is allowed (RFC 9110, section 15.5.6).
    let allow = if status == 405 {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\n{allow}Content-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
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
    fn a_client_never_takes_the_reserved_descriptors() {
        // 64 descriptors, 8 reserved: 0..=55 may be clients, 56.. may not.
        assert!(!takes_reserve(55, Some(64), 8));
        assert!(takes_reserve(56, Some(64), 8));
        assert!(takes_reserve(63, Some(64), 8));
        // Unlimited, and absurd values, without overflow.
        assert!(!takes_reserve(u64::MAX, None, 8));
        assert!(takes_reserve(u64::MAX, Some(u64::MAX), 0));
        assert!(takes_reserve(0, Some(4), 8));
        assert!(takes_reserve(3, Some(4), u64::MAX));
    }

    /// An endpoint on a fresh loopback listener, and its address.
    fn endpoint() -> (Endpoint, SocketAddr) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("listens on loopback");
        listener.set_nonblocking(true).expect("non-blocking");
        let addr = listener.local_addr().expect("an address");
        let endpoint = Endpoint {
            listener,
            registry: Exposition::default(),
            clients: Vec::new(),
            limits: Limits::default(),
            resting_until: None,
            accept_failing: false,
            trouble: Arc::new(Mutex::new(None)),
            requests: 0,
        };
        (endpoint, addr)
    }

    fn said(endpoint: &Endpoint) -> Option<String> {
        endpoint
            .trouble
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    #[test]
    fn a_run_of_accept_failures_drops_idle_clients_and_is_said_once() {
        let (mut endpoint, addr) = endpoint();
        let peers: Vec<TcpStream> = (0..2)
            .map(|_| TcpStream::connect(addr).expect("connect"))
            .collect();
        endpoint.accept();
        assert_eq!(endpoint.clients.len(), 2, "both idle clients placed");
        assert_eq!(said(&endpoint), None);
        // A listener shut down fails every accept (EINVAL), as one out of
        // descriptors fails with EMFILE.
        rustix::net::shutdown(&endpoint.listener, rustix::net::Shutdown::Read)
            .expect("shut the listener");
        endpoint.accept();
        assert!(endpoint.clients.is_empty(), "idle clients gave way first");
        assert!(endpoint.resting_until.is_some(), "then it rests");
        let first = said(&endpoint).unwrap_or_default();
        assert!(first.contains("cannot accept"), "{first}");
        for _ in 0..5 {
            endpoint.accept();
        }
        assert_eq!(said(&endpoint), None, "a run of failures is said once");
        // Listening again, the queue drains: the next failure is news.
        rustix::net::listen(&endpoint.listener, 16).expect("listen again");
        endpoint.accept();
        rustix::net::shutdown(&endpoint.listener, rustix::net::Shutdown::Read)
            .expect("shut the listener");
        endpoint.accept();
        assert!(said(&endpoint).is_some_and(|t| t.contains("cannot accept")));
        drop(peers);
    }

    /// Takes every connection waiting on the listener (connections the
    /// test made are all in its queue once `connect` returned).
    fn accept_all(endpoint: &mut Endpoint) {
        let zero = rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        loop {
            endpoint.accept();
            let mut probe = PollFd::new(&endpoint.listener, PollFlags::IN);
            if poll(std::slice::from_mut(&mut probe), Some(&zero)).unwrap_or(0) == 0 {
                return;
            }
        }
    }

    /// What a peer receives until the endpoint closes on it; a guard turns
    /// a hang (an endpoint that neither answers nor closes) into a failure.
    fn received(peer: &mut TcpStream) -> String {
        peer.set_read_timeout(Some(Duration::from_secs(60)))
            .expect("a hang guard");
        let mut text = String::new();
        if let Err(e) = peer.read_to_string(&mut text) {
            assert!(
                !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
                "neither answered nor closed"
            );
        }
        text
    }

    fn scraper(addr: SocketAddr, send: bool) -> TcpStream {
        let mut s = TcpStream::connect(addr).expect("connect");
        if send {
            s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                .expect("send");
        }
        s
    }

    #[test]
    fn a_request_waiting_behind_a_connect_flood_is_answered_not_dropped() {
        let (mut endpoint, addr) = endpoint();
        // The scraper's request is in before three endpoints' worth of
        // connections that never send: every one of them is accepted after
        // it, in the same round.
        let mut scraper = scraper(addr, true);
        let flood: Vec<TcpStream> = (0..CONNECTIONS * 3)
            .map(|_| TcpStream::connect(addr).expect("connect"))
            .collect();
        accept_all(&mut endpoint);
        assert!(endpoint.clients.len() <= CONNECTIONS, "the cap holds");
        assert!(received(&mut scraper).starts_with("HTTP/1.1 200"));
        drop(flood);
    }

    #[test]
    fn a_scraper_that_connected_before_its_request_outlives_a_flood_that_hangs_up() {
        let (mut endpoint, addr) = endpoint();
        let mut scraper = scraper(addr, false);
        // Places taken by connections that hang up once placed, with a
        // reset or a close: they are seen gone, not the scraper dropped.
        let early: Vec<TcpStream> = (1..CONNECTIONS)
            .map(|_| TcpStream::connect(addr).expect("connect"))
            .collect();
        accept_all(&mut endpoint);
        assert_eq!(endpoint.clients.len(), CONNECTIONS, "all placed");
        for (i, s) in early.into_iter().enumerate() {
            if i % 2 == 0 {
                rustix::net::sockopt::set_socket_linger(&s, Some(Duration::ZERO)).expect("linger");
            }
        }
        // Then connections that hang up before they are even accepted,
        // among as many that stay (and send nothing) as there are places
        // left once the gone ones are seen.
        let mut staying = Vec::new();
        for i in 0..CONNECTIONS * 3 {
            let s = TcpStream::connect(addr).expect("connect");
            if i % 3 == 0 && staying.len() < CONNECTIONS - 1 {
                staying.push(s);
            } else if i % 2 == 0 {
                rustix::net::sockopt::set_socket_linger(&s, Some(Duration::ZERO)).expect("linger");
            }
        }
        accept_all(&mut endpoint);
        assert_eq!(endpoint.clients.len(), 1 + staying.len(), "none gone held");
        scraper
            .write_all(b"GET /metrics HTTP/1.1\r\n\r\n")
            .expect("send");
        endpoint.sweep();
        assert!(received(&mut scraper).starts_with("HTTP/1.1 200"));
        assert_eq!(endpoint.clients.len(), staying.len(), "answered, let go");
    }

    #[test]
    fn a_newcomer_takes_the_place_of_the_client_silent_the_longest() {
        let (mut endpoint, addr) = endpoint();
        let mut placed: Vec<TcpStream> = (0..CONNECTIONS)
            .map(|_| TcpStream::connect(addr).expect("connect"))
            .collect();
        accept_all(&mut endpoint);
        assert_eq!(endpoint.clients.len(), CONNECTIONS);
        // The oldest is sending its head slowly: it has spoken since the
        // second connected, so the second is the one silent the longest.
        placed[0].write_all(b"GET /metr").expect("send");
        let mut newcomer = scraper(addr, false);
        accept_all(&mut endpoint);
        assert_eq!(endpoint.clients.len(), CONNECTIONS, "the cap holds");
        assert_eq!(received(&mut placed[1]), "", "the silent one was dropped");
        placed[0].write_all(b"ics HTTP/1.1\r\n\r\n").expect("send");
        newcomer.write_all(b"GET / HTTP/1.1\r\n\r\n").expect("send");
        endpoint.sweep();
        assert!(received(&mut placed[0]).starts_with("HTTP/1.1 200"));
        assert!(received(&mut newcomer).starts_with("HTTP/1.1 200"));
    }

    #[test]
    fn a_rest_that_is_over_leaves_no_deadline_behind() {
        let (mut endpoint, _) = endpoint();
        let now = Instant::now();
        endpoint.resting_until = Some(now + ACCEPT_BACKOFF);
        assert!(!endpoint.rested(now), "resting");
        assert_eq!(endpoint.next_deadline(), Some(now + ACCEPT_BACKOFF));
        // Once the rest is over, with no client, `poll` must sleep without
        // a timeout: a deadline in the past would make it return at once,
        // for ever (a thread spinning at 100% after one EMFILE).
        assert!(endpoint.rested(now + ACCEPT_BACKOFF));
        assert_eq!(endpoint.next_deadline(), None);
    }

    #[test]
    fn only_get_and_head_are_answered_and_head_has_no_body() {
        let registry = Exposition::default();
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
