//! The what-if editor's own lines, drawn the same wherever the editor is
//! open (the main screen's `w`, the training screen's `e`): the field's
//! name as a label apart from the text typed, the text with its cursor,
//! and what cpuplugd would say of the edit at this keystroke (a caret
//! under the error when it lies in the text typed).

use ratatui::text::{Line, Span};

use super::theme::Theme;
use crate::report::terminal_safe as safe;
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

/// The label and the text typed with its cursor, a long (pasted) text
/// shown near the cursor: at most `room` characters each side of it.
pub fn text_line(editor: &WhatIfEditor, room: usize, theme: &Theme) -> Line<'static> {
    let (before, at, after) = editor.input().split_near(room);
    Line::from(vec![
        Span::styled(label(editor), theme.title()),
        Span::raw(safe(&before).into_owned()),
        Span::styled(safe(&at).into_owned(), theme.selected()),
        Span::raw(safe(&after).into_owned()),
    ])
}

/// What cpuplugd would say of the edit now: the error with a caret under
/// its column when it lies in the text typed (the text is drawn after the
/// label, so the caret is indented by it), else the error naming its
/// line, else that it would load (and which fields are edited). `enter`
/// says what Enter does with a rule file named (the screens differ).
pub fn check_line(
    editor: &WhatIfEditor,
    edited: &[Field],
    enter: &str,
    theme: &Theme,
) -> Line<'static> {
    let indent = label(editor).chars().count();
    let waiting = editor.file_mode() && editor.input().text().trim().is_empty();
    match editor.error() {
        Some((message, Some(column))) => Line::from(Span::styled(
            format!("{}^ {}", " ".repeat(indent + column), safe(message)),
            theme.warning(),
        )),
        Some((message, None)) => Line::from(Span::styled(
            format!("✗ {}", safe(message)),
            theme.warning(),
        )),
        None if waiting => Line::styled(
            format!("type the path of a rule file: Enter {enter}"),
            theme.dim(),
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
