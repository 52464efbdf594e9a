//! The two text formats a scraper may ask for, both from the client
//! crate's encoder: OpenMetrics as it is, and the Prometheus text format
//! (0.0.4) that node_exporter's textfile collector and `promtool check
//! metrics` read.

use std::sync::Arc;

use prometheus_client::encoding::text::{encode_eof, encode_registry};
use prometheus_client::registry::Registry;

/// The registries one exposition is encoded from, in order: plugtop's own
/// families, and on the HTTP endpoint the process's.
#[derive(Debug, Clone, Default)]
pub struct Exposition(Vec<Arc<Registry>>);

impl Exposition {
    /// `registries`, encoded one after the other.
    pub fn new(registries: Vec<Arc<Registry>>) -> Self {
        Exposition(registries)
    }

    /// In the OpenMetrics text format (see [`openmetrics`]).
    pub fn openmetrics(&self) -> String {
        openmetrics(&self.0)
    }

    /// In the Prometheus text format (see [`prometheus_text`]).
    pub fn prometheus_text(&self) -> String {
        prometheus_text(&self.0)
    }
}

impl From<Arc<Registry>> for Exposition {
    fn from(registry: Arc<Registry>) -> Self {
        Exposition(vec![registry])
    }
}

/// The content type of [`openmetrics`].
pub const OPENMETRICS_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// The content type of [`prometheus_text`].
pub const PROMETHEUS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The registries, one after the other, in the OpenMetrics text format
/// (ends with `# EOF`), each family's series sorted, so two scrapes of the
/// same state read the same (the client keeps a family's series in hash
/// order).
pub fn openmetrics(registries: &[Arc<Registry>]) -> String {
    let mut text = String::new();
    // Writing to a String cannot fail; an encoder error would leave it
    // short, which a scraper reports.
    for r in registries {
        let _ = encode_registry(&mut text, r);
    }
    let _ = encode_eof(&mut text);
    sort_series(&text)
}

/// `text` with every run of sample lines (between comment lines) sorted.
fn sort_series(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut run: Vec<&str> = Vec::new();
    let flush = |run: &mut Vec<&str>, out: &mut String| {
        run.sort_unstable();
        for l in run.drain(..) {
            out.push_str(l);
            out.push('\n');
        }
    };
    for line in text.lines() {
        if line.starts_with('#') {
            flush(&mut run, &mut out);
            out.push_str(line);
            out.push('\n');
        } else {
            run.push(line);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// The registries in the Prometheus text format. The two differ in three
/// ways for what plugtop exposes: a counter's HELP and TYPE name its
/// samples' `_total` name, there is no `# UNIT` and no `# EOF`.
pub fn prometheus_text(registries: &[Arc<Registry>]) -> String {
    from_openmetrics(&openmetrics(registries))
}

/// The Prometheus text format of an OpenMetrics exposition with gauges and
/// counters only (the types plugtop uses).
pub fn from_openmetrics(text: &str) -> String {
    let counters: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let (name, tail) = rest.split_once(' ')?;
            counters
                .contains(&name)
                .then(|| format!("{prefix}{name}_total {tail}"))
        });
        match renamed {
            Some(l) => out.push_str(&l),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// Which format an `Accept` header asks for: OpenMetrics when it names it
/// (as Prometheus does), else the Prometheus text format.
pub fn wants_openmetrics(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| a.contains("application/openmetrics-text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_renamed_and_openmetrics_only_lines_dropped() {
        let om = "# HELP x_actions Actions.\n# TYPE x_actions counter\nx_actions_total{a=\"b\"} 3\n# HELP x_pool The pool.\n# TYPE x_pool gauge\n# UNIT x_pool bytes\nx_pool_bytes 1\n# EOF\n";
        assert_eq!(
            from_openmetrics(om),
            "# HELP x_actions_total Actions.\n# TYPE x_actions_total counter\nx_actions_total{a=\"b\"} 3\n# HELP x_pool The pool.\n# TYPE x_pool gauge\nx_pool_bytes 1\n"
        );
    }

    #[test]
    fn prometheus_asks_for_openmetrics_and_curl_gets_text() {
        assert!(wants_openmetrics(Some(
            "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
        )));
        assert!(!wants_openmetrics(Some("*/*")));
        assert!(!wants_openmetrics(None));
    }
}
