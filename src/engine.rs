//! One interval exactly as cpuplugd decides it (docs/semantics.md §3-5):
//! the derived keywords, the CPU group with its priority and limits, the
//! memory group with its increments and clamping, and the fault rule that
//! skips a group for one interval. Pure: it reads samples it is given and
//! returns decisions; acting on them is the controller's job.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::kernel::deltas::tick_delta;
use crate::kernel::fields::{FieldTable, Layout};
use crate::kernel::{CpuTicks, Interest, Polarization, ProcBytes, Sample, Stamp};
use crate::rules::compiled::Programs;
use crate::rules::eval::{Evaluator, NoTrace, Readings, Recorder, Stop, fatal_message};
use crate::rules::expr::{CpuStat, Keyword, NodeKind, Reading, RuleKind};
use crate::rules::fpu::{self, Fault};
use crate::rules::{NodeId, RuleSet};

/// The vmstat and meminfo names the memory group itself reads.
const MEM_BASE: [&str; 5] = ["MemFree", "pswpin", "pswpout", "pgpgin", "pgpgout"];

/// The derived keywords, kept between intervals as cpuplugd keeps them: the
/// CPU ones change only when the CPU group runs, the memory ones only when
/// the memory group gets past its rate computations.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Symbols {
    pub loadavg: f64,
    pub runnable_proc: f64,
    pub onumcpus: f64,
    /// user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice (percent).
    pub shares: [f64; 10],
    pub freemem: f64,
    pub apcr: f64,
    pub swaprate: f64,
}

impl Symbols {
    /// Whether `k` is one of the ten shares of the last interval.
    pub fn is_share(k: Keyword) -> bool {
        !matches!(
            k,
            Keyword::Loadavg
                | Keyword::RunnableProc
                | Keyword::Onumcpus
                | Keyword::Swaprate
                | Keyword::Apcr
                | Keyword::Freemem
        )
    }

    /// The value of a keyword. Not inlined: inlined into a rule program's
    /// loop, the address of every field was worked out before each run.
    #[inline(never)]
    pub fn get(&self, k: Keyword) -> f64 {
        match k {
            Keyword::Loadavg => self.loadavg,
            Keyword::RunnableProc => self.runnable_proc,
            Keyword::Onumcpus => self.onumcpus,
            Keyword::User => self.shares[0],
            Keyword::Nice => self.shares[1],
            Keyword::System => self.shares[2],
            Keyword::Idle => self.shares[3],
            Keyword::Iowait => self.shares[4],
            Keyword::Irq => self.shares[5],
            Keyword::Softirq => self.shares[6],
            Keyword::Steal => self.shares[7],
            Keyword::Guest => self.shares[8],
            Keyword::GuestNice => self.shares[9],
            Keyword::Swaprate => self.swaprate,
            Keyword::Apcr => self.apcr,
            Keyword::Freemem => self.freemem,
        }
    }
}

/// One interval's readings reduced to what the rules can name.
#[derive(Debug, Default)]
struct IntervalValues {
    time: f64,
    /// The time stamp and the aggregate ticks as read, for the intervals
    /// the loop check extrapolates from this one ([`Engine::push_steady`]).
    micros: i64,
    ticks: CpuTicks,
    /// The rules' names in order ([`Reading::Meminfo`] indexes them),
    /// then in a reading (not one the loop check builds) the rest of
    /// [`Projected::meminfo`].
    meminfo: Vec<Option<f64>>,
    vmstat: Vec<Option<f64>>,
    base: [Option<f64>; 5],
    cmm_pages: Option<i64>,
    polarization: Option<Polarization>,
}

/// The /proc names an interval's values are projected from: the rules'
/// names first (so a rule's index reads its own), then those of
/// [`MEM_BASE`] no rule names, each name once, so a value both read is
/// found and parsed once.
#[derive(Debug)]
struct Projected {
    meminfo: Vec<String>,
    vmstat: Vec<String>,
    /// Where each of [`MEM_BASE`] is: in `meminfo` for the first, in
    /// `vmstat` for the others.
    base_at: [usize; 5],
}

impl Projected {
    fn of(rules: &RuleSet) -> Self {
        let mut meminfo = rules.fields.meminfo.clone();
        let mut vmstat = rules.fields.vmstat.clone();
        let mut base_at = [0; 5];
        for (i, name) in MEM_BASE.iter().enumerate() {
            let names = if i == 0 { &mut meminfo } else { &mut vmstat };
            base_at[i] = match names.iter().position(|n| n == name) {
                Some(at) => at,
                None => {
                    names.push(name.to_string());
                    names.len() - 1
                }
            };
        }
        Projected {
            meminfo,
            vmstat,
            base_at,
        }
    }
}

/// Finds field positions once per /proc layout instead of once per lookup.
#[derive(Debug, Default)]
struct Projector {
    layout: Option<Arc<Layout>>,
    positions: Vec<Option<u32>>,
}

// Copies reuse what the copy already holds (`clone_from`): the loop check
// copies the engine every interval that acts.
impl Clone for IntervalValues {
    fn clone(&self) -> Self {
        let mut copy = IntervalValues::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        let IntervalValues {
            time,
            micros,
            ticks,
            meminfo,
            vmstat,
            base,
            cmm_pages,
            polarization,
        } = self;
        *time = source.time;
        *micros = source.micros;
        *ticks = source.ticks;
        meminfo.clone_from(&source.meminfo);
        vmstat.clone_from(&source.vmstat);
        *base = source.base;
        *cmm_pages = source.cmm_pages;
        *polarization = source.polarization;
    }
}

impl Clone for Projector {
    fn clone(&self) -> Self {
        let mut copy = Projector::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        let Projector { layout, positions } = self;
        layout.clone_from(&source.layout);
        positions.clone_from(&source.positions);
    }
}

impl Projector {
    fn project<S: AsRef<str>>(
        &mut self,
        table: &FieldTable,
        names: &[S],
        out: &mut Vec<Option<f64>>,
    ) {
        // Positions in the layout the reading was checked against: those
        // below its checked count hold without looking at later lines.
        let (layout, checked) = table.checked();
        let same = self.layout.as_ref().is_some_and(|l| l.id() == layout.id());
        if !same || self.positions.len() != names.len() {
            self.positions = names.iter().map(|n| layout.position(n.as_ref())).collect();
            self.layout = Some(Arc::clone(layout));
        }
        // Overwritten in place: the entry's values from the interval it
        // last held are all replaced.
        out.resize(names.len(), None);
        for ((value, p), n) in out.iter_mut().zip(&self.positions).zip(names) {
            *value = match p {
                Some(i) if (*i as usize) < checked => Some(table.value_at(*i)),
                _ => table.get(n.as_ref()),
            };
        }
    }
}

/// What the CPU group did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuAction {
    Plug,
    Unplug,
    None,
}

