//! Individual findings of `plugtop check`: where they point and what they say.

use plugtop::rules::{Diagnostic, Severity, SourceFile, SystemFacts, load};

fn facts() -> SystemFacts {
    SystemFacts {
        present_cpus: Ok(4),
        cmm_pages: true,
        meminfo_names: Some(vec!["MemFree".into(), "MemTotal".into(), "Cached".into()]),
        vmstat_names: Some(vec!["pgscan_direct".into(), "pgscan_kswapd".into()]),
        origin: "/".into(),
    }
}

const HEAD: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\n";

/// Where a finding is: line, column, severity and code.
type Spot = (usize, usize, Severity, &'static str);

/// Every finding's spot, plus the findings.
fn findings(body: &str) -> (Vec<Spot>, Vec<Diagnostic>, SourceFile) {
    let file = SourceFile::new("t.conf", format!("{HEAD}{body}").into_bytes());
    let outcome = load(&file, &facts());
    let spots = outcome
        .diagnostics
        .iter()
        .filter(|d| !d.span.is_file())
        .map(|d| {
            let p = file.position(d.span.start as usize);
            (p.line, p.column, d.severity, d.code)
        })
        .collect();
    (spots, outcome.diagnostics, file)
}

fn has(spots: &[Spot], want: Spot) -> bool {
    spots.contains(&want)
}

#[test]
fn foreign_operators_are_named_with_their_replacement() {
    let (spots, diags, _) = findings("HOTPLUG=\"loadavg > 1 && idle < 10\"\nHOTUNPLUG=\"0\"\n");
    assert!(
        has(&spots, (4, 22, Severity::Error, "foreign-operator")),
        "{spots:?}"
    );
    let d = diags.iter().find(|d| d.code == "foreign-operator");
    assert_eq!(d.and_then(|d| d.replacement.clone()).as_deref(), Some("&"));
}

#[test]
fn positions_point_at_the_original_text_not_the_stripped_one() {
    // cpuplugd strips the tabs and spaces; the caret must still land on `onumcpu`.
    let (spots, _, _) = findings("HOT PLUG\t=\t\" 1 +\tonumcpu \"\nHOTUNPLUG=\"0\"\n");
    assert!(
        has(&spots, (4, 18, Severity::Error, "unknown-name")),
        "{spots:?}"
    );
}

#[test]
fn variables_defined_below_the_rule_are_explained() {
    let (spots, diags, _) = findings("HOTPLUG=\"thr > 1\"\nthr=\"onumcpus\"\nHOTUNPLUG=\"0\"\n");
    assert!(
        has(&spots, (4, 10, Severity::Error, "unknown-name")),
        "{spots:?}"
    );
    let help = diags
        .iter()
        .find_map(|d| d.help.clone())
        .unwrap_or_default();
    assert!(help.contains("defined on line 5"), "{help}");
}

#[test]
fn truth_values_used_as_numbers_are_errors_before_running() {
    let (spots, diags, _) =
        findings("HOTPLUG=\"-loadavg + 5 < 0\"\nHOTUNPLUG=\"1 < 2 < onumcpus\"\n");
    assert!(
        has(&spots, (4, 10, Severity::Error, "truth-as-number")),
        "{spots:?}"
    );
    assert!(
        has(&spots, (5, 12, Severity::Error, "truth-as-number")),
        "{spots:?}"
    );
    let texts: Vec<String> = diags.iter().filter_map(|d| d.help.clone()).collect();
    assert!(
        texts.iter().any(|h| h.contains("write `(-loadavg)`")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|h| h.contains("write `1 < 2 & 2 < onumcpus`")),
        "{texts:?}"
    );
}

#[test]
fn names_the_kernel_lacks_get_the_new_name() {
    let body = "HOTPLUG=\"vmstat.pgscan_direct_dma[0] > 0\"\nHOTUNPLUG=\"meminfo.memfree > 1\"\n";
    let (spots, diags, _) = findings(body);
    assert!(
        has(&spots, (4, 10, Severity::Error, "unknown-field")),
        "{spots:?}"
    );
    let fixes: Vec<String> = diags.iter().filter_map(|d| d.replacement.clone()).collect();
    assert!(
        fixes.contains(&"vmstat.pgscan_direct".to_string()),
        "{fixes:?}"
    );
    assert!(fixes.contains(&"meminfo.MemFree".to_string()), "{fixes:?}");
}

#[test]
fn surprises_are_warnings() {
    let body = "  # c=\"1\"\nHOTPLUG_NOW=\"!onumcpus > 2 & 1\"\nunused=\"onumcpus\"\nbroken=\"(1\"\nHOTUNPLUG=\"1 > 2\" x\n";
    let (spots, _, _) = findings(body);
    for want in [
        (4, 3, Severity::Warning, "indented-comment"),
        (5, 1, Severity::Warning, "prefix-name"),
        (5, 14, Severity::Warning, "not-scope"),
        (6, 1, Severity::Warning, "unused-variable"),
        (7, 11, Severity::Warning, "syntax"),
        (8, 12, Severity::Warning, "constant-rule"),
        (8, 19, Severity::Warning, "text-after-quote"),
    ] {
        assert!(has(&spots, want), "missing {want:?} in {spots:?}");
    }
}

#[test]
fn what_cpuplugd_refuses_is_kept_with_its_own_message() {
    let file = SourceFile::new(
        "t.conf",
        format!("{HEAD}x=\"1\"\nx=\"2\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\n").into_bytes(),
    );
    let outcome = load(&file, &facts());
    assert_eq!(
        outcome.refusal.map(|r| r.message).as_deref(),
        Some("Variable defined twice: x")
    );
}
