//! The event loop: a thread blocks on the terminal and forwards keys; the
//! loop waits for the next key or the next sampling deadline, whichever
//! comes first, and redraws only then. No fixed frame rate: an idle guest
//! sleeps between intervals.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use crossterm::event::{self, Event, KeyEventKind, MouseEventKind};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use super::app::{App, ArmInfo, Dialog, LogKind, SourceLabel};
use super::keys::{Action, action_for};
use super::{line, view};
use crate::commands::observe::built_in_rules;
use crate::control::actuator::RootActuator;
use crate::control::controller::Mode;
use crate::control::journal::{self, StartState};
use crate::control::lock::{self, GuestLock};
use crate::kernel::live::LiveSource;
use crate::kernel::machine::describe;
use crate::kernel::recording::RecordingSource;
use crate::kernel::{Sample, Source};
use crate::rules::{SourceFile, SystemFacts, load};

/// What `plugtop` (without a subcommand) was asked to show.
#[derive(Debug, Clone)]
pub struct Options {
    pub rules: Option<PathBuf>,
    pub root: PathBuf,
    pub replay: Option<PathBuf>,
    pub mode: Mode,
    /// One line per interval instead of the screen.
    pub batch: bool,
    pub mono: bool,
    /// Seconds between readings (default UPDATE).
    pub interval: Option<f64>,
    /// Stop after this many readings (line mode).
    pub count: Option<usize>,
    /// A scenario to simulate instead of reading a machine.
    pub sim: Option<PathBuf>,
    /// With `sim`: zone-suffixed /proc/vmstat names.
    pub old_kernel: bool,
    /// Allow step and autonomous mode on this machine's own `/` although it
    /// is not an s390 z/VM guest.
    pub allow_non_zvm: bool,
}

/// Why the UI could not start.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    #[error("{0}")]
    Rules(String),
    #[error("{0}")]
    Source(String),
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
    /// A signal ended the screen; the guest was put back (or the journal kept).
    #[error("{0}")]
    Ended(String),
}

/// How the screen ended, for the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScreenEnd {
    /// The user quit and the guest (if armed) is as it was.
    Quit,
    /// A signal ended it; 128 + the signal is the usual exit code.
    Signal(i32),
    /// The guest could not be fully put back; the journal is kept.
    RestoreFailed(String),
}

/// Whether to use line mode: asked for, a dumb terminal, or no terminal.
pub fn line_mode_wanted(batch: bool) -> bool {
    batch || std::env::var("TERM").is_ok_and(|t| t == "dumb") || !std::io::stdout().is_terminal()
}

fn read_rules(
    path: &Path,
    facts: &SystemFacts,
) -> Result<(Arc<crate::rules::RuleSet>, SourceFile), String> {
    crate::rules::load_path(path, facts).map(|(rules, file)| (Arc::new(rules), file))
}

/// An app fed with the first `readings` snapshots of `dir` under `rules`:
/// fixed data for screenshots, tests and demonstrations.
pub fn app_from_snapshots(
    rules: &Path,
    dir: &Path,
    readings: usize,
    mode: Mode,
) -> Result<App, String> {
    let mut source =
        crate::kernel::snapshots::SnapshotSource::open(dir).map_err(|e| e.to_string())?;
    let facts = source.facts();
    let (rules, file) = read_rules(rules, &facts)?;
    let label = SourceLabel::Replay {
        file: "incident.rec".into(),
        speed: 1.0,
    };
    let mut app = App::new(rules, file, label, mode);
    app.set_facts(facts);
    if let Some(first) = source.first_dir() {
        let machine = describe(&first);
        app.host = machine.host;
        app.kernel = machine.kernel;
    }
    for _ in 0..readings {
        match source.next_sample() {
            Some(Ok(s)) => app.ingest(s),
            Some(Err(e)) => return Err(e.to_string()),
            None => break,
        }
    }
    Ok(app)
}

