//! Known patterns, named: situations that experience with cpuplugd on z/VM
//! has a name and a fix for. Each hint carries the evidence that raised
//! it. Some come from the rules alone (`plugtop check`), some need
//! readings (the UI, `plugtop whatif`), one needs the guest's processes.

use std::fmt;
use std::path::Path;

use crate::engine::CpuAction;
use crate::engine::Decision;
use crate::kernel::deltas::tick_delta;
use crate::kernel::{CpuTicks, Sample};
use crate::rules::expr::{CpuStat, Keyword, NodeKind, Reading};
use crate::rules::{RuleKind, RuleSet, SourceFile};

/// A named pattern and why it was raised.
#[derive(Debug, Clone, PartialEq)]
pub struct Hint {
    /// A short stable name.
    pub name: &'static str,
    /// What it means and what to do.
    pub advice: &'static str,
    /// What was seen.
    pub evidence: String,
}

impl fmt::Display for Hint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "hint [{}] {}: {}", self.name, self.evidence, self.advice)
    }
}

const STEAL_CMM: &str = "steal-while-cmm-grows";
/// The /proc/meminfo names the hints read besides the rules' own.
pub const MEMINFO_READ: [&str; 3] = ["Cached", "Shmem", "MemTotal"];
const LOADAVG: &str = "loadavg-cpu-rules";
const STEAL_ACTIVE: &str = "steal-counted-active";
const AFFINITY: &str = "cpu-affinity";
const SHMEM: &str = "shmem-counted-free";

/// Whether a node of `rule` (variables included) satisfies `pred`.
fn uses(rules: &RuleSet, kind: RuleKind, pred: &dyn Fn(&NodeKind) -> bool) -> Option<usize> {
    let rule = rules.rule(kind)?;
    rule.nodes
        .clone()
        .find(|n| pred(&rules.node(*n).kind))
        .map(|_| rule.line)
}

fn reads_meminfo(rules: &RuleSet, kind: RuleKind, name: &str) -> bool {
    uses(rules, kind, &|k| {
        matches!(k, NodeKind::Reading { reading: Reading::Meminfo(i), .. }
            if rules.fields.meminfo.get(*i as usize).is_some_and(|n| n == name))
    })
    .is_some()
}

fn reads_loadavg(k: &NodeKind) -> bool {
    matches!(
        k,
        NodeKind::Keyword(Keyword::Loadavg)
            | NodeKind::Reading {
                reading: Reading::Cpustat(CpuStat::Loadavg),
                ..
            }
    )
}

/// Hints the rules alone raise.
pub fn from_rules(rules: &RuleSet, _file: &SourceFile) -> Vec<Hint> {
    let mut out = Vec::new();
    if let Some(line) = uses(rules, RuleKind::Hotplug, &reads_loadavg)
        .or_else(|| uses(rules, RuleKind::Hotunplug, &reads_loadavg))
    {
        out.push(Hint {
            name: LOADAVG,
            advice: "loadavg reacts slowly (a 1-minute average): the seed paper measured 88% throughput with loadavg rules against 96% with real-load rules (CP_ActiveAVG/CP_idleAVG)",
            evidence: format!("the CPU rules read loadavg (line {line})"),
        });
    }
    let steal = |k: &NodeKind| {
        matches!(
            k,
            NodeKind::Keyword(Keyword::Steal)
                | NodeKind::Reading {
                    reading: Reading::Cpustat(CpuStat::Steal),
                    ..
                }
        )
    };
    if let Some(line) = uses(rules, RuleKind::Hotplug, &steal) {
        out.push(Hint {
            name: STEAL_ACTIVE,
            advice: "steal is time the hypervisor gave to other guests; adding CPUs because of it adds contention: leave steal out of the active share",
            evidence: format!("HOTPLUG reads steal (line {line})"),
        });
    }
    out
}

