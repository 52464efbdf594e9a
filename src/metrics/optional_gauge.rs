//! A gauge without labels that can be absent: "no CMM" or "CMM_MAX unset"
//! must be no series at all, not a 0 that reads as an empty pool or a −1
//! that a query compares against.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use prometheus_client::encoding::{EncodeMetric, MetricEncoder};
use prometheus_client::metrics::{MetricType, TypedMetric};

/// The bits that stand for "absent" (a NaN no value set here ever has:
/// every NaN given is stored as absent).
const ABSENT: u64 = u64::MAX;

/// A gauge that is either a number or absent; clones share the value, so
/// the loop sets it and the endpoint's thread encodes it.
#[derive(Debug, Clone)]
pub struct OptionalGauge(Arc<AtomicU64>);

impl Default for OptionalGauge {
    fn default() -> Self {
        OptionalGauge(Arc::new(AtomicU64::new(ABSENT)))
    }
}

impl OptionalGauge {
    /// Sets the value, or makes the series absent with `None` (or a NaN).
    pub fn set(&self, value: Option<f64>) {
        let bits = value.filter(|v| !v.is_nan()).map_or(ABSENT, f64::to_bits);
        self.0.store(bits, Ordering::Relaxed);
    }

    /// The value, when there is one.
    pub fn get(&self) -> Option<f64> {
        let bits = self.0.load(Ordering::Relaxed);
        (bits != ABSENT).then(|| f64::from_bits(bits))
    }
}

impl TypedMetric for OptionalGauge {
    const TYPE: MetricType = MetricType::Gauge;
}

impl EncodeMetric for OptionalGauge {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        match self.get() {
            Some(v) => encoder.encode_gauge(&v),
            None => Ok(()),
        }
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }

    /// An absent gauge has no descriptor either (no HELP without samples).
    fn is_empty(&self) -> bool {
        self.get().is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_until_set_and_absent_again_for_none_or_nan() {
        let g = OptionalGauge::default();
        assert_eq!(g.get(), None);
        g.set(Some(3.0));
        assert_eq!(g.clone().get(), Some(3.0));
        g.set(Some(f64::NAN));
        assert_eq!(g.get(), None);
        g.set(Some(-0.5));
        g.set(None);
        assert_eq!(g.get(), None);
    }
}
