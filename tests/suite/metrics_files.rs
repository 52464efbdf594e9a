//! The fleet files against the code, without Prometheus (scripts/
//! prometheus-e2e.sh runs promtool and a filled Prometheus): every family
//! is documented and every documented name exported; the alerts and the
//! dashboard name only documented families; every alert has `for:`, a
//! summary and a description with formatted values, and a unit test; the
//! dashboard filters by `$job`, has no fixed ranges, and aggregates the
//! families that are one series per rule, action or variable per guest.

use plugtop::metrics::{FAMILIES, PROCESS_FAMILIES, is_exported};

const DOCS: &str = "docs/metrics.md";
const ALERTS: &str = "examples/prometheus/plugtop-alerts.yml";
const ALERT_TESTS: &str = "examples/prometheus/plugtop-alerts.test.yml";
const DASHBOARD: &str = "examples/grafana/plugtop.json";

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The plugtop and process metric names in a PromQL expression (or any
/// text): words starting with `plugtop_` or `process_`.
fn names_in(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| (w.starts_with("plugtop_") || w.starts_with("process_")) && !w.ends_with('_'))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_family_is_documented_and_every_documented_name_exported() {
    let docs = read(DOCS);
    for (name, _) in FAMILIES {
        assert!(
            docs.contains(&format!("`plugtop_{name}")),
            "{DOCS} does not document plugtop_{name}"
        );
    }
    for (name, _) in PROCESS_FAMILIES {
        assert!(
            docs.contains(&format!("`{name}")),
            "{DOCS} does not document {name}"
        );
    }
    for documented in docs
        .split('`')
        .filter(|w| !w.contains(' '))
        .flat_map(names_in)
    {
        assert!(
            is_exported(&documented),
            "{DOCS} names {documented}, which is not exported"
        );
    }
}

/// The alerting rules, one text per rule (from its `- alert:` line).
fn alert_blocks() -> Vec<String> {
    let text = read(ALERTS);
    text.split("\n      - alert: ")
        .skip(1)
        .map(str::to_string)
        .collect()
}

#[test]
fn every_alert_names_exported_families_waits_explains_and_is_tested() {
    let blocks = alert_blocks();
    assert!(blocks.len() >= 8, "{} alerts", blocks.len());
    let tests = read(ALERT_TESTS);
    for block in &blocks {
        let name = block.lines().next().unwrap_or_default().trim();
        for key in ["\n        for: ", "summary: ", "description: "] {
            assert!(block.contains(key), "{name} has no `{}`", key.trim());
        }
        for n in names_in(block) {
            assert!(is_exported(&n), "{name} queries {n}, which is not exported");
        }
        assert!(
            !block.contains("$value }}"),
            "{name} prints an unformatted $value (humanize it)"
        );
        assert!(
            tests.contains(&format!(
                "alertname: {name}\n        exp_alerts:\n          - "
            )),
            "{ALERT_TESTS} never shows {name} firing"
        );
        assert!(
            tests.contains(&format!("alertname: {name}, exp_alerts: []}}"))
                || tests.contains(&format!("alertname: {name}\n        exp_alerts: []")),
            "{ALERT_TESTS} never shows {name} silent"
        );
    }
}

/// Every panel's queries of the dashboard, with its title.
fn panel_queries() -> Vec<(String, String)> {
    let json: serde_json::Value =
        serde_json::from_str(&read(DASHBOARD)).expect("the dashboard is JSON");
    let panels = json["panels"].as_array().cloned().unwrap_or_default();
    assert!(!panels.is_empty(), "no panels");
    panels
        .iter()
        .flat_map(|p| {
            let title = p["title"].as_str().unwrap_or_default().to_string();
            p["targets"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(move |t| {
                    (
                        title.clone(),
                        t["expr"].as_str().unwrap_or_default().to_string(),
                    )
                })
        })
        .collect()
}

#[test]
fn the_dashboard_filters_by_job_uses_no_fixed_ranges_and_aggregates_the_wide_families() {
    let json: serde_json::Value =
        serde_json::from_str(&read(DASHBOARD)).expect("the dashboard is JSON");
    let variables: Vec<&str> = json["templating"]["list"]
        .as_array()
        .map(|l| l.iter().filter_map(|v| v["name"].as_str()).collect())
        .unwrap_or_default();
    for v in ["datasource", "job", "instance"] {
        assert!(variables.contains(&v), "no ${v} variable: {variables:?}");
    }
    let queries = panel_queries();
    assert!(queries.len() >= 8, "{queries:#?}");
    let wide = [
        "plugtop_rule_true",
        "plugtop_rule_value",
        "plugtop_variable_value",
        "plugtop_decided_actions_total",
        "plugtop_applied_actions_total",
        "plugtop_failed_actions_total",
        "plugtop_skipped_intervals_total",
        "plugtop_read_errors_total",
    ];
    for (title, expr) in &queries {
        assert!(!expr.is_empty(), "{title}: a target without a query");
        assert!(
            expr.contains("$job"),
            "{title}: not filtered by $job: {expr}"
        );
        for n in names_in(expr) {
            assert!(
                is_exported(&n),
                "{title} queries {n}, which is not exported"
            );
        }
        // Every range is Grafana's: a fixed [1m] is empty at a 60 s scrape.
        for range in expr.split('[').skip(1) {
            assert!(
                range.starts_with('$'),
                "{title}: a fixed range [{range}: {expr}"
            );
        }
        if wide.iter().any(|w| expr.contains(w)) {
            assert!(
                ["topk(", "sum ", "sum(", "count ", "count(", "max ", "max("]
                    .iter()
                    .any(|a| expr.contains(a)),
                "{title}: one series per guest and rule/action/variable: aggregate it: {expr}"
            );
        }
    }
}
