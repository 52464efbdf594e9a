//! The trainee's screen (`plugtop train COURSE`): the exercise panel, the
//! rules in the what-if editor (or the trainee's own editor: the working
//! copy is reloaded when saved), the practice run closed loop at any
//! speed with the goal scored live, and progress kept in the state
//! directory. [`app`] holds the state and its one `update`, [`draw`]
//! renders it; this module is the event loop on the terminal shell
//! ([`crate::tui::terminal_shell`]: keys, signals, the terminal), which
//! turns keys into actions and real time into simulated intervals.
//!
//! No fixed frame rate: it waits for a key, for the next interval the
//! practice run is due (at 1× an interval a second), or for a second to
//! pass (to see a save in another editor), whichever comes first.

pub mod app;
pub mod draw;
pub mod workspace;

use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use crossterm::event::Event;

use super::course::Course;
use super::progress::CourseProgress;
use crate::tui::input::TermInput;
use crate::tui::stop::StopFlag;
use crate::tui::terminal_shell::{self as shell, PanicScope, ShellEvent, ShellScreen};
use app::{TrainAction, TrainApp};

/// How the screen starts.
#[derive(Debug, Clone, Default)]
pub struct TrainOptions {
    /// The exercise to start at (default: the first not yet solved).
    pub start_at: Option<String>,
    /// No colours.
    pub mono: bool,
}

