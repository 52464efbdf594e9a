//! `plugtop import`: sysstat histories (through a stand-in `sadf` that
//! prints captured `sadf -j` / `sadf -H` output, so no sysstat is needed)
//! and node_exporter series (a canned Prometheus) become recordings that
//! every consumer replays: eval, the line mode, what-if, the Flips view,
//! `tune --replay`. Bad input is refused with the file and offset or the
//! query, and writes nothing.

use crate::common::text;
use crate::fleet_fake::{self, Reply};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::tempdir;
use plugtop::fleet::query::{PromAnswer, PromPoint, PromSeries, Prometheus, QueryError};
use plugtop::kernel::Source;
use plugtop::kernel::recording::RecordingSource;

const RULES: &str = "examples/rules/cpu-real-load.conf";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sysstat")
        .join(name)
}

/// A directory holding a `sadf` that runs `body` (a shell script; only
/// absolute paths work, as PATH is this directory alone).
fn stand_in(dir: &Path, body: &str) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let sadf = bin.join("sadf");
    std::fs::write(&sadf, format!("#!/bin/sh\n{body}\n")).expect("write sadf");
    std::fs::set_permissions(&sadf, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    bin
}

/// A `sadf` answering `-H` with `header` and anything else with `json`.
fn captured(dir: &Path, name: &str) -> PathBuf {
    stand_in(
        dir,
        &format!(
            "case \"$1\" in -H) exec /bin/cat '{}';; *) exec /bin/cat '{}';; esac",
            fixture(&format!("{name}.header")).display(),
            fixture(&format!("{name}.json")).display()
        ),
    )
}

/// `plugtop ARGS` with PATH set to `path` only.
fn plugtop_with_path(path: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .args(args)
        .env("PATH", path)
        .output()
        .expect("run plugtop")
}

/// An sa file (any regular file: the stand-in reads the fixture).
fn sa_file(dir: &Path) -> PathBuf {
    let sa = dir.join("sa28");
    std::fs::write(&sa, b"stand-in sa file").expect("write sa");
    sa
}

/// `plugtop import sysstat SA -o REC EXTRA…` with the `sadf` in `bin`.
fn run_import(bin: &Path, sa: &Path, rec: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "import",
        "sysstat",
        sa.to_str().expect("utf-8"),
        "-o",
        rec.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    plugtop_with_path(bin, &args)
}

/// Imports the named fixture; the recording's path.
fn import(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let bin = captured(dir, name);
    let sa = sa_file(dir);
    let rec = dir.join(format!("{name}.rec"));
    let o = run_import(&bin, &sa, &rec, extra);
    assert!(o.status.success(), "{}", text(&o));
    rec
}

fn plugtop(args: &[&str]) -> Output {
    crate::common::plugtop(args)
}

/// Nothing but `keep` in `dir`: no recording, no temporary file left.
fn only(dir: &Path, keep: &[&str]) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut want: Vec<String> = keep.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(names, want, "left behind in {}", dir.display());
}

