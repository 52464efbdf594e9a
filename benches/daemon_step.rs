//! What `plugtop run` does with a reading once it is read, per interval, in
//! autonomous mode: the session's step (the decision, the incident watch
//! with its feedback-loop check, the controller's writes to a guest that
//! accepts them) and the log lines the step makes. The readings follow the
//! cost harness's load script (`../shared/tools/cpuplugd-cost`: busy 20 s,
//! idle 30 s, ...) on 4 CPUs, with the CMM pool growing out of MemFree as
//! `recommended-modern.conf` asks, so the checks run as they do there.
//!
//! Run: `cargo bench --bench daemon_step`. For where the instructions go:
//! `valgrind --tool=callgrind target/release/deps/daemon_step-* --bench
//! --profile-time 5`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use plugtop::control::controller::Mode;
use plugtop::control::flap::FlapConfig;
use plugtop::control::log_entries::{Detail, step_lines};
use plugtop::control::session::Session;
use plugtop::kernel::actuator::{ActError, Actuator};
use plugtop::kernel::cpu_choice::CpuChange;
use plugtop::kernel::cpulist::CpuList;
use plugtop::kernel::fields::{FieldTable, Layout};
use plugtop::kernel::{CpuTicks, ProcBytes, Sample, Stamp, SystemFacts};
use plugtop::rules::{RuleSet, SourceFile, load};

const RULES: &str = "examples/rules/recommended-modern.conf";
const CPUS: u32 = 4;
const INTERVALS: usize = 600;

/// A guest that takes every write: the bench measures plugtop, not sysfs.
struct Obliging {
    online: u32,
}

impl Actuator for Obliging {
    fn plug(&mut self, _failures: &mut Vec<String>) -> Result<u32, ActError> {
        self.online += 1;
        Ok(self.online - 1)
    }
    fn unplug(&mut self, _failures: &mut Vec<String>) -> Result<u32, ActError> {
        self.online = self.online.saturating_sub(1).max(1);
        Ok(self.online)
    }
    fn set_pool(&mut self, _pages: i64) -> Result<(), ActError> {
        Ok(())
    }
    fn set_online(&mut self, wanted: &[u32], _failures: &mut Vec<String>) -> Result<(), ActError> {
        self.online = u32::try_from(wanted.len()).unwrap_or(CPUS);
        Ok(())
    }
    fn would_take(&self, _change: CpuChange, _count: usize) -> Vec<u32> {
        Vec::new()
    }
}

fn rules() -> (Arc<RuleSet>, SourceFile) {
    let text = std::fs::read(RULES).unwrap_or_default();
    let file = SourceFile::new(RULES, text);
    let facts = SystemFacts {
        present_cpus: Ok(CPUS),
        cmm_pages: true,
        zvm_guest: Some(true),
        meminfo_names: None,
        vmstat_names: None,
        origin: "the bench".to_string(),
        history: None,
    };
    let outcome = load(&file, &facts);
    assert!(outcome.refusal.is_none(), "{:?}", outcome.refusal);
    (Arc::new(outcome.rules), file)
}

/// The harness's readings: CPUs plugged and unplugged as the rules would,
/// each online CPU busy or idle by the script, the pool growing by
/// MemFree/40 a step while MEMUNPLUG holds, out of MemFree.
fn readings() -> Vec<Arc<Sample>> {
    let meminfo_layout = Arc::new(Layout::of(["MemTotal", "MemFree", "Cached", "Shmem"]));
    let vmstat_layout = Arc::new(Layout::of(["pgscan_direct"]));
    let total_kib = 4_194_304.0;
    let mut free_kib: f64 = 3_000_000.0;
    let mut pool: i64 = 0;
    let mut online = 2u32;
    let mut ticks = [0u64; 10];
    let mut out = Vec::with_capacity(INTERVALS);
    for second in 0..INTERVALS {
        let busy = matches!(second % 100, 0..20 | 50..70);
        let hz = 100 * u64::from(online);
        let (user, idle) = if busy {
            (hz, 0)
        } else {
            (hz / 50, hz - hz / 50)
        };
        ticks[0] += user;
        ticks[3] += idle;
        out.push(Arc::new(Sample {
            stamp: Stamp::new(1_700_000_000 + second as i64, 0),
            ticks: CpuTicks::from_columns(ticks),
            per_cpu: (0..online).map(|c| (c, CpuTicks::default())).collect(),
            loadavg: 1.0,
            runnable: 1.0,
            loadavg_text: None,
            meminfo: FieldTable::new(
                Arc::clone(&meminfo_layout),
                vec![total_kib, free_kib, 200_000.0, 10_000.0],
            ),
            vmstat: FieldTable::new(Arc::clone(&vmstat_layout), vec![0.0]),
            online: CpuList::first(online),
            present: CpuList::first(CPUS),
            possible: Some(CpuList::first(CPUS)),
            cpus: Default::default(),
            cmm_pages: Some(pool),
            polarization: None,
            proc_bytes: ProcBytes::default(),
        }));
        if free_kib + 190_000.0 > total_kib / 10.0 {
            let grow = (free_kib / 40.0) as i64;
            pool = (pool + grow).min(1_245_184);
            free_kib = (free_kib - grow as f64 * 4.0).max(0.0);
        }
        online = if busy {
            (online + 1).min(CPUS)
        } else {
            (online - 1).max(1)
        };
    }
    out
}

fn bench(c: &mut Criterion) {
    let (rules, file) = rules();
    let readings = readings();
    c.bench_function("daemon/step+log/recommended-modern/600-intervals", |b| {
        b.iter_batched(
            || {
                Session::new(
                    Arc::clone(&rules),
                    file.clone(),
                    Mode::Auto,
                    FlapConfig::default(),
                )
            },
            |mut session| {
                let mut guest = Obliging { online: 2 };
                let mut lines = 0;
                for r in &readings {
                    let step = session.step(Arc::clone(r), &mut guest);
                    lines += step_lines(&step, &session, Detail::Quiet, false).len();
                }
                black_box(lines)
            },
            BatchSize::LargeInput,
        )
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
