//! An error reaches the user with each cause said once, in order: the
//! message of each layer, then its cause after ": " (`error_chain::text`).
//! No layer repeats its cause in its own message, and no cause is left
//! out because its text happens to appear earlier in the line.

use crate::common::{plugtop, tempdir};

fn stderr(o: &std::process::Output) -> String {
    crate::common::said(o)
}

const ENOENT: &str = "no such file or directory";

/// A rule file cpuplugd would load, in `dir`; its path.
fn rules_in(dir: &std::path::Path) -> String {
    let rules = dir.join("r.conf");
    let text = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"2\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n";
    std::fs::write(&rules, text).expect("rules");
    rules.to_str().expect("utf-8").to_string()
}

/// Three parts: the command's context, the source's error, the system's.
#[test]
fn a_two_level_chain_says_each_cause_once() {
    let dir = tempdir();
    let rules = rules_in(dir.path());
    let missing = dir.path().join("snapshots");
    let o = plugtop(&[
        "eval",
        "-c",
        &rules,
        "--snapshots",
        missing.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let m = missing.display();
    assert_eq!(
        stderr(&o),
        format!("plugtop: cannot read snapshots in {m}: {m} open failed: {ENOENT}\n")
    );
    assert_eq!(stderr(&o).matches("no such file").count(), 1);
}

/// `plugtop run` says its refusal itself (not through `main`): the cause
/// is there once.
#[test]
fn a_refusal_of_run_says_its_cause_once() {
    let dir = tempdir();
    let rules = rules_in(dir.path());
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("proc")).expect("proc");
    std::fs::create_dir_all(root.join("sys")).expect("sys");
    let o = plugtop(&[
        "run",
        "-f",
        "-c",
        &rules,
        "--root",
        root.to_str().expect("utf-8"),
        "--mode",
        "observe",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "plugtop: cannot open {}: {ENOENT}\n",
            root.join("proc/cpuinfo").display()
        )
    );
}

/// A rule file named like the system's error: the error is still said
/// after the name (a filter of causes already "in the text" hid it).
#[test]
fn a_cause_whose_text_is_already_in_the_message_is_still_said() {
    let dir = tempdir();
    let missing = dir.path().join(ENOENT);
    let o = plugtop(&["check", missing.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!("plugtop: cannot read {}: {ENOENT}\n", missing.display())
    );
}

/// nu54 F5: a system error is said in words, never as Rust's "(os
/// error 2)": a missing rule file, a missing class directory, and a root
/// without the present-CPUs file, which names the file where it was
/// looked for and the root as the likelier culprit than the rule.
#[test]
fn system_errors_are_said_in_words_and_name_the_path_opened() {
    let dir = tempdir();
    let missing = dir.path().join("nonexist.conf");
    let o = plugtop(&["check", missing.to_str().expect("utf-8")]);
    let m = missing.display();
    assert_eq!(
        stderr(&o),
        format!("plugtop: cannot read {m}: no such file or directory\n")
    );
    let class = dir.path().join("missingdir");
    let o = plugtop(&[
        "train",
        "grade",
        "examples/courses/cpuplugd-basics.toml",
        class.to_str().expect("utf-8"),
    ]);
    assert!(
        stderr(&o).contains(&format!(
            "cannot read the class directory {}: no such file or directory",
            class.display()
        )),
        "{}",
        stderr(&o)
    );
    let root = dir.path().join("empty");
    std::fs::create_dir(&root).expect("root");
    let rules = dir.path().join("all.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules");
    let o = plugtop(&[
        "run",
        "-f",
        "-c",
        rules.to_str().expect("utf-8"),
        "--root",
        root.to_str().expect("utf-8"),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let r = root.display();
    assert!(
        err.contains(&format!(
            "{r}/sys/devices/system/cpu/present cannot be read: no such file or directory (is {r} a guest's root?"
        )),
        "{err}"
    );
    assert!(!err.contains("os error"), "{err}");
}
