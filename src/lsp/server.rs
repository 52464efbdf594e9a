//! The protocol's life cycle (initialize, requests, shutdown, exit) and
//! the dispatch of each message to its feature. Nothing a client sends
//! ends the server but `exit` or the end of the stream: a bad message gets
//! an error response (or, for a notification, is dropped).

use std::io::{self, BufRead, Write};
use std::path::Path;

use lsp_server::{Message, Notification, Request, RequestId, Response};
use lsp_types as lt;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::documents::{Document, Documents};
use super::live::Live;
use super::position::LineIndex;
use super::transport::{Frame, MAX_MESSAGE, read_frame, write_frame};
use super::{actions, completion, diagnostics, hints, hover, navigate};
use crate::kernel::SystemFacts;
use crate::kernel::root::RootReader;

/// How the session ended, for the exit status the protocol asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEnd {
    /// `exit` after `shutdown`: status 0.
    Clean,
    /// `exit` without `shutdown`, or the stream ended: status 1.
    Abrupt,
}

// JSON-RPC's and LSP's error codes.
const PARSE_ERROR: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;
const METHOD_NOT_FOUND: i32 = -32601;
const INVALID_PARAMS: i32 = -32602;
const NOT_INITIALIZED: i32 = -32002;
const REQUEST_FAILED: i32 = -32803;

type Answer = Result<Value, (i32, String)>;

struct Server<'a> {
    root: &'a Path,
    out: &'a mut dyn Write,
    docs: Documents,
    initialized: bool,
    shutdown: bool,
    /// Documents opened or changed since they were last checked.
    changed: Vec<lt::Uri>,
    /// The kernel's readings and the open files' verdicts on them.
    live: Live,
    /// When the next reading is due (none without readings or files).
    next_reading: Option<std::time::Instant>,
    /// Whether the client asked to be told when hints change.
    refresh_hints: bool,
    /// Requests the server sent (hint refreshes), for their ids.
    sent: u64,
}

/// Serves one client on `input`/`output` until `exit` or the end of the
/// stream, with names and live values from the kernel under `root`. An
/// error is a stream that cannot be read or written on.
///
/// A thread reads the frames; the server takes every frame already read
/// before it checks a changed document, so a burst of keystrokes is
/// checked once, for its last text (the debounce, without a clock).
pub fn serve(
    mut input: Box<dyn BufRead + Send>,
    output: &mut dyn Write,
    root: &Path,
) -> io::Result<SessionEnd> {
    let mut server = Server {
        root,
        out: output,
        docs: Documents::default(),
        initialized: false,
        shutdown: false,
        changed: Vec::new(),
        live: Live::new(root.to_path_buf()),
        next_reading: None,
        refresh_hints: false,
        sent: 0,
    };
    // Few frames wait at once: a client that sends faster than the server
    // checks is held back by the pipe, not by memory.
    let (frames, inbox) = std::sync::mpsc::sync_channel::<io::Result<Frame>>(FRAMES_WAITING);
    // Not joined: after `exit` the reader may still wait on a client that
    // keeps its end open, and the server must end all the same.
    std::thread::Builder::new()
        .name("lsp-reader".into())
        .spawn(move || {
            loop {
                let frame = read_frame(&mut *input);
                let last = !matches!(frame, Ok(Frame::Body(_) | Frame::TooLarge(_)));
                if frames.send(frame).is_err() || last {
                    return;
                }
            }
        })?;
    server.run(&inbox)
}

/// Frames read ahead of the server at most.
const FRAMES_WAITING: usize = 4;

