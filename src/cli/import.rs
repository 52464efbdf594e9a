//! `plugtop import`: a recording from sysstat's sa files or from
//! node_exporter's series in Prometheus, with cpuplugd's log as the
//! actions that really happened.

use std::io::Write;

use anyhow::bail;

use super::interval::seconds;
use crate::cli::{ImportArgs, ImportFrom};
use plugtop::commands::Status;
use plugtop::fleet::query::PromClient;
use plugtop::import::{self, Summary, actions, prometheus, sysstat};

/// `plugtop import`.
pub fn run(args: ImportArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let (summary, path) = match args.from {
        ImportFrom::Sysstat(a) => {
            let timeout = seconds("timeout", a.timeout, 0.1, 86_400.0)?;
            let (logged, warnings) = read_actions(a.actions.as_deref())?;
            let mut summary = sysstat::import(sysstat::SysstatOptions {
                files: &a.files,
                output: &a.output,
                actions: logged,
                timeout,
                sadf: None,
            })?;
            summary.warnings.extend(warnings);
            (summary, a.output)
        }
        ImportFrom::Prometheus(a) => {
            let timeout = seconds("timeout", a.timeout, 0.1, 86_400.0)?;
            let from = time("from", &a.from)?;
            let to = time("to", &a.to)?;
            let client = PromClient::new(&a.prometheus, timeout)?;
            let (logged, warnings) = read_actions(a.actions.as_deref())?;
            let options = prometheus::PromOptions {
                instance: &a.instance,
                from,
                to,
                step: a.step,
                url: &a.prometheus,
                plugtop_instance: a.plugtop_instance.as_deref(),
            };
            let mut summary = import::write_recording(&a.output, logged, |o| {
                prometheus::import(&client, &options, o)
            })?;
            summary.warnings.extend(warnings);
            (summary, a.output)
        }
    };
    print(out, &summary, &path)?;
    Ok(Status::Ok)
}

fn print(out: &mut dyn Write, summary: &Summary, path: &std::path::Path) -> std::io::Result<()> {
    for line in summary.lines(path) {
        writeln!(out, "{}", plugtop::report::terminal_safe(&line))?;
    }
    Ok(())
}

fn read_actions(
    path: Option<&std::path::Path>,
) -> anyhow::Result<(Vec<actions::Logged>, Vec<String>)> {
    match path {
        Some(p) => Ok(actions::read(p)?),
        None => Ok((Vec::new(), Vec::new())),
    }
}

/// Seconds since the epoch from `1714525822`, `2024-05-01T03:10:22Z` or
/// `2024-05-01T03:10:22+02:00`.
fn time(name: &str, text: &str) -> anyhow::Result<f64> {
    if let Ok(v) = text.trim().parse::<f64>()
        && v.is_finite()
        && v >= 0.0
    {
        return Ok(v);
    }
    match chrono::DateTime::parse_from_rfc3339(text.trim()) {
        Ok(t) => Ok(t.timestamp_millis() as f64 / 1000.0),
        Err(_) => bail!(
            "--{name} {text:?}: give seconds since the epoch or a time like 2024-05-01T03:00:00Z"
        ),
    }
}
