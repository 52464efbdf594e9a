//! `plugtop train grade` on a class of 30 generated trainees: passing,
//! failing and hostile submissions (binary, 10 MB, a link to /etc/shadow,
//! a directory named like a rule file, an unreadable file, a file cpuplugd
//! refuses, not UTF-8) each graded with the reason, never a crash; tables
//! in text, CSV and JSON; the class's common mistakes.

use std::path::Path;

use crate::common;

use common::{plugtop, tempdir};

const COURSE: &str = "examples/courses/cpuplugd-basics.toml";
const DIR: &str = "examples/courses/cpuplugd-basics";

/// What trainee `i` handed in for the `loadavg` exercise and the
/// diagnosis; the reason a hostile one must fail with, if any.
fn submit(class: &Path, i: usize) -> Option<&'static str> {
    let me = class.join(format!("trainee-{i:02}"));
    std::fs::create_dir(&me).expect("mkdir");
    let conf = me.join("loadavg.conf");
    let answer = me.join("diagnose-flap.answer");
    let copy = |from: &str, to: &Path| {
        std::fs::copy(format!("{DIR}/{from}"), to).expect("copy");
    };
    std::fs::write(&answer, "HOTPLUG: ((1 - CP_Active) * onumcpus) < 0.3\n").expect("answer");
    match i {
        0 => {
            std::fs::write(&conf, [0u8, 1, 2, 0xff, 0].repeat(100)).expect("binary");
            Some("a binary file")
        }
        1 => {
            std::fs::write(&conf, vec![b'#'; 10 << 20]).expect("big");
            Some("larger than")
        }
        2 => {
            std::os::unix::fs::symlink("/etc/shadow", &conf).expect("ln");
            Some("a symbolic link")
        }
        3 => {
            std::fs::create_dir(&conf).expect("dir");
            Some("a directory")
        }
        4 => {
            std::fs::write(&conf, "HOTPLUG=\"(loadavg > \"\n").expect("refused");
            Some("cpuplugd refuses")
        }
        5 => {
            std::fs::write(&conf, b"UPDATE=\"1\"\nHOTPLUG=\"\xff\xfe > 1\"\n").expect("utf8");
            Some("cpuplugd refuses")
        }
        6 => None, // nothing handed in
        7 => {
            std::fs::write(&answer, "HOTUNPLUG: (CP_idle * onumcpus) > 0.8\n").expect("answer");
            copy("loadavg-reference.conf", &conf);
            None
        }
        8 => {
            std::fs::write(&answer, [0xffu8, 0, 1]).expect("answer");
            copy("loadavg-start.conf", &conf);
            None
        }
        i if i % 2 == 0 => {
            copy("loadavg-start.conf", &conf);
            None
        }
        _ => {
            copy("loadavg-reference.conf", &conf);
            None
        }
    }
}