/// Why a group did not (fully) run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupStatus {
    Ok,
    /// A floating-point fault skipped the group for this interval.
    Fault(Fault),
    /// Vertical polarization: cpuplugd makes no CPU changes.
    Vertical,
}

/// The CPU group's decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuDecision {
    pub status: GroupStatus,
    /// `None` when not evaluated (fault, or polarization).
    pub hotplug: Option<bool>,
    /// `None` when not evaluated (HOTPLUG was true, or a fault).
    pub hotunplug: Option<bool>,
    /// After the CPU_MIN/CPU_MAX checks.
    pub action: CpuAction,
    /// True when a rule fired but a limit stopped it.
    pub limited: bool,
    pub onumcpus: f64,
}

/// The memory group's decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemDecision {
    pub status: GroupStatus,
    pub memplug: Option<bool>,
    pub memunplug: Option<bool>,
    /// CMM_INC and CMM_DEC truncated to integers, before negatives become 0.
    pub cmm_inc: Option<i64>,
    pub cmm_dec: Option<i64>,
    /// The pool as read this interval.
    pub cmm_pages: i64,
    /// The pool after the rules and clamping.
    pub cmm_pages_new: i64,
}

/// A stop that cpuplugd would exit on.
#[derive(Debug, Clone, PartialEq)]
pub struct Fatal {
    pub message: String,
    /// The node that caused it, when a rule did.
    pub node: Option<NodeId>,
    pub group: Option<&'static str>,
}

/// Everything decided in one interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// 0-based number of the reading this decision was made on.
    pub reading: usize,
    pub cpu: Option<CpuDecision>,
    pub mem: Option<MemDecision>,
    /// Set when cpuplugd would exit at this interval; the groups after it did not run.
    pub fatal: Option<Fatal>,
}

/// The engine: a rule set, and the history plus keyword state it decides on.
#[derive(Debug)]
pub struct Engine {
    rules: Arc<RuleSet>,
    state: State,
    /// Each user variable's first inlined node (by its index in the rule
    /// set), found once: the screen, the metrics and the editor ask for
    /// every variable's value every interval. Shared, as the programs are:
    /// the loop check copies the engine each interval that acts.
    var_nodes: Arc<[Option<NodeId>]>,
}

/// Everything the engine remembers between intervals.
#[derive(Debug)]
struct State {
    /// The rules as programs, for evaluation without a trace. Shared:
    /// they never change, and the loop check copies the engine each
    /// interval that acts.
    programs: Arc<Programs>,
    history: VecDeque<IntervalValues>,
    /// Each interval's `cpustat` values (in [`CpuStat::ALL`] order), newest
    /// first, an entry per one of `history`: what rules read most, each
    /// reading then a bounds check and a load (not a ring's index wrapped).
    cpustat: Vec<[f64; 14]>,
    symbols: Symbols,
    /// The names the two projectors read. Shared, as the programs are.
    projected: Arc<Projected>,
    meminfo: Projector,
    vmstat: Projector,
    readings: usize,
    /// The /proc table lengths of the first reading (cpuplugd's buffers).
    start_bytes: Option<ProcBytes>,
    /// Readings taken before this engine (a reload): decisions go on
    /// numbering the readings of the run, not of this rule set.
    offset: usize,
    /// Whether any expression names a share (`user`, `idle`, …).
    shares_named: bool,
    /// What the loop check's steady intervals need of the group it does
    /// not ask about ([`Engine::push_steady`]).
    steady: SteadyNeeds,
}

/// Whether the CPU group can stop cpuplugd (it then decides first in every
/// interval the loop check builds for a memory rule) and whether its rules
/// read the memory keywords (the memory group then runs in every interval
/// the check builds for a CPU rule, as they lag it by one).
#[derive(Debug, Clone, Copy, Default)]
struct SteadyNeeds {
    cpu_may_stop: bool,
    cpu_reads_memory: bool,
}

impl SteadyNeeds {
    fn of(rules: &RuleSet, programs: &Programs) -> Self {
        let mut needs = SteadyNeeds::default();
        for kind in [RuleKind::Hotplug, RuleKind::Hotunplug] {
            if rules.rule(kind).is_none() {
                continue;
            }
            match programs.get(kind) {
                Some(p) => {
                    needs.cpu_may_stop |= p.may_stop();
                    needs.cpu_reads_memory |= p.reads_keyword(|k| {
                        matches!(k, Keyword::Apcr | Keyword::Swaprate | Keyword::Freemem)
                    });
                }
                None => {
                    needs.cpu_may_stop = true;
                    needs.cpu_reads_memory = true;
                }
            }
        }
        needs
    }
}

impl Clone for Engine {
    fn clone(&self) -> Self {
        Engine {
            rules: Arc::clone(&self.rules),
            state: self.state.clone(),
            var_nodes: Arc::clone(&self.var_nodes),
        }
    }

    /// A copy into an engine copied before reuses its history's buffers.
    fn clone_from(&mut self, source: &Self) {
        self.rules.clone_from(&source.rules);
        self.state.clone_from(&source.state);
        self.var_nodes.clone_from(&source.var_nodes);
    }
}

impl Clone for State {
    fn clone(&self) -> Self {
        State {
            programs: Arc::clone(&self.programs),
            history: self.history.clone(),
            cpustat: self.cpustat.clone(),
            symbols: self.symbols,
            projected: Arc::clone(&self.projected),
            meminfo: self.meminfo.clone(),
            vmstat: self.vmstat.clone(),
            readings: self.readings,
            start_bytes: self.start_bytes,
            offset: self.offset,
            shares_named: self.shares_named,
            steady: self.steady,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        let State {
            programs,
            history,
            cpustat,
            symbols,
            projected,
            meminfo,
            vmstat,
            readings,
            start_bytes,
            offset,
            shares_named,
            steady,
        } = self;
        programs.clone_from(&source.programs);
        // Entry by entry, so each keeps its buffers.
        history.truncate(source.history.len());
        for (to, from) in history.iter_mut().zip(&source.history) {
            to.clone_from(from);
        }
        let have = history.len();
        history.extend(source.history.iter().skip(have).cloned());
        cpustat.clone_from(&source.cpustat);
        *symbols = source.symbols;
        projected.clone_from(&source.projected);
        meminfo.clone_from(&source.meminfo);
        vmstat.clone_from(&source.vmstat);
        *readings = source.readings;
        *start_bytes = source.start_bytes;
        *offset = source.offset;
        *shares_named = source.shares_named;
        *steady = source.steady;
    }
}

struct HistoryView<'e> {
    history: &'e VecDeque<IntervalValues>,
    cpustat: &'e [[f64; 14]],
    symbols: &'e Symbols,
}

impl<'e> HistoryView<'e> {
    fn of(state: &'e State) -> Self {
        HistoryView {
            history: &state.history,
            cpustat: &state.cpustat,
            symbols: &state.symbols,
        }
    }
}

