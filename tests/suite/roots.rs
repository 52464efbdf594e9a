//! Reading fake roots: every reader against hand-computed values.

use crate::common;

use std::sync::Arc;

use common::{FakeRoot, Ticks};
use plugtop::kernel::deltas::{CpuLoad, cpu_loads};
use plugtop::kernel::live::LiveSource;
use plugtop::kernel::{CpuTicks, Polarization, Sample, Source, Stamp};
use plugtop::tui::graph_series::{History, Metric, SERIES_LEN};

fn clock_from(start: i64) -> Box<dyn FnMut() -> Stamp + Send> {
    let mut t = start;
    Box::new(move || {
        t += 1;
        Stamp::new(t, 250_000)
    })
}

fn read(source: &mut LiveSource) -> Sample {
    match source.next_sample() {
        Some(Ok(s)) => s,
        other => panic!("expected a sample, got {other:?}"),
    }
}

#[test]
fn a_guest_root_reads_into_every_field() {
    let root = FakeRoot::guest(2);
    root.write("sys/devices/system/cpu/cpu1/online", "1\n");
    root.write("sys/devices/system/cpu/cpu1/configure", "1\n");
    root.write("sys/devices/system/cpu/cpu0/configure", "1\n");
    let mut source = LiveSource::with_clock(root.path(), clock_from(1_700_000_000));
    let s = read(&mut source);
    assert_eq!(s.stamp, Stamp::new(1_700_000_001, 250_000));
    assert_eq!(s.stamp.seconds(), 1_700_000_001.25);
    assert_eq!(s.ticks.user, 100 + 101);
    assert_eq!(s.ticks.total(), (100 + 1 + 50 + 1000 + 5 + 2 + 7) * 2 + 1);
    assert_eq!(s.per_cpu.len(), 2);
    assert_eq!(s.per_cpu[1].0, 1);
    assert_eq!(s.per_cpu[1].1.steal, 7);
    assert_eq!((s.loadavg, s.runnable), (0.42, 2.0));
    assert_eq!(s.meminfo.get("MemFree"), Some(524_288.0));
    assert_eq!(s.vmstat.get("pgscan_kswapd"), Some(10.0));
    assert_eq!((s.online.count, s.present.count), (2, 2));
    assert_eq!(s.possible.as_ref().map(|p| p.count), Some(2));
    assert_eq!(s.cmm_pages, Some(0));
    assert_eq!(s.polarization, None);
    assert_eq!(s.cpus.len(), 2);
    assert_eq!((s.cpus[0].online, s.cpus[0].configured), (None, Some(true)));
    assert_eq!(
        (s.cpus[1].online, s.cpus[1].configured),
        (Some(true), Some(true))
    );
}

#[test]
fn optional_files_mark_features_unavailable() {
    let root = FakeRoot::guest(1);
    root.remove("proc/sys/vm/cmm_pages");
    root.write("sys/devices/system/cpu/dispatching", "1\n");
    let mut source = LiveSource::with_clock(root.path(), clock_from(0));
    let s = read(&mut source);
    assert_eq!(s.cmm_pages, None);
    assert_eq!(s.polarization, Some(Polarization::Vertical));
    assert!(!source.facts().cmm_pages);
}

