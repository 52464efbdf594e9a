//! The expression tree. Nodes live in one arena per rule set so evaluating a
//! rule walks plain indices and a trace is a vector parallel to the arena.

use super::source::Span;

/// Index of a node in [`super::RuleSet`]'s arena.
pub type NodeId = u32;

/// The six expressions a rule file can set, in cpuplugd's matching order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleKind {
    Hotplug,
    Hotunplug,
    Memplug,
    Memunplug,
    CmmInc,
    CmmDec,
}

impl RuleKind {
    /// All six, in the order cpuplugd tries them as name prefixes.
    pub const ALL: [RuleKind; 6] = [
        RuleKind::Hotplug,
        RuleKind::Hotunplug,
        RuleKind::Memplug,
        RuleKind::Memunplug,
        RuleKind::CmmInc,
        RuleKind::CmmDec,
    ];

    /// The name as cpuplugd prints it in its messages (lower case).
    pub fn daemon_name(self) -> &'static str {
        match self {
            RuleKind::Hotplug => "hotplug",
            RuleKind::Hotunplug => "hotunplug",
            RuleKind::Memplug => "memplug",
            RuleKind::Memunplug => "memunplug",
            RuleKind::CmmInc => "cmm_inc",
            RuleKind::CmmDec => "cmm_dec",
        }
    }

    /// The name as users write it in the file.
    pub fn file_name(self) -> &'static str {
        match self {
            RuleKind::Hotplug => "HOTPLUG",
            RuleKind::Hotunplug => "HOTUNPLUG",
            RuleKind::Memplug => "MEMPLUG",
            RuleKind::Memunplug => "MEMUNPLUG",
            RuleKind::CmmInc => "CMM_INC",
            RuleKind::CmmDec => "CMM_DEC",
        }
    }

    /// CMM_INC and CMM_DEC are amounts; the others are conditions.
    pub fn is_amount(self) -> bool {
        matches!(self, RuleKind::CmmInc | RuleKind::CmmDec)
    }

    /// Position in arrays indexed by rule.
    pub fn index(self) -> usize {
        self as usize
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
pub const FILE_NAMES: [&str; 11] = [
    "HOTPLUG",
    "HOTUNPLUG",
    "MEMPLUG",
    "MEMUNPLUG",
    "CMM_INC",
    "CMM_DEC",
    "UPDATE",
    "CPU_MIN",
    "CPU_MAX",
    "CMM_MIN",
    "CMM_MAX",
];

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
