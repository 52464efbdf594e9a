//! `plugtop lsp` spoken to over its pipes, as an editor would: JSON-RPC
//! with Content-Length framing, on a fake root.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};

use common::{FakeRoot, Spawned, hang_guard};
use serde_json::{Value, json};

const FILE: &str = "examples/rules/memory-config-1.conf";
const URI: &str = "file:///etc/cpuplugd.conf";

struct Client {
    child: Spawned,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    next_id: i64,
}

/// Reads framed messages off `out` into a channel until it ends.
fn read_messages(out: impl Read + Send + 'static) -> Receiver<Value> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut out = BufReader::new(out);
        loop {
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if out.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(n) = line.strip_prefix("Content-Length: ") {
                    length = n.parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            if out.read_exact(&mut body).is_err() {
                return;
            }
            match serde_json::from_slice(&body) {
                Ok(v) => {
                    if tx.send(v).is_err() {
                        return;
                    }
                }
                Err(e) => panic!("the server wrote bad JSON: {e}"),
            }
        }
    });
    rx
}

impl Client {
    fn start(root: &FakeRoot) -> Client {
        let child = Command::new(env!("CARGO_BIN_EXE_plugtop"))
            .args(["lsp", "--root"])
            .arg(root.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match child {
            Ok(c) => Spawned::new(child_ok(c)),
            Err(e) => panic!("cannot run plugtop lsp: {e}"),
        };
        let stdin = child.child().stdin.take();
        let Some(stdout) = child.child().stdout.take() else {
            panic!("no stdout");
        };
        Client {
            child,
            stdin,
            messages: read_messages(stdout),
            next_id: 1,
        }
    }

    fn raw(&mut self, bytes: &[u8]) {
        let Some(stdin) = self.stdin.as_mut() else {
            panic!("stdin closed");
        };
        let _ = stdin.write_all(bytes);
        let _ = stdin.flush();
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        let framed = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.raw(framed.as_bytes());
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next message, waiting at most the hang guard.
    fn receive(&mut self) -> Value {
        match self.messages.recv_timeout(hang_guard()) {
            Ok(v) => v,
            Err(e) => panic!("no message from the server: {e}"),
        }
    }

    /// Sends a request and returns its response (skipping notifications).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.receive();
            if m["id"] == json!(id) {
                return m;
            }
        }
    }

    fn diagnostics(&mut self) -> Value {
        loop {
            let m = self.receive();
            if m["method"] == "textDocument/publishDiagnostics" {
                return m["params"].clone();
            }
        }
    }

    fn end(mut self) -> std::process::Output {
        self.stdin = None;
        self.child.finish("plugtop lsp")
    }
}

fn child_ok(c: std::process::Child) -> std::process::Child {
    c
}

fn at(uri: &str, line: usize, character: usize) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

/// Line and character (0-based) of `needle` in `text`'s 1-based `line`.
fn find(text: &str, line: usize, needle: &str) -> (usize, usize) {
    let Some(l) = text.lines().nth(line - 1) else {
        panic!("no line {line}");
    };
    match l.find(needle) {
        Some(c) => (line - 1, c),
        None => panic!("no {needle:?} on line {line}"),
    }
}

fn open_paper_file(client: &mut Client) -> String {
    let text = match std::fs::read_to_string(FILE) {
        Ok(t) => t,
        Err(e) => panic!("{FILE}: {e}"),
    };
    let init = client.request("initialize", json!({"capabilities": {}}));
    assert!(
        init["result"]["capabilities"]["hoverProvider"] == json!(true),
        "{init}"
    );
    client.notify("initialized", json!({}));
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "cpuplugd", "version": 1, "text": text}}),
    );
    text
}

