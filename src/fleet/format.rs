//! One guest's cells as text, shared by the screen's table and `--batch`,
//! so both say the same thing the same way. Every text that came from
//! Prometheus is made safe for a terminal here.

use super::model::{FleetColumn, FleetGuest};
use crate::safe_text::terminal_safe;

/// MiB in a CMM page count (4 KiB pages).
pub fn pages_to_mib(pages: f64) -> f64 {
    pages * 4096.0 / (1024.0 * 1024.0)
}

/// A number as a short text: integers without decimals, absurd values
/// shortened (`1.0e30`), nothing as `-`.
pub fn number(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v.abs() >= 1e9 => format!("{v:.1e}"),
        Some(v) if v.fract() == 0.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 10.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
    }
}

/// An age in seconds as `12s`, `5m`, `3h`, `2d`.
pub fn age(seconds: Option<f64>) -> String {
    let Some(s) = seconds.filter(|s| s.is_finite()) else {
        return "-".into();
    };
    let s = s.max(0.0);
    if s < 120.0 {
        format!("{s:.0}s")
    } else if s < 7200.0 {
        format!("{:.0}m", s / 60.0)
    } else if s < 172_800.0 {
        format!("{:.0}h", s / 3600.0)
    } else {
        format!("{:.0}d", (s / 86400.0).min(99_999.0))
    }
}

/// Values as a sparkline of block characters, the last `width` of them,
/// scaled from 0 to the largest (a flat line when all are equal).
pub fn sparkline(values: &[f64], width: usize) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let tail = &values[values.len().saturating_sub(width)..];
    let max = tail.iter().copied().fold(0.0f64, f64::max);
    tail.iter()
        .map(|v| {
            if max <= 0.0 {
                BARS[0]
            } else {
                let i = ((v / max) * 7.0).round().clamp(0.0, 7.0) as usize;
                BARS[i]
            }
        })
        .collect()
}

/// The text of one cell.
pub fn cell(g: &FleetGuest, column: FleetColumn, now: f64, stale_after: f64) -> String {
    let safe = |s: &str| terminal_safe(s).into_owned();
    match column {
        FleetColumn::Trouble => {
            let t = g.troubles(now, stale_after);
            if t.is_empty() {
                "ok".into()
            } else {
                t.iter().map(|t| t.word()).collect::<Vec<_>>().join(",")
            }
        }
        FleetColumn::Instance => safe(&g.instance),
        FleetColumn::FleetGuest => safe(&g.zvm_name),
        FleetColumn::System => safe(&g.system),
        FleetColumn::Cpus => last_seen(
            g,
            now,
            stale_after,
            format!("{}/{}", number(g.online), number(g.present)),
        ),
        FleetColumn::Pool => match (g.pool_pages, g.pool_max_pages) {
            (None, _) => "-".into(),
            (Some(p), max) => last_seen(
                g,
                now,
                stale_after,
                format!(
                    "{}/{}",
                    number(Some(pages_to_mib(p).round())),
                    number(max.map(|m| pages_to_mib(m).round()))
                ),
            ),
        },
        FleetColumn::Mode => safe(g.mode.as_deref().unwrap_or("-")),
        FleetColumn::Flap => match (g.flapping, g.flap_period) {
            (false, _) => "-".into(),
            (true, Some(p)) => format!("{}s", number(Some(p))),
            (true, None) => "yes".into(),
        },
        FleetColumn::Faults => {
            if g.faulted.is_empty() {
                "-".into()
            } else {
                safe(&g.faulted.join(","))
            }
        }
        FleetColumn::Actions => number(g.actions_per_hour.map(f64::round)),
        FleetColumn::Age => age(g.age(now)),
        FleetColumn::Rules => safe(&g.rules()),
    }
}

/// A value of a stopped guest in parentheses: the last its plugtop
/// exported, not what the guest has now (a clean stop puts the guest back
/// as it found it).
fn last_seen(g: &FleetGuest, now: f64, stale_after: f64, value: String) -> String {
    if g.stopped(now, stale_after) {
        format!("({value})")
    } else {
        value
    }
}

/// A `value/limit` cell wider than `w`: the value alone, in its
/// parentheses when it had them, so a stopped guest's pool reads `(1077)`
/// rather than `(1077/48…` (adv52); other text as it is.
pub fn without_limit(text: &str, w: usize) -> std::borrow::Cow<'_, str> {
    if text.chars().count() <= w {
        return std::borrow::Cow::Borrowed(text);
    }
    match text.split_once('/') {
        Some((value, _)) if value.starts_with('(') => format!("{value})").into(),
        Some((value, _)) => value.into(),
        None => text.into(),
    }
}

/// `text` cut or padded to exactly `w` characters.
pub fn fit(text: &str, w: usize) -> String {
    let n = text.chars().count();
    if n > w {
        let mut s: String = text.chars().take(w.saturating_sub(1)).collect();
        s.push('…');
        s
    } else {
        format!("{text}{}", " ".repeat(w - n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_with_its_limit_too_wide_keeps_the_value() {
        assert_eq!(without_limit("(1077/4864)", 9), "(1077)");
        assert_eq!(without_limit("65536/65536", 9), "65536");
        assert_eq!(without_limit("1077/4864", 9), "1077/4864");
        assert_eq!(without_limit("(1/4)", 9), "(1/4)");
        assert_eq!(without_limit("somethinglong", 9), "somethinglong");
    }

    #[test]
    fn numbers_and_ages_stay_short() {
        assert_eq!(number(Some(3.0)), "3");
        assert_eq!(number(Some(1e300)), "1.0e300");
        assert_eq!(number(None), "-");
        assert_eq!(age(Some(5.0)), "5s");
        assert_eq!(age(Some(600.0)), "10m");
        assert_eq!(age(Some(1e300)), "99999d");
    }

    #[test]
    fn a_sparkline_scales_to_its_largest_value() {
        assert_eq!(sparkline(&[0.0, 2.0, 4.0], 10), "▁▅█");
        assert_eq!(sparkline(&[1.0, 2.0, 4.0], 2), "▅█");
    }
}
