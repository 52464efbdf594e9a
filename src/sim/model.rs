//! The simulated guest. Advanced in fixed steps of 100 ms; deterministic
//! (the only jitter comes from a seeded generator). Units: CPU time in
//! USER_HZ ticks (100 per second), memory in 4 KiB pages.

use std::sync::Arc;

use super::scenario::{Phase, Scenario, seconds};
use crate::kernel::cpulist::CpuList;
use crate::kernel::fields::{FieldTable, Layout};
use crate::kernel::{CpuState, CpuTicks, Sample, Stamp};

/// Ticks per second, as /proc/stat counts them.
pub const HZ: f64 = 100.0;
/// One model step.
pub const STEP: f64 = 0.1;
const PAGE_KIB: f64 = 4.0;
const PAGES_PER_MIB: f64 = 256.0;
/// How fast a workload's anonymous memory grows, MiB/s.
const ANON_GROWTH_MIB_S: f64 = 400.0;
/// Pages direct reclaim frees per second of stall (a slow path).
const DIRECT_RECLAIM_PAGES_S: f64 = 50_000.0;
/// Pages swapped per second of stall.
const SWAP_PAGES_S: f64 = 5_000.0;
/// Pages of its working set a workload touches per CPU-second that would
/// fault if all of it were in swap. Only the share `s²` of them does when
/// the share `s` is swapped: reclaim swaps the coldest pages first, so a
/// small shortfall costs little and a large one a lot.
const FAULT_TOUCH_PAGES: f64 = 500.0;
/// How long a thread waits for one page read back from swap, seconds (a
/// DASD or VDISK read, queueing included). With [`FAULT_TOUCH_PAGES`] a
/// guest with 24% of its working set in swap (0.8 × WS) loses about 5% of
/// its work, with 35% (0.65 × WS) about 11%.
const SWAP_IN_WAIT_S: f64 = 0.002;
/// When the simulated clock starts: a midnight (UTC), so clocks read as
/// time into the scenario.
pub const EPOCH: i64 = 1_699_920_000;
/// Column order of the tick counters.
const USER: usize = 0;
const NICE: usize = 1;
const SYSTEM: usize = 2;
const IDLE: usize = 3;
const IOWAIT: usize = 4;
const STEAL: usize = 7;

/// What the model accumulates for reports.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// CPU-seconds the workload wanted.
    pub demand_cpu_s: f64,
    /// CPU-seconds it got (after steal).
    pub used_cpu_s: f64,
    /// CPU-seconds of work that had to wait (not enough CPUs, or steal).
    pub unmet_cpu_s: f64,
    /// Seconds threads stalled in direct reclaim or swapping, and waiting
    /// for pages faulted back from swap.
    pub stall_s: f64,
    /// CPU-seconds of work lost to faults on swapped pages.
    pub fault_lost_cpu_s: f64,
    /// Pages swapped in and out (pswpin, pswpout).
    pub swap_in_pages: f64,
    pub swap_out_pages: f64,
    /// Steps in which an allocation had to reclaim directly.
    pub direct_stalls: u64,
    /// Work done, and the work an ideally sized guest would have done.
    pub achieved: f64,
    pub ideal: f64,
    /// Online CPUs integrated over time (CPU-seconds), and the time itself.
    pub online_cpu_s: f64,
    pub seconds: f64,
}

/// The numbers of the running phase one step uses, copied out of it:
/// cloning the phase cloned its name and start, four allocations a step,
/// which cost more than the model's arithmetic.
#[derive(Debug, Clone, Copy)]
struct Work {
    threads: f64,
    system_share: f64,
    nice_share: f64,
    io_mib_per_s: f64,
    iowait_share: f64,
    working_set_mib: f64,
    shared_mib: f64,
}

impl Work {
    /// No phase running yet: no work, no memory.
    const IDLE: Work = Work {
        threads: 0.0,
        system_share: 0.1,
        nice_share: 0.0,
        io_mib_per_s: 0.0,
        iowait_share: 0.0,
        working_set_mib: 0.0,
        shared_mib: 0.0,
    };

    fn of(p: &Phase) -> Work {
        Work {
            threads: p.threads,
            system_share: p.system_share,
            nice_share: p.nice_share,
            io_mib_per_s: p.io_mib_per_s,
            iowait_share: p.iowait_share,
            working_set_mib: p.working_set_mib,
            shared_mib: p.shared_mib,
        }
    }
}

