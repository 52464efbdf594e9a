//! Which limits a tune leaves alone unless asked: CPU_MIN, and a CPU_MAX
//! that means "every CPU" (0, or at least the CPUs present). Tuned on one
//! workload, a search learns its peak as the limit (`CPU_MAX="3"` from a
//! benchmark that never wanted a fourth CPU) and starves every workload
//! that would, or its floor (`CPU_MIN="4"`, every CPU of the training
//! guest, which a smaller guest refuses to load); limits are the site's
//! policy, and an admin who wants one tuned names it (`--knob CPU_MAX=…`).

use super::knobs::{Knob, KnobKind};
use crate::rules::Setting;

/// `knobs` without CPU_MIN and without a CPU_MAX that means every CPU of
/// a guest with `cpus` CPUs present, each unless one of `asked` (the
/// `--knob` specifications) names it.
pub fn leave_unlimited(knobs: Vec<Knob>, asked: &[String], cpus: u32) -> Vec<Knob> {
    let named = |limit: Setting| {
        asked.iter().any(|spec| {
            spec.split(['=', ' '])
                .next()
                .is_some_and(|name| name.trim().eq_ignore_ascii_case(limit.file_name()))
        })
    };
    let (min_named, max_named) = (named(Setting::CpuMin), named(Setting::CpuMax));
    knobs
        .into_iter()
        .filter(|k| match k.kind {
            KnobKind::Limit(Setting::CpuMin) => min_named,
            KnobKind::Limit(Setting::CpuMax) => {
                max_named || (k.value > 0.0 && k.value < f64::from(cpus))
            }
            _ => true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{SourceFile, SystemFacts, load};

    fn knobs_of(text: &str) -> Vec<Knob> {
        let file = SourceFile::new("t.conf", text.as_bytes().to_vec());
        let outcome = load(&file, &SystemFacts::any_machine(4, "test"));
        super::super::knobs::find(&outcome.rules, &file)
    }

    const RULES: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"CAP\"\n\
        HOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 150\"\nidle=\"cpustat.idle[0]\"\n";

    fn has_cpu_max(k: &[Knob]) -> bool {
        k.iter().any(|k| k.kind == KnobKind::Limit(Setting::CpuMax))
    }

    #[test]
    fn every_cpu_stays_every_cpu_unless_asked() {
        for cap in ["0", "4", "9"] {
            let k = knobs_of(&RULES.replace("CAP", cap));
            assert!(has_cpu_max(&k), "found at {cap}");
            assert!(!has_cpu_max(&leave_unlimited(k.clone(), &[], 4)), "{cap}");
            for asked in ["CPU_MAX=1..4", "cpu_max=3", "CPU_MAX"] {
                let kept = leave_unlimited(k.clone(), &[asked.to_string()], 4);
                assert!(has_cpu_max(&kept), "{cap} {asked}");
            }
            // Naming another knob is not asking for this one.
            let other = leave_unlimited(k.clone(), &["CPU_MAX_X=1".to_string()], 4);
            assert!(!has_cpu_max(&other), "{cap}");
        }
    }

    #[test]
    fn a_real_cap_is_tuned_as_before() {
        let k = knobs_of(&RULES.replace("CAP", "3"));
        assert!(has_cpu_max(&leave_unlimited(k, &[], 4)));
    }

    #[test]
    fn cpu_min_is_tuned_only_when_asked() {
        let k = knobs_of(&RULES.replace("CAP", "3"));
        let min = |k: &[Knob]| k.iter().any(|k| k.kind == KnobKind::Limit(Setting::CpuMin));
        assert!(min(&k));
        assert!(!min(&leave_unlimited(k.clone(), &[], 4)));
        assert!(min(&leave_unlimited(k, &["CPU_MIN=1..2".to_string()], 4)));
    }
}