#[test]
fn a_captured_one_second_sa_file_replays_as_the_readings_sysstat_took() {
    let dir = tempdir();
    let rec = import(dir.path(), "real-1s", &[]);
    let mut r = RecordingSource::open(&rec).expect("a recording");
    let p = r.header().imported.clone().expect("imported");
    assert_eq!(p.label(), "sysstat, 1 s");
    assert!(p.absent.is_empty(), "{:?}", p.absent);
    let facts = r.facts();
    let names = facts.meminfo_names.clone().expect("meminfo names");
    assert!(names.iter().any(|n| n == "MemFree"), "{names:?}");
    // sysstat has no Shmem: absent, not zero.
    assert!(!names.iter().any(|n| n == "Shmem"), "{names:?}");
    let mut samples = Vec::new();
    while let Some(s) = r.next_sample() {
        samples.push(s.expect("a sample"));
    }
    assert_eq!(samples.len(), 8);
    // Two CPUs online, one interval of one second: 200 ticks in all, each
    // CPU's line 100, whatever the rounding of the percentages.
    for w in samples.windows(2) {
        let all = w[1].ticks.total() - w[0].ticks.total();
        assert!((199..=201).contains(&all), "{all}");
        for ((_, a), (_, b)) in w[0].per_cpu.iter().zip(&w[1].per_cpu) {
            let d = b.total() - a.total();
            assert!((99..=101).contains(&d), "{d}");
        }
        assert_eq!(*w[1].online.ids, [0, 1]);
    }
    assert!(samples.iter().all(|s| s.cmm_pages.is_none()));
    // The same decisions as any recording: eval runs through it.
    let o = plugtop(&[
        "eval",
        "-c",
        RULES,
        "--replay",
        rec.to_str().expect("utf-8"),
        "--jsonl",
        "--var",
        "CP_ActiveAVG",
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    // Every reading past the history the rules look back on is decided.
    assert_eq!(
        out.lines().filter(|l| l.contains("\"cpu\"")).count(),
        samples.len() - 3,
        "{out}"
    );
    assert!(out.contains("\"vars\":{\"CP_ActiveAVG\":"), "{out}");
    // One-second history under one-second rules: not approximate.
    assert!(!out.contains("approximate"), "{out}");
}

#[test]
fn last_night_s_flapping_is_decided_approximately_beside_what_cpuplugd_did() {
    let dir = tempdir();
    let log = fixture("flapping-60s.log");
    let rec = import(
        dir.path(),
        "flapping-60s",
        &["--actions", log.to_str().expect("utf-8")],
    );
    let r = RecordingSource::open(&rec).expect("a recording");
    let p = r.header().imported.clone().expect("imported");
    assert_eq!(p.label(), "sysstat, 60 s");
    assert_eq!(p.actions.len(), 11, "{:?}", p.actions);
    let o = plugtop(&[
        "eval",
        "-c",
        RULES,
        "--replay",
        rec.to_str().expect("utf-8"),
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert_eq!(
        out.matches("decisions are approximate").count(),
        1,
        "said once: {out}"
    );
    assert!(
        out.contains("a 60 s average hides what 1 s rules see"),
        "{out}"
    );
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with('~')).collect();
    assert!(rows.len() > 30, "every decision marked: {out}");
    // The rules flip both ways, and cpuplugd's actions sit beside them.
    assert!(rows.iter().any(|r| r.contains("plug")), "{out}");
    assert!(rows.iter().any(|r| r.contains("unplug")), "{out}");
    assert!(
        out.contains("cpuplugd at 02:04:01: cpu2 will be enabled"),
        "{out}"
    );
    assert!(
        out.contains("cpuplugd at 02:08:01: cpu2 will be disabled"),
        "{out}"
    );
    // The gap 02:20–02:40 stays a gap: no reading inside it.
    let mut r = RecordingSource::open(&rec).expect("a recording");
    let mut stamps = Vec::new();
    while let Some(s) = r.next_sample() {
        stamps.push(s.expect("a sample").stamp.secs() % 86_400);
    }
    assert!(
        !stamps
            .iter()
            .any(|t| (2 * 3600 + 20 * 60 + 1..2 * 3600 + 40 * 60).contains(t)),
        "{stamps:?}"
    );
    assert!(stamps.contains(&(2 * 3600 + 20 * 60)));
    assert!(stamps.contains(&(2 * 3600 + 40 * 60)));
}

#[test]
fn the_import_summary_names_the_gap_and_the_actions() {
    let dir = tempdir();
    let bin = captured(dir.path(), "flapping-60s");
    let sa = sa_file(dir.path());
    let rec = dir.path().join("night.rec");
    let log = fixture("flapping-60s.log");
    let o = run_import(
        &bin,
        &sa,
        &rec,
        &["--actions", log.to_str().expect("utf-8")],
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("imported 41 readings (sysstat, 60 s)"),
        "{out}"
    );
    assert!(
        out.contains("gap: no readings from 2026-11-28 02:20:00 to 2026-11-28 02:40:00"),
        "{out}"
    );
    assert!(out.contains("11 of cpuplugd's actions"), "{out}");
}

/// `plugtop eval` over `rec` with rules whose HOTPLUG is `hotplug`, in a
/// file written in `dir`; the output and the rule file.
fn eval_hotplug(dir: &Path, rec: &Path, update: u32, hotplug: &str) -> (Output, PathBuf) {
    let rules = dir.join("hotplug.conf");
    std::fs::write(
        &rules,
        format!("UPDATE=\"{update}\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"{hotplug}\"\nHOTUNPLUG=\"idle > 50\"\n"),
    )
    .expect("write rules");
    let o = plugtop(&[
        "eval",
        "-c",
        rules.to_str().expect("utf-8"),
        "--replay",
        rec.to_str().expect("utf-8"),
    ]);
    (o, rules)
}

#[test]
fn a_rule_naming_what_sysstat_lacks_is_not_decided() {
    let dir = tempdir();
    let rec = import(dir.path(), "real-1s", &[]);
    let (o, rules) = eval_hotplug(dir.path(), &rec, 1, "meminfo.Shmem > 100");
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("not in this history (sysstat has no `meminfo.Shmem`)"),
        "{out}"
    );
    assert!(
        !out.lines()
            .any(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())),
        "nothing decided: {out}"
    );
    let o = plugtop(&[
        "check",
        rules.to_str().expect("utf-8"),
        "--replay",
        rec.to_str().expect("utf-8"),
    ]);
    // `check` reads against a machine; with a history it says the same.
    let out = text(&o);
    if !out.contains("unexpected argument") {
        assert!(out.contains("not in this history"), "{out}");
    }
}

/// newuser51 #9b: a name sysstat lacks in a memory rule refuses nothing
/// when the memory group is off on that history (no cmm_pages): those
/// rules are never evaluated, so `eval` decides the CPU rules as the
/// screen and `--batch` do, and says why the memory rules are not.
#[test]
fn a_name_sysstat_lacks_in_a_memory_group_that_is_off_refuses_nothing() {
    let dir = tempdir();
    let rec = import(dir.path(), "real-1s", &[]);
    let rules = dir.path().join("both.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 50\"\n\
         CMM_MIN=\"0\"\nCMM_MAX=\"8192\"\nCMM_INC=\"meminfo.MemFree / 40\"\n\
         MEMPLUG=\"meminfo.Shmem > 100\"\nMEMUNPLUG=\"meminfo.MemFree > 1000000\"\n",
    )
    .expect("write rules");
    let rules = rules.to_str().expect("utf-8");
    let rec = rec.to_str().expect("utf-8");
    let o = plugtop(&["eval", "-c", rules, "--replay", rec]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())),
        "the CPU rules decided: {out}"
    );
    assert!(!out.contains("cannot decide"), "{out}");
    let o = plugtop(&["whatif", "--replay", rec, "-c", rules]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn the_line_mode_names_the_history_and_says_once_why_it_is_approximate() {
    let dir = tempdir();
    let rec = import(dir.path(), "flapping-60s", &[]);
    let o = plugtop(&[
        "--replay",
        rec.to_str().expect("utf-8"),
        "-c",
        RULES,
        "--batch",
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("history: sysstat, 60 s"), "{out}");
    assert_eq!(out.matches("decisions are approximate").count(), 1, "{out}");
}

#[test]
fn whatif_and_tune_replay_run_on_an_imported_history() {
    let dir = tempdir();
    let rec = import(dir.path(), "flapping-60s", &[]);
    let rec = rec.to_str().expect("utf-8");
    let o = plugtop(&[
        "whatif",
        "--replay",
        rec,
        "-c",
        "examples/rules/oscillating-damped.conf",
        "--against",
        RULES,
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("reversals"), "{out}");
    let o = plugtop(&[
        "tune", "--replay", rec, "-c", RULES, "--budget", "1", "--whole",
    ]);
    let out = text(&o);
    // Whether a candidate did better decides the status; the workload
    // must have been taken from the history either way.
    assert!(out.contains("as a workload: 40 intervals"), "{out}");
    assert!(out.contains("start "), "{out}");
}

#[test]
fn the_flips_view_shows_the_comparison_that_flipped_on_an_imported_history() {
    use plugtop::control::controller::Mode;
    use plugtop::tui::app::View;
    let dir = tempdir();
    let rec = import(dir.path(), "flapping-60s", &[]);
    let options = plugtop::tui::run::Options {
        rules: Some(RULES.into()),
        root: "/".into(),
        replay: Some(rec),
        mode: Mode::Observe,
        batch: true,
        mono: true,
        interval: None,
        count: None,
        sim: None,
        old_kernel: false,
        tune_budget: None,
        allow_non_zvm: false,
    };
    let (mut app, mut source) = match plugtop::tui::run::prepare(&options) {
        Ok(x) => x,
        Err(e) => panic!("{e}"),
    };
    while let Some(s) = source.next_sample() {
        app.ingest(s.expect("a sample"));
    }
    app.app_mut().selection_mut().show(View::Flips);
    let s = crate::tui_views::screen(&app, 160, 48);
    assert!(s.contains("HOTPLUG false → true"), "{s}");
    assert!(s.contains("CP_ActiveAVG"), "{s}");
    app.app_mut().selection_mut().show(View::Log);
    let s = crate::tui_views::screen(&app, 160, 48);
    assert!(s.contains("approximate"), "{s}");
}

#[test]
fn sadf_missing_names_the_package_and_writes_nothing() {
    let dir = tempdir();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("dir");
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).expect("dir");
    let sa = sa_file(dir.path());
    let rec = out_dir.join("x.rec");
    let o = run_import(&empty, &sa, &rec, &[]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("sadf is not on PATH"), "{out}");
    assert!(out.contains("`sysstat` package"), "{out}");
    only(&out_dir, &[]);
}

/// Runs an import with a stand-in `sadf` running `body`; its message,
/// after checking that it failed and wrote nothing.
fn refused(body: &str, extra: &[&str]) -> String {
    let dir = tempdir();
    let bin = stand_in(dir.path(), body);
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).expect("dir");
    let sa = sa_file(dir.path());
    let rec = out_dir.join("x.rec");
    let o = run_import(&bin, &sa, &rec, extra);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains(sa.to_str().expect("utf-8")),
        "names the file: {out}"
    );
    only(&out_dir, &[]);
    out
}

