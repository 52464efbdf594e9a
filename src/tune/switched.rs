//! What a tuned number switched off: a threshold past the end of what its
//! measure can reach makes a comparison that never holds (a HOTUNPLUG the
//! guest can never meet, so it never unplugs) or always holds (a half of an
//! `&` that no longer decides anything). The search finds such files on
//! purpose — the paper's loadavg halves switched off are its finding — and
//! the report must say so instead of showing a number that means "never".

use crate::report::node_text::number;
use crate::rules::eval::NoTrace;
use crate::rules::expr::{NodeKind, Reading};
use crate::rules::hysteresis::{Pattern, Steady, every_leaf, gaps};
use crate::rules::{Evaluator, NodeId, RuleKind, RuleSet, SourceFile, SystemFacts, load};

/// One sentence per comparison of HOTPLUG and HOTUNPLUG that `file`,
/// loaded on `facts`, switched off (never or always holds on a guest of the
/// CPUs present), as far as the hysteresis analysis can tell.
pub fn notes(file: &SourceFile, facts: &SystemFacts) -> Vec<String> {
    let Ok(cpus) = facts.present_cpus.as_ref().map(|n| f64::from(*n)) else {
        return Vec::new();
    };
    let outcome = load(file, facts);
    if outcome.refusal.is_some() {
        return Vec::new();
    }
    of_rules(&outcome.rules, cpus)
}

fn of_rules(rules: &RuleSet, cpus: f64) -> Vec<String> {
    let mut out = Vec::new();
    let whole = cpus.clamp(1.0, f64::from(MAX_COUNTS)) as u32;
    for (kind, what) in [
        (RuleKind::Hotplug, "plugs"),
        (RuleKind::Hotunplug, "unplugs"),
    ] {
        if never_holds(rules, kind, whole) {
            out.push(format!(
                "{} holds at no steady load on 1 to {whole} CPUs: this file never {what} a CPU",
                kind.file_name()
            ));
        }
    }
    for g in gaps(rules) {
        let (p, u) = (g.plug_threshold, g.unplug_threshold);
        let top = g.unit * cpus;
        match g.pattern {
            Pattern::Share => {
                let (plug_never, plug_always, unplug_never) = if g.unplug_above {
                    (p <= 0.0, p > top, u >= top)
                } else {
                    (p >= top, p < 0.0, u <= 0.0)
                };
                if unplug_never {
                    out.push(format!(
                        "HOTUNPLUG's threshold {} is past all {cpus} CPUs' worth ({}): that \
                         comparison never holds, and where it is the whole rule the file never \
                         unplugs",
                        number(u),
                        number(top)
                    ));
                }
                if plug_never {
                    out.push(format!(
                        "HOTPLUG's threshold {} can never be crossed: that comparison never holds",
                        number(p)
                    ));
                } else if plug_always {
                    out.push(format!(
                        "HOTPLUG's threshold {} is past all {cpus} CPUs' worth ({}): that \
                         comparison always holds, so it decides nothing",
                        number(p),
                        number(top)
                    ));
                }
            }
            // Its unit is a CPU of load, not of the measure: nothing to say.
            Pattern::PerCpu => {}
            Pattern::Onumcpus => {
                if p < -cpus {
                    out.push(format!(
                        "HOTPLUG's offset {} puts its threshold below zero at every CPU count: \
                         that comparison always holds, so the rule's other half decides",
                        number(p)
                    ));
                }
                if u <= -cpus {
                    out.push(format!(
                        "HOTUNPLUG's offset {} puts its threshold at or below zero at every CPU \
                         count: that comparison never holds, so the rule's other half decides",
                        number(u)
                    ));
                }
            }
        }
    }
    out
}

/// The most CPU counts [`never_holds`] looks at.
const MAX_COUNTS: u32 = 64;

/// Loads tried on each CPU count, from idle to one CPU past them all.
const LOADS: u32 = 40;

