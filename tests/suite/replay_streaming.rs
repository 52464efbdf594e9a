//! Replaying a recording file reads it as replay goes on: a long recording
//! replays the same as in memory across every read boundary, a file that is
//! no recording is refused after its first bytes (a sparse file of
//! gigabytes costs nothing), and a torn end is found in a file as in memory.

use std::io::Write as _;

use plugtop::kernel::recording::{Header, RecordingSource, RecordingWriter};
use plugtop::kernel::{CpuTicks, Sample, Source, Stamp};

fn header() -> Header {
    Header {
        host: "guest1".into(),
        kernel: "6.1.0-s390x".into(),
        cpu_model: "IBM z16".into(),
        root: "/".into(),
        page_size: 4096,
        present_cpus: 512,
        interval_us: 1_000_000,
        started: Stamp::new(1_700_000_000, 0),
        imported: None,
    }
}

/// A recording of `n` readings of a 512-CPU guest whose ticks move
/// irregularly, so every record is a few kilobytes.
fn recording(n: u64) -> Vec<u8> {
    let mut writer = RecordingWriter::new(Vec::new(), &header()).expect("in memory");
    for i in 0..n {
        let per_cpu = (0..512u64)
            .map(|c| {
                let t = i * (c % 7 + 1) * 13 + (c * i) % 101;
                (
                    c as u32,
                    CpuTicks::from_columns([
                        t,
                        0,
                        t / 3,
                        i * 100 - t.min(i * 100),
                        0,
                        0,
                        0,
                        0,
                        0,
                        0,
                    ]),
                )
            })
            .collect();
        let sample = Sample {
            per_cpu,
            ..Sample::bare(
                Stamp::new(1_700_000_000 + i as i64, 0),
                CpuTicks::default(),
                512,
                512,
            )
        };
        writer.append(&sample).expect("in memory");
    }
    writer.into_inner()
}

fn stamps(source: &mut RecordingSource) -> Vec<i64> {
    let mut out = Vec::new();
    while let Some(Ok(s)) = source.next_sample() {
        out.push(s.stamp.secs());
    }
    out
}

fn write_file(dir: &std::path::Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(bytes))
        .expect("write the recording");
    path
}

#[test]
fn a_file_replays_exactly_as_the_same_bytes_in_memory_across_read_boundaries() {
    let bytes = recording(400);
    assert!(bytes.len() > 1 << 20, "longer than a read: {}", bytes.len());
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write_file(dir.path(), "long.rec", &bytes);
    let mut from_file = RecordingSource::open(&path).expect("opens");
    let mut in_memory = RecordingSource::from_bytes("long.rec", bytes).expect("valid");
    let mut n = 0;
    loop {
        match (from_file.next_sample(), in_memory.next_sample()) {
            (Some(Ok(a)), Some(Ok(b))) => {
                // Field tables carry process-wide layout ids: compare
                // what was read.
                let key = |s: &Sample| (s.stamp, s.ticks, s.per_cpu.clone(), s.online.ids.clone());
                assert!(key(&a) == key(&b), "sample {n}");
                n += 1;
            }
            (None, None) => break,
            (a, b) => panic!("sample {n}: the file gave {a:?}, memory {b:?}"),
        }
    }
    assert_eq!(n, 400);
    assert_eq!(from_file.warning(), None);
}

#[test]
fn a_torn_end_is_found_in_a_file_as_in_memory() {
    let bytes = recording(120);
    let dir = tempfile::tempdir().expect("temp dir");
    // Cuts inside the header of the last record and inside its payload.
    for cut in [bytes.len() - 1, bytes.len() - 2000, bytes.len() - 5] {
        let path = write_file(dir.path(), &format!("cut{cut}.rec"), &bytes[..cut]);
        let mut file = RecordingSource::open(&path).expect("opens");
        let mut memory =
            RecordingSource::from_bytes(path.display().to_string(), bytes[..cut].to_vec())
                .expect("valid start");
        assert_eq!(stamps(&mut file), stamps(&mut memory), "cut at {cut}");
        assert_eq!(file.warning(), memory.warning(), "cut at {cut}");
        assert!(
            file.warning().is_some_and(|w| w.contains("truncated")),
            "{:?}",
            file.warning()
        );
    }
}