#[test]
fn an_editor_session_on_the_papers_refused_file() {
    let root = FakeRoot::guest(2);
    let mut client = Client::start(&root);
    let text = open_paper_file(&mut client);

    // The same places `check` reports, on the same root.
    let root_arg = root.path().display().to_string();
    let check = common::plugtop(&["check", FILE, "--root", &root_arg]);
    let said = String::from_utf8_lossy(&check.stdout).into_owned();
    let expected: Vec<(u64, u64)> = said
        .lines()
        .filter_map(|l| l.strip_prefix(&format!("{FILE}:")))
        .filter_map(|rest| {
            let mut parts = rest.split(':');
            let line = parts.next()?.parse::<u64>().ok()?;
            let col = parts.next()?.parse::<u64>().ok()?;
            Some((line - 1, col - 1))
        })
        .collect();
    let published = client.diagnostics();
    assert_eq!(published["uri"], URI);
    let got: Vec<(u64, u64)> = published["diagnostics"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|d| {
                    let s = &d["range"]["start"];
                    Some((s["line"].as_u64()?, s["character"].as_u64()?))
                })
                .collect()
        })
        .unwrap_or_default();
    assert!(!expected.is_empty(), "{said}");
    assert_eq!(got, expected, "{published}");
    let refused = &published["diagnostics"][got.len() - 1];
    assert_eq!(refused["severity"], 1);
    assert!(
        refused["relatedInformation"]
            .as_array()
            .is_some_and(|r| r.len() >= 2),
        "{refused}"
    );

    // Hover: a keyword with the root's live value, a variable's expansion.
    let (l, c) = find(&text, 20, "onumcpus");
    let hover = client.request("textDocument/hover", at(URI, l, c + 2));
    let shown = hover["result"]["contents"]["value"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(shown.contains("online") && shown.contains(": 2"), "{hover}");
    let (l, c) = find(&text, 30, "cache");
    let hover = client.request("textDocument/hover", at(URI, l, c));
    let shown = hover["result"]["contents"]["value"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(shown.contains("meminfo.Cached+meminfoBuffers"), "{hover}");

    // Completion of a meminfo name the root has.
    let (l, c) = find(&text, 30, "MemFree");
    let done = client.request("textDocument/completion", at(URI, l, c));
    let labels: Vec<&str> = done["result"]
        .as_array()
        .map(|a| a.iter().filter_map(|i| i["label"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        labels.contains(&"Shmem") && labels.contains(&"MemTotal"),
        "{done}"
    );

    // Rename everywhere, and a name cpuplugd would read as HOTPLUG refused.
    let (l, c) = find(&text, 27, "cache");
    let mut params = at(URI, l, c);
    params["newName"] = json!("pagecache");
    let renamed = client.request("textDocument/rename", params.clone());
    let edits = &renamed["result"]["changes"][URI];
    assert_eq!(edits.as_array().map(Vec::len), Some(3), "{renamed}");
    params["newName"] = json!("hotplug_cache");
    let refused = client.request("textDocument/rename", params.clone());
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("HOTPLUG")),
        "{refused}"
    );
    // A name `check` would call a misspelt keyword is refused too.
    params["newName"] = json!("HOTPLG");
    let refused = client.request("textDocument/rename", params);
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("warn")),
        "{refused}"
    );

    // The fix `check` suggests, as an edit.
    let range =
        json!({"start": {"line": 26, "character": 0}, "end": {"line": 26, "character": 80}});
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": range, "context": {"diagnostics": []}}),
    );
    let edit = &actions["result"][0]["edit"]["changes"][URI][0];
    assert_eq!(edit["newText"], "meminfo.Buffers", "{actions}");
    assert_eq!(edit["range"]["start"]["character"], 24, "{actions}");

    let bye = client.request("shutdown", Value::Null);
    assert_eq!(bye["result"], Value::Null, "{bye}");
    client.notify("exit", Value::Null);
    let o = client.end();
    assert_eq!(o.status.code(), Some(0), "{}", crate::common::said(&o));
}