impl Readings for HistoryView<'_> {
    #[inline]
    fn keyword(&self, keyword: Keyword) -> f64 {
        self.symbols.get(keyword)
    }

    #[inline(always)]
    fn cpustat(&self, stat: CpuStat, index: u32) -> Option<f64> {
        Some(self.cpustat.get(index as usize)?[stat as usize])
    }

    #[inline(always)]
    fn reading(&self, reading: Reading, index: u32) -> Option<f64> {
        let e = self.history.get(index as usize)?;
        match reading {
            Reading::Meminfo(i) => e.meminfo[i as usize],
            Reading::Vmstat(i) => e.vmstat[i as usize],
            Reading::Cpustat(c) => self.cpustat(c, index),
            Reading::CpustatUnknown(_) => None,
            Reading::Time => Some(e.time),
        }
    }
}

/// One interval's `cpustat` values, in [`CpuStat::ALL`] order.
fn cpustat_of(t: &CpuTicks, onumcpus: f64, loadavg: f64, runnable: f64) -> [f64; 14] {
    // Edge case C: cpuplugd scans each counter with `%ld`, which
    // saturates at the largest long; `total_ticks` is then their sum in
    // unsigned longs, which wraps, printed back as a (signed) long.
    let saturated = |v: u64| v.min(i64::MAX as u64);
    let long = |v: u64| saturated(v) as i64 as f64;
    let total = t
        .columns()
        .iter()
        .fold(0u64, |a, v| a.wrapping_add(saturated(*v))) as i64 as f64;
    [
        onumcpus,
        loadavg,
        runnable,
        long(t.user),
        long(t.nice),
        long(t.system),
        long(t.idle),
        long(t.iowait),
        long(t.irq),
        long(t.softirq),
        long(t.steal),
        long(t.guest),
        long(t.guest_nice),
        total,
    ]
}

/// Whether any expression of `rules` reads /proc/loadavg: the keywords
/// `loadavg` and `runnable_proc`, or their `cpustat.` spellings with a
/// history index.
fn names_loadavg(rules: &RuleSet) -> bool {
    rules.nodes.iter().any(|n| match n.kind {
        NodeKind::Keyword(k) => matches!(k, Keyword::Loadavg | Keyword::RunnableProc),
        NodeKind::Reading {
            reading: Reading::Cpustat(c),
            ..
        } => matches!(c, CpuStat::Loadavg | CpuStat::RunnableProc),
        _ => false,
    })
}

/// The first node that inlines each user variable, by variable index
/// (`None` for one no rule uses: cpuplugd never parses it).
fn first_var_nodes(rules: &RuleSet) -> Vec<Option<NodeId>> {
    let mut first = vec![None; rules.variables.len()];
    for (i, node) in rules.nodes.iter().enumerate() {
        if let NodeKind::Var { var, .. } = node.kind
            && let Some(slot @ None) = first.get_mut(var as usize)
        {
            *slot = Some(i as NodeId);
        }
    }
    first
}

impl Engine {
    /// An engine for a loaded rule set, with an empty history.
    pub fn new(rules: Arc<RuleSet>) -> Self {
        let programs = Programs::of(&rules);
        Engine {
            state: State {
                steady: SteadyNeeds::of(&rules, &programs),
                programs: Arc::new(programs),
                history: VecDeque::with_capacity(rules.history_depth as usize + 1),
                cpustat: Vec::with_capacity(rules.history_depth as usize + 1),
                symbols: Symbols::default(),
                projected: Arc::new(Projected::of(&rules)),
                meminfo: Projector::default(),
                vmstat: Projector::default(),
                readings: 0,
                start_bytes: None,
                offset: 0,
                shares_named: rules
                    .nodes
                    .iter()
                    .any(|n| matches!(n.kind, NodeKind::Keyword(k) if Symbols::is_share(k))),
            },
            var_nodes: first_var_nodes(&rules).into(),
            rules,
        }
    }

    /// This engine continues a run in which `readings` were taken before
    /// it (new rules after a reload): its decisions number on from there.
    pub fn continuing(mut self, readings: usize) -> Self {
        self.state.offset = readings;
        self
    }

    /// What deciding reads of a sample: the aggregate ticks and the
    /// /proc fields the rules name, with those cpuplugd always reads for
    /// freemem, swaprate and apcr. A source told this reads less.
    pub fn interest(&self) -> Interest {
        let with = |named: &[String], base: &[&str]| {
            let mut names = named.to_vec();
            names.extend(base.iter().map(|n| n.to_string()));
            Some(names)
        };
        let fields = &self.rules.fields;
        Interest {
            per_cpu: false,
            meminfo: with(&fields.meminfo, &MEM_BASE[..1]),
            vmstat: with(&fields.vmstat, &MEM_BASE[1..]),
            loadavg: names_loadavg(&self.rules),
            loadavg_text: false,
            present_each_interval: false,
        }
    }

    /// The rule set in use.
    pub fn rules(&self) -> &Arc<RuleSet> {
        &self.rules
    }

    /// The derived keywords as of the last decision.
    pub fn symbols(&self) -> &Symbols {
        &self.state.symbols
    }

    /// How many readings this engine has taken.
    pub fn readings(&self) -> usize {
        self.state.readings
    }

    /// The number of this engine's first reading in the run.
    pub fn first_reading(&self) -> usize {
        self.state.offset
    }

    /// Takes one reading. While the history fills (the first `history_depth`
    /// readings) nothing is decided and `None` comes back, as in cpuplugd.
    ///
    /// A reading cpuplugd would stop on while reading it (not while
    /// evaluating) gives a decision with only `fatal` set, even while the
    /// history fills.
    pub fn push<T: Recorder>(&mut self, sample: &Sample, trace: &mut T) -> Option<Decision> {
        let fatal = self.state.reading_fatal(sample);
        self.state.record(&self.rules, sample);
        self.state.readings += 1;
        if let Some(fatal) = fatal {
            return Some(Decision {
                reading: self.state.offset + self.state.readings - 1,
                cpu: None,
                mem: None,
                fatal: Some(fatal),
            });
        }
        self.decide(trace)
    }

    /// A user variable's value this interval, as cpuplugd would compute it
    /// where a rule names it. `None` while the history fills, or when no
    /// rule names the variable (cpuplugd never parses it then).
    pub fn variable(&self, name: &str) -> Option<Result<f64, Stop>> {
        let var = self.rules.variables.iter().position(|v| v.name == name)?;
        self.variable_at(var)
    }

    /// [`Engine::variable`] by the variable's index in the rule set.
    pub fn variable_at(&self, var: usize) -> Option<Result<f64, Stop>> {
        if self.state.readings <= self.rules.history_depth as usize {
            return None;
        }
        let node = (*self.var_nodes.get(var)?)?;
        let view = HistoryView::of(&self.state);
        Some(Evaluator::new(&self.rules, &view).number(node, &mut crate::rules::eval::NoTrace))
    }

