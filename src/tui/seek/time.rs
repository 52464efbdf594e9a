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
    "{0:?} is not a time: type a time of day as the header shows it (18:00, 18:30:15) or a time from the start (+18h, +1h30m, +90m, +2d; at most 366 days)"
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

/// What a typed time is resolved against: the first reading, the
/// intervals the screen keeps and the one it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Around {
    /// The first reading of the source (`+18h` counts from it).
    pub start: Stamp,
    /// The oldest interval kept.
    pub oldest: Stamp,
    /// The newest interval kept.
    pub newest: Stamp,
    /// The interval shown.
    pub shown: Stamp,
}

/// How far back from the interval shown a time of day is taken (and so
/// how far ahead: the rest of a day). The header's clock at 18:00 and
/// `J 05:00` mean this morning, `J 20:00` tonight.
const BACK: i64 = 18 * 3600;

impl TypedTime {
    /// The moment meant. A duration counts from the first reading. A time
    /// of day is a time the screen keeps if one of its days is kept (the
    /// one nearest the interval shown); else the one in the day around
    /// the interval shown (from 18 hours before it to 6 hours after),
    /// never before the first reading. So a time of day gone from the
    /// screen is before the oldest kept, not silently the next day's.
    pub fn resolve(self, around: Around) -> Stamp {
        match self {
            TypedTime::FromStart(seconds) => Stamp {
                micros: around
                    .start
                    .micros
                    .saturating_add((seconds * 1e6).round().min(i64::MAX as f64) as i64),
            },
            TypedTime::OfDay(of_day) => {
                let base = around.shown.secs().saturating_sub(BACK);
                let day = base.div_euclid(DAY) * DAY;
                let mut at = day.saturating_add(of_day);
                if at <= base {
                    at = at.saturating_add(DAY);
                }
                if Stamp::new(at, 0) < around.start {
                    at = at.saturating_add(DAY);
                }
                let kept = |t: i64| {
                    let t = Stamp::new(t, 0);
                    around.oldest <= t && t <= around.newest
                };
                let distance = |t: i64| t.abs_diff(around.shown.secs());
                let nearest_kept = [at.saturating_sub(DAY), at, at.saturating_add(DAY)]
                    .into_iter()
                    .filter(|t| kept(*t))
                    .min_by_key(|t| distance(*t));
                Stamp::new(nearest_kept.unwrap_or(at), 0)
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
    fn a_time_of_day_is_taken_around_the_interval_shown_and_never_before_the_start() {
        let day = 19_675 * DAY;
        let t = |h: i64, m: i64| Stamp::new(day + h * 3600 + m * 60, 0);
        // A 24-hour recording from midnight, read to 18:00; the screen
        // keeps 17:50 to 18:00.
        let around = Around {
            start: t(0, 0),
            oldest: t(17, 50),
            newest: t(18, 0),
            shown: t(18, 0),
        };
        let at = |of: TypedTime, a: Around| (of.resolve(a).secs() - day) / 60;
        let hm = |h: i64, m: i64| h * 60 + m;
        let of = |h: i64, m: i64| TypedTime::OfDay(h * 3600 + m * 60);
        assert_eq!(at(of(17, 55), around), hm(17, 55), "kept");
        assert_eq!(
            at(of(17, 40), around),
            hm(17, 40),
            "gone from the screen: this day's, before the oldest kept, not tomorrow's"
        );
        assert_eq!(at(of(5, 0), around), hm(5, 0), "this morning");
        assert_eq!(at(of(20, 0), around), hm(20, 0), "tonight");
        assert_eq!(at(of(23, 59), around), hm(23, 59));
        // Shown just before midnight: a little after it is tomorrow's.
        let late = Around {
            shown: t(23, 50),
            newest: t(23, 50),
            oldest: t(23, 40),
            ..around
        };
        assert_eq!(at(of(0, 10), late), hm(24, 10));
        // Shown just after midnight: the evening before is yesterday's,
        // and kept times are found across midnight.
        let early = Around {
            start: t(-10, 0),
            oldest: t(-1, 0),
            newest: t(0, 5),
            shown: t(0, 5),
        };
        assert_eq!(at(of(23, 30), early), hm(0, -30), "kept, the day before");
        assert_eq!(at(of(22, 0), early), hm(-2, 0), "gone, the day before");
        // Never before the first reading: a recording started at 14:00,
        // shown at 18:00, has 02:00 only the next day.
        let afternoon = Around {
            start: t(14, 0),
            oldest: t(17, 50),
            newest: t(18, 0),
            shown: t(18, 0),
        };
        assert_eq!(at(of(2, 0), afternoon), hm(26, 0));
        assert_eq!(
            at(TypedTime::FromStart(18.0 * 3600.0), afternoon),
            hm(32, 0)
        );
        assert_eq!(
            TypedTime::FromStart(f64::MAX).resolve(afternoon).micros,
            i64::MAX,
            "no overflow"
        );
    }
}
