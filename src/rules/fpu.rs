//! IEEE arithmetic with cpuplugd's fault rule. The daemon enables traps for
//! division by zero, invalid, overflow and underflow, so the first such
//! operation aborts the rule group for that interval. Rust cannot (safely)
//! unmask FPU traps, so each operation checks its own result instead.
//!
//! With the underflow trap enabled, x86 signals underflow whenever a non-zero
//! result is tiny (below the smallest normal double, judged after rounding
//! with unbounded exponent), even when the result is exact. Quiet NaN
//! operands raise nothing in arithmetic, but ordered comparisons (`<`, `>`)
//! with a NaN raise invalid.

use std::fmt;

/// Which floating-point exception stopped a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    DivisionByZero,
    Invalid,
    Overflow,
    Underflow,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fault::DivisionByZero => "division by zero",
            Fault::Invalid => "invalid operation",
            Fault::Overflow => "overflow",
            Fault::Underflow => "underflow",
        })
    }
}

const MIN_NORMAL: f64 = f64::MIN_POSITIVE;

/// `a + b`, or the fault it raises.
#[inline]
pub fn add(a: f64, b: f64) -> Result<f64, Fault> {
    let r = a + b;
    if r.is_finite() && (r == 0.0 || r.abs() >= MIN_NORMAL) {
        return Ok(r);
    }
    classify_sum(a, b, r)
}

/// `a - b`, or the fault it raises.
#[inline]
pub fn sub(a: f64, b: f64) -> Result<f64, Fault> {
    add(a, -b)
}

/// `a * b`, or the fault it raises.
#[inline]
pub fn mul(a: f64, b: f64) -> Result<f64, Fault> {
    let r = a * b;
    if r.is_finite() && r.abs() > MIN_NORMAL {
        return Ok(r);
    }
    if r == 0.0 && (a == 0.0 || b == 0.0) {
        return Ok(r);
    }
    classify_product(a, b, r)
}

/// `a / b`, or the fault it raises.
#[inline]
pub fn div(a: f64, b: f64) -> Result<f64, Fault> {
    let r = a / b;
    if r.is_finite() && r.abs() > MIN_NORMAL {
        return Ok(r);
    }
    if r == 0.0 && (a == 0.0 && b != 0.0 && !b.is_nan()) {
        return Ok(r);
    }
    classify_quotient(a, b, r)
}

/// `a > b` as an ordered comparison: NaN raises invalid.
#[inline]
pub fn greater(a: f64, b: f64) -> Result<bool, Fault> {
    if a.is_nan() || b.is_nan() {
        return Err(Fault::Invalid);
    }
    Ok(a > b)
}

/// `a < b` as an ordered comparison: NaN raises invalid.
#[inline]
pub fn less(a: f64, b: f64) -> Result<bool, Fault> {
    greater(b, a)
}

/// Conversion to a C `long` by truncation, as `long x = double` does:
/// NaN and values outside the range raise invalid.
#[inline]
pub fn to_long(x: f64) -> Result<i64, Fault> {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    if !(-LIMIT..LIMIT).contains(&x) {
        return Err(Fault::Invalid);
    }
    Ok(x.trunc() as i64)
}

/// NaN and infinite results of `+` and `*`: quiet NaN operands and
/// infinite operands give them without a fault; anything else faulted.
fn nan_or_infinite(a: f64, b: f64, r: f64) -> Option<Result<f64, Fault>> {
    if r.is_nan() {
        Some(if a.is_nan() || b.is_nan() {
            Ok(r)
        } else {
            Err(Fault::Invalid)
        })
    } else if r.is_infinite() {
        Some(if a.is_infinite() || b.is_infinite() {
            Ok(r)
        } else {
            Err(Fault::Overflow)
        })
    } else {
        None
    }
}

#[cold]
fn classify_sum(a: f64, b: f64, r: f64) -> Result<f64, Fault> {
    // A tiny non-zero sum is always exact, and still an underflow.
    nan_or_infinite(a, b, r).unwrap_or(Err(Fault::Underflow))
}

