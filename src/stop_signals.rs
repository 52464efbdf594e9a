//! The signals that would end plugtop where it stands. Every one whose
//! default action ends the process and that can be caught is caught while
//! plugtop may have changed a guest, so that the guest is put back first
//! (a stray SIGUSR1 or an expired `timeout` must not leave CPUs offline).
//! SIGKILL and SIGSTOP cannot be caught; SIGSEGV, SIGBUS, SIGILL and SIGFPE
//! are faults (signal-hook refuses them, and the failure policy covers
//! panics); SIGABRT, SIGTRAP and SIGSYS belong to abort, debuggers and
//! seccomp, which must keep their own meaning; SIGPIPE is ignored by every
//! Rust program (a write to a closed pipe fails instead of ending it).

use rustix::process::Signal;
use rustix_libc_wrappers::process::SignalExt as _;
use signal_hook::consts::signal as sig;

/// Power failure and coprocessor stack fault: Linux-only, so signal-hook
/// does not name them.
const SIGPWR: i32 = Signal::POWER.as_raw();
const SIGSTKFLT: i32 = Signal::STKFLT.as_raw();

/// The real-time signals the C library leaves to programs (it keeps the
/// first few of the kernel's for its threads, so the bounds are its own).
fn real_time() -> std::ops::RangeInclusive<i32> {
    Signal::rt_min().as_raw()..=Signal::rt_max().as_raw()
}

/// The classic terminating signals and their names for the log, SIGHUP
/// (a reload for `run`, an SSH drop for the screen) included.
const CLASSIC: [(i32, &str); 14] = [
    (sig::SIGHUP, "SIGHUP"),
    (sig::SIGINT, "SIGINT"),
    (sig::SIGQUIT, "SIGQUIT"),
    (sig::SIGTERM, "SIGTERM"),
    (sig::SIGUSR1, "SIGUSR1"),
    (sig::SIGUSR2, "SIGUSR2"),
    (sig::SIGALRM, "SIGALRM"),
    (sig::SIGVTALRM, "SIGVTALRM"),
    (sig::SIGPROF, "SIGPROF"),
    (sig::SIGIO, "SIGIO"),
    (SIGPWR, "SIGPWR"),
    (SIGSTKFLT, "SIGSTKFLT"),
    (sig::SIGXCPU, "SIGXCPU"),
    (sig::SIGXFSZ, "SIGXFSZ"),
];

/// Every signal to catch: the classic ones and the real-time ones (whose
/// default action also ends the process).
pub fn catchable() -> Vec<i32> {
    let mut all: Vec<i32> = CLASSIC.iter().map(|&(signal, _)| signal).collect();
    all.extend(real_time());
    all
}

/// The exit status of a process that ends because of `signal` (as the
/// shell reports one killed by it).
pub fn exit_status(signal: i32) -> i32 {
    128 + signal.clamp(0, 127)
}

/// Whether a service manager should see this stop as an ordinary one:
/// SIGTERM and SIGINT are how cpuplugd is asked to stop (it exits 0).
pub fn is_request_to_stop(signal: i32) -> bool {
    signal == sig::SIGTERM || signal == sig::SIGINT
}

/// The signal's name for the log ("SIGUSR1", "SIGRTMIN+3").
pub fn name(signal: i32) -> String {
    let real_time = real_time();
    if real_time.contains(&signal) {
        return format!("SIGRTMIN+{}", signal - real_time.start());
    }
    CLASSIC
        .iter()
        .find(|(n, _)| *n == signal)
        .map_or_else(|| format!("signal {signal}"), |(_, s)| (*s).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_signal_that_ends_a_process_by_default_is_caught_except_the_uncatchable() {
        let caught = catchable();
        for s in [
            sig::SIGHUP,
            sig::SIGINT,
            sig::SIGQUIT,
            sig::SIGTERM,
            sig::SIGUSR1,
            sig::SIGUSR2,
            sig::SIGALRM,
            sig::SIGVTALRM,
            sig::SIGPROF,
            sig::SIGIO,
            SIGPWR,
            SIGSTKFLT,
            sig::SIGXCPU,
            sig::SIGXFSZ,
            *real_time().start(),
            *real_time().end(),
        ] {
            assert!(caught.contains(&s), "{} is caught", name(s));
        }
        for s in [
            sig::SIGKILL,
            sig::SIGSTOP,
            sig::SIGSEGV,
            sig::SIGCHLD,
            sig::SIGPIPE,
        ] {
            assert!(!caught.contains(&s), "{} is not caught", name(s));
        }
        // signal-hook accepts every one of them.
        let registered = signal_hook::iterator::Signals::new(&caught);
        assert!(registered.is_ok(), "{registered:?}");
    }

    #[test]
    fn names_and_statuses() {
        assert_eq!(name(sig::SIGUSR1), "SIGUSR1");
        assert_eq!(name(real_time().start() + 3), "SIGRTMIN+3");
        assert_eq!(name(SIGPWR), "SIGPWR");
        // The C library keeps the kernel's first real-time signals (32, 33)
        // for its threads: they are not caught, or its threads would break.
        assert!(*real_time().start() > 32, "{:?}", real_time());
        assert!(!catchable().contains(&32));
        assert_eq!(name(0), "signal 0");
        assert_eq!(exit_status(sig::SIGALRM), 142);
        assert_eq!(exit_status(-5), 128);
        assert!(is_request_to_stop(sig::SIGTERM));
        assert!(!is_request_to_stop(sig::SIGUSR1));
    }
}
