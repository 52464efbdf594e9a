//! The dialogs of keeping an edit: applying it (with the diff against the
//! rules in force), where to write it, replacing an existing file, and
//! that it was written.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::boxes::{box_height, sized_box};
use super::theme::Theme;
use crate::tui::edited::{DiffLine, EditedRules};
use crate::tui::modal::{ReplaceFile, SavePrompt};

/// How wide the keeping dialogs are at most.
const WIDTH: u16 = 100;

/// One diff line: the line number, `-` or `+`, the text escaped (a rule
/// file may hold control characters).
fn diff_line(d: &DiffLine, theme: &Theme) -> Line<'static> {
    let text = if d.text.is_empty() {
        "(an empty line)".to_string()
    } else {
        crate::report::terminal_safe(&d.text).into_owned()
    };
    let (mark, style) = if d.added {
        ("+", theme.outcome(crate::rules::eval::Outcome::Truth(true)))
    } else {
        ("-", theme.warning())
    };
    Line::from(vec![
        Span::styled(format!("line {:<4} {mark} ", d.line), theme.dim()),
        Span::styled(text, style),
    ])
}

/// `y` on the edited rules: what changes, as many diff lines as the screen
/// holds (the rest counted), what applying does and does not do.
pub fn apply(frame: &mut Frame<'_>, area: Rect, rules: &EditedRules, theme: &Theme) {
    let mut head = Vec::new();
    if let Some(why) = &rules.caution {
        head.push(Line::styled(
            format!(
                "The tune did not recommend this point: {}.",
                crate::report::terminal_safe(why)
            ),
            theme.warning(),
        ));
    }
    head.push(Line::from(format!(
        "Apply {} to this session? What changes against the rules in force:",
        crate::report::terminal_safe(&rules.name)
    )));
    let tail = [
        Line::from(""),
        Line::styled(
            "The history is kept and the next interval is decided under these rules, as r reloads a file. The file on disk is not changed (Ctrl-S in the editor writes these).",
            theme.dim(),
        ),
        Line::styled("y apply     n / Esc back to the editor", theme.title()),
    ];
    let width = WIDTH.min(area.width);
    let mut shown = rules.diff.len();
    let lines = loop {
        let mut lines = head.clone();
        lines.extend(rules.diff.iter().take(shown).map(|d| diff_line(d, theme)));
        if shown < rules.diff.len() {
            lines.push(Line::styled(
                format!(
                    "… and {} more changed lines (the screen is full)",
                    rules.diff.len() - shown
                ),
                theme.dim(),
            ));
        }
        lines.extend(tail.iter().cloned());
        if shown == 0 || box_height(&lines, width) <= area.height {
            break lines;
        }
        shown -= 1;
    };
    sized_box(frame, area, width, "Apply the edited rules?", lines, theme);
}

/// Where to write the edited rules, a new file in the state directory
/// already typed.
pub fn save_prompt(frame: &mut Frame<'_>, area: Rect, prompt: &SavePrompt, theme: &Theme) {
    let added = prompt.rules.diff.iter().filter(|d| d.added).count();
    let name = crate::report::terminal_safe(&prompt.rules.name);
    // The rules in force may be an edit applied earlier: said as such, not
    // as "(edited)" beside "unchanged".
    let base = name.strip_suffix(" (edited)");
    let what = match (added.max(prompt.rules.diff.len() - added), base) {
        (0, Some(base)) => format!("the rules in force ({base} as edited in this session)"),
        (0, None) => format!("the rules in force ({name} as loaded)"),
        (1, _) => format!("{name} with 1 line changed"),
        (n, _) => format!("{name} with {n} lines changed"),
    };
    let lines = vec![
        Line::from(format!("Write {what} to this new file:")),
        super::typed_line(&prompt.input, usize::from(area.width) * 4, theme),
        Line::from(""),
        Line::styled("Enter write   Esc cancel   Ctrl-U clear", theme.title()),
        Line::styled(
            "an existing file is replaced only if you say so; a link is never written through",
            theme.dim(),
        ),
    ];
    sized_box(frame, area, WIDTH, "Write the edited rules", lines, theme);
}

/// The file the rules were to go to exists: replace it?
pub fn replace(frame: &mut Frame<'_>, area: Rect, r: &ReplaceFile, theme: &Theme) {
    let lines = vec![
        Line::from(format!("{} exists already.", r.path.display())),
        Line::from("Replace it with the edited rules? (only a regular file is ever replaced)"),
        Line::from(""),
        Line::styled("y replace     n / Esc choose another name", theme.title()),
    ];
    sized_box(frame, area, WIDTH, "Replace the file?", lines, theme);
}

/// The rules were written.
pub fn written(frame: &mut Frame<'_>, area: Rect, path: &str, theme: &Theme) {
    let lines = vec![
        Line::from(path.to_string()),
        Line::from("checked first as cpuplugd loads it: plugtop check on it says the same"),
        Line::from(""),
        Line::styled("any key closes", theme.dim()),
    ];
    sized_box(frame, area, WIDTH, "Edited rules written", lines, theme);
}
