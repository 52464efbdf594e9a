//! A drawn screen as plain text or as SVG (colours kept), for the
//! screenshots in the README and for bug reports.

use std::fmt::Write as _;

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

/// The buffer's text, one line per row, trailing blanks trimmed.
pub fn text(buffer: &Buffer) -> String {
    let area = buffer.area;
    let mut out = String::new();
    for y in 0..area.height {
        let line: String = (0..area.width)
            .map(|x| buffer[(x, y)].symbol().to_string())
            .collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn hex(c: Color, fallback: &str) -> String {
    let s = match c {
        Color::Reset => return fallback.to_string(),
        Color::Black => "#000000",
        Color::Red => "#cd3131",
        Color::Green => "#0dbc79",
        Color::Yellow => "#e5e510",
        Color::Blue => "#2472c8",
        Color::Magenta => "#bc3fbc",
        Color::Cyan => "#11a8cd",
        Color::Gray => "#e5e5e5",
        Color::DarkGray => "#767676",
        Color::LightRed => "#f14c4c",
        Color::LightGreen => "#23d18b",
        Color::LightYellow => "#f5f543",
        Color::LightBlue => "#3b8eea",
        Color::LightMagenta => "#d670d6",
        Color::LightCyan => "#29b8db",
        Color::White => "#ffffff",
        Color::Rgb(r, g, b) => return format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Indexed(_) => return fallback.to_string(),
    };
    s.to_string()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The buffer as an SVG picture: a dark terminal, one cell per character.
pub fn svg(buffer: &Buffer) -> String {
    const W: f32 = 8.4;
    const H: f32 = 17.0;
    let area = buffer.area;
    let (width, height) = (f32::from(area.width) * W, f32::from(area.height) * H);
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="14">"#
    );
    let _ = writeln!(
        out,
        r##"<rect width="100%" height="100%" fill="#1e1e1e"/>"##
    );
    for y in 0..area.height {
        for x in 0..area.width {
            let cell = &buffer[(x, y)];
            let mut bg = cell.bg;
            let mut fg = cell.fg;
            if cell.modifier.contains(Modifier::REVERSED) {
                std::mem::swap(&mut bg, &mut fg);
                if bg == Color::Reset {
                    bg = Color::Gray;
                }
                if fg == Color::Reset {
                    fg = Color::Black;
                }
            }
            if bg != Color::Reset {
                let _ = writeln!(
                    out,
                    r#"<rect x="{:.1}" y="{:.1}" width="{W}" height="{H}" fill="{}"/>"#,
                    f32::from(x) * W,
                    f32::from(y) * H,
                    hex(bg, "#1e1e1e")
                );
            }
            let symbol = cell.symbol();
            if symbol.trim().is_empty() {
                continue;
            }
            let weight = if cell.modifier.contains(Modifier::BOLD) {
                r#" font-weight="bold""#
            } else {
                ""
            };
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" fill="{}"{weight}>{}</text>"#,
                f32::from(x) * W,
                f32::from(y) * H + 13.0,
                hex(fg, "#d4d4d4"),
                escape(symbol)
            );
        }
    }
    out.push_str("</svg>\n");
    out
}