fn header_then(rest: &str) -> String {
    format!(
        "case \"$1\" in -H) exec /bin/cat '{}';; esac\n{rest}",
        fixture("real-1s.header").display()
    )
}

#[test]
fn a_truncated_sa_file_is_refused_with_its_offset() {
    let out = refused(
        &header_then(&format!(
            "/bin/head -c 4000 '{}'\necho 'End of system activity file unexpected' >&2\nexit 2",
            fixture("real-1s.json").display()
        )),
        &[],
    );
    assert!(out.contains("truncated at byte 16"), "{out}");
}

#[test]
fn an_sa_file_of_another_sysstat_version_is_refused() {
    let out = refused(
        "echo 'Invalid system activity file: sa28' >&2\necho 'File created by sar/sadc from sysstat version 11.2.0' >&2\necho 'Current sysstat version cannot read the format of this file (0x2171)' >&2\nexit 3",
        &[],
    );
    assert!(out.contains("another sysstat version"), "{out}");
    assert!(out.contains("byte 2"), "{out}");
}

#[test]
fn a_garbage_sa_file_is_refused() {
    let out = refused("echo 'Invalid system activity file: sa28' >&2\nexit 3", &[]);
    assert!(out.contains("not an sa file (byte 0)"), "{out}");
}

#[test]
fn a_hanging_sadf_is_stopped_at_the_time_limit() {
    let out = refused(&header_then("exec /bin/sleep 60"), &["--timeout", "0.5"]);
    assert!(out.contains("did not finish within 0.5 s"), "{out}");
}

