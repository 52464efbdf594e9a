//! Counts and lists in words, once for every output: "1 CPU" and "3 CPUs",
//! "CPU 0 online" and "CPUs 0-3 online", so no message says "1 CPUs" or
//! reads a one-CPU list as a count ("CPUs 0 online").

use crate::kernel::cpulist::CpuList;
use crate::kernel::recording::export::ranges;

/// `n` with the noun that fits it: `one` for exactly 1, `many` otherwise
/// (a fractional count, as an average of CPUs, takes the plural).
pub fn count(n: f64, one: &str, many: &str) -> String {
    let noun = if n == 1.0 { one } else { many };
    format!("{} {noun}", crate::report::node_text::number(n))
}

/// A number of CPUs: "1 CPU", "4 CPUs".
pub fn cpus(n: f64) -> String {
    count(n, "CPU", "CPUs")
}

/// A number of intervals: "1 interval", "6 intervals".
pub fn intervals(n: f64) -> String {
    count(n, "interval", "intervals")
}

/// Which CPUs are online, as a list that cannot be read as a count:
/// "cpu0 online" (the kernel's name: "CPU 0 online" read as none, nu54
/// M4), "CPUs 0-3,8 online", "no CPU online". plugtop's own words only;
/// lines that mimic cpuplugd's log keep cpuplugd's.
pub fn online_list(list: &CpuList) -> String {
    match list.ids.len() {
        0 => "no CPU online".to_string(),
        1 => format!("cpu{} online", ranges(list)),
        _ => format!("CPUs {} online", ranges(list)),
    }
}

pub use crate::safe_text::cols;

/// `text` followed by blanks to `width` columns (counted as drawn, so a
/// wide character takes two); text as wide or wider is left as it is.
pub fn pad_right(text: &str, width: usize) -> String {
    let blanks = width.saturating_sub(cols(text));
    let mut out = String::with_capacity(text.len() + blanks);
    out.push_str(text);
    out.extend(std::iter::repeat_n(' ', blanks));
    out
}

/// `text` after blanks to `width` columns, right-aligned as [`pad_right`]
/// counts them.
pub fn pad_left(text: &str, width: usize) -> String {
    format!("{}{text}", " ".repeat(width.saturating_sub(cols(text))))
}

/// `name` in at most `room` columns: its start and its end (where the
/// `.conf` is), with `…` between (columns counted as drawn, so wide
/// characters fit too).
pub fn middle_cut(name: &str, room: usize) -> String {
    if cols(name) <= room {
        return name.to_string();
    }
    let keep = room.saturating_sub(1);
    let mut end: Vec<char> = Vec::new();
    for c in name.chars().rev() {
        let mut with: String = end.iter().rev().collect();
        with.insert(0, c);
        if cols(&with) > keep / 2 {
            break;
        }
        end.push(c);
    }
    // A mark that draws on the letter before it (a combining tilde, width
    // 0) is not left after the `…` without its letter.
    while end
        .last()
        .is_some_and(|c| cols(c.encode_utf8(&mut [0; 4])) == 0)
    {
        end.pop();
    }
    let end: String = end.iter().rev().collect();
    let mut start = String::new();
    for c in name.chars() {
        start.push(c);
        if cols(&start) + cols(&end) > keep {
            start.pop();
            break;
        }
    }
    format!("{start}…{end}")
}

/// `text` in lines of at most `width` columns (as drawn: a wide character
/// takes two), broken at blanks (a word longer than a line is broken
/// inside).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    wrap_hanging(text, width, width)
}