/// The rule file asked for, or the built-in rules that fit the machine.
fn rules_for(
    options: &Options,
    facts: &SystemFacts,
) -> Result<(Arc<crate::rules::RuleSet>, SourceFile), UiError> {
    match &options.rules {
        Some(path) => read_rules(path, facts).map_err(UiError::Rules),
        None => {
            let file = built_in_rules(facts);
            let outcome = load(&file, facts);
            Ok((Arc::new(outcome.rules), file))
        }
    }
}

/// The app on a simulated guest: it can always be acted on (nothing real
/// is written), so no lock or journal is needed.
fn prepare_sim(options: &Options, scenario: &Path) -> Result<(App, Box<dyn Source>), UiError> {
    use crate::sim::{Guest, Scenario, SimActuator, SimSource};
    let scenario = Scenario::load(scenario).map_err(|e| UiError::Source(e.to_string()))?;
    let guest = std::rc::Rc::new(std::cell::RefCell::new(Guest::new(
        &scenario,
        options.old_kernel,
    )));
    let facts = crate::sim::facts(&guest.borrow());
    let (rules, file) = rules_for(options, &facts)?;
    // Each reading is one UPDATE of simulated time, whatever the pace
    // (`--interval` and `+`/`-` only change how fast the readings come).
    let source = SimSource::new(
        std::rc::Rc::clone(&guest),
        rules.settings.update.max(1) as f64,
    );
    let mut app = App::new(
        rules,
        file,
        SourceLabel::Sim {
            scenario: scenario.name.clone(),
            speed: 1.0,
        },
        Mode::Observe,
    );
    app.host = scenario.name.clone();
    app.kernel = if options.old_kernel {
        "simulated (old vmstat names)".into()
    } else {
        "simulated".into()
    };
    app.color = !options.mono && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    app.actuator = Some(Box::new(SimActuator::new(guest)));
    app.set_facts(facts);
    app.sim = Some((scenario, options.old_kernel));
    if options.mode != Mode::Observe {
        app.set_mode(options.mode);
    }
    Ok((app, Box::new(source)))
}

/// Builds the app and its source without touching the terminal.
pub fn prepare(options: &Options) -> Result<(App, Box<dyn Source>), UiError> {
    if let Some(scenario) = &options.sim {
        return prepare_sim(options, scenario);
    }
    let (source, label, host, kernel): (Box<dyn Source>, SourceLabel, String, String) =
        match &options.replay {
            Some(file) => {
                let r = RecordingSource::open(file).map_err(|e| UiError::Source(e.to_string()))?;
                let (host, kernel) = (r.header().host.clone(), r.header().kernel.clone());
                let label = SourceLabel::Replay {
                    file: file.display().to_string(),
                    speed: 1.0,
                };
                (Box::new(r), label, host, kernel)
            }
            None => {
                let m = describe(&options.root);
                (
                    Box::new(LiveSource::new(&options.root)),
                    SourceLabel::Live(options.root.display().to_string()),
                    m.host,
                    m.kernel,
                )
            }
        };
    let mut source = source;
    let facts = source.facts();
    let (rules, file) = rules_for(options, &facts)?;
    let mut app = App::new(rules, file, label, Mode::Observe);
    app.set_facts(facts);
    if options.replay.is_none() {
        let online = std::fs::read_to_string(options.root.join(crate::kernel::root::paths::ONLINE))
            .unwrap_or_default();
        if let Some(h) = crate::control::patterns::affinity(&options.root, online.trim()) {
            app.add_hint(h);
        }
    }
    if options.mode != Mode::Observe && options.replay.is_none() {
        app.note(LogKind::Note, format!("starting in {} mode", options.mode));
    }
    app.host = host;
    app.kernel = kernel;
    app.color = !options.mono && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    if options.replay.is_some() {
        app.cannot_act = Some("this is a recording; only a live guest can be changed".into());
    }
    Ok((app, source))
}

