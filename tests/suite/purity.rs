//! Evaluating must not read the clock or any file: the engine and the rule
//! evaluator get everything through their arguments. This looks at their
//! source for the ways Rust reaches the clock or the file system.

const PURE: [&str; 5] = [
    "src/engine.rs",
    "src/rules/eval.rs",
    "src/rules/fpu.rs",
    "src/rules/expr.rs",
    "src/rules/print.rs",
];

const FORBIDDEN: [&str; 10] = [
    "std::fs",
    "std::time",
    "SystemTime",
    "Instant",
    "File::open",
    "File::create",
    "OpenOptions",
    "std::env",
    "std::process",
    "std::net",
];

#[test]
fn the_evaluation_path_touches_no_clock_and_no_file() {
    for path in PURE {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => panic!("{path}: {e}"),
        };
        for word in FORBIDDEN {
            assert!(!text.contains(word), "{path} mentions {word}");
        }
    }
}
