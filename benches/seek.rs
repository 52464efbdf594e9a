//! Reading a replay ahead (`J 18:00`, `G`): the 24-hour recording of the
//! daytrader scenario, one reading every 5 s (17,281 readings), read to
//! hour 18 with every reading on the way decided, and the screen given
//! what it keeps. Issue 25 asks for under a second.
//!
//! Run: `cargo bench --bench seek`

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use plugtop::control::controller::Mode;
use plugtop::kernel::Stamp;
use plugtop::sim::run::SimOptions;
use plugtop::tui::control::read_ahead::ReadAhead;
use plugtop::tui::run::{Options, prepare};
use plugtop::tui::seek::SeekTo;

/// Records the day into `path`.
fn record_a_day(path: &Path) {
    let scenario =
        match plugtop::sim::Scenario::load(Path::new("examples/scenarios/daytrader.toml")) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        };
    let options = SimOptions {
        duration: Some(24.0 * 3600.0),
        interval: Some(5.0),
        old_kernel: false,
        record: Some(path.to_path_buf()),
        keep_timeline: false,
        flap: plugtop::control::flap::FlapConfig::default(),
    };
    if let Err(e) = plugtop::sim::run::simulate(
        &scenario,
        Path::new("examples/rules/recommended-modern.conf"),
        &options,
        &mut |_| {},
        &mut |_| {},
    ) {
        panic!("{e}");
    }
}

fn bench(c: &mut Criterion) {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("{e}"),
    };
    let path = dir.path().join("day.rec");
    record_a_day(&path);
    let options = Options {
        rules: Some("examples/rules/recommended-modern.conf".into()),
        root: "/".into(),
        replay: Some(path),
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
    let hour_18 = SeekTo::At(Stamp::new(plugtop::sim::model::EPOCH + 18 * 3600, 0));
    let mut group = c.benchmark_group("seek");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("24h-recording/to-hour-18", |b| {
        b.iter_batched(
            || match prepare(&options) {
                Ok(x) => x,
                Err(e) => panic!("{e}"),
            },
            |(mut local, mut source)| {
                let mut passage = ReadAhead::new(hour_18);
                passage.run(local.core_mut(), source.as_mut(), None);
                for update in passage.finish() {
                    local.app_mut().apply(update);
                }
                black_box(local.app().readings())
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