impl Server<'_> {
    /// Handles frames until `exit` or the end of the stream; the changed
    /// documents are checked whenever no frame is waiting, and the kernel
    /// is read when a reading is due (never without readings: an idle
    /// server without them sleeps until the client writes).
    fn run(
        &mut self,
        inbox: &std::sync::mpsc::Receiver<io::Result<Frame>>,
    ) -> io::Result<SessionEnd> {
        use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
        loop {
            let frame = match inbox.try_recv() {
                Ok(frame) => frame,
                Err(TryRecvError::Empty) => {
                    self.check_changed()?;
                    match self.wait(inbox) {
                        Ok(frame) => frame,
                        Err(RecvTimeoutError::Timeout) => {
                            self.read_kernel()?;
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => return Ok(SessionEnd::Abrupt),
                    }
                }
                Err(TryRecvError::Disconnected) => return Ok(SessionEnd::Abrupt),
            };
            if let Some(end) = self.frame(frame?)? {
                return Ok(end);
            }
        }
    }

    /// One frame; `Some` when the session ends with it.
    fn frame(&mut self, frame: Frame) -> io::Result<Option<SessionEnd>> {
        let body = match frame {
            Frame::End => return Ok(Some(SessionEnd::Abrupt)),
            Frame::TooLarge(n) => {
                let why = format!("a message of {n} bytes is larger than {MAX_MESSAGE}");
                self.error_without_id(INVALID_REQUEST, &why)?;
                return Ok(None);
            }
            Frame::Body(b) => b,
        };
        if super::transport::too_many_values(&body) {
            let why = format!(
                "a message of more than {} JSON values; LSP messages hold a few dozen",
                super::transport::MAX_VALUES
            );
            self.error_without_id(INVALID_REQUEST, &why)?;
            return Ok(None);
        }
        let value: Value = match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                self.error_without_id(PARSE_ERROR, &format!("not JSON: {e}"))?;
                return Ok(None);
            }
        };
        drop(body);
        // LSP's ids are strings or 32-bit integers; another number still
        // gets its answer, an error under the id the client sent.
        if value.get("method").is_some()
            && let Some(id) = value.get("id").filter(|id| {
                id.is_number() && id.as_i64().and_then(|n| i32::try_from(n).ok()).is_none()
            })
        {
            let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": INVALID_REQUEST,
                "message": "a request id must be a string or an integer of 32 bits"}});
            write_frame(self.out, body.to_string().as_bytes())?;
            return Ok(None);
        }
        match serde_json::from_value::<Message>(value) {
            Ok(Message::Request(r)) => self.request(r)?,
            Ok(Message::Notification(n)) => {
                if n.method == "exit" {
                    return Ok(Some(if self.shutdown {
                        SessionEnd::Clean
                    } else {
                        SessionEnd::Abrupt
                    }));
                }
                self.notification(n)?;
            }
            // plugtop sends no requests, so no response is awaited.
            Ok(Message::Response(_)) => {}
            Err(e) => {
                self.error_without_id(INVALID_REQUEST, &format!("not a message: {e}"))?;
            }
        }
        Ok(None)
    }

    /// The next frame, or a timeout when a reading is due first.
    fn wait(
        &mut self,
        inbox: &std::sync::mpsc::Receiver<io::Result<Frame>>,
    ) -> Result<io::Result<Frame>, std::sync::mpsc::RecvTimeoutError> {
        match self.live.period() {
            None => {
                self.next_reading = None;
                inbox
                    .recv()
                    .map_err(|_| std::sync::mpsc::RecvTimeoutError::Disconnected)
            }
            Some(period) => {
                let now = std::time::Instant::now();
                let due = *self.next_reading.get_or_insert(now + period);
                inbox.recv_timeout(due.saturating_duration_since(now))
            }
        }
    }

    /// Reads the kernel, decides every open file on it, and tells a client
    /// that asked for it to fetch the hints again.
    fn read_kernel(&mut self) -> io::Result<()> {
        self.next_reading = None;
        if self.live.tick() && self.refresh_hints {
            self.sent += 1;
            let id = RequestId::from(format!("plugtop-hints-{}", self.sent));
            let request = Request::new(id, "workspace/inlayHint/refresh".into(), Value::Null);
            self.send(Message::Request(request))?;
        }
        Ok(())
    }

    /// Checks each document changed since the last check, once, publishes
    /// its diagnostics, and decides it on the live readings when cpuplugd
    /// would load it.
    fn check_changed(&mut self) -> io::Result<()> {
        for uri in std::mem::take(&mut self.changed) {
            let found = match self.docs.get(uri.as_str()) {
                Some(Document::Text(text)) => {
                    let (file, outcome) = diagnostics::analyse(text, &self.facts());
                    let found = diagnostics::of_outcome(&uri, text, &outcome);
                    self.live.set(uri.as_str(), file, outcome);
                    found
                }
                Some(Document::TooLarge(len)) => {
                    self.live.close(uri.as_str());
                    vec![diagnostics::too_large(*len)]
                }
                None => continue,
            };
            self.publish(uri, found)?;
        }
        Ok(())
    }

    /// Forgets `uri`: its text, its live values and that it changed (a
    /// document [`Documents::set`] refused is already gone from the texts).
    fn forget(&mut self, uri: &lt::Uri) {
        self.docs.close(uri.as_str());
        self.live.close(uri.as_str());
        self.changed.retain(|u| u != uri);
    }

    /// Checks `uri` now if it changed since its last check, so that an
    /// answer about live values matches the text the client shows.
    fn check_if_changed(&mut self, uri: &lt::Uri) -> io::Result<()> {
        if !self.changed.contains(uri) {
            return Ok(());
        }
        self.changed.retain(|u| u != uri);
        let rest = std::mem::replace(&mut self.changed, vec![uri.clone()]);
        self.check_changed()?;
        self.changed = rest;
        Ok(())
    }
}