#[test]
fn a_huge_sparse_file_is_refused_by_its_first_bytes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sparse.rec");
    let file = std::fs::File::create(&path).expect("create");
    // 64 GiB of holes: reading it whole would take minutes and all memory.
    file.set_len(64 << 30).expect("sparse file");
    let e = RecordingSource::open(&path).expect_err("no recording");
    assert!(e.to_string().contains("not a plugtop recording"), "{e}");

    // A valid start followed by gigabytes of holes: the first damaged
    // record ends replay, nothing past it is read.
    let mut start = recording(3);
    start.extend_from_slice(&[0u8; 64]);
    let path = write_file(dir.path(), "holes.rec", &start);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|f| f.set_len(64 << 30))
        .expect("sparse tail");
    let mut r = RecordingSource::open(&path).expect("valid start");
    assert_eq!(stamps(&mut r).len(), 3);
    assert!(
        r.warning().is_some_and(|w| w.contains("checksum")),
        "{:?}",
        r.warning()
    );
}

#[test]
fn a_layout_of_millions_of_names_is_damage_not_an_allocation() {
    use plugtop::kernel::recording::codec::{KIND_MEMINFO_LAYOUT, frame};
    // A well-framed (checksummed) layout record naming more lines than
    // any kernel table plugtop reads can hold: 3 million empty names are
    // 3 MB of recording, and would be hundreds of MB decoded.
    let mut bytes = recording(2);
    let names = 3_000_000u64;
    let mut payload = Vec::new();
    let mut n = names;
    while n >= 0x80 {
        payload.push((n as u8) | 0x80);
        n >>= 7;
    }
    payload.push(n as u8);
    payload.resize(payload.len() + names as usize, 0);
    frame(&mut bytes, KIND_MEMINFO_LAYOUT, &payload);
    let mut r = RecordingSource::from_bytes("bomb.rec", bytes).expect("valid start");
    assert_eq!(stamps(&mut r).len(), 2, "the samples before it replay");
    assert!(
        r.warning().is_some_and(|w| w.contains("layout size")),
        "{:?}",
        r.warning()
    );
}

/// A recording of the daytrader scenario under the modern rules, one
/// reading every 5 simulated seconds for `seconds`; its path.
fn simulated_recording(dir: &std::path::Path, seconds: f64) -> std::path::PathBuf {
    let path = dir.join("day.rec");
    crate::common::record_simulated("daytrader", "recommended-modern", seconds, 5.0, &path);
    path
}

