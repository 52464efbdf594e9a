//! plugtop as a service: the shipped unit's keys (hardening that still
//! lets it write cpuN/online and cmm_pages, no endless restarts of a
//! refusal, the journal of changes kept across restarts), the refusal's
//! own exit status, the journal entries a run writes (read back as
//! native-protocol datagrams from a socket in a temporary directory), the
//! man page's SIGNALS, FILES and EXIT STATUS, and fish's completion of
//! the shell names. What needs systemd, lintian or rpmlint is checked by
//! scripts/package.sh instead.

use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::process::Command;

use crate::common::{FakeRoot, plugtop, tempdir};
use plugtop::logging::message_id;

const UNIT: &str = include_str!("../../examples/plugtop.service");

/// Every value of `key` in the unit, in order (a key may be repeated).
fn values(key: &str) -> Vec<&'static str> {
    UNIT.lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim())
        .collect()
}

fn one(key: &str) -> &'static str {
    let v = values(key);
    assert_eq!(v.len(), 1, "{key}: {v:?}");
    v[0]
}

#[test]
fn the_unit_is_hardened_but_can_still_write_cpus_and_the_pool() {
    assert_eq!(one("ProtectSystem"), "strict");
    assert_eq!(one("ProtectKernelTunables"), "yes");
    let writable: Vec<&str> = values("ReadWritePaths")
        .iter()
        .flat_map(|v| v.split_whitespace())
        .collect();
    // ProtectKernelTunables makes /sys and /proc/sys read-only: these
    // holes are what plugtop writes (cmm_pages only where CMM is loaded,
    // hence "-"), and the lock it shares with cpuplugd.
    for path in [
        "/sys/devices/system/cpu",
        "-/proc/sys/vm/cmm_pages",
        "/run/lock",
    ] {
        assert!(writable.contains(&path), "{path}: {writable:?}");
    }
    assert!(
        plugtop::control::lock::LOCK_FILE.starts_with("var/lock/"),
        "the lock is below /run/lock (var/lock links there)"
    );
    for (key, want) in [
        ("NoNewPrivileges", "yes"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("PrivateDevices", "yes"),
        ("SystemCallArchitectures", "native"),
        ("CapabilityBoundingSet", ""),
    ] {
        assert_eq!(one(key), want, "{key}");
    }
    let families: Vec<&str> = one("RestrictAddressFamilies").split(' ').collect();
    assert_eq!(families, ["AF_UNIX", "AF_INET", "AF_INET6"]);
    assert!(values("SystemCallFilter").contains(&"@system-service"));
}

#[test]
fn a_refusal_is_not_restarted_and_a_stop_lets_plugtop_restore() {
    let prevented: Vec<&str> = one("RestartPreventExitStatus").split(' ').collect();
    for code in [
        plugtop::daemon::REFUSED_EXIT,
        plugtop::daemon::REFUSED_OWN_EXIT,
    ] {
        assert!(
            prevented.contains(&code.to_string().as_str()),
            "{code}: {prevented:?}"
        );
    }
    // A crash is restarted: a panic's status and a signal's are not kept.
    for crash in [
        plugtop::control::guard::PANIC_EXIT.to_string(),
        "134".into(),
    ] {
        assert!(
            !prevented.contains(&crash.as_str()),
            "{crash}: {prevented:?}"
        );
    }
    assert_eq!(one("Restart"), "on-failure");
    assert!(!values("StartLimitBurst").is_empty(), "a start limit");
    // SIGTERM to plugtop itself, which puts the guest back.
    assert_eq!(one("KillMode"), "mixed");
    assert_eq!(one("ExecStartPre"), "-/usr/bin/plugtop restore");
}

#[test]
fn the_journal_of_changes_outlives_a_crash_until_the_next_start_restores() {
    let state = plugtop::control::restore_journal::default_path(Path::new("/"));
    assert_eq!(state, Path::new("/run/plugtop/state"));
    assert_eq!(one("RuntimeDirectory"), "plugtop");
    // Kept across stops and restarts (a restart after a crash restores
    // from it); /run goes at a reboot, with the guest's state.
    assert_eq!(one("RuntimeDirectoryPreserve"), "yes");
}

#[test]
fn options_come_from_an_environment_file_and_the_network_is_not_waited_for() {
    let files = values("EnvironmentFile");
    assert_eq!(files, ["-/etc/default/plugtop", "-/etc/sysconfig/plugtop"]);
    let start = one("ExecStart");
    assert!(start.starts_with("/usr/bin/plugtop run -f "), "{start}");
    assert!(start.contains("$PLUGTOP_OPTS") && start.contains("${PLUGTOP_CONFIG}"));
    let defaults = std::fs::read_to_string("packaging/plugtop.default").unwrap_or_default();
    assert!(defaults.contains("#PLUGTOP_OPTS="), "{defaults}");
    // Only a non-loopback listener needs the network (a drop-in the
    // unit's comment shows): a guest must not wait for it at boot.
    assert!(!values("After").iter().any(|v| v.contains("network-online")));
    assert!(UNIT.contains("#   After=network-online.target"));
}

fn guest() -> FakeRoot {
    let root = FakeRoot::guest(2);
    for i in 0..2 {
        let online = if i == 0 { "1\n" } else { "0\n" };
        root.write(&format!("sys/devices/system/cpu/cpu{i}/online"), online);
        root.write(&format!("sys/devices/system/cpu/cpu{i}/configure"), "1\n");
    }
    root.write("sys/devices/system/cpu/online", "0\n");
    root
}

fn rules(root: &FakeRoot, text: &str) -> String {
    let path = root.path().join("rules.conf");
    std::fs::write(&path, text).expect("rules");
    path.to_string_lossy().into_owned()
}

#[test]
fn a_refused_start_exits_1_as_cpuplugd_in_the_foreground_and_detached() {
    let root = guest();
    let bad = rules(&root, "UPDATE=\"1\"\nHOTPLUG=\"loadavg >= 1\"\n");
    for detached in [false, true] {
        let mut args = vec!["run", "-c", &bad, "--root"];
        let root_arg = root.path().to_string_lossy().into_owned();
        args.push(&root_arg);
        if !detached {
            args.push("-f");
        }
        let out = plugtop(&args);
        let err = crate::common::said(&out);
        assert_eq!(out.status.code(), Some(1), "detached {detached}: {err}");
        assert!(err.contains(">="), "says why: {err}");
    }
    // Bad options too, as cpuplugd (every other command says 2); help and
    // the version are no error.
    let out = plugtop(&["run", "-f", "--no-such-option"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(crate::common::said(&out).contains("--no-such-option"));
    assert_eq!(
        plugtop(&["eval", "--no-such-option"]).status.code(),
        Some(2)
    );
    assert_eq!(plugtop(&["run", "-v"]).status.code(), Some(0));
    let help = plugtop(&["run", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("1 refused to start"), "{help}");
    assert!(help.contains("78 refused a start cpuplugd"), "{help}");
}

/// The datagrams a run sent to the journal socket at `path`, decoded.
fn entries(socket: &UnixDatagram) -> Vec<Vec<(String, String)>> {
    socket.set_nonblocking(true).expect("nonblocking");
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    while let Ok(n) = socket.recv(&mut buf) {
        out.push(decode(&buf[..n]));
    }
    out
}

/// journald's native protocol: `KEY=value\n`, or `KEY\n`, a 64-bit
/// little-endian length, the value and `\n`.
fn decode(mut d: &[u8]) -> Vec<(String, String)> {
    let mut fields = Vec::new();
    while let Some(end) = d.iter().position(|&b| b == b'\n' || b == b'=') {
        let key = String::from_utf8_lossy(&d[..end]).into_owned();
        let rest = &d[end + 1..];
        let (value, next) = if d[end] == b'=' {
            let nl = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            (&rest[..nl], nl + 1)
        } else {
            let len = u64::from_le_bytes(rest[..8].try_into().expect("length")) as usize;
            (&rest[8..8 + len], 8 + len + 1)
        };
        fields.push((key, String::from_utf8_lossy(value).into_owned()));
        d = rest.get(next..).unwrap_or_default();
    }
    fields
}

fn field<'a>(entry: &'a [(String, String)], key: &str) -> Vec<&'a str> {
    entry
        .iter()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .collect()
}

fn with_id<'a>(all: &'a [Vec<(String, String)>], id: &str) -> Vec<&'a Vec<(String, String)>> {
    all.iter()
        .filter(|e| field(e, "MESSAGE_ID") == [id])
        .collect()
}

