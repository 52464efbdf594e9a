//! The `/metrics` endpoint (`plugtop run --metrics-listen ADDR:PORT`): one
//! thread that answers each scrape by encoding the registry there and then,
//! so the control loop never waits for a scraper and wakes no more often
//! when nobody scrapes. tiny_http does the HTTP; no async runtime.

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

use prometheus_client::registry::Registry;
use tiny_http::{Header, Method, Response, Server};

use super::format;

/// A running endpoint; dropping it stops the thread.
pub struct MetricsServer {
    server: Arc<Server>,
    thread: Option<JoinHandle<()>>,
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
        let server = Arc::new(Server::http(addr).map_err(|e| error(e.to_string()))?);
        let bound = server
            .server_addr()
            .to_ip()
            .ok_or_else(|| error("not an IP address".into()))?;
        let serving = Arc::clone(&server);
        let thread = std::thread::Builder::new()
            .name("plugtop-metrics".into())
            .spawn(move || serve(&serving, &registry))
            .map_err(|e| error(e.to_string()))?;
        Ok(MetricsServer {
            server,
            thread: Some(thread),
            addr: bound,
        })
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Answers requests until the server is unblocked.
fn serve(server: &Server, registry: &Registry) {
    let mut requests = 0usize;
    while let Ok(request) = server.recv() {
        requests += 1;
        crate::faults::panic_at(crate::faults::Site::Metrics, requests);
        let path = request.url().split('?').next().unwrap_or("");
        let response = match (request.method(), path) {
            (Method::Get | Method::Head, "/metrics") => {
                let accept = request
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("Accept"))
                    .map(|h| h.value.as_str());
                let (body, content_type) = if format::wants_openmetrics(accept) {
                    (format::openmetrics(registry), format::OPENMETRICS_TYPE)
                } else {
                    (format::prometheus_text(registry), format::PROMETHEUS_TYPE)
                };
                with_type(Response::from_string(body), content_type)
            }
            (Method::Get | Method::Head, "/") => with_type(
                Response::from_string("plugtop: metrics are at /metrics\n"),
                "text/plain; charset=utf-8",
            ),
            (Method::Get | Method::Head, _) => {
                Response::from_string("not found; metrics are at /metrics\n").with_status_code(404)
            }
            _ => Response::from_string("only GET\n").with_status_code(405),
        };
        // A scraper that went away is its own business.
        let _ = request.respond(response);
    }
}

fn with_type(
    response: Response<std::io::Cursor<Vec<u8>>>,
    content_type: &str,
) -> Response<std::io::Cursor<Vec<u8>>> {
    match Header::from_bytes("Content-Type", content_type) {
        Ok(h) => response.with_header(h),
        Err(()) => response,
    }
}
