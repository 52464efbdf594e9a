//! The simulated guest as a root directory: its /proc and /sys files are
//! rewritten every simulated second, and whatever another program writes to
//! `cpuN/online` or `cmm_pages` is applied to the model. So `plugtop run
//! --root DIR`, a chrooted cpuplugd or a script can drive the simulator.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::Guest;
use crate::kernel::recording::export::write_root;
use crate::kernel::root::paths;

/// Files that change on their own; replaced atomically (write, then rename)
/// so a reader never sees half a file.
const MOVING: [&str; 5] = [
    paths::STAT,
    paths::LOADAVG,
    paths::MEMINFO,
    paths::VMSTAT,
    paths::ONLINE,
];

/// Writes the whole guest below `root` (the controls included), with the
/// /proc/cpuinfo and /proc/sysinfo of a z/VM guest, as cpuplugd expects.
pub fn publish_all(guest: &Guest, root: &Path) -> std::io::Result<()> {
    write_root(root, &guest.sample())?;
    let cpus = guest.scenario().cpus;
    let name = guest.scenario().name.to_uppercase();
    fs::write(root.join("proc/cpuinfo"), zvm_cpuinfo(cpus))?;
    fs::write(root.join("proc/sysinfo"), zvm_sysinfo(&name, cpus))?;
    fs::create_dir_all(root.join("proc/sys/kernel"))?;
    fs::write(
        root.join("proc/sys/kernel/hostname"),
        format!("{}\n", guest.scenario().name.to_lowercase()),
    )
}

/// /proc/sysinfo as a z/VM guest named `name` (at most 8 characters, as
/// z/VM user IDs are) with `cpus` configured CPUs shows it.
pub fn zvm_sysinfo(name: &str, cpus: u32) -> String {
    format!(
        "Manufacturer:         IBM\nType:                 8561\nLPAR Name:            SIMLPAR\nLPAR CPUs Configured: 16\n\nVM00 Name:            {name:.8}\nVM00 Control Program: z/VM    7.3.0\nVM00 CPUs Total:      {cpus}\nVM00 CPUs Configured: {cpus}\nVM00 CPUs Standby:    0\n"
    )
}

/// /proc/cpuinfo as an s390x z/VM guest with `cpus` CPUs shows it.
pub fn zvm_cpuinfo(cpus: u32) -> String {
    let mut text = format!(
        "vendor_id       : IBM/S390\n# processors    : {cpus}\nbogomips per cpu: 3033.00\n"
    );
    for i in 0..cpus {
        text.push_str(&format!(
            "processor {i}: version = FF,  identification = 0ABCDE,  machine = 8561\n"
        ));
    }
    text
}

/// Rewrites the moving files below `root`, through `root/.staging`.
pub fn publish(guest: &Guest, root: &Path) -> std::io::Result<()> {
    let staging = root.join(".staging");
    write_root(&staging, &guest.sample())?;
    for rel in MOVING {
        fs::rename(staging.join(rel), root.join(rel))?;
    }
    Ok(())
}

/// Applies what someone wrote to the controls below `root`; returns what
/// changed, for the log.
pub fn take_writes(guest: &mut Guest, root: &Path) -> Vec<String> {
    let mut changes = Vec::new();
    for id in 0..guest.scenario().cpus {
        let path = root.join(format!("{}/cpu{id}/online", paths::CPU_DIR));
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        let want = match text.trim() {
            "1" => true,
            "0" => false,
            _ => continue,
        };
        if guest.cpu_online(id) != Some(want) {
            guest.set_cpu(id, want);
            changes.push(format!(
                "cpu{id} {}",
                if want { "online" } else { "offline" }
            ));
        }
    }
    let path = root.join(paths::CMM_PAGES);
    if let Some(pages) = fs::read_to_string(&path)
        .ok()
        .and_then(|t| t.trim().parse::<i64>().ok())
        && pages != guest.pool()
    {
        guest.set_pool(pages);
        changes.push(format!("cmm_pages {pages}"));
        if guest.pool() != pages {
            // The pool could not grow that far: show what it really is.
            let _ = fs::write(&path, format!("{}\n", guest.pool()));
        }
    }
    changes
}

/// Plays `guest` below `root` until the scenario ends or `stop` is set,
/// one simulated second per `wait` call.
pub fn serve(
    guest: &mut Guest,
    root: &Path,
    stop: &AtomicBool,
    wait: &mut dyn FnMut(Duration),
    on_line: &mut dyn FnMut(&str),
) -> std::io::Result<()> {
    publish_all(guest, root)?;
    let end = guest.scenario().length();
    while guest.t + 1e-9 < end && !stop.load(Ordering::SeqCst) {
        wait(Duration::from_secs(1));
        for change in take_writes(guest, root) {
            on_line(&format!("{} {change}", super::report::clock(guest.t)));
        }
        guest.advance(1.0);
        publish(guest, root)?;
    }
    let _ = fs::remove_dir_all(root.join(".staging"));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Scenario;

    fn guest() -> Guest {
        let text = "name = \"t\"\ncpus = 3\nonline = 3\nmemory_mib = 1024\nduration = \"1:00\"\nphases = []\n";
        match Scenario::parse("t", text) {
            Ok(s) => Guest::new(&s, false),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn writes_to_the_controls_reach_the_model() {
        let dir = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        let mut g = guest();
        assert!(publish_all(&g, dir.path()).is_ok());
        assert!(
            take_writes(&mut g, dir.path()).is_empty(),
            "nothing changed yet"
        );
        let cpu2 = dir.path().join(format!("{}/cpu2/online", paths::CPU_DIR));
        assert!(fs::write(&cpu2, "0\n").is_ok());
        assert!(fs::write(dir.path().join(paths::CMM_PAGES), "1000\n").is_ok());
        let changes = take_writes(&mut g, dir.path());
        assert_eq!(changes, ["cpu2 offline", "cmm_pages 1000"]);
        assert_eq!((g.online_count(), g.pool()), (2, 1000));
        g.advance(1.0);
        assert!(publish(&g, dir.path()).is_ok());
        let online = fs::read_to_string(dir.path().join(paths::ONLINE)).unwrap_or_default();
        assert_eq!(online, "0-1\n");
    }

    #[test]
    fn the_root_actuator_that_plugtop_run_uses_drives_the_model() {
        use crate::kernel::actuator::{Actuator, RootActuator};
        let dir = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        let mut g = guest();
        assert!(publish_all(&g, dir.path()).is_ok());
        let mut actuator = match RootActuator::new(dir.path()) {
            Ok(a) => a,
            Err(e) => panic!("{e}"),
        };
        let mut failures = Vec::new();
        // Every served CPU has an `online` file: cpu0 comes first by name,
        // as cpuplugd on this root would take it.
        assert_eq!(actuator.unplug(&mut failures).ok(), Some(0));
        assert!(actuator.set_pool(2048).is_ok());
        assert_eq!(
            take_writes(&mut g, dir.path()),
            ["cpu0 offline", "cmm_pages 2048"]
        );
        g.advance(1.0);
        assert!(publish(&g, dir.path()).is_ok());
        assert_eq!(g.sample().online.ids, [1, 2]);
        assert!(failures.is_empty());
    }
}
