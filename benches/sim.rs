//! Speed of the simulator: a whole 12.5-minute scenario (daytrader) under
//! the recommended rules, headless and as fast as possible, and one model
//! second on its own.
//!
//! Run: `cargo bench --bench sim`

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use plugtop::sim::run::{SimOptions, simulate};
use plugtop::sim::{Guest, Scenario};

fn daytrader() -> Scenario {
    match Scenario::load(Path::new("examples/scenarios/daytrader.toml")) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

fn whole_run(c: &mut Criterion) {
    let scenario = daytrader();
    let rules = Path::new("examples/rules/recommended-modern.conf");
    c.bench_function("sim daytrader 12:30, recommended-modern", |b| {
        b.iter(|| {
            let outcome = simulate(
                &scenario,
                rules,
                &SimOptions::default(),
                &mut |_| {},
                &mut |_| {},
            );
            black_box(outcome.map(|o| o.report.intervals))
        })
    });
}

fn one_second(c: &mut Criterion) {
    let scenario = daytrader();
    let mut guest = Guest::new(&scenario, false);
    guest.advance(120.0);
    c.bench_function("model: advance 1 s (10 steps) and sample", |b| {
        b.iter(|| {
            let mut g = guest.clone();
            g.advance(1.0);
            black_box(g.sample())
        })
    });
}

criterion_group!(benches, whole_run, one_second);
criterion_main!(benches);
