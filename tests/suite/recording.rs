//! Recordings: what is recorded replays exactly, damage is found and
//! reported with its byte offset, and a recording stays small.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use common::{FakeRoot, Ticks};
use plugtop::engine::{Decision, Engine};
use plugtop::kernel::claimed_dir::{DirUse, claim};
use plugtop::kernel::fs::{Placing, StagedFiles};
use plugtop::kernel::live::LiveSource;
use plugtop::kernel::recording::export::write_snapshot;
use plugtop::kernel::recording::{Header, RecordingSource, RecordingWriter};
use plugtop::kernel::snapshots::SnapshotSource;
use plugtop::kernel::{Sample, Source, Stamp};
use plugtop::rules::eval::NoTrace;
use plugtop::rules::{SourceFile, load};

fn header() -> Header {
    Header {
        host: "guest1".into(),
        kernel: "6.1.0-s390x".into(),
        cpu_model: "IBM z16".into(),
        root: "/".into(),
        page_size: 4096,
        present_cpus: 2,
        interval_us: 1_000_000,
        started: Stamp::new(1_700_000_000, 0),
        imported: None,
    }
}

/// Rewrites the root's files for interval `i` of a guest whose load and
/// memory pressure change over time.
fn step(root: &FakeRoot, i: u64) {
    let busy = if (i / 7).is_multiple_of(2) { 90 } else { 5 };
    let cpus: Vec<(u32, Ticks)> = (0..2u64)
        .map(|c| {
            let b = i * busy + c * 3;
            (
                c as u32,
                [b, i, i * 2, i * (100 - busy), i / 3, 0, i, i % 5, 0, 0],
            )
        })
        .collect();
    root.stat(&cpus);
    root.write(
        "proc/loadavg",
        &format!(
            "{}.{:02} 0.50 0.40 {}/120 999\n",
            i % 4,
            (i * 7) % 100,
            1 + i % 3
        ),
    );
    root.meminfo(&[
        ("MemTotal", 2_097_152),
        ("MemFree", 400_000 - (i % 50) * 4000),
        ("Cached", 300_000 + i * 10),
        ("Shmem", 2048),
    ]);
    root.vmstat(&[
        ("nr_free_pages", 100_000 - (i % 50) * 1000),
        ("pgpgin", 1000 + i * 40),
        ("pgpgout", 2000 + i * 25),
        ("pswpin", i / 10),
        ("pswpout", i / 8),
        ("pgscan_kswapd", 10 + i * i),
        ("pgscan_direct", if i % 11 < 3 { i * 400 } else { i * 2 }),
    ]);
    root.write("proc/sys/vm/cmm_pages", &format!("{}\n", (i % 9) * 1000));
    let online = if (i / 5).is_multiple_of(2) {
        "0-1\n"
    } else {
        "0\n"
    };
    root.write("sys/devices/system/cpu/online", online);
}

const RULES: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"8000\"\n\
pgscanrate=\"(vmstat.pgscan_direct[0] - vmstat.pgscan_direct[1]) / (cpustat.total_ticks[0] - cpustat.total_ticks[1])\"\n\
HOTPLUG=\"idle < 20 & loadavg > 1\"\nHOTUNPLUG=\"idle > 150\"\nCMM_INC=\"meminfo.MemFree / 400\"\n\
MEMPLUG=\"pgscanrate > 20\"\nMEMUNPLUG=\"freemem > 700\"\n";

fn engine_for(source: &mut dyn Source) -> Engine {
    let facts = source.facts();
    let outcome = load(
        &SourceFile::new("t.conf", RULES.as_bytes().to_vec()),
        &facts,
    );
    assert!(outcome.refusal.is_none(), "{:?}", outcome.refusal);
    Engine::new(Arc::new(outcome.rules))
}

fn decide_all(source: &mut dyn Source, limit: usize) -> Vec<Decision> {
    let mut engine = engine_for(source);
    let mut out = Vec::new();
    for _ in 0..limit {
        match source.next_sample() {
            Some(Ok(s)) => out.extend(engine.push(&s, &mut NoTrace)),
            Some(Err(e)) => panic!("{e}"),
            None => break,
        }
    }
    out
}

/// Records `n` intervals of the changing guest; returns the bytes and the
/// decisions made live on the same samples.
fn record_live(n: u64) -> (Vec<u8>, Vec<Decision>, Vec<Sample>) {
    let (bytes, decisions, samples, _) = record_live_with_ends(n);
    (bytes, decisions, samples)
}