/// What an armed (acting) UI holds, released and undone on quit.
struct Armed {
    _lock: GuestLock,
    state: PathBuf,
    root: PathBuf,
    start: StartState,
}

/// Whether this root is this machine's own `/`.
fn is_own_root(root: &Path) -> bool {
    std::fs::canonicalize(root).is_ok_and(|r| r == Path::new("/"))
}

/// What arming `root` would take and put back, or why it is refused: on
/// this machine's own `/` only an s390 z/VM guest may be changed, unless
/// `--allow-non-zvm` says otherwise. Test roots and the simulator need no
/// such option.
pub fn arm_check(
    options: &Options,
    mode: Mode,
    latest: Option<&Sample>,
) -> Result<ArmInfo, String> {
    let root = &options.root;
    let id = crate::kernel::machine::identity(root);
    let guest = match (&id.guest_name, id.zvm_guest, id.s390) {
        (Some(name), true, _) => format!("z/VM guest {name}"),
        (None, true, _) => "a z/VM guest".to_string(),
        (_, false, true) => "s390x, not a z/VM guest (an LPAR?)".to_string(),
        (_, false, false) => "not an s390 z/VM guest".to_string(),
    };
    if is_own_root(root) && !id.zvm_guest && !options.allow_non_zvm {
        return Err(format!(
            "{} is {} ({}): cpuplugd's rules are meant for z/VM guests, and {mode} mode would take this machine's CPUs offline. Start plugtop with --allow-non-zvm to act anyway, or try it on `plugtop --sim SCENARIO`.",
            id.host, guest, id.architecture
        ));
    }
    let sample = latest.ok_or("no reading yet; try again in a moment")?;
    let restore_to = format!(
        "CPUs {} online, cmm_pages {}",
        crate::kernel::recording::export::ranges(&sample.online),
        sample
            .cmm_pages
            .map_or("absent".to_string(), |p| p.to_string())
    );
    Ok(ArmInfo {
        mode,
        host: id.host,
        architecture: id.architecture,
        guest,
        root: root.display().to_string(),
        lock: root.join(lock::LOCK_FILE).display().to_string(),
        journal: journal::default_path(root).display().to_string(),
        restore_to,
    })
}

/// Takes the lock, writes the journal and gives the app an actuator.
fn arm(app: &mut App, root: &Path, first: Option<&Sample>) -> Result<Armed, String> {
    let lock = lock::acquire(root).map_err(|e| e.to_string())?;
    let actuator = RootActuator::new(root).map_err(|e| e.to_string())?;
    let state = journal::default_path(root);
    if let Some(old) = journal::read(&state).map_err(|e| e.to_string())? {
        return Err(format!(
            "a plugtop (pid {}) did not restore this guest; run `plugtop restore` first",
            old.pid
        ));
    }
    let sample = first.ok_or("no reading yet")?;
    let start = StartState {
        pid: std::process::id(),
        root: root.display().to_string(),
        online: sample.online.ids.clone(),
        cmm_pages: sample.cmm_pages,
    };
    journal::write(&state, &start).map_err(|e| e.to_string())?;
    crate::daemon::install_panic_hook(root.to_path_buf(), state.clone());
    app.actuator = Some(Box::new(actuator));
    Ok(Armed {
        _lock: lock,
        state,
        root: root.to_path_buf(),
        start,
    })
}

/// Puts the guest back. The journal goes only after a complete restore;
/// otherwise it stays for `plugtop restore`, and the error says what is left.
fn disarm(armed: Armed, app: &mut App) -> Result<(), String> {
    let mut failures = Vec::new();
    match app.actuator.as_mut() {
        Some(a) => {
            if let Err(e) = journal::restore(a.as_mut(), &armed.start, &mut failures) {
                failures.push(e.to_string());
            }
        }
        None => failures.push("no actuator".into()),
    }
    app.actuator = None;
    if failures.is_empty() {
        let _ = journal::remove(&armed.state);
        let _ = std::fs::remove_file(armed.root.join(lock::LOCK_FILE));
        return Ok(());
    }
    Err(format!(
        "the guest was not fully put back ({}); the journal {} is kept: fix the cause and run `plugtop restore --root {}`",
        failures.join("; "),
        armed.state.display(),
        armed.root.display()
    ))
}

