//! Renders every view from fixed data into `screenshots/` as SVG (colours
//! kept) and plain text. Run: `cargo run --example screenshots`.

use std::path::Path;
use std::sync::Arc;

use plugtop::control::controller::Mode;
use plugtop::kernel::Source;
use plugtop::kernel::snapshots::SnapshotSource;
use plugtop::rules::{SourceFile, load};
use plugtop::tui::app::{App, SourceLabel, View};
use plugtop::tui::export;
use plugtop::tui::keys::Action;
use plugtop::tui::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn app(rules: &str, dir: &str, n: usize, mode: Mode) -> Result<App, Box<dyn std::error::Error>> {
    let mut source = SnapshotSource::open(Path::new(dir))?;
    let facts = source.facts();
    let file = SourceFile::new(rules, std::fs::read(rules)?);
    let outcome = load(&file, &facts);
    let mut app = App::new(
        Arc::new(outcome.rules),
        file,
        SourceLabel::Replay {
            file: "incident.rec".into(),
            speed: 1.0,
        },
        mode,
    );
    app.host = "guest7".into();
    app.kernel = "2.6.32".into();
    for _ in 0..n {
        match source.next_sample() {
            Some(Ok(s)) => app.ingest(s),
            _ => break,
        }
    }
    Ok(app)
}

fn save(name: &str, app: &App, w: u16, h: u16) -> Result<(), Box<dyn std::error::Error>> {
    let mut terminal = Terminal::new(TestBackend::new(w, h))?;
    terminal.draw(|f| view::draw(f, app))?;
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
    trace.view = View::Rules;
    trace.update(Action::NextRule);
    trace.update(Action::Expand);
    save("trace-hotunplug-80x24", &trace, 80, 24)?;
    save(
        "proposal-80x24",
        &app(rules, series, 4, Mode::Step)?,
        80,
        24,
    )?;
    let mut graphs = app(rules, series, 20, Mode::Observe)?;
    graphs.view = View::Graphs;
    save("graphs-80x24", &graphs, 80, 24)?;
    let fault = app(
        "tests/fixtures/cases/fpe-div-zero-hotplug/cpuplugd.conf",
        "tests/fixtures/cases/fpe-div-zero-hotplug/snapshots",
        4,
        Mode::Observe,
    )?;
    save("fault-80x24", &fault, 80, 24)?;
    let mut help = app(rules, series, 6, Mode::Observe)?;
    help.update(Action::Help);
    save("help-80x24", &help, 80, 24)?;
    Ok(())
}