fn error_of(root: &FakeRoot) -> String {
    let mut source = LiveSource::with_clock(root.path(), clock_from(0));
    match source.next_sample() {
        Some(Err(e)) => e.to_string(),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn missing_truncated_and_malformed_files_name_file_and_line() {
    let root = FakeRoot::guest(2);
    root.remove("proc/stat");
    assert!(
        error_of(&root).contains("/proc/stat open failed"),
        "{}",
        error_of(&root)
    );

    // cpuplugd reads a missing number as 0 and a line without its
    // separator swallows the next line's name: neither stops it, so
    // neither stops plugtop (edge case G).
    let root = FakeRoot::guest(2);
    root.write("proc/meminfo", "MemTotal:  2097152 kB\nMemFree:");
    let mut source = LiveSource::with_clock(root.path(), clock_from(0));
    assert_eq!(read(&mut source).meminfo.get("MemFree"), Some(0.0));

    let root = FakeRoot::guest(2);
    root.write(
        "proc/vmstat",
        "nr_free_pages 5\npgpgin\npgpgout 7\npswpin 1\n",
    );
    let mut source = LiveSource::with_clock(root.path(), clock_from(0));
    let s = read(&mut source);
    assert_eq!(
        s.vmstat.get("pgpgout"),
        None,
        "swallowed by the line before"
    );
    assert_eq!(s.vmstat.get("pswpin"), Some(1.0));

    let root = FakeRoot::guest(2);
    root.write("proc/stat", "intr 5\n");
    let e = error_of(&root);
    assert!(e.contains("/proc/stat") && e.contains("line 1"), "{e}");

    let root = FakeRoot::guest(2);
    root.write("proc/stat", "cpu  1 2 3\ncpu0 1 2 3 4\n");
    let e = error_of(&root);
    assert!(e.contains("/proc/stat") && e.contains("line 1"), "{e}");

    // cpuplugd reads only the aggregate line: a damaged `cpuN` line is
    // left out of the per-CPU view and stops nothing.
    let root = FakeRoot::guest(2);
    root.write("proc/stat", "cpu  1 2 3 4\ncpu0 1 2\ncpu1 5 6 7 8\n");
    let mut source = LiveSource::with_clock(root.path(), clock_from(0));
    let s = read(&mut source);
    assert_eq!(s.ticks.user, 1);
    assert_eq!(s.per_cpu.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [1]);

    let root = FakeRoot::guest(2);
    root.write("proc/loadavg", "0.5\n");
    let e = error_of(&root);
    assert!(e.contains("/proc/loadavg") && e.contains("line 1"), "{e}");

    let root = FakeRoot::guest(2);
    root.write("sys/devices/system/cpu/online", "0-x\n");
    let e = error_of(&root);
    assert!(e.contains("/sys/devices/system/cpu/online"), "{e}");
}

/// An s390x-style /proc/stat: 64 CPUs, of which `offline` are missing.
fn s390_root(root: &FakeRoot, step: u64, offline: &[u32]) {
    let cpus: Vec<(u32, Ticks)> = (0..64u32)
        .filter(|id| !offline.contains(id))
        .map(|id| {
            let i = u64::from(id);
            (
                id,
                [
                    1000 + step * (10 + i),
                    0,
                    500 + step * 5,
                    9000 + step * 80,
                    3,
                    0,
                    1,
                    step * 2,
                    0,
                    0,
                ],
            )
        })
        .collect();
    root.stat(&cpus);
    let mut online = Vec::new();
    let mut id = 0;
    while id < 64 {
        if offline.contains(&id) {
            id += 1;
            continue;
        }
        let start = id;
        while id + 1 < 64 && !offline.contains(&(id + 1)) {
            id += 1;
        }
        online.push(if start == id {
            format!("{start}")
        } else {
            format!("{start}-{id}")
        });
        id += 1;
    }
    root.write(
        "sys/devices/system/cpu/online",
        &format!("{}\n", online.join(",")),
    );
    root.write("sys/devices/system/cpu/present", "0-63\n");
    for id in 0..64u32 {
        let state = if offline.contains(&id) { "0\n" } else { "1\n" };
        root.write(&format!("sys/devices/system/cpu/cpu{id}/online"), state);
        root.write(&format!("sys/devices/system/cpu/cpu{id}/configure"), "1\n");
    }
}

#[test]
fn per_cpu_deltas_on_64_cpus_going_offline_and_back() {
    let root = FakeRoot::guest(1);
    s390_root(&root, 0, &[]);
    let mut source = LiveSource::with_clock(root.path(), clock_from(0));
    let first = read(&mut source);
    assert_eq!(first.per_cpu.len(), 64);
    assert!(
        cpu_loads(None, &first)
            .iter()
            .all(|l| matches!(l, CpuLoad::Fresh { .. }))
    );

    s390_root(&root, 1, &[]);
    let second = read(&mut source);
    let loads = cpu_loads(Some(&first), &second);
    assert_eq!(loads.len(), 64);
    // CPU 7: user +17, system +5, idle +80, steal +2 -> total 104.
    match loads[7] {
        CpuLoad::Active { id, delta, total } => {
            assert_eq!(id, 7);
            assert_eq!(
                (delta.user, delta.system, delta.idle, delta.steal),
                (17, 5, 80, 2)
            );
            assert_eq!(total, 104);
        }
        other => panic!("cpu7: {other:?}"),
    }
    assert_eq!(loads[7].busy(), Some(22.0 / 104.0));

    let offline: Vec<u32> = (10..20).collect();
    s390_root(&root, 2, &offline);
    let third = read(&mut source);
    assert_eq!(third.online.count, 54);
    assert_eq!(third.cpus[12].online, Some(false));
    let loads = cpu_loads(Some(&second), &third);
    assert_eq!(loads.len(), 64, "offline CPUs are still listed");
    for id in 10..20 {
        assert_eq!(loads[id as usize], CpuLoad::Offline { id });
    }
    assert!(matches!(loads[20], CpuLoad::Active { .. }));

    s390_root(&root, 3, &[]);
    let fourth = read(&mut source);
    let loads = cpu_loads(Some(&third), &fourth);
    for id in 10..20 {
        assert_eq!(
            loads[id as usize],
            CpuLoad::Fresh { id },
            "cpu{id} starts a fresh delta"
        );
    }
    s390_root(&root, 4, &[]);
    let fifth = read(&mut source);
    assert!(
        cpu_loads(Some(&fourth), &fifth)
            .iter()
            .all(|l| matches!(l, CpuLoad::Active { .. }))
    );
}

#[test]
fn history_stays_bounded_and_graphs_the_interval() {
    let root = FakeRoot::guest(2);
    let mut source = LiveSource::with_clock(root.path(), clock_from(0));
    let mut history = History::new();
    history.pin("pgscanrate");
    for step in 0..1000u64 {
        let cpus: Vec<(u32, Ticks)> = (0..2)
            .map(|i| (i, [10 * step, 0, 5 * step, 85 * step, 0, 0, 0, 0, 0, 0]))
            .collect();
        root.stat(&cpus);
        history.push(Arc::new(read(&mut source)));
        history.record_pinned("pgscanrate", step as f64);
    }
    let busy = history.series(Metric::Busy);
    assert_eq!(busy.len(), SERIES_LEN);
    assert_eq!(busy.last(), Some(0.15));
    assert_eq!(history.series(Metric::OnlineCpus).last(), Some(2.0));
    assert_eq!(
        history.series(Metric::AvailCache).last(),
        Some(262_144.0 - 1024.0)
    );
    let (name, series) = history.pinned().next().expect("pinned");
    assert_eq!(
        (name, series.len(), series.last()),
        ("pgscanrate", SERIES_LEN, Some(999.0))
    );
    assert_eq!(history.latest().map(|s| s.ticks.user), Some(2 * 10 * 999));
    let _ = CpuTicks::default();
}

#[test]
fn per_cpu_deltas_take_each_cpus_first_line_whatever_the_order() {
    let root = FakeRoot::guest(1);
    root.write("sys/devices/system/cpu/online", "3,0-2\n");
    root.write("sys/devices/system/cpu/present", "0-4\n");
    let line = |user: u64| -> Ticks { [user, 0, 10, 1000, 0, 0, 0, 0, 0, 0] };
    root.stat(&[
        (3, line(30)),
        (1, line(10)),
        (1, line(999)),
        (0, line(0)),
        (4, line(40)),
    ]);
    let mut source = LiveSource::with_clock(root.path(), clock_from(0));
    let first = read(&mut source);
    root.stat(&[
        (0, line(5)),
        (1, line(17)),
        (2, line(20)),
        (3, line(33)),
        (1, line(0)),
        (4, line(50)),
    ]);
    let second = read(&mut source);
    let loads = cpu_loads(Some(&first), &second);
    let users: Vec<(u32, Option<u64>)> = loads
        .iter()
        .map(|l| match l {
            CpuLoad::Active { id, delta, .. } => (*id, Some(delta.user)),
            CpuLoad::Fresh { id } | CpuLoad::Offline { id } => (*id, None),
        })
        .collect();
    assert_eq!(
        users,
        vec![
            (0, Some(5)),
            (1, Some(7)),
            (2, None),
            (3, Some(3)),
            (4, None)
        ],
        "cpu1 from its first lines, cpu2 new, cpu4 offline"
    );
    assert_eq!(loads[2], CpuLoad::Fresh { id: 2 });
    assert_eq!(loads[4], CpuLoad::Offline { id: 4 });
}