fn own_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Line mode: one line per decided interval.
pub fn run_lines(options: &Options, out: &mut dyn Write) -> Result<(), UiError> {
    let (mut app, mut source) = prepare(options)?;
    writeln!(
        out,
        "plugtop: {} with {} (observe mode; one line per interval)",
        app.host,
        app.file().name()
    )?;
    let interval = Duration::from_secs_f64(
        options
            .interval
            .unwrap_or(app.rules().settings.update as f64)
            .max(0.0),
    );
    let live = options.replay.is_none();
    let mut taken = 0;
    while let Some(sample) = source.next_sample() {
        match sample {
            Ok(s) => app.ingest(s),
            Err(e) => writeln!(out, "cannot read: {e}")?,
        }
        taken += 1;
        if let Some(l) = line::interval(&app) {
            writeln!(out, "{l}")?;
        }
        out.flush()?;
        if options.count.is_some_and(|c| taken >= c) {
            break;
        }
        if live {
            std::thread::sleep(interval);
        }
    }
    Ok(())
}

/// Restores the terminal; called on every way out.
fn restore_terminal() {
    let _ = disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        LeaveAlternateScreen,
        event::DisableMouseCapture
    );
}

/// What the loop waits for: the terminal, or a signal.
enum Input {
    Term(Event),
    Signal(i32),
}

/// The full-screen UI. Every way out restores the terminal; an armed guest
/// is put back on quit and on SIGHUP (an SSH drop), SIGTERM and SIGINT.
pub fn run_screen(options: &Options) -> Result<ScreenEnd, UiError> {
    let (mut app, mut source) = prepare(options)?;
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        previous(info);
    }));
    enter_screen()?;
    let result = event_loop(options, &mut app, source.as_mut());
    restore_terminal();
    result
}

fn enter_screen() -> std::io::Result<()> {
    enable_raw_mode()?;
    execute!(
        std::io::stdout(),
        EnterAlternateScreen,
        event::EnableMouseCapture
    )
}

/// Ctrl-Z or SIGTSTP: give the terminal back, stop, and on `fg` take it
/// again with a full redraw.
fn suspend(terminal: &mut Terminal<CrosstermBackend<std::io::Stdout>>) -> std::io::Result<()> {
    restore_terminal();
    signal_hook::low_level::emulate_default_handler(signal_hook::consts::SIGTSTP)?;
    enter_screen()?;
    terminal.clear()
}

fn spawn_inputs() -> Result<std::sync::mpsc::Receiver<Input>, UiError> {
    use signal_hook::consts::{SIGCONT, SIGHUP, SIGINT, SIGTERM, SIGTSTP};
    let (tx, rx) = channel();
    let keys = tx.clone();
    std::thread::Builder::new()
        .name("plugtop-keys".into())
        .spawn(move || {
            while let Ok(ev) = event::read() {
                if keys.send(Input::Term(ev)).is_err() {
                    break;
                }
            }
        })?;
    let mut signals =
        signal_hook::iterator::Signals::new([SIGHUP, SIGTERM, SIGINT, SIGTSTP, SIGCONT])?;
    std::thread::Builder::new()
        .name("plugtop-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if tx.send(Input::Signal(signal)).is_err() {
                    break;
                }
            }
        })?;
    Ok(rx)
}

