//! The metrics endpoint under clients that misbehave (loopback only,
//! bounded in count): resets, idle connections, huge heads, pipelining
//! without reading. Each attack leaves the endpoint answering, and
//! dropping the server never waits on a client.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use plugtop::metrics::serve::{CONNECTIONS, HEAD_BYTES, MetricsServer};

fn server() -> MetricsServer {
    let id = plugtop::kernel::machine::identity(std::path::Path::new("/nonexistent"));
    let metrics = plugtop::metrics::Metrics::new(&id);
    MetricsServer::start("127.0.0.1:0", metrics.registry()).expect("listens on loopback")
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
