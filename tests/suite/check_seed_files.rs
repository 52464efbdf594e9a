//! `plugtop check` on every rule file of the white paper, against the
//! kernels the conformance snapshots come from: what a user sees, whole.

use std::path::Path;

use plugtop::commands::check::{self, DiagnosticFormat};
use plugtop::commands::eval::read_rule_file;
use plugtop::kernel::root::RootReader;

fn check_text(rule_file: &str, root: &str) -> (String, check_status::Status) {
    let file = read_rule_file(Path::new(rule_file)).expect("example rule file");
    let facts = RootReader::new().facts(Path::new(root));
    let mut out = Vec::new();
    let status =
        check::run(&file, &facts, DiagnosticFormat::Text, &mut out).expect("writing to memory");
    (String::from_utf8_lossy(&out).into_owned(), status)
}

mod check_status {
    pub use plugtop::commands::Status;
}

const NEW: &str = "tests/fixtures/roots/newkernel";
const OLD: &str = "tests/fixtures/roots/oldkernel";

macro_rules! seed {
    ($name:ident, $file:literal, $root:expr) => {
        #[test]
        fn $name() {
            let (text, _) = check_text(concat!("examples/rules/", $file), $root);
            assert_snapshot_of!("check_seed_files", stringify!($name), text);
        }
    };
}

seed!(
    recommended_default_new_kernel,
    "recommended-default.conf",
    NEW
);
seed!(
    recommended_default_old_kernel,
    "recommended-default.conf",
    OLD
);
seed!(
    recommended_modern_new_kernel,
    "recommended-modern.conf",
    NEW
);
seed!(cpu_loadavg, "cpu-loadavg.conf", NEW);
seed!(cpu_real_load, "cpu-real-load.conf", NEW);
seed!(memory_config_1, "memory-config-1.conf", NEW);
seed!(memory_config_2, "memory-config-2.conf", NEW);
seed!(memory_config_3, "memory-config-3.conf", NEW);
seed!(memory_config_4, "memory-config-4.conf", NEW);
seed!(memory_config_5, "memory-config-5.conf", NEW);
seed!(memory_config_7, "memory-config-7.conf", NEW);
seed!(memory_config_8, "memory-config-8.conf", NEW);
seed!(memory_config_9, "memory-config-9.conf", NEW);
seed!(memory_config_10, "memory-config-10.conf", NEW);

#[test]
fn config_1_is_refused_with_a_suggestion_for_the_space() {
    let (text, status) = check_text("examples/rules/memory-config-1.conf", OLD);
    assert_eq!(status, check_status::Status::Failed);
    assert!(
        text.contains("memory-config-1.conf:27:25: error: unknown name `meminfoBuffers`"),
        "{text}"
    );
    assert!(text.contains("write `meminfo.Buffers`"), "{text}");
    assert!(text.contains("cpuplugd would refuse it"), "{text}");
}

#[test]
fn config_5_old_names_are_errors_on_a_new_kernel_only() {
    let (new, new_status) = check_text("examples/rules/memory-config-5.conf", NEW);
    assert_eq!(new_status, check_status::Status::Failed);
    assert!(
        new.contains("replace the sum with `vmstat.pgscan_direct[0]`"),
        "{new}"
    );
    let (old, old_status) = check_text("examples/rules/memory-config-5.conf", OLD);
    assert_eq!(old_status, check_status::Status::Ok, "{old}");
}

#[test]
fn json_format_gives_lines_and_columns() {
    let file = read_rule_file(Path::new("examples/rules/memory-config-1.conf")).expect("example");
    let facts = RootReader::new().facts(Path::new(OLD));
    let mut out = Vec::new();
    check::run(&file, &facts, DiagnosticFormat::Json, &mut out).expect("writing to memory");
    let v: serde_json::Value = serde_json::from_slice(&out).expect("valid JSON");
    let first = &v[0];
    assert_eq!(first["line"], 27);
    assert_eq!(first["column"], 25);
    assert_eq!(first["severity"], "error");
    assert_eq!(first["code"], "unknown-name");
    assert_eq!(first["replacement"], "meminfo.Buffers");
    assert_eq!(first["daemon"], "refuses_to_load");
}