#[test]
fn hostile_clients_get_errors_not_a_crash() {
    let root = FakeRoot::guest(1);
    let mut client = Client::start(&root);
    let early = client.request("textDocument/hover", at(URI, 0, 0));
    assert_eq!(early["error"]["code"], -32002, "{early}");
    client.request("initialize", json!({"capabilities": {}}));

    client.raw(b"Content-Length: 9\r\n\r\n{not json");
    assert_eq!(client.receive()["error"]["code"], -32700);
    client.raw(b"Content-Length: 13\r\n\r\n\"\xff\xfe bad utf8\"");
    assert_eq!(client.receive()["error"]["code"], -32700);
    let unknown = client.request("plugtop/nothing", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let bad = client.request("textDocument/hover", json!({"nonsense": 1}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    let never = client.request("textDocument/hover", at("file:///never", 0, 0));
    assert_eq!(never["result"], Value::Null, "{never}");

    // A 10 MB paste is checked; positions past its end are clamped.
    let big = "#".repeat(99) + "\n";
    let big = big.repeat(100_000);
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "cpuplugd", "version": 1, "text": big}}),
    );
    let published = client.diagnostics();
    assert_eq!(published["uri"], URI);
    let far = client.request("textDocument/hover", at(URI, 1 << 30, 1 << 30));
    assert!(far.get("error").is_none(), "{far}");
    let far = client.request("textDocument/completion", at(URI, 5, 1 << 30));
    assert!(far.get("error").is_none(), "{far}");

    // A length far larger than any message: never allocated, the stream
    // ends inside it, the server ends without a panic.
    client.raw(b"Content-Length: 1000000000000\r\n\r\n{}");
    let o = client.end();
    let err = crate::common::said(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert_ne!(o.status.code(), Some(101), "{err}");
}

#[test]
fn live_values_reach_hover_and_inlay_hints_every_update() {
    let root = FakeRoot::guest(2);
    let mut client = Client::start(&root);
    let init = client.request(
        "initialize",
        json!({"capabilities": {"workspace": {"inlayHint": {"refreshSupport": true}}}}),
    );
    assert_eq!(
        init["result"]["capabilities"]["inlayHintProvider"],
        json!(true),
        "{init}"
    );
    client.notify("initialized", json!({}));
    // The fake guest's loadavg is 0.42 and stays so; two CPUs are online.
    let text = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"2\"\n\
                doubled=\"loadavg * 2\"\n\
                HOTPLUG=\"doubled > 0.5\"\n\
                HOTUNPLUG=\"onumcpus > 5\"\n";
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "cpuplugd", "version": 1, "text": text}}),
    );
    let published = client.diagnostics();
    assert_eq!(published["diagnostics"], json!([]), "{published}");

    // One reading so far; the rules need two (history depth 1).
    let early = client.request("textDocument/hover", at(URI, 4, 2));
    let shown = early["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(shown.contains("history filling: 1 of 2"), "{early}");

    // The second reading comes UPDATE seconds later, and the server asks
    // the client to fetch the hints again.
    let refresh = loop {
        let m = client.receive();
        if m["method"] == "workspace/inlayHint/refresh" {
            break m;
        }
    };
    client.send(json!({"jsonrpc": "2.0", "id": refresh["id"], "result": null}));

    let range = json!({"start": {"line": 0, "character": 0}, "end": {"line": 10, "character": 0}});
    let hints = client.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": URI}, "range": range}),
    );
    let labels: Vec<(u64, String)> = hints["result"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|h| {
                    Some((
                        h["position"]["line"].as_u64()?,
                        h["label"].as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        labels,
        [
            (3, "= 0.84".to_string()),
            (4, "→ true".to_string()),
            // cpuplugd tries HOTUNPLUG only when HOTPLUG is false.
            (5, "→ not evaluated".to_string())
        ],
        "{hints}"
    );
    // The hint after the variable's line ends where the line ends.
    assert_eq!(hints["result"][0]["position"]["character"], 21, "{hints}");
    assert!(
        hints["result"][1]["tooltip"]
            .as_str()
            .is_some_and(|t| t.starts_with("HOTPLUG true")),
        "{hints}"
    );

    // Hover: the rule's verdict with its reason, the variable's value.
    let rule = client.request("textDocument/hover", at(URI, 4, 2));
    let shown = rule["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(
        shown.contains("now under") && shown.contains("HOTPLUG true"),
        "{rule}"
    );
    let var = client.request("textDocument/hover", at(URI, 4, 10));
    let shown = var["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(
        shown.contains("loadavg*2") && shown.ends_with(": 0.84"),
        "{var}"
    );

    // A change that cpuplugd refuses has no live values, and a hint
    // request right after the change already sees it.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 2},
               "contentChanges": [{"text": "HOTPLUG=\"loadavg >\"\n"}]}),
    );
    let none = client.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": URI}, "range": range}),
    );
    assert_eq!(none["result"], json!([]), "{none}");

    let bye = client.request("shutdown", Value::Null);
    assert_eq!(bye["result"], Value::Null, "{bye}");
    client.notify("exit", Value::Null);
    assert_eq!(client.end().status.code(), Some(0));
}