#[test]
fn sadf_output_that_is_not_sysstat_s_json_is_refused_with_line_and_column() {
    let out = refused(
        &header_then("echo '{\"sysstat\": {\"hosts\": [{\"nodename\": 7'"),
        &[],
    );
    assert!(out.contains("(line ") && out.contains(", column "), "{out}");
    let out = refused(
        &header_then(&format!(
            "/bin/head -c 3000 '{}'",
            fixture("real-1s.json").display()
        )),
        &[],
    );
    assert!(
        out.contains("sadf's JSON does not read as sysstat's"),
        "{out}"
    );
}

#[test]
fn an_existing_output_is_never_replaced() {
    let dir = tempdir();
    let bin = captured(dir.path(), "real-1s");
    let sa = sa_file(dir.path());
    let rec = dir.path().join("kept.rec");
    std::fs::write(&rec, b"precious").expect("write");
    let o = run_import(&bin, &sa, &rec, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(std::fs::read(&rec).expect("read"), b"precious");
}

#[test]
fn an_actions_log_without_cpuplugd_is_refused() {
    let dir = tempdir();
    let log = dir.path().join("messages");
    std::fs::write(&log, "May  1 03:10:22 guest sshd[1]: hello\n").expect("write");
    let bin = captured(dir.path(), "real-1s");
    let sa = sa_file(dir.path());
    let rec = dir.path().join("x.rec");
    let o = run_import(
        &bin,
        &sa,
        &rec,
        &["--actions", log.to_str().expect("utf-8")],
    );
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("no cpuplugd line in 1 lines"), "{out}");
    assert!(!rec.exists());
}