fn params<P: DeserializeOwned>(value: Value) -> Result<P, (i32, String)> {
    serde_json::from_value(value).map_err(|e| (INVALID_PARAMS, format!("invalid params: {e}")))
}

fn capabilities() -> lt::InitializeResult {
    lt::InitializeResult {
        capabilities: lt::ServerCapabilities {
            text_document_sync: Some(lt::TextDocumentSyncCapability::Kind(
                lt::TextDocumentSyncKind::FULL,
            )),
            hover_provider: Some(lt::HoverProviderCapability::Simple(true)),
            completion_provider: Some(lt::CompletionOptions {
                trigger_characters: Some(vec![".".into(), "[".into()]),
                ..lt::CompletionOptions::default()
            }),
            definition_provider: Some(lt::OneOf::Left(true)),
            references_provider: Some(lt::OneOf::Left(true)),
            rename_provider: Some(lt::OneOf::Left(true)),
            code_action_provider: Some(lt::CodeActionProviderCapability::Simple(true)),
            inlay_hint_provider: Some(lt::OneOf::Left(true)),
            ..lt::ServerCapabilities::default()
        },
        server_info: Some(lt::ServerInfo {
            name: "plugtop".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
    }
}

fn to_value(v: impl serde::Serialize) -> Answer {
    serde_json::to_value(v).map_err(|e| (REQUEST_FAILED, e.to_string()))
}

impl Server<'_> {
    fn send(&mut self, message: Message) -> io::Result<()> {
        message.write(&mut self.out)?;
        self.out.flush()
    }

    fn error_without_id(&mut self, code: i32, message: &str) -> io::Result<()> {
        let body =
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
        write_frame(self.out, body.to_string().as_bytes())
    }

    fn facts(&self) -> SystemFacts {
        RootReader::new().facts(self.root)
    }

    fn request(&mut self, r: Request) -> io::Result<()> {
        let answer = if r.method == "initialize" {
            if self.initialized {
                Err((INVALID_REQUEST, "initialized already".into()))
            } else {
                self.initialized = true;
                self.refresh_hints = r
                    .params
                    .pointer("/capabilities/workspace/inlayHint/refreshSupport")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                to_value(capabilities())
            }
        } else if !self.initialized {
            Err((NOT_INITIALIZED, "initialize first".into()))
        } else if self.shutdown {
            Err((INVALID_REQUEST, "shut down: only exit is left".into()))
        } else if r.method == "shutdown" {
            self.shutdown = true;
            Ok(Value::Null)
        } else {
            self.feature(&r.method, r.params)?
        };
        self.respond(r.id, answer)
    }

    fn respond(&mut self, id: RequestId, answer: Answer) -> io::Result<()> {
        let response = match answer {
            Ok(v) => Response {
                id,
                response_result: Ok(v),
            },
            Err((code, message)) => Response::new_err(id, code, message),
        };
        self.send(Message::Response(response))
    }
}

/// The open document's text and the byte offset of `pos` in it.
fn located<'d>(docs: &'d Documents, uri: &lt::Uri, pos: lt::Position) -> Option<(&'d str, usize)> {
    let text = docs.text(uri.as_str())?;
    Some((text, LineIndex::new(text).offset(pos)))
}

