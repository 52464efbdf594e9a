//! The screen's control thread: it takes the readings, runs the session
//! (decisions and, when armed, the sysfs writes), arms and disarms the guest
//! and carries out every key that needs the outside world. Slow I/O (a CPU
//! going offline can take seconds on s390) therefore never runs on the
//! thread that reads keys and draws; that thread shows what is in progress
//! and queues keys meanwhile.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::app::{App, Dialog, LogKind, SourceLabel};
use super::arming::{Progress, arm, arm_check, disarm};
use super::keys::KeyAction;
use super::run::{Options, ScreenEnd, read_rules};
use super::stop::StopFlag;
use crate::control::controller::{Mode, Proposal};
use crate::control::guard::Guard;
use crate::kernel::{Sample, Source};

/// What the screen thread asks of the control thread.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// A key whose action needs files, the lock or the guest.
    Act(KeyAction),
    /// Write the log to this path (`e`, then Enter).
    Export(std::path::PathBuf),
    /// `y` on this proposal, exactly as it was on screen.
    Accept(Box<Proposal>),
    /// A key changed what is sampled (pause, time travel): look again.
    Wake,
    /// The user quit.
    Quit,
    /// A signal ends the screen (it is in [`Shared::stop`] too; this wakes
    /// the thread).
    Stop(i32),
}

/// What the control thread tells the screen thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    /// The app changed: redraw.
    Changed,
    /// Everything is put back (or the journal kept): the screen may close.
    Ended(ScreenEnd),
}

/// The app and what its actuator is doing, shared by the two threads.
pub struct Shared {
    pub app: Mutex<App>,
    pub progress: Progress,
    /// A stop signal: acted on before any command still queued.
    pub stop: StopFlag,
}

