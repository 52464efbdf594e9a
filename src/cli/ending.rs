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
        // `plugtop eval ... | head` and `plugtop --batch ... | head` are
        // fine: a reader that closed the output is the normal end of a
        // pipe, and the command stops quietly with 0, wherever in the
        // error's chain the closed pipe is (the screen's line mode wraps
        // it in its own error).
        Err(e)
            if e.chain().any(|cause| {
                cause
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
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
            // Wrapped at the terminal's width, 80 into a pipe (nu54 M1); a
            // rule file's diagnostics as `plugtop check` wraps them (the
            // quoted lines and carets whole).
            eprint!("{}", super::stderr::wrapped(&text));
            ExitCode::from(error_code)
        }
    }
}