/// Watches readings for the patterns that need them. What the rules
/// themselves say is found once, when the watch is made.
#[derive(Debug, Clone)]
pub struct PatternWatch {
    /// The line of HOTPLUG when it reads loadavg.
    loadavg_line: Option<usize>,
    /// MEMUNPLUG reads `meminfo.Cached` but not `meminfo.Shmem`.
    cached_as_free: bool,
    busy_run: usize,
    found: Vec<&'static str>,
}

impl PatternWatch {
    /// A watch for `rules`.
    pub fn new(rules: &RuleSet) -> Self {
        PatternWatch {
            loadavg_line: uses(rules, RuleKind::Hotplug, &reads_loadavg),
            cached_as_free: reads_meminfo(rules, RuleKind::Memunplug, "Cached")
                && !reads_meminfo(rules, RuleKind::Memunplug, "Shmem"),
            busy_run: 0,
            found: Vec::new(),
        }
    }

    /// Takes one decided interval; returns hints not raised before.
    pub fn observe(
        &mut self,
        previous: &Sample,
        sample: &Sample,
        decision: &Decision,
    ) -> Vec<Hint> {
        let mut out = Vec::new();
        let fresh = |found: &[&str], name: &str| !found.contains(&name);
        if let Some(d) = tick_delta(&sample.ticks, &previous.ticks) {
            let total = d.total().saturating_sub(d.guest + d.guest_nice) as f64;
            if total > 0.0 {
                self.cpu_hints(&d, total, previous, sample, decision, &mut out);
            }
        }
        if self.cached_as_free
            && fresh(&self.found, SHMEM)
            && let [Some(cached), Some(shmem), Some(total_mem)] =
                MEMINFO_READ.map(|name| sample.meminfo.get(name))
            && shmem > 0.1 * total_mem
        {
            out.push(Hint {
                name: SHMEM,
                advice: "MEMUNPLUG counts all of Cached as free, but shared memory (Java heaps, database buffer pools) sits in Cached and is not free: use Cached - Shmem",
                evidence: format!(
                    "Shmem {:.0} MiB = {:.0}% of Cached, {:.0}% of MemTotal",
                    shmem / 1024.0,
                    100.0 * shmem / cached.max(1.0),
                    100.0 * shmem / total_mem
                ),
            });
        }
        if !out.is_empty() {
            out.retain(|h| fresh(&self.found, h.name));
            self.found.extend(out.iter().map(|h| h.name));
        }
        out
    }

    /// The patterns in the CPU ticks of the interval (`d`, `total` ticks).
    fn cpu_hints(
        &mut self,
        d: &CpuTicks,
        total: f64,
        previous: &Sample,
        sample: &Sample,
        decision: &Decision,
        out: &mut Vec<Hint>,
    ) {
        let steal = d.steal as f64 / total;
        let grew = matches!((previous.cmm_pages, sample.cmm_pages), (Some(a), Some(b)) if b > a);
        if steal > 0.5 && grew && !self.found.contains(&STEAL_CMM) {
            out.push(Hint {
                name: STEAL_CMM,
                advice: "excessive steal while the CMM pool grows: check that the z/VM fix for it (APAR VM65060) is installed",
                evidence: format!(
                    "steal {:.0}% while cmm_pages grew {} → {}",
                    steal * 100.0,
                    previous.cmm_pages.unwrap_or(0),
                    sample.cmm_pages.unwrap_or(0)
                ),
            });
        }
        let busy = (d.user + d.nice + d.system) as f64 / total;
        let held_back = decision.cpu.is_some_and(|c| c.action != CpuAction::Plug)
            && sample.online.count < sample.present.count;
        self.busy_run = if busy > 0.9 && held_back {
            self.busy_run + 1
        } else {
            0
        };
        if self.busy_run >= 10
            && let Some(line) = self.loadavg_line
            && !self.found.contains(&LOADAVG)
        {
            out.push(Hint {
                name: LOADAVG,
                advice: "loadavg reacts slowly: the CPUs are busy but the loadavg rule has not plugged (the seed paper: 88% throughput against 96% for real-load rules)",
                evidence: format!(
                    "busy {:.0}% for {} intervals with {} of {} CPUs online, loadavg {:.2} (HOTPLUG line {line})",
                    busy * 100.0,
                    self.busy_run,
                    sample.online.count,
                    sample.present.count,
                    sample.loadavg
                ),
            });
        }
    }
}

