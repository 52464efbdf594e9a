//! The JSON-lines format of `../shared/conformance/README.md`: a header
//! saying how the file loaded, one line per decided interval, and a final
//! `fatal` line when cpuplugd would exit. Written by hand (no serializer) so
//! the headless path stays cheap per interval.

use std::fmt::Write as _;

use crate::engine::{CpuAction, CpuDecision, Decision, GroupStatus, MemDecision};
use crate::rules::RuleSet;

/// The first line for a file that loaded.
pub fn header(rules: &RuleSet) -> String {
    let s = rules.settings;
    format!(
        "{{\"config\":\"ok\",\"cpu_enabled\":{},\"mem_enabled\":{},\"history_depth\":{},\"update\":{},\"cpu_min\":{},\"cpu_max\":{},\"cmm_min\":{},\"cmm_max\":{}}}",
        rules.cpu_enabled,
        rules.mem_enabled,
        rules.history_depth,
        s.update,
        s.cpu_min,
        s.cpu_max,
        s.cmm_min,
        s.cmm_max
    )
}

/// The only line for a file cpuplugd refuses.
pub fn config_error(message: &str) -> String {
    format!(
        "{{\"config\":\"error\",\"message\":{}}}",
        quote(message.trim_end_matches('\n'))
    )
}

/// One decided interval (or its fatal line), appended to `out` with a newline.
pub fn decision(out: &mut String, d: &Decision) {
    if let Some(fatal) = &d.fatal {
        let _ = writeln!(
            out,
            "{{\"snapshot\":{},\"fatal\":{}}}",
            d.reading,
            quote(fatal.message.trim_end_matches('\n'))
        );
        return;
    }
    out.push_str("{\"snapshot\":");
    int(out, d.reading);
    if let Some(cpu) = &d.cpu {
        out.push_str(",\"cpu\":");
        cpu_object(out, cpu);
    }
    if let Some(mem) = &d.mem {
        out.push_str(",\"mem\":");
        mem_object(out, mem);
    }
    out.push_str("}\n");
}

fn status(s: GroupStatus) -> &'static str {
    match s {
        GroupStatus::Ok => "ok",
        GroupStatus::Fault(_) => "fpe",
        GroupStatus::Vertical => "vertical",
    }
}

fn opt_bool(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "true",
        Some(false) => "false",
        None => "null",
    }
}

fn cpu_object(out: &mut String, c: &CpuDecision) {
    let action = match c.action {
        CpuAction::Plug => "plug",
        CpuAction::Unplug => "unplug",
        CpuAction::None => "none",
    };
    for part in [
        "{\"status\":\"",
        status(c.status),
        "\",\"hotplug\":",
        opt_bool(c.hotplug),
        ",\"hotunplug\":",
        opt_bool(c.hotunplug),
        ",\"action\":\"",
        action,
        "\"}",
    ] {
        out.push_str(part);
    }
}

fn mem_object(out: &mut String, m: &MemDecision) {
    for part in [
        "{\"status\":\"",
        status(m.status),
        "\",\"memplug\":",
        opt_bool(m.memplug),
        ",\"memunplug\":",
        opt_bool(m.memunplug),
        ",\"cmm_inc\":",
    ] {
        out.push_str(part);
    }
    opt_int(out, m.cmm_inc);
    out.push_str(",\"cmm_dec\":");
    opt_int(out, m.cmm_dec);
    out.push_str(",\"cmm_pages\":");
    int(out, m.cmm_pages);
    out.push_str(",\"cmm_pages_new\":");
    int(out, m.cmm_pages_new);
    out.push('}');
}

/// An integer, without the formatting machinery (a line per interval).
fn int(out: &mut String, v: impl itoa::Integer) {
    out.push_str(itoa::Buffer::new().format(v));
}

fn opt_int(out: &mut String, v: Option<i64>) {
    match v {
        Some(v) => int(out, v),
        None => out.push_str("null"),
    }
}

/// A JSON string literal, C1 controls and bidi marks escaped too
/// ([`super::terminal_safe_json`]).
pub fn quote(s: &str) -> String {
    let quoted = serde_json::Value::String(s.to_string()).to_string();
    super::terminal_safe_json(&quoted).into_owned()
}
