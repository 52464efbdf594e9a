//! The expression tree. Nodes live in one arena per rule set so evaluating a
//! rule walks plain indices and a trace is a vector parallel to the arena.

use super::source::Span;

/// Index of a node in [`super::RuleSet`]'s arena.
pub type NodeId = u32;

/// Declares a name a rule file assigns, from one table: each row the
/// variant, the name as written in the file, the name as cpuplugd prints
/// it in its messages, and what it means (hover, completion). The parser,
/// lint, the what-if editor, the tuner's knobs and the reports all read
/// their names from here.
macro_rules! assigned_names {
    (
        $(#[$meta:meta])*
        $name:ident { $($variant:ident => $file:literal, $daemon:literal, $doc:literal;)* }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($variant,)*
        }

        impl $name {
            /// All of them, in the order cpuplugd tries them as name prefixes.
            pub const ALL: [$name; [$($file),*].len()] = [$($name::$variant),*];

            /// The name as users write it in the file.
            pub const fn file_name(self) -> &'static str {
                match self {
                    $($name::$variant => $file,)*
                }
            }

            /// The name as cpuplugd prints it in its messages (lower case).
            pub const fn daemon_name(self) -> &'static str {
                match self {
                    $($name::$variant => $daemon,)*
                }
            }

            /// What it means to cpuplugd, in one sentence or two.
            pub const fn doc(self) -> &'static str {
                match self {
                    $($name::$variant => $doc,)*
                }
            }

            /// Position in arrays indexed by it.
            pub const fn index(self) -> usize {
                self as usize
            }
        }
    };
}

assigned_names! {
    /// The six expressions a rule file can set, in cpuplugd's matching order.
    RuleKind {
        Hotplug => "HOTPLUG", "hotplug",
            "rule; when true, cpuplugd brings one more CPU online (up to CPU_MAX). Evaluated every UPDATE seconds, before HOTUNPLUG.";
        Hotunplug => "HOTUNPLUG", "hotunplug",
            "rule; when true (and HOTPLUG is not), cpuplugd takes one CPU offline (down to CPU_MIN).";
        Memplug => "MEMPLUG", "memplug",
            "rule; when true, cpuplugd gives memory back to the guest: the CMM pool shrinks by CMM_DEC pages (down to CMM_MIN).";
        Memunplug => "MEMUNPLUG", "memunplug",
            "rule; when true (and MEMPLUG is not), cpuplugd takes memory from the guest: the CMM pool grows by CMM_INC pages (up to CMM_MAX).";
        CmmInc => "CMM_INC", "cmm_inc",
            "expression; pages added to the CMM pool when MEMUNPLUG is true (truncated to an integer; negative counts as 0).";
        CmmDec => "CMM_DEC", "cmm_dec",
            "expression; pages taken from the CMM pool when MEMPLUG is true (CMM_INC when absent).";
    }
}

assigned_names! {
    /// The five settings a rule file can set, in cpuplugd's matching order
    /// (after the rules) and in [`super::Settings`]' order.
    Setting {
        Update => "UPDATE", "update",
            "seconds between two readings and decisions (an integer > 0).";
        CpuMin => "CPU_MIN", "cpu_min",
            "fewest CPUs cpuplugd keeps online (> 0; needs CPU_MAX too).";
        CpuMax => "CPU_MAX", "cpu_max",
            "most CPUs cpuplugd brings online; \"0\" means every present CPU.";
        CmmMin => "CMM_MIN", "cmm_min", "smallest CMM pool, in 4 KiB pages.";
        CmmMax => "CMM_MAX", "cmm_max", "largest CMM pool, in 4 KiB pages.";
    }
}

impl RuleKind {
    /// CMM_INC and CMM_DEC are amounts; the others are conditions.
    pub fn is_amount(self) -> bool {
        matches!(self, RuleKind::CmmInc | RuleKind::CmmDec)
    }
}

impl Setting {
    /// The limits the tuner searches over: UPDATE, CPU_MIN and CPU_MAX.
    pub const TUNED: [Setting; 3] = [Setting::Update, Setting::CpuMin, Setting::CpuMax];
}

/// A name a rule file assigns with a meaning to cpuplugd: a rule or a
/// setting. Any other name defines a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Assigned {
    Rule(RuleKind),
    Setting(Setting),
}

