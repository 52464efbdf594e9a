//! `plugtop generate`: man pages and shell completions made from the
//! command line's own definition, so they never disagree with `--help`;
//! the rule language's page (plugtop-rules(5)) is written by hand in
//! `docs/man/plugtop-rules.5` and copied beside them.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use clap::CommandFactory;

use crate::cli::{Cli, Generate, GenerateArgs};
use plugtop::commands::Status;

/// The hand-written page on the rule language and plugtop's diagnostics.
const RULES_PAGE: &str = include_str!("../docs/man/plugtop-rules.5");

/// Carries out `plugtop generate`.
pub fn run(args: GenerateArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    match args.what {
        Generate::Man { dir } => {
            let written = man_pages(&dir)?;
            for page in written {
                writeln!(out, "{}", dir.join(page).display())?;
            }
        }
        Generate::Completions { shell } => {
            let mut cmd = Cli::command();
            clap_complete::generate(shell, &mut cmd, "plugtop", out);
        }
    }
    Ok(Status::Ok)
}

/// Writes plugtop.1, plugtop-SUBCOMMAND.1 for each visible subcommand and
/// plugtop-rules.5 into `dir`; the names written.
fn man_pages(dir: &Path) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = Vec::new();
    let cmd = Cli::command();
    let mut write = |name: String, bytes: &[u8]| -> anyhow::Result<()> {
        let path = dir.join(&name);
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
        written.push(name);
        Ok(())
    };
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut page)?;
    write("plugtop.1".into(), &page)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("plugtop-{}", sub.get_name());
        let sub = sub
            .clone()
            .display_name(name.clone())
            .bin_name(format!("plugtop {}", sub.get_name()));
        let mut page = Vec::new();
        clap_mangen::Man::new(sub).render(&mut page)?;
        write(format!("{name}.1"), &page)?;
    }
    write("plugtop-rules.5".into(), RULES_PAGE.as_bytes())?;
    Ok(written)
}