/// As `record_live`, plus the byte offset where each sample's records end.
fn record_live_with_ends(n: u64) -> (Vec<u8>, Vec<Decision>, Vec<Sample>, Vec<usize>) {
    let root = FakeRoot::guest(2);
    step(&root, 0);
    let mut t = 1_700_000_000_000_000i64;
    let clock = Box::new(move || {
        t += 1_000_123;
        Stamp { micros: t }
    });
    let mut live = LiveSource::with_clock(root.path(), clock);
    let mut engine = engine_for(&mut live);
    let mut writer = RecordingWriter::new(Vec::new(), &header()).expect("in memory");
    let mut decisions = Vec::new();
    let mut samples = Vec::new();
    let mut ends = Vec::new();
    for i in 0..n {
        step(&root, i);
        let sample = match live.next_sample() {
            Some(Ok(s)) => s,
            other => panic!("{other:?}"),
        };
        writer.append(&sample).expect("in memory");
        ends.push(writer.bytes() as usize);
        decisions.extend(engine.push(&sample, &mut NoTrace));
        samples.push(sample);
    }
    (writer.into_inner(), decisions, samples, ends)
}

fn same_sample(a: &Sample, b: &Sample) -> bool {
    a.stamp == b.stamp
        && a.ticks == b.ticks
        && a.per_cpu == b.per_cpu
        && a.loadavg.to_bits() == b.loadavg.to_bits()
        && a.runnable.to_bits() == b.runnable.to_bits()
        && a.meminfo.iter().eq(b.meminfo.iter())
        && a.vmstat.iter().eq(b.vmstat.iter())
        && a.online == b.online
        && a.present == b.present
        && a.possible == b.possible
        && a.cpus == b.cpus
        && a.cmm_pages == b.cmm_pages
        && a.polarization == b.polarization
}

#[test]
fn replayed_decisions_equal_live_decisions() {
    let (bytes, live, samples) = record_live(60);
    assert!(live.len() >= 58, "decided {} intervals", live.len());
    let mut replay = RecordingSource::from_bytes("x.rec", bytes).expect("valid recording");
    assert_eq!(replay.header(), &header());
    let mut replayed_samples = Vec::new();
    while let Some(Ok(s)) = replay.next_sample() {
        replayed_samples.push(s);
    }
    assert_eq!(replayed_samples.len(), samples.len());
    for (a, b) in samples.iter().zip(&replayed_samples) {
        assert!(same_sample(a, b), "sample differs:\n{a:?}\n{b:?}");
    }
    let (bytes, _, _) = record_live(60);
    let mut replay = RecordingSource::from_bytes("x.rec", bytes).expect("valid recording");
    assert_eq!(decide_all(&mut replay, 1000), live);
    assert!(replay.warning().is_none());
}

#[test]
fn not_a_recording_or_another_version_is_refused_with_the_offset() {
    let e = RecordingSource::from_bytes("notes.txt", b"hello world, not a recording".to_vec())
        .expect_err("refused");
    assert_eq!(e.offset, 0);
    assert!(e.to_string().contains("not a plugtop recording"), "{e}");

    let (mut bytes, _, _) = record_live(3);
    bytes[18] = 9;
    let e = RecordingSource::from_bytes("new.rec", bytes).expect_err("refused");
    assert_eq!(e.offset, 18);
    assert!(e.to_string().contains("format version 9"), "{e}");

    let (bytes, _, _) = record_live(3);
    let e = RecordingSource::from_bytes("cut.rec", bytes[..25].to_vec()).expect_err("refused");
    assert!(e.to_string().contains("header"), "{e}");
}

