//! What one step says, for every front end: `plugtop run`'s log, the
//! screen's log panel and the simulator's log are all [`step_lines`], so
//! they cannot drift apart. Each line is an entry with the text cpuplugd
//! would print, at a priority (actions notice, faults warning,
//! failures err) and with fields a site filters on in the journal —
//! `PLUGTOP_ACTION`, `PLUGTOP_RULE`, `PLUGTOP_VALUES`, `PLUGTOP_MODE`,
//! `PLUGTOP_READING`, and for faults `PLUGTOP_FAULT` and `PLUGTOP_GROUP`.

use crate::control::controller::{Action, Event};
use crate::control::session::{MessageLevel, Notice, Session, Step, event_severity};
use crate::control::watch::Finding;
use crate::logging::{Entry, MessageId, Priority, message_id};

/// What a line is about: the screen colours by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// What observe mode would do.
    Decision,
    /// A change to the guest, or a proposal and its answer.
    Action,
    /// A failure, a fault, flapping, a stop.
    Problem,
    /// Everything else: polarization, limits, known patterns.
    Note,
}

/// One line of a step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepLine {
    pub kind: LineKind,
    pub entry: Entry,
}

/// How much a front end says of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// `plugtop run` without `-V`, as cpuplugd without it: no limits
    /// reached, negative increments or "no CPU left", and no change of the
    /// CMM pool the rules make (one nearly every interval while a pool
    /// settles; the start limits' correction is still said).
    Quiet,
    /// Every change to the guest, but not cpuplugd's verbose-only messages
    /// (the simulator's log).
    Changes,
    /// Everything, as cpuplugd's `-V` (the screen, `plugtop run -V`).
    Verbose,
}

/// Everything `step` says, in order: the skip and notices, the start
/// limits' events, the interval's events, the findings (flapping with the
/// two changes behind it), new known patterns, and cpuplugd's stop.
/// As much as `detail` says; fields only `with_fields`.
pub fn step_lines(
    step: &Step,
    session: &Session,
    detail: Detail,
    with_fields: bool,
) -> Vec<StepLine> {
    let Step {
        skipped,
        limits,
        notices,
        decision: _,
        findings,
        hints,
        events,
        fatal,
    } = step;
    // Most intervals have nothing to say.
    if skipped.is_none()
        && limits.is_empty()
        && notices.is_empty()
        && findings.is_empty()
        && hints.is_empty()
        && events.is_empty()
        && fatal.is_none()
    {
        return Vec::new();
    }
    let verbose = detail == Detail::Verbose;
    let verbose_only = |n: &Notice| matches!(n, Notice::LimitReached(_) | Notice::Negative { .. });
    let say = Say {
        mode: with_fields.then(|| session.controller().mode().key().to_string()),
    };
    let mut out = Vec::new();
    if let Some(skipped) = step.skipped {
        out.push(say.line(
            LineKind::Problem,
            MessageLevel::Warning,
            skipped.to_string(),
        ));
    }
    for n in step.notices.iter().filter(|n| verbose || !verbose_only(n)) {
        out.push(match n {
            Notice::Fault { group, fault } => say.with_fields(
                LineKind::Problem,
                MessageLevel::Warning,
                n.to_string(),
                vec![
                    ("MESSAGE_ID", message_id::FAULT.as_str().to_string()),
                    ("PLUGTOP_GROUP", (*group).to_string()),
                    ("PLUGTOP_FAULT", fault.clone()),
                ],
            ),
            _ => say.line(LineKind::Note, MessageLevel::Info, n.to_string()),
        });
    }
    out.extend(event_lines(step, session, detail, with_fields));
    for f in step
        .findings
        .iter()
        .filter(|f| !matches!(f, Finding::Changed(_)))
    {
        out.extend(finding_lines(f, session, &say, with_fields));
    }
    for h in &step.hints {
        out.push(say.line(LineKind::Note, MessageLevel::Info, h.to_string()));
    }
    if let Some(f) = &step.fatal {
        let text = format!("{}; cpuplugd would exit here", f.message);
        out.push(say.with_fields(
            LineKind::Problem,
            MessageLevel::Error,
            text,
            vec![("MESSAGE_ID", message_id::FATAL.as_str().to_string())],
        ));
    }
    out
}

/// A finding of the incident watch. Flapping comes with the two changes
/// behind it: for a sink with fields, one entry whose `PLUGTOP_CHANGE`
/// fields are those changes (a journal entry per event); for the others,
/// indented lines after the warning, at its priority.
fn finding_lines(f: &Finding, session: &Session, say: &Say, with_fields: bool) -> Vec<StepLine> {
    let changes: Vec<String> = if matches!(f, Finding::FlapStarted(_)) {
        let recent = session.watch().changes.iter().rev().take(2).rev();
        recent.map(ToString::to_string).collect()
    } else {
        Vec::new()
    };
    if with_fields {
        let mut more = Vec::new();
        if matches!(f, Finding::FlapStarted(_)) {
            more.push(("MESSAGE_ID", message_id::FLAPPING.as_str().to_string()));
        }
        more.extend(changes.into_iter().map(|c| ("PLUGTOP_CHANGE", c)));
        let text = f.to_string();
        return vec![say.with_fields(LineKind::Problem, MessageLevel::Warning, text, more)];
    }
    let warning = say.line(LineKind::Problem, MessageLevel::Warning, f.to_string());
    let details = changes.into_iter().map(|c| StepLine {
        kind: LineKind::Problem,
        entry: Entry::new(Priority::Warning, format!("  {c}")),
    });
    std::iter::once(warning).chain(details).collect()
}