/// The simulated guest.
#[derive(Debug, Clone)]
pub struct Guest {
    scenario: Scenario,
    old_kernel: bool,
    /// Seconds since the start (always `steps × STEP`, so long runs do not drift).
    pub t: f64,
    steps: u64,
    /// The workload has ended ([`Guest::go_idle`]): no phase runs any more.
    idle: bool,
    online: Vec<bool>,
    ticks: Vec<[f64; 10]>,
    load: [f64; 3],
    next_load_update: f64,
    runnable: f64,
    // Memory, in pages.
    total: f64,
    pool: f64,
    anon: f64,
    shmem: f64,
    cache: f64,
    swapped: f64,
    swap_total: f64,
    min: f64,
    low: f64,
    high: f64,
    // /proc/vmstat counters.
    pgpgin: f64,
    pgpgout: f64,
    pswpin: f64,
    pswpout: f64,
    scan_kswapd: f64,
    scan_direct: f64,
    steal_kswapd: f64,
    steal_direct: f64,
    stall_this_step: f64,
    /// CPU-seconds of work the faults on swapped pages cost this step.
    fault_loss_this_step: f64,
    pub stats: Stats,
    rng: u64,
    meminfo: Arc<Layout>,
    vmstat: Arc<Layout>,
}

/// The kernel's reserve: about 2% of memory plus 64 MiB.
pub fn mem_total_pages(memory_mib: f64) -> f64 {
    ((memory_mib - 64.0) * 0.98 * PAGES_PER_MIB).floor()
}

/// `min_free_kbytes` as the kernel sizes it: sqrt(16 × memory in KiB), 128..65536.
pub fn min_free_kib(total_kib: f64) -> f64 {
    (16.0 * total_kib).sqrt().clamp(128.0, 65_536.0)
}

