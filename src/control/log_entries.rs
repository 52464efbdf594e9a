//! What `plugtop run` logs for one step, as structured entries: the text
//! cpuplugd would print, at a priority (actions notice, faults warning,
//! failures err) and with fields a site filters on in the journal —
//! `PLUGTOP_ACTION`, `PLUGTOP_RULE`, `PLUGTOP_VALUES`, `PLUGTOP_MODE`,
//! `PLUGTOP_READING`, and for faults `PLUGTOP_FAULT` and `PLUGTOP_GROUP`.

use crate::control::controller::{Action, Event};
use crate::control::session::{Notice, Session, Severity, Step, event_severity};
use crate::logging::{Entry, Priority};

/// The journal's name for an action.
fn action_name(action: &Action) -> &'static str {
    match action {
        Action::PlugCpu => "plug_cpu",
        Action::UnplugCpu => "unplug_cpu",
        Action::Pool { from, to } if to > from => "pool_up",
        Action::Pool { .. } => "pool_down",
    }
}

/// The rule whose truth made `action` (a larger pool is MEMUNPLUG's
/// CMM_INC, a smaller one MEMPLUG's CMM_DEC); `limits` for the start
/// limits' corrections.
fn deciding_rule(action: &Action, by_limits: bool) -> &'static str {
    if by_limits {
        return "limits";
    }
    match action {
        Action::PlugCpu => "HOTPLUG",
        Action::UnplugCpu => "HOTUNPLUG",
        Action::Pool { from, to } if to > from => "MEMUNPLUG",
        Action::Pool { .. } => "MEMPLUG",
    }
}

/// The values behind the decision: onumcpus and every variable a rule
/// uses, as `name=value` words (a rule file bounds how many).
fn values(session: &Session, step: &Step) -> String {
    let mut words = Vec::new();
    if let Some(c) = step.decision.as_ref().and_then(|d| d.cpu) {
        words.push(format!("onumcpus={}", c.onumcpus));
    }
    let engine = session.engine();
    for v in session.rules().variables.iter().filter(|v| v.uses > 0) {
        if let Some(Ok(value)) = engine.variable(&v.name) {
            words.push(format!("{}={value}", v.name));
        }
    }
    words.join(" ")
}

/// The entry for one controller event; `by_limits` for the start limits'.
/// The fields are made only `with_fields` (a sink that keeps them): the
/// terminal and syslog take the text alone, every interval.
pub fn event_entry(
    e: &Event,
    by_limits: bool,
    step: &Step,
    session: &Session,
    with_fields: bool,
) -> Entry {
    let (priority, action) = match e {
        Event::Applied { action, .. } => (Priority::Notice, Some(action)),
        Event::Would { action, .. } => (Priority::Info, Some(action)),
        Event::Failed { action, .. } => (Priority::Err, Some(action)),
        other => (
            match event_severity(other) {
                Severity::Info => Priority::Info,
                Severity::Warning => Priority::Warning,
                Severity::Error => Priority::Err,
            },
            None,
        ),
    };
    Entry {
        priority,
        message: e.to_string(),
        fields: if with_fields {
            event_fields(e, action, by_limits, step, session)
        } else {
            Vec::new()
        },
    }
}

/// The journal fields of an event.
fn event_fields(
    e: &Event,
    action: Option<&Action>,
    by_limits: bool,
    step: &Step,
    session: &Session,
) -> Vec<(&'static str, String)> {
    let mut fields = vec![(
        "PLUGTOP_MODE",
        session.controller().mode().key().to_string(),
    )];
    if let Some(d) = &step.decision {
        fields.push(("PLUGTOP_READING", d.reading.to_string()));
    }
    match e {
        Event::Applied { cpu, .. } => {
            if let Some(cpu) = cpu {
                fields.push(("PLUGTOP_CPU", cpu.to_string()));
            }
            fields.push(("PLUGTOP_APPLIED", "1".into()));
        }
        Event::Would { cpu, .. } => {
            if let Some(cpu) = cpu {
                fields.push(("PLUGTOP_CPU", cpu.to_string()));
            }
            fields.push(("PLUGTOP_APPLIED", "0".into()));
        }
        Event::Failed { error, .. } => fields.push(("PLUGTOP_ERROR", error.clone())),
        _ => {}
    }
    if let Some(action) = action {
        fields.push(("PLUGTOP_ACTION", action_name(action).into()));
        fields.push(("PLUGTOP_RULE", deciding_rule(action, by_limits).into()));
        if let Action::Pool { from, to } = action {
            fields.push(("PLUGTOP_CMM_PAGES_FROM", from.to_string()));
            fields.push(("PLUGTOP_CMM_PAGES_TO", to.to_string()));
        }
        let v = values(session, step);
        if !v.is_empty() {
            fields.push(("PLUGTOP_VALUES", v));
        }
    }
    fields
}

