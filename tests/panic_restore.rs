//! A panic hook's restore and the other threads' writes: once the hook has
//! stopped writes, no thread can plug a CPU behind its back. (A test binary
//! of its own: the stop is process-wide.)

mod common;

use std::time::Duration;

use common::FakeRoot;
use plugtop::kernel::actuator::{ActError, Actuator, RootActuator, stop_writes_for_restore};

#[test]
fn after_the_hook_stops_writes_only_its_restore_writes() {
    let root = FakeRoot::guest(1);
    for i in 0..3 {
        root.write(
            &format!("sys/devices/system/cpu/cpu{i}/online"),
            if i == 0 { "1\n" } else { "0\n" },
        );
        root.write(&format!("sys/devices/system/cpu/cpu{i}/configure"), "1\n");
    }
    let mut control = RootActuator::new(root.path()).expect("actuator");
    let mut failures = Vec::new();
    assert_eq!(control.plug(&mut failures).ok(), Some(1), "{failures:?}");
    let (guard, restorer) = stop_writes_for_restore(root.path(), Duration::from_secs(1));
    assert!(guard.is_some(), "no write was in flight");
    let mut restorer = restorer.expect("restorer");
    // The hook's own restore writes while it holds the writes back.
    let mut failures = Vec::new();
    restorer
        .set_online(&[0], &mut failures)
        .expect("the restore writes");
    let cpu1 = std::fs::read_to_string(root.path().join("sys/devices/system/cpu/cpu1/online"))
        .unwrap_or_default();
    assert_eq!(cpu1, "0\n", "{failures:?}");
    // When the hook is done, a plug still on its way is refused, before
    // anything is written.
    drop(guard);
    let mut failures = Vec::new();
    let refused = control.plug(&mut failures);
    assert!(
        matches!(refused, Err(ActError::Stopped))
            || failures.iter().any(|f| f.contains("no more writes")),
        "{refused:?} {failures:?}"
    );
    for i in 1..3 {
        let online = std::fs::read_to_string(
            root.path()
                .join(format!("sys/devices/system/cpu/cpu{i}/online")),
        )
        .unwrap_or_default();
        assert_eq!(online, "0\n", "cpu{i}: nothing plugged after the restore");
    }
}