impl Guest {
    /// A guest at time 0 of `scenario`.
    pub fn new(scenario: &Scenario, old_kernel: bool) -> Self {
        let total = mem_total_pages(scenario.memory_mib);
        let min = min_free_kib(total * PAGE_KIB) / PAGE_KIB;
        let online = (0..scenario.cpus).map(|i| i < scenario.online).collect();
        let mut vm_names = vec!["nr_free_pages", "pgpgin", "pgpgout", "pswpin", "pswpout"];
        if old_kernel {
            vm_names.extend([
                "pgsteal_dma",
                "pgsteal_normal",
                "pgsteal_movable",
                "pgscan_kswapd_dma",
                "pgscan_kswapd_normal",
                "pgscan_kswapd_movable",
                "pgscan_direct_dma",
                "pgscan_direct_normal",
                "pgscan_direct_movable",
                "kswapd_steal",
            ]);
        } else {
            vm_names.extend([
                "pgsteal_kswapd",
                "pgsteal_direct",
                "pgscan_kswapd",
                "pgscan_direct",
            ]);
        }
        let mem_names = [
            "MemTotal",
            "MemFree",
            "Buffers",
            "Cached",
            "SwapCached",
            "Shmem",
            "SwapTotal",
            "SwapFree",
        ];
        Guest {
            old_kernel,
            t: 0.0,
            steps: 0,
            idle: false,
            ticks: vec![[0.0; 10]; scenario.cpus as usize],
            online,
            load: [0.0; 3],
            next_load_update: 5.0,
            runnable: 0.0,
            total,
            pool: 0.0,
            anon: 0.0,
            shmem: 0.0,
            cache: 0.0,
            swapped: 0.0,
            swap_total: (scenario.memory_mib * 0.5).min(4096.0) * PAGES_PER_MIB,
            min,
            low: min * 1.25,
            high: min * 1.5,
            pgpgin: 0.0,
            pgpgout: 0.0,
            pswpin: 0.0,
            pswpout: 0.0,
            scan_kswapd: 0.0,
            scan_direct: 0.0,
            steal_kswapd: 0.0,
            steal_direct: 0.0,
            stall_this_step: 0.0,
            fault_loss_this_step: 0.0,
            stats: Stats::default(),
            rng: scenario
                .seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407)
                | 1,
            meminfo: Arc::new(Layout::new(
                mem_names.iter().map(|n| Box::from(*n)).collect(),
            )),
            vmstat: Arc::new(Layout::new(
                vm_names.iter().map(|n| Box::from(*n)).collect(),
            )),
            scenario: scenario.clone(),
        }
    }

    /// Free pages: what no one holds.
    pub fn free(&self) -> f64 {
        (self.total - self.pool - self.anon - self.shmem - self.cache).max(0.0)
    }

    /// MemTotal less the CMM pool: the memory the guest can use (the paper's Linux view), MiB.
    pub fn guest_mib(&self) -> f64 {
        (self.total - self.pool) / PAGES_PER_MIB
    }

    /// The workload's memory (anonymous and shared), MiB.
    pub fn working_set_mib(&self) -> f64 {
        self.phase()
            .map_or(0.0, |p| p.working_set_mib + p.shared_mib)
    }

    /// The part of the working set in swap, MiB.
    pub fn swapped_mib(&self) -> f64 {
        self.swapped / PAGES_PER_MIB
    }

    /// The CMM pool, pages.
    pub fn pool(&self) -> i64 {
        self.pool as i64
    }

    /// CPUs online now.
    pub fn online_count(&self) -> u32 {
        self.online.iter().filter(|o| **o).count() as u32
    }

    /// The 1, 5 and 15-minute load averages, unrounded.
    pub fn loadavg(&self) -> [f64; 3] {
        self.load
    }

    /// Pages scanned so far by kswapd and by direct reclaim.
    pub fn scans(&self) -> (f64, f64) {
        (self.scan_kswapd, self.scan_direct)
    }

    /// The min, low and high watermarks, pages.
    pub fn watermarks(&self) -> (f64, f64, f64) {
        (self.min, self.low, self.high)
    }

    /// The scenario being played.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The phase running now, with a pulse's off half removed; none once
    /// the guest went idle.
    pub fn phase(&self) -> Option<&Phase> {
        if self.idle {
            return None;
        }
        self.scenario.phase_at(self.t)
    }

    /// Ends the workload: from now on no phase runs, so the online CPUs
    /// count idle ticks, the load average decays, and memory stays as it
    /// is (nothing grows, nothing is freed), whatever the scenario says.
    /// What `sim --serve` plays after the scenario's end.
    pub fn go_idle(&mut self) {
        self.idle = true;
    }

    /// Whether [`Guest::go_idle`] ended the workload.
    pub fn is_idle(&self) -> bool {
        self.idle
    }

    fn jitter(&mut self) -> f64 {
        if !self.scenario.jitter {
            return 1.0;
        }
        // xorshift64*: small, deterministic noise in [0.97, 1.03).
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = (self.rng.wrapping_mul(0x2545F4914F6CDD1D) >> 11) as f64 / (1u64 << 53) as f64;
        0.97 + 0.06 * r
    }

    /// The CPU demand now, in CPUs (0 in a pulse's off half).
    pub fn demand(&self) -> f64 {
        let Some(p) = self.phase() else { return 0.0 };
        if p.pulse_period_s > 0.0 {
            let start = seconds(&p.start).unwrap_or(0.0);
            if (self.t - start).rem_euclid(p.pulse_period_s) >= p.pulse_period_s / 2.0 {
                return 0.0;
            }
        }
        p.threads * p.cpu_per_thread
    }

    /// Advances the model by `seconds`, in fixed steps.
    pub fn advance(&mut self, seconds: f64) {
        let steps = (seconds / STEP).round() as u64;
        for _ in 0..steps {
            self.step();
        }
    }

    fn step(&mut self) {
        let phase = self.phase().map(Work::of);
        let demand = self.demand() * self.jitter();
        let online = self.online.iter().filter(|o| **o).count();
        let n = online.max(1) as f64;
        let contention = self.scenario.contention.clamp(0.0, 0.95);
        let run = demand.min(n);
        let stolen = run * contention;
        let effective = run - stolen;
        self.stall_this_step = 0.0;
        self.fault_loss_this_step = 0.0;
        if let Some(p) = &phase {
            self.memory(p, effective);
        }
        let p = phase.unwrap_or(Work::IDLE);
        let iowait = ((n - run) * p.iowait_share.clamp(0.0, 1.0))
            .min(n - run)
            .max(0.0);
        let per_cpu = |x: f64| x / n * HZ * STEP;
        for (t, _) in self
            .ticks
            .iter_mut()
            .zip(&self.online)
            .filter(|(_, online)| **online)
        {
            let work = per_cpu(effective);
            t[SYSTEM] += work * p.system_share;
            t[NICE] += work * p.nice_share;
            t[USER] += work * (1.0 - p.system_share - p.nice_share).max(0.0);
            t[STEAL] += per_cpu(stolen);
            t[IOWAIT] += per_cpu(iowait);
            t[IDLE] += per_cpu(n - run - iowait);
        }
        // Memory stalls take their share of the time the work could run,
        // and faults on swapped pages the work their waits cost.
        let stall_share = (self.stall_this_step / STEP).min(0.9);
        self.stats.demand_cpu_s += demand * STEP;
        self.stats.used_cpu_s += effective * STEP;
        self.stats.unmet_cpu_s += (demand - effective).max(0.0) * STEP;
        self.stats.ideal += demand * STEP;
        self.stats.achieved +=
            (effective * (1.0 - stall_share) * STEP - self.fault_loss_this_step).max(0.0);
        self.stats.stall_s += self.stall_this_step + self.fault_loss_this_step;
        self.stats.fault_lost_cpu_s += self.fault_loss_this_step;
        self.stats.swap_in_pages = self.pswpin;
        self.stats.swap_out_pages = self.pswpout;
        self.stats.online_cpu_s += online as f64 * STEP;
        self.runnable = p.threads * if demand > 0.0 { 1.0 } else { 0.0 } + iowait;
        self.steps += 1;
        self.t = self.steps as f64 * STEP;
        self.stats.seconds = self.t;
        if self.t + 1e-9 >= self.next_load_update {
            self.next_load_update += 5.0;
            for (l, window) in self.load.iter_mut().zip([60.0f64, 300.0, 900.0]) {
                let e = (-5.0 / window).exp();
                *l = *l * e + self.runnable * (1.0 - e);
            }
        }
    }

    /// Makes room for `pages` taken from free memory, as the page allocator
    /// does: below the min watermark the allocating thread reclaims directly
    /// (and stalls), page cache first; then anonymous pages go to swap when
    /// `may_swap` (the cmm driver allocates with GFP_NOIO, so it cannot).
    fn allocate(&mut self, pages: f64, may_swap: bool) {
        let after = self.free() - pages;
        if after < self.min {
            // Direct reclaim: the allocating thread frees pages itself.
            let need = self.low - after;
            let from_cache = need.min(self.cache);
            self.cache -= from_cache;
            self.scan_direct += from_cache * 1.6;
            self.steal_direct += from_cache;
            self.stall_this_step += from_cache / DIRECT_RECLAIM_PAGES_S;
            let rest = need - from_cache;
            if rest > 0.0 && may_swap {
                let out = rest
                    .min(self.anon)
                    .min(self.swap_total - self.swapped)
                    .max(0.0);
                self.anon -= out;
                self.swapped += out;
                self.pswpout += out;
                self.scan_direct += rest * 2.0;
                self.stall_this_step += out / SWAP_PAGES_S;
            } else if rest > 0.0 {
                // Scanned the anonymous lists and found nothing it may free.
                self.scan_direct += rest;
            }
            self.stats.direct_stalls += 1;
        }
    }

    fn kswapd(&mut self) {
        if self.free() >= self.low {
            return;
        }
        let need = self.high - self.free();
        let from_cache = need.min(self.cache);
        self.cache -= from_cache;
        self.scan_kswapd += from_cache * 1.2;
        self.steal_kswapd += from_cache;
        let rest = need - from_cache;
        if rest > 0.0 {
            let out = rest
                .min(self.anon)
                .min(self.swap_total - self.swapped)
                .max(0.0);
            self.anon -= out;
            self.swapped += out;
            self.pswpout += out;
            self.scan_kswapd += rest * 2.0;
        }
    }

    /// One step of the workload's memory: growth towards its working set,
    /// pages back from swap, faults on what stays there (`cpus` of work
    /// running), page cache, kswapd.
    fn memory(&mut self, p: &Work, cpus: f64) {
        let target_anon = (p.working_set_mib * PAGES_PER_MIB - self.swapped).max(0.0);
        let target_shmem = p.shared_mib * PAGES_PER_MIB;
        let grow = ANON_GROWTH_MIB_S * PAGES_PER_MIB * STEP;
        if self.anon < target_anon {
            let pages = (target_anon - self.anon).min(grow);
            self.allocate(pages, true);
            self.anon += pages.min(self.total - self.pool - self.shmem - self.cache - self.anon);
        } else {
            self.anon = target_anon;
        }
        if self.shmem < target_shmem {
            let pages = (target_shmem - self.shmem).min(grow);
            self.allocate(pages, true);
            self.shmem += pages;
        } else {
            self.shmem = target_shmem;
        }
        if self.swapped > 0.0 && p.working_set_mib * PAGES_PER_MIB > self.anon {
            // Touched pages come back from swap while memory allows.
            let back = self
                .swapped
                .min(SWAP_PAGES_S * STEP)
                .min((self.free() - self.high).max(0.0));
            self.swapped -= back;
            self.anon += back;
            self.pswpin += back;
            self.stall_this_step += back / SWAP_PAGES_S;
        }
        if p.working_set_mib * PAGES_PER_MIB < self.anon + self.swapped {
            self.swapped = (p.working_set_mib * PAGES_PER_MIB - self.anon).max(0.0);
        }
        self.fault_in(p, cpus);
        let io = p.io_mib_per_s * PAGES_PER_MIB * STEP;
        if io > 0.0 {
            let fits = io.min((self.free() - self.low).max(0.0));
            self.cache += fits;
            self.pgpgin += io * PAGE_KIB;
            self.pgpgout += io * PAGE_KIB * 0.3;
            // Cache beyond what fits pushes kswapd to drop older cache.
            self.scan_kswapd += (io - fits) * 1.2;
            self.steal_kswapd += io - fits;
        }
        self.kswapd();
    }

    /// Faults on the swapped part of the working set: a thread that touches
    /// a page in swap waits for it ([`SWAP_IN_WAIT_S`]), and the page needs
    /// a free one, which reclaim makes by swapping another out (directly,
    /// stalling, below the min watermark; else kswapd at the step's end).
    /// So a guest smaller than its working set thrashes: pswpin and pswpout
    /// grow together and the work done falls with the share swapped.
    fn fault_in(&mut self, p: &Work, cpus: f64) {
        let ws = (p.working_set_mib + p.shared_mib) * PAGES_PER_MIB;
        if self.swapped <= 0.0 || ws <= 0.0 || cpus <= 0.0 {
            return;
        }
        let share = (self.swapped / ws).min(1.0);
        // Faults per CPU-second of work done; work done w and faults f
        // solve w = running - f × wait and f = per_cpu_s × w.
        let per_cpu_s = FAULT_TOUCH_PAGES * share * share;
        let running = cpus * (1.0 - (self.stall_this_step / STEP).min(0.9)) * STEP;
        let done = running / (1.0 + per_cpu_s * SWAP_IN_WAIT_S);
        let faults = (per_cpu_s * done).min(self.swapped);
        self.fault_loss_this_step = faults * SWAP_IN_WAIT_S;
        self.allocate(faults, true);
        let room = (self.total - self.pool - self.shmem - self.cache - self.anon).max(0.0);
        let back = faults.min(room);
        self.swapped -= back;
        self.anon += back;
        self.pswpin += back;
    }

    /// Puts CPU `id` online or offline; false if there is no such CPU.
    pub fn set_cpu(&mut self, id: u32, online: bool) -> bool {
        match self.online.get_mut(id as usize) {
            Some(o) => {
                *o = online;
                true
            }
            None => false,
        }
    }

    /// Whether CPU `id` is online.
    pub fn cpu_online(&self, id: u32) -> Option<bool> {
        self.online.get(id as usize).copied()
    }

    /// Sets `cmm_pages`: growing the pool takes pages from free memory
    /// (reclaiming when it must, as the cmm driver's allocations do);
    /// shrinking it gives them back.
    pub fn set_pool(&mut self, pages: i64) {
        let target = (pages.max(0) as f64).min(self.total - self.min);
        if target > self.pool {
            let more = target - self.pool;
            self.allocate(more, false);
            // Its allocations may not dip below the min watermark.
            let room = (self.free() - self.min).max(0.0);
            self.pool += more.min(room);
        } else {
            self.pool = target;
        }
    }

    /// The guest as /proc and /sys would show it now.
    pub fn sample(&self) -> Sample {
        let ticks = |t: &[f64; 10]| CpuTicks::from_columns(t.map(|v| v.floor() as u64));
        let mut all = [0.0f64; 10];
        for t in &self.ticks {
            for (a, b) in all.iter_mut().zip(t) {
                *a += b;
            }
        }
        let per_cpu = (0..self.online.len())
            .filter(|i| self.online[*i])
            .map(|i| (i as u32, ticks(&self.ticks[i])))
            .collect();
        let kib = |pages: f64| (pages * PAGE_KIB).floor();
        let meminfo = FieldTable::new(
            Arc::clone(&self.meminfo),
            vec![
                kib(self.total),
                kib(self.free()),
                0.0,
                kib(self.cache + self.shmem),
                0.0,
                kib(self.shmem),
                kib(self.swap_total),
                kib(self.swap_total - self.swapped),
            ],
        );
        let mut vm = vec![
            self.free().floor(),
            self.pgpgin.floor(),
            self.pgpgout.floor(),
            self.pswpin.floor(),
            self.pswpout.floor(),
        ];
        if self.old_kernel {
            vm.extend([
                0.0,
                (self.steal_kswapd + self.steal_direct).floor(),
                0.0,
                0.0,
                self.scan_kswapd.floor(),
                0.0,
                0.0,
                self.scan_direct.floor(),
                0.0,
                self.steal_kswapd.floor(),
            ]);
        } else {
            vm.extend([
                self.steal_kswapd.floor(),
                self.steal_direct.floor(),
                self.scan_kswapd.floor(),
                self.scan_direct.floor(),
            ]);
        }
        let ids: Vec<u32> = (0..self.online.len() as u32)
            .filter(|i| self.online[*i as usize])
            .collect();
        let micros = (self.t * 1e6).round() as i64;
        Sample {
            stamp: Stamp {
                micros: EPOCH * 1_000_000 + micros,
            },
            ticks: ticks(&all),
            per_cpu,
            loadavg: (self.load[0] * 100.0).round() / 100.0,
            runnable: self.runnable.ceil().max(1.0),
            loadavg_text: None,
            meminfo,
            vmstat: FieldTable::new(Arc::clone(&self.vmstat), vm),
            online: CpuList {
                count: i32::try_from(ids.len()).unwrap_or(i32::MAX),
                ids: ids.into(),
            },
            present: CpuList {
                count: i32::try_from(self.online.len()).unwrap_or(i32::MAX),
                ids: (0..self.online.len() as u32).collect(),
            },
            possible: None,
            cpus: (0..self.online.len() as u32)
                .map(|id| CpuState {
                    id,
                    online: Some(self.online[id as usize]),
                    configured: Some(true),
                })
                .collect(),
            cmm_pages: Some(self.pool as i64),
            polarization: None,
            proc_bytes: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(phases: &str) -> Scenario {
        let text = format!(
            "name = \"t\"\ncpus = 4\nonline = 4\nmemory_mib = 4096\nduration = \"10:00\"\n{phases}"
        );
        match Scenario::parse("test", &text) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        }
    }

    const STEADY: &str = "[[phases]]\nstart = \"0\"\nthreads = 2\ncpu_per_thread = 1\nsystem_share = 0.25\nworking_set_mib = 100\n";

    #[test]
    fn the_shortest_pulse_a_scenario_takes_is_two_steps() {
        assert_eq!(super::super::scenario::SHORTEST_PULSE, 2.0 * STEP);
    }

    #[test]
    fn an_idle_guest_counts_idle_ticks_and_keeps_its_memory() {
        let mut g = Guest::new(&scenario(STEADY), false);
        g.advance(60.0);
        let (ticks, free, anon, load) = (g.ticks.clone(), g.free(), g.anon, g.loadavg()[0]);
        g.go_idle();
        assert!(g.is_idle() && g.phase().is_none());
        g.advance(60.0);
        for (before, now) in ticks.iter().zip(&g.ticks) {
            for column in [USER, SYSTEM, NICE, STEAL, IOWAIT] {
                assert!(
                    (now[column] - before[column]).abs() < 1e-6,
                    "{before:?} {now:?}"
                );
            }
            // Each online CPU: 60 s of idle at USER_HZ.
            assert!((now[IDLE] - before[IDLE] - 60.0 * HZ).abs() < 1e-6);
        }
        assert_eq!((g.free(), g.anon), (free, anon), "memory as at the end");
        assert!(g.loadavg()[0] < load, "the load average decays");
        assert!((g.t - 120.0).abs() < 1e-9);
    }

    #[test]
    fn loadavg_decays_like_the_kernel() {
        let mut g = Guest::new(&scenario(STEADY), false);
        g.advance(60.0);
        // 12 updates of 5 s towards 2 runnable threads: 2 (1 - e^-1).
        let expected = 2.0 * (1.0 - (-1.0f64).exp());
        assert!(
            (g.loadavg()[0] - expected).abs() < 1e-9,
            "{:?}",
            g.loadavg()
        );
        let five = 2.0 * (1.0 - (-60.0f64 / 300.0).exp());
        assert!((g.loadavg()[1] - five).abs() < 1e-9);
        // Nothing between updates: 4.9 s more leaves it unchanged.
        let before = g.loadavg();
        g.advance(4.9);
        assert_eq!(g.loadavg(), before);
    }

    #[test]
    fn ticks_add_up_to_elapsed_time_times_online_cpus() {
        let mut g = Guest::new(&scenario(STEADY), false);
        g.advance(30.0);
        g.set_cpu(3, false);
        g.advance(20.0);
        let s = g.sample();
        // The aggregate line sums every possible CPU, the time of cpu3 while
        // it was online included: 30 s on 4 CPUs and 20 s on 3, at 100 Hz.
        let all = s.ticks.total();
        let expected = (30 * 4 + 20 * 3) * 100;
        assert!(all <= expected && all + 10 >= expected, "{all}");
        // Each online CPU ran the whole 50 s; floors lose < 1 tick per column.
        let total: u64 = s.per_cpu.iter().map(|(_, t)| t.total()).sum();
        assert!(total <= 15_000 && total + 3 * 10 >= 15_000, "{total}");
        // Offline CPUs are missing from /proc/stat, as on Linux.
        assert_eq!(s.per_cpu.len(), 3);
        // Demand 2 on 4 CPUs: about half the time idle, a quarter of the work in the kernel.
        let idle: u64 = s.per_cpu.iter().map(|(_, t)| t.columns()[3]).sum();
        assert!(
            (idle as f64 / total as f64 - 0.39).abs() < 0.05,
            "{idle}/{total}"
        );
    }

    #[test]
    fn watermarks_follow_min_free_kbytes() {
        // 4096 MiB less the reserve: floor(4032 × 0.98 × 256) pages.
        assert_eq!(mem_total_pages(4096.0), 1_011_548.0);
        let min_kib = min_free_kib(1_011_548.0 * 4.0);
        assert!((min_kib - 8046.06).abs() < 0.01, "{min_kib}");
        assert_eq!(min_free_kib(1000.0), 128.0);
        let g = Guest::new(&scenario(STEADY), false);
        let (min, low, high) = g.watermarks();
        assert!((min - min_kib / 4.0).abs() < 1e-9);
        assert!((low - min * 1.25).abs() < 1e-9 && (high - min * 1.5).abs() < 1e-9);
    }

    #[test]
    fn page_cache_pressure_wakes_kswapd_but_not_direct_reclaim() {
        let io =
            "[[phases]]\nstart = \"0\"\nthreads = 1\nio_mib_per_s = 200\nworking_set_mib = 200\n";
        let mut g = Guest::new(&scenario(io), false);
        g.advance(60.0);
        let (kswapd, direct) = g.scans();
        assert!(kswapd > 0.0, "the cache outgrew memory: kswapd must scan");
        assert_eq!(direct, 0.0);
        let (_, low, _) = g.watermarks();
        assert!(g.free() >= low - 1.0, "kswapd keeps free above low");
    }

    #[test]
    fn cmm_pages_moves_memory_between_free_and_the_pool() {
        let mut g = Guest::new(&scenario(STEADY), false);
        g.advance(5.0);
        let (free, guest) = (g.free(), g.guest_mib());
        let total = g.sample().meminfo.get("MemTotal");
        assert!(total.is_some());
        g.set_pool(25_600);
        assert_eq!(g.pool(), 25_600);
        assert!((g.free() - (free - 25_600.0)).abs() < 1e-6);
        assert!((g.guest_mib() - (guest - 100.0)).abs() < 1e-6);
        assert_eq!(
            g.sample().meminfo.get("MemTotal"),
            total,
            "MemTotal never changes"
        );
        assert_eq!(g.sample().cmm_pages, Some(25_600));
        g.set_pool(0);
        assert!((g.free() - free).abs() < 1e-6);
    }

    #[test]
    fn a_pool_larger_than_free_memory_reclaims_directly() {
        let io =
            "[[phases]]\nstart = \"0\"\nthreads = 1\nio_mib_per_s = 200\nworking_set_mib = 200\n";
        let mut g = Guest::new(&scenario(io), false);
        g.advance(30.0);
        let cache = g.cache;
        let free = g.free();
        assert!(cache > 100_000.0);
        g.set_pool((free + 50_000.0) as i64);
        let (_, direct) = g.scans();
        assert!(direct > 0.0, "the cmm allocation had to reclaim");
        assert!(g.cache < cache, "page cache is reclaimed first");
        assert_eq!(g.stats.direct_stalls, 1);
    }

    #[test]
    fn the_pool_cannot_push_the_workload_into_swap() {
        let big = "[[phases]]\nstart = \"0\"\nthreads = 1\nworking_set_mib = 3000\n";
        let mut g = Guest::new(&scenario(big), false);
        g.advance(20.0);
        let swap_free = g.sample().meminfo.get("SwapFree");
        g.set_pool(1_000_000);
        // GFP_NOIO: the cmm driver reclaims no anonymous memory and stops at min.
        assert_eq!(g.sample().meminfo.get("SwapFree"), swap_free);
        let (min, _, _) = g.watermarks();
        assert!((g.free() - min).abs() < 1.0, "{} vs {min}", g.free());
        assert!(g.pool() < 1_000_000);
    }

    /// A guest held at `ratio` × its 2000 MiB working set by the pool
    /// (set before the workload grows): its throughput over two minutes
    /// once the working set has settled, and the guest.
    fn held_at(ratio: f64) -> (f64, Guest) {
        let big = "[[phases]]\nstart = \"0\"\nthreads = 2\nworking_set_mib = 2000\n";
        let mut g = Guest::new(&scenario(big), false);
        let total = mem_total_pages(4096.0);
        g.set_pool((total - ratio * 2000.0 * PAGES_PER_MIB) as i64);
        g.advance(60.0);
        let before = g.stats;
        g.advance(120.0);
        let done = (g.stats.achieved - before.achieved) / (g.stats.ideal - before.ideal);
        (done, g)
    }

    #[test]
    fn a_guest_short_of_its_working_set_thrashes_and_loses_work_with_the_shortfall() {
        let (fits, roomy) = held_at(1.04);
        let (short, tight) = held_at(0.8);
        let (shorter, tighter) = held_at(0.65);
        assert!(
            fits > 0.999,
            "a guest that holds its working set loses nothing: {fits}"
        );
        assert_eq!(roomy.swapped_mib(), 0.0);
        assert!(short < 0.98 && short > 0.9, "0.8 × WS: {short}");
        assert!(
            1.0 - shorter > 2.0 * (1.0 - short),
            "0.65 × WS ({shorter}) loses far more than 0.8 × WS ({short})"
        );
        assert!(tighter.swapped_mib() > tight.swapped_mib());
        // Thrashing: what faults back in pushes other pages out.
        for g in [&tight, &tighter] {
            assert!(g.stats.swap_in_pages > 2_000.0, "{:?}", g.stats);
            assert!(g.stats.swap_out_pages > g.swapped_mib() * PAGES_PER_MIB + 2_000.0);
            assert!(g.stats.fault_lost_cpu_s > 0.0 && g.stats.stall_s >= g.stats.fault_lost_cpu_s);
        }
        assert!(tighter.stats.fault_lost_cpu_s > 2.0 * tight.stats.fault_lost_cpu_s);
        assert_eq!(roomy.stats.fault_lost_cpu_s, 0.0);
        let s = tight.sample();
        assert_eq!(
            s.vmstat.get("pswpin"),
            Some(tight.stats.swap_in_pages.floor())
        );
    }

    #[test]
    fn swapped_pages_without_a_working_set_or_work_cost_nothing() {
        // The workload stops (threads 0, working set gone) with pages in swap.
        let phases = "[[phases]]\nstart = \"0\"\nthreads = 2\nworking_set_mib = 2000\n\
            [[phases]]\nstart = \"1:00\"\nthreads = 0\nworking_set_mib = 0\n";
        let mut g = Guest::new(&scenario(phases), false);
        g.set_pool((mem_total_pages(4096.0) - 1200.0 * PAGES_PER_MIB) as i64);
        g.advance(59.0);
        assert!(g.swapped_mib() > 100.0);
        g.advance(10.0);
        let lost = g.stats.fault_lost_cpu_s;
        g.advance(60.0);
        assert_eq!(g.stats.fault_lost_cpu_s, lost);
        assert!(g.stats.achieved.is_finite() && g.stats.stall_s.is_finite());
    }

    #[test]
    fn the_same_seed_gives_the_same_guest() {
        let a = {
            let mut g = Guest::new(&scenario(STEADY), false);
            g.advance(42.0);
            g.sample()
        };
        let mut g = Guest::new(&scenario(STEADY), false);
        g.advance(42.0);
        let b = g.sample();
        assert_eq!(
            (b.stamp, &b.per_cpu, b.loadavg),
            (a.stamp, &a.per_cpu, a.loadavg)
        );
        let fields = |s: &Sample| -> Vec<(String, f64)> {
            s.meminfo
                .iter()
                .chain(s.vmstat.iter())
                .map(|(n, v)| (n.to_string(), v))
                .collect()
        };
        assert_eq!(fields(&b), fields(&a));
    }

    #[test]
    fn old_kernels_show_zone_suffixed_counters() {
        let g = Guest::new(&scenario(STEADY), true);
        let s = g.sample();
        assert!(s.vmstat.iter().any(|(n, _)| n == "pgscan_direct_dma"));
        assert!(!s.vmstat.iter().any(|(n, _)| n == "pgscan_direct"));
    }
}