#[test]
fn a_torn_write_anywhere_replays_everything_before_it() {
    let (bytes, _, _, ends) = record_live_with_ends(6);
    let header_end = RecordingWriter::new(Vec::new(), &header())
        .expect("in memory")
        .bytes() as usize;
    let mut clean = 0;
    for cut in header_end..bytes.len() {
        let mut r = RecordingSource::from_bytes("cut.rec", bytes[..cut].to_vec())
            .unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        let mut n = 0;
        while let Some(Ok(_)) = r.next_sample() {
            n += 1;
        }
        let complete = ends.iter().filter(|e| **e <= cut).count();
        assert_eq!(n, complete, "cut at byte {cut}");
        let last_end = ends.iter().rev().find(|e| **e <= cut).copied();
        match r.warning() {
            Some(w) => {
                let at: usize = w
                    .split("at byte ")
                    .nth(1)
                    .and_then(|rest| rest.split(';').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(usize::MAX);
                let from = last_end.unwrap_or(header_end);
                assert!(
                    from <= at && at < cut,
                    "cut at {cut}: damage reported at {at}, expected in {from}..{cut}"
                );
                assert!(w.contains("truncated"), "cut at {cut}: {w}");
            }
            // A cut at a record boundary is a clean, shorter recording.
            None => clean += 1,
        }
    }
    assert!(clean < ends.len() + 4, "{clean} cuts without a warning");
}

#[test]
fn a_flipped_byte_is_caught_by_the_checksum() {
    let (mut bytes, _, samples) = record_live(10);
    let at = bytes.len() - 200;
    bytes[at] ^= 0x40;
    let mut r = RecordingSource::from_bytes("flip.rec", bytes).expect("header intact");
    let mut n = 0;
    while let Some(Ok(_)) = r.next_sample() {
        n += 1;
    }
    assert!(n < samples.len());
    let w = r.warning().unwrap_or_default().to_string();
    assert!(w.contains("checksum") || w.contains("decoded"), "{w}");
    assert!(w.contains("at byte"), "{w}");
}

/// adv52 #7: a recording damaged before its first sample, replayed with
/// rules whose CPU_MAX="0" needs the present CPUs from it: the refusal
/// names the damage and its byte, and never says CPU_MAX is unset.
#[test]
fn a_recording_damaged_before_its_first_sample_says_so_in_the_refusal() {
    let dir = common::tempdir();
    let rec = dir.path().join("one.rec");
    let o = common::plugtop(&[
        "record",
        "--count",
        "1",
        "-o",
        &rec.to_string_lossy(),
        "--snapshots",
        "tests/fixtures/series/oldkernel",
    ]);
    assert!(o.status.success(), "{}", common::text(&o));
    let mut bytes = std::fs::read(&rec).expect("recorded");
    let at = bytes.len() - 5;
    bytes[at] ^= 0x40;
    let early = dir.path().join("early.rec");
    std::fs::write(&early, bytes).expect("damaged copy");
    let rules = dir.path().join("rules.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 500\"\n",
    )
    .expect("rules");
    for args in [&["eval"][..], &[]] {
        let mut all = args.to_vec();
        let (early, rules) = (early.to_string_lossy(), rules.to_string_lossy());
        all.extend(["--replay", &early, "-c", &rules]);
        let o = common::plugtop(&all);
        let said = common::text(&o);
        assert_ne!(o.status.code(), Some(0), "{args:?}: {said}");
        assert!(
            said.contains("early.rec holds no samples: it fails its checksum at byte"),
            "{args:?}: {said}"
        );
        assert!(!said.contains("CPU_MAX is not"), "{args:?}: {said}");
    }
}

#[test]
fn exported_snapshots_read_back_as_the_same_samples() {
    let (bytes, _, samples) = record_live(8);
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut replay = RecordingSource::from_bytes("x.rec", bytes).expect("valid");
    let mut i = 0;
    let beneath = claim(dir.path(), DirUse::Snapshots).expect("an empty directory");
    while let Some(Ok(s)) = replay.next_sample() {
        let mut files = StagedFiles::new(&beneath, Placing::REPLACE);
        write_snapshot(&mut files, i, &s).expect("export");
        files.commit().expect("placed");
        i += 1;
    }
    assert_eq!(i, samples.len(), "every sample was exported");
    let mut snaps = SnapshotSource::open(dir.path()).expect("snapshots");
    for original in &samples {
        let read = match snaps.next_sample() {
            Some(Ok(s)) => s,
            other => panic!("{other:?}"),
        };
        assert!(
            same_sample(original, &read) || {
                // Snapshots carry no per-CPU sysfs state.
                let mut o = original.clone();
                o.cpus = Arc::from([]);
                same_sample(&o, &read)
            }
        );
    }
    assert!(Path::new(&dir.path().join("000000/time")).is_file());
}

#[test]
fn a_two_cpu_guest_records_in_under_400_bytes_per_sample() {
    // A realistic vmstat (a recent kernel's 150 lines) where a handful of
    // counters move every second, like an idle-to-busy guest.
    let base =
        std::fs::read_to_string("tests/fixtures/roots/newkernel/proc/vmstat").expect("fixture");
    let names: Vec<(String, u64)> = base
        .lines()
        .filter_map(|l| {
            let (n, v) = l.split_once(' ')?;
            Some((n.to_string(), v.trim().parse().ok()?))
        })
        .collect();
    let root = FakeRoot::guest(2);
    let mut t = 0i64;
    let mut live = LiveSource::with_clock(
        root.path(),
        Box::new(move || {
            t += 1_000_000;
            Stamp { micros: t }
        }),
    );
    let mut writer = RecordingWriter::new(Vec::new(), &header()).expect("in memory");
    let n = 900u64;
    for i in 0..n {
        step(&root, i);
        let vm: Vec<(&str, u64)> = names
            .iter()
            .enumerate()
            .map(|(k, (name, v))| {
                (
                    name.as_str(),
                    if k % 12 == 0 {
                        v + i * (k as u64 + 3)
                    } else {
                        *v
                    },
                )
            })
            .collect();
        root.vmstat(&vm);
        match live.next_sample() {
            Some(Ok(s)) => {
                writer.append(&s).expect("in memory");
            }
            other => panic!("reading {i}: {other:?}"),
        }
    }
    let per_sample = writer.bytes() as f64 / n as f64;
    // Every interval was recorded: the header alone would pass the bound.
    let mut replay =
        RecordingSource::from_bytes("x.rec", writer.into_inner()).expect("valid recording");
    let mut recorded = 0u64;
    while let Some(Ok(_)) = replay.next_sample() {
        recorded += 1;
    }
    assert_eq!(recorded, n, "every sample is in the recording");
    assert!(replay.warning().is_none());
    assert!(per_sample <= 400.0, "{per_sample:.0} bytes per sample");
}

/// The `cpuN` lines of each reading, in the order /proc/stat lists them:
/// ascending, then shuffled, repeated, with gaps, shrinking and growing.
const CPU_ORDERS: [&[u32]; 8] = [
    &[0, 1, 2, 3],
    &[0, 1, 2, 3],
    &[3, 2, 1, 0],
    &[0, 2, 2, 1, 3],
    &[5, 0, 9],
    &[0, 5, 9, 4096],
    &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    &[9, 9, 9],
];

#[test]
fn per_cpu_lines_in_any_order_or_repeated_replay_exactly() {
    let root = FakeRoot::guest(2);
    let mut t = 1_700_000_000_000_000i64;
    let clock = Box::new(move || {
        t += 1_000_000;
        Stamp { micros: t }
    });
    let mut live = LiveSource::with_clock(root.path(), clock);
    let mut writer = RecordingWriter::new(Vec::new(), &header()).expect("in memory");
    let mut samples = Vec::new();
    for (i, order) in CPU_ORDERS.iter().enumerate() {
        let i = i as u64;
        let cpus: Vec<(u32, Ticks)> = order
            .iter()
            .enumerate()
            .map(|(at, id)| {
                let base = u64::from(*id) * 1000 + i * 37 + at as u64;
                (*id, [base, i, 2 * base, 5000 - i, 1, 0, at as u64, 0, 0, 0])
            })
            .collect();
        root.stat(&cpus);
        let sample = match live.next_sample() {
            Some(Ok(s)) => s,
            other => panic!("reading {i}: {other:?}"),
        };
        let ids: Vec<u32> = sample.per_cpu.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, order.to_vec(), "the reader keeps the file's order");
        writer.append(&sample).expect("in memory");
        samples.push(sample);
    }
    let mut replay =
        RecordingSource::from_bytes("x.rec", writer.into_inner()).expect("valid recording");
    for (i, want) in samples.iter().enumerate() {
        match replay.next_sample() {
            Some(Ok(got)) => assert!(same_sample(&got, want), "reading {i}: {got:?} != {want:?}"),
            other => panic!("reading {i}: {other:?}"),
        }
    }
    assert!(replay.next_sample().is_none());
}