#[test]
fn a_class_of_thirty_is_graded_hostile_submissions_fail_with_their_reason() {
    let class = tempdir();
    let reasons: Vec<Option<&str>> = (0..30).map(|i| submit(class.path(), i)).collect();
    // A stray file and a link to a directory are no trainees.
    std::fs::write(class.path().join("README"), "x").expect("write");
    std::os::unix::fs::symlink("/etc", class.path().join("etc")).expect("ln");
    let dir = class.path().to_str().expect("utf-8");

    let out = plugtop(&["train", "grade", COURSE, dir, "--format", "json"]);
    assert!(out.status.success(), "{}", crate::common::said(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(json["trainees"].as_array().map(Vec::len), Some(30));
    let table = |id: &str| {
        json["tables"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["id"] == id))
            .cloned()
            .expect("table")
    };
    let loadavg = table("loadavg");
    let rows = loadavg["rows"].as_array().expect("rows");
    for (i, reason) in reasons.iter().enumerate() {
        let row = &rows[i];
        assert_eq!(row["trainee"], format!("trainee-{i:02}"));
        let passed = row["passed"].as_bool().expect("passed");
        let why = row["reason"].as_str().expect("reason");
        match (i, reason) {
            (_, Some(said)) => {
                assert!(!passed, "{i}");
                assert!(why.contains(said), "{i}: {why}");
            }
            (6, None) => assert_eq!(why, "not submitted"),
            (7, None) => assert!(passed, "{i}: {why}"),
            (i, None) if i % 2 == 0 => {
                assert!(!passed, "{i}");
                assert!(
                    why.contains("unmet_cpu_seconds < 80: unmet_cpu_seconds was"),
                    "{i}: {why}"
                );
            }
            _ => assert!(passed, "{i}: {why}"),
        }
    }
    let diagnosis = table("diagnose-flap");
    let d = diagnosis["rows"].as_array().expect("rows");
    assert_eq!(d[0]["passed"], true);
    assert_eq!(d[7]["passed"], false);
    assert!(
        d[7]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("pointed at HOTUNPLUG"))
    );
    assert_eq!(d[8]["passed"], false);
    // Common mistakes: the start file's missed clause, counted.
    let missed = json["missed"].as_array().expect("missed");
    assert!(
        missed
            .iter()
            .any(|m| m["what"] == "loadavg: unmet_cpu_seconds < 80"
                && m["count"].as_u64() >= Some(9)),
        "{missed:?}"
    );
    let failures = json["failures"].as_array().expect("failures");
    assert!(
        failures
            .iter()
            .any(|m| m["what"] == "loadavg: cpuplugd refuses the file"),
        "{failures:?}"
    );
    // Trainees who handed nothing in for the other exercises are graded as
    // not submitted, not as a crash.
    assert_eq!(table("flapping")["rows"][0]["reason"], "not submitted");

    let text = plugtop(&["train", "grade", COURSE, dir]);
    let t = String::from_utf8_lossy(&text.stdout);
    assert!(text.status.success());
    assert!(
        t.contains("loadavg — Load average against real load"),
        "{t}"
    );
    assert!(t.contains("Common mistakes"), "{t}");
    assert!(
        t.contains("× missed loadavg: unmet_cpu_seconds < 80: unmet_cpu_seconds was"),
        "{t}"
    );
    // Who made each common mistake (new-user finding 16: "1 × lint
    // ignored-line" said nothing of who, nor in which exercise).
    let mistakes = &t[t.find("Common mistakes").expect("mistakes")..];
    assert!(mistakes.contains("(trainee-"), "{mistakes}");
    assert!(mistakes.contains("more)"), "{mistakes}");
    // Each trainee's totals, and no line past 80 columns.
    assert!(t.contains("\nTotals"), "{t}");
    assert!(
        t.contains("  trainee-09     2/8          2        2/2"),
        "{t}"
    );
    for line in t.lines() {
        assert!(line.chars().count() <= 80, "{line:?}");
    }

    let csv = plugtop(&["train", "grade", COURSE, dir, "--format", "csv"]);
    let c = String::from_utf8_lossy(&csv.stdout);
    assert!(csv.status.success());
    assert!(c.starts_with("exercise,trainee,passed,"), "{c}");
    assert_eq!(c.lines().filter(|l| l.starts_with("loadavg,")).count(), 30);
    assert_eq!(c.lines().filter(|l| l.starts_with("(total),")).count(), 30);
    // The goals' own fields are the value columns.
    let header = c.lines().next().unwrap_or_default();
    for field in [
        "unmet_cpu_seconds",
        "guest_to_working_set",
        "throughput_ratio",
    ] {
        assert!(header.contains(field), "{header}");
    }
}

