//! JSON for machines that is also safe on a terminal. serde_json escapes
//! the C0 controls, as JSON requires, but leaves the C1 controls
//! (U+0080–U+009F, CSI and OSC among them) and the bidi marks that reorder
//! a line raw, so a scenario's name or a rule file's text could still act
//! on the terminal of whoever reads `--format json` output, or `jq`'s. Every
//! JSON plugtop prints passes [`terminal_safe_json`]; text reports go
//! through [`super::terminal_safe`] instead.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether JSON text must write `c` as a `\uXXXX` escape although JSON
/// allows it raw: the C1 controls and the marks that reorder text (the
/// same set [`super::terminal_safe`] escapes beyond C0 and DEL).
fn escaped_in_json(c: char) -> bool {
    matches!(
        c,
        '\u{7f}'..='\u{9f}'
            | '\u{061c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

/// Serialized JSON with every C1 control, DEL and bidi mark written as
/// its `\uXXXX` escape. Such characters can stand only inside strings (JSON
/// syntax is ASCII), where the escape means the same character: the
/// result parses to the same value. Borrows when there is nothing to
/// escape, which is almost always.
pub fn terminal_safe_json(json: &str) -> Cow<'_, str> {
    let Some(first) = json.find(escaped_in_json) else {
        return Cow::Borrowed(json);
    };
    let mut out = String::with_capacity(json.len() + 16);
    out.push_str(&json[..first]);
    for c in json[first..].chars() {
        if escaped_in_json(c) {
            // All of them are in the Basic Multilingual Plane: one escape.
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::terminal_safe_json;

    #[test]
    fn c1_controls_and_bidi_marks_become_escapes_and_parse_back_the_same() {
        let value = serde_json::json!({
            "name": "a\u{9b}2J\u{9d}0;t\u{9c}\u{202e}gnp\u{2066}\u{200f}\u{061c}\u{7f}\u{85}",
            "plain": "é 漢 \u{a0} \u{2022}",
            "list": ["\u{80}", "\u{9f}", "\u{202a}"],
        });
        let raw = value.to_string();
        let safe = terminal_safe_json(&raw);
        for c in safe.chars() {
            assert!(
                !matches!(c, '\u{7f}'..='\u{9f}' | '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'),
                "{c:?} left raw in {safe}"
            );
        }
        assert!(
            safe.contains(r"a\u009b2J\u009d0;t\u009c\u202egnp"),
            "{safe}"
        );
        let back: serde_json::Value = serde_json::from_str(&safe).expect("still JSON");
        assert_eq!(back, value);
        assert!(
            safe.contains("é 漢 \u{a0} \u{2022}"),
            "the rest is kept: {safe}"
        );
    }

    #[test]
    fn json_with_nothing_to_escape_is_borrowed() {
        let raw = r#"{"a":"b\u001b","c":[1,2]}"#;
        assert!(matches!(
            terminal_safe_json(raw),
            std::borrow::Cow::Borrowed(s) if s == raw
        ));
    }

    #[test]
    fn every_char_survives_a_round_trip() {
        for c in (0u32..0x3000).filter_map(char::from_u32) {
            let value = serde_json::Value::String(format!("x{c}y"));
            let safe = terminal_safe_json(&value.to_string()).into_owned();
            let back: serde_json::Value = serde_json::from_str(&safe).expect("still JSON");
            assert_eq!(back, value, "{c:?}");
        }
    }
}
