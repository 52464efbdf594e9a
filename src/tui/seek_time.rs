//! The time typed after `J`: a time of day as the header shows it
//! (`18:00`, UTC) or a time from the first reading (`+18h`, `+1h30m`),
//! and the moment it means.

use crate::kernel::Stamp;

const DAY: i64 = 86_400;

/// A time typed after `J`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TypedTime {
    /// `HH`, `HH:MM` or `HH:MM:SS`: seconds into a day (UTC), as the header
    /// and the log show times.
    OfDay(i64),
    /// `+DURATION` (or a duration with units, `18h`): seconds after the
    /// first reading.
    FromStart(f64),
}

/// Why a typed time is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a time: type a time of day as the header shows it (18:00, 18:30:15) or a time from the start (+18h, +1h30m, +90m)"
)]
pub struct NotATime(pub String);

/// Reads what was typed after `J`.
pub fn parse(text: &str) -> Result<TypedTime, NotATime> {
    let text = text.trim();
    let wrong = || NotATime(text.to_string());
    if let Some(duration) = text.strip_prefix('+') {
        return crate::sim::scenario::seconds(duration)
            .map(TypedTime::FromStart)
            .ok_or_else(wrong);
    }
    if text.ends_with(|c: char| c.is_ascii_alphabetic()) {
        return crate::sim::scenario::seconds(text)
            .map(TypedTime::FromStart)
            .ok_or_else(wrong);
    }
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() > 3 || parts.iter().any(|p| p.is_empty() || p.len() > 2) {
        return Err(wrong());
    }
    let mut seconds = 0;
    for (i, part) in parts.iter().enumerate() {
        let limit = if i == 0 { 24 } else { 60 };
        let v: i64 = part
            .chars()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
            .filter(|v| *v < limit)
            .ok_or_else(wrong)?;
        seconds += v * [3600, 60, 1][i];
    }
    Ok(TypedTime::OfDay(seconds))
}

impl TypedTime {
    /// The moment meant: a time of day is the first at or after `from`
    /// (the oldest interval the screen keeps), a duration counts from
    /// `start` (the first reading).
    pub fn resolve(self, start: Stamp, from: Stamp) -> Stamp {
        match self {
            TypedTime::FromStart(seconds) => Stamp {
                micros: start
                    .micros
                    .saturating_add((seconds * 1e6).round().min(i64::MAX as f64) as i64),
            },
            TypedTime::OfDay(of_day) => {
                let day = from.secs().div_euclid(DAY) * DAY;
                let mut at = Stamp::new(day + of_day, 0);
                if at < from {
                    at = Stamp::new(day + DAY + of_day, 0);
                }
                at
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_of_day_and_times_from_the_start_are_read_and_the_rest_refused() {
        assert_eq!(parse("18:00"), Ok(TypedTime::OfDay(18 * 3600)));
        assert_eq!(parse(" 18:30:15 "), Ok(TypedTime::OfDay(66_615)));
        assert_eq!(parse("7"), Ok(TypedTime::OfDay(7 * 3600)));
        assert_eq!(parse("00:00"), Ok(TypedTime::OfDay(0)));
        assert_eq!(parse("+18h"), Ok(TypedTime::FromStart(64_800.0)));
        assert_eq!(parse("+1h30m"), Ok(TypedTime::FromStart(5_400.0)));
        assert_eq!(parse("90m"), Ok(TypedTime::FromStart(5_400.0)));
        assert_eq!(parse("+1:30:00"), Ok(TypedTime::FromStart(5_400.0)));
        for wrong in [
            "", "24:00", "12:60", "12:00:60", "1:2:3:4", "-1", "+-5m", "+", "12:", ":30", "１２",
            "12:3x", "+1e400h", "123", "+5x", "ab:cd",
        ] {
            let said = parse(wrong);
            assert!(said.is_err(), "{wrong:?} read as {said:?}");
        }
        let said = parse("noon").map_err(|e| e.to_string());
        assert!(said.is_err_and(|e| e.contains("+18h") && e.contains("18:00")));
    }

    #[test]
    fn a_time_of_day_is_the_next_one_from_the_oldest_kept() {
        let day = 19_675 * DAY;
        let from = Stamp::new(day + 10 * 3600, 0);
        let start = Stamp::new(day + 9 * 3600, 0);
        let at = |t: TypedTime| t.resolve(start, from).secs() - day;
        assert_eq!(at(TypedTime::OfDay(18 * 3600)), 18 * 3600);
        assert_eq!(
            at(TypedTime::OfDay(10 * 3600)),
            10 * 3600,
            "now is at or after"
        );
        assert_eq!(
            at(TypedTime::OfDay(9 * 3600)),
            DAY + 9 * 3600,
            "gone today: tomorrow's"
        );
        assert_eq!(at(TypedTime::FromStart(18.0 * 3600.0)), 27 * 3600);
        assert_eq!(
            TypedTime::FromStart(f64::MAX).resolve(start, from).micros,
            i64::MAX,
            "no overflow"
        );
    }
}