/// A Prometheus answering from series made here: `cpus` CPUs, one point
/// every `step` seconds from `from`, none in `gap`.
struct Canned {
    cpus: u32,
    from: f64,
    points: usize,
    step: f64,
    gap: std::ops::Range<usize>,
    garbage: bool,
}

impl Prometheus for Canned {
    fn instant(&self, _: &str, _: f64) -> Result<PromAnswer<Vec<PromPoint>>, QueryError> {
        Err(QueryError::Transport("not used".into()))
    }

    fn range(
        &self,
        query: &str,
        start: f64,
        end: f64,
        step: f64,
    ) -> Result<PromAnswer<Vec<PromSeries>>, QueryError> {
        if self.garbage && query.starts_with("node_cpu") {
            return plugtop::fleet::query::decode_matrix(b"<html>not the API</html>");
        }
        let sampled = |t: f64| {
            (0..self.points)
                .filter(|i| !self.gap.contains(i))
                .map(|i| self.from + i as f64 * self.step)
                .filter(move |s| *s <= t + 1e-6)
        };
        if let Some(span) = query
            .strip_prefix("count(count_over_time(")
            .and_then(|q| q.rsplit_once('['))
            .and_then(|(_, ms)| ms.strip_suffix("ms]))"))
            .and_then(|ms| ms.parse::<f64>().ok())
        {
            // Where the series has samples: how many in each span.
            let span = span / 1000.0;
            let points = (0..)
                .map(|k| start + f64::from(k) * step)
                .take_while(|t| *t <= end + 1e-6)
                .map(|t| (t, sampled(t).filter(|s| *s > t - span).count() as f64))
                .filter(|(_, n)| *n > 0.0 && self.cpus > 0)
                .collect();
            return Ok(PromAnswer {
                data: vec![PromSeries {
                    labels: Default::default(),
                    points,
                }],
                warnings: Vec::new(),
            });
        }
        let mut data = Vec::new();
        let times: Vec<(usize, f64)> = (0..self.points)
            .filter(|i| !self.gap.contains(i))
            .map(|i| (i, self.from + i as f64 * self.step))
            .filter(|(_, t)| *t >= start - 1e-6 && *t <= end + 1e-6)
            .filter(|(_, t)| ((t - start) / step).fract().abs() < 1e-6)
            .collect();
        let series = |labels: &[(&str, &str)], f: &dyn Fn(usize) -> f64| PromSeries {
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            points: times.iter().map(|(i, t)| (*t, f(*i))).collect(),
        };
        if query.starts_with("plugtop_applied_actions_total") {
            // plugtop plugged a CPU at step 5 and took one away at step 9.
            data.push(series(&[("action", "plug")], &|i| {
                if i >= 5 { 1.0 } else { 0.0 }
            }));
            data.push(series(&[("action", "unplug")], &|i| {
                if i >= 9 { 1.0 } else { 0.0 }
            }));
        } else if query.starts_with("node_cpu_seconds_total") {
            for c in 0..self.cpus {
                let cpu = c.to_string();
                for (mode, share) in [("user", 0.6), ("system", 0.1), ("idle", 0.3)] {
                    let step = self.step;
                    data.push(series(
                        &[
                            ("cpu", &cpu),
                            ("mode", mode),
                            ("__name__", "node_cpu_seconds_total"),
                        ],
                        &move |i| 1000.0 + i as f64 * step * share,
                    ));
                }
            }
        } else if query.starts_with("{__name__=~\"node_memory") {
            data.push(series(
                &[("__name__", "node_memory_MemFree_bytes")],
                &|_| 1024.0 * 1000.0,
            ));
        } else if query.starts_with("node_load1") {
            data.push(series(&[("__name__", "node_load1")], &|_| 1.5));
        } else if query.starts_with("node_procs_running") {
            data.push(series(&[("__name__", "node_procs_running")], &|_| 2.0));
        }
        Ok(PromAnswer {
            data,
            warnings: Vec::new(),
        })
    }
}