/// `plugtop run -f` as the unit runs it, its journal a socket here.
fn run_logging_to(socket: &Path, root: &FakeRoot, rules: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(["run", "-f", "--interval-ms", "20", "-c", rules, "--root"])
        .arg(root.path())
        .env("PLUGTOP_TEST_JOURNAL_SOCKET", socket)
        .output()
        .expect("run")
}

#[test]
fn under_the_unit_a_refusal_is_one_journal_entry_at_err_and_nothing_on_stderr() {
    let dir = tempdir();
    let path = dir.path().join("journal.socket");
    let socket = UnixDatagram::bind(&path).expect("bind");
    let root = guest();
    let bad = rules(&root, "UPDATE=\"1\"\nHOTPLUG=\"loadavg >= 1\"\n");
    let out = run_logging_to(&path, &root, &bad);
    assert_eq!(out.status.code(), Some(1));
    // stderr is the journal's stream under the unit: a line there would
    // be a second entry, at priority info.
    assert!(out.stderr.is_empty(), "{}", crate::common::said(&out));
    let all = entries(&socket);
    let refused = with_id(&all, message_id::REFUSED.as_str());
    assert_eq!(refused.len(), 1, "{all:?}");
    assert_eq!(field(refused[0], "PRIORITY"), ["3"]);
    assert_eq!(field(refused[0], "SYSLOG_IDENTIFIER"), ["plugtop"]);
    assert!(field(refused[0], "MESSAGE")[0].starts_with("refused to start: "));
}

