//! The metrics endpoint under clients that misbehave (loopback only,
//! bounded in count): resets, idle connections, connect floods around a
//! scrape, huge heads, pipelining without reading, more connections than
//! the process has descriptors.
//! Each attack leaves the endpoint answering, the control loop's
//! descriptors untouched, and dropping the server never waits on a client.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};

use plugtop::metrics::endpoint::{
    CONNECTIONS, HEAD_BYTES, Limits, MetricsServer, RESERVED_DESCRIPTORS,
};

fn server() -> MetricsServer {
    let id = plugtop::kernel::machine::identity(std::path::Path::new("/nonexistent"));
    let metrics = plugtop::metrics::Metrics::new(&id);
    MetricsServer::start("127.0.0.1:0", metrics.exposition()).expect("listens on loopback")
}

/// A whole scrape: the status line of the answer.
fn scrape(addr: SocketAddr) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("send");
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer.lines().next().unwrap_or_default().to_string()
}

#[test]
fn resets_and_half_requests_never_stop_the_endpoint() {
    let server = server();
    for i in 0..500 {
        let s = TcpStream::connect(server.addr).expect("connect");
        if i % 2 == 0 {
            let _ = (&s).write_all(b"GET /metr");
        }
        // Closed with unread data or at once: the peer sees a reset.
        rustix::net::sockopt::set_socket_linger(&s, Some(std::time::Duration::ZERO))
            .expect("linger");
        drop(s);
    }
    assert_eq!(scrape(server.addr), "HTTP/1.1 200 OK");
}

#[test]
fn a_head_past_the_limit_is_refused_and_the_connection_closed() {
    let server = server();
    let mut s = TcpStream::connect(server.addr).expect("connect");
    let mut head = b"GET /metrics HTTP/1.1\r\n".to_vec();
    while head.len() <= HEAD_BYTES * 4 {
        head.extend_from_slice(b"X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
    }
    // The endpoint may close while this is still being sent.
    let _ = s.write_all(&head);
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    assert_eq!(scrape(server.addr), "HTTP/1.1 200 OK");
}

#[test]
fn idle_connections_cannot_lock_out_a_scraper() {
    let server = server();
    // Four times as many idle clients as there are places.
    let idle: Vec<TcpStream> = (0..CONNECTIONS * 4)
        .map(|_| TcpStream::connect(server.addr).expect("connect"))
        .collect();
    assert_eq!(scrape(server.addr), "HTTP/1.1 200 OK");
    drop(idle);
}

/// How a connection of a flood ends: held open sending nothing, reset,
/// or closed.
fn flood_connection(addr: SocketAddr, n: usize, held: &mut std::collections::VecDeque<TcpStream>) {
    let s = TcpStream::connect(addr).expect("connect");
    match n % 3 {
        0 => {
            held.push_back(s);
            // Bounded: the oldest held ones hang up (the endpoint has
            // dropped them long since).
            if held.len() > CONNECTIONS * 4 {
                held.pop_front();
            }
        }
        1 => {
            rustix::net::sockopt::set_socket_linger(&s, Some(std::time::Duration::ZERO))
                .expect("linger");
        }
        _ => {}
    }
}

#[test]
fn a_connect_flood_cannot_starve_a_scraper_that_sent_its_request() {
    let server = server();
    let mut held = std::collections::VecDeque::new();
    let mut n = 0;
    for _ in 0..CONNECTIONS * 3 {
        flood_connection(server.addr, n, &mut held);
        n += 1;
    }
    for scrape in 0..50 {
        let mut s = TcpStream::connect(server.addr).expect("connect");
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .expect("send");
        // Its request is in; more than the endpoint holds come after it
        // before it reads the answer (held, reset, closed).
        for _ in 0..CONNECTIONS * 2 {
            flood_connection(server.addr, n, &mut held);
            n += 1;
        }
        // A guard against a hang, not a time limit: an endpoint that
        // neither answers nor closes fails here instead of never ending.
        s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
            .expect("a hang guard");
        let mut answer = String::new();
        let read = s.read_to_string(&mut answer);
        assert!(
            answer.starts_with("HTTP/1.1 200 OK"),
            "scrape {scrape}: {read:?}, {answer:?}"
        );
    }
    drop(held);
}

#[test]
fn a_client_that_pipelines_and_never_reads_holds_up_nobody() {
    let server = server();
    let mut greedy = TcpStream::connect(server.addr).expect("connect");
    let request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".repeat(2_000);
    greedy.set_nonblocking(true).expect("non-blocking writer");
    let _ = greedy.write(&request);
    assert_eq!(scrape(server.addr), "HTTP/1.1 200 OK");
    assert_eq!(scrape(server.addr), "HTTP/1.1 200 OK");
    // Dropping the server does not wait for the greedy client.
    let addr = server.addr;
    drop(server);
    assert!(TcpStream::connect(addr).is_err(), "the port is closed");
    drop(greedy);
}

#[test]
fn dropping_the_server_with_clients_connected_returns() {
    let server = server();
    let addr = server.addr;
    let clients: Vec<TcpStream> = (0..8)
        .map(|_| TcpStream::connect(addr).expect("connect"))
        .collect();
    // That this returns at all is the point: no client is waited for.
    drop(server);
    assert!(TcpStream::connect(addr).is_err(), "the port is closed");
    drop(clients);
}

#[test]
fn with_no_descriptor_to_spare_every_client_is_closed_at_once() {
    // Every descriptor counts as reserved for the control loop: the
    // endpoint must take none, and close each client instead of holding it.
    let id = plugtop::kernel::machine::identity(std::path::Path::new("/nonexistent"));
    let metrics = plugtop::metrics::Metrics::new(&id);
    let limits = Limits {
        reserved_descriptors: u64::MAX,
        ..Limits::default()
    };
    let server = MetricsServer::start_with("127.0.0.1:0", metrics.exposition(), limits)
        .expect("listens on loopback");
    for _ in 0..CONNECTIONS * 4 {
        let mut s = TcpStream::connect(server.addr).expect("connect");
        let _ = s.write_all(b"GET /metrics HTTP/1.1\r\n\r\n");
        let mut answer = Vec::new();
        // Closed without an answer (EOF or a reset), never held open.
        let _ = s.read_to_end(&mut answer);
        assert!(answer.is_empty(), "{}", String::from_utf8_lossy(&answer));
    }
    drop(server);
}

/// A `plugtop run` child, killed if the test fails before it ends.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The descriptors `pid` has open that are sockets, by number.
fn socket_descriptors(pid: u32) -> Vec<u64> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/fd")).expect("the daemon's descriptors");
    dir.filter_map(Result::ok)
        .filter(|e| {
            std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy().starts_with("socket:"))
        })
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// The descriptors `pid` has open, by number.
fn descriptors(pid: u32) -> Vec<u64> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/fd")).expect("the daemon's descriptors");
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// The limit below which exactly `free` descriptor numbers are unused
/// (numbers are handed out lowest first, and inherited ones leave holes).
fn limit_leaving(pid: u32, free: u64) -> u64 {
    let open = descriptors(pid);
    let mut left = free;
    let mut n = 0;
    loop {
        if !open.contains(&n) {
            left -= 1;
            if left == 0 {
                return n + 1;
            }
        }
        n += 1;
    }
}

