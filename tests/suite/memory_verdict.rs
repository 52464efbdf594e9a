//! One memory-group verdict for every front end: on a root whose
//! /proc/cpuinfo says `version = 00` (an LPAR, a KVM guest, QEMU's TCG),
//! cpuplugd turns the memory group off, and so do `plugtop run`, `eval
//! --root`, `check --root`, the screen and line mode, all with the same
//! reason (`rules::ruleset::memory_verdict`).

use crate::common::{self, FakeRoot};
use crate::tui_views::screen;

use plugtop::rules::MemoryOff;

/// The words every front end gives.
const REASON: &str = "memory group off: not a z/VM guest (no `version = FF` in /proc/cpuinfo)";

/// Rules whose memory group is complete and would grow the pool every
/// interval (so a front end that kept it on would say so).
const MEMORY_RULES: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"10000\"\nCMM_INC=\"meminfo.MemFree / 100\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"meminfo.MemFree > 1\"\n";

/// A guest as QEMU's TCG shows it: s390x, `version = 00`, with CMM.
fn not_zvm() -> (FakeRoot, String) {
    let root = FakeRoot::guest(2);
    root.write(
        "proc/cpuinfo",
        "vendor_id       : IBM/S390\n# processors    : 2\nprocessor 0: version = 00,  identification = 000000,  machine = 3906\nprocessor 1: version = 00,  identification = 000001,  machine = 3906\n",
    );
    let rules = root.path().join("rules.conf");
    std::fs::write(&rules, MEMORY_RULES).expect("rules");
    let rules = rules.to_string_lossy().into_owned();
    (root, rules)
}

fn text(o: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        crate::common::said(o),
    )
}

#[test]
fn the_verdict_is_decided_from_the_root_s_cpuinfo() {
    let (root, rules) = not_zvm();
    let facts = plugtop::kernel::root::RootReader::new().facts(root.path());
    assert_eq!(facts.zvm_guest, Some(false));
    let file = plugtop::rules::SourceFile::new("r.conf", MEMORY_RULES.as_bytes().to_vec());
    let loaded = plugtop::rules::load(&file, &facts).rules;
    assert_eq!(loaded.mem_off, Some(MemoryOff::NotZvm));
    assert!(!loaded.mem_enabled);
    assert!(
        loaded
            .memory_off_line()
            .is_some_and(|l| l.starts_with(REASON)),
        "{:?}",
        loaded.memory_off_line()
    );
    // The same guest as z/VM shows it: on.
    root.write(
        "proc/cpuinfo",
        &plugtop::sim::published_root::zvm_cpuinfo(2),
    );
    let facts = plugtop::kernel::root::RootReader::new().facts(root.path());
    assert_eq!(facts.zvm_guest, Some(true));
    assert!(plugtop::rules::load(&file, &facts).rules.mem_enabled);
    drop(rules);
}

