//! A fake Prometheus for the fleet tests: a loopback HTTP server on its
//! own thread answering each request with what a handler says (canned
//! JSON, or hostile behaviour), and the canned answers of a small fleet.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What the fake does with one request.
pub enum Reply {
    /// 200 with this JSON body.
    Json(String),
    /// This status and body, as text/plain.
    Status(u16, String),
    /// Raw bytes written as they are, then the connection closed.
    Raw(Vec<u8>),
    /// A 200 whose body is `n` bytes of `x`, streamed.
    Huge(usize),
    /// Reads the request and never answers (until the client gives up).
    Silent,
    /// Sends a head, then one byte every 200 ms, forever.
    Trickle,
}

/// A running fake; stops answering when dropped.
pub struct Fake {
    pub url: String,
    pub requests: Arc<AtomicUsize>,
    /// While set, connections are closed at once (Prometheus "down").
    pub down: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.url.trim_start_matches("http://"));
    }
}

/// `%XX` and `+` decoded.
pub fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The path and the query parameters of a request head.
fn parse(head: &str) -> (String, HashMap<String, String>) {
    let target = head.split_whitespace().nth(1).unwrap_or("/");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let params = query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect();
    (path.to_string(), params)
}

fn serve(mut s: TcpStream, handler: &(dyn Fn(&str, &HashMap<String, String>) -> Reply + Sync)) {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 65536 {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let (path, params) = parse(&String::from_utf8_lossy(&head));
    let answer = |s: &mut TcpStream, status: u16, kind: &str, body: &[u8]| {
        let _ = write!(
            s,
            "HTTP/1.1 {status} X\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = s.write_all(body);
    };
    match handler(&path, &params) {
        Reply::Json(body) => answer(&mut s, 200, "application/json", body.as_bytes()),
        Reply::Status(code, body) => answer(&mut s, code, "text/plain", body.as_bytes()),
        Reply::Raw(bytes) => {
            let _ = s.write_all(&bytes);
        }
        Reply::Huge(n) => {
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {n}\r\n\r\n"
            );
            let chunk = vec![b'x'; 1 << 20];
            let mut left = n;
            while left > 0 {
                let k = left.min(chunk.len());
                if s.write_all(&chunk[..k]).is_err() {
                    break;
                }
                left -= k;
            }
        }
        Reply::Silent => {
            // Held until the client closes.
            let _ = s.read(&mut buf);
        }
        Reply::Trickle => {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n{");
            loop {
                std::thread::sleep(std::time::Duration::from_millis(200));
                if s.write_all(b" ").is_err() {
                    break;
                }
            }
        }
    }
}

/// A fake answering with `handler(path, params)`.
pub fn start(
    handler: impl Fn(&str, &HashMap<String, String>) -> Reply + Send + Sync + 'static,
) -> Fake {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    let stop = Arc::new(AtomicBool::new(false));
    let down = Arc::new(AtomicBool::new(false));
    let requests = Arc::new(AtomicUsize::new(0));
    let handler = Arc::new(handler);
    let (st, dn, rq) = (stop.clone(), down.clone(), requests.clone());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            if st.load(Ordering::SeqCst) {
                break;
            }
            let Ok(conn) = conn else { continue };
            if dn.load(Ordering::SeqCst) {
                drop(conn);
                continue;
            }
            rq.fetch_add(1, Ordering::SeqCst);
            let h = handler.clone();
            std::thread::spawn(move || serve(conn, h.as_ref()));
        }
    });
    Fake {
        url: format!("http://{addr}"),
        requests,
        down,
        stop,
    }
}

/// One canned guest.
pub struct Canned {
    pub instance: &'static str,
    pub zvm: &'static str,
    pub online: f64,
    pub present: f64,
    /// Seconds since its last reading.
    pub age: f64,
    pub flapping: bool,
    pub faulting: Option<&'static str>,
    /// A rule that faulted once in the window, of 40 readings: listed in
    /// FAULTS, no trouble.
    pub faulted_once: Option<&'static str>,
    /// A rule that faults at every reading now: 7 of the window's 3,600
    /// readings (under 5%), and every one of the last two minutes'.
    pub faulting_now: Option<&'static str>,
    pub crc: &'static str,
    pub file: &'static str,
    /// Exported twice as `plugtop_flapping`: the second series (an extra
    /// label) says it flaps.
    pub twin_flapping: bool,
    /// Its target stopped answering a moment ago (`up == 0`): its series
    /// are stale now, its last reading is still recent.
    pub gone: bool,
}