    /// Decides on the newest reading again (what-if and benchmarks), or
    /// `None` while the history is still filling.
    pub fn decide<T: Recorder>(&mut self, trace: &mut T) -> Option<Decision> {
        if self.state.readings <= self.rules.history_depth as usize {
            return None;
        }
        Some(self.state.decide(&self.rules, trace))
    }

    /// Takes the interval after the newest reading as the loop check
    /// models it ([`steady_next`]: the guest keeps the pace it had between
    /// the two newest readings, after `change`) and decides it as far as
    /// `rule` needs: its own group, and of the other what a full decision
    /// would carry into it (the CPU keywords; a stop of the CPU group; the
    /// memory keywords the CPU rules read one interval late). Whether
    /// `rule` acts comes out as a full decision's would; the group not
    /// needed is `None`. `None` while the history is still filling.
    pub fn push_steady(&mut self, change: Change, rule: RuleKind) -> Option<Decision> {
        let state = &mut self.state;
        if state.readings <= self.rules.history_depth as usize || state.history.len() < 2 {
            return None;
        }
        let full = state.history.len() > self.rules.history_depth as usize;
        let latest_cpustat = state.cpustat[0];
        let mut next = if full {
            state.cpustat.pop();
            state.history.pop_back().unwrap_or_default()
        } else {
            IntervalValues::default()
        };
        let row = if state.history.len() < 2 {
            // The entry taken back was the reading before the newest.
            let previous = next.clone();
            let latest = &state.history[0];
            steady_next(
                &mut next,
                &previous,
                latest,
                &latest_cpustat,
                change,
                &self.rules,
            )
        } else {
            let latest = &state.history[0];
            let previous = &state.history[1];
            steady_next(
                &mut next,
                previous,
                latest,
                &latest_cpustat,
                change,
                &self.rules,
            )
        };
        state.history.push_front(next);
        state.cpustat.insert(0, row);
        state.readings += 1;
        Some(state.decide_for(&self.rules, rule))
    }
}

/// What the loop check models an action as: CPUs plugged (or unplugged,
/// negative) or the pool set to a size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    Cpus(i64),
    Pool(i64),
}

/// Makes `next` the interval after `latest` if the guest keeps doing what
/// it did between `previous` and `latest`, after `change`: the same work
/// spread over the new CPU count (the idle columns absorb the capacity
/// change; the work stays unless it no longer fits), counters at their
/// pace (one that fell stays), levels where they were, and the pool's
/// pages out of (or back into) MemFree. Gives `next`'s `cpustat` values
/// (`latest_cpustat` are `latest`'s).
fn steady_next(
    next: &mut IntervalValues,
    previous: &IntervalValues,
    latest: &IntervalValues,
    latest_cpustat: &[f64; 14],
    change: Change,
    rules: &RuleSet,
) -> [f64; 14] {
    next.micros = latest.micros + (latest.micros - previous.micros).max(1);
    next.time = Stamp {
        micros: next.micros,
    }
    .seconds();
    let now = latest.ticks.columns();
    let mut delta = tick_delta(&latest.ticks, &previous.ticks)
        .unwrap_or_default()
        .columns()
        .map(|t| t as f64);
    let mut onumcpus = latest_cpustat[CpuStat::Onumcpus as usize];
    if let Change::Cpus(by) = change {
        let n = onumcpus.max(1.0);
        let n_new = (n + by as f64).max(1.0);
        let total: f64 = delta.iter().sum::<f64>() - delta[8] - delta[9];
        let capacity = total * n_new / n;
        let idle_share = if delta[3] + delta[4] > 0.0 {
            delta[4] / (delta[3] + delta[4])
        } else {
            0.0
        };
        let mut busy: f64 = total - delta[3] - delta[4];
        if busy > capacity {
            let scale = capacity / busy;
            for (i, d) in delta.iter_mut().enumerate() {
                if i != 3 && i != 4 {
                    *d *= scale;
                }
            }
            busy = capacity;
        }
        let free = (capacity - busy).max(0.0);
        delta[3] = free * (1.0 - idle_share);
        delta[4] = free * idle_share;
        // The hypothetical list stays as long as a real one can be.
        let count = (n_new as u32).min(crate::kernel::cpulist::MAX_CPUS);
        onumcpus = f64::from(i32::try_from(count).unwrap_or(i32::MAX));
    }
    let mut cols = now;
    for i in 0..10 {
        cols[i] = now[i].saturating_add(delta[i].round() as u64);
    }
    next.ticks = CpuTicks::from_columns(cols);
    let cpustat = cpustat_of(
        &next.ticks,
        onumcpus,
        latest_cpustat[CpuStat::Loadavg as usize],
        latest_cpustat[CpuStat::RunnableProc as usize],
    );
    // Counters keep their pace, levels stay.
    let pace =
        |v: Option<f64>, before: Option<f64>| v.map(|v| v + (v - before.unwrap_or(v)).max(0.0));
    next.vmstat.clear();
    next.vmstat.extend(
        latest
            .vmstat
            .iter()
            .zip(&previous.vmstat)
            .map(|(v, before)| pace(*v, *before)),
    );
    for i in 1..MEM_BASE.len() {
        next.base[i] = pace(latest.base[i], previous.base[i]);
    }
    let (free_less, pool) = match change {
        Change::Pool(to) => ((to - latest.cmm_pages.unwrap_or(0)) as f64 * 4.0, Some(to)),
        Change::Cpus(_) => (0.0, latest.cmm_pages),
    };
    let less = |v: Option<f64>| {
        if matches!(change, Change::Pool(_)) {
            v.map(|v| (v - free_less).max(0.0))
        } else {
            v
        }
    };
    next.meminfo.clear();
    next.meminfo.extend(
        latest
            .meminfo
            .iter()
            .zip(&rules.fields.meminfo)
            .map(|(v, name)| if name == MEM_BASE[0] { less(*v) } else { *v }),
    );
    next.base[0] = less(latest.base[0]);
    next.cmm_pages = pool;
    next.polarization = latest.polarization;
    cpustat
}

impl State {
    /// What stops cpuplugd while it reads an interval, in its reading order:
    /// a /proc table grown to twice its length at start fills the buffer
    /// cpuplugd sized then (edge case F), and an online count of 0 or less
    /// (`3-1` counts -1, edge case E) is refused.
    fn reading_fatal(&mut self, sample: &Sample) -> Option<Fatal> {
        let start = *self.start_bytes.get_or_insert(sample.proc_bytes);
        let tables = [
            ("/proc/meminfo", sample.proc_bytes.meminfo, start.meminfo),
            ("/proc/vmstat", sample.proc_bytes.vmstat, start.vmstat),
        ];
        let fatal = |message: String| Fatal {
            message,
            node: None,
            group: None,
        };
        for (path, now, at_start) in tables {
            if at_start > 0 && u64::from(now) >= 2 * u64::from(at_start) {
                return Some(fatal(format!("procinfo buffer too small for {path}")));
            }
        }
        (sample.online.count <= 0).then(|| {
            fatal(format!(
                "number of online cpus ({}) <= 0",
                sample.online.count
            ))
        })
    }

