//! Line mode: one line per interval with the decision and the sub-expression
//! that decided it, for logs, 3270 consoles and screen readers. It uses the
//! same explanations as the screen's rules panel.

use crate::control::controller::Mode;
use crate::engine::{CpuAction, GroupStatus};
use crate::report::fault_words::{CPU_RULES, MEMORY_RULES, group_fault};
use crate::report::trace;
use crate::rules::RuleKind;
use crate::tui::app::App;

/// The newest interval as one line (`None` while the history fills), with
/// any text from the rule file or the guest made safe for a terminal.
pub fn interval(app: &App) -> Option<String> {
    decided(app).map(|l| crate::report::terminal_safe(&l).into_owned())
}

fn decided(app: &App) -> Option<String> {
    let f = app.timeline().frames().front()?;
    let d = f.decision.as_ref()?;
    let mut parts = vec![format!(
        "{} #{}",
        crate::tui::view::clock(f.sample.stamp),
        f.number
    )];
    if let Some(fatal) = &d.fatal {
        parts.push(format!("cpuplugd would exit: {}", fatal.message));
        return Some(parts.join(" "));
    }
    let explain = |k: RuleKind| trace::explain(&f.rules, &f.file, &f.trace, k).unwrap_or_default();
    // Only autonomous mode changes the guest; every other mode's line says
    // what would be done, as the log's "would" lines do.
    let acts = app.board().mode() == Mode::Auto;
    let would = |what: &str| {
        if acts {
            what.to_string()
        } else {
            format!("would {what}")
        }
    };
    if let Some(cpu) = d.cpu {
        parts.push(match (cpu.status, cpu.action) {
            (GroupStatus::Fault(fault), _) => format!(
                "cpu: skipped ({})",
                group_fault(&f.rules, &f.file, &f.trace, &CPU_RULES, fault)
            ),
            (GroupStatus::Vertical, _) => "cpu: vertical polarization, no change".into(),
            (_, CpuAction::Plug) => {
                format!("cpu: {}, {}", would("plug"), explain(RuleKind::Hotplug))
            }
            (_, CpuAction::Unplug) => {
                format!("cpu: {}, {}", would("unplug"), explain(RuleKind::Hotunplug))
            }
            _ if cpu.limited => format!(
                "cpu: no change, limit reached; {}",
                explain(if cpu.hotplug == Some(true) {
                    RuleKind::Hotplug
                } else {
                    RuleKind::Hotunplug
                })
            ),
            _ => format!("cpu: no change, {}", explain(RuleKind::Hotunplug)),
        });
    }
    if let Some(mem) = d.mem {
        let rule = if mem.memplug == Some(true) {
            RuleKind::Memplug
        } else {
            RuleKind::Memunplug
        };
        parts.push(match mem.status {
            GroupStatus::Fault(fault) => format!(
                "mem: skipped ({})",
                group_fault(&f.rules, &f.file, &f.trace, &MEMORY_RULES, fault)
            ),
            _ if mem.cmm_pages == mem.cmm_pages_new => {
                format!("mem: pool stays {}, {}", mem.cmm_pages, explain(rule))
            }
            _ => format!(
                "mem: {} {} -> {}, {}",
                would("set pool"),
                mem.cmm_pages,
                mem.cmm_pages_new,
                explain(rule)
            ),
        });
    }
    Some(parts.join(" | "))
}
