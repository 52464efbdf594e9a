//! cpuplugd's own log as the actions that really happened: its lines in
//! syslog or the journal (`journalctl -u cpuplugd -o short-iso`,
//! `/var/log/messages`), laid on an imported history's time axis.
//!
//! cpuplugd logs what it does only when it runs with `-V` (its debug
//! messages go to syslog at LOG_INFO then): `cpuN will be enabled`,
//! `cpuN will be disabled`, `changing number of pages permanently reserved
//! to N`, `failed to enable cpu with id N`, `failed to disable cpu with id
//! N`; and always `terminated`, `shutting down` and `cpuplugd restarted`.
//! Those are the lines kept; every other line is read past.
//!
//! Times: ISO 8601 / RFC 3339 stamps (the journal's `short-iso`,
//! rsyslog's default on current distributions) with their offset; the
//! traditional `May  1 03:10:22` has neither year nor zone and is read
//! as UTC in the year of the history's first reading.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use super::ImportError;
use crate::kernel::Stamp;
use crate::kernel::recording::GuestAction;

/// The largest log read, and the longest line looked at.
const MOST_BYTES: u64 = 4 << 30;
const LONGEST_LINE: usize = 64 << 10;
/// The most actions kept (a recording's header holds them).
pub const MOST_ACTIONS: usize = 200_000;

/// When a line was logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// A full stamp.
    At(Stamp),
    /// A traditional syslog time: (month 1–12, day, seconds into the day),
    /// the year to be taken from the history.
    NoYear(u32, u32, i64),
}

/// One action found in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logged {
    pub when: When,
    pub text: String,
}

impl Logged {
    /// The action at its time, a traditional time read in `year` (or the
    /// year before, when it would fall more than half a year after
    /// `first`, the history's first reading: a log that spans New Year).
    pub fn action(&self, first: Stamp) -> Option<GuestAction> {
        let at = match self.when {
            When::At(at) => at,
            When::NoYear(month, day, secs) => {
                let year = chrono::DateTime::from_timestamp(first.secs(), 0)
                    .map(|d| chrono::Datelike::year(&d))?;
                let at = |y: i32| {
                    chrono::NaiveDate::from_ymd_opt(y, month, day)
                        .and_then(|d| d.and_hms_opt(0, 0, 0))
                        .map(|d| Stamp::new(d.and_utc().timestamp() + secs, 0))
                };
                let this = at(year)?;
                if this.secs() - first.secs() > 183 * 86_400 {
                    at(year - 1)?
                } else {
                    this
                }
            }
        };
        Some(GuestAction {
            at,
            text: self.text.clone(),
        })
    }
}

/// Reads cpuplugd's actions from `path`; a log with no cpuplugd line at
/// all is an error (the wrong file, or cpuplugd ran without `-V`).
pub fn read(path: &Path) -> Result<(Vec<Logged>, Vec<String>), ImportError> {
    let shown = path.display().to_string();
    let file = crate::kernel::fs::open_named(path)
        .map_err(|e| ImportError::Input(format!("{shown}: cannot read it: {e}")))?;
    let mut reader = BufReader::new(file.take(MOST_BYTES));
    let mut found = Vec::new();
    let mut warnings = Vec::new();
    let mut cpuplugd_lines = 0usize;
    let mut line = Vec::new();
    let mut number = 0usize;
    loop {
        line.clear();
        let n = (&mut reader)
            .take(LONGEST_LINE as u64)
            .read_until(b'\n', &mut line)
            .map_err(|e| ImportError::Input(format!("{shown}: line {}: {e}", number + 1)))?;
        if n == 0 {
            break;
        }
        number += 1;
        if line.last() != Some(&b'\n') && line.len() >= LONGEST_LINE {
            // Read the rest of an over-long line past.
            let mut rest = Vec::new();
            let _ = reader.read_until(b'\n', &mut rest);
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let Some((when, message)) = cpuplugd_line(text.trim_end()) else {
            continue;
        };
        cpuplugd_lines += 1;
        let Some(text) = action_text(message) else {
            continue;
        };
        let Some(when) = when else {
            if warnings.len() < 10 {
                warnings.push(format!(
                    "{shown}: line {number}: a cpuplugd line whose time cannot be read: left out"
                ));
            }
            continue;
        };
        if found.len() >= MOST_ACTIONS {
            warnings.push(format!(
                "{shown}: more than {MOST_ACTIONS} actions: the rest left out"
            ));
            break;
        }
        found.push(Logged { when, text });
    }
    if cpuplugd_lines == 0 {
        return Err(ImportError::Input(format!(
            "{shown}: no cpuplugd line in {number} lines (a syslog or `journalctl -u cpuplugd -o short-iso` output is expected)"
        )));
    }
    if found.is_empty() {
        warnings.push(format!(
            "{shown}: {cpuplugd_lines} cpuplugd lines but no CPU or pool action: cpuplugd logs its actions only with -V"
        ));
    }
    Ok((found, warnings))
}

/// The time and message of a cpuplugd line (`... host cpuplugd[123]: text`).
fn cpuplugd_line(line: &str) -> Option<(Option<When>, &str)> {
    let tag = line
        .find(" cpuplugd[")
        .or_else(|| line.find(" cpuplugd:"))?;
    let after = &line[tag + " cpuplugd".len()..];
    let message = after.split_once(": ")?.1;
    let head = &line[..tag];
    Some((when(head), message.trim()))
}

/// The time at the start of a syslog line.
fn when(head: &str) -> Option<When> {
    let first = head.split_whitespace().next()?;
    if first.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return iso(first).map(When::At);
    }
    let mut words = head.split_whitespace();
    let name = words.next()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| *m == name)? as u32
        + 1;
    let day = words.next()?.parse::<u32>().ok()?;
    let mut t = words.next()?.split(':').map(|p| p.parse::<i64>().ok());
    let (h, m, s) = (t.next()??, t.next()??, t.next()??);
    if !(0..24).contains(&h) || !(0..60).contains(&m) || !(0..61).contains(&s) {
        return None;
    }
    Some(When::NoYear(month, day, h * 3600 + m * 60 + s))
}