/// Five guests: one flapping, one stopped, one faulting, one on another
/// rule file, one well.
pub fn five() -> Vec<Canned> {
    let g = |instance, zvm| Canned {
        instance,
        zvm,
        online: 2.0,
        present: 4.0,
        age: 1.0,
        flapping: false,
        faulting: None,
        faulted_once: None,
        faulting_now: None,
        crc: "aaaa0001",
        file: "/etc/cpuplugd.conf",
        twin_flapping: false,
        gone: false,
    };
    vec![
        g("10.0.0.1:9866", "LINUX01"),
        Canned {
            flapping: true,
            ..g("10.0.0.2:9866", "LINUX02")
        },
        Canned {
            age: 4000.0,
            ..g("10.0.0.3:9866", "LINUX03")
        },
        Canned {
            faulting: Some("HOTPLUG"),
            ..g("10.0.0.4:9866", "LINUX04")
        },
        Canned {
            crc: "bbbb0002",
            file: "/etc/other.conf",
            ..g("10.0.0.5:9866", "LINUX05")
        },
    ]
}

fn vector(items: Vec<(String, f64)>, at: f64) -> String {
    let result: Vec<String> = items
        .into_iter()
        .map(|(labels, v)| format!(r#"{{"metric":{{{labels}}},"value":[{at},"{v}"]}}"#))
        .collect();
    format!(
        r#"{{"status":"success","data":{{"resultType":"vector","result":[{}]}}}}"#,
        result.join(",")
    )
}

/// A range query's answer: each series' labels (JSON members) and points.
pub fn matrix(items: Vec<(String, Vec<(f64, f64)>)>) -> String {
    let result: Vec<String> = items
        .into_iter()
        .map(|(labels, points)| {
            let values: Vec<String> = points
                .iter()
                .map(|(t, v)| format!(r#"[{t},"{v}"]"#))
                .collect();
            format!(
                r#"{{"metric":{{{labels}}},"values":[{}]}}"#,
                values.join(",")
            )
        })
        .collect();
    format!(
        r#"{{"status":"success","data":{{"resultType":"matrix","result":[{}]}}}}"#,
        result.join(",")
    )
}

/// The answer of the canned fleet `guests` to one API request.
pub fn answer(guests: &[Canned], path: &str, params: &HashMap<String, String>) -> Reply {
    let q = params.get("query").cloned().unwrap_or_default();
    let id = |g: &Canned| format!(r#""job":"plugtop","instance":"{}""#, g.instance);
    if path == "/api/v1/query_range" {
        let end: f64 = params
            .get("end")
            .and_then(|t| t.parse().ok())
            .unwrap_or(0.0);
        let start: f64 = params
            .get("start")
            .and_then(|t| t.parse().ok())
            .unwrap_or(0.0);
        let wanted = |g: &Canned| !q.contains("instance=") || q.contains(g.instance);
        let series = |f: &dyn Fn(&Canned, f64) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
            guests
                .iter()
                .filter(|g| wanted(g))
                .map(|g| {
                    let points = (0..60)
                        .map(|i| {
                            let t = start + (end - start) * f64::from(i) / 59.0;
                            (t, f(g, t))
                        })
                        .filter(|(t, _)| *t <= end - g.age)
                        .collect();
                    (id(g), points)
                })
                .collect()
        };
        let body = if q.starts_with("plugtop_cpus_online") {
            matrix(series(&|g, t| {
                if g.flapping {
                    1.0 + (t as i64 % 2) as f64
                } else {
                    g.online
                }
            }))
        } else if q.starts_with("plugtop_cpus_present") {
            matrix(series(&|g, _| g.present))
        } else if q.starts_with("plugtop_cmm_pages") {
            matrix(series(&|_, t| 25600.0 + (t as i64 % 600) as f64 * 10.0))
        } else if q.starts_with("plugtop_rule_true") {
            let mut m = series(&|g, t| {
                if g.flapping {
                    (t as i64 % 2) as f64
                } else {
                    0.0
                }
            });
            for s in &mut m {
                s.0.push_str(r#","rule":"HOTPLUG""#);
            }
            matrix(m)
        } else if q.starts_with("plugtop_last_change_timestamp_seconds") {
            let mut m = series(&|_, _| end - 120.0);
            for s in &mut m {
                s.0.push_str(r#","why":"unplug → plug; HOTPLUG false → true: idle 0.1 < 0.3""#);
            }
            matrix(m)
        } else {
            matrix(Vec::new())
        };
        return Reply::Json(body);
    }
    let at: f64 = params
        .get("time")
        .and_then(|t| t.parse().ok())
        .unwrap_or(0.0);
    let each = |f: &dyn Fn(&Canned) -> Option<(String, f64)>| {
        vector(
            guests
                .iter()
                .filter_map(|g| {
                    f(g).map(|(l, v)| {
                        (
                            format!("{},{l}", id(g)).trim_end_matches(',').to_string(),
                            v,
                        )
                    })
                })
                .collect(),
            at,
        )
    };
    let body = if q.contains(" unless ") {
        // The guests whose series went stale (`Scope::gone`).
        each(&|g| g.gone.then(|| (String::new(), at - g.age)))
    } else if q.contains("plugtop_guest_info") {
        each(&|g| Some((format!(r#""zvm_name":"{}","lpar":"LPAR1""#, g.zvm), 1.0)))
    } else if q.contains("plugtop_last_interval_timestamp_seconds") {
        each(&|g| Some((String::new(), at - g.age)))
    } else if q.contains("plugtop_cpus_online") {
        each(&|g| Some((String::new(), g.online)))
    } else if q.contains("plugtop_cpus_present") {
        each(&|g| Some((String::new(), g.present)))
    } else if q.contains("plugtop_cpu_max") {
        each(&|g| Some((String::new(), g.present)))
    } else if q.contains("plugtop_cmm_pages") {
        each(&|_| Some((String::new(), 25600.0)))
    } else if q.contains("plugtop_cmm_max_pages") {
        each(&|_| Some((String::new(), 51200.0)))
    } else if q.contains("plugtop_update_seconds") {
        each(&|_| Some((String::new(), 1.0)))
    } else if q.contains("plugtop_flapping") {
        let mut items: Vec<(String, f64)> = guests
            .iter()
            .map(|g| (id(g), f64::from(u8::from(g.flapping))))
            .collect();
        items.extend(
            guests
                .iter()
                .filter(|g| g.twin_flapping)
                .map(|g| (format!(r#"{},"exporter":"second""#, id(g)), 1.0)),
        );
        vector(items, at)
    } else if q.contains("plugtop_flap_period_seconds") {
        each(&|g| g.flapping.then(|| (String::new(), 4.0)))
    } else if q.contains("plugtop_mode") {
        each(&|_| Some((r#""mode":"auto""#.to_string(), 1.0)))
    } else if q.contains("plugtop_rules_info") {
        each(&|g| Some((format!(r#""file":"{}","crc32":"{}""#, g.file, g.crc), 1.0)))
    } else if q.contains("plugtop_rule_faults_total") {
        // Each rule's faults in the window, and (no `rule` label) the
        // readings in it: 3 of 40 is trouble, 1 is not.
        let mut items: Vec<(String, f64)> = Vec::new();
        for g in guests {
            let mut rule = |r: &str, n: f64| {
                items.push((format!(r#"{},"rule":"{r}""#, id(g)), n));
            };
            if let Some(r) = g.faulting {
                rule(r, 3.0);
            }
            if let Some(r) = g.faulted_once {
                rule(r, 1.0);
            }
            // The query over the last two minutes (`[120s]`) or the window.
            let recent = q.contains("[120s]");
            if let Some(r) = g.faulting_now {
                rule(r, 7.0);
                items.push((id(g), if recent { 7.0 } else { 3600.0 }));
                continue;
            }
            items.push((id(g), 40.0));
        }
        vector(items, at)
    } else if q.contains("plugtop_applied_actions_total") {
        each(&|g| Some((String::new(), if g.flapping { 120.0 } else { 2.0 })))
    } else {
        vector(Vec::new(), at)
    };
    Reply::Json(body)
}
