//! The workloads a recommendation must hold up on besides the one it was
//! tuned on: a file tuned on one benchmark alone learns that benchmark (its
//! peak as CPU_MAX, thresholds that only its load crosses) and loses
//! elsewhere. The portfolio is the built-in scenarios (the examples shipped
//! with plugtop) and a sweep of steady loads from idle to the CPUs present,
//! where a deployable file must not flap; the held-out set is each built-in
//! scenario made lighter and heavier, which no part of a tune looks at
//! before the report.

use crate::sim::Scenario;
use crate::sim::scenario::Phase;

use super::Workload;

/// The built-in scenarios, as shipped in `examples/scenarios` (the 256-CPU
/// `big-lpar` is left out: it costs as much as the rest together and
/// tests the screen, not the rules).
const BUILT_IN: [(&str, &str); 7] = [
    (
        "appserver",
        include_str!("../../examples/scenarios/appserver.toml"),
    ),
    ("combo", include_str!("../../examples/scenarios/combo.toml")),
    (
        "database",
        include_str!("../../examples/scenarios/database.toml"),
    ),
    (
        "daytrader",
        include_str!("../../examples/scenarios/daytrader.toml"),
    ),
    (
        "kernel-compile",
        include_str!("../../examples/scenarios/kernel-compile.toml"),
    ),
    (
        "oscillating",
        include_str!("../../examples/scenarios/oscillating.toml"),
    ),
    (
        "webserver",
        include_str!("../../examples/scenarios/webserver.toml"),
    ),
];

/// How many steady loads the sweep drives (from 0.1 thread to 0.1 short
/// of the CPUs present).
pub const STEADY_LOADS: usize = 40;

/// Simulated seconds of each steady load: long enough for any file's
/// history to fill and a flap to repeat, short enough that the sweep costs
/// about as much as one scenario.
const STEADY_SECONDS: u32 = 240;

/// What a workload of the portfolio stands for.
#[derive(Debug, Clone, PartialEq)]
pub enum Role {
    /// A built-in scenario: the recommendation must not lose on it.
    Scenario,
    /// A constant load of this many threads: it must not flap.
    Steady(f64),
    /// A built-in scenario scaled (lighter or heavier): reported, never
    /// looked at by the search or the checks.
    HeldOut,
    /// A memory tune's steady load with the working set at this share of
    /// the guest's memory: the recommendation must not lose on it (nor
    /// flap where the reference does not), as on a scenario.
    Pressure(f64),
}

/// One workload of the portfolio.
#[derive(Debug, Clone)]
pub struct Member {
    pub name: String,
    pub role: Role,
    pub workload: Workload,
}

impl Member {
    /// `scenario`, named `name`, on `training`'s kernel at its own duration.
    fn of(training: &Workload, name: String, role: Role, scenario: Scenario) -> Member {
        Member {
            name,
            role,
            workload: Workload {
                scenario,
                old_kernel: training.old_kernel,
                duration: None,
            },
        }
    }
}

/// The built-in scenarios, each parsed (a shipped file that did not parse
/// would be a build defect: the test below keeps them parsing).
pub fn built_in() -> Vec<Scenario> {
    BUILT_IN
        .iter()
        .filter_map(|(name, text)| Scenario::parse(name, text).ok())
        .collect()
}

/// How much lighter and heavier the portfolio runs every built-in scenario
/// besides as written: a file that only holds at the load it was judged on
/// learns that load. The held-out set's factors lie between these and 1,
/// and no part of the search looks at them.
const JUDGED_SCALES: [(f64, &str); 2] = [(0.6, "at 60%"), (1.4, "at 140%")];

/// The held-out set's factors: lighter and heavier, each between a judged
/// scale and the load as written.
const HELD_OUT_SCALES: [(f64, &str); 2] = [(0.75, "lighter"), (1.25, "heavier")];

/// The portfolio of a tune whose training workload is `training`: every
/// built-in scenario but the one trained on (by name), then every built-in
/// scenario at each of [`JUDGED_SCALES`], then the steady sweep on the
/// training guest's CPUs and memory.
pub fn portfolio(training: &Workload, objective: super::score::Objective) -> Vec<Member> {
    let mut out: Vec<Member> = built_in()
        .into_iter()
        .filter(|s| s.name != training.scenario.name)
        .map(|scenario| Member::of(training, scenario.name.clone(), Role::Scenario, scenario))
        .collect();
    out.extend(scaled(training, &JUDGED_SCALES, Role::Scenario));
    out.extend(steady_sweep(training));
    if objective == super::score::Objective::Memory {
        out.extend(pressure_sweep(training));
    }
    out
}

