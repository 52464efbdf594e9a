//! Runs every conformance case through the real `plugtop` binary and
//! compares its JSON lines with what the real cpuplugd decided, with the
//! rules of `../shared/conformance/compare.py`.
//!
//! The public cases ship with the repository as `tests/data/conformance-cases.tar.zst`
//! (a fresh clone tests without `../shared`); when `../shared/conformance/cases`
//! exists, it is run too, since it may have grown.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

fn plugtop() -> &'static str {
    env!("CARGO_BIN_EXE_plugtop")
}

fn parse_lines(text: &str) -> Result<Vec<Value>, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map_err(|e| format!("output line {} is not JSON ({e}): {l}", i + 1))
        })
        .collect()
}

/// Exact comparison: a bool never equals a number, an integer never a float.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
        }
        (Value::Number(x), Value::Number(y)) => x.is_f64() == y.is_f64() && x == y,
        _ => a == b,
    }
}

/// How the decisions of a case are produced.
#[derive(Clone, Copy, PartialEq)]
enum Route {
    /// `eval --snapshots`.
    Snapshots,
    /// `record --snapshots` into a recording, then `eval --replay`.
    Recording,
}

/// `None` when the case passes, else why not.
fn check_case(dir: &Path, route: Route) -> Option<String> {
    let expected = match fs::read_to_string(dir.join("expected.jsonl")) {
        Ok(t) => t,
        Err(e) => return Some(format!("cannot read expected.jsonl: {e}")),
    };
    let expected = match parse_lines(&expected) {
        Ok(v) => v,
        Err(e) => return Some(format!("bad expected.jsonl: {e}")),
    };
    let mut command = Command::new(plugtop());
    command
        .arg("eval")
        .arg("-c")
        .arg(dir.join("cpuplugd.conf"))
        .arg("--jsonl");
    let _keep = match route {
        Route::Snapshots => {
            command.arg("--snapshots").arg(dir.join("snapshots"));
            None
        }
        Route::Recording => {
            let tmp = match tempfile::tempdir() {
                Ok(t) => t,
                Err(e) => return Some(format!("no temporary directory: {e}")),
            };
            let rec = tmp.path().join("case.rec");
            let made = Command::new(plugtop())
                .arg("record")
                .arg("--snapshots")
                .arg(dir.join("snapshots"))
                .arg("-o")
                .arg(&rec)
                .output();
            if !made.as_ref().is_ok_and(|o| o.status.success()) {
                return Some(format!("recording failed: {made:?}"));
            }
            command.arg("--replay").arg(&rec);
            Some(tmp)
        }
    };
    let output = match command.output() {
        Ok(o) => o,
        Err(e) => return Some(format!("cannot run plugtop: {e}")),
    };
    let ok_exit = output.status.success();
    let got = match parse_lines(&String::from_utf8_lossy(&output.stdout)) {
        Ok(v) => v,
        Err(e) => return Some(e),
    };
    // An empty expectation would pass anything.
    let (Some(head), Some(last)) = (expected.first(), expected.last()) else {
        return Some("expected.jsonl is empty".to_string());
    };
    if head.get("config").and_then(Value::as_str) == Some("error") {
        return ok_exit
            .then(|| "expected a configuration error (non-zero exit), got exit 0".to_string());
    }
    if let Some(k) = last
        .get("fatal")
        .and(last.get("snapshot"))
        .and_then(Value::as_u64)
    {
        let body = &expected[..expected.len() - 1];
        for (i, g) in got.iter().enumerate() {
            if g.get("fatal").is_some() {
                let s = g.get("snapshot").and_then(Value::as_u64);
                return match s {
                    Some(s) if s <= k => None,
                    _ => Some(format!(
                        "line {}: fatal at {s:?}, expected at or before {k}",
                        i + 1
                    )),
                };
            }
            match body.get(i) {
                None => return Some(format!("line {}: expected fatal at {k}, got {g}", i + 1)),
                Some(e) if !same(e, g) => {
                    return Some(format!("line {}: expected {e}, got {g}", i + 1));
                }
                Some(_) => {}
            }
        }
        return ok_exit.then(|| format!("expected fatal at snapshot {k}, command exited 0"));
    }
    if !ok_exit {
        return Some(format!(
            "exit {:?}; stderr: {}",
            output.status.code(),
            crate::common::said(&output)
        ));
    }
    for i in 0..expected.len().max(got.len()) {
        match (expected.get(i), got.get(i)) {
            (Some(e), Some(g)) if !same(e, g) => {
                return Some(format!("line {}: expected {e}, got {g}", i + 1));
            }
            (Some(e), None) => return Some(format!("line {}: missing, expected {e}", i + 1)),
            (None, Some(g)) => return Some(format!("line {}: unexpected extra line {g}", i + 1)),
            _ => {}
        }
    }
    None
}

