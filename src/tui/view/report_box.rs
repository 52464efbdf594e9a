//! A `plugtop check` report fitted to a box: line for line as `check`
//! prints it, the source line and the caret under it kept aligned (shifted
//! together to the caret when the source line is wider than the box), and
//! the message lines wrapped between words.

use super::fit;

/// Whether `line` is a source or marker line of a report: a gutter (a line
/// number or spaces) then ` | `.
fn gutter(line: &str) -> Option<usize> {
    let bar = line.find(" |")?;
    let head = &line[..bar];
    (head.chars().all(|c| c.is_ascii_digit() || c == ' ')).then_some(bar + 2)
}

/// The report's lines in at most `width` columns.
pub fn lines(report: &str, width: usize) -> Vec<String> {
    let all: Vec<&str> = report.trim_end().lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let line = all[i];
        match (
            gutter(line),
            all.get(i + 1).and_then(|m| marks(m).map(|c| (m, c))),
        ) {
            (Some(g), Some((marker, column))) if is_numbered(line) => {
                out.extend(shifted(line, marker, g, column, width));
                i += 2;
            }
            (Some(_), _) if fit::cols(line) <= width => {
                out.push(line.to_string());
                i += 1;
            }
            _ => {
                out.extend(fit::wrap(line, width, 4));
                i += 1;
            }
        }
    }
    out
}

/// A source line: a line number before the bar.
fn is_numbered(line: &str) -> bool {
    line.trim_start().starts_with(|c: char| c.is_ascii_digit())
}

/// The column of the first mark (`^` or `-`) of a marker line, if it is one.
fn marks(line: &str) -> Option<usize> {
    let g = gutter(line)?;
    if is_numbered(line) {
        return None;
    }
    line[g..]
        .char_indices()
        .find(|(_, c)| *c == '^' || *c == '-')
        .map(|(b, _)| line[..g + b].chars().count())
}

/// A source line and its marker line in `width` columns: unchanged when
/// they fit, else both shown from the same column on, so the caret still
/// points at the spot, with `…` where text was left out.
fn shifted(source: &str, marker: &str, gutter: usize, column: usize, width: usize) -> Vec<String> {
    if fit::cols(source) <= width && fit::cols(marker) <= width {
        return vec![source.to_string(), marker.to_string()];
    }
    let lead: String = source.chars().take(gutter).collect();
    let lead_marks: String = marker.chars().take(gutter).collect();
    let text: Vec<char> = source.chars().skip(gutter).collect();
    let marks: Vec<char> = marker.chars().skip(gutter).collect();
    let at = column.saturating_sub(gutter);
    // Room for the text between the gutter and the two `…`.
    let room = width.saturating_sub(gutter + 2).max(1);
    let start = at
        .saturating_sub(room / 3)
        .min(text.len().saturating_sub(room));
    let piece =
        |chars: &[char]| -> String { chars.iter().skip(start).take(room).collect::<String>() };
    let before = if start > 0 { "…" } else { " " };
    let after = if start + room < text.len() { "…" } else { "" };
    vec![
        format!("{lead}{before}{}{after}", piece(&text)),
        format!("{lead_marks} {}", piece(&marks))
            .trim_end()
            .to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "t.conf:3:42: error: unexpected `(`: cpuplugd stops reading the rule here\n  |\n3 | HOTPLUG=\"((1 - CP_Active) * onumcpus) < 0.3(\"\n  |                                          ^\n  = cpuplugd refuses to load this file\n";

    #[test]
    fn a_report_that_fits_is_drawn_line_for_line() {
        let shown = lines(REPORT, 100);
        assert_eq!(shown, REPORT.trim_end().lines().collect::<Vec<_>>());
    }

    #[test]
    fn in_a_narrow_box_the_caret_still_points_at_its_character() {
        let source = "3 | HOTPLUG=\"((1 - CP_Active) * onumcpus) < 0.3( and then a very long tail of text that goes on\"";
        let caret = source.find("0.3(").unwrap_or_default() + 3;
        let marker = format!("  |{}^", " ".repeat(caret - 3));
        let report = format!("t.conf:3:42: error: unexpected `(`\n  |\n{source}\n{marker}\n");
        for width in [30, 40, 60] {
            let shown = lines(&report, width);
            assert!(shown.iter().all(|l| fit::cols(l) <= width), "{shown:#?}");
            let at = shown
                .iter()
                .position(|l| l.starts_with("3 |"))
                .unwrap_or_else(|| panic!("{shown:#?}"));
            let caret = shown[at + 1].chars().position(|c| c == '^');
            let pointed = caret.and_then(|c| shown[at].chars().nth(c));
            assert_eq!(pointed, Some('('), "{width}: {shown:#?}");
        }
    }

    #[test]
    fn a_long_message_wraps_between_words() {
        let report = "t.conf:22:11: error: the kernel under / has none of `vmstat.pgscan_kswapd_dma`, `vmstat.pgscan_kswapd_normal`; cpuplugd stops\n";
        let shown = lines(report, 40);
        assert!(
            shown.len() > 2 && shown.iter().all(|l| fit::cols(l) <= 40),
            "{shown:#?}"
        );
        let words: Vec<&str> = shown.iter().flat_map(|l| l.split_whitespace()).collect();
        assert_eq!(words, report.split_whitespace().collect::<Vec<_>>());
    }
}