#[test]
fn a_run_writes_one_entry_per_event_with_its_message_id() {
    let dir = tempdir();
    let path = dir.path().join("journal.socket");
    let socket = UnixDatagram::bind(&path).expect("bind");
    let root = guest();
    // Plugs cpu1, then stops on a rule cpuplugd would exit on.
    let rules = rules(
        &root,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"100\"\nCMM_INC=\"10\"\nMEMPLUG=\"meminfo.NoSuchField > 1\"\nMEMUNPLUG=\"0\"\n",
    );
    let out = run_logging_to(&path, &root, &rules);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let all = entries(&socket);
    for (id, priority) in [
        (message_id::STARTED, "5"),
        (message_id::PLUGGED, "5"),
        (message_id::FATAL, "3"),
        (message_id::RESTORED, "6"),
    ] {
        let found = with_id(&all, id.as_str());
        assert_eq!(found.len(), 1, "{id:?}: {all:?}");
        assert_eq!(field(found[0], "PRIORITY"), [priority], "{id:?}");
    }
    let plugged = with_id(&all, message_id::PLUGGED.as_str());
    assert_eq!(field(plugged[0], "PLUGTOP_CPU"), ["1"]);
    assert_eq!(field(plugged[0], "PLUGTOP_ACTION"), ["plug_cpu"]);
    // Every entry is one event: no message is a detail line of another.
    for e in &all {
        let message = field(e, "MESSAGE");
        assert_eq!(message.len(), 1, "{e:?}");
        assert!(!message[0].starts_with(' '), "{e:?}");
    }
}

#[test]
fn run_man_page_has_signals_files_and_exit_status_in_step_with_the_code() {
    let dir = tempdir();
    let man = dir.path().join("man");
    let o = plugtop(&["generate", "man", &man.to_string_lossy()]);
    assert!(o.status.success());
    let page = std::fs::read_to_string(man.join("man1/plugtop-run.1")).unwrap_or_default();
    let sections: Vec<&str> = page
        .lines()
        .filter_map(|l| l.strip_prefix(".SH "))
        .collect();
    let at = |s: &str| sections.iter().position(|x| *x == s);
    for s in ["SIGNALS", "FILES", "EXIT STATUS"] {
        assert!(at(s).is_some(), "{s}: {sections:?}");
    }
    assert!(at("OPTIONS") < at("SIGNALS"), "{sections:?}");
    let exit = page.split(".SH EXIT STATUS").nth(1).unwrap_or_default();
    for code in [
        plugtop::daemon::REFUSED_EXIT.to_string(),
        plugtop::daemon::REFUSED_OWN_EXIT.to_string(),
        plugtop::control::guard::PANIC_EXIT.to_string(),
    ] {
        assert!(exit.contains(&format!("\\fB{code}\\fR")), "{code}");
    }
    assert!(page.contains("/run/plugtop/state") && page.contains("SIGHUP"));
}

#[test]
fn fish_completes_the_shell_names_of_generate_completions() {
    let o = plugtop(&["generate", "completions", "fish"]);
    let script = String::from_utf8_lossy(&o.stdout).into_owned();
    let line = script
        .lines()
        .find(|l| l.contains("__fish_seen_subcommand_from completions;") && l.contains("-a \""))
        .unwrap_or_default();
    for shell in ["bash", "elvish", "fish", "powershell", "zsh"] {
        assert!(line.contains(shell), "{shell}: {line}");
    }
    // With fish at hand, ask it as a user's TAB would.
    let dir = tempdir();
    let file = dir.path().join("plugtop.fish");
    std::fs::write(&file, &o.stdout).expect("script");
    let Ok(asked) = Command::new("fish")
        .arg("--no-config")
        .arg("-c")
        .arg(format!(
            "source {}; complete -C 'plugtop generate completions '; echo SEPARATOR; complete -C 'plugtop generate completions zsh '",
            file.display()
        ))
        .output()
    else {
        return;
    };
    let said = String::from_utf8_lossy(&asked.stdout);
    let (first, after) = said.split_once("SEPARATOR\n").unwrap_or_default();
    let offered: Vec<&str> = first
        .lines()
        .map(|l| l.split('\t').next().unwrap_or(""))
        .collect();
    assert_eq!(
        offered,
        ["bash", "elvish", "fish", "powershell", "zsh"],
        "{said}"
    );
    assert!(!after.contains("bash"), "one shell only: {after}");
}