/// `2024-05-01T03:10:22[.frac](Z|+HH:MM|+HHMM)`.
fn iso(text: &str) -> Option<Stamp> {
    let (date, rest) = text.split_once('T')?;
    let time_end = rest.find(['Z', '+', '-']).unwrap_or(rest.len());
    let (time, zone) = rest.split_at(time_end);
    let (whole, frac) = time.split_once('.').unwrap_or((time, ""));
    let secs = super::utc_seconds(date, whole)?;
    let micros = if frac.is_empty() {
        0
    } else {
        let digits: String = frac.chars().take(6).collect();
        let scale = 10u32.pow(6 - digits.len() as u32);
        digits.parse::<u32>().ok()? * scale
    };
    let offset = match zone {
        "" | "Z" => 0,
        z => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let digits: String = z[1..].chars().filter(char::is_ascii_digit).collect();
            if digits.len() != 4 {
                return None;
            }
            let h = digits[..2].parse::<i64>().ok()?;
            let m = digits[2..].parse::<i64>().ok()?;
            sign * (h * 3600 + m * 60)
        }
    };
    Some(Stamp::new(secs - offset, micros))
}

/// The action a cpuplugd message says, in cpuplugd's words.
fn action_text(message: &str) -> Option<String> {
    let number_after = |prefix: &str, suffix: &str| -> Option<u64> {
        message
            .strip_prefix(prefix)?
            .strip_suffix(suffix)?
            .trim()
            .parse::<u64>()
            .ok()
    };
    if let Some(n) = number_after("cpu", " will be enabled") {
        return Some(format!("cpu{n} will be enabled"));
    }
    if let Some(n) = number_after("cpu", " will be disabled") {
        return Some(format!("cpu{n} will be disabled"));
    }
    if let Some(n) = number_after("changing number of pages permanently reserved to ", "") {
        return Some(format!(
            "changing number of pages permanently reserved to {n}"
        ));
    }
    for what in ["enable", "disable"] {
        if let Some(n) = number_after(&format!("failed to {what} cpu with id "), "") {
            return Some(format!("failed to {what} cpu with id {n}"));
        }
    }
    ["terminated", "shutting down", "cpuplugd restarted"]
        .into_iter()
        .find(|m| message == *m)
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_syslog_and_rfc3339_lines_are_read() {
        let (w, m) =
            cpuplugd_line("2024-05-01T03:10:22+0200 guest cpuplugd[812]: cpu3 will be enabled")
                .expect("a cpuplugd line");
        assert_eq!(w, Some(When::At(Stamp::new(1_714_533_022 - 7200, 0))));
        assert_eq!(action_text(m).as_deref(), Some("cpu3 will be enabled"));
        let (w, _) = cpuplugd_line(
            "2024-05-01T03:10:22.250000+00:00 guest cpuplugd[812]: cpu3 will be disabled",
        )
        .expect("a cpuplugd line");
        assert_eq!(w, Some(When::At(Stamp::new(1_714_533_022, 250_000))));
        let (w, m) = cpuplugd_line(
            "May  1 03:10:22 guest cpuplugd[812]: changing number of pages permanently reserved to 2048",
        )
        .expect("a cpuplugd line");
        assert_eq!(w, Some(When::NoYear(5, 1, 3 * 3600 + 10 * 60 + 22)));
        assert_eq!(
            action_text(m).as_deref(),
            Some("changing number of pages permanently reserved to 2048")
        );
        assert_eq!(
            cpuplugd_line("May  1 03:10:22 guest sshd[1]: cpu3 will be enabled"),
            None
        );
        assert_eq!(
            action_text("Waiting 3 intervals to accumulate history."),
            None
        );
    }

    #[test]
    fn a_traditional_time_takes_the_history_year() {
        let l = Logged {
            when: When::NoYear(12, 31, 23 * 3600),
            text: "cpu1 will be disabled".into(),
        };
        // A history starting on 1 January: the line was last year's.
        let first = Stamp::new(1_704_067_200 + 600, 0); // 2024-01-01 00:10
        let a = l.action(first).expect("an action");
        assert_eq!(a.at, Stamp::new(1_704_067_200 - 3600, 0));
    }
}
