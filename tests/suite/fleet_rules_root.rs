//! The drift diff reads two guests' rule files on this machine from paths
//! the guests' labels give: untrusted. Under `--rules-root` a path resolves
//! as in a chroot there (no `..`, no link leads out, an instance of `..`
//! included); a FIFO or a device is refused at once, never waited on
//! (the diff is read on the screen's thread: a wait would freeze it).

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use plugtop::fleet::app::{FleetAction, FleetApp};
use plugtop::fleet::model::{Fleet, FleetGuest, Health};

fn guest(instance: &str, file: &str, crc: &str) -> FleetGuest {
    FleetGuest {
        job: "plugtop".into(),
        instance: instance.into(),
        last_reading: Some(100.0),
        rules_file: Some(file.into()),
        rules_crc: Some(crc.into()),
        ..FleetGuest::default()
    }
}

/// The drift diff of two groups (the common file of `a`, the odd one of
/// `b`) as the app has it, or the test fails if it takes over 5 s.
fn diff_of(root: Option<&Path>, a: FleetGuest, b: FleetGuest) -> Result<String, String> {
    let mut common = a.clone();
    common.instance.push_str("-twin");
    let fleet = Fleet {
        guests: vec![a, common, b],
        at: 100.0,
        health: Health {
            queries: 18,
            ..Health::default()
        },
    };
    let root = root.map(Path::to_path_buf);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut app = FleetApp::new("http://p", 3600.0, 60.0);
        app.rules_root = root;
        app.on_fleet(fleet, 100.0);
        app.update(FleetAction::Drift);
        app.update(FleetAction::Down);
        app.update(FleetAction::Diff);
        let shown = match app.diff {
            Some(Ok(lines)) => Ok(format!("{lines:?}")),
            Some(Err(why)) => Err(why),
            None => Err("no diff asked".into()),
        };
        let _ = tx.send(shown);
    });
    rx.recv_timeout(Duration::from_secs(5))
        .expect("the diff answers at once: the screen's thread never waits on a file")
}

/// A root with a guest's ordinary file, and a secret beside (outside) it.
fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let top = tempfile::tempdir().expect("temporary directory");
    let root = top.path().join("root");
    std::fs::create_dir_all(root.join("g1/etc")).expect("directory");
    std::fs::write(root.join("g1/etc/cpuplugd.conf"), "UPDATE=\"1\"\n").expect("file");
    std::fs::create_dir_all(top.path().join("outside")).expect("directory");
    std::fs::write(top.path().join("outside/secret"), "SECRET=\"1\"\n").expect("secret");
    (top, root)
}

#[test]
fn a_path_label_that_climbs_out_of_the_rules_root_stays_inside() {
    let (_top, root) = setup();
    std::fs::create_dir_all(root.join("g2")).expect("directory");
    // root/g2/../../outside/secret is the secret, were `..` followed.
    let d = diff_of(
        Some(&root),
        guest("g1", "/etc/cpuplugd.conf", "aaaa"),
        guest("g2", "../../outside/secret", "bbbb"),
    );
    assert!(!format!("{d:?}").contains("SECRET"), "{d:?}");
}

#[test]
fn an_instance_of_dots_does_not_climb_out_of_the_rules_root() {
    let (top, root) = setup();
    // root/../outside/secret is the secret, if `..` were a directory.
    let d = diff_of(
        Some(&root),
        guest("g1", "/etc/cpuplugd.conf", "aaaa"),
        guest("..", "/outside/secret", "bbbb"),
    );
    assert!(!format!("{d:?}").contains("SECRET"), "{d:?}");
    drop(top);
}

#[test]
fn a_link_in_the_rules_root_leads_where_it_would_in_a_chroot() {
    let (top, root) = setup();
    std::fs::create_dir_all(root.join("g2/etc")).expect("directory");
    std::os::unix::fs::symlink(
        top.path().join("outside/secret"),
        root.join("g2/etc/cpuplugd.conf"),
    )
    .expect("link");
    std::os::unix::fs::symlink("../../..", root.join("g2/up")).expect("link");
    for file in ["/etc/cpuplugd.conf", "/up/outside/secret"] {
        let d = diff_of(
            Some(&root),
            guest("g1", "/etc/cpuplugd.conf", "aaaa"),
            guest("g2", file, "bbbb"),
        );
        assert!(!format!("{d:?}").contains("SECRET"), "{file}: {d:?}");
    }
}

#[test]
fn a_fifo_for_a_rule_file_is_refused_not_waited_on() {
    let (_top, root) = setup();
    std::fs::create_dir_all(root.join("g2/etc")).expect("directory");
    let fifo = root.join("g2/etc/cpuplugd.conf");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let d = diff_of(
        Some(&root),
        guest("g1", "/etc/cpuplugd.conf", "aaaa"),
        guest("g2", "/etc/cpuplugd.conf", "bbbb"),
    );
    assert!(d.is_err(), "{d:?}");
    // Without --rules-root nothing is read, not even a regular file.
    let d = diff_of(
        None,
        guest(
            "g1",
            &root.join("g1/etc/cpuplugd.conf").to_string_lossy(),
            "aaaa",
        ),
        guest("g2", &fifo.to_string_lossy(), "bbbb"),
    );
    assert!(d.is_err(), "{d:?}");
}

#[test]
fn the_files_of_two_guests_under_the_rules_root_still_diff() {
    let (_top, root) = setup();
    std::fs::create_dir_all(root.join("g2/etc")).expect("directory");
    std::fs::write(root.join("g2/etc/cpuplugd.conf"), "UPDATE=\"2\"\n").expect("file");
    let d = diff_of(
        Some(&root),
        guest("g1", "/etc/cpuplugd.conf", "aaaa"),
        guest("g2", "etc/cpuplugd.conf", "bbbb"),
    )
    .expect("a diff");
    assert!(d.contains("Removed(\"UPDATE=\\\"1\\\"\")"), "{d}");
    assert!(d.contains("Added(\"UPDATE=\\\"2\\\"\")"), "{d}");
}
