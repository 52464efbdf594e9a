//! `plugtop generate`: man pages and shell completions made from the
//! command line's own definition, so they never disagree with `--help`,
//! and the editor set-ups of examples/editors/ (built in, so the printed
//! text is the file the repository keeps and tests);
//! the rule language's page (plugtop-rules(5)) is written by hand in
//! `docs/man/plugtop-rules.5` and copied beside them. Pages are placed
//! beneath DIR as every file plugtop creates is (see
//! [`plugtop::placed_file`]): exclusively, never through a link, and an
//! existing page only replaced with `--force`.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use clap::CommandFactory;

use crate::cli::{Cli, Editor, Generate, GenerateArgs};
use plugtop::commands::Status;
use plugtop::kernel::fs::{FsError, Placing, Replace, Root};

/// The hand-written page on the rule language and plugtop's diagnostics.
const RULES_PAGE: &str = include_str!("../../docs/man/plugtop-rules.5");

/// What a daemon's page needs and the command line cannot say: SIGNALS,
/// FILES and EXIT STATUS of `plugtop run`, written by hand in roff.
const RUN_SECTIONS: &str = include_str!("../../docs/man/plugtop-run.sections");

/// Carries out `plugtop generate`. A failed write on `out` is no panic:
/// a closed pipe goes back to main (a quiet end, as for the other
/// commands), anything else (a full disk) is said here and fails the run.
pub fn run(args: GenerateArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let printed = match args.what {
        Generate::Man { dir, force } => {
            let replace = if force {
                Replace::RegularFile
            } else {
                Replace::Nothing
            };
            let written = man_pages(&dir, replace)?;
            written
                .iter()
                .try_for_each(|page| writeln!(out, "{}", dir.join(page).display()))
        }
        Generate::Completions { shell } => {
            // Made in memory and written with `write_all`: clap_complete
            // panics on a failed write (a closed pipe, a full disk).
            let mut cmd = Cli::command();
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cmd, "plugtop", &mut script);
            if shell == clap_complete::Shell::Fish {
                script.extend_from_slice(fish_positional_names().as_bytes());
            }
            out.write_all(&script)
        }
        Generate::Editor { editor } => out.write_all(editor_file(editor).as_bytes()),
    };
    match printed.and_then(|()| out.flush()) {
        Ok(()) => Ok(Status::Ok),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(e.into()),
        Err(e) => {
            eprintln!("plugtop: cannot write to standard output: {e}");
            Ok(Status::Failed)
        }
    }
}

/// The set-up file for `editor`, as kept in examples/editors/: built in
/// with `include_str!` so that what is printed cannot drift from the
/// files the repository documents and the editor test runs.
fn editor_file(editor: Editor) -> &'static str {
    match editor {
        Editor::Neovim => include_str!("../../examples/editors/neovim.lua"),
        Editor::Vim => include_str!("../../examples/editors/vim.vim"),
        Editor::Emacs => include_str!("../../examples/editors/emacs.el"),
        Editor::Helix => include_str!("../../examples/editors/helix.toml"),
        Editor::Vscode => include_str!("../../examples/editors/vscode/package.json"),
        Editor::VscodeJs => include_str!("../../examples/editors/vscode/extension.js"),
    }
}

/// The lines fish lacks: clap_complete's fish script completes no
/// positional argument's values, so `plugtop generate completions <TAB>`
/// would offer files. Offers the shell names after `completions` and the
/// editor names after `editor`, until one is given.
fn fish_positional_names() -> String {
    use clap::ValueEnum;
    fn names<T: ValueEnum>(all: &[T]) -> String {
        let names: Vec<String> = all
            .iter()
            .filter_map(|v| v.to_possible_value())
            .map(|v| v.get_name().to_string())
            .collect();
        names.join(" ")
    }
    [
        ("completions", names(clap_complete::Shell::value_variants())),
        ("editor", names(Editor::value_variants())),
    ]
    .iter()
    .map(|(sub, names)| {
        format!(
            "complete -c plugtop -n \"__fish_plugtop_using_subcommand generate; and __fish_seen_subcommand_from {sub}; and not __fish_seen_subcommand_from {names}\" -f -a \"{names}\"\n"
        )
    })
    .collect()
}

/// The pages: plugtop.1, plugtop-SUBCOMMAND.1 for each visible subcommand
/// and plugtop-rules.5, by name.
fn pages() -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let cmd = Cli::command();
    let mut pages = Vec::new();
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut page)?;
    pages.push(("man1/plugtop.1".to_string(), page));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("plugtop-{}", sub.get_name());
        let sub = sub
            .clone()
            .display_name(name.clone())
            .bin_name(format!("plugtop {}", sub.get_name()));
        let page = if sub.get_name() == "run" {
            daemon_page(sub)?
        } else {
            let mut page = Vec::new();
            clap_mangen::Man::new(sub).render(&mut page)?;
            page
        };
        pages.push((format!("man1/{name}.1"), page));
    }
    pages.push((
        "man5/plugtop-rules.5".into(),
        RULES_PAGE.as_bytes().to_vec(),
    ));
    Ok(pages)
}

/// `plugtop run`'s page: clap's sections, then SIGNALS, FILES and EXIT
/// STATUS where man-pages(7) puts them (before VERSION), in place of the
/// EXTRA section that would repeat `--help`'s short note on exit codes.
fn daemon_page(cmd: clap::Command) -> std::io::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(cmd);
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    page.extend_from_slice(RUN_SECTIONS.as_bytes());
    man.render_version_section(&mut page)?;
    Ok(page)
}

/// Writes the pages into `dir/man1` and `dir/man5`, as man(1) looks for
/// them; the names written (relative to `dir`). Every name is checked
/// before the first page is written, so a refused run leaves DIR as it was
/// (a file made there in between is still never replaced).
fn man_pages(dir: &Path, replace: Replace) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let place = Root::dir(dir)?;
    let pages = pages()?;
    for (name, _) in &pages {
        place.check(Path::new(name), replace).map_err(|e| {
            anyhow::anyhow!(
                "{}; nothing written{}",
                plugtop::error_chain::text(&e),
                force_hint(&e)
            )
        })?;
    }
    // man(1) looks for a section's pages in DIR/manN, so `MANPATH=DIR`
    // (or DIR being /usr/local/share/man) finds them.
    for section in ["man1", "man5"] {
        place.create_dirs(Path::new(section))?;
    }
    let mut written = Vec::new();
    for (name, page) in pages {
        place.write_file(Path::new(&name), &page, Placing::new(replace))?;
        written.push(name);
    }
    Ok(written)
}

/// The hint after a refusal: how to replace pages on purpose (only
/// regular files are ever replaced).
fn force_hint(refusal: &FsError) -> &'static str {
    match refusal {
        FsError::Exists { .. } => " (--force replaces existing pages)",
        _ => "",
    }
}