    fn record(&mut self, rules: &RuleSet, sample: &Sample) {
        // The oldest entry, its buffers kept, becomes the newest and is
        // filled in place: a full ring turns without moving an entry.
        if self.history.len() > rules.history_depth as usize {
            self.cpustat.pop();
            self.history.rotate_right(1);
        } else {
            self.history.push_front(IntervalValues::default());
        }
        let entry = &mut self.history[0];
        entry.time = sample.stamp.seconds();
        entry.micros = sample.stamp.micros;
        entry.ticks = sample.ticks;
        self.cpustat.insert(
            0,
            cpustat_of(
                &sample.ticks,
                f64::from(sample.online.count),
                sample.loadavg,
                sample.runnable,
            ),
        );
        let names = &*self.projected;
        self.meminfo
            .project(&sample.meminfo, &names.meminfo, &mut entry.meminfo);
        self.vmstat
            .project(&sample.vmstat, &names.vmstat, &mut entry.vmstat);
        for (i, at) in names.base_at.iter().enumerate() {
            let values = if i == 0 {
                &entry.meminfo
            } else {
                &entry.vmstat
            };
            entry.base[i] = values.get(*at).copied().flatten();
        }
        entry.cmm_pages = sample.cmm_pages;
        entry.polarization = sample.polarization;
    }

    fn decide<T: Recorder>(&mut self, rules: &RuleSet, trace: &mut T) -> Decision {
        let mut decision = Decision {
            reading: self.offset + self.readings - 1,
            cpu: None,
            mem: None,
            fatal: None,
        };
        if rules.cpu_enabled {
            match self.cpu_group(rules, trace, None) {
                Ok(cpu) => decision.cpu = Some(cpu),
                Err(fatal) => {
                    decision.fatal = Some(fatal);
                    return decision;
                }
            }
        }
        if rules.mem_enabled {
            match self.mem_group(rules, trace, None) {
                Ok(mem) => decision.mem = Some(mem),
                Err(fatal) => decision.fatal = Some(fatal),
            }
        }
        decision
    }

    /// [`Engine::push_steady`]'s decision: `rule`'s group, and of the
    /// other what a full decision would carry into it.
    fn decide_for(&mut self, rules: &RuleSet, rule: RuleKind) -> Decision {
        let mut decision = Decision {
            reading: self.offset + self.readings - 1,
            cpu: None,
            mem: None,
            fatal: None,
        };
        let cpu_rule = matches!(rule, RuleKind::Hotplug | RuleKind::Hotunplug);
        if rules.cpu_enabled {
            if cpu_rule || self.steady.cpu_may_stop {
                match self.cpu_group(rules, &mut NoTrace, Some(rule)) {
                    Ok(cpu) => decision.cpu = Some(cpu),
                    Err(fatal) => {
                        decision.fatal = Some(fatal);
                        return decision;
                    }
                }
            } else if self.history[0].polarization != Some(Polarization::Vertical) {
                // The keywords the memory rules may read; a fault here
                // skips only the CPU group.
                let _ = self.cpu_symbols();
            }
        }
        if rules.mem_enabled && (!cpu_rule || self.steady.cpu_reads_memory) {
            match self.mem_group(rules, &mut NoTrace, Some(rule)) {
                Ok(mem) => decision.mem = Some(mem),
                Err(fatal) => decision.fatal = Some(fatal),
            }
        }
        decision
    }

    /// The CPU group's decision. Asked only whether HOTPLUG acts
    /// (`asked`), it stops where HOTPLUG is false: nothing after it can
    /// make the group plug.
    fn cpu_group<T: Recorder>(
        &mut self,
        rules: &RuleSet,
        trace: &mut T,
        asked: Option<RuleKind>,
    ) -> Result<CpuDecision, Fatal> {
        let onumcpus = self.cpustat[0][CpuStat::Onumcpus as usize];
        let mut decision = CpuDecision {
            status: GroupStatus::Ok,
            hotplug: None,
            hotunplug: None,
            action: CpuAction::None,
            limited: false,
            onumcpus,
        };
        // Reset first: a group that stops before its rules run leaves no
        // outcome of an earlier interval behind in the trace.
        if T::ENABLED {
            reset(trace, rules, &[RuleKind::Hotplug, RuleKind::Hotunplug]);
        }
        if self.history[0].polarization == Some(Polarization::Vertical) {
            decision.status = GroupStatus::Vertical;
            return Ok(decision);
        }
        if let Err(fault) = self.cpu_symbols() {
            decision.status = GroupStatus::Fault(fault);
            return Ok(decision);
        }
        let (Some(plug), Some(unplug)) = (
            rules.rule(RuleKind::Hotplug),
            rules.rule(RuleKind::Hotunplug),
        ) else {
            return Ok(decision);
        };
        let view = HistoryView::of(self);
        let eval = Evaluator::new(rules, &view);
        let programs = &self.programs;
        let outcome = programs
            .truth(&eval, RuleKind::Hotplug, plug.root, trace)
            .and_then(|p| {
                if p {
                    Ok((true, None))
                } else if asked == Some(RuleKind::Hotplug) {
                    Ok((false, None))
                } else {
                    programs
                        .truth(&eval, RuleKind::Hotunplug, unplug.root, trace)
                        .map(|u| (false, Some(u)))
                }
            });
        let (hotplug, hotunplug) = match outcome {
            Ok(v) => v,
            Err(Stop::Fault { fault, .. }) => {
                decision.status = GroupStatus::Fault(fault);
                return Ok(decision);
            }
            Err(Stop::Fatal { fatal, node }) => {
                return Err(Fatal {
                    message: fatal_message(rules, fatal, node),
                    node: Some(node),
                    group: Some("cpu"),
                });
            }
        };
        decision.hotplug = Some(hotplug);
        decision.hotunplug = hotunplug;
        let s = rules.settings;
        if hotplug {
            if onumcpus + 1.0 > s.cpu_max as f64 {
                decision.limited = true;
            } else {
                decision.action = CpuAction::Plug;
            }
        } else if hotunplug == Some(true) {
            if onumcpus <= s.cpu_min as f64 {
                decision.limited = true;
            } else {
                decision.action = CpuAction::Unplug;
            }
        }
        Ok(decision)
    }