impl Assigned {
    /// Every rule, then every setting: cpuplugd's matching order.
    pub const ALL: [Assigned; RuleKind::ALL.len() + Setting::ALL.len()] = {
        let mut out = [Assigned::Rule(RuleKind::Hotplug); RuleKind::ALL.len() + Setting::ALL.len()];
        let mut i = 0;
        while i < RuleKind::ALL.len() {
            out[i] = Assigned::Rule(RuleKind::ALL[i]);
            i += 1;
        }
        while i < out.len() {
            out[i] = Assigned::Setting(Setting::ALL[i - RuleKind::ALL.len()]);
            i += 1;
        }
        out
    };

    /// The name as users write it in the file.
    pub const fn file_name(self) -> &'static str {
        match self {
            Assigned::Rule(k) => k.file_name(),
            Assigned::Setting(s) => s.file_name(),
        }
    }

    /// What it means to cpuplugd.
    pub const fn doc(self) -> &'static str {
        match self {
            Assigned::Rule(k) => k.doc(),
            Assigned::Setting(s) => s.doc(),
        }
    }

    /// What a line whose name (whitespace removed) is `name` sets, as
    /// cpuplugd matches it: the first whose name starts `name`, in any
    /// case (`HOTPLUG_X` sets HOTPLUG); None for a variable.
    pub fn by_prefix(name: &[u8]) -> Option<Assigned> {
        Assigned::ALL.into_iter().find(|a| {
            let file = a.file_name().as_bytes();
            name.len() >= file.len() && name[..file.len()].eq_ignore_ascii_case(file)
        })
    }

    /// The one written exactly `name` (`HOTPLUG`, not `hotplug`).
    pub fn by_file_name(name: &str) -> Option<Assigned> {
        Assigned::ALL.into_iter().find(|a| a.file_name() == name)
    }
}

/// Binary operators. The discriminants are cpuplugd's own operation codes,
/// which its "Invalid term specified: N" message prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    And = 23,
    Or = 24,
    Greater = 25,
    Less = 26,
    Add = 27,
    Sub = 28,
    Mul = 29,
    Div = 30,
}

impl BinOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Greater => ">",
            BinOp::Less => "<",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
        }
    }

    /// Binding strength, loosest 1 (`|`) to tightest 5 (`*` `/`).
    pub fn level(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::Greater | BinOp::Less => 3,
            BinOp::Add | BinOp::Sub => 4,
            BinOp::Mul | BinOp::Div => 5,
        }
    }

    /// Operators whose result is a truth value rather than a number.
    pub fn yields_truth(self) -> bool {
        self.level() <= 3
    }
}

/// cpuplugd's code for `!`, printed by "Invalid term specified".
pub const NOT_OPCODE: u8 = 22;

/// The predefined names without a history index; their values are derived
/// once per interval (see the engine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Keyword {
    Loadavg,
    RunnableProc,
    Onumcpus,
    User,
    Nice,
    System,
    Idle,
    Iowait,
    Irq,
    Softirq,
    Steal,
    GuestNice,
    Guest,
    Swaprate,
    Apcr,
    Freemem,
}

impl Keyword {
    /// In cpuplugd's matching order (`guest_nice` before `guest`).
    pub const ALL: [Keyword; 16] = [
        Keyword::Loadavg,
        Keyword::RunnableProc,
        Keyword::Onumcpus,
        Keyword::User,
        Keyword::Nice,
        Keyword::System,
        Keyword::Idle,
        Keyword::Iowait,
        Keyword::Irq,
        Keyword::Softirq,
        Keyword::Steal,
        Keyword::GuestNice,
        Keyword::Guest,
        Keyword::Swaprate,
        Keyword::Apcr,
        Keyword::Freemem,
    ];