impl Server<'_> {
    /// A request for one of the features; a document never opened gets
    /// `null`, as "nothing here". The outer error is the stream's.
    fn feature(&mut self, method: &str, raw: Value) -> io::Result<Answer> {
        // Answers about live values come from the text the client shows.
        let live = matches!(method, "textDocument/hover" | "textDocument/inlayHint");
        if live
            && let Some(uri) = raw.pointer("/textDocument/uri").and_then(Value::as_str)
            && let Some(uri) = self.changed.iter().find(|u| u.as_str() == uri).cloned()
        {
            self.check_if_changed(&uri)?;
        }
        Ok(self.answer(method, raw))
    }

    fn answer(&mut self, method: &str, raw: Value) -> Answer {
        match method {
            "textDocument/hover" => {
                let p: lt::HoverParams = params(raw)?;
                let at = &p.text_document_position_params;
                let uri = at.text_document.uri.as_str();
                let Some((text, offset)) = located(&self.docs, &at.text_document.uri, at.position)
                else {
                    return Ok(Value::Null);
                };
                let Some(doc) = hover::hover(text, offset, &self.live, uri) else {
                    return Ok(Value::Null);
                };
                to_value(lt::Hover {
                    contents: lt::HoverContents::Markup(lt::MarkupContent {
                        kind: lt::MarkupKind::Markdown,
                        value: doc,
                    }),
                    range: None,
                })
            }
            "textDocument/completion" => {
                let p: lt::CompletionParams = params(raw)?;
                let at = &p.text_document_position;
                let Some((text, offset)) = located(&self.docs, &at.text_document.uri, at.position)
                else {
                    return Ok(Value::Null);
                };
                to_value(completion::complete(text, offset, &self.facts()))
            }
            "textDocument/definition" => {
                let p: lt::GotoDefinitionParams = params(raw)?;
                let at = &p.text_document_position_params;
                let uri = &at.text_document.uri;
                let Some((text, offset)) = located(&self.docs, uri, at.position) else {
                    return Ok(Value::Null);
                };
                to_value(navigate::definition(uri, text, offset))
            }
            "textDocument/references" => {
                let p: lt::ReferenceParams = params(raw)?;
                let at = &p.text_document_position;
                let uri = &at.text_document.uri;
                let Some((text, offset)) = located(&self.docs, uri, at.position) else {
                    return Ok(Value::Null);
                };
                let with = p.context.include_declaration;
                match navigate::references(uri, text, offset, with) {
                    Ok(places) => to_value(places),
                    Err(why) => Err((REQUEST_FAILED, why)),
                }
            }
            "textDocument/rename" => self.rename(raw),
            "textDocument/inlayHint" => {
                let p: lt::InlayHintParams = params(raw)?;
                let uri = p.text_document.uri.as_str();
                let Some(text) = self.docs.text(uri) else {
                    return Ok(Value::Null);
                };
                to_value(hints::hints(&self.live, uri, text, p.range))
            }
            "textDocument/codeAction" => {
                let p: lt::CodeActionParams = params(raw)?;
                let uri = &p.text_document.uri;
                let Some(text) = self.docs.text(uri.as_str()) else {
                    return Ok(Value::Null);
                };
                to_value(actions::actions(uri, text, p.range, &self.facts()))
            }
            _ => Err((METHOD_NOT_FOUND, format!("unknown method {method:?}"))),
        }
    }

    fn rename(&mut self, raw: Value) -> Answer {
        let p: lt::RenameParams = params(raw)?;
        let at = &p.text_document_position;
        let uri = &at.text_document.uri;
        let Some((text, offset)) = located(&self.docs, uri, at.position) else {
            return Ok(Value::Null);
        };
        match navigate::rename(uri, text, offset, &p.new_name, &self.facts()) {
            Ok(edit) => to_value(edit),
            Err(why) => Err((REQUEST_FAILED, why)),
        }
    }

    fn notification(&mut self, n: Notification) -> io::Result<()> {
        if !self.initialized {
            return Ok(());
        }
        let uri = match n.method.as_str() {
            "textDocument/didOpen" => {
                let Ok(p) = params::<lt::DidOpenTextDocumentParams>(n.params) else {
                    return Ok(());
                };
                let len = p.text_document.text.len();
                let uri = p.text_document.uri;
                if !self.docs.set(uri.as_str(), p.text_document.text) {
                    return self.publish(uri, vec![diagnostics::too_large(len)]);
                }
                uri
            }
            "textDocument/didChange" => {
                let Ok(p) = params::<lt::DidChangeTextDocumentParams>(n.params) else {
                    return Ok(());
                };
                let uri = p.text_document.uri;
                if self.docs.get(uri.as_str()).is_none() {
                    return Ok(());
                }
                let text = match changed_text(self.docs.text(uri.as_str()), p.content_changes) {
                    Ok(Some(text)) => text,
                    Ok(None) => return Ok(()),
                    Err(why) => {
                        self.forget(&uri);
                        let at = lt::Range::default();
                        let d = lt::Diagnostic::new_simple(at, why);
                        return self.publish(uri, vec![d]);
                    }
                };
                let len = text.len();
                if !self.docs.set(uri.as_str(), text) {
                    self.forget(&uri);
                    return self.publish(uri, vec![diagnostics::too_large(len)]);
                }
                uri
            }
            "textDocument/didClose" => {
                let Ok(p) = params::<lt::DidCloseTextDocumentParams>(n.params) else {
                    return Ok(());
                };
                self.forget(&p.text_document.uri);
                return self.publish(p.text_document.uri, Vec::new());
            }
            _ => return Ok(()),
        };
        // Checked when no frame waits (see `serve`).
        if !self.changed.contains(&uri) {
            self.changed.push(uri);
        }
        Ok(())
    }

    fn publish(&mut self, uri: lt::Uri, found: Vec<lt::Diagnostic>) -> io::Result<()> {
        let params = lt::PublishDiagnosticsParams {
            uri,
            diagnostics: found,
            version: None,
        };
        let Ok(params) = serde_json::to_value(params) else {
            return Ok(());
        };
        self.send(Message::Notification(Notification {
            method: "textDocument/publishDiagnostics".into(),
            params,
        }))
    }
}

