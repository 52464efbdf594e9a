//! `plugtop train`: the trainee's screen on a course, `train grade` for the
//! trainer's class, and `train check` for a course being written.

use std::io::Write;

use anyhow::Context;

use super::stderr::complain;
use crate::cli::{
    CheckFormat, GradeFormat, TrainArgs, TrainCheckArgs, TrainCommand, TrainGradeArgs,
};
use plugtop::commands::Status;
use plugtop::report::terminal_safe as safe;
use plugtop::train::{Course, grade, verify};

/// The threads to use when none are asked for: the cores.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// `plugtop train`.
pub fn run(args: TrainArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    match args.command {
        Some(TrainCommand::Grade(g)) => run_grade(g, out),
        Some(TrainCommand::Check(c)) => run_check(c, out),
        None => {
            let Some(path) = args.course else {
                anyhow::bail!("which course? plugtop train COURSE");
            };
            let course = Course::load(&path)?;
            if let Some(id) = &args.exercise
                && course.exercise(id).is_none()
            {
                let ids: Vec<&str> = course.exercises.iter().map(|e| e.id.as_str()).collect();
                anyhow::bail!(
                    "{} has no exercise {:?}; its exercises are: {}",
                    path.display(),
                    safe(id),
                    ids.join(", ")
                );
            }
            {
                use std::io::IsTerminal as _;
                if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
                    anyhow::bail!(
                        "plugtop train needs a terminal; `plugtop train check` and `plugtop train grade` work without one"
                    );
                }
            }
            let options = plugtop::train::screen::TrainOptions {
                start_at: args.exercise,
                mono: args.mono || std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            };
            let ended = plugtop::train::screen::run(course, &options)?;
            Ok(ended.map_or(Status::Ok, Status::ended_by))
        }
    }
}

fn run_grade(args: TrainGradeArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let course = Course::load(&args.course)?;
    let threads = args.threads.map_or_else(cores, |t| t as usize);
    let grades = grade::grade(&course, &args.dir, threads)
        .with_context(|| format!("grading {}", args.dir.display()))?;
    // A file that matches no exercise (an id mistyped) is not graded:
    // said on stderr, so the tables on stdout stay as they are.
    for file in &grades.unmatched {
        complain(&format!(
            "plugtop: warning: {}: matches no exercise of this course (a submission is ID.conf, or ID.answer for a diagnosis); not graded",
            args.dir.join(file).display()
        ));
    }
    let more = grades.unmatched_total - grades.unmatched.len();
    if more > 0 {
        complain(&format!(
            "plugtop: warning: {more} more files match no exercise; not graded"
        ));
    }
    let text = match args.format {
        GradeFormat::Text => grade::text(&grades),
        GradeFormat::Csv => grade::csv(&grades),
        GradeFormat::Json => grade::json(&grades),
    };
    out.write_all(text.as_bytes())?;
    Ok(Status::Ok)
}

fn run_check(args: TrainCheckArgs, out: &mut dyn Write) -> anyhow::Result<Status> {
    let course = Course::load(&args.course)?;
    let checked = verify::check_course(&course, cores());
    match args.format {
        CheckFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &checked)?;
            writeln!(out)?;
        }
        CheckFormat::Text => {
            let layout = args.wide.layout();
            for c in &checked {
                writeln!(
                    out,
                    "{} {}",
                    if c.ok { "ok  " } else { "FAIL" },
                    safe(&c.id)
                )?;
                for f in &c.findings {
                    write!(out, "{}", layout.prose(&format!("     {}", safe(f))))?;
                }
            }
        }
    }
    Ok(Status::of(checked.iter().all(|c| c.ok)))
}
