//! One control loop for every front end: the same simulated guest driven by
//! the headless simulator, by `plugtop run`'s loop and by the screen's
//! autonomous mode takes the same actions in the same order, start limits
//! included.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use plugtop::control::controller::Mode;
use plugtop::control::flap::FlapConfig;
use plugtop::daemon::{Ending, RunOptions, Signals, run_with};
use plugtop::kernel::Source;
use plugtop::logging::Memory;
use plugtop::rules::SystemFacts;
use plugtop::sim::run::{SimOptions, guest_for, simulate};
use plugtop::sim::{Scenario, SharedGuest, SimActuator, SimSource, facts};
use plugtop::tui::app::SourceLabel;
use plugtop::tui::local::Local;

/// The recommended rules with limits the guest starts outside of: 4 CPUs
/// online against CPU_MAX 2, an empty pool against CMM_MIN 1000.
fn rules(dir: &std::path::Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string("examples/rules/recommended-modern.conf")
        .expect("shipped rules")
        .replace("CPU_MAX=\"0\"", "CPU_MAX=\"2\"")
        .replace("CMM_MIN=\"0\"", "CMM_MIN=\"1000\"");
    let path = dir.join("limits.conf");
    std::fs::write(&path, text).expect("rules");
    path
}

fn options() -> SimOptions {
    SimOptions {
        duration: Some(180.0),
        ..SimOptions::default()
    }
}

/// The lines that are actions, without time stamps or reasons.
fn actions(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| {
            ["unplugged cpu", "plugged cpu", "changing number of pages"]
                .iter()
                .find_map(|k| l.find(k).map(|at| l[at..].replace(" (limits)", "")))
        })
        .collect()
}

fn guest(scenario: &Scenario) -> (SharedGuest, SimSource, SystemFacts) {
    let guest = SharedGuest::new(guest_for(scenario, &options()));
    let facts = facts(&guest.borrow());
    let mut source = SimSource::new(guest.clone(), 1.0);
    source.stop_at_end = true;
    (guest, source, facts)
}

fn headless(scenario: &Scenario, rules: &std::path::Path) -> Vec<String> {
    let o = SimOptions {
        keep_timeline: true,
        ..options()
    };
    match simulate(scenario, rules, &o, &mut |_| {}, &mut |_| {}) {
        Ok(outcome) => actions(&outcome.log),
        Err(e) => panic!("{e}"),
    }
}

fn run_loop(scenario: &Scenario, rules: &std::path::Path, root: &std::path::Path) -> Vec<String> {
    let (guest, mut source, _) = guest(scenario);
    // The root holds the guest as `sim --serve` publishes it (plugtop acts
    // only on a start state `restore` could put back from it).
    let beneath = plugtop::kernel::fs::Root::open(root).expect("root");
    plugtop::sim::published_root::publish_all(&guest.borrow(), &beneath).expect("published");
    let mut actuator = SimActuator::new(guest);
    let options = RunOptions {
        rules: rules.to_path_buf(),
        root: root.to_path_buf(),
        mode: Mode::Auto,
        state: root.join("run/plugtop/state"),
        force: false,
        // Verbose, as cpuplugd's -V: only then does plugtop run log each
        // change of the pool the rules make (the simulator and the screen
        // always show them).
        verbose: true,
        table: plugtop::report::Layout::Wide,
        interval: Some(Duration::ZERO),
        allow_non_zvm: false,
        pid_file: false,
        flap: FlapConfig::default(),
        check_lpar: false,
        on_started: None,
        metrics: plugtop::daemon::MetricsOptions::default(),
    };
    let mut log = Memory::default();
    let ended = run_with(
        &options,
        &mut source,
        &mut actuator,
        &mut log,
        &Signals::default(),
    );
    assert!(matches!(ended, Ok(Ending::Stopped)), "{ended:?}");
    let lines: Vec<String> = log.lines.into_iter().map(|(_, l)| l).collect();
    // The run ends by restoring the start state; that is not the loop's.
    let restored = lines
        .iter()
        .any(|l| l.starts_with("restored the start state"));
    assert!(restored, "{lines:?}");
    actions(&lines)
}

fn screen(scenario: &Scenario, rules: &std::path::Path) -> Vec<String> {
    let (guest, mut source, facts) = guest(scenario);
    let (set, file) = plugtop::rules::load_path(rules, &facts).expect("rules load");
    let label = SourceLabel::Sim {
        scenario: scenario.name.clone(),
        speed: 1.0,
    };
    // The screen's real order: it starts observing, gets its actuator when
    // armed, and switches mode on the first reading, before deciding it.
    let mut app = Local::new(Arc::new(set), file, label, Mode::Observe);
    app.core_mut()
        .set_actuator(Box::new(SimActuator::new(guest)));
    app.set_mode(Mode::Auto);
    while let Some(Ok(sample)) = source.next_sample() {
        app.ingest(sample);
    }
    let lines: Vec<String> = app
        .app()
        .log()
        .lines()
        .iter()
        .map(|l| l.text.clone())
        .collect();
    actions(&lines)
}

