//! The integration tests, as one test binary: each of the 40-odd files
//! used to be a binary of its own, and linking the whole crate into each
//! was most of the build. Every module tests one part through the public
//! API or the real binary (`CARGO_BIN_EXE_plugtop`); `common` builds the
//! fake roots. `tests/panic_restore.rs` stays a binary of its own: the
//! write stop it tests is process-wide.

// The 100-line rule (clippy's `too_many_lines`, clippy.toml) is for src/:
// a test that walks one scenario end to end reads best whole.
#![allow(clippy::too_many_lines)]

#[path = "../common/mod.rs"]
mod common;

/// Asserts `value` against `tests/snapshots/<file>__<name>.snap`, where the
/// snapshot was kept while `<file>` was a test binary of its own (insta
/// would otherwise file it under `tests/suite/snapshots/` with the module
/// path in its name).
macro_rules! assert_snapshot_of {
    ($file:literal, $name:expr, $value:expr $(,)?) => {
        insta::with_settings!(
            {
                snapshot_path => "../snapshots",
                prepend_module_to_snapshot => false,
            },
            {
                insta::assert_snapshot!(format!("{}__{}", $file, $name), $value);
            }
        )
    };
}

mod actuator;
mod arming_later;
mod check_findings;
mod check_hysteresis;
mod check_seed_files;
mod chroot_paths;
mod chroot_reads;
mod cli;
mod cli_width;
mod compiled_props;
mod conformance;
mod cpu_meters;
mod created_files;
mod cut_text;
mod diagnostic_codes;
mod docs_layout;
mod edge_props;
mod error_chain;
mod failure_policy;
mod fleet_batch;
mod fleet_fake;
mod fleet_hostile;
mod fleet_metrics;
mod fleet_pty;
mod fleet_rules_root;
mod fleet_screen;
mod help_keys;
mod hostile_files;
mod hostile_inputs;
mod hostile_journal;
mod hostile_reads;
mod hostile_roots;
mod hostile_serve;
mod huge_update;
mod import;
mod incident;
mod keep_edits;
mod lifecycle;
mod loadavg_scan;
mod log_readers;
mod lsp;
mod memory_verdict;
mod metrics;
mod metrics_failures;
mod metrics_files;
mod metrics_hostile;
mod one_loop;
mod parser_props;
mod pool_handoff;
mod purity;
mod recorded_workload;
mod recording;
mod replay_streaming;
mod roots;
mod run_e2e;
mod run_exe;
mod serve_end;
mod service;
mod sim_cli;
mod sim_validation;
mod step_confirm;
mod stop_signals;
mod structure;
mod terminal_text;
mod time_pty;
mod train_course;
mod train_grade;
mod train_pty;
mod train_screen;
mod tui_views;
mod tune_cli;
mod ui_pty;