fn prom_import(
    canned: &Canned,
    instance: &str,
    rec: &Path,
) -> Result<plugtop::import::Summary, plugtop::import::ImportError> {
    let options = plugtop::import::prometheus::PromOptions {
        instance,
        from: canned.from,
        to: canned.from + (canned.points - 1) as f64 * canned.step,
        step: Some(canned.step),
        url: "http://prom.test:9090",
        plugtop_instance: Some("guest1:9866"),
    };
    plugtop::import::write_recording(rec, Vec::new(), |o| {
        plugtop::import::prometheus::import(canned, &options, o)
    })
}

#[test]
fn node_exporter_series_replay_with_gaps_left_as_gaps() {
    let dir = tempdir();
    let rec = dir.path().join("node.rec");
    let canned = Canned {
        cpus: 4,
        from: 1_700_000_000.0,
        points: 2000,
        step: 60.0,
        gap: 100..110,
        garbage: false,
    };
    let summary = prom_import(&canned, "guest1:9100", &rec).expect("imported");
    assert_eq!(summary.samples, 1990);
    assert_eq!(summary.gaps.len(), 1, "{summary:?}");
    assert_eq!(summary.label, "node_exporter, 60 s");
    // node_exporter here has no guest series: those are absent.
    assert_eq!(summary.absent, ["guest", "guest_nice"]);
    // What plugtop run applied on the guest (its metrics) came along.
    assert_eq!(summary.actions, 2, "{summary:?}");
    let mut r = RecordingSource::open(&rec).expect("a recording");
    let actions = &r.header().imported.as_ref().expect("imported").actions;
    assert_eq!(actions[0].text, "plugtop plugged a CPU");
    assert_eq!(actions[0].at.secs(), 1_700_000_000 + 5 * 60);
    assert_eq!(actions[1].text, "plugtop unplugged a CPU");
    let first = r.next_sample().expect("one").expect("a sample");
    let second = r.next_sample().expect("two").expect("a sample");
    // 4 CPUs × 60 s × 100 ticks.
    assert_eq!(second.ticks.total() - first.ticks.total(), 24_000);
    assert_eq!(*first.online.ids, [0, 1, 2, 3]);
    assert_eq!(first.meminfo.get("MemFree"), Some(1000.0));
    assert_eq!(first.loadavg, 1.5);
    // A rule naming guest time is not decided on a made-up zero.
    let (o, _) = eval_hotplug(dir.path(), &rec, 60, "guest > 1");
    let out = text(&o);
    assert!(
        out.contains("not in this history (node_exporter has no `guest`)"),
        "{out}"
    );
}

#[test]
fn a_prometheus_answering_garbage_or_nothing_writes_nothing() {
    let dir = tempdir();
    let rec = dir.path().join("node.rec");
    let mut canned = Canned {
        cpus: 2,
        from: 1_700_000_000.0,
        points: 10,
        step: 60.0,
        gap: 0..0,
        garbage: true,
    };
    let e = prom_import(&canned, "guest1:9100", &rec).expect_err("garbage");
    let said = e.to_string();
    assert!(
        said.contains(
            "http://prom.test:9090: the query node_cpu_seconds_total{instance=\"guest1:9100\"}"
        ),
        "{said}"
    );
    assert!(said.contains("not the API's JSON"), "{said}");
    canned.garbage = false;
    canned.cpus = 0;
    let e = prom_import(&canned, "nobody:9100", &rec).expect_err("no series");
    assert!(e.to_string().contains("answered no series"), "{e}");
    only(dir.path(), &[]);
}

