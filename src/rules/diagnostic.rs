//! Diagnostics as data: what is wrong, where, what cpuplugd itself would do
//! about it, and what to write instead. One renderer (`render`) turns them
//! into text for `plugtop check`, JSON, or a line in the UI's rule panel.

use std::fmt;

use serde::Serialize;

use super::source::Span;

/// Declares [`DiagnosticCode`] from one table: each row the variant, the
/// code as JSON, the LSP and `plugtop check` print it (a stable name that
/// consumers match on), and what it means (`docs/diagnostics.md` is made
/// from these rows; a test keeps it in step).
macro_rules! diagnostic_codes {
    ($($variant:ident => $code:literal, $doc:literal;)*) => {
        /// The stable short name of a finding, for JSON consumers and tests.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum DiagnosticCode {
            $($variant,)*
        }

        impl DiagnosticCode {
            /// Every code, in the table's order.
            pub const ALL: [DiagnosticCode; [$($code),*].len()] = [$(DiagnosticCode::$variant),*];

            /// The code as printed (`set-twice`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(DiagnosticCode::$variant => $code,)*
                }
            }

            /// What the finding means, in a sentence or two.
            pub const fn doc(self) -> &'static str {
                match self {
                    $(DiagnosticCode::$variant => $doc,)*
                }
            }
        }
    };
}

diagnostic_codes! {
    // Reading the file, line by line.
    IndentedComment => "indented-comment",
        "A `#` that is not in the first column: cpuplugd reads the line as a variable whose name starts with `#`.";
    EmptyVariableName => "empty-variable-name",
        "A line `=\"...\"` defines a variable with an empty name, which cpuplugd reads wherever a rule has a term without a name.";
    MisspeltKeyword => "misspelt-keyword",
        "A variable whose name is one or two edits from a rule or setting (`HOTPLGU`): cpuplugd leaves the rule or setting unset.";
    UnusableName => "unusable-name",
        "A variable no rule can name: names in rules are letters, digits and `_`.";
    PrefixName => "prefix-name",
        "A name that sets a rule or setting only because cpuplugd matches names by prefix (`HOTPLUG_X` sets HOTPLUG).";
    IgnoredLine => "ignored-line",
        "A line without `=`, which cpuplugd ignores.";
    ByteOrderMark => "byte-order-mark",
        "The file starts with a UTF-8 byte-order mark (EF BB BF, invisible in an editor), which cpuplugd reads as part of the first line: a first name is not the keyword it reads as, a first `#` starts no comment.";
    TextBeforeQuote => "text-before-quote",
        "Text between `=` and the opening quote, which shifts what cpuplugd takes as the value.";
    TextAfterQuote => "text-after-quote",
        "Text after the closing quote, which cpuplugd ignores.";
    NoFinalNewline => "no-final-newline",
        "The last line has no newline: cpuplugd reports it as too long and refuses the file.";
    LineTooLong => "line-too-long",
        "A line longer than cpuplugd's 2048 characters: it refuses the file.";
    MissingQuotes => "missing-quotes",
        "A value not in double quotes: cpuplugd refuses the file.";
    SetTwice => "set-twice",
        "A rule or setting set a second time: cpuplugd uses the later value.";
    EmptyRule => "empty-rule",
        "An empty rule counts as not set and turns its group off.";
    // Settings.
    BadInteger => "bad-integer",
        "A setting that is not a whole number written with digits only: cpuplugd refuses the file.";
    BadUpdate => "bad-update",
        "UPDATE below 1 second: cpuplugd refuses the file.";
    BadCpuMin => "bad-cpu-min",
        "CPU_MIN below 1: cpuplugd refuses the file.";
    NoPresentCpus => "no-present-cpus",
        "CPU_MAX=\"0\" (every present CPU) where the number of present CPUs is unknown or 0: cpuplugd refuses the file.";
    NoUpdate => "no-update",
        "UPDATE is not set: cpuplugd refuses the file.";
    CpuMaxBelowMin => "cpu-max-below-min",
        "CPU_MAX below CPU_MIN (an unset CPU_MAX counts as -1): cpuplugd refuses the file.";
    CpuMinAbovePresent => "cpu-min-above-present",
        "CPU_MIN asks for more CPUs than the machine has present: cpuplugd refuses to start.";
    NothingToDo => "nothing-to-do",
        "Neither the CPU group nor the memory group can run: cpuplugd refuses the file.";
    LongUpdate => "long-update",
        "UPDATE longer than a day: after the first interval nothing is read or done for that long.";
    GroupOff => "group-off",
        "The CPU or memory group is off, so its rules are ignored (the message says why).";
    // Variables.
    NameTooLong => "name-too-long",
        "A variable name longer than cpuplugd's 128 characters: it refuses the file.";
    DefinedTwice => "defined-twice",
        "A variable defined twice: cpuplugd refuses the file.";
    ReservedName => "reserved-name",
        "A variable named like a predefined name (a keyword, `meminfo.`, `time`...): cpuplugd refuses the file.";
    VariablesTooLarge => "variables-too-large",
        "All variables together exceed cpuplugd's buffer for them: it refuses the file.";
    SelfReference => "self-reference",
        "A variable that refers to itself: cpuplugd refuses the file.";
    EmptyVariable => "empty-variable",
        "A rule uses a variable whose value is empty: cpuplugd refuses the file.";
    TooDeep => "too-deep",
        "Variables name each other too deep for plugtop to expand them.";
    TooLarge => "too-large",
        "The rules expand to more than a million terms in all.";
    VariableWithField => "variable-with-field",
        "A `.` after a user variable: only `meminfo.`, `vmstat.` and `cpustat.` take a field.";
    VariableWithIndex => "variable-with-index",
        "A history index after a user variable: cpuplugd refuses the file.";
    UnusedVariable => "unused-variable",
        "A variable no rule uses.";
    UnusedVariables => "unused-variables",
        "In a refused file, the variables no loaded rule uses, named in one warning.";
    UnusedUnchecked => "unused-unchecked",
        "The unused-variable check stopped early on a very large file: some variables were not looked at.";
    // Expressions.
    Syntax => "syntax",
        "An expression cpuplugd cannot parse (a missing `)`, an operator without an operand...): it refuses the file.";
    UnexpectedCharacter => "unexpected-character",
        "A character that has no meaning in an expression: cpuplugd refuses the file.";
    ForeignOperator => "foreign-operator",
        "An operator cpuplugd does not have (`&&`, `>=`, `==`, `!=`...); the help says what to write instead.";
    UnknownName => "unknown-name",
        "A name that is no keyword, reading or variable: cpuplugd refuses the file.";
    KeywordWithIndex => "keyword-with-index",
        "A history index after a keyword that takes none: cpuplugd refuses the file.";
    DigitInName => "digit-in-name",
        "A field name with a digit: cpuplugd reads field names up to the first digit.";
    HistoryTooDeep => "history-too-deep",
        "A history index deeper than cpuplugd's 100 intervals: it refuses the file.";
    EmptyField => "empty-field",
        "`meminfo.`, `vmstat.` or `cpustat.` without a field name: cpuplugd stops when it evaluates the rule.";
    UnknownField => "unknown-field",
        "A field the machine's /proc file or cpuplugd's `cpustat` table does not have: cpuplugd stops when it evaluates the rule.";
    NotInHistory => "not-in-history",
        "A reading an imported history lacks: plugtop refuses to decide the rule on a made-up value.";
    TruthAsNumber => "truth-as-number",
        "A truth value (a comparison or a logical operator) used as a number: cpuplugd stops when it evaluates the rule.";
    MinusScope => "minus-scope",
        "A prefix `-` takes everything to its right, not just the next term.";
    NotScope => "not-scope",
        "A prefix `!` takes everything to its right, not just the next term.";
    LaggingKeyword => "lagging-keyword",
        "A memory keyword in a CPU rule is the previous interval's value: cpuplugd updates it after the CPU rules.";
    IdleKeyword => "idle-keyword",
        "A CPU keyword that is always 0 because the CPU group is off.";
    ConstantRule => "constant-rule",
        "A rule that depends on no reading: always true, always false or a fixed amount.";
    NarrowHysteresis => "narrow-hysteresis",
        "HOTPLUG and HOTUNPLUG are both true on some reading, or so close that one CPU more or less flips the decision.";
    HysteresisStopped => "hysteresis-stopped",
        "The narrow-hysteresis check stopped after its budget of comparisons.";
    SuggestionsStopped => "suggestions-stopped",
        "The \"did you mean\" search stopped after its budget of comparisons on a very large file.";
}