/// Issue 42, item 4: a recording of 65,536 CPUs in its first sample, then
/// a thousand samples of a few bytes saying "unchanged", decodes into
/// samples that share the one set of CPU lists and states (4.4 GB at peak
/// before, when each kept sample held its own copy).
#[test]
fn unchanged_cpu_lists_of_65536_cpus_are_shared_not_copied() {
    use plugtop::kernel::{CpuState, CpuTicks};
    const CPUS: u32 = 65_536;
    let first = Sample {
        cpus: (0..CPUS)
            .map(|id| CpuState {
                id,
                online: Some(true),
                configured: Some(true),
            })
            .collect(),
        ..Sample::bare(Stamp { micros: 1 }, CpuTicks::default(), CPUS, CPUS)
    };
    let mut writer = RecordingWriter::new(Vec::new(), &header()).expect("in memory");
    writer.append(&first).expect("in memory");
    let after_first = writer.bytes();
    for i in 1..=1000 {
        let mut s = first.clone();
        s.stamp = Stamp {
            micros: 1 + i * 1_000_000,
        };
        writer.append(&s).expect("in memory");
    }
    let per_sample = (writer.bytes() - after_first) / 1000;
    assert!(per_sample <= 64, "{per_sample} bytes per unchanged sample");
    let mut replay =
        RecordingSource::from_bytes("x.rec", writer.into_inner()).expect("valid recording");
    let mut kept: Vec<Sample> = Vec::new();
    while let Some(Ok(s)) = replay.next_sample() {
        kept.push(s);
    }
    assert_eq!(kept.len(), 1001);
    let (a, z) = (&kept[1], &kept[1000]);
    assert_eq!(z.online.ids.len(), CPUS as usize);
    assert!(Arc::ptr_eq(&a.online.ids, &z.online.ids), "online copied");
    assert!(
        Arc::ptr_eq(&a.present.ids, &z.present.ids),
        "present copied"
    );
    assert!(Arc::ptr_eq(&a.cpus, &z.cpus), "CPU states copied");
}