#[test]
fn eval_on_the_root_keeps_the_memory_group_off_and_says_why() {
    let (root, rules) = not_zvm();
    let r = root.path().to_string_lossy().into_owned();
    let o = common::plugtop(&[
        "eval", "-c", &rules, "--root", &r, "--count", "3", "--jsonl",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let header = out.lines().next().unwrap_or_default();
    assert!(header.contains("\"mem_enabled\":false"), "{header}");
    assert!(
        !out.contains("\"action\":\"grow\""),
        "no pool change: {out}"
    );
    assert!(err.contains(REASON), "{err}");
    let o = common::plugtop(&["eval", "-c", &rules, "--root", &r, "--count", "2"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains("memory group: off: not a z/VM guest (no `version = FF`"),
        "{out}"
    );
    let pool = std::fs::read_to_string(root.path().join("proc/sys/vm/cmm_pages"));
    assert_eq!(pool.ok().as_deref(), Some("0\n"), "eval writes nothing");
}

#[test]
fn check_on_the_root_says_the_memory_group_is_off_and_why() {
    let (root, rules) = not_zvm();
    let r = root.path().to_string_lossy().into_owned();
    let o = common::plugtop(&["check", &rules, "--root", &r, "--wide"]);
    let (out, err) = text(&o);
    assert!(
        out.contains("memory group off, history depth"),
        "{out}{err}"
    );
    assert!(out.contains(REASON), "{out}{err}");
    assert!(
        out.contains("the memory group is off, so the memory rules are ignored: not a z/VM guest"),
        "{out}{err}"
    );
}

#[test]
fn the_screen_and_line_mode_on_the_root_say_the_memory_group_is_off_and_why() {
    let (root, rules) = not_zvm();
    let options = plugtop::tui::options::Options {
        rules: Some(rules.clone().into()),
        ..plugtop::tui::options::Options::observing(root.path())
    };
    let (mut local, mut source) = match plugtop::tui::run::prepare(&options) {
        Ok(prepared) => prepared,
        Err(e) => panic!("{e}"),
    };
    for _ in 0..3 {
        match source.next_sample() {
            Some(Ok(s)) => local.ingest(s),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(local.app().rules().mem_off, Some(MemoryOff::NotZvm));
    let shown = screen(&local, 160, 48);
    assert!(
        shown.contains("MEM OFF: not z/VM"),
        "the header says why: {shown}"
    );
    assert!(
        shown.contains("memory group off: not a z/VM guest"),
        "and the log: {shown}"
    );
    assert!(!shown.contains("would set cmm_pages"), "{shown}");
    let narrow = screen(&local, 80, 24);
    assert!(narrow.contains("MEM OFF"), "{narrow}");

    let r = root.path().to_string_lossy().into_owned();
    let o = common::plugtop(&["-c", &rules, "--root", &r, "--batch", "--count", "2"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains(REASON), "{out}");
    assert!(!out.contains("cmm_pages 0 ->"), "{out}");
}

/// Issue 45: `check` promised that cpuplugd would exit on errors in the
/// memory rules of a guest whose memory group is off; those rules are never
/// evaluated there, so the errors are warnings saying why. The same file on
/// a z/VM guest still gets its errors.
#[test]
fn errors_in_a_group_that_is_off_are_warnings_that_say_so() {
    let (root, _) = not_zvm();
    let rules = root.path().join("broken-memory.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 150\"\n\
         CMM_MIN=\"0\"\nCMM_MAX=\"1000\"\nCMM_INC=\"10\"\nMEMPLUG=\"vmstat.nosuch > 1\"\nMEMUNPLUG=\"(1 < 2) * 3\"\n",
    )
    .expect("rules");
    let rules = rules.to_string_lossy().into_owned();
    let root_s = root.path().to_string_lossy().into_owned();
    let o = common::plugtop(&["check", &rules, "--root", &root_s, "--wide"]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    // The two, and the one that says the group is off.
    assert!(out.contains("0 errors, 3 warnings"), "{out}");
    assert_eq!(
        out.matches("never evaluated on this kernel: memory group off")
            .count(),
        2,
        "{out}"
    );
    assert!(!out.contains("then exit"), "{out}");
    root.write(
        "proc/cpuinfo",
        &plugtop::sim::published_root::zvm_cpuinfo(2),
    );
    let o = common::plugtop(&["check", &rules, "--root", &root_s, "--wide"]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("2 errors"), "{out}");
}

/// Issue 45 (a new user's finding): the same memory line got an error in
/// a file refused elsewhere and a warning in a file that loads. What the
/// machine decides (not a z/VM guest) holds whatever else is wrong: the
/// line is a warning that says why, and the group-off warning is there.
#[test]
fn a_refusal_elsewhere_does_not_change_a_group_off_finding() {
    let (root, _) = not_zvm();
    let rules = root.path().join("refused-elsewhere.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"idel < 10\"\nHOTUNPLUG=\"idle > 150\"\n\
         CMM_MIN=\"0\"\nCMM_MAX=\"1000\"\nCMM_INC=\"10\"\nMEMPLUG=\"vmstat.nosuch > 1\"\nMEMUNPLUG=\"0\"\n",
    )
    .expect("rules");
    let rules = rules.to_string_lossy().into_owned();
    let root_s = root.path().to_string_lossy().into_owned();
    let o = common::plugtop(&["check", &rules, "--root", &root_s, "--wide"]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("1 error"),
        "only the refusal is an error: {out}"
    );
    assert!(
        out.contains("never evaluated on this kernel: memory group off"),
        "{out}"
    );
    assert!(out.contains("the memory group is off"), "{out}");
}
