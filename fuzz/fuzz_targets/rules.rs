//! The rule loader on any bytes: load, render every diagnostic, and when the
//! file loads, evaluate a few intervals of a fixed guest with a full trace
//! and draw it. Nothing may panic, hang or allocate without bound.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use plugtop::engine::Engine;
use plugtop::kernel::Sample;
use plugtop::kernel::root::RootReader;
use plugtop::report::trace;
use plugtop::rules::eval::Trace;
use plugtop::rules::{RuleKind, SourceFile, SystemFacts, load, render};

fn samples() -> &'static [Sample] {
    static SAMPLES: OnceLock<Vec<Sample>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/roots/newkernel");
        let mut reader = RootReader::new();
        (0..3)
            .filter_map(|i| {
                reader
                    .read(root.as_ref(), plugtop::kernel::Stamp::new(i, 0))
                    .ok()
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let facts = SystemFacts {
        present_cpus: Ok(4),
        cmm_pages: true,
        zvm_guest: Some(true),
        meminfo_names: None,
        vmstat_names: None,
        origin: "fuzz".into(),
        history: None,
    };
    let file = SourceFile::new("fuzz.conf", data.to_vec());
    let outcome = load(&file, &facts);
    let _ = render::text(&file, &outcome.diagnostics);
    let _ = render::summary(&file, &outcome);
    if outcome.refusal.is_some() {
        return;
    }
    let rules = Arc::new(outcome.rules);
    let mut engine = Engine::new(Arc::clone(&rules));
    let mut traces = Trace::new();
    for sample in samples() {
        let _ = engine.push(sample, &mut traces);
        for kind in RuleKind::ALL {
            let _ = trace::rule(&rules, &file, &traces, kind);
            let _ = trace::explain(&rules, &file, &traces, kind);
            let _ = trace::rows(&rules, &file, &traces, kind, &|_| true);
        }
    }
});