/// The case directories below `cases` (those with an expected output),
/// sorted.
fn case_dirs(cases: &Path) -> Vec<PathBuf> {
    let mut names: Vec<PathBuf> = fs::read_dir(cases)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.join("expected.jsonl").is_file())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Runs every case of `names` by `route`; what failed, and why.
fn run_cases(names: &[PathBuf], route: Route) -> Vec<String> {
    let mut failures = Vec::new();
    for dir in names {
        if let Some(why) = check_case(dir, route) {
            failures.push(format!("FAIL {}: {why}", dir.display()));
        }
    }
    failures
}

/// The bundled corpus's cases, unpacked once into the test build's scratch
/// directory (`CARGO_TARGET_TMPDIR`) under the archive's checksum and kept
/// there: creating its 8,862 files takes seconds, which every test that
/// reads them, and every run, would otherwise repeat.
fn bundled_cases() -> &'static Path {
    static CASES: OnceLock<PathBuf> = OnceLock::new();
    CASES.get_or_init(|| {
        let archive =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance-cases.tar.zst");
        let bytes = fs::read(&archive).expect("bundled corpus");
        let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let dir = scratch.join(format!("conformance-{:08x}", crc32fast::hash(&bytes)));
        if !dir.is_dir() {
            // Unpacked beside it, then renamed in one step: a directory
            // under the final name is always complete.
            let staging = tempfile::tempdir_in(scratch).expect("staging directory");
            let decoder =
                ruzstd::decoding::StreamingDecoder::new(bytes.as_slice()).expect("zstd stream");
            tar::Archive::new(decoder)
                .unpack(staging.path().join("corpus"))
                .expect("unpack corpus");
            // Another test process may have won the race: its copy is as good.
            let _ = fs::rename(staging.path().join("corpus"), &dir);
        }
        dir.join("cases")
    })
}

fn bundled(route: Route) {
    let names = case_dirs(bundled_cases());
    let count = names.len();
    assert!(count >= 91, "only {count} cases in the bundled corpus");
    let failures = run_cases(&names, route);
    assert!(
        failures.is_empty(),
        "{} of {count} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every file below `dir` (relative path and bytes), sorted by path.
fn files_below(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d).expect("case directory").flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let bytes = fs::read(&path).expect("case file");
                let rel = path.strip_prefix(dir).unwrap_or(&path).to_path_buf();
                out.push((rel, bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn bundled_conformance_cases_all_pass() {
    bundled(Route::Snapshots);
}

#[test]
fn bundled_conformance_cases_all_pass_through_a_recording() {
    bundled(Route::Recording);
}

/// The shared corpus (`../shared/conformance`) where it is checked out: the
/// cases that differ from the bundled copy, file for file, or are not in
/// it (the bundled ones ran above, both ways).
#[test]
fn shared_conformance_cases_all_pass_when_present() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/cases");
    if !shared.is_dir() {
        eprintln!("{} not found; only the bundled cases ran", shared.display());
        return;
    }
    let all = case_dirs(&shared);
    assert!(!all.is_empty(), "no cases found in {}", shared.display());
    let bundled = bundled_cases();
    let differing: Vec<PathBuf> = all
        .iter()
        .filter(|case| {
            let twin = bundled.join(case.file_name().unwrap_or_default());
            !twin.is_dir() || files_below(case) != files_below(&twin)
        })
        .cloned()
        .collect();
    eprintln!(
        "{} of {} shared cases differ from the bundled copy",
        differing.len(),
        all.len()
    );
    let failures = run_cases(&differing, Route::Snapshots);
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        differing.len(),
        failures.join("\n")
    );
}
