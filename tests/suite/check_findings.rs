//! Individual findings of `plugtop check`: where they point and what they say.

use plugtop::rules::{Diagnostic, Severity, SourceFile, SystemFacts, load};

fn facts() -> SystemFacts {
    SystemFacts {
        present_cpus: Ok(4),
        cmm_pages: true,
        zvm_guest: Some(true),
        meminfo_names: Some(vec!["MemFree".into(), "MemTotal".into(), "Cached".into()]),
        vmstat_names: Some(vec!["pgscan_direct".into(), "pgscan_kswapd".into()]),
        origin: "/".into(),
        history: None,
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
            (p.line, p.column, d.severity, d.code.as_str())
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

/// nu54 M3: a plain value that is always true acts every interval and is
/// warned about as a constant rule (docs/semantics.md); a rule turned off
/// with "0" and a plain amount are written as meant.
#[test]
fn a_plain_rule_that_is_always_true_is_a_constant_rule() {
    let body = "HOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"100\"\nCMM_INC=\"10\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"2\"\n";
    let (spots, diags, _) = findings(body);
    let constant: Vec<&Spot> = spots.iter().filter(|s| s.3 == "constant-rule").collect();
    assert_eq!(
        constant,
        [
            &(4, 10, Severity::Warning, "constant-rule"),
            &(10, 12, Severity::Warning, "constant-rule")
        ],
        "{spots:?}"
    );
    let said: Vec<&str> = diags
        .iter()
        .filter(|d| d.code == "constant-rule")
        .map(|d| d.message.as_str())
        .collect();
    assert!(
        said[0].contains("HOTPLUG does not depend on any reading: it is always true, so cpuplugd plugs a CPU every interval, up to CPU_MAX"),
        "{said:?}"
    );
    assert!(said[1].contains("grows the pool by CMM_INC"), "{said:?}");
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

/// `plugtop check`'s whole text for a file.
fn report(text: &[u8]) -> String {
    let file = SourceFile::new("t.conf", text.to_vec());
    let outcome = load(&file, &facts());
    plugtop::rules::render::text(&file, &outcome.diagnostics)
        + &plugtop::rules::render::summary(&file, &outcome)
}

#[test]
fn binary_input_never_reaches_the_terminal_raw() {
    let text = b"UPDATE=\"1\"\nCPU_MIN=\"1\"\x1b[31m\nCPU_MAX=\"0\"\nHOTPLUG=\"idle\x07 > 1\x1b[2J\"\nHOTUNPLUG=\"0\"\n\x00\x01";
    let out = report(text);
    assert!(
        !out.bytes().any(|b| b < 0x20 && b != b'\n'),
        "a control byte got through:\n{out}"
    );
    assert!(out.contains("\\u{1b}[31m"), "{out}");
    // The caret still points under the escaped text.
    assert!(
        out.contains("2 | CPU_MIN=\"1\"\\u{1b}[31m\n  |            ^^^^^^^^^^"),
        "{out}"
    );
}

#[test]
fn a_foreign_character_is_named_as_the_character() {
    let out = report(
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"idle • 1\"\nHOTUNPLUG=\"0\"\n"
            .as_bytes(),
    );
    assert!(out.contains("character `•` (U+2022)"), "{out}");
    assert!(!out.contains('â'), "{out}");
}

#[test]
fn an_update_of_zero_is_one_error() {
    let out =
        report(b"UPDATE=\"0\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\n");
    assert!(out.contains("UPDATE must be at least 1"), "{out}");
    assert!(!out.contains("UPDATE is not set"), "{out}");
}

#[test]
fn a_misspelt_rule_name_gets_a_did_you_mean() {
    let (spots, diags, _) = findings("HOTPLGU=\"1\"\nHOTUNPLUG=\"0\"\n");
    assert!(
        has(&spots, (4, 1, Severity::Warning, "misspelt-keyword")),
        "{spots:?}"
    );
    let d = diags.iter().find(|d| d.code == "misspelt-keyword");
    assert_eq!(
        d.and_then(|d| d.replacement.clone()).as_deref(),
        Some("HOTPLUG")
    );
    assert!(!spots.iter().any(|s| s.3 == "unused-variable"), "{spots:?}");
    // A name that is no typo stays a plain variable.
    let (spots, _, _) = findings("uptime=\"1\"\nHOTPLUG=\"uptime\"\nHOTUNPLUG=\"0\"\n");
    assert!(
        !spots.iter().any(|s| s.3 == "misspelt-keyword"),
        "{spots:?}"
    );
}

#[test]
fn one_typo_leads_and_its_consequences_fold_into_one_warning() {
    let text = std::fs::read_to_string("examples/rules/recommended-modern.conf")
        .unwrap_or_default()
        .replace(
            "HOTPLUG=\"((1 - CP_ActiveAVG)",
            "HOTPLUG=\"((1 - CP_ActivAVG)",
        );
    let out = report(text.as_bytes());
    let first = out.lines().next().unwrap_or_default();
    assert!(first.contains("unknown name `CP_ActivAVG`"), "{out}");
    assert!(!out.contains("is defined but no rule uses it"), "{out}");
    assert!(
        out.contains("variables are used by no rule that loaded"),
        "{out}"
    );
    assert!(out.contains("did you mean `CP_ActiveAVG`"), "{out}");
}

#[test]
fn an_operator_before_a_broken_operand_is_not_blamed() {
    let (spots, diags, _) =
        findings("HOTPLUG=\"(loadavg < 1) | (loadavg > (onumcpus / 3 +\"\nHOTUNPLUG=\"0\"\n");
    let syntax: Vec<_> = spots.iter().filter(|s| s.3 == "syntax").collect();
    assert_eq!(syntax.len(), 1, "{spots:?}");
    assert_eq!(syntax[0].1, 51, "the `+` at the end: {spots:?}");
    assert!(diags.iter().any(|d| d.message.contains("`+` at the end")));
}

#[test]
fn errors_met_only_at_run_time_are_said_plainly() {
    let out = report(b"UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"meminfo.Nonsense > 1\"\nHOTUNPLUG=\"0\"\n");
    let last = out.lines().last().unwrap_or_default();
    assert!(
        last.contains("cpuplugd would load it")
            && last.contains("then exit the first time it evaluates"),
        "{out}"
    );
}

#[test]
fn a_missing_quote_fix_keeps_the_spaces() {
    let (_, diags, _) = findings("HOTPLUG=\"loadavg > onumcpus + 1\nHOTUNPLUG=\"0\"\n");
    let d = diags.iter().find(|d| d.code == "missing-quotes");
    assert_eq!(
        d.and_then(|d| d.replacement.clone()).as_deref(),
        Some("\"loadavg > onumcpus + 1\"")
    );
}

#[test]
fn variables_past_cpuplugds_buffer_are_one_error_that_counts_the_rest() {
    // Each `vNNN="NNN"` takes about ten bytes of cpuplugd's 4096: the
    // first few hundred fit, the rest do not.
    let body: String = (0..2000).map(|i| format!("v{i}=\"{i}\"\n")).collect();
    let (spots, diags, file) = findings(&format!("{body}HOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n"));
    let errors: Vec<_> = diags
        .iter()
        .filter(|d| d.code == "variables-too-large")
        .collect();
    assert_eq!(
        errors.len(),
        1,
        "one error, not one per variable: {spots:?}"
    );
    let first = file.position(errors[0].span.start as usize).line;
    let note = errors[0].notes.last().map(|n| n.message.clone());
    let more = 2000 - (first - 4) - 1;
    assert!(
        note.as_deref()
            .is_some_and(|n| n.starts_with(&format!("{more} more variables after it"))),
        "{note:?} (first at line {first})"
    );
    let last = errors[0]
        .notes
        .last()
        .map(|n| file.position(n.span.start as usize).line);
    assert_eq!(last, Some(2003), "the note points at the last variable");
}

/// The `long-update` findings for a file whose UPDATE lines are `update`.
fn long_update(update: &str) -> Vec<Diagnostic> {
    let file = SourceFile::new(
        "t.conf",
        format!("{update}\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\n")
            .into_bytes(),
    );
    let outcome = load(&file, &facts());
    assert!(outcome.refusal.is_none(), "{update}: cpuplugd loads it");
    outcome
        .diagnostics
        .into_iter()
        .filter(|d| d.code == "long-update")
        .collect()
}

#[test]
fn an_update_longer_than_a_day_is_a_warning_that_says_what_cpuplugd_does() {
    for (update, days, wraps) in [
        ("UPDATE=\"86401\"", "(1 day)", false),
        ("UPDATE=\"4294967295\"", "about 136 years", false),
        ("UPDATE=\"62985600\"", "(729 days)", false),
        ("UPDATE=\"4294967296\"", "about 136 years", true),
        (
            "UPDATE=\"18446744073709551615\"",
            "longer ones read as it",
            true,
        ),
        (
            "UPDATE=\"99999999999999999999999999999\"",
            "about 292471208677 years",
            true,
        ),
        // Set twice: the last value counts, and the warning points at it.
        ("UPDATE=\"1\"\nUPDATE=\"1000000\"", "11 days", false),
    ] {
        let found = long_update(update);
        assert_eq!(found.len(), 1, "{update}: {found:?}");
        let d = &found[0];
        assert_eq!(d.severity, Severity::Warning, "{update}");
        assert!(
            d.message.contains("more than a day"),
            "{update}: {}",
            d.message
        );
        assert!(d.message.contains(days), "{update}: {}", d.message);
        assert!(
            d.message.contains("would not read or act again"),
            "{update}: {}",
            d.message
        );
        assert_eq!(
            d.message.contains("low 32 bits"),
            wraps,
            "{update}: past 4294967295 cpuplugd's sleep() wraps: {}",
            d.message
        );
        assert!(!d.span.is_file(), "{update}: it points at UPDATE");
    }
    for update in [
        "UPDATE=\"1\"",
        "UPDATE=\"86400\"",
        "UPDATE=\"1000000\"\nUPDATE=\"5\"",
    ] {
        assert!(
            long_update(update).is_empty(),
            "{update}: a day or less is a pace"
        );
    }
}

#[test]
fn a_refused_files_unused_variables_are_one_warning_or_the_single_one() {
    // Refused by a typo in a rule: the variables are unused because of it.
    let bad = "HOTPLUG=\"a > \"\nHOTUNPLUG=\"0\"\n";
    let (_, diags, _) = findings(&format!("x=\"1\"\nb=\"2\"\nc=\"3\"\n{bad}"));
    let codes: Vec<_> = diags.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes.last(), Some(&"unused-variables"), "{codes:?}");
    assert!(!codes.contains(&"unused-variable"), "{codes:?}");
    let summary = diags.last().map(|d| d.message.clone()).unwrap_or_default();
    assert!(
        summary.starts_with("3 variables are used by no rule"),
        "{summary}"
    );
    // One unused variable is named where it is.
    let (spots, _, _) = findings(&format!("x=\"1\"\n{bad}"));
    assert!(
        spots.iter().any(|s| s.3 == "unused-variable" && s.0 == 4),
        "{spots:?}"
    );
}

/// Issue 45: every error on a line at once. After an operator from another
/// language the rule is read on with cpuplugd's nearest operator, so a
/// `>=` after `||` and an unclosed `(` after `&&` are named too.
#[test]
fn every_error_on_a_line_is_named() {
    let (spots, _, _) =
        findings("HOTPLUG=\"(loadavg > 1) && (idle\"\nHOTUNPLUG=\"(loadavg < 1) || >= 3\"\n");
    let line = |n: usize| -> Vec<(usize, &str)> {
        spots
            .iter()
            .filter(|s| s.0 == n && s.2 == Severity::Error)
            .map(|s| (s.1, s.3))
            .collect()
    };
    assert_eq!(
        line(4),
        vec![(24, "foreign-operator"), (32, "syntax")],
        "{spots:?}"
    );
    assert_eq!(
        line(5),
        vec![
            (26, "foreign-operator"),
            (29, "foreign-operator"),
            (29, "syntax")
        ],
        "{spots:?}"
    );
}

/// A line of sixty `&&` is not sixty errors: the first and a bounded
/// number after it.
#[test]
fn errors_after_the_first_on_a_line_are_bounded() {
    let body = format!("HOTPLUG=\"1{}\"\nHOTUNPLUG=\"0\"\n", "&&1".repeat(60));
    let (spots, _, _) = findings(&body);
    let on_line = spots.iter().filter(|s| s.0 == 4).count();
    assert_eq!(
        on_line,
        1 + plugtop::rules::parser::MAX_LATER_ERRORS,
        "{spots:?}"
    );
}

/// Issue 45: a variable that only a refused rule names is not reported as
/// unused (the advice to remove it was wrong); a field after `.` with the
/// same name does not count as naming it.
#[test]
fn a_variable_named_by_a_refused_rule_is_not_unused() {
    let (spots, diags, _) =
        findings("busy=\"idle < 10\"\nHOTPLUG=\"(loadavg > 1) && (busy\"\nHOTUNPLUG=\"0\"\n");
    assert!(
        !diags.iter().any(|d| d.code.as_str().starts_with("unused")),
        "{spots:?}"
    );
    let (spots, _, _) =
        findings("MemFree=\"1\"\nHOTPLUG=\"meminfo.MemFree && (1\"\nHOTUNPLUG=\"0\"\n");
    assert!(
        spots.iter().any(|s| s.3 == "unused-variable" && s.0 == 4),
        "{spots:?}"
    );
}

/// A new user's finding (issue 45): three unknown names on a line took
/// three runs of `check`. The reading goes on past an unknown name, so all
/// of them are named at once; cpuplugd's own message still names the first.
#[test]
fn every_unknown_name_on_a_line_is_named_at_once() {
    let file = SourceFile::new(
        "t.conf",
        format!("{HEAD}HOTPLUG=\"(idel > 50) | (foo > 2) | (loadavg > bar)\"\nHOTUNPLUG=\"0\"\n")
            .into_bytes(),
    );
    let outcome = load(&file, &facts());
    let unknown: Vec<usize> = outcome
        .diagnostics
        .iter()
        .filter(|d| d.code == "unknown-name")
        .map(|d| file.position(d.span.start as usize).column)
        .collect();
    assert_eq!(unknown, vec![11, 25, 47], "{:?}", outcome.diagnostics);
    let refusal = outcome.refusal.map(|r| r.message).unwrap_or_default();
    assert_eq!(
        refusal, "parsing error at hotplug, position: (idel>50)|(foo>2)|(loadavg>bar)",
        "cpuplugd's message is unchanged"
    );
}

/// adv52 #9: the carets under a name of wide characters cover its
/// columns as drawn (`変数` takes four), not its characters.
#[test]
fn carets_under_wide_names_cover_their_columns() {
    let (_, diagnostics, file) = findings("変数=\"idle\"\nHOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n");
    let report = plugtop::rules::render::text(&file, &diagnostics);
    assert!(report.contains("4 | 変数=\"idle\"\n  | ^^^^\n"), "{report}");
    assert!(!report.contains("  | ^^\n"), "{report}");
}

/// nu53 F13: a UTF-8 byte-order mark before the first line was invisible
/// in `check`'s messages, which then said "did you mean UPDATE?" of a line
/// that reads UPDATE (or told a comment line to start with `#`).
/// cpuplugd reads the three bytes as part of the first line (no byte but
/// `#` in the first column starts a comment; the name is every
/// non-blank byte before `=`): plugtop decides the same, and says so.
#[test]
fn a_byte_order_mark_is_named_where_it_misleads() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let check = |name: &str, text: &str| -> String {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("\u{feff}{text}")).expect("rule file");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_plugtop"))
            .arg("check")
            .arg(&path)
            .output()
            .expect("plugtop check runs");
        // The messages wrap at 80 columns: read as one line of words.
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &crate::common::said(&out);
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let said = check(
        "setting.conf",
        &format!("{HEAD}HOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 300\"\n"),
    );
    assert!(
        said.contains(
            "the file starts with a UTF-8 byte-order mark (EF BB BF), which cpuplugd reads as \
             part of the first name"
        ),
        "{said}"
    );
    assert!(said.contains("and UPDATE stays unset"), "{said}");
    assert!(said.contains("without a byte-order mark"), "{said}");
    assert!(!said.contains("did you mean UPDATE"), "{said}");
    assert!(
        said.contains("UPDATE is not set"),
        "cpuplugd's verdict stays: {said}"
    );
    let said = check(
        "comment.conf",
        &format!("# a comment first\n{HEAD}HOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 300\"\n"),
    );
    assert!(
        said.contains("byte-order mark (EF BB BF), which cpuplugd reads as part of the first line"),
        "{said}"
    );
    assert!(said.contains("so it is no comment"), "{said}");
    assert!(!said.contains("start comment lines with"), "{said}");
}