#[test]
fn under_a_tight_descriptor_limit_clients_never_take_the_control_loops_descriptors() {
    let root = common::FakeRoot::guest(2);
    let rules = root.path().join("rules.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules");
    let child = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args([
            "run",
            "-f",
            "--mode",
            "observe",
            "--interval-ms",
            "50",
            "-c",
        ])
        .arg(&rules)
        .arg("--root")
        .arg(root.path())
        .args(["--metrics-listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start plugtop run");
    let mut daemon = Daemon(child);
    let pid = daemon.0.id();
    let mut log = BufReader::new(daemon.0.stdout.take().expect("its log"));
    let mut line = String::new();
    let addr: SocketAddr = loop {
        line.clear();
        assert!(
            log.read_line(&mut line).expect("its log") > 0,
            "ended before listening"
        );
        if let Some(rest) = line.trim().strip_prefix("metrics at http://") {
            break rest
                .trim_end_matches("/metrics")
                .parse()
                .expect("an address");
        }
    };
    // Three places for clients, once the reserve is left.
    let limit = limit_leaving(pid, RESERVED_DESCRIPTORS + 3);
    let before = socket_descriptors(pid);
    common::descriptor_limit(pid, limit);
    let idle: Vec<TcpStream> = (0..CONNECTIONS * 4)
        .map(|_| TcpStream::connect(addr).expect("connect"))
        .collect();
    // Accepted after every idle one: by its answer, all were placed.
    assert_eq!(scrape(addr), "HTTP/1.1 200 OK");
    let clients: Vec<u64> = socket_descriptors(pid)
        .into_iter()
        .filter(|fd| !before.contains(fd))
        .collect();
    let reserve = limit - RESERVED_DESCRIPTORS;
    assert!(
        !clients.is_empty() && clients.iter().all(|&fd| fd < reserve),
        "clients must be held, below {reserve} (limit {limit}): {clients:?}"
    );
    drop(idle);
}

/// What the endpoint answers to `request`, whole.
fn exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.write_all(request).expect("send");
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer
}

/// Issue 42, item 6: the request forms RFC 9112 lets a server take are
/// taken (absolute-form, bare LF line ends, empty lines before the
/// request line), and a refused method is told what is allowed.
#[test]
fn absolute_form_bare_lf_and_a_leading_crlf_are_answered_and_405_says_allow() {
    let server = server();
    let status = |request: &[u8]| {
        exchange(server.addr, request)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    for request in [
        &b"GET http://plugtop.example:9100/metrics HTTP/1.1\r\nHost: x\r\n\r\n"[..],
        b"GET HTTP://x/metrics?y=1 HTTP/1.1\r\n\r\n",
        b"GET /metrics HTTP/1.1\nHost: x\n\n",
        b"GET /metrics HTTP/1.1\r\nHost: x\n\r\n",
        b"\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
        b"\r\n\n\r\nGET /metrics HTTP/1.1\n\n",
    ] {
        assert_eq!(
            status(request),
            "HTTP/1.1 200 OK",
            "{}",
            String::from_utf8_lossy(request)
        );
    }
    assert_eq!(
        status(b"GET http://x HTTP/1.1\r\n\r\n"),
        "HTTP/1.1 200 OK",
        "an absolute-form target without a path is /"
    );
    assert_eq!(
        status(b"GET http://x/elsewhere HTTP/1.1\r\n\r\n"),
        "HTTP/1.1 404 Not Found"
    );
    let refused = exchange(server.addr, b"POST /metrics HTTP/1.1\r\n\r\n");
    assert!(refused.starts_with("HTTP/1.1 405"), "{refused}");
    assert!(
        refused.lines().any(|l| l.trim_end() == "Allow: GET, HEAD"),
        "{refused}"
    );
    assert_eq!(scrape(server.addr), "HTTP/1.1 200 OK");
}
