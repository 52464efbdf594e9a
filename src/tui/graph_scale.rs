//! How the graphs scale their bars (`z` switches). From zero by default:
//! a busy share between 0.184 and 0.2 is then drawn as a steady bar near
//! the top, where a scale from the lowest to the highest value drawn
//! turns the same steady data into full-height swings that look like
//! flapping, on a tool for debugging flapping.

/// How the graphs' bar heights are scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GraphScale {
    /// From zero (or the lowest value, when below zero) to the highest
    /// value drawn.
    #[default]
    FromZero,
    /// What the quantity can reach: 0..1 for shares, 0 to the present
    /// CPUs, 0 to CMM_MAX; from zero to the highest value kept for the
    /// rest. It does not move as the window does.
    Fixed,
    /// From the lowest to the highest value drawn: small changes made big.
    Range,
}

impl GraphScale {
    /// The next scale `z` switches to.
    pub fn next(self) -> GraphScale {
        match self {
            GraphScale::FromZero => GraphScale::Fixed,
            GraphScale::Fixed => GraphScale::Range,
            GraphScale::Range => GraphScale::FromZero,
        }
    }

    /// How the graphs' title names it.
    pub fn name(self) -> &'static str {
        match self {
            GraphScale::FromZero => "from zero",
            GraphScale::Fixed => "fixed",
            GraphScale::Range => "lowest to highest",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn z_goes_round_the_three_scales_from_zero_first() {
        let mut s = GraphScale::default();
        assert_eq!(s, GraphScale::FromZero);
        let mut seen = Vec::new();
        for _ in 0..3 {
            seen.push(s.name());
            s = s.next();
        }
        assert_eq!(s, GraphScale::FromZero);
        assert_eq!(seen, ["from zero", "fixed", "lowest to highest"]);
    }
}