    /// The CPU keywords for this interval, computed as cpuplugd does (and
    /// with its faults, though real tick counts never raise one).
    fn cpu_symbols(&mut self) -> Result<(), Fault> {
        let cur = self.cpustat[0];
        let s = &mut self.symbols;
        s.loadavg = cur[CpuStat::Loadavg as usize];
        s.runnable_proc = cur[CpuStat::RunnableProc as usize];
        s.onumcpus = cur[CpuStat::Onumcpus as usize];
        if !self.shares_named {
            // Nothing reads them, and they cannot fault: tick counts are
            // whole numbers below 2^63, so their differences are 0 or at
            // least 1, a zero total is taken as 1, and no quotient or
            // product of them leaves the normal range.
            return Ok(());
        }
        let prev = self.cpustat[1];
        let mut diffs = [0.0; 10];
        for (i, d) in diffs.iter_mut().enumerate() {
            let at = CpuStat::User as usize + i;
            *d = fpu::sub(cur[at], prev[at])?;
        }
        let total_at = CpuStat::TotalTicks as usize;
        let mut total = fpu::sub(cur[total_at], prev[total_at])?;
        if total == 0.0 {
            total = 1.0;
        }
        let s = &mut self.symbols;
        let factor = fpu::mul(100.0, s.onumcpus)?;
        for (share, diff) in s.shares.iter_mut().zip(diffs) {
            *share = fpu::mul(fpu::div(diff, total)?, factor)?;
        }
        Ok(())
    }

    /// swaprate, apcr and freemem for this interval, as cpuplugd computes
    /// them before the memory rules (a fault skips the group), or the
    /// first of [`MEM_BASE`] found missing (by its index).
    #[inline(always)]
    fn mem_symbols(&mut self, free: f64, interval: f64) -> Result<Result<(), Fault>, usize> {
        let (cur, prev) = (&self.history[0], &self.history[1]);
        let get = |e: &IntervalValues, i: usize| e.base[i].ok_or(i);
        let rate = |(a, b, c, d): (f64, f64, f64, f64)| -> Result<f64, Fault> {
            fpu::div(fpu::sub(fpu::sub(fpu::add(a, b)?, c)?, d)?, interval)
        };
        let swap_sum = (get(cur, 1)?, get(cur, 2)?, get(prev, 1)?, get(prev, 2)?);
        let swaprate = match rate(swap_sum) {
            Ok(v) => v,
            Err(f) => return Ok(Err(f)),
        };
        let page_sum = (get(cur, 3)?, get(cur, 4)?, get(prev, 3)?, get(prev, 4)?);
        let apcr = match rate(page_sum) {
            Ok(v) => v,
            Err(f) => return Ok(Err(f)),
        };
        if self.history[0].cmm_pages.is_none() {
            return Ok(Ok(()));
        }
        self.symbols.apcr = apcr;
        self.symbols.swaprate = swaprate;
        match fpu::div(free, 1024.0) {
            Ok(v) => self.symbols.freemem = v,
            Err(f) => return Ok(Err(f)),
        }
        Ok(Ok(()))
    }

    /// The memory group's decision. Asked only whether MEMPLUG acts
    /// (`asked`), it stops where MEMPLUG is false and the pool is within
    /// CMM_MIN..CMM_MAX: MEMUNPLUG (or its fault) can then only keep or
    /// grow the pool.
    fn mem_group<T: Recorder>(
        &mut self,
        rules: &RuleSet,
        trace: &mut T,
        asked: Option<RuleKind>,
    ) -> Result<MemDecision, Fatal> {
        let missing = |name: &str| Fatal {
            message: format!("Symbol {name} not found, check your config file"),
            node: None,
            group: Some("memory"),
        };
        let (cur, prev) = (&self.history[0], &self.history[1]);
        let free = cur.base[0].ok_or_else(|| missing("MemFree"))?;
        let interval = cur.time - prev.time;
        let cmm_pages_read = cur.cmm_pages;
        let mut decision = MemDecision {
            status: GroupStatus::Ok,
            memplug: None,
            memunplug: None,
            cmm_inc: None,
            cmm_dec: None,
            cmm_pages: cmm_pages_read.unwrap_or(0),
            cmm_pages_new: cmm_pages_read.unwrap_or(0),
        };
        // Reset first, as in the CPU group: a zero time step stops the
        // group before its rules and must not show the last interval's.
        if T::ENABLED {
            reset(trace, rules, &MEMORY_RULES);
        }
        let symbols = self.mem_symbols(free, interval);
        if let Err(fault) = symbols.map_err(|i| missing(MEM_BASE[i]))? {
            return Ok(faulted(decision, fault));
        }
        let Some(pages) = cmm_pages_read else {
            return Err(Fatal {
                // Missing, empty and non-numeric all read as absent (kernel::root).
                message: "Cannot read /proc/sys/vm/cmm_pages: it is missing or holds no number"
                    .into(),
                node: None,
                group: Some("memory"),
            });
        };
        let (Some(inc_rule), Some(plug), Some(unplug)) = (
            rules.rule(RuleKind::CmmInc),
            rules.rule(RuleKind::Memplug),
            rules.rule(RuleKind::Memunplug),
        ) else {
            return Ok(decision);
        };
        let view = HistoryView::of(self);
        let eval = Evaluator::new(rules, &view);
        let programs = &self.programs;
        let as_long = |stop: Result<f64, Stop>, node: NodeId| -> Result<i64, Stop> {
            stop.and_then(|v| fpu::to_long(v).map_err(|fault| Stop::Fault { fault, node }))
        };
        let result = (|| -> Result<(i64, i64, bool, Option<bool>), Stop> {
            let inc = as_long(
                programs.number(&eval, RuleKind::CmmInc, inc_rule.root, trace),
                inc_rule.root,
            )?;
            let dec = match rules.rule(RuleKind::CmmDec) {
                Some(r) => as_long(
                    programs.number(&eval, RuleKind::CmmDec, r.root, trace),
                    r.root,
                )?,
                None => inc,
            };
            let within = (rules.settings.cmm_min..=rules.settings.cmm_max).contains(&pages);
            if programs.truth(&eval, RuleKind::Memplug, plug.root, trace)? {
                Ok((inc, dec, true, None))
            } else if asked == Some(RuleKind::Memplug) && within {
                Ok((inc, dec, false, None))
            } else {
                Ok((
                    inc,
                    dec,
                    false,
                    Some(programs.truth(&eval, RuleKind::Memunplug, unplug.root, trace)?),
                ))
            }
        })();
        let (inc, dec, memplug, memunplug) = match result {
            Ok(v) => v,
            Err(Stop::Fault { fault, .. }) => return Ok(faulted(decision, fault)),
            Err(Stop::Fatal { fatal, node }) => {
                return Err(Fatal {
                    message: fatal_message(rules, fatal, node),
                    node: Some(node),
                    group: Some("memory"),
                });
            }
        };
        let new = next_pool(pages, inc, dec, memplug, memunplug, rules.settings);
        decision.memplug = Some(memplug);
        decision.memunplug = memunplug;
        decision.cmm_inc = Some(inc);
        decision.cmm_dec = Some(dec);
        decision.cmm_pages_new = new;
        Ok(decision)
    }
}

