//! The numbers in a rule file a person would tune (`plugtop tune`'s
//! knobs): the thresholds the rules compare against, the divisors of
//! CMM_INC and CMM_DEC, CPU_MIN, CPU_MAX and UPDATE. Each is found where it
//! is written (line and column), with a sensible range, and a tuned file
//! changes those numbers only, keeping the user's comments and layout.

use std::collections::HashSet;

use crate::rules::expr::{BinOp, Keyword, NodeKind};
use crate::rules::{NodeId, RuleKind, RuleSet, Setting, SourceFile, Span};

/// What a knob is, for people and for its default range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnobKind {
    /// A number a rule compares against (`pgscanrate > 20`).
    Threshold,
    /// A number compared with a CPU share (`idle > 50`): 0 to 100 per CPU.
    Percent,
    /// A number added to or taken from what is compared (`x + 0.75`): it
    /// may cross zero.
    Offset,
    /// An offset to a count of CPUs (`onumcpus + 0.75`, `loadavg - 1`):
    /// searched over as many CPUs as the guest has either way, which spans
    /// a condition that always holds to one that never does.
    CpuOffset,
    /// The divisor of CMM_INC or CMM_DEC (`meminfo.MemFree / 40`).
    Divisor,
    /// CPU_MIN, CPU_MAX or UPDATE.
    Limit(Setting),
}

/// One tunable number of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Knob {
    pub kind: KnobKind,
    /// The bytes of the file the number is written in.
    pub span: Span,
    /// 1-based line and character column of the number.
    pub line: usize,
    pub column: usize,
    pub value: f64,
    /// The rule or variable whose text holds it.
    pub owner: String,
    /// Written without a fraction, and tuned in whole numbers.
    pub integer: bool,
    /// The range searched by default.
    pub range: (f64, f64),
    /// Where the `+` or `-` before the number is, when it is the right
    /// side of one: a negative value is written by turning it around
    /// (`onumcpus - 2`, not `onumcpus + -2`).
    pub operator: Option<u32>,
}

impl Knob {
    /// A short name: `HOTPLUG 0.08 (30:38)`, `CPU_MAX`.
    pub fn name(&self) -> String {
        match self.kind {
            KnobKind::Limit(setting) => setting.file_name().to_string(),
            _ => format!(
                "{} {} ({}:{})",
                self.owner,
                self.text(self.value),
                self.line,
                self.column
            ),
        }
    }

    /// `value` as it would be written in the file.
    pub fn text(&self, value: f64) -> String {
        if self.integer {
            format!("{}", value.round() as i64)
        } else {
            // Four significant decimals are as fine as any rule needs.
            let t = format!("{value:.4}");
            let t = t.trim_end_matches('0');
            t.strip_suffix('.').unwrap_or(t).to_string()
        }
    }
}

/// Every knob of the loaded file, in file order, each number once (a
/// variable named by several rules is one knob).
pub fn find(rules: &RuleSet, file: &SourceFile) -> Vec<Knob> {
    let mut seen = HashSet::new();
    let mut knobs = Vec::new();
    for kind in RuleKind::ALL {
        let Some(rule) = rules.rule(kind) else {
            continue;
        };
        let memory_amount = matches!(kind, RuleKind::CmmInc | RuleKind::CmmDec);
        for id in rule.nodes.clone() {
            for (node, what, gap) in knob_nodes(rules, id, memory_amount) {
                let span = rules.node(node).span;
                if !seen.insert((span.start, span.end)) {
                    continue;
                }
                if let NodeKind::Const(value) = rules.node(node).kind
                    && value != 0.0
                    && value.is_finite()
                {
                    let mut knob = number_knob(rules, file, kind, span, value, what);
                    knob.operator = gap.and_then(|(from, to)| {
                        let between = file.bytes().get(from as usize..to as usize)?;
                        let at = between.iter().position(|b| matches!(b, b'+' | b'-'))?;
                        Some(from + at as u32)
                    });
                    knobs.push(knob);
                }
            }
        }
    }
    knobs.extend(limit_knobs(rules, file));
    knobs.sort_by_key(|k| k.span.start);
    // The file as written is always within its knobs' default ranges (an
    // UPDATE of 20 is searched over 1..20): only a range the user narrows
    // may leave the start outside.
    for k in &mut knobs {
        k.range = (k.range.0.min(k.value), k.range.1.max(k.value));
    }
    knobs
}

