//! Completion: after `meminfo.` or `vmstat.` the names the kernel under
//! the root has (as `check` knows them, merged names included), after
//! `cpustat.` cpuplugd's fields; in a name, the settings and rules; in a
//! value, the keywords, the prefixes and the file's variables.

use lsp_types::{CompletionItem, CompletionItemKind};

use super::hover::setting_doc;
use super::names::{lines, occurrences};
use crate::kernel::SystemFacts;
use crate::rules::expr::{CpuStat, FILE_NAMES, Keyword};

fn item(label: &str, kind: CompletionItemKind, detail: &str) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail: (!detail.is_empty()).then(|| detail.to_string()),
        ..CompletionItem::default()
    }
}

/// The name (letters, digits, `_` and `.`) that `before` ends with. Found
/// from its end rather than by the byte after the last other character,
/// which is inside that character when it is not ASCII (`vmstat.é` took
/// the server down).
fn word_before(before: &str) -> &str {
    let rest = before.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    &before[rest.len()..]
}

/// Field names after a `prefix.` typed just before the cursor.
fn fields(before: &str, facts: &SystemFacts) -> Option<Vec<CompletionItem>> {
    let (prefix, _) = word_before(before).split_once('.')?;
    let names: Vec<String> = match prefix {
        "meminfo" => facts.meminfo_names.clone().unwrap_or_default(),
        "vmstat" => facts.vmstat_names.clone().unwrap_or_default(),
        "cpustat" => CpuStat::ALL.iter().map(|f| f.name().to_string()).collect(),
        _ => return None,
    };
    let detail = format!("{prefix} field");
    Some(
        names
            .iter()
            .filter(|n| nameable_field(n))
            .map(|n| item(n, CompletionItemKind::FIELD, &detail))
            .collect(),
    )
}

/// Whether cpuplugd can name field `name` after `meminfo.` or `vmstat.`:
/// it reads letters and `_` there, and a digit or anything else ends the
/// name. The kernel's `DirectMap4k`, `Active(anon)` or `pgscan_direct_dma32`
/// offered as completions made rules cpuplugd refuses, and a name with
/// control bytes from the root's files would reach the editor's screen.
fn nameable_field(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_')
}

/// Whether a rule can name user variable `name` (letters, digits and `_`,
/// not first a digit): an indented `# x=` or a name with other bytes
/// defines a variable no rule can use.
fn nameable_variable(name: &str) -> bool {
    name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// History indexes offered after `prefix.field[` (or `time[`): the first
/// few and cpuplugd's last (it keeps 100 intervals).
const INDEXES: [u32; 6] = [0, 1, 2, 3, 4, crate::rules::config::MAX_HISTORY];

/// History indexes after a reading's `[` typed just before the cursor.
fn indexes(before: &str) -> Option<Vec<CompletionItem>> {
    let open = before.rfind('[')?;
    let (reading, typed) = (&before[..open], &before[open + 1..]);
    if !typed.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let name = word_before(reading);
    if !(name.contains('.') || name == "time") {
        return None;
    }
    Some(
        INDEXES
            .iter()
            .map(|&n| {
                let detail = match n {
                    0 => "this interval's reading".to_string(),
                    1 => "one interval ago (history depth 1)".to_string(),
                    n => format!("{n} intervals ago (history depth {n})"),
                };
                item(&n.to_string(), CompletionItemKind::VALUE, &detail)
            })
            .collect(),
    )
}

/// The completions at byte `offset` of `text`.
pub fn complete(text: &str, offset: usize, facts: &SystemFacts) -> Vec<CompletionItem> {
    let offset = offset.min(text.len());
    let offset = (0..=offset)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    if super::names::in_comment(text, offset) {
        return Vec::new();
    }
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..offset];
    if let Some(items) = indexes(before).or_else(|| fields(before, facts)) {
        return items;
    }
    let in_value = lines(&text[line_start..])
        .next()
        .and_then(|l| l.value)
        .is_some_and(|(s, e)| line_start + s <= offset && offset <= line_start + e)
        || before.contains('"');
    if !in_value {
        return FILE_NAMES
            .iter()
            .map(|p| item(p, CompletionItemKind::PROPERTY, &setting_doc(p)))
            .collect();
    }
    let mut items: Vec<CompletionItem> = Keyword::ALL
        .iter()
        .map(|k| item(k.name(), CompletionItemKind::KEYWORD, ""))
        .collect();
    for p in ["meminfo.", "vmstat.", "cpustat.", "time"] {
        items.push(item(p, CompletionItemKind::MODULE, ""));
    }
    let mut seen = std::collections::HashSet::new();
    for o in occurrences(text)
        .into_iter()
        .filter(|o| o.definition && nameable_variable(&o.name))
    {
        if seen.insert(o.name.clone()) {
            items.push(item(&o.name, CompletionItemKind::VARIABLE, "user variable"));
        }
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_beyond_ascii_before_the_cursor_is_no_panic() {
        let facts = SystemFacts::any_machine(4, "test");
        for text in [
            "HOTPLUG=\"vmstat.é",
            "HOTPLUG=\"é[",
            "x=\"😀meminfo.",
            "é",
            "HOTPLUG=\"time[é",
        ] {
            for at in 0..=text.len() {
                let _ = complete(text, at, &facts);
            }
        }
        let text = "HOTPLUG=\"é+cpustat.";
        assert!(!complete(text, text.len(), &facts).is_empty());
        let text = "HOTPLUG=\"é+time[";
        assert_eq!(complete(text, text.len(), &facts).len(), INDEXES.len());
    }

    #[test]
    fn only_names_cpuplugd_can_read_are_offered() {
        let mut facts = SystemFacts::any_machine(4, "test");
        facts.meminfo_names = Some(
            [
                "MemFree",
                "Active(anon)",
                "DirectMap4k",
                "Evil\u{1b}[31m",
                "Über",
                "Huge_Pages",
            ]
            .map(String::from)
            .to_vec(),
        );
        facts.vmstat_names = Some(
            ["pgscan_kswapd", "pgscan_direct_dma32", "nr_\u{7}"]
                .map(String::from)
                .to_vec(),
        );
        let labels = |text: &str| -> Vec<String> {
            complete(text, text.len(), &facts)
                .into_iter()
                .map(|i| i.label)
                .collect()
        };
        assert_eq!(labels("HOTPLUG=\"meminfo."), ["MemFree", "Huge_Pages"]);
        assert_eq!(labels("HOTPLUG=\"vmstat."), ["pgscan_kswapd"]);
        let text = "a_1=\"1\"\n  # b=\"2\"\nc-d=\"3\"\nHOTPLUG=\"";
        let got = labels(text);
        assert!(got.contains(&"a_1".to_string()), "{got:?}");
        assert!(
            !got.iter().any(|l| l.contains('#') || l == "c-d"),
            "{got:?}"
        );
    }

    #[test]
    fn after_a_readings_bracket_the_history_indexes_are_offered() {
        let facts = SystemFacts::any_machine(4, "test");
        let text = "HOTPLUG=\"cpustat.idle[";
        let got = complete(text, text.len(), &facts);
        let labels: Vec<&str> = got.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["0", "1", "2", "3", "4", "100"]);
        let text = "HOTPLUG=\"time[1";
        assert_eq!(complete(text, text.len(), &facts).len(), INDEXES.len());
        // A bracket after anything else is no history index.
        let text = "HOTPLUG=\"idle[";
        assert!(
            complete(text, text.len(), &facts)
                .iter()
                .all(|i| i.label != "100")
        );
    }
}