/// The pool after MEMPLUG (shrink by CMM_DEC) or MEMUNPLUG (grow by
/// CMM_INC), negatives counting as 0, clamped into CMM_MIN..CMM_MAX.
#[inline(always)]
fn next_pool(
    pages: i64,
    inc: i64,
    dec: i64,
    memplug: bool,
    memunplug: Option<bool>,
    s: crate::rules::Settings,
) -> i64 {
    // Edge case B: cpuplugd adds and subtracts in C longs, which wrap
    // (two's complement) before the clamp; a wrapped sum comes out
    // negative and is clamped up to CMM_MIN.
    let mut new = pages;
    if memplug {
        new = new.wrapping_sub(dec.max(0));
    } else if memunplug == Some(true) {
        new = new.wrapping_add(inc.max(0));
    }
    if new < s.cmm_min {
        new = s.cmm_min;
    }
    if new > s.cmm_max {
        new = s.cmm_max;
    }
    new
}

fn faulted(mut d: MemDecision, fault: Fault) -> MemDecision {
    d.status = GroupStatus::Fault(fault);
    d.cmm_pages_new = d.cmm_pages;
    d
}

/// The memory group's rules, reset together in the trace.
const MEMORY_RULES: [RuleKind; 4] = [
    RuleKind::CmmInc,
    RuleKind::CmmDec,
    RuleKind::Memplug,
    RuleKind::Memunplug,
];