fn event_loop(
    options: &Options,
    app: &mut App,
    source: &mut dyn Source,
) -> Result<ScreenEnd, UiError> {
    use signal_hook::consts::{SIGCONT, SIGTSTP};
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    let rx = spawn_inputs()?;
    let live = options.replay.is_none();
    let mut speed = 1.0f64;
    let mut armed: Option<Armed> = None;
    let mut exhausted = false;
    let mut next = Instant::now();
    let mut cpu_mark = (Instant::now(), own_cpu_ns());
    let mut start_mode =
        (options.mode != Mode::Observe && live && options.sim.is_none()).then_some(options.mode);
    let mut end = ScreenEnd::Quit;
    loop {
        let now = Instant::now();
        let sampling = !exhausted && (live || !app.paused);
        if sampling && now >= next {
            exhausted |= !take_reading(app, source);
            if let Some(mode) = start_mode.take() {
                let latest = app.frames.front().map(|f| Arc::clone(&f.sample));
                let checked = arm_check(options, mode, latest.as_deref());
                match checked.and_then(|_| arm(app, &options.root, latest.as_deref())) {
                    Ok(a) => {
                        armed = Some(a);
                        app.set_mode(mode);
                    }
                    Err(e) => {
                        app.dialog = Some(Dialog::Message(format!("staying in observe mode: {e}")))
                    }
                }
            }
            let interval = options
                .interval
                .unwrap_or(app.rules().settings.update.max(1) as f64);
            next = now + Duration::from_secs_f64((interval / speed).max(0.01));
            if let (Some(before), Some(after)) = (cpu_mark.1, own_cpu_ns()) {
                let wall = now.duration_since(cpu_mark.0).as_secs_f64();
                if wall > 0.0 {
                    app.own_cpu = Some((after.saturating_sub(before)) as f64 / 1e9 / wall * 100.0);
                }
                cpu_mark = (now, Some(after));
            }
            terminal.draw(|f| view::draw(f, app))?;
        }
        let wait = if sampling {
            next.saturating_duration_since(Instant::now())
        } else {
            Duration::from_secs(3600)
        };
        let ev = match rx.recv_timeout(wait) {
            Ok(Input::Term(ev)) => ev,
            Ok(Input::Signal(SIGTSTP)) => {
                suspend(&mut terminal)?;
                terminal.draw(|f| view::draw(f, app))?;
                continue;
            }
            Ok(Input::Signal(SIGCONT)) => {
                terminal.clear()?;
                terminal.draw(|f| view::draw(f, app))?;
                continue;
            }
            Ok(Input::Signal(signal)) => {
                end = ScreenEnd::Signal(signal);
                break;
            }
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        if let Event::Key(k) = ev
            && k.kind != KeyEventKind::Release
            && k.code == crossterm::event::KeyCode::Char('z')
            && k.modifiers
                .contains(crossterm::event::KeyModifiers::CONTROL)
        {
            suspend(&mut terminal)?;
            terminal.draw(|f| view::draw(f, app))?;
            continue;
        }
        if let Event::Key(k) = ev
            && k.kind != KeyEventKind::Release
            && app.whatif.is_some()
        {
            app.whatif_key(k);
            terminal.draw(|f| view::draw(f, app))?;
            continue;
        }
        let action = match ev {
            // Any key closes the help or a message, bound or not.
            Event::Key(k)
                if k.kind != KeyEventKind::Release
                    && (app.help || matches!(app.dialog, Some(Dialog::Message(_)))) =>
            {
                Some(action_for(k).unwrap_or(Action::Later))
            }
            Event::Key(k) if k.kind != KeyEventKind::Release => action_for(k),
            Event::Mouse(m) => match m.kind {
                MouseEventKind::ScrollUp => Some(Action::Up),
                MouseEventKind::ScrollDown => Some(Action::Down),
                _ => None,
            },
            Event::Resize(..) => {
                terminal.autoresize()?;
                None
            }
            _ => None,
        };
        if let Some(action) = action {
            handle(options, app, action, &mut armed, &mut speed, live);
        }
        if app.quit {
            break;
        }
        terminal.draw(|f| view::draw(f, app))?;
    }
    if let Some(a) = armed.take()
        && let Err(e) = disarm(a, app)
    {
        return Ok(ScreenEnd::RestoreFailed(e));
    }
    Ok(end)
}

/// Takes the next reading into the app; false when the source has ended.
fn take_reading(app: &mut App, source: &mut dyn Source) -> bool {
    let more = match source.next_sample() {
        Some(Ok(s)) => {
            app.ingest(s);
            true
        }
        Some(Err(e)) => {
            app.note(LogKind::Problem, format!("skipping this interval: {e}"));
            true
        }
        None => {
            app.note(LogKind::Note, "end of the recording");
            false
        }
    };
    if let Some(w) = source.warning() {
        app.note(LogKind::Problem, w);
    }
    more
}

/// Actions that need the outside world (files, the lock); the rest go to the app.
fn handle(
    options: &Options,
    app: &mut App,
    action: Action,
    armed: &mut Option<Armed>,
    speed: &mut f64,
    live: bool,
) {
    let unarmed = armed.is_none() && app.actuator.is_none() && app.cannot_act.is_none() && live;
    let wants = match action {
        Action::Step if app.dialog.is_none() => Some(Mode::Step),
        Action::Autonomous if app.dialog.is_none() => Some(Mode::Auto),
        _ => None,
    };
    // Acting on a live guest asks first, saying what will be taken and
    // what will be put back.
    if let Some(mode) = wants
        && unarmed
    {
        let latest = app.frames.front().map(|f| Arc::clone(&f.sample));
        app.dialog = Some(match arm_check(options, mode, latest.as_deref()) {
            Ok(info) => Dialog::Arm(info),
            Err(why) => Dialog::Message(format!("plugtop will not change this machine: {why}")),
        });
        return;
    }
    if action == Action::Yes
        && let Some(Dialog::Arm(info)) = app.dialog.clone()
    {
        app.dialog = None;
        let latest = app.frames.front().map(|f| Arc::clone(&f.sample));
        match arm(app, &options.root, latest.as_deref()) {
            Ok(a) => {
                *armed = Some(a);
                app.set_mode(info.mode);
            }
            Err(e) => {
                app.dialog = Some(Dialog::Message(format!(
                    "plugtop cannot change this guest: {e}"
                )))
            }
        }
        return;
    }
    match action {
        Action::Reload => match &options.rules {
            Some(path) => {
                let facts = match &options.sim {
                    Some(file) => match crate::sim::Scenario::load(file) {
                        Ok(s) => crate::sim::facts(&crate::sim::Guest::new(&s, options.old_kernel)),
                        Err(e) => {
                            app.dialog = Some(Dialog::Message(e.to_string()));
                            return;
                        }
                    },
                    None => crate::kernel::root::RootReader::new().facts(&options.root),
                };
                match read_rules(path, &facts) {
                    Ok((rules, file)) => app.reload(rules, file),
                    Err(e) => {
                        app.note(LogKind::Problem, "reload failed; the old rules stay active");
                        app.dialog = Some(Dialog::Message(e));
                    }
                }
            }
            None => {
                app.dialog = Some(Dialog::Message(
                    "the built-in rules have no file to reload; start with -c FILE".into(),
                ))
            }
        },
        Action::Export => {
            let path = format!("plugtop-log-{}.txt", std::process::id());
            let text: String = app
                .log
                .iter()
                .map(|l| format!("{} {}\n", view::clock(l.stamp), l.text))
                .collect();
            match std::fs::write(&path, text) {
                Ok(()) => app.note(LogKind::Note, format!("log exported to {path}")),
                Err(e) => app.note(
                    LogKind::Problem,
                    format!("cannot export the log to {path}: {e}"),
                ),
            }
        }
        Action::Faster | Action::Slower if !live || options.sim.is_some() => {
            *speed = if action == Action::Faster {
                (*speed * 2.0).min(64.0)
            } else {
                (*speed / 2.0).max(0.125)
            };
            if let SourceLabel::Replay { speed: s, .. } | SourceLabel::Sim { speed: s, .. } =
                &mut app.source
            {
                *s = *speed;
            }
        }
        other => app.update(other),
    }
}
