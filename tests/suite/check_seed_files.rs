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

/// `narrow-hysteresis` on every example file. Only oscillating-tight.conf
/// switches on spare CPU time less than one CPU apart (0.3 and 0.8): it is
/// the oscillating incident's file. The paper's real-load rules and their
/// copies in the memory configs keep 1.07 (0.08 and 1.15), the damped fix
/// 1.1 (0.6 and 1.7); cpu-loadavg.conf's loadavg offsets add up to exactly
/// 1 and its idle pair (40 apart) is a HOTPLUG conjunct, which never
/// decides alone.
#[test]
fn only_the_tight_oscillating_file_has_thresholds_less_than_one_cpu_apart() {
    let facts = RootReader::new().facts(Path::new(NEW));
    let mut dir: Vec<_> = std::fs::read_dir("examples/rules")
        .expect("examples/rules")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "conf"))
        .collect();
    dir.sort();
    assert!(dir.len() >= 15, "{dir:?}");
    let mut warned = Vec::new();
    for path in &dir {
        let file = read_rule_file(path).expect("example rule file");
        let outcome = plugtop::rules::load(&file, &facts);
        for d in outcome
            .diagnostics
            .iter()
            .filter(|d| d.code == plugtop::rules::hysteresis::CODE)
        {
            let p = file.position(d.span.start as usize);
            warned.push(format!(
                "{}:{}:{}: {}",
                path.file_name().unwrap_or_default().to_string_lossy(),
                p.line,
                p.column,
                d.message
            ));
        }
    }
    assert_eq!(
        warned,
        [
            "oscillating-tight.conf:12:10: HOTPLUG (12:10) and HOTUNPLUG (13:12) switch on \
          `(1 - CP_Active) * onumcpus` and `CP_idle * onumcpus` (equal at a steady load) 0.5 \
          apart, less than one CPU (1): at a steady load between them the guest can plug and \
          unplug every interval"
        ]
    );
    // The pairs behind the silence are seen, with the margins above.
    for (file, gap) in [
        ("cpu-real-load.conf", 1.07),
        ("recommended-default.conf", 1.07),
        ("oscillating-damped.conf", 1.1),
    ] {
        let text = read_rule_file(Path::new(&format!("examples/rules/{file}"))).expect("example");
        let outcome = plugtop::rules::load(&text, &facts);
        let found = plugtop::rules::hysteresis::gaps(&outcome.rules);
        assert_eq!(found.len(), 1, "{file}: {found:?}");
        assert!((found[0].gap - gap).abs() < 1e-9, "{file}: {found:?}");
        assert_eq!(found[0].unit, 1.0, "{file}");
    }
}