/// The text after `changes`, applied in order to `old`. The server asks
/// for full sync, so each change is usually the whole text; a client that
/// sends ranges all the same has them applied, so that its text and the
/// server's do not part silently (they did: a ranged change was dropped,
/// and every later diagnostic stood on the wrong text). `None` when there
/// is nothing to apply a range to (a document too large to keep).
///
/// Only the changes after the last whole text are applied, into one
/// buffer; a change that changes nothing costs nothing, and the others
/// may move at most [`CHANGE_WORK`] bytes in all (20,000 ranged changes of
/// a large document took a minute): past it the document is out of step,
/// and `Err` says so.
fn changed_text(
    old: Option<&str>,
    changes: Vec<lt::TextDocumentContentChangeEvent>,
) -> Result<Option<String>, String> {
    let last_whole = changes.iter().rposition(|c| c.range.is_none());
    let mut changes = changes.into_iter();
    let mut text: Option<String> = match last_whole {
        Some(i) => changes.nth(i).map(|c| c.text),
        None => None,
    };
    let mut work = 0usize;
    for change in changes {
        let Some(range) = change.range else {
            continue;
        };
        if range.start == range.end && change.text.is_empty() {
            continue;
        }
        let base = match &mut text {
            Some(t) => t,
            None => match old {
                Some(o) => text.insert(o.to_string()),
                None => return Ok(None),
            },
        };
        work = work.saturating_add(base.len() + change.text.len());
        if work > CHANGE_WORK {
            return Err(format!(
                "the ranged changes of one message would move more than {} MiB; the server asks for whole texts (full sync): close and reopen the file",
                CHANGE_WORK >> 20
            ));
        }
        let index = LineIndex::new(base);
        let (a, b) = (index.offset(range.start), index.offset(range.end));
        let (a, b) = (a.min(b), a.max(b));
        base.replace_range(a..b, &change.text);
    }
    Ok(text)
}

