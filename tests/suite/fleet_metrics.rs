//! What `plugtop run` adds to its exposition for the fleet: faults by
//! rule, the flapping period, the last change of decision and why.

use plugtop::control::controller::Mode;

#[test]
fn a_rule_that_faults_is_counted_by_name() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rules = dir.path().join("faulting.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\n\
         HOTPLUG=\"(1 / (onumcpus - onumcpus)) > 1\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules");
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("root");
    let (_, text) = crate::metrics::run_rules_in(&root, Mode::Observe, &rules.to_string_lossy());
    let line = text
        .lines()
        .find(|l| l.starts_with("plugtop_rule_faults_total{rule=\"HOTPLUG\"}"))
        .unwrap_or_default();
    let count: f64 = line
        .rsplit(' ')
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    assert!(count > 0.0, "{text}");
    assert!(
        text.contains("plugtop_rule_faults_total{rule=\"HOTUNPLUG\"} 0"),
        "every rule's series exists from the start"
    );
}

#[test]
fn a_flapping_guest_says_its_change_and_why() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (_, text) = crate::metrics::run_rules_in(
        dir.path(),
        Mode::Auto,
        "examples/rules/oscillating-tight.conf",
    );
    let change = text
        .lines()
        .find(|l| l.starts_with("plugtop_last_change_timestamp_seconds{why="))
        .unwrap_or_default();
    assert!(
        change.contains("HOTPLUG") || change.contains("HOTUNPLUG"),
        "{text}"
    );
    assert!(text.contains("plugtop_flap_period_seconds "), "{text}");
}
