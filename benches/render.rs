//! Drawing one full frame of the UI for a 64-CPU and a 256-CPU guest
//! with the paper's recommended rules, into an in-memory terminal (the
//! big guests' CPU panel is the compact meters; the 256 at 160×48 is
//! issue 25's "frame under 1 ms").
//!
//! Run: `cargo bench --bench render`

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use plugtop::control::controller::Mode;
use plugtop::kernel::cpulist::CpuList;
use plugtop::kernel::snapshots::SnapshotSource;
use plugtop::kernel::{CpuTicks, Source, Stamp};
use plugtop::rules::{SourceFile, load};
use plugtop::tui::app::{SourceLabel, View};
use plugtop::tui::local::Local;
use plugtop::tui::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// The fixture series stretched to `cpus` CPUs, each busy its own share.
fn app_with_cpus(cpus: u32) -> Local {
    let mut source = match SnapshotSource::open(Path::new("tests/fixtures/series/oldkernel")) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    let facts = source.facts();
    let text = std::fs::read("examples/rules/recommended-default.conf").unwrap_or_default();
    let file = SourceFile::new("recommended-default.conf", text);
    let outcome = load(&file, &facts);
    let mut app = Local::new(
        Arc::new(outcome.rules),
        file,
        SourceLabel::Live("/".into()),
        Mode::Observe,
    );
    let mut step = 0u64;
    while let Some(Ok(mut s)) = source.next_sample() {
        step += 1;
        s.per_cpu = (0..cpus)
            .map(|i| {
                let k = u64::from(i) + 1;
                (
                    i,
                    CpuTicks {
                        user: step * 50 * k,
                        system: step * 20,
                        idle: step * 900,
                        ..CpuTicks::default()
                    },
                )
            })
            .collect();
        s.online = CpuList {
            ids: (0..cpus).collect(),
            count: cpus as i32,
        };
        s.present = s.online.clone();
        s.stamp = Stamp::new(1_700_000_000 + step as i64, 0);
        app.ingest(s);
    }
    app
}

fn bench(c: &mut Criterion) {
    for cpus in [64, 256] {
        let app = app_with_cpus(cpus);
        for (w, h) in [(80u16, 24u16), (160, 48)] {
            let mut terminal = match Terminal::new(TestBackend::new(w, h)) {
                Ok(t) => t,
                Err(e) => panic!("{e}"),
            };
            c.bench_function(&format!("render/overview/{cpus}-cpus/{w}x{h}"), |b| {
                b.iter(|| black_box(terminal.draw(|f| view::draw(f, app.app())).is_ok()))
            });
        }
    }
    let mut trace = app_with_cpus(64);
    trace.app_mut().selection_mut().show(View::Rules);
    let mut terminal = match Terminal::new(TestBackend::new(160, 48)) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    c.bench_function("render/trace/160x48", |b| {
        b.iter(|| black_box(terminal.draw(|f| view::draw(f, trace.app())).is_ok()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
