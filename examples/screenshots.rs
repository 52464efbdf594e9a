//! Renders every view from fixed data into `screenshots/` as SVG (colours
//! kept) and plain text. Run: `cargo run --example screenshots`.

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent};
use plugtop::control::controller::Mode;
use plugtop::train::Course;
use plugtop::train::progress::CourseProgress;
use plugtop::train::screen::app::{TrainAction, TrainApp};
use plugtop::tui::app::View;
use plugtop::tui::export;
use plugtop::tui::keys::KeyAction;
use plugtop::tui::local::Local;
use plugtop::tui::run::app_from_snapshots;
use plugtop::tui::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn app(rules: &str, dir: &str, n: usize, mode: Mode) -> Result<Local, Box<dyn std::error::Error>> {
    Ok(app_from_snapshots(
        Path::new(rules),
        Path::new(dir),
        n,
        mode,
    )?)
}

fn save(name: &str, app: &Local, w: u16, h: u16) -> Result<(), Box<dyn std::error::Error>> {
    let mut terminal = Terminal::new(TestBackend::new(w, h))?;
    terminal.draw(|f| view::draw(f, app.app()))?;
    let buffer = terminal.backend().buffer().clone();
    std::fs::create_dir_all("screenshots")?;
    std::fs::write(format!("screenshots/{name}.svg"), export::svg(&buffer))?;
    std::fs::write(format!("screenshots/{name}.txt"), export::text(&buffer))?;
    println!("screenshots/{name}.svg");
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rules = "examples/rules/recommended-default.conf";
    let series = "tests/fixtures/series/oldkernel";
    save(
        "overview-160x48",
        &app(rules, series, 6, Mode::Observe)?,
        160,
        48,
    )?;
    save(
        "overview-80x24",
        &app(rules, series, 6, Mode::Observe)?,
        80,
        24,
    )?;
    let mut trace = app(rules, series, 6, Mode::Observe)?;
    trace.app_mut().selection_mut().show(View::Rules);
    trace.key(KeyAction::NextRule);
    trace.key(KeyAction::Expand);
    save("trace-hotunplug-80x24", &trace, 80, 24)?;
    save(
        "proposal-80x24",
        &app(rules, series, 4, Mode::Step)?,
        80,
        24,
    )?;
    let mut graphs = app(rules, series, 20, Mode::Observe)?;
    graphs.app_mut().selection_mut().show(View::Graphs);
    save("graphs-80x24", &graphs, 80, 24)?;
    let fault = app(
        "tests/fixtures/cases/fpe-div-zero-hotplug/cpuplugd.conf",
        "tests/fixtures/cases/fpe-div-zero-hotplug/snapshots",
        4,
        Mode::Observe,
    )?;
    save("fault-80x24", &fault, 80, 24)?;
    let mut help = app(rules, series, 6, Mode::Observe)?;
    help.key(KeyAction::Help);
    save("help-80x24", &help, 80, 24)?;
    // The oscillating incident on the simulator, 1:20 in.
    let mut flips = simulated("oscillating", "examples/rules/oscillating-tight.conf", 81)?;
    flips.app_mut().selection_mut().show(View::Flips);
    save("flips-80x24", &flips, 80, 24)?;
    let mut whatif = simulated("oscillating", "examples/rules/oscillating-tight.conf", 81)?;
    whatif.key(KeyAction::WhatIf);
    for key in [KeyCode::Backspace, KeyCode::Backspace, KeyCode::Backspace] {
        whatif.app_mut().whatif_key(KeyEvent::from(key));
    }
    for c in "0.05".chars() {
        whatif
            .app_mut()
            .whatif_key(KeyEvent::from(KeyCode::Char(c)));
    }
    whatif.app_mut().whatif_key(KeyEvent::from(KeyCode::Enter));
    save("whatif-80x24", &whatif, 80, 24)?;
    // The training screen: a practice run half way, and a diagnosis.
    let mut practice = training("loadavg")?;
    practice.update(TrainAction::Run(150));
    save_training("train-practice-80x24", &practice)?;
    save_training("train-diagnosis-80x24", &training("diagnose-flap")?)?;
    // A memory exercise submitted as it starts: the verdict whole, each
    // missed clause's value, the hint it unlocked.
    let mut result = training("guest-size")?;
    result.update(TrainAction::Submit);
    while let Some(news) = result.wait_judge_news(std::time::Duration::from_secs(600)) {
        result.update(TrainAction::Judge(news));
        if result.judging.is_none() {
            break;
        }
    }
    save_training("train-result-80x24", &result)?;
    Ok(())
}

/// The built-in course open at exercise `id`, progress not kept.
fn training(id: &str) -> Result<TrainApp, Box<dyn std::error::Error>> {
    let course = Course::load(Path::new("examples/courses/cpuplugd-basics.toml"))?;
    Ok(TrainApp::new(
        course,
        CourseProgress::default(),
        None,
        None,
        Some(id),
    ))
}

fn save_training(name: &str, app: &TrainApp) -> Result<(), Box<dyn std::error::Error>> {
    let mut terminal = Terminal::new(TestBackend::new(80, 24))?;
    terminal.draw(|f| plugtop::train::screen::draw::draw(app, f))?;
    let buffer = terminal.backend().buffer().clone();
    std::fs::write(format!("screenshots/{name}.svg"), export::svg(&buffer))?;
    std::fs::write(format!("screenshots/{name}.txt"), export::text(&buffer))?;
    println!("screenshots/{name}.svg");
    Ok(())
}

/// `scenario` on the simulator under `rules`, autonomous, after `readings`.
fn simulated(
    scenario: &str,
    rules: &str,
    readings: usize,
) -> Result<Local, Box<dyn std::error::Error>> {
    let options = plugtop::tui::run::Options::simulating(
        format!("examples/scenarios/{scenario}.toml"),
        Some(rules.into()),
    );
    let (mut app, mut source) = plugtop::tui::run::prepare(&options)?;
    for _ in 0..readings {
        match source.next_sample() {
            Some(sample) => app.ingest(sample?),
            None => break,
        }
    }
    Ok(app)
}