#[test]
fn ids_beyond_32_bits_and_lying_lengths_are_answered_or_end_the_stream() {
    let root = FakeRoot::guest(1);
    let mut client = Client::start(&root);
    client.request("initialize", json!({"capabilities": {}}));
    // The answer carries the id the client sent, whatever its size.
    client.send(json!({"jsonrpc": "2.0", "id": 1_u64 << 40, "method": "shutdown"}));
    let big = client.receive();
    assert_eq!(big["id"], json!(1_u64 << 40), "{big}");
    assert_eq!(big["error"]["code"], -32600, "{big}");
    client.send(json!({"jsonrpc": "2.0", "id": 1.5, "method": "shutdown"}));
    let half = client.receive();
    assert_eq!(half["id"], json!(1.5), "{half}");
    // A length no message has ends the server at once, though the client
    // keeps the stream open: nothing later is swallowed into it.
    client.raw(b"Content-Length: 1000000000000\r\n\r\n");
    common::wait_until("the server ends", || client.child.has_ended());
    let o = client.end();
    let err = crate::common::said(&o);
    assert!(err.contains("no message is that long"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_greater_or_equal_is_fixed_over_its_comparison() {
    let root = FakeRoot::guest(1);
    let mut client = Client::start(&root);
    client.request("initialize", json!({"capabilities": {}}));
    let text = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"1\"\n\
                HOTPLUG=\"loadavg > 1 & idle * 2 >= 50 & 1\"\nHOTUNPLUG=\"0\"\n";
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "cpuplugd", "version": 1, "text": text}}),
    );
    client.diagnostics();
    let range = json!({"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 80}});
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": range, "context": {"diagnostics": []}}),
    );
    let edit = &actions["result"][0]["edit"]["changes"][URI][0];
    assert_eq!(edit["newText"], "(!(idle * 2 < 50))", "{actions}");
    assert_eq!(edit["range"]["start"], json!({"line": 3, "character": 23}));
    assert_eq!(edit["range"]["end"], json!({"line": 3, "character": 37}));
    client.request("shutdown", Value::Null);
    client.notify("exit", Value::Null);
    assert_eq!(client.end().status.code(), Some(0));
}

#[test]
fn code_actions_over_a_file_of_many_findings_are_answered_promptly() {
    // Each `>=` fix loads the fixed file to be sure of it; over a whole
    // file of 20,000 of them that was 20,000 loads of 500 KB, an hour of
    // a server that answered nothing else.
    let root = FakeRoot::guest(1);
    let mut client = Client::start(&root);
    client.request("initialize", json!({"capabilities": {}}));
    let text: String = (0..20_000)
        .map(|i| format!("HOTPLUG=\"idle >= {i}\"\n"))
        .collect();
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "cpuplugd", "version": 1, "text": text}}),
    );
    client.diagnostics();
    let range =
        json!({"start": {"line": 0, "character": 0}, "end": {"line": 20_000, "character": 0}});
    // Answered at all (the client's hang guard is the only clock here).
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": range, "context": {"diagnostics": []}}),
    );
    assert!(actions["result"].is_array(), "{actions}");
    client.request("shutdown", Value::Null);
    client.notify("exit", Value::Null);
    assert_eq!(client.end().status.code(), Some(0));
}

#[test]
fn a_client_that_closes_its_end_without_shutdown_gets_status_one() {
    let root = FakeRoot::guest(1);
    let child = Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["lsp", "--root"])
        .arg(root.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => Spawned::new(c),
        Err(e) => panic!("cannot run plugtop lsp: {e}"),
    };
    // Nobody will read the answer: the server's write fails with EPIPE.
    drop(child.child().stdout.take());
    let Some(mut stdin) = child.child().stdin.take() else {
        panic!("no stdin");
    };
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"capabilities": {}}})
    .to_string();
    let _ = write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len());
    let _ = stdin.flush();
    let out = child.finish("plugtop lsp");
    drop(stdin);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