/// The most bytes the ranged changes of one message may move.
const CHANGE_WORK: usize = 64 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranged_changes_are_applied_in_order() {
        let change =
            |range: Option<(u32, u32, u32, u32)>, text: &str| lt::TextDocumentContentChangeEvent {
                range: range.map(|(l1, c1, l2, c2)| {
                    lt::Range::new(lt::Position::new(l1, c1), lt::Position::new(l2, c2))
                }),
                range_length: None,
                text: text.into(),
            };
        let applied = |old: Option<&str>, changes| changed_text(old, changes).ok().flatten();
        let old = "UPDATE=\"1\"\nCPU_MIN=\"1\"\n";
        let new = applied(
            Some(old),
            vec![
                change(Some((0, 8, 0, 9)), "2"),
                change(Some((1, 9, 1, 10)), "3"),
            ],
        );
        assert_eq!(new.as_deref(), Some("UPDATE=\"2\"\nCPU_MIN=\"3\"\n"));
        // Out of range or reversed: clamped, never a panic.
        let new = applied(Some(old), vec![change(Some((9, 9, 0, 0)), "x")]);
        assert_eq!(new.as_deref(), Some("x"));
        // A full text after a range wins; a range on nothing is dropped.
        let new = applied(
            None,
            vec![change(None, "a"), change(Some((0, 1, 0, 1)), "b")],
        );
        assert_eq!(new.as_deref(), Some("ab"));
        assert_eq!(applied(None, vec![change(Some((0, 0, 0, 0)), "b")]), None);
        assert_eq!(applied(Some(old), Vec::new()), None);
        // Issue 42: 20,000 changes that change nothing cost nothing; ones
        // that move more than the budget leave the document out of step.
        let big = "#".repeat(1 << 20);
        let none = vec![change(Some((0, 5, 0, 5)), ""); 20_000];
        assert_eq!(applied(Some(&big), none).map(|t| t.len()), None);
        let many = vec![change(Some((0, 5, 0, 5)), "x"); 20_000];
        assert!(changed_text(Some(&big), many).is_err());
    }

    fn body(v: serde_json::Value) -> io::Result<Frame> {
        Ok(Frame::Body(v.to_string().into_bytes()))
    }

    #[test]
    fn a_burst_of_changes_is_checked_once_for_its_last_text() {
        let (frames, inbox) = std::sync::mpsc::sync_channel(128);
        let uri = "file:///etc/cpuplugd.conf";
        let open = serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "cpuplugd", "version": 0,
            "text": "UPDATE=\"1\"\n"}}});
        let sent = [
            body(
                serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"capabilities": {}}}),
            ),
            body(open),
        ];
        for f in sent {
            assert!(frames.send(f).is_ok());
        }
        for v in 1..=50 {
            // The last text refers to a name no kernel has.
            let text = if v == 50 {
                "HOTPLUG=\"nosuchname > 1\"\n"
            } else {
                "UPDATE=\"1\"\n"
            };
            let change = serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
                "params": {"textDocument": {"uri": uri, "version": v},
                "contentChanges": [{"text": text}]}});
            assert!(frames.send(body(change)).is_ok());
        }
        drop(frames);
        let mut out = Vec::new();
        let root = tempfile::tempdir().expect("root");
        let mut server = Server {
            root: root.path(),
            out: &mut out,
            docs: Documents::default(),
            initialized: false,
            shutdown: false,
            changed: Vec::new(),
            live: Live::new(root.path().to_path_buf()),
            next_reading: None,
            refresh_hints: false,
            sent: 0,
        };
        // The channel ends after the burst (the stream ended without
        // exit): no check was made while frames were waiting.
        assert!(matches!(server.run(&inbox), Ok(SessionEnd::Abrupt)));
        // Idle now: one check, of the last text.
        server.check_changed().expect("written");
        drop(server);
        let text = String::from_utf8_lossy(&out);
        assert_eq!(text.matches("publishDiagnostics").count(), 1, "{text}");
        assert!(text.contains("nosuchname"), "{text}");
    }
}
