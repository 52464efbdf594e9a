//! The control loop and the screen's state on one thread, joined by the
//! same messages the two threads of the screen exchange: for line mode,
//! screenshots, tests and benchmarks, where nothing waits on a slow write.

use std::sync::Arc;

use super::app::{App, SourceLabel};
use super::command::Command;
use super::core::Core;
use super::keys::KeyAction;
use crate::control::controller::Mode;
use crate::kernel::Sample;
use crate::rules::{RuleSet, SourceFile};

/// A [`Core`] and the [`App`] it reports to.
pub struct Local {
    core: Core,
    app: App,
}

impl Local {
    /// A session for `rules` in `mode`, and its screen, before the first
    /// reading.
    pub fn new(rules: Arc<RuleSet>, file: SourceFile, source: SourceLabel, mode: Mode) -> Self {
        let mut core = Core::new(rules, file, mode);
        let app = App::new(core.board(), source);
        Local { core, app }
    }

    /// The screen's state.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// The screen's state, to change.
    pub fn app_mut(&mut self) -> &mut App {
        &mut self.app
    }

    /// The session and the actuator.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// The session and the actuator, to arm.
    pub fn core_mut(&mut self) -> &mut Core {
        &mut self.core
    }

    /// The two halves, for the screen's two threads.
    pub fn into_parts(self) -> (Core, App) {
        (self.core, self.app)
    }

    /// The screen's state alone.
    pub fn into_app(self) -> App {
        self.app
    }

    /// Takes one reading: decided, acted on per mode, and shown.
    pub fn ingest(&mut self, sample: Sample) {
        let update = self.core.step(sample);
        self.app.apply(update);
    }

    /// A user action, carried out to the end.
    pub fn key(&mut self, action: KeyAction) {
        if let Some(command) = self.app.update(action) {
            self.run(command);
        }
    }

    /// Switches mode, as `o`, `s` or a yes to `A` does.
    pub fn set_mode(&mut self, mode: Mode) {
        let update = self.core.set_mode(mode);
        self.app.apply(update);
    }

    /// Does what the screen asked. Nothing here arms a live guest, changes
    /// the pace or reads ahead: those belong to the screen's control
    /// thread.
    pub fn run(&mut self, command: Command) {
        let facts = self.app.facts().cloned();
        let updates = match (command, facts) {
            (Command::ApplyRules(rules), Some(facts)) => self.core.apply(&rules, &facts, None),
            (
                Command::WriteRules {
                    path,
                    rules,
                    replace,
                },
                Some(facts),
            ) => super::rules_file::write(&path, &rules, replace, &facts),
            (Command::Export { path, text }, _) => super::log_export::write(&path, &text),
            (other, _) => return self.run_one(other),
        };
        for update in updates {
            self.app.apply(update);
        }
    }

    /// [`Local::run`] for the commands answered by one update.
    fn run_one(&mut self, command: Command) {
        let update = match command {
            Command::Act(KeyAction::Step) => self.core.set_mode(Mode::Step),
            Command::Act(KeyAction::Autonomous) => self.core.ask_autonomous(),
            Command::SetMode(mode) => self.core.set_mode(mode),
            Command::Accept(shown) => self.core.accept(&shown),
            Command::Reject => self.core.reject(),
            Command::Act(_)
            | Command::Export { .. }
            | Command::Seek(_)
            | Command::StopSeek
            | Command::ApplyRules(_)
            | Command::WriteRules { .. }
            | Command::Arm(_)
            | Command::Wake { .. }
            | Command::Quit
            | Command::Stop(_) => return,
        };
        self.app.apply(update);
    }
}
