//! Colours and emphasis. With colour off (`NO_COLOR`, `--mono`) everything
//! stays readable through bold, reverse and dim alone. The 16 basic colours
//! are used so terminal themes apply.

use ratatui::style::{Color, Modifier, Style};

use crate::control::controller::Mode;
use crate::rules::eval::Outcome;

/// How to draw emphasis.
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }

    /// Plain text.
    pub fn text(&self) -> Style {
        Style::default()
    }

    /// Panel titles and headings.
    pub fn title(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// Secondary text.
    pub fn dim(&self) -> Style {
        if self.color {
            Style::default().fg(Color::DarkGray)
        } else {
            Style::default().add_modifier(Modifier::DIM)
        }
    }

    /// A truth value or number outcome.
    pub fn outcome(&self, o: Outcome) -> Style {
        match o {
            Outcome::Truth(true) => self.fg(Color::Green).add_modifier(Modifier::BOLD),
            Outcome::Truth(false) => self.fg(Color::Red),
            Outcome::Number(_) => self.fg(Color::Yellow),
            Outcome::NotEvaluated => self.dim(),
            Outcome::Fault(_) | Outcome::Fatal | Outcome::Aborted => self
                .fg(Color::Magenta)
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        }
    }

    /// The sub-expression that decided.
    pub fn deciding(&self) -> Style {
        if self.color {
            Style::default()
                .add_modifier(Modifier::BOLD)
                .bg(Color::Blue)
                .fg(Color::White)
        } else {
            Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED)
        }
    }

    /// The mode badge: impossible to miss.
    pub fn mode(&self, mode: Mode) -> Style {
        let s = Style::default().add_modifier(Modifier::BOLD);
        if !self.color {
            return s.add_modifier(Modifier::REVERSED);
        }
        match mode {
            Mode::Observe => s.bg(Color::Blue).fg(Color::White),
            Mode::Step => s.bg(Color::Yellow).fg(Color::Black),
            Mode::Auto => s.bg(Color::Red).fg(Color::White),
        }
    }

    /// Warnings (a group off, a fault).
    pub fn warning(&self) -> Style {
        if self.color {
            Style::default().fg(Color::Black).bg(Color::Yellow)
        } else {
            Style::default().add_modifier(Modifier::REVERSED)
        }
    }

    /// The selected row.
    pub fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }

    /// Bars.
    pub fn bar(&self, busy: bool) -> Style {
        self.fg(if busy { Color::Green } else { Color::Blue })
    }
}
