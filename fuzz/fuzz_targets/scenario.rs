//! The scenario parser on any text; a scenario that parses is simulated for
//! a few minutes of guest time with the built-in rules.
#![no_main]

use libfuzzer_sys::fuzz_target;
use plugtop::sim::Scenario;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(scenario) = Scenario::parse("fuzz", text) else {
        return;
    };
    let _ = scenario.length();
    for t in [0.0, 1.0, 59.5, 3600.0, f64::MAX] {
        let _ = scenario.phase_at(t);
    }
    let mut guest = plugtop::sim::model::Guest::new(&scenario, false);
    for _ in 0..120 {
        guest.advance(1.0);
    }
});