fn reset<T: Recorder>(trace: &mut T, rules: &RuleSet, kinds: &[RuleKind]) {
    for kind in kinds {
        if let Some(rule) = rules.rule(*kind) {
            trace.reset_range(rule.nodes.clone(), rules.nodes.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::CpuTicks;
    use crate::rules::eval::{NoTrace, Outcome, Trace};
    use crate::rules::fpu::Fault;
    use crate::rules::{SourceFile, SystemFacts, load};

    fn rules(text: &str) -> Arc<RuleSet> {
        let facts = SystemFacts::any_machine(8, "test");
        let outcome = load(&SourceFile::new("t.conf", text.as_bytes().to_vec()), &facts);
        assert!(outcome.refusal.is_none(), "{:?}", outcome.refusal);
        Arc::new(outcome.rules)
    }

    fn sample(time: f64, online: u32, user: u64) -> Sample {
        let ticks = CpuTicks {
            user,
            idle: 1000,
            ..CpuTicks::default()
        };
        let stamp = crate::kernel::Stamp::new(time as i64, 0);
        Sample {
            loadavg: 0.5,
            runnable: 1.0,
            ..Sample::with_memory(stamp, ticks, (online, 8), (10.0, 5.0), 100)
        }
    }

    const BASE: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"1000\"\nCMM_INC=\"10\"\nMEMPLUG=\"0\"\nMEMUNPLUG=\"1\"\n";

    /// A name both the rules and the memory group read is projected once;
    /// each reads its own value, and the group reads the rules' file order
    /// nowhere: MemFree named by a rule (or not) gives the same freemem.
    #[test]
    fn names_the_rules_share_with_the_memory_group_are_read_once() {
        let shared = rules(&format!(
            "{BASE}HOTPLUG=\"vmstat.pgpgin > meminfo.MemTotal\"\nHOTUNPLUG=\"meminfo.MemFree < 0\"\n"
        ));
        let p = Projected::of(&shared);
        assert_eq!(p.meminfo, ["MemTotal", "MemFree"]);
        assert_eq!(p.vmstat, ["pgpgin", "pswpin", "pswpout", "pgpgout"]);
        assert_eq!(p.base_at, [1, 1, 2, 0, 3]);
        let alone = Projected::of(&rules(BASE));
        assert_eq!(alone.meminfo, ["MemFree"]);
        assert_eq!(alone.base_at, [0, 0, 1, 2, 3]);
        let mut a = Engine::new(shared);
        let mut b = Engine::new(rules(BASE));
        for i in 0..6 {
            let s = sample(i as f64, 1, 100 * i);
            let (da, db) = (a.push(&s, &mut NoTrace), b.push(&s, &mut NoTrace));
            assert_eq!(da.map(|d| d.mem), db.map(|d| d.mem));
            assert_eq!(a.symbols().freemem, b.symbols().freemem);
            assert_eq!(a.symbols().apcr, b.symbols().apcr);
        }
        assert_eq!(a.symbols().freemem, 4.0);
    }

    /// /proc/loadavg is read for rules that name a load, in any spelling
    /// and through a variable, and for no others.
    #[test]
    fn loadavg_is_of_interest_only_to_rules_that_name_it() {
        let wants = |hotplug: &str| {
            let text =
                format!("{BASE}v=\"{hotplug}\"\nHOTPLUG=\"v > 1\"\nHOTUNPLUG=\"idle > 100\"\n");
            Engine::new(rules(&text)).interest().loadavg
        };
        assert!(wants("loadavg"));
        assert!(wants("runnable_proc"));
        assert!(wants("cpustat.loadavg[2]"));
        assert!(wants("cpustat.runnable_proc"));
        assert!(!wants("idle + onumcpus"));
        assert!(!wants("meminfo.MemFree"));
        let interest = Engine::new(rules(BASE)).interest();
        assert!(!interest.loadavg && !interest.present_each_interval);
    }

    /// A copy made into an engine copied before (other rules, a history of
    /// another depth, other layouts) decides from then on exactly as a
    /// fresh copy does: the loop check reuses one copy every interval.
    #[test]
    fn a_copy_into_an_earlier_copy_decides_as_a_fresh_copy() {
        let deep = rules(&format!(
            "{BASE}HOTPLUG=\"cpustat.user[0] - cpustat.user[3] > 25\"\nHOTUNPLUG=\"meminfo.MemFree[2] < 1\"\n"
        ));
        let shallow = rules(&format!(
            "{BASE}HOTPLUG=\"onumcpus < 3\"\nHOTUNPLUG=\"vmstat.pgpgin[1] > 5\"\n"
        ));
        let feed = |engine: &mut Engine, from: u64, n: u64| {
            for i in from..from + n {
                let _ = engine.push(&sample(i as f64, 2, i * i * 7), &mut NoTrace);
            }
        };
        let mut source = Engine::new(Arc::clone(&deep));
        let mut earlier = Engine::new(shallow);
        feed(&mut earlier, 0, 9);
        for readings in [0, 1, 2, 6] {
            feed(&mut source, 100, readings);
            let mut reused = earlier.clone();
            reused.clone_from(&source);
            let mut fresh = source.clone();
            assert_eq!(reused.readings(), fresh.readings());
            for i in 0..6 {
                let next = sample(200.0 + f64::from(i), 2 + i % 2, 9_000 + u64::from(i) * 40);
                assert_eq!(
                    reused.push(&next, &mut NoTrace),
                    fresh.push(&next, &mut NoTrace),
                    "after {readings} readings, hypothetical reading {i}"
                );
                assert_eq!(reused.symbols(), fresh.symbols());
            }
            earlier = reused;
        }
    }

    #[test]
    fn trace_marks_short_circuits_and_plug_priority() {
        let r = rules(&format!(
            "{BASE}HOTPLUG=\"onumcpus > 0 | 1 / 0 > 1\"\nHOTUNPLUG=\"1\"\n"
        ));
        let mut engine = Engine::new(Arc::clone(&r));
        let mut trace = Trace::new();
        assert!(engine.push(&sample(1.0, 2, 10), &mut trace).is_none());
        let d = engine
            .push(&sample(2.0, 2, 20), &mut trace)
            .expect("decided");
        let cpu = d.cpu.expect("cpu group on");
        assert_eq!(
            (cpu.hotplug, cpu.hotunplug, cpu.action),
            (Some(true), None, CpuAction::Plug)
        );
        let plug = r.rule(RuleKind::Hotplug).expect("hotplug");
        assert_eq!(trace.outcome(plug.root), Outcome::Truth(true));
        let NodeKindOr(l, rhs) = or_children(&r, plug.root);
        assert_eq!(trace.outcome(l), Outcome::Truth(true));
        assert_eq!(trace.outcome(rhs), Outcome::NotEvaluated);
        let unplug = r.rule(RuleKind::Hotunplug).expect("hotunplug");
        assert_eq!(trace.outcome(unplug.root), Outcome::NotEvaluated);
    }

    struct NodeKindOr(NodeId, NodeId);

    fn or_children(r: &RuleSet, node: NodeId) -> NodeKindOr {
        match r.node(node).kind {
            crate::rules::expr::NodeKind::Binary(_, a, b) => NodeKindOr(a, b),
            _ => panic!("expected a binary node"),
        }
    }

    #[test]
    fn a_fault_is_kept_at_its_node_and_skips_only_its_group() {
        let r = rules(&format!(
            "{BASE}HOTPLUG=\"1 / (onumcpus - 2) > 0\"\nHOTUNPLUG=\"0\"\n"
        ));
        let mut engine = Engine::new(Arc::clone(&r));
        let mut trace = Trace::new();
        engine.push(&sample(1.0, 2, 10), &mut trace);
        let d = engine
            .push(&sample(2.0, 2, 20), &mut trace)
            .expect("decided");
        assert_eq!(
            d.cpu.map(|c| c.status),
            Some(GroupStatus::Fault(Fault::DivisionByZero))
        );
        assert_eq!(
            d.mem.map(|m| (m.status, m.cmm_pages_new)),
            Some((GroupStatus::Ok, 110))
        );
        let plug = r.rule(RuleKind::Hotplug).expect("hotplug");
        let NodeKindOr(div, _) = or_children(&r, plug.root);
        assert_eq!(trace.outcome(div), Outcome::Fault(Fault::DivisionByZero));
        assert_eq!(trace.outcome(plug.root), Outcome::Aborted);
    }

    #[test]
    fn memory_keywords_in_cpu_rules_lag_one_interval() {
        let r = rules(&format!("{BASE}HOTPLUG=\"freemem > 1\"\nHOTUNPLUG=\"0\"\n"));
        let mut engine = Engine::new(r);
        engine.push(&sample(1.0, 2, 10), &mut NoTrace);
        let first = engine
            .push(&sample(2.0, 2, 20), &mut NoTrace)
            .expect("decided");
        // freemem was still 0 when the CPU rules ran; the memory group then set it to 4.
        assert_eq!(first.cpu.and_then(|c| c.hotplug), Some(false));
        let second = engine
            .push(&sample(3.0, 2, 30), &mut NoTrace)
            .expect("decided");
        assert_eq!(second.cpu.and_then(|c| c.hotplug), Some(true));
        assert_eq!(engine.symbols().freemem, 4.0);
    }

    #[test]
    fn a_pinned_variable_is_evaluated_where_rules_name_it() {
        let text = format!(
            "{BASE}busy=\"cpustat.user[0] - cpustat.user[1]\"\nidle_v=\"1\"\nHOTPLUG=\"busy > 5\"\nHOTUNPLUG=\"0\"\n"
        );
        let mut engine = Engine::new(rules(&text));
        engine.push(&sample(1.0, 2, 10), &mut NoTrace);
        assert_eq!(engine.variable("busy"), None, "history still filling");
        engine.push(&sample(2.0, 2, 35), &mut NoTrace);
        assert_eq!(engine.variable("busy"), Some(Ok(25.0)));
        assert_eq!(engine.variable("idle_v"), None, "no rule names it");
    }

    #[test]
    fn a_zero_time_step_skips_the_memory_group() {
        let r = rules(&format!("{BASE}HOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\n"));
        let mut engine = Engine::new(r);
        engine.push(&sample(1.0, 2, 10), &mut NoTrace);
        let d = engine
            .push(&sample(1.0, 2, 20), &mut NoTrace)
            .expect("decided");
        assert_eq!(
            d.mem.map(|m| m.status),
            Some(GroupStatus::Fault(Fault::Invalid))
        );
    }

    fn tick_count() -> impl proptest::strategy::Strategy<Value = u64> {
        use proptest::prelude::*;
        prop_oneof![
            Just(0u64),
            Just(u64::MAX),
            Just(i64::MAX as u64),
            0u64..1000,
            proptest::num::u64::ANY,
        ]
    }

    proptest::proptest! {
        /// The shares are left uncomputed when no rule names them, which
        /// is only the same as cpuplugd if computing them never faults.
        #[test]
        fn the_shares_never_fault(
            before in proptest::array::uniform10(tick_count()),
            after in proptest::array::uniform10(tick_count()),
            online in 1u32..=64,
            unchanged in proptest::bool::ANY,
        ) {
            let r = rules(&format!("{BASE}HOTPLUG=\"idle > 0\"\nHOTUNPLUG=\"0\"\n"));
            let mut engine = Engine::new(r);
            let at = |time: f64, ticks: [u64; 10]| Sample {
                ticks: CpuTicks::from_columns(ticks),
                ..sample(time, online, 0)
            };
            let first = at(1.0, before);
            let second = at(2.0, if unchanged { before } else { after });
            engine.push(&first, &mut NoTrace);
            let d = engine.push(&second, &mut NoTrace).expect("decided");
            proptest::prop_assert_eq!(d.cpu.map(|c| c.status), Some(GroupStatus::Ok));
        }
    }
}