#[test]
fn devices_and_fifos_are_refused_before_sadf_runs() {
    let dir = tempdir();
    let bin = captured(dir.path(), "real-1s");
    let rec = dir.path().join("x.rec");
    let o = run_import(&bin, Path::new("/dev/zero"), &rec, &[]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("/dev/zero: cannot read it"), "{out}");
    let sa = sa_file(dir.path());
    let o = run_import(&bin, &sa, &rec, &["--actions", "/dev/zero"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("/dev/zero: cannot read it"), "{out}");
    assert!(!rec.exists());
}

#[test]
fn a_prometheus_that_does_not_answer_is_named_with_the_query() {
    let dir = tempdir();
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let rec = dir.path().join("node.rec");
    let url = format!("http://127.0.0.1:{port}");
    let o = plugtop(&[
        "import",
        "prometheus",
        "--prometheus",
        &url,
        "--instance",
        "guest1:9100",
        "--from",
        "2026-11-28T02:00:00Z",
        "--to",
        "2026-11-28T03:00:00Z",
        "--step",
        "60",
        "--timeout",
        "2",
        "-o",
        rec.to_str().expect("utf-8"),
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains(&format!("{url}: the query ")), "{out}");
    assert!(out.contains("node_cpu_seconds_total{"), "{out}");
    assert!(
        out.contains(&format!("nothing listens at {url} (connection refused)")),
        "{out}"
    );
    only(dir.path(), &[]);
}

#[test]
fn a_diagnosis_exercise_s_tally_runs_on_an_imported_history() {
    let dir = tempdir();
    let rec = import(dir.path(), "flapping-60s", &[]);
    let file = plugtop::commands::eval::read_rule_file(Path::new(RULES)).expect("rules");
    let tally = plugtop::train::diagnose::tally(&rec, &file).expect("a tally");
    assert!(tally.changes >= 8, "{tally:?}");
    let culprit = tally.culprit().expect("a comparison flipped");
    assert!(
        culprit.text.contains("CP_ActiveAVG") || culprit.text.contains("CP_idleAVG"),
        "{culprit:?}"
    );
}

/// A node_exporter scraped every `scrape` seconds from `first` to `last`
/// (one CPU), as Prometheus answers the queries `import prometheus`
/// asks over HTTP: each step sees the newest sample up to five minutes
/// old; a count over a range sees the samples in it.
struct Scraped {
    first: f64,
    last: f64,
    scrape: f64,
}

impl Scraped {
    fn samples(&self) -> impl Iterator<Item = f64> + '_ {
        (0..)
            .map(|i| self.first + f64::from(i) * self.scrape)
            .take_while(|t| *t <= self.last)
    }

    /// The newest sample a step at `t` sees.
    fn seen_at(&self, t: f64) -> Option<f64> {
        self.samples()
            .take_while(|s| *s <= t)
            .last()
            .filter(|s| t - s < 300.0)
    }

    fn answer(&self, path: &str, params: &std::collections::HashMap<String, String>) -> Reply {
        let get = |k: &str| -> f64 { params.get(k).and_then(|v| v.parse().ok()).unwrap_or(0.0) };
        let q = params.get("query").cloned().unwrap_or_default();
        if path != "/api/v1/query_range" {
            return Reply::Status(404, "only ranges here".into());
        }
        let (start, end, step) = (get("start"), get("end"), get("step"));
        let steps: Vec<f64> = (0..)
            .map(|k| start + f64::from(k) * step)
            .take_while(|t| *t <= end + 1e-6)
            .collect();
        let series = |labels: &str, f: &dyn Fn(f64) -> Option<f64>| {
            let points: Vec<(f64, f64)> =
                steps.iter().filter_map(|&t| f(t).map(|v| (t, v))).collect();
            (!points.is_empty()).then(|| (labels.to_string(), points))
        };
        let span = q
            .rsplit_once('[')
            .and_then(|(_, ms)| ms.strip_suffix("ms]))"))
            .and_then(|ms| ms.parse::<f64>().ok())
            .map(|ms| ms / 1000.0);
        let found: Vec<(String, Vec<(f64, f64)>)> = if q.starts_with("count(count_over_time(") {
            let span = span.unwrap_or(1.0);
            series("", &|t| {
                let n = self.samples().filter(|s| *s <= t && *s > t - span).count();
                (n > 0).then_some(n as f64)
            })
            .into_iter()
            .collect()
        } else if q.starts_with("timestamp(") {
            series("", &|t| self.seen_at(t)).into_iter().collect()
        } else if q.starts_with("node_cpu_seconds_total{") {
            [("user", 0.4), ("idle", 0.6)]
                .into_iter()
                .filter_map(|(mode, share)| {
                    series(&format!(r#""cpu":"0","mode":"{mode}""#), &|t| {
                        self.seen_at(t).map(|s| (s - self.first) * share + 100.0)
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        Reply::Json(fleet_fake::matrix(found))
    }
}

/// `plugtop import prometheus` from `url` over `from .. from + 3600`.
fn import_hour(url: &str, from: f64, rec: &Path, extra: &[&str]) -> Output {
    let (from, to) = (format!("{from}"), format!("{}", from + 3600.0));
    let mut args = vec![
        "import",
        "prometheus",
        "--prometheus",
        url,
        "--instance",
        "g:9100",
        "--from",
        &from,
        "--to",
        &to,
        "-o",
        rec.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    plugtop(&args)
}

#[test]
fn a_series_that_starts_late_in_the_window_is_imported_at_its_scrape_interval() {
    // newuser51 #7: "the last hour" of an exporter that came up 40
    // minutes into it, scraped every 2 s.
    let dir = tempdir();
    let from = 1_700_000_000.0;
    let late = Scraped {
        first: from + 2400.0,
        last: from + 3600.0,
        scrape: 2.0,
    };
    let fake = fleet_fake::start(move |path, params| late.answer(path, params));
    let rec = dir.path().join("late.rec");
    let o = import_hour(&fake.url, from, &rec, &[]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("imported 601 readings (node_exporter, 2 s)"),
        "{out}"
    );
    assert!(!out.contains("assuming"), "{out}");
    // Scraped every 15 minutes: two samples never 10 minutes apart, so the
    // interval cannot be told; said, with what to do.
    let sparse = Scraped {
        first: from + 2400.0,
        last: from + 3600.0,
        scrape: 900.0,
    };
    let fake = fleet_fake::start(move |path, params| sparse.answer(path, params));
    let rec = dir.path().join("sparse.rec");
    let o = import_hour(&fake.url, from, &rec, &[]);
    let out = text(&o);
    assert!(out.contains("assuming 60 s; give --step"), "{out}");
}

#[test]
fn a_query_prometheus_refuses_is_said_as_prometheus_said_it() {
    // newuser51 #7: too many points is Prometheus's refusal, not "no
    // series, check --instance".
    let dir = tempdir();
    let from = 1_700_000_000.0;
    let well = Scraped {
        first: from,
        last: from + 3600.0,
        scrape: 1.0,
    };
    let fake = fleet_fake::start(move |path, params| {
        if params
            .get("query")
            .is_some_and(|q| q.starts_with("node_cpu_seconds_total{"))
        {
            return Reply::Status(
                400,
                r#"{"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"}"#.into(),
            );
        }
        well.answer(path, params)
    });
    let rec = dir.path().join("refused.rec");
    let o = import_hour(&fake.url, from, &rec, &["--step", "0.001"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains("Prometheus refused the query (bad_data): exceeded maximum resolution of 11,000 points per timeseries"),
        "{out}"
    );
    assert!(out.contains("; give a larger --step"), "{out}");
    assert!(!out.contains("check --instance"), "{out}");
    only(dir.path(), &[]);
}

/// adv52 #8: a step below a millisecond is said as the minimum, and times
/// past what Prometheus's API takes are refused before any query (the
/// address answers nothing: no query is made).
#[test]
fn prometheus_arguments_out_of_range_are_refused_with_the_limit() {
    let dir = tempdir();
    let rec = dir.path().join("never.rec");
    for (from, to, step, says) in [
        (
            "0",
            "3600",
            "1e-9",
            "--step 1e-9 is shorter than 0.001 s, the shortest step",
        ),
        (
            "0",
            "99999999999999999999",
            "60",
            "--to 1e20 is beyond the times Prometheus takes",
        ),
        (
            "1e20",
            "2e20",
            "60",
            "--from 1e20 is beyond the times Prometheus takes",
        ),
        (
            "0",
            "3600",
            "0",
            "--step must be a positive number of seconds, not 0",
        ),
    ] {
        let (from, to, step) = (
            format!("--from={from}"),
            format!("--to={to}"),
            format!("--step={step}"),
        );
        let o = plugtop(&[
            "import",
            "prometheus",
            "--prometheus",
            "http://127.0.0.1:9",
            "--instance",
            "guest1:9100",
            &from,
            &to,
            &step,
            "-o",
            rec.to_str().expect("utf-8"),
        ]);
        let out = text(&o);
        assert_eq!(o.status.code(), Some(2), "{out}");
        assert!(out.contains(says), "{says}: {out}");
        assert!(!out.contains("the query"), "{out}");
    }
    only(dir.path(), &[]);
}