impl Shared {
    /// The app, waiting for the control thread if it holds it.
    pub fn lock(&self) -> MutexGuard<'_, App> {
        self.app
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Whether `action` must run on the control thread (it touches files, the
/// lock or the guest, or the sampling pace).
pub fn needs_control(action: KeyAction) -> bool {
    matches!(
        action,
        KeyAction::Yes
            | KeyAction::Step
            | KeyAction::Autonomous
            | KeyAction::Reload
            | KeyAction::Faster
            | KeyAction::Slower
    )
}

/// The control thread's state between wake-ups.
struct Control {
    options: Options,
    live: bool,
    armed: Option<Guard>,
    speed: f64,
    exhausted: bool,
    next: Instant,
    cpu_mark: (Instant, Option<u64>),
    start_mode: Option<Mode>,
}

/// Runs until the screen quits or a signal ends it; then puts the guest
/// back and reports how that went.
pub fn run(
    options: Options,
    shared: &Shared,
    source: &mut dyn Source,
    commands: &Receiver<Command>,
    notify: impl Fn(Report) -> bool,
) {
    let live = options.replay.is_none();
    let start_mode =
        (options.mode != Mode::Observe && live && options.sim.is_none()).then_some(options.mode);
    let mut c = Control {
        options,
        live,
        armed: None,
        speed: 1.0,
        exhausted: false,
        next: Instant::now(),
        cpu_mark: (Instant::now(), crate::kernel::machine::own_cpu_ns()),
        start_mode,
    };
    let end = loop {
        let sampling = !c.exhausted && (c.live || !shared.lock().paused);
        let wait = if sampling {
            c.next.saturating_duration_since(Instant::now())
        } else {
            Duration::from_secs(3600)
        };
        let command = commands.recv_timeout(wait);
        // A signal goes before the commands queued ahead of its own
        // `Stop` (thousands, if keys were pasted into the screen).
        if let Some(signal) = shared.stop.raised() {
            break ScreenEnd::Signal(signal);
        }
        match command {
            Ok(Command::Act(action)) => {
                let mut app = shared.lock();
                c.handle(&mut app, action, &shared.progress);
            }
            Ok(Command::Accept(shown)) => shared.lock().accept(&shown),
            Ok(Command::Export(path)) => crate::tui::log_export::export(&mut shared.lock(), &path),
            Ok(Command::Wake) => continue,
            Ok(Command::Quit) => break ScreenEnd::Quit,
            Ok(Command::Stop(signal)) => break ScreenEnd::Signal(signal),
            Err(RecvTimeoutError::Timeout) if sampling => c.tick(shared, source),
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break ScreenEnd::Quit,
        }
        if !notify(Report::Changed) {
            break ScreenEnd::Quit;
        }
    };
    let end = match c.armed.take() {
        Some(armed) => match disarm(armed, &mut shared.lock()) {
            Ok(()) => end,
            Err(why) => ScreenEnd::RestoreFailed(why),
        },
        None => end,
    };
    // From here on the process may end without the screen thread (stuck
    // writing to a terminal nobody reads) once a signal asked it to.
    shared.stop.given_back(end.exit_status());
    let _ = notify(Report::Ended(end));
}

impl Control {
    /// One reading: taken without holding the app, then decided and acted
    /// on with it.
    fn tick(&mut self, shared: &Shared, source: &mut dyn Source) {
        let now = Instant::now();
        let reading = source.next_sample();
        let warning = source.warning();
        let status = source.status();
        let mut app = shared.lock();
        app.source_status = status;
        match reading {
            Some(Ok(s)) => {
                // `--mode step|auto` arms on the first reading, before it
                // is decided: the session then starts acting with it and
                // applies the start limits as cpuplugd does at its start.
                if let Some(mode) = self.start_mode.take() {
                    self.arm_at_start(&mut app, mode, &s, &shared.progress);
                }
                app.ingest(s)
            }
            Some(Err(e)) => app.note(LogKind::Problem, format!("skipping this interval: {e}")),
            None => {
                self.exhausted = true;
                app.note(LogKind::Note, "end of the recording");
            }
        }
        if let Some(w) = warning {
            app.note(LogKind::Problem, w);
        }
        let interval = app.rules().pace(self.options.interval);
        let wait = crate::pace::scaled(interval, self.speed).max(Duration::from_millis(10));
        self.next = crate::pace::deadline(now, wait);
        if let (Some(before), Some(after)) = (self.cpu_mark.1, crate::kernel::machine::own_cpu_ns())
        {
            let wall = now.duration_since(self.cpu_mark.0).as_secs_f64();
            if wall > 0.0 {
                app.measured_own_cpu((after.saturating_sub(before)) as f64 / 1e9 / wall * 100.0);
            }
            self.cpu_mark = (now, Some(after));
        }
    }

    /// `--mode step|auto` on a live root: the command line is the consent,
    /// but the machine must still be one plugtop may change.
    fn arm_at_start(&mut self, app: &mut App, mode: Mode, first: &Sample, progress: &Progress) {
        let checked = arm_check(&self.options, mode, Some(first));
        match checked.and_then(|_| arm(app, &self.options, Some(first), progress)) {
            Ok(a) => {
                self.armed = Some(a);
                app.set_mode(mode);
            }
            Err(e) => app.show(Dialog::Message(format!("staying in observe mode: {e}"))),
        }
    }

    /// A key that needs the outside world.
    fn handle(&mut self, app: &mut App, action: KeyAction, progress: &Progress) {
        let unarmed =
            self.armed.is_none() && app.actuator.is_none() && app.cannot_act.is_none() && self.live;
        let wants = match action {
            KeyAction::Step if app.dialog.is_none() => Some(Mode::Step),
            KeyAction::Autonomous if app.dialog.is_none() => Some(Mode::Auto),
            _ => None,
        };
        // Acting on a live guest asks first, saying what will be taken and
        // what will be put back.
        if let Some(mode) = wants
            && unarmed
        {
            let latest = app.frames.front().map(|f| Arc::clone(&f.sample));
            app.show(match arm_check(&self.options, mode, latest.as_deref()) {
                Ok(info) => Dialog::Arm(info),
                Err(why) => Dialog::Message(format!("plugtop will not change this machine: {why}")),
            });
            return;
        }
        if action == KeyAction::Yes
            && let Some(Dialog::Arm(info)) = app.dialog.clone()
        {
            app.close_dialog();
            let latest = app.frames.front().map(|f| Arc::clone(&f.sample));
            match arm(app, &self.options, latest.as_deref(), progress) {
                Ok(a) => {
                    self.armed = Some(a);
                    app.set_mode(info.mode);
                }
                Err(e) => app.show(Dialog::Message(format!(
                    "plugtop cannot change this guest: {e}"
                ))),
            }
            return;
        }
        match action {
            KeyAction::Reload => self.reload(app),
            KeyAction::Faster | KeyAction::Slower if !self.live || self.options.sim.is_some() => {
                self.speed = if action == KeyAction::Faster {
                    (self.speed * 2.0).min(64.0)
                } else {
                    (self.speed / 2.0).max(0.125)
                };
                if let SourceLabel::Replay { speed: s, .. } | SourceLabel::Sim { speed: s, .. } =
                    &mut app.source
                {
                    *s = self.speed;
                }
            }
            other => app.update(other),
        }
    }

    fn reload(&self, app: &mut App) {
        let Some(path) = &self.options.rules else {
            app.show(Dialog::Message(
                "the built-in rules have no file to reload; start with -c FILE".into(),
            ));
            return;
        };
        let facts = match &self.options.sim {
            Some(file) => match crate::sim::Scenario::load(file) {
                Ok(s) => crate::sim::facts(&crate::sim::Guest::new(&s, self.options.old_kernel)),
                Err(e) => {
                    app.show(Dialog::Message(e.to_string()));
                    return;
                }
            },
            None => crate::kernel::root::RootReader::new().facts(&self.options.root),
        };
        match read_rules(path, &facts) {
            Ok((rules, file)) => app.reload(rules, file),
            Err(e) => {
                app.note(LogKind::Problem, "reload failed; the old rules stay active");
                app.show(Dialog::Message(e.to_string()));
            }
        }
    }
}