/// The entries for a step's notices, findings and fatal stop; `keep`
/// picks the notices (cpuplugd says some only when verbose); fields only
/// `with_fields`.
pub fn message_entries(
    step: &Step,
    session: &Session,
    keep: impl Fn(&Notice) -> bool,
    with_fields: bool,
) -> Vec<Entry> {
    let mode = (
        "PLUGTOP_MODE",
        session.controller().mode().key().to_string(),
    );
    // The faults among the notices, by their text: the lines keep the
    // order cpuplugd prints them in, and these get their fields.
    let faults: Vec<(String, &str, &str)> = step
        .notices
        .iter()
        .filter_map(|n| match n {
            Notice::Fault { group, fault } => Some((n.to_string(), *group, fault.as_str())),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for (severity, line) in step.messages(keep) {
        let mut fields = Vec::new();
        if with_fields {
            fields.push(mode.clone());
            if let Some((_, group, fault)) = faults.iter().find(|f| f.0 == line) {
                fields.push(("PLUGTOP_GROUP", (*group).to_string()));
                fields.push(("PLUGTOP_FAULT", (*fault).to_string()));
            }
        }
        let (priority, message) = match severity {
            Severity::Info => (Priority::Info, line),
            Severity::Warning => (Priority::Warning, format!("warning: {line}")),
            Severity::Error => (Priority::Err, line),
        };
        out.push(Entry {
            priority,
            message,
            fields,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::control::controller::Mode;
    use crate::control::flap::FlapConfig;
    use crate::rules::{SourceFile, SystemFacts, load};

    fn session(mode: Mode) -> Session {
        let facts = SystemFacts::any_machine(4, "test");
        let file = SourceFile::new(
            "t.conf",
            b"UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 300\"\n".to_vec(),
        );
        let outcome = load(&file, &facts);
        assert!(outcome.refusal.is_none(), "{:?}", outcome.refusal);
        Session::new(Arc::new(outcome.rules), file, mode, FlapConfig::default())
    }

    #[test]
    fn a_fault_is_a_warning_naming_its_group_and_fault() {
        let step = Step {
            notices: vec![Notice::Fault {
                group: "cpu",
                fault: "division by zero".into(),
            }],
            ..Step::default()
        };
        let entries = message_entries(&step, &session(Mode::Auto), |_| true, true);
        assert_eq!(entries.len(), 1, "{entries:?}");
        let e = &entries[0];
        assert_eq!(e.priority, Priority::Warning);
        assert!(
            e.message.starts_with("warning: cpu rules skipped"),
            "{}",
            e.message
        );
        assert!(e.fields.contains(&("PLUGTOP_GROUP", "cpu".into())));
        assert!(
            e.fields
                .contains(&("PLUGTOP_FAULT", "division by zero".into()))
        );
    }

    #[test]
    fn a_failed_write_is_an_error_and_a_pool_change_names_its_pages() {
        let s = session(Mode::Auto);
        let failed = Event::Failed {
            action: Action::PlugCpu,
            error: "EBUSY".into(),
            nothing_left: false,
        };
        let e = event_entry(&failed, false, &Step::default(), &s, true);
        assert_eq!(e.priority, Priority::Err);
        assert!(e.fields.contains(&("PLUGTOP_ERROR", "EBUSY".into())));
        let pool = Event::Applied {
            action: Action::Pool { from: 100, to: 50 },
            cpu: None,
        };
        let e = event_entry(&pool, true, &Step::default(), &s, true);
        assert_eq!(e.priority, Priority::Notice);
        assert!(e.fields.contains(&("PLUGTOP_ACTION", "pool_down".into())));
        assert!(e.fields.contains(&("PLUGTOP_RULE", "limits".into())));
        assert!(e.fields.contains(&("PLUGTOP_CMM_PAGES_TO", "50".into())));
    }
}