#[cold]
fn classify_product(a: f64, b: f64, r: f64) -> Result<f64, Fault> {
    if let Some(result) = nan_or_infinite(a, b, r) {
        return result;
    }
    let (ma, ea) = frexp(a);
    let (mb, eb) = frexp(b);
    let (_, e) = frexp(ma * mb);
    if ea + eb + e <= -1022 {
        Err(Fault::Underflow)
    } else {
        Ok(r)
    }
}

#[cold]
fn classify_quotient(a: f64, b: f64, r: f64) -> Result<f64, Fault> {
    if a.is_nan() || b.is_nan() {
        return Ok(r);
    }
    if b == 0.0 {
        return if a == 0.0 {
            Err(Fault::Invalid)
        } else if a.is_infinite() {
            Ok(r)
        } else {
            Err(Fault::DivisionByZero)
        };
    }
    if r.is_nan() {
        return Err(Fault::Invalid);
    }
    if r.is_infinite() {
        return if a.is_infinite() {
            Ok(r)
        } else {
            Err(Fault::Overflow)
        };
    }
    if a == 0.0 || b.is_infinite() {
        return Ok(r);
    }
    let (ma, ea) = frexp(a);
    let (mb, eb) = frexp(b);
    let (_, e) = frexp(ma / mb);
    if ea - eb + e <= -1022 {
        Err(Fault::Underflow)
    } else {
        Ok(r)
    }
}

/// Splits a finite non-zero `x` into `m * 2^e` with `0.5 <= |m| < 1`.
fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let (x, bias) = if x.abs() < MIN_NORMAL {
        (x * 2f64.powi(64), -64)
    } else {
        (x, 0)
    };
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let m = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (m, exp - 1022 + bias)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn division_faults() {
        assert_eq!(div(1.0, 0.0), Err(Fault::DivisionByZero));
        assert_eq!(div(0.0, 0.0), Err(Fault::Invalid));
        assert_eq!(div(f64::INFINITY, f64::INFINITY), Err(Fault::Invalid));
        assert_eq!(div(1e-308, 1e10), Err(Fault::Underflow));
        assert_eq!(div(1e-308, 1e300), Err(Fault::Underflow));
        assert_eq!(div(6.0, 3.0), Ok(2.0));
        assert_eq!(div(0.0, 5.0), Ok(0.0));
        assert_eq!(div(1.0, f64::INFINITY), Ok(0.0));
    }

    #[test]
    fn product_and_sum_faults() {
        assert_eq!(mul(1e308, 10.0), Err(Fault::Overflow));
        assert_eq!(mul(0.0, f64::INFINITY), Err(Fault::Invalid));
        assert_eq!(mul(f64::INFINITY, 2.0), Ok(f64::INFINITY));
        assert_eq!(mul(1e-310, 1.0), Err(Fault::Underflow));
        assert_eq!(mul(MIN_NORMAL, 1.0), Ok(MIN_NORMAL));
        assert_eq!(mul(0.0, 1e-310), Ok(0.0));
        assert_eq!(add(f64::INFINITY, f64::NEG_INFINITY), Err(Fault::Invalid));
        assert_eq!(add(1.7e308, 1.7e308), Err(Fault::Overflow));
        assert_eq!(add(1e-310, 0.0), Err(Fault::Underflow));
        assert_eq!(sub(3.0, 3.0), Ok(0.0));
    }

    #[test]
    fn comparisons_and_conversions() {
        assert_eq!(greater(f64::NAN, 1.0), Err(Fault::Invalid));
        assert_eq!(less(1.0, 2.0), Ok(true));
        assert_eq!(to_long(1e19), Err(Fault::Invalid));
        assert_eq!(to_long(-(2f64.powi(63))), Ok(i64::MIN));
        assert_eq!(to_long(-3.9), Ok(-3));
        assert_eq!(to_long(f64::NAN), Err(Fault::Invalid));
    }
}
