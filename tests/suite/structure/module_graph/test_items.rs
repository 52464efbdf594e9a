//! Drops the items under `#[cfg(test)]`, and only those: the attribute, the
//! attributes after it, and the item up to its `;` or its matching `}`.
//! (Dropping everything after the first `#[cfg(test)]` hid the code that
//! follows a test module, such as the last part of `sim/scenario.rs`.)

use super::lex::Token;

/// `tokens` without the items that only exist in a test build.
pub fn without_test_items(tokens: &[Token]) -> Vec<Token> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if is_cfg_test(&tokens[i..]) {
            i = item_end(tokens, i + CFG_TEST.len());
        } else {
            out.push(tokens[i].clone());
            i += 1;
        }
    }
    out
}

const CFG_TEST: [&str; 7] = ["#", "[", "cfg", "(", "test", ")", "]"];

fn is_cfg_test(tokens: &[Token]) -> bool {
    tokens.len() >= CFG_TEST.len() && CFG_TEST.iter().zip(tokens).all(|(w, t)| t.text == *w)
}

/// Where the item starting at `start` (after its `#[cfg(test)]`) ends:
/// past any further attributes, then past the first `;` outside brackets,
/// or past the `}` matching the item's first `{` (a test-only field ends
/// with the block around it, which stays).
fn item_end(tokens: &[Token], start: usize) -> usize {
    let mut i = start;
    while i + 1 < tokens.len() && tokens[i].text == "#" && tokens[i + 1].text == "[" {
        i = past_group(tokens, i + 1);
    }
    let mut depth = 0usize;
    while i < tokens.len() {
        match tokens[i].text.as_str() {
            "(" | "[" => depth += 1,
            ")" | "]" => depth = depth.saturating_sub(1),
            ";" if depth == 0 => return i + 1,
            "{" if depth == 0 => return past_group(tokens, i),
            // The end of the block a test-only field or arm sits in.
            "}" if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    i
}

/// Past the bracket group opening at `open` (`(`, `[` or `{`), nested
/// groups of every kind counted.
fn past_group(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.text.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}