/// The controller's events of a step, the start limits' first.
fn event_lines(step: &Step, session: &Session, detail: Detail, with_fields: bool) -> Vec<StepLine> {
    let events = step
        .limits
        .iter()
        .map(|e| (e, true))
        .chain(step.events.iter().map(|e| (e, false)));
    let mut out = Vec::new();
    for (e, by_limits) in events {
        let nothing_left = matches!(
            e,
            Event::Failed {
                nothing_left: true,
                ..
            }
        );
        let routine_pool = !by_limits
            && matches!(
                e,
                Event::Applied {
                    action: Action::Pool { .. },
                    ..
                }
            );
        if (nothing_left && detail != Detail::Verbose) || (routine_pool && detail == Detail::Quiet)
        {
            continue;
        }
        let kind = match e {
            Event::Failed { .. } | Event::CpuWriteFailed(_) => LineKind::Problem,
            Event::Would { .. } => LineKind::Decision,
            _ => LineKind::Action,
        };
        out.push(StepLine {
            kind,
            entry: event_entry(e, by_limits, step, session, with_fields),
        });
    }
    out
}

/// Makes message lines: a warning's text says so, and fields (the mode
/// first) only for a sink that keeps them.
struct Say {
    mode: Option<String>,
}

impl Say {
    fn line(&self, kind: LineKind, severity: MessageLevel, text: String) -> StepLine {
        self.with_fields(kind, severity, text, Vec::new())
    }

    fn with_fields(
        &self,
        kind: LineKind,
        severity: MessageLevel,
        text: String,
        more: Vec<(&'static str, String)>,
    ) -> StepLine {
        let fields = match &self.mode {
            Some(mode) => std::iter::once(("PLUGTOP_MODE", mode.clone()))
                .chain(more)
                .collect(),
            None => Vec::new(),
        };
        let message = match severity {
            MessageLevel::Warning => format!("warning: {text}"),
            MessageLevel::Info | MessageLevel::Error => text,
        };
        StepLine {
            kind,
            entry: Entry {
                priority: severity.into(),
                message,
                fields,
            },
        }
    }
}

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
        other => (event_severity(other).into(), None),
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

/// The `MESSAGE_ID` of a change to the guest, made, failed or (observe
/// mode) decided; none for the proposals of step mode.
fn event_id(e: &Event) -> Option<MessageId> {
    Some(match e {
        Event::Applied { action, .. } => match action {
            Action::PlugCpu => message_id::PLUGGED,
            Action::UnplugCpu => message_id::UNPLUGGED,
            Action::Pool { .. } => message_id::POOL_CHANGED,
        },
        Event::Would { .. } => message_id::DECIDED,
        Event::Failed { .. } | Event::CpuWriteFailed(_) => message_id::ACTION_FAILED,
        _ => return None,
    })
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
    if let Some(id) = event_id(e) {
        fields.push(("MESSAGE_ID", id.as_str().to_string()));
    }
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
        let lines = step_lines(&step, &session(Mode::Auto), Detail::Verbose, true);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0].kind, LineKind::Problem);
        let e = &lines[0].entry;
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
    fn both_groups_skipped_by_one_fault_say_one_line_the_same_every_interval() {
        use crate::kernel::{CpuTicks, Sample, Stamp};
        // Nothing moves between readings: both groups divide 0 ticks by 0.
        let facts = SystemFacts::any_machine(4, "test");
        let file = SourceFile::new(
            "t.conf",
            b"UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"100\"\nrate=\"(cpustat.idle[0] - cpustat.idle[1]) / (cpustat.total_ticks[0] - cpustat.total_ticks[1])\"\nHOTPLUG=\"rate < 0.1\"\nHOTUNPLUG=\"0\"\nCMM_INC=\"1\"\nMEMPLUG=\"rate > 2\"\nMEMUNPLUG=\"0\"\n"
                .to_vec(),
        );
        let outcome = load(&file, &facts);
        assert!(outcome.refusal.is_none(), "{:?}", outcome.refusal);
        let mut s = Session::new(
            Arc::new(outcome.rules),
            file,
            Mode::Observe,
            FlapConfig::default(),
        );
        let mut actuator = crate::kernel::actuator::NoWrites::default();
        let mut said = Vec::new();
        for t in 1..6 {
            let stamp = Stamp::new(t, 0);
            let sample = Sample::with_memory(stamp, CpuTicks::default(), (2, 4), (0.0, 0.0), 10);
            let step = s.step(Arc::new(sample), &mut actuator);
            let problems: Vec<String> = step_lines(&step, &s, Detail::Changes, false)
                .into_iter()
                .filter(|l| l.kind == LineKind::Problem)
                .map(|l| l.entry.message)
                .collect();
            if step.decision.is_some() {
                assert_eq!(problems.len(), 1, "one line for both groups: {problems:?}");
                said.extend(problems);
            }
        }
        assert!(said.len() >= 3, "{said:?}");
        assert!(said.iter().all(|l| l == &said[0]), "{said:?}");
        assert_eq!(
            said[0],
            "warning: CPU and memory rules skipped this interval: division by zero: no ticks elapsed"
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
