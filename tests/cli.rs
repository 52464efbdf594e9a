//! The real binary, end to end, on the repository's fixture roots.

use std::process::{Command, Output};

fn plugtop(args: &[&str]) -> Output {
    match Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(args)
        .output()
    {
        Ok(o) => o,
        Err(e) => panic!("cannot run plugtop: {e}"),
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn observing_a_root_collects_history_then_decides() {
    let o = plugtop(&[
        "--root",
        "tests/fixtures/roots/oldkernel",
        "--count",
        "5",
        "--interval",
        "0",
    ]);
    let text = stdout(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("with built-in recommended-default.conf"),
        "{text}"
    );
    assert!(
        text.contains("collecting history (3 of 3 readings)"),
        "{text}"
    );
    let decided = text
        .lines()
        .filter(|l| l.starts_with("       3 ") || l.starts_with("       4 "))
        .count();
    assert_eq!(decided, 2, "{text}");
}

#[test]
fn a_new_kernel_gets_the_modern_built_in_rules() {
    let o = plugtop(&[
        "--root",
        "tests/fixtures/roots/newkernel",
        "--count",
        "1",
        "--interval",
        "0",
    ]);
    assert!(
        stdout(&o).contains("with built-in recommended-modern.conf"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn check_exit_status_follows_errors() {
    let bad = plugtop(&[
        "check",
        "examples/rules/memory-config-1.conf",
        "--root",
        "tests/fixtures/roots/oldkernel",
    ]);
    assert_eq!(bad.status.code(), Some(1));
    let good = plugtop(&[
        "check",
        "examples/rules/recommended-default.conf",
        "--root",
        "tests/fixtures/roots/oldkernel",
    ]);
    assert_eq!(good.status.code(), Some(0), "{}", stdout(&good));
    let missing = plugtop(&["check", "no/such/file.conf"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read no/such/file.conf"));
}

#[test]
fn eval_jsonl_refuses_what_cpuplugd_refuses() {
    let o = plugtop(&[
        "eval",
        "-c",
        "examples/rules/memory-config-1.conf",
        "--snapshots",
        "tests/fixtures/series/oldkernel",
        "--jsonl",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(
        text.starts_with("{\"config\":\"error\",\"message\":\"parsing error at cache"),
        "{text}"
    );
}

#[test]
fn eval_trace_shows_variables_and_short_circuits() {
    let o = plugtop(&[
        "eval",
        "-c",
        "examples/rules/recommended-default.conf",
        "--snapshots",
        "tests/fixtures/series/oldkernel",
        "--trace",
    ]);
    let text = stdout(&o);
    assert!(o.status.success());
    assert!(
        text.contains("HOTPLUG = false    ((1 - CP_ActiveAVG) * onumcpus) < 0.08"),
        "{text}"
    );
    assert!(text.contains("CP_ActiveAVG (line 12) = 0.4949"), "{text}");
    assert!(text.contains("cpustat.user[0] = 499593"), "{text}");
}
