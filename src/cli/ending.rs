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
            for (i, line) in plugtop::error_chain::text(e.as_ref())
                .split('\n')
                .enumerate()
            {
                let lead = if i == 0 { "plugtop: " } else { "" };
                eprintln!("{lead}{}", plugtop::report::terminal_safe(line));
            }
            ExitCode::from(error_code)
        }
    }
}
