//! Files plugtop reads that an attacker (or a damaged disk) planted: a
//! FIFO where a file should be never blocks, `/dev/zero` is never read on
//! without end, whether named on the command line or found under a root.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::FakeRoot;

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let made = Command::new("mkfifo").arg(path).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo {}", path.display());
}

fn plugtop(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(args)
        .output()
        .expect("plugtop runs")
}

fn rules(dir: &Path) -> String {
    let path = dir.join("r.conf");
    std::fs::write(
        &path,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules");
    path.to_string_lossy().into_owned()
}

#[test]
fn a_recording_that_is_a_fifo_or_dev_zero_is_refused_at_once() {
    let dir = common::tempdir();
    let rules = rules(dir.path());
    let fifo = dir.path().join("incident.rec");
    mkfifo(&fifo);
    for replay in [fifo.to_string_lossy().into_owned(), "/dev/zero".into()] {
        for args in [
            vec!["eval", "-c", &rules, "--replay", &replay],
            vec!["whatif", "-c", &rules, "--replay", &replay],
            vec!["--batch", "--count", "1", "-c", &rules, "--replay", &replay],
        ] {
            let out = plugtop(&args);
            let err = crate::common::said(&out);
            assert!(!out.status.success(), "{args:?}");
            assert!(err.contains("not a regular file"), "{args:?}: {err}");
        }
    }
}

#[test]
fn a_scenario_that_is_a_fifo_or_dev_zero_is_refused_at_once() {
    let dir = common::tempdir();
    let rules = rules(dir.path());
    let fifo = dir.path().join("s.toml");
    mkfifo(&fifo);
    for scenario in [fifo.to_string_lossy().into_owned(), "/dev/zero".into()] {
        let out = plugtop(&["sim", &scenario, "-c", &rules, "--fast"]);
        let err = crate::common::said(&out);
        assert!(!out.status.success());
        assert!(err.contains("not a regular file"), "{err}");
    }
}

#[test]
fn cpuinfo_and_hostname_planted_under_the_root_are_read_bounded() {
    let root = FakeRoot::guest(2);
    let dir = common::tempdir();
    let rules = rules(dir.path());
    // A FIFO for cpuinfo (a plain open would wait for a writer forever)
    // and endless hostname and osrelease files: /dev/zero inside the root
    // where the test may make the device (links resolve inside the root),
    // else a sparse file of 4 GiB.
    mkfifo(&root.path().join("proc/cpuinfo"));
    std::fs::create_dir_all(root.path().join("proc/sys/kernel")).expect("dir");
    let zero = common::zero_device_in(root.path());
    for name in ["hostname", "osrelease"] {
        let at = root.path().join("proc/sys/kernel").join(name);
        if zero {
            std::os::unix::fs::symlink("/dev/zero", &at).expect("link");
        } else {
            std::fs::File::create(&at)
                .and_then(|f| f.set_len(4 << 30))
                .expect("sparse file");
        }
    }
    let root_s = root.path().to_string_lossy().into_owned();
    let out = plugtop(&[
        "--batch",
        "--count",
        "1",
        "--interval",
        "0.01",
        "--root",
        &root_s,
        "-c",
        &rules,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", crate::common::said(&out));
    assert!(
        text.contains("unknown"),
        "the host reads as unknown: {text}"
    );
}

#[test]
fn a_rule_file_that_is_a_fifo_or_dev_zero_is_refused_at_once_saying_why_once() {
    let dir = common::tempdir();
    let fifo = dir.path().join("rules.conf");
    mkfifo(&fifo);
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/scenarios/daytrader.toml"
    );
    let snapshots = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/series/oldkernel"
    );
    for file in [fifo.to_string_lossy().into_owned(), "/dev/zero".into()] {
        for args in [
            vec!["check", &file],
            vec!["eval", "-c", &file, "--count", "1"],
            vec!["sim", scenario, "-c", &file, "--fast"],
            vec!["whatif", "-c", &file, "--snapshots", snapshots],
            vec!["tune", scenario, "-c", &file],
        ] {
            let out = plugtop(&args);
            let err = crate::common::said(&out);
            assert!(!out.status.success(), "{args:?}");
            assert_eq!(
                err.matches("not a regular file").count(),
                1,
                "{args:?}: the reason, once: {err}"
            );
        }
    }
}

#[test]
fn a_kernel_file_named_as_input_is_refused_unread() {
    // Files on /proc and /sys are regular files, but reading some takes
    // their data away (/proc/kmsg); none is a recording, rule file,
    // scenario or journal.
    let dir = common::tempdir();
    let rules = rules(dir.path());
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/scenarios/daytrader.toml"
    );
    for kernel in [
        "/proc/self/status",
        "/proc/version",
        "/sys/devices/system/cpu/online",
    ] {
        for args in [
            vec!["eval", "-c", &rules, "--replay", kernel],
            vec!["check", kernel],
            vec!["sim", kernel, "-c", &rules, "--fast"],
            vec!["sim", scenario, "-c", kernel, "--fast"],
        ] {
            let out = plugtop(&args);
            let err = crate::common::said(&out);
            assert!(!out.status.success(), "{args:?}");
            assert!(err.contains("is a kernel file"), "{args:?}: {err}");
        }
    }
}