    /// The name as written in rules.
    pub fn name(self) -> &'static str {
        match self {
            Keyword::Loadavg => "loadavg",
            Keyword::RunnableProc => "runnable_proc",
            Keyword::Onumcpus => "onumcpus",
            Keyword::User => "user",
            Keyword::Nice => "nice",
            Keyword::System => "system",
            Keyword::Idle => "idle",
            Keyword::Iowait => "iowait",
            Keyword::Irq => "irq",
            Keyword::Softirq => "softirq",
            Keyword::Steal => "steal",
            Keyword::GuestNice => "guest_nice",
            Keyword::Guest => "guest",
            Keyword::Swaprate => "swaprate",
            Keyword::Apcr => "apcr",
            Keyword::Freemem => "freemem",
        }
    }

    /// Memory keywords are computed by the memory group, the rest by the CPU group.
    pub fn is_memory(self) -> bool {
        matches!(self, Keyword::Swaprate | Keyword::Apcr | Keyword::Freemem)
    }
}

/// The rules and settings a rule file sets, as written there, in
/// cpuplugd's matching order: for the misspelling hint and the editor.
pub const FILE_NAMES: [&str; Assigned::ALL.len()] = {
    let mut out = [""; Assigned::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = Assigned::ALL[i].file_name();
        i += 1;
    }
    out
};

/// Every name a user variable may not take (cpuplugd compares exactly).
pub const RESERVED_NAMES: [&str; 20] = [
    "loadavg",
    "runnable_proc",
    "onumcpus",
    "user",
    "nice",
    "system",
    "idle",
    "iowait",
    "irq",
    "softirq",
    "steal",
    "guest_nice",
    "guest",
    "swaprate",
    "apcr",
    "freemem",
    "meminfo.",
    "vmstat.",
    "cpustat.",
    "time",
];

/// The fields of cpuplugd's internal `cpustat` table, in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CpuStat {
    Onumcpus,
    Loadavg,
    RunnableProc,
    User,
    Nice,
    System,
    Idle,
    Iowait,
    Irq,
    Softirq,
    Steal,
    Guest,
    GuestNice,
    TotalTicks,
}

impl CpuStat {
    /// All fields, in cpuplugd's table order.
    pub const ALL: [CpuStat; 14] = [
        CpuStat::Onumcpus,
        CpuStat::Loadavg,
        CpuStat::RunnableProc,
        CpuStat::User,
        CpuStat::Nice,
        CpuStat::System,
        CpuStat::Idle,
        CpuStat::Iowait,
        CpuStat::Irq,
        CpuStat::Softirq,
        CpuStat::Steal,
        CpuStat::Guest,
        CpuStat::GuestNice,
        CpuStat::TotalTicks,
    ];

    /// The field name after `cpustat.`.
    pub fn name(self) -> &'static str {
        match self {
            CpuStat::Onumcpus => "onumcpus",
            CpuStat::Loadavg => "loadavg",
            CpuStat::RunnableProc => "runnable_proc",
            CpuStat::User => "user",
            CpuStat::Nice => "nice",
            CpuStat::System => "system",
            CpuStat::Idle => "idle",
            CpuStat::Iowait => "iowait",
            CpuStat::Irq => "irq",
            CpuStat::Softirq => "softirq",
            CpuStat::Steal => "steal",
            CpuStat::Guest => "guest",
            CpuStat::GuestNice => "guest_nice",
            CpuStat::TotalTicks => "total_ticks",
        }
    }

    /// Looks a field up by its exact (case-sensitive) name.
    pub fn from_name(name: &str) -> Option<CpuStat> {
        CpuStat::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// A reading that can be looked up in the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reading {
    /// `meminfo.NAME`: slot in [`super::RuleSet::meminfo_fields`].
    Meminfo(u32),
    /// `vmstat.NAME`: slot in [`super::RuleSet::vmstat_fields`].
    Vmstat(u32),
    /// `cpustat.NAME` for a name cpuplugd's table has.
    Cpustat(CpuStat),
    /// `cpustat.NAME` for a name it lacks: loads, but stops the daemon when evaluated.
    CpustatUnknown(u32),
    /// `time`.
    Time,
}

/// One node of an expression.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    Const(f64),
    Keyword(Keyword),
    Reading {
        reading: Reading,
        index: u32,
    },
    Neg(NodeId),
    Not(NodeId),
    Binary(BinOp, NodeId, NodeId),
    /// A user variable inlined where it was named: `body` is the variable's
    /// own text parsed at that point, with spans in the variable's line.
    Var {
        var: u32,
        body: NodeId,
    },
}

/// A node and the text it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: NodeKind,
    pub span: Span,
    /// Written in parentheses of its own (the span then includes them).
    pub paren: bool,
}