#[test]
fn the_lint_that_fired_most_is_named() {
    let class = tempdir();
    for i in 0..3 {
        let me = class.path().join(format!("t{i}"));
        std::fs::create_dir(&me).expect("mkdir");
        std::fs::copy(
            format!("{DIR}/memkey-start.conf"),
            me.join("memory-keyword.conf"),
        )
        .expect("copy");
    }
    let out = plugtop(&[
        "train",
        "grade",
        COURSE,
        class.path().to_str().expect("utf-8"),
        "--format",
        "json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let lints = json["lints"].as_array().expect("lints");
    assert!(
        lints
            .iter()
            .any(|l| l["what"] == "memory-keyword: lagging-keyword"
                && l["count"] == 3
                && l["trainees"] == serde_json::json!(["t0", "t1", "t2"])),
        "{lints:?}"
    );
}

#[test]
fn an_unreadable_submission_fails_with_the_reason() {
    use std::os::unix::fs::PermissionsExt as _;
    let class = tempdir();
    let me = class.path().join("t");
    std::fs::create_dir(&me).expect("mkdir");
    let conf = me.join("loadavg.conf");
    std::fs::write(&conf, "UPDATE=\"1\"\n").expect("write");
    std::fs::set_permissions(&conf, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    if std::fs::read(&conf).is_ok() {
        // Root reads it anyway: nothing to test here.
        return;
    }
    let out = plugtop(&[
        "train",
        "grade",
        COURSE,
        class.path().to_str().expect("utf-8"),
        "--format",
        "csv",
    ]);
    let c = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(c.contains("cannot read it"), "{c}");
}

#[test]
fn a_fifo_submission_is_not_waited_on() {
    let class = tempdir();
    let me = class.path().join("t");
    std::fs::create_dir(&me).expect("mkdir");
    let fifo = me.join("loadavg.conf");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .expect("mkfifo");
    let out = plugtop(&[
        "train",
        "grade",
        COURSE,
        class.path().to_str().expect("utf-8"),
        "--format",
        "csv",
    ]);
    let c = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        c.lines()
            .any(|l| l.starts_with("loadavg,t,false,0,0,") && l.contains(",not a regular file,")),
        "{c}"
    );
}

#[test]
fn a_trainee_named_with_escapes_cannot_drive_the_terminal() {
    let class = tempdir();
    let me = class.path().join("evil\x1b]0;owned\x07\x1b[2J");
    std::fs::create_dir(&me).expect("mkdir");
    std::fs::write(me.join("loadavg.conf"), "HOTPLUG=\"\x1b[31m\"\n").expect("write");
    let out = plugtop(&[
        "train",
        "grade",
        COURSE,
        class.path().to_str().expect("utf-8"),
    ]);
    assert!(out.status.success());
    assert!(
        !out.stdout.contains(&0x1b),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("FAIL"));
    let dir = class.path().to_str().expect("utf-8");
    let csv = plugtop(&["train", "grade", COURSE, dir, "--format", "csv"]);
    assert!(!csv.stdout.contains(&0x1b));
    let json = plugtop(&["train", "grade", COURSE, dir, "--format", "json"]);
    assert!(!json.stdout.contains(&0x1b));
}

/// A diagnosis's answer that is not UTF-8 fails as such (not as a garbled
/// comparison), and a 200,000-character answer is echoed in the table only
/// in part: 30 such answers would make megabytes of table.
#[test]
fn an_answer_not_utf8_or_huge_fails_with_a_short_reason() {
    let class = tempdir();
    let me = class.path().join("latin1");
    std::fs::create_dir(&me).expect("mkdir");
    std::fs::write(
        me.join("diagnose-flap.answer"),
        b"HOTPLUG: loadavg \xe9 1\n",
    )
    .expect("answer");
    let me = class.path().join("verbose");
    std::fs::create_dir(&me).expect("mkdir");
    std::fs::write(
        me.join("diagnose-flap.answer"),
        format!("HOTPLUG: {}1{}\n", "(".repeat(100_000), ")".repeat(100_000)),
    )
    .expect("answer");
    let dir = class.path().to_str().expect("utf-8");
    let out = plugtop(&["train", "grade", COURSE, dir, "--format", "json"]);
    assert!(out.status.success(), "{}", crate::common::said(&out));
    assert!(out.stdout.len() < 100_000, "{} bytes", out.stdout.len());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = json["tables"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["id"] == "diagnose-flap"))
        .and_then(|t| t["rows"].as_array().cloned())
        .expect("rows");
    let why = |who: &str| {
        rows.iter()
            .find(|r| r["trainee"] == who)
            .and_then(|r| r["reason"].as_str().map(str::to_string))
            .expect("row")
    };
    assert!(why("latin1").contains("not UTF-8"), "{}", why("latin1"));
    let verbose = why("verbose");
    assert!(verbose.starts_with("pointed at HOTPLUG: ((("), "{verbose}");
    assert!(
        verbose.chars().count() <= 160,
        "{} chars",
        verbose.chars().count()
    );
    let text = plugtop(&["train", "grade", COURSE, dir]);
    assert!(text.stdout.len() < 100_000, "{} bytes", text.stdout.len());
    // Common mistakes count kinds of failure, not each one's particulars;
    // a wrong answer is counted whole (which comparison was taken for the
    // culprit), as echoed: bounded.
    let failures = json["failures"].as_array().expect("failures");
    let kinds: Vec<&str> = failures.iter().filter_map(|f| f["what"].as_str()).collect();
    assert!(kinds.contains(&"diagnose-flap: not UTF-8"), "{kinds:?}");
    assert!(
        kinds
            .iter()
            .any(|k| k.starts_with("diagnose-flap: pointed at HOTPLUG: (((")
                && k.chars().count() <= 200),
        "{kinds:?}"
    );
}

/// Rules whose variables expand to 131,072 terms are taken by cpuplugd but
/// cost seconds a held-out run: judged as failed at once, with the
/// reason, so one such submission cannot make a class's grading take
/// minutes.
#[test]
fn rules_that_expand_past_the_judged_terms_fail_at_once() {
    let class = tempdir();
    let me = class.path().join("doubler");
    std::fs::create_dir(&me).expect("mkdir");
    let mut s = String::from("UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\na0=\"loadavg\"\n");
    for i in 1..=16 {
        s.push_str(&format!("a{i}=\"a{}+a{}\"\n", i - 1, i - 1));
    }
    s.push_str("HOTPLUG=\"a16>1e9\"\nHOTUNPLUG=\"a16<0\"\n");
    std::fs::write(me.join("loadavg.conf"), s).expect("write");
    let dir = class.path().to_str().expect("utf-8");
    let out = plugtop(&["train", "grade", COURSE, dir, "--format", "json"]);
    assert!(out.status.success(), "{}", crate::common::said(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let row = json["tables"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["id"] == "loadavg"))
        .map(|t| t["rows"][0].clone())
        .expect("row");
    assert_eq!(row["passed"], false);
    let why = row["reason"].as_str().expect("reason");
    // Failed before any held-out run (how long that takes is for
    // scripts/train-grade-speed.sh to measure, not a test).
    assert!(why.contains("expand past 10000 terms"), "{why}");
}

/// A submission whose judging panics (injected: `PLUGTOP_FAULT=judge:1`
/// panics after a file's first held-out run) fails alone, with the
/// reason; the submissions graded on the same thread keep theirs, and the
/// table comes out.
#[test]
fn a_judging_that_panics_fails_that_submission_alone() {
    let class = tempdir();
    for (who, file) in [("a-runs", "loadavg-reference.conf"), ("b-binary", "")] {
        let me = class.path().join(who);
        std::fs::create_dir(&me).expect("mkdir");
        if file.is_empty() {
            std::fs::write(me.join("loadavg.conf"), [0u8, 1, 2]).expect("write");
        } else {
            std::fs::copy(format!("{DIR}/{file}"), me.join("loadavg.conf")).expect("copy");
        }
    }
    let dir = class.path().to_str().expect("utf-8");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args([
            "train",
            "grade",
            COURSE,
            dir,
            "--format",
            "json",
            "--threads",
            "1",
        ])
        .env("PLUGTOP_FAULT", "judge:1")
        .output()
        .expect("plugtop");
    assert!(out.status.success(), "{}", crate::common::said(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = json["tables"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["id"] == "loadavg"))
        .and_then(|t| t["rows"].as_array().cloned())
        .expect("rows");
    let why = |i: usize| rows[i]["reason"].as_str().unwrap_or_default().to_string();
    assert!(why(0).contains("internal error"), "{}", why(0));
    assert!(why(1).contains("a binary file"), "{}", why(1));
}

/// newuser51 #21: a file that matches no exercise (an id mistyped) was
/// ignored without a word. It is named on stderr, not graded; the tables
/// on stdout are as before.
#[test]
fn a_file_that_matches_no_exercise_is_named_on_stderr() {
    let class = tempdir();
    let me = class.path().join("carol smith");
    std::fs::create_dir(&me).expect("mkdir");
    std::fs::write(me.join("unknown-exercise.conf"), "UPDATE=\"1\"\n").expect("write");
    let dir = class.path().to_str().expect("utf-8");
    let out = plugtop(&["train", "grade", COURSE, dir]);
    let err = crate::common::said(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("carol smith/unknown-exercise.conf: matches no exercise of this course")
            && err.contains("not graded"),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("unknown-exercise"), "{stdout}");
    // newuser51 #21, plurals: one trainee is "1 trainee".
    assert!(stdout.contains(" — 1 trainee\n"), "{stdout}");
}

/// adv52 #9: hidden directories in the class directory (`.git`, `.hidden`)
/// are no trainees.
#[test]
fn hidden_directories_are_not_graded_as_trainees() {
    let class = tempdir();
    for d in ["alice", ".git", ".hidden"] {
        std::fs::create_dir(class.path().join(d)).expect("mkdir");
    }
    let dir = class.path().to_str().expect("utf-8");
    let out = plugtop(&["train", "grade", COURSE, dir]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains(" — 1 trainee\n"), "{stdout}");
    assert!(
        !stdout.contains(".git") && !stdout.contains(".hidden"),
        "{stdout}"
    );
}

#[test]
fn a_file_given_for_the_class_directory_is_named_for_what_it_is() {
    // The slip of handing one submission where the class is expected
    // (nu53 M13): said in words, not as "Not a directory (os error 20)".
    let out = plugtop(&[
        "train",
        "grade",
        COURSE,
        "examples/rules/oscillating-tight.conf",
    ]);
    let err = crate::common::said(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is a regular file, not a directory; give the class directory"),
        "{err}"
    );
    assert!(!err.contains("os error"), "{err}");
}