#[test]
fn the_simulator_plugtop_run_and_the_screen_act_alike() {
    let dir = common::tempdir();
    let rules = rules(dir.path());
    let scenario = common::scenario("daytrader");
    let sim = headless(&scenario, &rules);
    let root = dir.path().join("root");
    std::fs::create_dir_all(&root).expect("root");
    let run = run_loop(&scenario, &rules, &root);
    let ui = screen(&scenario, &rules);
    assert!(
        sim.len() > 4 && sim[0] == "unplugged cpu0" && sim[1] == "unplugged cpu1",
        "the start limits come first: {sim:?}"
    );
    assert!(
        sim.iter()
            .any(|a| a == "changing number of pages permanently reserved to 1000"),
        "the pool is clamped up to CMM_MIN: {sim:?}"
    );
    // plugtop run ends by putting the guest back; the loop's actions are
    // the same up to there.
    assert_eq!(&run[..sim.len()], &sim[..], "plugtop run");
    assert_eq!(ui, sim, "the screen");
}

/// Every line a session says for each interval, for two sessions on two
/// guests of one scenario: one traced at every interval (the screen's),
/// one tracing only what needs it (`plugtop run`'s). The guests are the
/// same as long as the sessions decide alike.
fn lean_and_traced(scenario: &Scenario, text: &str) -> (Vec<String>, Vec<String>) {
    lean_and_traced_flapping_at(scenario, text, FlapConfig::default())
}

/// [`lean_and_traced`] with these flapping thresholds.
fn lean_and_traced_flapping_at(
    scenario: &Scenario,
    text: &str,
    flap: FlapConfig,
) -> (Vec<String>, Vec<String>) {
    let dir = common::tempdir();
    let path = dir.path().join("r.conf");
    std::fs::write(&path, text).expect("rules");
    let mut said = [Vec::new(), Vec::new()];
    for (lean, lines) in [false, true].into_iter().zip(said.iter_mut()) {
        let (guest, mut source, facts) = guest(scenario);
        let (set, file) = plugtop::rules::load_path(&path, &facts).expect("rules load");
        let mut session =
            plugtop::control::session::Session::new(Arc::new(set), file, Mode::Auto, flap);
        if lean {
            session.trace_only_when_needed();
        }
        let mut actuator = SimActuator::new(guest);
        while let Some(Ok(sample)) = source.next_sample() {
            let step = session.step(Arc::new(sample), &mut actuator);
            for line in plugtop::control::log_entries::step_lines(
                &step,
                &session,
                plugtop::control::log_entries::Detail::Verbose,
                true,
            ) {
                lines.push(format!("{:?}", line.entry));
            }
        }
    }
    let [traced, lean] = said;
    (traced, lean)
}

/// `plugtop run` traces an interval only when something reads its trace;
/// what it says is what a session tracing every interval says, line for
/// line with every journal field: flapping with the comparisons that
/// flipped, feedback loops, and faults naming their sub-expression.
#[test]
fn tracing_only_what_needs_it_says_the_same() {
    let recommended =
        std::fs::read_to_string("examples/rules/recommended-modern.conf").expect("shipped rules");
    // Faults: a share of idle ticks that divides by zero when a CPU is
    // fully busy, in both groups.
    let faulting = recommended
        .replace(
            "HOTPLUG=\"((1 - CP_ActiveAVG) * onumcpus) < 0.08\"",
            "HOTPLUG=\"(idle_0 / (cpustat.idle[0] - cpustat.idle[1])) < 0.5\"",
        )
        .replace(
            "MEMPLUG=\"pgscanrate > 20\"",
            "MEMPLUG=\"(1 / (cpustat.idle[0] - cpustat.idle[1])) > 20\"",
        );
    assert_ne!(faulting, recommended, "the rules were changed");
    let mut flips = 0;
    let mut faults = 0;
    for name in ["oscillating", "daytrader", "kernel-compile"] {
        let scenario = common::scenario(name);
        for text in [&recommended, &faulting] {
            let (traced, lean) = lean_and_traced(&scenario, text);
            assert_eq!(lean, traced, "{name}");
            flips += traced.iter().filter(|l| l.contains(" → ")).count();
            faults += traced
                .iter()
                .filter(|l| l.contains("PLUGTOP_FAULT"))
                .count();
        }
    }
    assert!(flips > 0, "changes of decision were explained");
    assert!(faults > 0, "faults were said");
}

/// `plugtop run` explains a change of decision only where a flap could
/// start with it or with the next change (the two lines under a flap's
/// start show both): at every threshold and window, what it logs is what a
/// session explaining every change logs.
#[test]
fn explaining_only_changes_a_flap_may_show_says_the_same_at_every_threshold() {
    let text =
        std::fs::read_to_string("examples/rules/oscillating-tight.conf").expect("shipped rules");
    let mut flaps = 0;
    for name in ["oscillating", "daytrader"] {
        let scenario = common::scenario(name);
        for (window, reversals) in [(30, 2), (30, 3), (8, 4), (30, 6), (4, 3)] {
            let flap = FlapConfig { window, reversals };
            let (traced, lean) = lean_and_traced_flapping_at(&scenario, &text, flap);
            assert_eq!(lean, traced, "{name} {flap:?}");
            flaps += traced.iter().filter(|l| l.contains("flapping")).count();
        }
    }
    assert!(flaps > 0, "flapping was said, with the changes under it");
}