/// The screen's session over a replay of `path`, nothing read yet.
fn replay_of(
    path: &std::path::Path,
) -> (
    plugtop::tui::local::Local,
    Box<dyn plugtop::kernel::Source + Send>,
) {
    let options = plugtop::tui::run::Options {
        rules: Some("examples/rules/recommended-modern.conf".into()),
        root: "/".into(),
        replay: Some(path.to_path_buf()),
        mode: plugtop::control::controller::Mode::Observe,
        batch: true,
        mono: true,
        interval: None,
        count: None,
        sim: None,
        old_kernel: false,
        tune_budget: None,
        allow_non_zvm: false,
    };
    plugtop::tui::run::prepare(&options).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn reading_ahead_decides_every_reading_and_the_screen_keeps_what_it_would_have() {
    use plugtop::tui::app::FRAMES;
    use plugtop::tui::control::read_ahead::{Leg, ReadAhead};
    use plugtop::tui::seek::SeekTo;
    let dir = crate::common::tempdir();
    let path = simulated_recording(dir.path(), 2.0 * 3600.0);
    // Read ahead to 1:30 into the recording after a few readings at pace.
    let (mut ahead, mut source) = replay_of(&path);
    for _ in 0..3 {
        let s = source
            .next_sample()
            .and_then(Result::ok)
            .expect("a reading");
        ahead.ingest(s);
    }
    let start = ahead
        .app()
        .timeline()
        .frames()
        .back()
        .map(|f| f.sample.stamp)
        .expect("kept");
    let target = Stamp::new(start.secs() + 5400, 0);
    let mut passage = ReadAhead::new(SeekTo::At(target));
    assert_eq!(
        passage.run(ahead.core_mut(), source.as_mut(), None),
        Leg::Done
    );
    assert!(passage.reached());
    for update in passage.finish() {
        ahead.app_mut().apply(update);
    }
    // The same recording replayed reading by reading, as at pace.
    let (mut paced, mut again) = replay_of(&path);
    while paced.app().frame().is_none_or(|f| f.sample.stamp < target) {
        let s = again.next_sample().and_then(Result::ok).expect("a reading");
        paced.ingest(s);
    }
    let (a, p) = (ahead.app(), paced.app());
    assert_eq!(
        a.readings(),
        5400 / 5 + 1,
        "every reading on the way decided"
    );
    assert_eq!(a.readings(), p.readings());
    let shown = a.frame().expect("an interval shown");
    assert_eq!(shown.sample.stamp, target, "the reading sought is shown");
    assert_eq!(a.timeline().cursor(), Some(0));
    assert!(a.timeline().paused(), "held where it arrived");
    // The session stands where a replay at pace would have left it.
    let paced_frame = p.frame().expect("shown");
    assert_eq!(shown.decision, paced_frame.decision);
    assert_eq!(shown.variables, paced_frame.variables);
    assert_eq!(
        a.board().flips().changes().len(),
        p.board().flips().changes().len()
    );
    // The screen keeps what it would have: the newest intervals, back to
    // back, their graphs, and the log in time order.
    assert_eq!(a.timeline().frames().len(), FRAMES);
    let stamps: Vec<i64> = a
        .timeline()
        .frames()
        .iter()
        .map(|f| f.sample.stamp.secs())
        .collect();
    assert!(
        stamps.windows(2).all(|w| w[0] - w[1] == 5),
        "a gap in the intervals kept"
    );
    let busy = |app: &plugtop::tui::app::App| -> Vec<u64> {
        app.timeline()
            .history()
            .series(plugtop::tui::graph_series::Metric::Busy)
            .values()
            .map(f64::to_bits)
            .collect()
    };
    assert_eq!(busy(a), busy(p), "the graphs as a replay at pace drew them");
    let log = a.log().lines();
    assert!(
        log.iter()
            .zip(log.iter().skip(1))
            .all(|(x, y)| x.stamp <= y.stamp)
    );
    assert!(
        log.back()
            .is_some_and(|l| l.text.starts_with("read ahead to 01:30:00: 1078 readings")),
        "{:?}",
        log.back()
    );
}

#[test]
fn reading_ahead_to_the_end_or_past_it_stops_at_the_last_reading() {
    use plugtop::tui::control::read_ahead::{Leg, ReadAhead};
    use plugtop::tui::seek::SeekTo;
    let dir = crate::common::tempdir();
    let path = simulated_recording(dir.path(), 600.0);
    for to in [SeekTo::End, SeekTo::At(Stamp::new(i64::MAX / 2_000_000, 0))] {
        let (mut local, mut source) = replay_of(&path);
        let mut passage = ReadAhead::new(to);
        assert_eq!(
            passage.run(local.core_mut(), source.as_mut(), None),
            Leg::Done
        );
        assert!(!passage.reached());
        for update in passage.finish() {
            local.app_mut().apply(update);
        }
        let app = local.app();
        assert_eq!(app.readings(), 121, "{to:?}");
        assert_eq!(
            app.timeline().frames().len(),
            121,
            "nothing passed: all kept"
        );
        assert_eq!(app.timeline().cursor(), None);
        let said: Vec<&str> = app.log().lines().iter().map(|l| l.text.as_str()).collect();
        assert!(said.contains(&"end of the recording"), "{said:?}");
        let last = said.last().copied().unwrap_or_default();
        assert!(
            last.starts_with("read to the end of the recording: 121 readings")
                || last.starts_with("the recording ends before"),
            "{last}"
        );
    }
}
