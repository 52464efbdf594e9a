//! The screen's frames, counted: the simulator's DayTrader run under the
//! recommended rules (Auto), one reading a frame, each frame drawn at
//! 160×48 through the real terminal backend (crossterm's escape sequences)
//! into a sink, compared with the frame before as the screen compares them
//! ([`DiffTerminal`]), as the screen draws after each reading. `scripts/frame-cost.sh`
//! runs it under callgrind for two frame counts, so that start-up and the
//! first full frame cancel, and divides by the difference.
//!
//! usage: `cargo run --release --example frame_cost -- FRAMES [WIDTH HEIGHT]`
//! (the first 120 readings fill the history before the frames counted).

use std::io;

use plugtop::tui::app::App;
use plugtop::tui::frame_diff::DiffTerminal;
use plugtop::tui::local::Local;
use plugtop::tui::view;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

/// Readings ingested before the frames: the graphs' history and the log
/// are no longer empty.
const WARM_UP: usize = 120;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let frames: usize = args.next().as_deref().unwrap_or("100").parse()?;
    let width: u16 = args.next().as_deref().unwrap_or("160").parse()?;
    let height: u16 = args.next().as_deref().unwrap_or("48").parse()?;
    let options = plugtop::tui::run::Options::simulating(
        "examples/scenarios/daytrader.toml",
        Some("examples/rules/recommended-default.conf".into()),
    );
    let (mut app, mut source) = plugtop::tui::run::prepare(&options)?;
    let area = Rect::new(0, 0, width, height);
    app.app_mut()
        .set_screen_size(width, height, view::cpu_panel_size(area));
    let (list_width, rows) = view::list_area(area);
    app.app_mut().set_list_area(list_width, rows);
    let mut terminal = DiffTerminal::new(Terminal::with_options(
        CrosstermBackend::new(io::sink()),
        TerminalOptions {
            viewport: Viewport::Fixed(area),
        },
    )?);
    for _ in 0..WARM_UP {
        ingest(&mut app, source.as_mut())?;
    }
    for _ in 0..frames {
        ingest(&mut app, source.as_mut())?;
        frame(&mut terminal, app.app())?;
    }
    Ok(())
}

/// One reading decided and taken by the screen's state.
#[inline(never)]
fn ingest(
    app: &mut Local,
    source: &mut (dyn plugtop::kernel::Source + Send),
) -> Result<(), Box<dyn std::error::Error>> {
    match source.next_sample() {
        Some(sample) => {
            app.ingest(sample?);
            Ok(())
        }
        None => Err("the scenario ended before the frames did".into()),
    }
}

/// One frame: drawn into memory, compared with the one before, the
/// difference written (what callgrind's `--toggle-collect` counts).
#[inline(never)]
fn frame(
    terminal: &mut DiffTerminal<CrosstermBackend<io::Sink>>,
    app: &App,
) -> Result<(), Box<dyn std::error::Error>> {
    terminal.draw(|f| view::draw(f, app))?;
    Ok(())
}
