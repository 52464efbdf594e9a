//! A recommendation in as few digits as keep its score: `idle < 53.7102`
//! claims a precision nobody measured, and two files whose scores agree to
//! four digits differ only in noise. Each number is tried at one, two and
//! three significant digits, the fewest that keep the score (and, with the
//! portfolio, the verdict) win.

use super::knobs::Knob;
use super::score::Score;

/// `v` to `digits` significant digits (0 stays 0).
pub fn significant(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(digits - 1 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}

/// `values` with each non-whole knob at the fewest significant digits (1 to
/// 3) for which `keeps` still returns a score, tried knob by knob in file
/// order; the values and the score of the last kept change (`None` when
/// nothing could be shortened).
pub fn fewest_digits(
    knobs: &[Knob],
    values: &[f64],
    keeps: &mut dyn FnMut(&[f64]) -> Option<Score>,
) -> (Vec<f64>, Option<Score>) {
    let mut out = values.to_vec();
    let mut last = None;
    for (i, knob) in knobs.iter().enumerate() {
        if knob.integer {
            continue;
        }
        for digits in 1..=3 {
            let v = significant(out[i], digits);
            if v == out[i] || knob.text(v) == knob.text(out[i]) {
                break;
            }
            if !(knob.range.0..=knob.range.1).contains(&v) {
                continue;
            }
            let mut tried = out.clone();
            tried[i] = v;
            if let Some(score) = keeps(&tried) {
                out = tried;
                last = Some(score);
                break;
            }
        }
    }
    (out, last)
}

/// Whether `s` scores as `original` did within noise: the same unmet
/// demand, CPUs and guest size to 1% (and a tenth of a CPU-second), no
/// more stalls, and it flaps no more.
pub fn same_within_noise(s: &Score, original: &Score) -> bool {
    let close = |x: f64, y: f64, slack: f64| x <= y * 1.01 + slack;
    s.fatal.is_none()
        && close(s.unmet_cpu_seconds, original.unmet_cpu_seconds, 0.1)
        && close(s.avg_online_cpus, original.avg_online_cpus, 0.005)
        && close(s.guest_to_working_set, original.guest_to_working_set, 0.001)
        && s.direct_scan_stalls <= original.direct_scan_stalls
        && (original.flapping || !s.flapping)
        && (original.flaps_at_steady.is_some() || s.flaps_at_steady.is_none())
        && (original.narrow || !s.narrow)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::knobs::KnobKind;

    fn knob(value: f64, integer: bool) -> Knob {
        Knob {
            kind: KnobKind::Threshold,
            span: crate::rules::Span { start: 0, end: 1 },
            line: 1,
            column: 1,
            value,
            owner: "HOTPLUG".to_string(),
            integer,
            range: (0.0, 1000.0),
            operator: None,
        }
    }

    fn score(unmet: f64) -> Score {
        crate::tune::score::example(unmet, 2.0)
    }

    #[test]
    fn significant_digits_round_as_written() {
        assert_eq!(significant(53.7102, 1), 50.0);
        assert_eq!(significant(53.7102, 2), 54.0);
        assert_eq!(significant(53.7102, 3), 53.7);
        assert_eq!(significant(0.012_345, 2), 0.012);
        assert_eq!(significant(-3.1135, 2), -3.1);
        assert_eq!(significant(0.0, 2), 0.0);
        assert!(significant(f64::NAN, 2).is_nan());
    }

    #[test]
    fn each_number_takes_the_fewest_digits_that_keep_the_score() {
        let knobs = [knob(53.7102, false), knob(133.0, false), knob(7.0, true)];
        // The score holds while the first number stays within 52..56.
        let mut keeps = |v: &[f64]| (52.0..=56.0).contains(&v[0]).then(|| score(36.7));
        let (out, last) = fewest_digits(&knobs, &[53.7102, 133.4567, 7.0], &mut keeps);
        assert_eq!(out, vec![54.0, 100.0, 7.0]);
        assert!(last.is_some());
        // Nothing keeps: nothing changes.
        let (out, last) = fewest_digits(&knobs, &[53.7102, 133.4567, 7.0], &mut |_| None);
        assert_eq!(out, vec![53.7102, 133.4567, 7.0]);
        assert!(last.is_none());
    }

    #[test]
    fn noise_is_a_percent_and_a_flap_is_never_noise() {
        let original = score(36.7);
        assert!(same_within_noise(&score(37.0), &original));
        assert!(!same_within_noise(&score(37.3), &original));
        let mut flaps = score(36.7);
        flaps.flaps_at_steady = Some(1.9);
        assert!(!same_within_noise(&flaps, &original));
    }
}
