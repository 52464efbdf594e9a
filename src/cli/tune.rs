//! `plugtop tune`: the command line mapped onto [`plugtop::tune::run`],
//! a progress bar while it searches, and the report printed.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use crate::cli::{CheckFormat, TuneArgs, TuneObjective};
use plugtop::commands::Status;
use plugtop::tune::report;
use plugtop::tune::run::{Asked, prepare};
use plugtop::tune::score::Objective;

/// Carries out `plugtop tune`.
pub fn run(args: TuneArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let TuneArgs {
        workload,
        replay,
        config,
        against,
        budget,
        judge,
        seed,
        knob,
        write,
        format,
        old_kernel,
        duration,
        threads,
        whole,
        objective,
        forms,
        only_thresholds,
        only_workload,
        wide,
    } = args;
    let objective = match objective {
        TuneObjective::Cpu => Objective::Cpu,
        TuneObjective::Memory => Objective::Memory,
        TuneObjective::Steady => Objective::Steady,
    };
    let asked = Asked {
        workload,
        replay,
        whole,
        config,
        against,
        duration,
        old_kernel,
        objective,
        budget,
        judge,
        seed,
        threads,
        only_workload,
        knob,
        forms,
        only_thresholds,
        write,
    };
    let say = &mut |s: String| super::stderr::complain(&format!("plugtop: {s}"));
    let prepared = prepare(asked, say)?;
    let done = AtomicUsize::new(0);
    let finished = AtomicBool::new(false);
    let tuned = std::thread::scope(|scope| {
        if std::io::stderr().is_terminal() {
            scope.spawn(|| progress(&done, prepared.options.budget, &finished));
        }
        let t = prepared.tune(&done);
        finished.store(true, Ordering::Relaxed);
        t
    });
    for note in &tuned.form_notes {
        super::stderr::complain(&format!("plugtop: {note}"));
    }
    let said = prepared.said(&tuned);
    match format {
        CheckFormat::Text => report::text(
            &mut plugtop::report::TerminalText::new(&mut *out),
            &prepared,
            &tuned,
            &said,
            wide.layout(),
        )?,
        CheckFormat::Json => {
            let v = report::json(&prepared, &tuned, &said).to_string();
            writeln!(out, "{}", plugtop::report::terminal_safe_json(&v))?;
        }
    }
    prepared.write(&tuned, say)?;
    Ok(Status::of(tuned.recommended.is_some()))
}

/// A progress bar on stderr until `finished`.
fn progress(done: &AtomicUsize, budget: usize, finished: &AtomicBool) {
    while !finished.load(Ordering::Relaxed) {
        let n = done.load(Ordering::Relaxed).min(budget);
        let filled = n * 30 / budget.max(1);
        eprint!(
            "\r  tuning [{}{}] {n} of at most {budget} candidates",
            "#".repeat(filled),
            ".".repeat(30 - filled)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    eprint!("\r{}\r", " ".repeat(60));
}

#[cfg(test)]
mod tests {
    use plugtop::tune::Workload;

    fn workload(cpus: u32, duration: &str) -> Workload {
        let text = format!(
            "name = \"t\"\ncpus = {cpus}\nonline = 1\nmemory_mib = 4096\nduration = \"{duration}\"\n\
             [[phases]]\nstart = \"0:00\"\nthreads = 1\n"
        );
        Workload {
            scenario: plugtop::sim::Scenario::parse("t", &text)
                .unwrap_or_else(|e| panic!("scenario: {e}")),
            old_kernel: false,
            duration: None,
        }
    }

    #[test]
    fn the_default_budget_shrinks_with_length_and_size_but_never_to_nothing() {
        use plugtop::tune::default_budget;
        assert_eq!(default_budget(&workload(4, "12:30")), 2000);
        assert_eq!(default_budget(&workload(4, "24h")), 200);
        assert_eq!(default_budget(&workload(256, "20:00")), 125);
        assert_eq!(default_budget(&workload(4096, "24h")), 20);
    }
}
