//! The what-if editor's own lines, drawn the same wherever the editor is
//! open (the main screen's `w`, the training screen's `e`): the field's
//! name as a label apart from the text typed, the text with its cursor,
//! and what cpuplugd would say of the edit at this keystroke (a caret
//! under the error when it lies in the text typed).

use ratatui::text::{Line, Span};

use super::theme::Theme;
use crate::report::terminal_safe as safe;
use crate::report::words::cols;
use crate::tui::whatif::{Field, WhatIfEditor};

/// The label before the text: the field's name and `=`, or what a whole
/// rule file asks for. Not part of the text: typing it again is an error
/// the check names.
pub fn label(editor: &WhatIfEditor) -> String {
    if editor.file_mode() {
        "rule file: ".to_string()
    } else {
        format!("{}=", editor.field().name())
    }
}

/// The label and the text typed with its cursor, in rows of `width`
/// columns (a long, pasted text shown near the cursor, in at most `rows`
/// rows), and what cpuplugd would say of the edit now: the error's caret
/// on the row right under the character it points at (the rows after it
/// follow), else [`check_line`]'s line after the text. `enter` says what
/// Enter does with a rule file named (the screens differ).
pub fn lines(
    editor: &WhatIfEditor,
    edited: &[Field],
    enter: &str,
    width: usize,
    rows: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let width = width.max(8);
    let label = label(editor);
    let label_cols = cols(&label);
    let room = (width * rows.max(1)).saturating_sub(label_cols) / 2;
    let input = editor.input();
    let (before, at, after) = input.split_near(room);
    // How many characters of the text the cut before the cursor left out
    // (its `…` takes one column in their place).
    let head = input.text().chars().take(input.cursor()).count();
    let kept = before.chars().count();
    let cut = before.starts_with('…').then(|| head + 1 - kept);
    let mut cells: Vec<(String, ratatui::style::Style)> = Vec::new();
    let mut push = |text: &str, style: ratatui::style::Style| {
        for c in text.chars() {
            cells.push((c.to_string(), style));
        }
    };
    push(&label, theme.title());
    push(&safe(&before), ratatui::style::Style::default());
    push(&safe(&at), theme.selected());
    push(&safe(&after), ratatui::style::Style::default());
    // Rows of `width` columns, cut between characters.
    let mut text_rows: Vec<Vec<(String, ratatui::style::Style)>> = vec![Vec::new()];
    let mut used = 0;
    for cell in cells {
        let w = cols(&cell.0);
        if used + w > width {
            text_rows.push(Vec::new());
            used = 0;
        }
        used += w;
        if let Some(row) = text_rows.last_mut() {
            row.push(cell);
        }
    }
    // Where the error's character is drawn: its column in the text typed,
    // past the label, moved by the cut (`None` when the cut hid it).
    let caret = match editor.error() {
        Some((message, Some(column))) => {
            let shown = match cut {
                None => Some(*column),
                Some(cut) => column.checked_sub(cut).map(|c| c + 1),
            };
            shown.map(|c| (label_cols + c, message.clone()))
        }
        _ => None,
    };
    let mut out = Vec::with_capacity(text_rows.len() + 1);
    let mut start = 0;
    let mut last_start = 0;
    for row in text_rows {
        last_start = start;
        let row_cols: usize = row.iter().map(|(c, _)| cols(c)).sum();
        let spans: Vec<Span<'static>> = row
            .into_iter()
            .map(|(text, style)| Span::styled(text, style))
            .collect();
        out.push(Line::from(spans));
        if let Some((at, message)) = &caret
            && (start..start + row_cols.max(1)).contains(at)
        {
            out.push(Line::from(Span::styled(
                format!("{}^ {}", " ".repeat(at - start), safe(message)),
                theme.warning(),
            )));
        }
        start += row_cols;
    }
    // A caret just past the last character (an error at the end); one
    // further on points into text cut off after the cursor, and is said
    // without a caret.
    match &caret {
        Some((at, _)) if *at < start => {}
        Some((at, message)) if *at == start => {
            let column = match at - last_start {
                c if c < width => c,
                _ => at - start,
            };
            out.push(Line::from(Span::styled(
                format!("{}^ {}", " ".repeat(column), safe(message)),
                theme.warning(),
            )));
        }
        _ => out.push(check_line(editor, edited, enter, theme)),
    }
    out
}

/// What cpuplugd would say of the edit now, without a caret (see
/// [`lines`]): the error, else that it would load (and which fields are
/// edited). `enter` says what Enter does with a rule file named (the
/// screens differ).
fn check_line(
    editor: &WhatIfEditor,
    edited: &[Field],
    enter: &str,
    theme: &Theme,
) -> Line<'static> {
    let waiting = editor.file_mode() && editor.input().text().trim().is_empty();
    match editor.error() {
        Some((message, _)) => Line::from(Span::styled(
            format!("✗ {}", safe(message)),
            theme.warning(),
        )),
        None if waiting => Line::styled(
            format!("type the path of a rule file: Enter {enter}"),
            theme.dim(),
        ),
        // Loaded is not run: what it would stop on is said with the load.
        None if editor.stops().is_some() => Line::styled(
            format!(
                "cpuplugd would load {}, then exit the first time it evaluates {} (`plugtop check` says why)",
                if editor.file_mode() {
                    "this file"
                } else {
                    "the edited file"
                },
                safe(editor.stops().unwrap_or_default())
            ),
            theme.warning(),
        ),
        None if editor.file_mode() => Line::styled("✓ cpuplugd would load this file", theme.dim()),
        None if edited.is_empty() => Line::styled(
            "✓ cpuplugd would load it (nothing edited yet: these are the rules in force)",
            theme.dim(),
        ),
        None => {
            let names: Vec<&str> = edited.iter().map(|f| f.name()).collect();
            Line::styled(
                format!(
                    "✓ cpuplugd would load the edited file (edited: {})",
                    names.join(", ")
                ),
                theme.dim(),
            )
        }
    }
}
