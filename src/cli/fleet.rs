//! `plugtop fleet`: the screen, or with --batch the table once and an
//! exit status for a check command.

use std::io::Write;

use anyhow::bail;

use super::interval::seconds;
use crate::cli::{CheckFormat, FleetArgs};
use plugtop::commands::Status;
use plugtop::fleet::batch::{self, FleetVerdict, Format};
use plugtop::fleet::fetch::{self, Scope};
use plugtop::fleet::query::PromClient;
use plugtop::fleet::screen::{self, FleetOptions};
use plugtop::fleet::{FleetError, model::Fleet};

/// `plugtop fleet`.
pub fn run(args: FleetArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let timeout = seconds("timeout", args.timeout, 0.1, 600.0)?;
    let refresh = seconds("refresh", args.refresh, 0.5, 86_400.0)?;
    let window = seconds("window", args.window, 60.0, 31.0 * 86_400.0)?;
    let stale = seconds("stale-after", args.stale_after, 1.0, 86_400.0)?;
    let client = PromClient::new(&args.prometheus, timeout)?;
    let lookback = seconds("lookback", args.lookback, 60.0, 366.0 * 86_400.0)?;
    let mut scope = Scope::new(&args.matcher, window.as_secs_f64(), stale.as_secs_f64());
    if let Err(why) = fetch::check_matcher(&scope.matcher) {
        bail!("--match takes label matchers, like '{{job=\"plugtop\",site=~\"b.*\"}}': {why}");
    }
    scope.lookback = lookback.as_secs_f64();
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
    use std::io::IsTerminal;
    if args.batch || dumb || !std::io::stdout().is_terminal() {
        let fleet: Fleet = fetch::fleet(&client, &scope, screen::now());
        if fleet.health.down() {
            return Err(FleetError::Down {
                queries: fleet.health.queries,
                first: fleet.health.failed.first().cloned().unwrap_or_default(),
            }
            .into());
        }
        let format = match args.format {
            CheckFormat::Text => Format::Text,
            CheckFormat::Json => Format::Json,
        };
        let layout = args.wide.layout();
        return Ok(
            match batch::write(&fleet, (format, layout), scope.stale_after, out)? {
                FleetVerdict::AllWell => Status::Ok,
                FleetVerdict::Trouble => Status::Failed,
                FleetVerdict::Unsure => {
                    let why = match fleet.health.failed.first() {
                        Some(first) => format!(
                            "{} of {} queries failed (first: {first}), so guests may be in trouble unseen",
                            fleet.health.failed.len(),
                            fleet.health.queries
                        ),
                        None => "no guest matched; check --match and the scrape job".to_string(),
                    };
                    // The reason quotes the server: made safe for the terminal.
                    super::stderr::complain(&format!("plugtop fleet: no trouble seen, but {why}"));
                    Status::Code(2)
                }
            },
        );
    }
    let ended = screen::run(
        Box::new(client),
        FleetOptions {
            prometheus: args.prometheus,
            scope,
            refresh,
            rules_root: args.rules_root,
        },
    )?;
    Ok(ended.map_or(Status::Ok, Status::ended_by))
}