/// Tasks restricted to some CPUs (taskset, a cgroup cpuset) on the guest
/// below `root`: CPU hotplug and task binding do not mix. Kernel threads
/// (per-CPU by design) are not counted.
pub fn affinity(root: &Path, online: &str) -> Option<Hint> {
    let pinned: Vec<String> = crate::kernel::tasks::task_cpus(root)
        .into_iter()
        .filter(|t| t.allowed != online)
        .map(|t| {
            // Any user names their processes: never raw to a terminal.
            let name = crate::report::terminal_safe(&t.name);
            format!("pid {} {name}: {}", t.pid, t.allowed)
        })
        .collect();
    if pinned.is_empty() {
        return None;
    }
    let n = pinned.len();
    let mut pinned = pinned;
    pinned.truncate(3);
    Some(Hint {
        name: AFFINITY,
        advice: "tasks restricted to some CPUs (taskset, a cgroup cpuset): CPU hotplug and task binding do not mix; a task bound to an unplugged CPU loses it",
        evidence: format!(
            "{n} task{} not allowed on all online CPUs ({online}), e.g. {}",
            if n == 1 { "" } else { "s" },
            pinned.join(", ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{CpuDecision, GroupStatus};
    use crate::kernel::fields::FieldTable;
    use crate::kernel::{CpuTicks, Stamp};
    use crate::rules::{SystemFacts, load};

    #[test]
    fn a_planted_process_name_reaches_the_hint_escaped() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let task = dir.path().join("proc/4242");
        std::fs::create_dir_all(&task).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            task.join("status"),
            "Name:\tx\u{1b}]0;PWN\u{7}\u{9b}2J\nVmRSS:\t100 kB\nCpus_allowed_list:\t0\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let hint = affinity(dir.path(), "0-3");
        let evidence = hint.map(|h| h.evidence).unwrap_or_default();
        assert!(evidence.contains("pid 4242 x\\u{1b}]0;PWN"), "{evidence}");
        assert!(!evidence.chars().any(char::is_control), "{evidence:?}");
    }

    fn rules(text: &str) -> (RuleSet, SourceFile) {
        let file = SourceFile::new("t.conf", text.as_bytes().to_vec());
        let facts = SystemFacts::any_machine(4, "test");
        let outcome = load(&file, &facts);
        assert!(outcome.refusal.is_none(), "{:?}", outcome.diagnostics);
        (outcome.rules, file)
    }

    fn sample(secs: i64, ticks: CpuTicks, pool: i64, shmem: f64) -> Sample {
        Sample {
            loadavg: 0.5,
            runnable: 1.0,
            meminfo: FieldTable::from_pairs([
                ("MemTotal", 4_000_000.0),
                ("MemFree", 500_000.0),
                ("Cached", 2_000_000.0),
                ("Shmem", shmem),
            ]),
            vmstat: FieldTable::from_pairs([("pgscan_direct", 0.0)]),
            cmm_pages: Some(pool),
            ..Sample::bare(Stamp::new(secs, 0), ticks, 2, 4)
        }
    }

    fn nothing() -> Decision {
        Decision {
            reading: 5,
            cpu: Some(CpuDecision {
                status: GroupStatus::Ok,
                hotplug: Some(false),
                hotunplug: Some(false),
                action: CpuAction::None,
                limited: false,
                onumcpus: 2.0,
            }),
            mem: None,
            fatal: None,
        }
    }

    const BASE: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nCMM_MIN=\"0\"\nCMM_MAX=\"100000\"\nCMM_INC=\"100\"\nMEMPLUG=\"0\"\n";

    #[test]
    fn rules_alone_name_loadavg_and_steal() {
        let (r, f) = rules(&format!(
            "{BASE}HOTPLUG=\"(loadavg > onumcpus + 0.75) | (cpustat.steal[0] - cpustat.steal[1] > 10)\"\nHOTUNPLUG=\"0\"\nMEMUNPLUG=\"0\"\n"
        ));
        let names: Vec<&str> = from_rules(&r, &f).iter().map(|h| h.name).collect();
        assert_eq!(names, [LOADAVG, STEAL_ACTIVE]);
        let (r, f) = rules(&format!(
            "{BASE}HOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 50\"\nMEMUNPLUG=\"0\"\n"
        ));
        assert!(from_rules(&r, &f).is_empty());
    }

    #[test]
    fn steal_while_the_pool_grows_points_at_the_zvm_fix() {
        let (r, _) = rules(&format!(
            "{BASE}HOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\nMEMUNPLUG=\"1\"\n"
        ));
        let before = sample(10, CpuTicks::default(), 1000, 0.0);
        let stolen = CpuTicks {
            user: 40,
            steal: 60,
            ..CpuTicks::default()
        };
        let mut w = PatternWatch::new(&r);
        let hints = w.observe(&before, &sample(11, stolen, 2000, 0.0), &nothing());
        assert_eq!(hints.len(), 1, "{hints:?}");
        assert!(hints[0].to_string().contains("VM65060"), "{}", hints[0]);
        assert!(
            hints[0]
                .evidence
                .contains("steal 60% while cmm_pages grew 1000 → 2000")
        );
        // Raised once.
        let again = sample(
            12,
            CpuTicks {
                user: 80,
                steal: 120,
                ..CpuTicks::default()
            },
            3000,
            0.0,
        );
        assert!(
            w.observe(&sample(11, stolen, 2000, 0.0), &again, &nothing())
                .is_empty()
        );
    }

    #[test]
    fn shared_memory_counted_as_free_is_named() {
        let cached_only = format!(
            "{BASE}HOTPLUG=\"0\"\nHOTUNPLUG=\"0\"\nMEMUNPLUG=\"(meminfo.MemFree + meminfo.Cached) > meminfo.MemTotal / 10\"\n"
        );
        let (r, _) = rules(&cached_only);
        let t = |n: u64| CpuTicks {
            user: n,
            idle: n,
            ..CpuTicks::default()
        };
        let mut w = PatternWatch::new(&r);
        let hints = w.observe(
            &sample(10, t(10), 0, 1_000_000.0),
            &sample(11, t(20), 0, 1_000_000.0),
            &nothing(),
        );
        assert_eq!(hints.len(), 1, "{hints:?}");
        assert!(
            hints[0]
                .evidence
                .contains("Shmem 977 MiB = 50% of Cached, 25% of MemTotal")
        );
        // With Shmem taken out, nothing to say.
        let (r, _) =
            rules(&cached_only.replace("meminfo.Cached)", "meminfo.Cached - meminfo.Shmem)"));
        let mut w = PatternWatch::new(&r);
        assert!(
            w.observe(
                &sample(10, t(10), 0, 1_000_000.0),
                &sample(11, t(20), 0, 1_000_000.0),
                &nothing()
            )
            .is_empty()
        );
    }

    #[test]
    fn pinned_tasks_are_found_below_a_root() {
        let dir = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        let task = |pid: u32, name: &str, allowed: &str, user: bool| {
            let p = dir.path().join(format!("proc/{pid}"));
            assert!(std::fs::create_dir_all(&p).is_ok());
            let rss = if user { "VmRSS:\t  1000 kB\n" } else { "" };
            let text = format!("Name:\t{name}\nState:\tS\n{rss}Cpus_allowed_list:\t{allowed}\n");
            assert!(std::fs::write(p.join("status"), text).is_ok());
        };
        task(1, "init", "0-3", true);
        task(12, "ksoftirqd/1", "1", false);
        assert_eq!(affinity(dir.path(), "0-3"), None);
        task(4242, "java", "0-1", true);
        let hint = affinity(dir.path(), "0-3").unwrap_or_else(|| panic!("not found"));
        assert_eq!(
            hint.evidence,
            "1 task not allowed on all online CPUs (0-3), e.g. pid 4242 java: 0-1"
        );
    }
}
