//! One interval of the white paper's recommended rule file, decided from a
//! filled history without a trace (the headless path), and the same with
//! ten times as many rule nodes to show the cost grows linearly.
//!
//! Run: `cargo bench --bench interval`

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use plugtop::engine::Engine;
use plugtop::kernel::Source;
use plugtop::kernel::snapshots::SnapshotSource;
use plugtop::rules::eval::{NoTrace, Trace};
use plugtop::rules::{SourceFile, load};

const SNAPSHOTS: &str = "tests/fixtures/series/oldkernel";

/// The recommended file with every rule's expression repeated `n` times, so
/// the decision is the same and the node count grows `n`-fold.
fn scaled_rules(n: usize) -> String {
    let base =
        std::fs::read_to_string("examples/rules/recommended-default.conf").unwrap_or_default();
    let repeat = |term: &str| vec![term; n].join("+");
    let mut out = String::new();
    for line in base.lines() {
        let name = line.split('=').next().unwrap_or("").trim();
        let scaled = match name {
            "HOTPLUG" => format!(
                "HOTPLUG=\"({}) < 0.08 * {n}\"",
                repeat("((1-CP_ActiveAVG)*onumcpus)")
            ),
            "HOTUNPLUG" => format!(
                "HOTUNPLUG=\"({}) > 1.15 * {n}\"",
                repeat("(CP_idleAVG*onumcpus)")
            ),
            "CMM_INC" => format!("CMM_INC=\"({}) / {n}\"", repeat("meminfo.MemFree/40")),
            "CMM_DEC" => format!("CMM_DEC=\"({}) / {n}\"", repeat("meminfo.MemTotal/40")),
            "MEMPLUG" => format!("MEMPLUG=\"({}) > 20 * {n}\"", repeat("pgscanrate")),
            "MEMUNPLUG" => format!(
                "MEMUNPLUG=\"({}) > (meminfo.MemTotal / 10) * {n}\"",
                repeat("(meminfo.MemFree+avail_cache)")
            ),
            _ => line.to_string(),
        };
        out.push_str(&scaled);
        out.push('\n');
    }
    out
}

fn filled_engine(rules_text: String) -> Engine {
    let mut source = match SnapshotSource::open(Path::new(SNAPSHOTS)) {
        Ok(s) => s,
        Err(e) => panic!("benchmark snapshots: {e}"),
    };
    let facts = source.facts();
    let outcome = load(
        &SourceFile::new("bench.conf", rules_text.into_bytes()),
        &facts,
    );
    assert!(outcome.refusal.is_none(), "{:?}", outcome.refusal);
    eprintln!("rule nodes: {}", outcome.rules.nodes.len());
    let mut engine = Engine::new(Arc::new(outcome.rules));
    while let Some(Ok(sample)) = source.next_sample() {
        let _ = engine.push(&sample, &mut NoTrace);
    }
    assert!(engine.decide(&mut NoTrace).is_some(), "history not filled");
    engine
}

fn bench(c: &mut Criterion) {
    let mut one = filled_engine(scaled_rules(1));
    c.bench_function("interval/recommended/no-trace", |b| {
        b.iter(|| black_box(one.decide(&mut NoTrace)))
    });
    let mut trace = Trace::new();
    c.bench_function("interval/recommended/trace", |b| {
        b.iter(|| black_box(one.decide(&mut trace)))
    });
    let mut ten = filled_engine(scaled_rules(10));
    c.bench_function("interval/recommended-x10/no-trace", |b| {
        b.iter(|| black_box(ten.decide(&mut NoTrace)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