/// Whether `kind` holds at no steady load (idle to a CPU more than the
/// CPUs online) on 1 to `cpus` CPUs online. Only a rule on CPU time, the
/// load and the CPU count is judged: the steady model knows nothing of
/// memory, and a rule that cannot be evaluated there is not said to never
/// hold.
fn never_holds(rules: &RuleSet, kind: RuleKind, cpus: u32) -> bool {
    let Some(rule) = rules.rule(kind) else {
        return false;
    };
    if !reads_cpu_only(rules, rule.root) {
        return false;
    }
    for n in 1..=cpus {
        let online = f64::from(n);
        for k in 0..=LOADS {
            let d = (online + 1.0) * f64::from(k) / f64::from(LOADS);
            let steady = Steady { n: online, d };
            match Evaluator::new(rules, &steady).truth(rule.root, &mut NoTrace) {
                Ok(false) => {}
                Ok(true) | Err(_) => return false,
            }
        }
    }
    true
}

/// Whether a rule reads only CPU time, the load and the CPU count.
fn reads_cpu_only(rules: &RuleSet, root: NodeId) -> bool {
    every_leaf(rules, root, |kind| match kind {
        NodeKind::Keyword(k) => !k.is_memory(),
        NodeKind::Reading { reading, .. } => matches!(reading, Reading::Cpustat(_)),
        _ => true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notes_of(text: &str) -> Vec<String> {
        let file = SourceFile::new("t.conf", text.as_bytes().to_vec());
        notes(&file, &SystemFacts::any_machine(4, "test"))
    }

    /// The incident file, its thresholds replaced.
    fn oscillating(plug: &str, unplug: &str) -> String {
        std::fs::read_to_string("examples/rules/oscillating-tight.conf")
            .unwrap_or_default()
            .replace("< 0.3", &format!("< {plug}"))
            .replace("> 0.8", &format!("> {unplug}"))
    }

    #[test]
    fn an_unplug_threshold_past_every_cpu_is_said_to_never_hold() {
        let n = notes_of(&oscillating("1.8451", "4.8394"));
        assert!(
            n.iter().any(|s| s.contains("HOTUNPLUG's threshold 4.8394")),
            "{n:?}"
        );
        assert!(notes_of(&oscillating("0.3", "1.5")).is_empty());
        let n = notes_of(&oscillating("4.5", "5.5"));
        assert!(n.iter().any(|s| s.contains("always holds")), "{n:?}");
    }

    #[test]
    fn a_rule_that_holds_at_no_load_is_said_to_never_act() {
        // The reviewer's webserver tune: both halves of HOTUNPLUG off.
        let text = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\n\
            HOTPLUG=\"(loadavg > onumcpus + 0.75) & (idle < 10)\"\n\
            HOTUNPLUG=\"(loadavg < onumcpus - 4) | (idle > 400)\"\n";
        let n = notes_of(text);
        assert!(
            n.iter().any(|s| s == "HOTUNPLUG holds at no steady load on 1 to 4 CPUs: this file never unplugs a CPU"),
            "{n:?}"
        );
        assert!(!n.iter().any(|s| s.contains("never plugs")), "{n:?}");
        // The paper's file unplugs and plugs.
        let paper = std::fs::read_to_string("examples/rules/cpu-loadavg.conf").unwrap_or_default();
        assert!(notes_of(&paper).is_empty(), "{:?}", notes_of(&paper));
        // A rule on memory is not judged by a model that has none.
        let memory = text.replace("(idle > 400)", "(freemem > 1e30)");
        assert!(
            !notes_of(&memory)
                .iter()
                .any(|s| s.contains("never unplugs"))
        );
    }

    #[test]
    fn offsets_past_every_cpu_count_are_said_to_switch_a_half_off() {
        let text = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\n\
            HOTPLUG=\"(loadavg > onumcpus - 4.5) & (idle < 10)\"\n\
            HOTUNPLUG=\"(loadavg < onumcpus - 4.25) | (idle > 150)\"\n";
        let n = notes_of(text);
        assert!(
            n.iter().any(|s| s.contains("HOTPLUG's offset -4.5")),
            "{n:?}"
        );
        assert!(
            n.iter().any(|s| s.contains("HOTUNPLUG's offset -4.25")),
            "{n:?}"
        );
        let kept = text.replace("- 4.5", "+ 0.75").replace("- 4.25", "- 0.25");
        assert!(notes_of(&kept).is_empty(), "{:?}", notes_of(&kept));
    }
}