/// Issue 42, item 4 (time): a replay of 65,536 CPUs whose `cpuN` lines all
/// change every sample works out the CPUs' loads only for what is shown.
/// Line mode shows no CPU panel, so no interval's loads are worked out at
/// all (each reading sorted and hashed 65,536 CPUs, ~12 ms in release, ~12 s
/// for a thousand readings); the screen works out the interval it draws,
/// once. The intervals kept stay within the timeline's budget, counted as
/// if every one's loads were worked out.
#[test]
fn a_replay_of_65536_cpus_works_out_loads_only_for_the_interval_shown() {
    use plugtop::kernel::CpuTicks;
    use plugtop::kernel::deltas::CpuLoad;
    use plugtop::tui::app::FRAME_BYTES;
    const CPUS: u32 = 65_536;
    const READINGS: u64 = 12;
    let mut writer = RecordingWriter::new(Vec::new(), &header()).expect("in memory");
    for i in 0..READINGS {
        let per_cpu = (0..CPUS)
            .map(|id| {
                let busy = u64::from(id % 7) + 1;
                let ticks = CpuTicks {
                    user: i * busy,
                    idle: i * (10 - busy),
                    ..CpuTicks::default()
                };
                (id, ticks)
            })
            .collect();
        let s = Sample {
            per_cpu,
            ..Sample::bare(
                Stamp::new(1_700_000_000 + i as i64, 0),
                CpuTicks {
                    user: i * 4 * u64::from(CPUS),
                    idle: i * 6 * u64::from(CPUS),
                    ..CpuTicks::default()
                },
                CPUS,
                CPUS,
            )
        };
        writer.append(&s).expect("in memory");
    }
    let mut replay =
        RecordingSource::from_bytes("big.rec", writer.into_inner()).expect("valid recording");
    let file = SourceFile::new(
        "plain.conf",
        b"UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 50\"\n"
            .to_vec(),
    );
    let mut app = crate::cpu_meters::replaying(file, &replay.facts());
    let mut readings = 0;
    while let Some(s) = replay.next_sample() {
        app.ingest(s.expect("a recorded sample"));
        readings += 1;
    }
    assert_eq!(readings, READINGS);
    let frames = app.app().timeline().frames();
    let worked_out = |frames: &std::collections::VecDeque<_>| {
        frames
            .iter()
            .filter(|f: &&plugtop::tui::app::Interval| f.loads.worked_out())
            .count()
    };
    assert!(frames.len() >= 2, "{} intervals kept", frames.len());
    assert_eq!(
        worked_out(frames),
        0,
        "loads worked out for intervals nobody showed"
    );
    let kept: usize = frames.iter().map(|f| f.loads.most()).sum();
    assert!(
        (kept * std::mem::size_of::<CpuLoad>()) as u64 <= FRAME_BYTES,
        "{} intervals may hold {kept} loads",
        frames.len()
    );
    // The screen draws the newest interval: its loads, and only its.
    crate::tui_views::screen(&app, 80, 24);
    let frames = app.app().timeline().frames();
    assert_eq!(worked_out(frames), 1);
    let shown = frames.front().map(|f| f.loads.get()).unwrap_or_default();
    assert_eq!(shown.len(), CPUS as usize);
    assert_eq!(
        shown[3],
        CpuLoad::Active {
            id: 3,
            delta: CpuTicks {
                user: 4,
                idle: 6,
                ..CpuTicks::default()
            },
            total: 10,
        }
    );
}
