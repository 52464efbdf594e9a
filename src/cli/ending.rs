//! How a command ended, as the exit status and the message on stderr:
//! shared by `plugtop` and the daemon's own small program, `plugtop-run`.

use std::process::ExitCode;

use plugtop::commands::Status;

/// The exit status for how a command ended; an error is said on stderr
/// and exits `error_code`.
pub fn exit_code(ended: anyhow::Result<Status>, error_code: u8) -> ExitCode {
    match ended {
        Ok(Status::Ok) => ExitCode::SUCCESS,
        Ok(Status::Failed) => ExitCode::from(1),
        Ok(Status::Code(code)) => ExitCode::from(code),
        // `plugtop eval ... | head` is fine: stop quietly.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            // An error may quote a file or a hostname: shown line by line,
            // made safe for the terminal.
            let mut text = String::new();
            for (i, line) in plugtop::error_chain::text(e.as_ref())
                .split('\n')
                .enumerate()
            {
                let lead = if i == 0 { "plugtop: " } else { "" };
                text.push_str(&format!("{lead}{}\n", plugtop::report::terminal_safe(line)));
            }
            // A rule file's diagnostics wrap as `plugtop check` wraps them
            // (the quoted lines and carets whole).
            let diagnostics = e.chain().any(rule_diagnostics);
            if diagnostics {
                let width = plugtop::report::stderr_width();
                text = plugtop::report::Layout::Narrow { width }.diagnostics(&text);
            }
            eprint!("{text}");
            ExitCode::from(error_code)
        }
    }
}

/// Whether `e` is a rule file's diagnostics (cpuplugd would refuse it),
/// alone or as why the screen could not start.
fn rule_diagnostics(e: &(dyn std::error::Error + 'static)) -> bool {
    use plugtop::rules::LoadError;
    matches!(
        e.downcast_ref::<LoadError>(),
        Some(LoadError::Refused { .. })
    ) || matches!(
        e.downcast_ref::<plugtop::tui::run::UiError>(),
        Some(plugtop::tui::run::UiError::Rules(LoadError::Refused { .. }))
    )
}