/// Why the screen could not run.
#[derive(Debug, thiserror::Error)]
pub enum ScreenError {
    #[error("the terminal")]
    Terminal(#[from] std::io::Error),
    /// The state directory cannot keep the trainee's work: refused before
    /// the screen opens, so no edit is made only to be lost at `q`.
    #[error("cannot keep your work in {dir} (set XDG_STATE_HOME to a directory you can write)")]
    State {
        dir: String,
        #[source]
        source: std::io::Error,
    },
}

/// At most this many intervals are run between two looks at the keys, so
/// a key is answered within a frame even at full speed.
const MOST_PER_FRAME: usize = 200;

/// And at most about this long: a trainee's rules may cost milliseconds an
/// interval (variables that expand to 100,000 terms cost 15 ms), and 200
/// such intervals froze the screen for seconds.
const FRAME_BUDGET: Duration = Duration::from_millis(50);

/// How long to wait for a key: until the practice run's next interval
/// is due at the speed chosen, at most a second (the clock on the screen
/// and a save in another editor are looked at once a second).
fn wait_for(app: &TrainApp, owed: f64) -> Duration {
    // While a submission is judged on its thread, the loop looks for its
    // news ten times a second (the thread cannot wake a wait on the
    // terminal), only until the verdict.
    let most = if app.judging.is_some() {
        Duration::from_millis(100)
    } else {
        Duration::from_secs(1)
    };
    if !app.running() {
        return most;
    }
    let speed = app.speed();
    let interval = app
        .current
        .practice
        .as_ref()
        .map_or(1.0, |p| p.run.interval());
    if speed == 0.0 {
        Duration::ZERO
    } else {
        let due = (interval - owed).max(0.0) / speed;
        Duration::from_secs_f64(due.min(1.0)).min(most)
    }
}

/// Runs the intervals `dt` real seconds are worth at the speed chosen
/// (`owed` carries the simulated seconds not yet run), stopping after the
/// chunk at whose end `spent` says the frame's budget is gone (the screen:
/// [`FRAME_BUDGET`] since the frame began); whether any ran.
fn pace(app: &mut TrainApp, dt: f64, owed: &mut f64, mut spent: impl FnMut() -> bool) -> bool {
    if !app.running() {
        *owed = 0.0;
        return false;
    }
    let interval = app
        .current
        .practice
        .as_ref()
        .map_or(1.0, |p| p.run.interval())
        .max(0.001);
    let intervals = if app.speed() == 0.0 {
        MOST_PER_FRAME
    } else {
        *owed += dt * app.speed();
        let n = (*owed / interval).floor();
        *owed -= n * interval;
        (n as usize).min(MOST_PER_FRAME)
    };
    // In doubling chunks until the frame's budget is spent: cheap rules
    // run every interval owed in a few steps, costly ones a few intervals
    // a frame (the practice run then runs slower than asked, never the
    // keys). What is not run is not owed again.
    let (mut ran, mut chunk) = (0, 1);
    while ran < intervals && app.running() {
        let n = chunk.min(intervals - ran);
        app.update(TrainAction::Run(n));
        ran += n;
        if spent() {
            break;
        }
        chunk = chunk.saturating_mul(2);
    }
    ran > 0
}

/// Runs the screen until the trainee quits (`None`) or a stop signal
/// ends it (`Some` of the signal); the terminal is given back either way.
pub fn run(course: Course, options: &TrainOptions) -> Result<Option<i32>, ScreenError> {
    let state = crate::tui::state_dir::state_dir();
    let stem = course.stem();
    let progress_path = CourseProgress::path(&state, &stem);
    let work_dir = progress_path.with_extension("");
    if let Some(dir) = progress_path.parent() {
        let usable = std::fs::create_dir_all(dir).and_then(|()| {
            crate::kernel::fs::Root::dir(dir)
                .and_then(|d| d.check_writable())
                .map_err(std::io::Error::from)
        });
        if let Err(source) = usable {
            return Err(ScreenError::State {
                dir: dir.display().to_string(),
                source,
            });
        }
    }
    // Progress that cannot be read is left as it is (never overwritten)
    // and the session goes on without keeping any: degrade, don't die.
    let (progress, kept, problem) = match CourseProgress::load(&progress_path) {
        Ok(p) => (p, Some(progress_path), None),
        Err(e) => (CourseProgress::default(), None, Some(e)),
    };
    let mut app = TrainApp::new(
        course,
        progress,
        kept,
        Some(work_dir),
        options.start_at.as_deref(),
    );
    app.mono = options.mono;
    if let Some(e) = problem {
        app.status = format!(
            "{}; progress is not kept this session",
            crate::error_chain::text(&e)
        );
    }
    // A panic on the screen's thread gives the terminal back before it is
    // told. One on the judging thread must not: the screen goes on (the
    // thread's end is news, "judging stopped"), and its message written
    // over the screen would garble it.
    shell::restore_on_panic(PanicScope::ThisThread);
    let (events, event_rx) = channel();
    // Nothing is held for a guest: a stop signal may end the process as
    // soon as the screen has had its time to give the terminal back.
    let stop = StopFlag::new();
    let given_back = stop.clone();
    shell::spawn_inputs(&stop, move |event| {
        if let ShellEvent::Stop(signal) = event {
            given_back.given_back(
                crate::stop_signals::exit_status(signal),
                "nothing on this machine was changed (training runs on simulated guests)",
            );
        }
        events.send(event).is_ok()
    })?;
    shell::enter(false)?;
    let ended =
        ShellScreen::new().and_then(|mut screen| screen_loop(&mut app, &mut screen, &event_rx));
    shell::leave();
    Ok(ended?)
}

/// Keys, the practice run and the working copy until the trainee quits or
/// a stop signal comes (then: which).
fn screen_loop(
    app: &mut TrainApp,
    screen: &mut ShellScreen,
    events: &Receiver<ShellEvent>,
) -> std::io::Result<Option<i32>> {
    let mut last = Instant::now();
    // Simulated seconds owed to the practice run at the speed chosen.
    let mut owed = 0.0f64;
    let mut last_look = Instant::now();
    screen.draw(|f| draw::draw(app, f))?;
    while !app.quit {
        let mut changed = false;
        match events.recv_timeout(wait_for(app, owed)) {
            Ok(ShellEvent::Stop(signal)) => {
                // As quitting: an untouched working copy is put away and
                // the progress kept, or grading reads the start file as
                // handed in (within the shell's grace before it exits).
                app.update(TrainAction::Quit);
                return Ok(Some(signal));
            }
            Ok(ShellEvent::Keys(inputs)) => {
                for input in inputs {
                    measure(app, screen)?;
                    changed |= take_input(app, input);
                }
            }
            Ok(event) => {
                changed = screen.follow(&event)?;
                measure(app, screen)?;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Ok(None),
        }
        for news in app.judge_news() {
            // A judging thread that panicked may have written its message
            // over the screen (the standard hook prints it): every cell is
            // drawn again.
            if matches!(news, app::JudgeNews::Lost) {
                screen.redraw_all()?;
            }
            app.update(TrainAction::Judge(news));
            changed = true;
        }
        let now = Instant::now();
        let dt = now.duration_since(last).as_secs_f64();
        last = now;
        app.update(TrainAction::Spent(dt));
        changed |= pace(app, dt, &mut owed, || now.elapsed() >= FRAME_BUDGET);
        if now.duration_since(last_look) >= Duration::from_secs(1) {
            last_look = now;
            changed |= look_at_the_copy(app);
        }
        // The clock on the screen moves once a second.
        if changed || now.duration_since(last_look).is_zero() {
            screen.draw(|f| draw::draw(app, f))?;
        }
    }
    Ok(None)
}

/// Tells the app how far its help and exercise panel scroll at the
/// terminal's size now (the draw measures its own wrapped text).
fn measure(app: &mut TrainApp, screen: &ShellScreen) -> std::io::Result<()> {
    let size = screen.size()?;
    let fit = draw::fit(app, size.width, size.height);
    if app.fit != fit {
        app.update(TrainAction::Fit(fit));
    }
    Ok(())
}

/// A key or a paste from the keys thread; whether the screen changed.
fn take_input(app: &mut TrainApp, input: TermInput) -> bool {
    let action = match input {
        TermInput::Event(Event::Paste(text)) => Some(TrainAction::Paste(text)),
        input => shell::pressed(&input).and_then(|key| app.action_for(key)),
    };
    let Some(action) = action.filter(|_| !app.quit) else {
        return false;
    };
    app.update(action);
    true
}

/// Reloads the working copy when the trainee's own editor saved it;
/// whether it did.
fn look_at_the_copy(app: &mut TrainApp) -> bool {
    let Some(copy) = &mut app.current.copy else {
        return false;
    };
    let Some(read) = copy.changed() else {
        return false;
    };
    match read {
        Ok(bytes) => app.update(TrainAction::Saved(bytes)),
        Err(e) => app.status = format!("cannot reload: {}", crate::error_chain::text(&e)),
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::progress::CourseProgress;

    /// Rules whose variables expand to 131,072 terms: cpuplugd takes them,
    /// and each interval costs milliseconds (more in a debug build).
    fn costly() -> String {
        let mut s = String::from("UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\na0=\"loadavg\"\n");
        for i in 1..=16 {
            s.push_str(&format!("a{i}=\"a{}+a{}\"\n", i - 1, i - 1));
        }
        s + "HOTPLUG=\"a16>1e9\"\nHOTUNPLUG=\"a16<0\"\n"
    }

    /// A practice run of `rules` at full speed.
    fn practice(d: &tempfile::TempDir, rules: &str) -> TrainApp {
        let work = d.path().join("train/cpuplugd-basics");
        std::fs::create_dir_all(&work).expect("mkdir");
        std::fs::write(work.join("loadavg.conf"), rules).expect("write");
        let course = Course::load(std::path::Path::new(
            "examples/courses/cpuplugd-basics.toml",
        ))
        .expect("course");
        let mut app = TrainApp::new(
            course,
            CourseProgress::default(),
            None,
            Some(work),
            Some("loadavg"),
        );
        assert!(app.running(), "{}", app.status);
        app.speed = app::SPEEDS.len() - 1;
        app
    }

    /// Simulated seconds of the practice run so far (UPDATE="1": one a
    /// interval).
    fn ran(app: &TrainApp) -> f64 {
        app.current.practice.as_ref().expect("a run").run.seconds()
    }

    /// At full speed, a frame of the practice run under costly rules ends
    /// with the chunk in which its budget ran out, not after the 200
    /// intervals owed: the keys are looked at again. The budget is told
    /// by a count of looks at it, so the test does not depend on how fast
    /// the machine is.
    #[test]
    fn a_frame_of_costly_rules_keeps_to_its_budget() {
        let d = tempfile::tempdir().expect("tempdir");
        // Spent at the third look: chunks of 1, 2 and 4 intervals ran.
        let mut app = practice(&d, &costly());
        let mut looks = 0;
        let spent = || {
            looks += 1;
            looks >= 3
        };
        assert!(pace(&mut app, 0.1, &mut 0.0, spent), "some intervals ran");
        assert_eq!(looks, 3);
        assert_eq!(ran(&app), 7.0);
        let run = &app.current.practice.as_ref().expect("a run").run;
        assert!(!run.ended());
        // Spent at once: one interval, never none (the run moves on).
        let cheap = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"loadavg>1e9\"\nHOTUNPLUG=\"loadavg<0\"\n";
        let mut app = practice(&d, cheap);
        assert!(pace(&mut app, 0.1, &mut 0.0, || true));
        assert_eq!(ran(&app), 1.0);
        // Never spent (cheap rules): every interval owed, in doubling
        // chunks (a look after each: 1, 2, 4, ..., 64, then the 73 left).
        let mut app = practice(&d, cheap);
        let mut looks = 0;
        assert!(pace(&mut app, 0.1, &mut 0.0, || {
            looks += 1;
            false
        }));
        assert_eq!(ran(&app), MOST_PER_FRAME as f64);
        assert_eq!(looks, 8);
    }
}