impl fmt::Display for DiagnosticCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for DiagnosticCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// `d.code == "set-twice"`: the code as printed.
impl PartialEq<&str> for DiagnosticCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// What the real daemon does about the problem, so users know whether the
/// file would even load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DaemonEffect {
    /// cpuplugd refuses to load the file.
    RefusesToLoad,
    /// cpuplugd loads the file and stops (restoring CPUs and memory) the
    /// first time it evaluates this.
    StopsWhenEvaluated,
    /// cpuplugd runs, but probably not as the author meant.
    Runs,
}

/// A secondary place that explains the main one ("used here", "defined here").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Note {
    #[serde(skip)]
    pub span: Span,
    pub message: String,
}

/// One finding about a rule file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A stable short name, for JSON consumers and tests.
    pub code: DiagnosticCode,
    #[serde(skip)]
    pub span: Span,
    pub message: String,
    /// Advice in words ("did you mean ...", "write ... instead").
    pub help: Option<String>,
    /// Text that could replace the span, when the fix is mechanical.
    pub replacement: Option<String>,
    pub notes: Vec<Note>,
    pub daemon: DaemonEffect,
}

impl Diagnostic {
    /// An error that cpuplugd also reports (it refuses the file).
    pub fn refusal(code: DiagnosticCode, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code,
            span,
            message: message.into(),
            help: None,
            replacement: None,
            notes: Vec::new(),
            daemon: DaemonEffect::RefusesToLoad,
        }
    }

    /// An error cpuplugd only finds when it evaluates the rule (and then exits).
    pub fn stops(code: DiagnosticCode, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            daemon: DaemonEffect::StopsWhenEvaluated,
            ..Diagnostic::refusal(code, span, message)
        }
    }

    /// A warning about something cpuplugd accepts but that surprises people.
    pub fn warning(code: DiagnosticCode, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            daemon: DaemonEffect::Runs,
            ..Diagnostic::refusal(code, span, message)
        }
    }

    /// Adds advice.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Adds a mechanical replacement for the span, and advice saying it.
    pub fn with_replacement(mut self, text: impl Into<String>) -> Self {
        let text = text.into();
        if self.help.is_none() {
            self.help = Some(format!("write `{text}`"));
        }
        self.replacement = Some(text);
        self
    }

    /// Adds a note pointing at another place.
    pub fn with_note(mut self, span: Span, message: impl Into<String>) -> Self {
        self.notes.push(Note {
            span,
            message: message.into(),
        });
        self
    }

    /// Turns an error into a warning (for problems in text no rule uses).
    pub fn demoted(mut self, why: &str) -> Self {
        self.severity = Severity::Warning;
        self.daemon = DaemonEffect::Runs;
        self.message = format!("{} ({why})", self.message);
        self
    }
}