/// Working sets, as shares of the guest's memory, at which a memory tune
/// is checked under pressure: the steady sweep's third of it never makes
/// memory rules act.
const PRESSURE: [f64; 3] = [0.6, 0.8, 0.95];

/// Steady loads of a quarter of the CPUs (at least half a thread) with the
/// working set at each of [`PRESSURE`] and files read at 20 MiB/s, so the
/// page cache grows against it.
pub fn pressure_sweep(training: &Workload) -> Vec<Member> {
    let guest = &training.scenario;
    let threads = (f64::from(guest.cpus.max(1)) / 4.0).max(0.5);
    PRESSURE
        .iter()
        .filter_map(|&share| {
            let mut scenario = steady(guest, threads)?;
            let name = format!("steady {threads:.2} at {:.0}% memory", share * 100.0);
            scenario.name.clone_from(&name);
            for p in &mut scenario.phases {
                p.working_set_mib = guest.memory_mib * share;
                p.io_mib_per_s = 20.0;
            }
            Some(Member::of(training, name, Role::Pressure(share), scenario))
        })
        .collect()
}

/// The held-out workloads: every built-in scenario at 0.75 and at 1.25
/// times its threads (memory as written), none of which the search or the
/// checks see.
pub fn held_out(training: &Workload) -> Vec<Member> {
    scaled(training, &HELD_OUT_SCALES, Role::HeldOut)
}

/// Every built-in scenario with its threads times each factor of `scales`
/// (memory as written), named with the factor's word, in `role`.
fn scaled(training: &Workload, scales: &[(f64, &str)], role: Role) -> Vec<Member> {
    let mut out = Vec::new();
    for scenario in built_in() {
        for &(factor, word) in scales {
            let mut s = scenario.clone();
            for p in &mut s.phases {
                p.threads *= factor;
            }
            s.name = format!("{} {word}", scenario.name);
            out.push(Member::of(training, s.name.clone(), role.clone(), s));
        }
    }
    out
}

/// The steady loads: [`STEADY_LOADS`] constant loads spread evenly from 0.1
/// thread to 0.1 short of the CPUs present, each on the training guest
/// (its CPUs, its memory, half its CPUs online at the start).
pub fn steady_sweep(training: &Workload) -> Vec<Member> {
    let guest = &training.scenario;
    let cpus = f64::from(guest.cpus.max(1));
    let (low, high) = (0.1, (cpus - 0.1).max(0.1));
    (0..STEADY_LOADS)
        .filter_map(|i| {
            let threads = low + (high - low) * i as f64 / (STEADY_LOADS - 1) as f64;
            let threads = (threads * 100.0).round() / 100.0;
            let scenario = steady(guest, threads)?;
            Some(Member::of(
                training,
                format!("steady {threads:.2}"),
                Role::Steady(threads),
                scenario,
            ))
        })
        .collect()
}