#[test]
fn documents_named_by_huge_uris_do_not_grow_the_server() {
    // The URIs count toward the bound on open documents: 20 of 10 MB each
    // held 220 MB.
    let root = FakeRoot::guest(1);
    let mut client = Client::start(&root);
    client.request("initialize", json!({"capabilities": {}}));
    let long = "a".repeat(10 << 20);
    let mut refused = 0;
    for i in 0..6 {
        let uri = format!("file:///{i}{long}");
        client.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "cpuplugd", "version": 1,
                "text": "UPDATE=\"1\"\n"}}),
        );
        let published = client.diagnostics();
        if published["diagnostics"][0]["code"] == "too-large" {
            refused += 1;
        }
    }
    assert_eq!(refused, 6);
    let status = std::fs::read_to_string(format!("/proc/{}/status", client.child.child().id()))
        .unwrap_or_default();
    let rss_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    assert!(rss_kb < 100_000, "{rss_kb} kB");
    client.request("shutdown", Value::Null);
    client.notify("exit", Value::Null);
    assert_eq!(client.end().status.code(), Some(0));
}

#[test]
fn completion_after_a_character_beyond_ascii_is_answered() {
    // `vmstat.é`: the word before the cursor was cut inside the `é`, and
    // the server panicked.
    let root = FakeRoot::guest(1);
    let mut client = Client::start(&root);
    client.request("initialize", json!({"capabilities": {}}));
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "cpuplugd", "version": 1,
            "text": "HOTPLUG=\"vmstat.é"}}),
    );
    client.diagnostics();
    let answer = client.request("textDocument/completion", at(URI, 0, 17));
    assert!(answer.get("result").is_some(), "{answer}");
    client.request("shutdown", Value::Null);
    client.notify("exit", Value::Null);
    let out = client.end();
    assert_eq!(out.status.code(), Some(0));
    assert!(!crate::common::said(&out).contains("panicked"));
}

/// Issue 42, item 3: answers and messages bounded by what they hold. A
/// message of a million values is refused before it is parsed; references
/// and rename over a variable named 200,000 times are refused with why,
/// not built; 5,000 ranged changes that move gigabytes leave the
/// document out of step, said, instead of a minute of copying; the
/// server answers after each.
#[test]
fn amplifying_requests_are_refused_with_why_and_the_server_answers_on() {
    let root = FakeRoot::guest(1);
    let mut client = Client::start(&root);
    client.request("initialize", json!({"capabilities": {}}));

    let zeros = format!("[{}0]", "0,".repeat(1_000_000));
    client.raw(format!("Content-Length: {}\r\n\r\n{zeros}", zeros.len()).as_bytes());
    let refused = client.receive();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("JSON values")),
        "{refused}"
    );

    let mut text = String::from("UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\na=\"1\"\n");
    for _ in 0..1_000 {
        text.push_str(&format!("HOTPLUG=\"{}a\"\n", "a+".repeat(199)));
    }
    text.push_str("HOTUNPLUG=\"0\"\n");
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "cpuplugd", "version": 1, "text": text}}),
    );
    client.diagnostics();
    let uses = client.request(
        "textDocument/references",
        json!({"textDocument": {"uri": URI}, "position": {"line": 3, "character": 0},
               "context": {"includeDeclaration": true}}),
    );
    assert!(
        uses["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("200001 places")),
        "{uses}"
    );
    let renamed = client.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": URI}, "position": {"line": 3, "character": 0},
               "newName": "b"}),
    );
    assert!(renamed.get("error").is_some(), "{renamed}");

    let big = "#".repeat(99) + "\n";
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": "file:///big.conf", "languageId": "cpuplugd",
               "version": 1, "text": big.repeat(10_000)}}),
    );
    client.diagnostics();
    let one = json!({"range": {"start": {"line": 0, "character": 1},
                               "end": {"line": 0, "character": 1}}, "text": "x"});
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": "file:///big.conf", "version": 2},
               "contentChanges": vec![one; 5_000]}),
    );
    let said = client.diagnostics();
    assert_eq!(said["uri"], "file:///big.conf");
    assert!(
        said["diagnostics"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("reopen")),
        "{said}"
    );
    let alive = client.request("textDocument/hover", at(URI, 0, 0));
    assert!(alive.get("error").is_none(), "{alive}");
    let o = client.end();
    let err = crate::common::said(&o);
    assert!(!err.contains("panicked"), "{err}");
}