/// Whether each of `values` lies within its knob's range: every candidate
/// of a search does; the start (the file as written) may not when
/// `--knob` narrowed or pinned a knob away from it, and then it never
/// enters the front or the recommendation.
pub fn within_ranges(knobs: &[Knob], values: &[f64]) -> bool {
    knobs.len() == values.len()
        && knobs
            .iter()
            .zip(values)
            .all(|(k, v)| k.range.0 <= *v && *v <= k.range.1)
}

/// The constants node `id` makes a knob of: both sides of a comparison
/// (a constant, or one added to, taken from or multiplying something that
/// is not), and the divisor of a memory amount. A right side of `+` or `-`
/// comes with the bytes between the sides (where the operator is).
type Gap = Option<(u32, u32)>;

fn knob_nodes(rules: &RuleSet, id: NodeId, memory_amount: bool) -> Vec<(NodeId, KnobKind, Gap)> {
    let constant = |n: NodeId| matches!(rules.node(n).kind, NodeKind::Const(_));
    let mut out = Vec::new();
    let percent = |n: NodeId| {
        matches!(
            rules.node(n).kind,
            NodeKind::Keyword(
                Keyword::User
                    | Keyword::Nice
                    | Keyword::System
                    | Keyword::Idle
                    | Keyword::Iowait
                    | Keyword::Irq
                    | Keyword::Softirq
                    | Keyword::Steal
                    | Keyword::Guest
                    | Keyword::GuestNice
            )
        )
    };
    let cpu_count = |n: NodeId| {
        matches!(
            rules.node(n).kind,
            NodeKind::Keyword(Keyword::Onumcpus | Keyword::Loadavg | Keyword::RunnableProc)
        )
    };
    match rules.node(id).kind {
        NodeKind::Binary(BinOp::Greater | BinOp::Less, l, r) => {
            for (side, other_side) in [(l, r), (r, l)] {
                match rules.node(side).kind {
                    NodeKind::Const(_) if percent(other_side) => {
                        out.push((side, KnobKind::Percent, None));
                    }
                    NodeKind::Const(_) => out.push((side, KnobKind::Threshold, None)),
                    NodeKind::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => {
                        for (x, other) in [(a, b), (b, a)] {
                            if constant(x) && !constant(other) {
                                let kind = match op {
                                    BinOp::Mul => KnobKind::Threshold,
                                    _ if cpu_count(other) => KnobKind::CpuOffset,
                                    _ => KnobKind::Offset,
                                };
                                let gap = (x == b && op != BinOp::Mul)
                                    .then(|| (rules.node(a).span.end, rules.node(b).span.start));
                                out.push((x, kind, gap));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        NodeKind::Binary(BinOp::Div, a, b) if memory_amount && constant(b) && !constant(a) => {
            out.push((b, KnobKind::Divisor, None));
        }
        _ => {}
    }
    out
}

/// How many times smaller or bigger than the file's value a threshold or
/// divisor is searched: 8 for most, 100 for a memory rule's threshold.
/// Page-scan rates (`pgscanrate > 20`) differ by orders of magnitude with
/// the guest's size and kernel: the paper's files hold 20 where a guest of
/// 3 GiB needs several hundred before kswapd's background scanning stops
/// shrinking it.
fn spread(kind: KnobKind, rule: RuleKind) -> f64 {
    match (kind, rule) {
        (KnobKind::Threshold, RuleKind::Memplug | RuleKind::Memunplug) => 100.0,
        _ => 8.0,
    }
}

fn number_knob(
    rules: &RuleSet,
    file: &SourceFile,
    rule: RuleKind,
    span: Span,
    value: f64,
    kind: KnobKind,
) -> Knob {
    let at = file.position(span.start as usize);
    // The owner is the variable whose text holds the number, else the rule.
    let owner = rules
        .variables
        .iter()
        .find(|v| v.value_span.start <= span.start && span.end <= v.value_span.end)
        .map_or_else(|| rule.file_name().to_string(), |v| v.name.clone());
    let written = file.snippet(span);
    let integer = !written.contains(['.', 'e', 'E']) && value.fract() == 0.0;
    let present = rules.settings.cpu_max.max(rules.settings.cpu_min).max(1) as f64;
    let range = match kind {
        KnobKind::Percent => (0.0, 100.0 * present),
        KnobKind::Offset => {
            let reach = 2.0 * value.abs().max(0.5);
            (value - reach, value + reach)
        }
        KnobKind::CpuOffset => {
            let reach = present.max(2.0 * value.abs());
            (value - reach, value + reach)
        }
        _ if value > 0.0 => {
            let spread = spread(kind, rule);
            let low = if integer {
                (value / spread).floor().max(1.0)
            } else {
                value / spread
            };
            (low, value * spread)
        }
        _ => {
            let spread = spread(kind, rule);
            (value * spread, value / spread)
        }
    };
    Knob {
        kind,
        span,
        line: at.line,
        column: at.column,
        value,
        owner,
        integer,
        range,
        operator: None,
    }
}

/// UPDATE, CPU_MIN and CPU_MAX where the file sets them (the CPU limits
/// only while the CPU group runs).
fn limit_knobs(rules: &RuleSet, file: &SourceFile) -> Vec<Knob> {
    let s = &rules.settings;
    let present = s.cpu_max.max(s.cpu_min).max(1) as f64;
    let mut out = Vec::new();
    for (setting, range, wanted) in [
        (Setting::Update, (1.0, 10.0), true),
        (Setting::CpuMin, (1.0, present), rules.cpu_enabled),
        (Setting::CpuMax, (1.0, present), rules.cpu_enabled),
    ] {
        let Some(name_span) = rules.setting_spans[setting.index()].filter(|_| wanted) else {
            continue;
        };
        let Some(span) = digits_after_equals(file, name_span) else {
            continue;
        };
        let at = file.position(span.start as usize);
        let written: f64 = file.snippet(span).parse().unwrap_or(0.0);
        // CPU_MAX="0" means every CPU present: its value is that count.
        let value = if setting == Setting::CpuMax && written == 0.0 {
            present
        } else {
            written
        };
        out.push(Knob {
            kind: KnobKind::Limit(setting),
            span,
            line: at.line,
            column: at.column,
            value,
            owner: setting.file_name().to_string(),
            integer: true,
            range,
            operator: None,
        });
    }
    out
}

/// The span of the digits of a setting's value, on the line of `name`.
fn digits_after_equals(file: &SourceFile, name: Span) -> Option<Span> {
    let line = file.line_of(name.start as usize);
    let start = file.line_start(line);
    let bytes = file.line_bytes(line);
    let eq = bytes.iter().position(|b| *b == b'=')?;
    let first = eq + bytes[eq..].iter().position(u8::is_ascii_digit)?;
    let len = bytes[first..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    Some(Span {
        start: (start + first) as u32,
        end: (start + first + len) as u32,
    })
}

/// The file with each knob's number replaced by its new value, and nothing
/// else changed: comments, spacing and order stay the user's.
pub fn rewrite(file: &SourceFile, changes: &[(&Knob, f64)]) -> Vec<u8> {
    let mut sorted: Vec<&(&Knob, f64)> = changes.iter().collect();
    sorted.sort_by_key(|(k, _)| k.span.start);
    let bytes = file.bytes();
    let mut out = Vec::with_capacity(bytes.len() + 16 * changes.len());
    let mut at = 0usize;
    for (knob, value) in sorted {
        let (start, end) = (knob.span.start as usize, knob.span.end as usize);
        // An unchanged number stays as written (`CPU_MAX="0"` is not
        // rewritten as the CPUs it stands for, `10.0` not as `10`).
        if start < at || end > bytes.len() || *value == knob.value {
            continue;
        }
        match knob.operator.map(|o| o as usize) {
            // `x + -2` is written `x - 2` (and `x - -2` as `x + 2`): the
            // same number to cpuplugd, as a person would write it.
            Some(op) if *value < 0.0 && at <= op && op < start => {
                out.extend_from_slice(&bytes[at..op]);
                out.push(if bytes[op] == b'+' { b'-' } else { b'+' });
                out.extend_from_slice(&bytes[op + 1..start]);
                out.extend_from_slice(knob.text(-*value).as_bytes());
            }
            _ => {
                out.extend_from_slice(&bytes[at..start]);
                out.extend_from_slice(knob.text(*value).as_bytes());
            }
        }
        at = end;
    }
    out.extend_from_slice(&bytes[at..]);
    out
}

/// The knobs a tune with `objective` searches: for memory, only those no
/// CPU rule reads (the numbers of MEMPLUG, MEMUNPLUG, CMM_INC and CMM_DEC
/// and of the variables only they read), so a memory tune leaves the CPU
/// rules, CPU_MIN, CPU_MAX and UPDATE (which paces the CPU rules too) as
/// the user wrote them; for CPUs (and steadiness) the others, so a CPU
/// tune leaves the memory rules alone. A knob in `named` (a `--knob` NAME:
/// its owner, or its `LINE:COL`) is searched whatever it is.
pub fn for_objective(
    knobs: Vec<Knob>,
    rules: &RuleSet,
    objective: crate::tune::score::Objective,
    named: &[&str],
) -> Vec<Knob> {
    let is_named = |k: &Knob| {
        let position = format!("{}:{}", k.line, k.column);
        named.iter().any(|n| *n == k.owner || *n == position)
    };
    let memory = objective == crate::tune::score::Objective::Memory;
    knobs
        .into_iter()
        .filter(|k| is_named(k) || memory_only(k, rules) == memory)
        .collect()
}

/// Whether only memory rules read knob `k`: a threshold or divisor that
/// no CPU rule's nodes hold (a limit is never a memory knob).
fn memory_only(k: &Knob, rules: &RuleSet) -> bool {
    if matches!(k.kind, KnobKind::Limit(_)) {
        return false;
    }
    let reads = |kind: RuleKind| {
        rules
            .rule(kind)
            .is_some_and(|rule| rule.nodes.clone().any(|id| rules.node(id).span == k.span))
    };
    let cpu = [RuleKind::Hotplug, RuleKind::Hotunplug];
    let memory = [
        RuleKind::Memplug,
        RuleKind::Memunplug,
        RuleKind::CmmInc,
        RuleKind::CmmDec,
    ];
    !cpu.into_iter().any(reads) && memory.into_iter().any(reads)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{SystemFacts, load};

    fn loaded(path: &str) -> (RuleSet, SourceFile) {
        let facts = SystemFacts::any_machine(4, "test");
        let bytes = std::fs::read(path).unwrap_or_default();
        let file = SourceFile::new(path, bytes);
        let outcome = load(&file, &facts);
        assert!(outcome.refusal.is_none(), "{:?}", outcome.refusal);
        (outcome.rules, file)
    }

    fn names(knobs: &[Knob]) -> Vec<String> {
        knobs.iter().map(Knob::name).collect()
    }

    #[test]
    fn the_papers_loadavg_rules_have_four_thresholds_and_three_limits() {
        let (rules, file) = loaded("examples/rules/cpu-loadavg.conf");
        let knobs = find(&rules, &file);
        assert_eq!(
            names(&knobs),
            [
                "UPDATE",
                "CPU_MIN",
                "CPU_MAX",
                "HOTPLUG 0.75 (4:32)",
                "HOTPLUG 10 (4:48)",
                "HOTUNPLUG 0.25 (5:34)",
                "HOTUNPLUG 50 (5:50)",
            ]
        );
        let ten = &knobs[4];
        assert!(!ten.integer, "10.0 is written with a fraction");
        assert_eq!(ten.range, (0.0, 400.0), "idle is 0 to 100 per CPU");
        assert_eq!(knobs[3].kind, KnobKind::CpuOffset);
        assert_eq!(
            knobs[3].range,
            (0.75 - 4.0, 0.75 + 4.0),
            "an offset to a count of CPUs spans the CPUs present either way"
        );
        let cpu_max = &knobs[2];
        assert_eq!(cpu_max.value, 4.0, "CPU_MAX=\"0\" is every CPU present");
    }

    #[test]
    fn a_memory_rules_threshold_spans_a_hundredfold_and_a_cpu_rules_eightfold() {
        let (rules, file) = loaded("examples/rules/recommended-modern.conf");
        let knobs = find(&rules, &file);
        let plug = knobs.iter().find(|k| k.owner == "MEMPLUG");
        assert_eq!(plug.map(|k| k.range), Some((1.0, 2000.0)), "{knobs:?}");
        let cpu = knobs
            .iter()
            .find(|k| k.name().starts_with("HOTUNPLUG 1.15"));
        assert_eq!(cpu.map(|k| k.range), Some((1.15 / 8.0, 1.15 * 8.0)));
    }

    #[test]
    fn thresholds_in_variables_are_named_by_the_variable_and_found_once() {
        let (rules, file) = loaded("examples/rules/recommended-modern.conf");
        let knobs = find(&rules, &file);
        let names = names(&knobs);
        assert!(
            names.iter().any(|n| n.starts_with("HOTPLUG 0.08")),
            "{names:?}"
        );
        assert!(
            names.iter().any(|n| n.starts_with("HOTUNPLUG 1.15")),
            "{names:?}"
        );
        assert!(
            names.iter().any(|n| n.starts_with("MEMPLUG 20")),
            "{names:?}"
        );
        assert!(
            names.iter().any(|n| n.starts_with("CMM_INC 40")),
            "{names:?}"
        );
        assert!(
            names.iter().any(|n| n.starts_with("CMM_DEC 40")),
            "{names:?}"
        );
        // `(1 - CP_ActiveAVG)` and the averages' `/ 2` are not thresholds.
        assert!(
            !names
                .iter()
                .any(|n| n.contains(" 1 (") || n.contains(" 2 (")),
            "{names:?}"
        );
        let unique: HashSet<_> = knobs.iter().map(|k| k.span.start).collect();
        assert_eq!(unique.len(), knobs.len());
    }

    #[test]
    fn a_rewrite_changes_the_numbers_only_and_still_loads() {
        let (rules, file) = loaded("examples/rules/cpu-loadavg.conf");
        let knobs = find(&rules, &file);
        // CPU_MAX="0" (all present, 4) and idle < 10.0 kept as they are.
        let unchanged: Vec<(&Knob, f64)> = knobs.iter().map(|k| (k, k.value)).collect();
        assert_eq!(rewrite(&file, &unchanged), file.bytes());
        let changes: Vec<(&Knob, f64)> =
            vec![(&knobs[3], 1.125), (&knobs[4], 12.5), (&knobs[2], 3.0)];
        let out = String::from_utf8(rewrite(&file, &changes)).unwrap_or_default();
        let original = String::from_utf8_lossy(file.bytes()).into_owned();
        let expected = original
            .replace("onumcpus + 0.75", "onumcpus + 1.125")
            .replace("idle < 10.0", "idle < 12.5")
            .replace("CPU_MAX=\"0\"", "CPU_MAX=\"3\"");
        assert_eq!(out, expected);
        let (tuned, _) = {
            let facts = SystemFacts::any_machine(4, "test");
            let f = SourceFile::new("tuned", out.into_bytes());
            let o = load(&f, &facts);
            assert!(o.refusal.is_none(), "{:?}", o.refusal);
            (o.rules, f)
        };
        assert_eq!(tuned.settings.cpu_max, 3);
    }

    #[test]
    fn a_negative_offset_turns_its_operator_around() {
        let (rules, file) = loaded("examples/rules/cpu-loadavg.conf");
        let knobs = find(&rules, &file);
        assert!(knobs[3].operator.is_some() && knobs[5].operator.is_some());
        assert_eq!(knobs[4].operator, None, "a threshold has none");
        let changes: Vec<(&Knob, f64)> = vec![(&knobs[3], -2.0159), (&knobs[5], -1.5)];
        let out = String::from_utf8(rewrite(&file, &changes)).unwrap_or_default();
        let original = String::from_utf8_lossy(file.bytes()).into_owned();
        let expected = original
            .replace("onumcpus + 0.75", "onumcpus - 2.0159")
            .replace("onumcpus - 0.25", "onumcpus + 1.5");
        assert_eq!(out, expected);
        let facts = SystemFacts::any_machine(4, "test");
        let o = load(&SourceFile::new("tuned", out.into_bytes()), &facts);
        assert!(o.refusal.is_none(), "{:?}", o.refusal);
    }

    #[test]
    fn numbers_are_written_as_a_person_would() {
        let (rules, file) = loaded("examples/rules/cpu-loadavg.conf");
        let knobs = find(&rules, &file);
        let update = &knobs[0];
        assert_eq!(update.text(2.6), "3");
        let fraction = &knobs[3];
        assert_eq!(fraction.text(0.5), "0.5");
        assert_eq!(fraction.text(1.0), "1");
        assert_eq!(fraction.text(0.123456), "0.1235");
    }

    #[test]
    fn a_memory_tune_searches_only_what_the_memory_rules_read_unless_named() {
        use crate::tune::score::Objective;
        let (rules, file) = loaded("examples/rules/recommended-modern.conf");
        let all = find(&rules, &file);
        let cpu = for_objective(all.clone(), &rules, Objective::Cpu, &[]);
        assert!(
            cpu.iter().all(|k| !memory_only(k, &rules)),
            "{:?}",
            names(&cpu)
        );
        assert!(
            cpu.len() < all.len(),
            "a CPU tune leaves the memory numbers alone"
        );
        let memory = names(&for_objective(all.clone(), &rules, Objective::Memory, &[]));
        assert!(!memory.is_empty(), "{memory:?}");
        for n in &memory {
            assert!(
                n.starts_with("MEMPLUG")
                    || n.starts_with("CMM_INC")
                    || n.starts_with("CMM_DEC")
                    || n.starts_with("MEMUNPLUG"),
                "{n} is not a memory rule's number: {memory:?}"
            );
        }
        assert!(memory.iter().any(|n| n.starts_with("MEMPLUG 20")));
        // A CPU rule's knob, a limit and UPDATE come back when named.
        let named = names(&for_objective(
            all.clone(),
            &rules,
            Objective::Memory,
            &["HOTPLUG", "CPU_MAX"],
        ));
        assert!(named.iter().any(|n| n.starts_with("HOTPLUG")), "{named:?}");
        assert!(named.iter().any(|n| n == "CPU_MAX"), "{named:?}");
        assert!(!named.iter().any(|n| n == "UPDATE" || n == "CPU_MIN"));
        let hotplug = all.iter().find(|k| k.owner == "HOTPLUG");
        let at = hotplug.map(|k| format!("{}:{}", k.line, k.column));
        let by_position = for_objective(
            all,
            &rules,
            Objective::Memory,
            &[at.as_deref().unwrap_or("")],
        );
        assert!(by_position.iter().any(|k| k.owner == "HOTPLUG"));
    }
}