/// A constant load of `threads` busy threads on `guest`'s machine, with a
/// working set of a third of its memory (memory rules see a calm guest).
fn steady(guest: &Scenario, threads: f64) -> Option<Scenario> {
    let phase = Phase {
        name: "steady".to_string(),
        start: "0:00".to_string(),
        threads,
        cpu_per_thread: 1.0,
        system_share: 0.1,
        nice_share: 0.0,
        io_mib_per_s: 0.0,
        iowait_share: 0.0,
        working_set_mib: (guest.memory_mib / 3.0).max(64.0),
        shared_mib: 0.0,
        pulse_period_s: 0.0,
    };
    Scenario::from_parts(
        &format!("steady {threads:.2}"),
        guest.cpus,
        guest.cpus.div_ceil(2).max(1),
        guest.memory_mib,
        guest.contention,
        format!("{STEADY_SECONDS}s"),
        true,
        vec![phase],
    )
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::score::Objective;

    fn training() -> Workload {
        let scenario = built_in()
            .into_iter()
            .find(|s| s.name == "daytrader")
            .unwrap_or_else(|| panic!("daytrader is built in"));
        Workload {
            scenario,
            old_kernel: false,
            duration: None,
        }
    }

    #[test]
    fn every_shipped_scenario_is_built_in_and_parses() {
        let names: Vec<String> = built_in().into_iter().map(|s| s.name).collect();
        assert_eq!(names.len(), BUILT_IN.len(), "{names:?}");
        for (name, _) in BUILT_IN {
            assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
        }
    }

    #[test]
    fn the_portfolio_leaves_out_the_training_scenario_and_sweeps_every_load() {
        let p = portfolio(&training(), Objective::Cpu);
        assert!(!p.iter().any(|m| m.name == "daytrader"));
        assert!(!p.iter().any(|m| matches!(m.role, Role::Pressure(_))));
        // Every built-in but the one trained on as written, and every one
        // (the trained one too) lighter and heavier.
        assert_eq!(
            p.iter().filter(|m| m.role == Role::Scenario).count(),
            BUILT_IN.len() - 1 + JUDGED_SCALES.len() * BUILT_IN.len()
        );
        let lighter = p
            .iter()
            .find(|m| m.name == "daytrader at 60%")
            .unwrap_or_else(|| panic!("daytrader at 60%"));
        let day = built_in()
            .into_iter()
            .find(|s| s.name == "daytrader")
            .unwrap_or_else(|| panic!("daytrader"));
        for (a, b) in lighter.workload.scenario.phases.iter().zip(&day.phases) {
            assert!((a.threads - 0.6 * b.threads).abs() < 1e-9, "{}", a.threads);
        }
        // The held-out factors lie between the judged ones and 1.
        for ((held, _), (judged, _)) in HELD_OUT_SCALES.iter().zip(JUDGED_SCALES) {
            assert!((held - 1.0).abs() < (judged - 1.0).abs());
        }
        let loads: Vec<f64> = p
            .iter()
            .filter_map(|m| match m.role {
                Role::Steady(t) => Some(t),
                _ => None,
            })
            .collect();
        assert_eq!(loads.len(), STEADY_LOADS);
        assert_eq!(loads.first().copied(), Some(0.1));
        assert_eq!(loads.last().copied(), Some(3.9));
        assert!(loads.windows(2).all(|w| w[0] < w[1]), "{loads:?}");
    }

    #[test]
    fn a_memory_tune_is_also_judged_with_the_working_set_near_the_memory() {
        let t = training();
        let p = portfolio(&t, Objective::Memory);
        let pressure: Vec<&Member> = p
            .iter()
            .filter(|m| matches!(m.role, Role::Pressure(_)))
            .collect();
        assert_eq!(pressure.len(), PRESSURE.len());
        for (m, share) in pressure.iter().zip(PRESSURE) {
            let s = &m.workload.scenario;
            assert_eq!(s.phases.len(), 1);
            let ws = s.phases[0].working_set_mib;
            assert!((ws - s.memory_mib * share).abs() < 1e-6, "{}: {ws}", m.name);
            assert!(s.phases[0].io_mib_per_s > 0.0, "the page cache grows");
        }
    }

    #[test]
    fn held_out_workloads_are_scaled_built_ins_the_portfolio_does_not_hold() {
        let t = training();
        let p = portfolio(&t, Objective::Memory);
        let h = held_out(&t);
        assert_eq!(h.len(), 2 * BUILT_IN.len());
        for m in &h {
            assert!(
                !p.iter().any(|q| q.name == m.name),
                "{} is held out",
                m.name
            );
        }
        let base = built_in();
        let heavier = h
            .iter()
            .find(|m| m.name == "daytrader heavier")
            .unwrap_or_else(|| panic!("daytrader heavier"));
        let day = base
            .iter()
            .find(|s| s.name == "daytrader")
            .unwrap_or_else(|| panic!("daytrader"));
        let scaled: Vec<f64> = heavier
            .workload
            .scenario
            .phases
            .iter()
            .map(|p| p.threads)
            .collect();
        let written: Vec<f64> = day.phases.iter().map(|p| p.threads * 1.25).collect();
        assert_eq!(scaled, written);
    }
}