/// As [`wrap`], the first line at most `first` columns and the others
/// at most `rest` (a hanging indent): a word broken inside is broken once,
/// its parts never joined again with a blank.
pub fn wrap_hanging(text: &str, first: usize, rest: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let mut word = word.to_string();
        loop {
            let width = if lines.is_empty() { first } else { rest }.max(1);
            let used = cols(&line);
            let need = cols(&word) + usize::from(used > 0);
            if used + need <= width {
                if used > 0 {
                    line.push(' ');
                }
                line.push_str(&word);
                break;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            // A word longer than the line: as much as fits, the rest next,
            // after a `-`, `.`, `/` or `_` in the line's second half when
            // there is one (a name reads `…datacentre-` / `v2.conf`).
            let at = split_point(&word, width);
            let head: String = word.chars().take(at).collect();
            word = word.chars().skip(at).collect();
            lines.push(head);
            if word.is_empty() {
                break;
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Where (in characters) a word wider than `width` columns is broken:
/// after the last `-`, `.`, `/` or `_` among the characters that fit if
/// that is in the second half of them, else after all that fit (at least
/// one, so a character wider than the line still moves on).
pub(crate) fn split_point(word: &str, width: usize) -> usize {
    let mut used = 0;
    let fit = word
        .chars()
        .take_while(|&c| {
            used += cols(c.encode_utf8(&mut [0; 4]));
            used <= width
        })
        .count()
        .max(1);
    word.chars()
        .take(fit)
        .enumerate()
        .filter(|(i, c)| matches!(c, '-' | '.' | '/' | '_') && i + 1 > fit / 2)
        .map(|(i, _)| i + 1)
        .last()
        .filter(|at| *at < word.chars().count())
        .unwrap_or(fit)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// adv52 #9: a name cut in its middle never keeps a combining mark
    /// after the `…` without the letter it draws on.
    #[test]
    fn a_middle_cut_leaves_no_lone_combining_mark() {
        let name = format!("x漢字😀{}{}ok.conf", "漢字".repeat(5), "e\u{303}".repeat(6));
        let name = name.as_str();
        let mut cut_at_a_mark = false;
        for room in 2..cols(name) {
            let cut = middle_cut(name, room);
            assert!(cols(&cut) <= room, "{room}: {cut}");
            let after = cut.split('…').nth(1).unwrap_or_default();
            assert!(!after.starts_with('\u{303}'), "{room}: {cut:?}");
            cut_at_a_mark |= after.starts_with('e');
        }
        assert!(
            cut_at_a_mark,
            "some room cuts just before a letter with its mark"
        );
    }

    /// Lines are measured in columns as drawn: wide characters take two,
    /// so no line of a path in CJK is wider than asked (adv52: rows came
    /// out twice too wide and broke again without their indent).
    #[test]
    fn wide_characters_wrap_by_their_columns() {
        let path = format!("/tmp/x{}😀é̃ok.txt", "漢字".repeat(20));
        for (first, rest) in [(20, 18), (7, 5), (1, 1), (3, 2)] {
            let lines = wrap_hanging(&format!("log exported to {path}"), first, rest);
            for (i, line) in lines.iter().enumerate() {
                let width = if i == 0 { first } else { rest };
                // A character wider than the whole line is alone on it.
                assert!(
                    cols(line) <= width.max(2)
                        && (cols(line) <= width || line.chars().count() == 1),
                    "{line:?} over {width} in {lines:?}"
                );
            }
            let joined: String = lines.concat();
            assert_eq!(joined.replace(' ', ""), format!("logexportedto{path}"));
        }
        // ASCII breaks where it did.
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
    }

    /// A word longer than a line (a rule written without blanks) reads
    /// back as written from the rows of a prose line and of a trace's tree:
    /// never a blank put inside it.
    #[test]
    fn a_long_word_broken_across_rows_reads_back_as_written() {
        let rule = "((1-(cpustat.idle[0]-cpustat.idle[1])/(cpustat.total_ticks[0]-cpustat.total_ticks[1]))*onumcpus)<0.08";
        for width in [20, 50, 80] {
            for lead in ["    ", "  ├─ "] {
                let text = crate::report::prose(&format!("{lead}{rule}"), width);
                let rows: Vec<&str> = text.lines().collect();
                assert!(rows.len() > 1, "{text}");
                assert!(rows.iter().all(|r| r.chars().count() <= width), "{text}");
                let body: String = rows
                    .iter()
                    .map(|r| r.trim_start_matches([' ', '├', '─', '│']))
                    .collect();
                assert_eq!(body, rule, "at {width} after {lead:?}:\n{text}");
            }
        }
        assert_eq!(wrap_hanging("ab cdefgh", 4, 3), ["ab", "cde", "fgh"]);
        // Adversary F10: a name breaks after its punctuation when it can,
        // not one letter before its end (`….con` / `f`).
        assert_eq!(
            wrap("rules production-guests-of-the-datacentre-v2.conf", 28),
            ["rules", "production-guests-of-the-", "datacentre-v2.conf"]
        );
    }

    fn list(ids: &[u32]) -> CpuList {
        CpuList {
            count: ids.len() as i32,
            ids: ids.into(),
        }
    }

    #[test]
    fn one_takes_the_singular_and_everything_else_the_plural() {
        assert_eq!(cpus(1.0), "1 CPU");
        assert_eq!(cpus(0.0), "0 CPUs");
        assert_eq!(cpus(4.0), "4 CPUs");
        assert_eq!(cpus(1.5), "1.5 CPUs");
        assert_eq!(intervals(6.0), "6 intervals");
        assert_eq!(intervals(1.0), "1 interval");
    }

    #[test]
    fn a_list_of_one_cpu_is_not_read_as_a_count() {
        assert_eq!(online_list(&list(&[0])), "cpu0 online");
        assert_eq!(online_list(&list(&[3])), "cpu3 online");
        assert_eq!(online_list(&list(&[0, 1, 2, 3, 8])), "CPUs 0-3,8 online");
        assert_eq!(online_list(&list(&[])), "no CPU online");
    }
}
