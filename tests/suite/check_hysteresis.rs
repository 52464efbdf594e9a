//! `narrow-hysteresis`: HOTPLUG and HOTUNPLUG thresholds less than one CPU
//! apart on the same measure, and the analysis `plugtop tune` builds on
//! (`rules::hysteresis::gaps`).

use plugtop::rules::hysteresis::{self, Decides, HysteresisGap, Pattern};
use plugtop::rules::{Diagnostic, RuleSet, SourceFile, SystemFacts, load};

const HEAD: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\n";

/// A fraction of all CPU time over the last interval (0 to 1).
const SHARES: &str = "\
idle_t=\"(cpustat.idle[0] - cpustat.idle[1]) + (cpustat.iowait[0] - cpustat.iowait[1])\"
busy_t=\"(cpustat.user[0] - cpustat.user[1]) + (cpustat.system[0] - cpustat.system[1])\"
all_t=\"cpustat.total_ticks[0] - cpustat.total_ticks[1]\"
idle_f=\"idle_t / all_t\"
busy_f=\"busy_t / all_t\"
";

fn loaded(body: &str) -> (RuleSet, Vec<Diagnostic>, SourceFile) {
    let file = SourceFile::new("t.conf", format!("{HEAD}{body}").into_bytes());
    let outcome = load(&file, &SystemFacts::any_machine(4, "test"));
    (outcome.rules, outcome.diagnostics, file)
}

fn rules(plug: &str, unplug: &str) -> String {
    format!("HOTPLUG=\"{plug}\"\nHOTUNPLUG=\"{unplug}\"\n")
}

fn gaps(body: &str) -> Vec<HysteresisGap> {
    hysteresis::gaps(&loaded(body).0)
}

/// The `narrow-hysteresis` warnings, as `line:col: message`.
fn warned(body: &str) -> Vec<String> {
    let (_, diags, file) = loaded(body);
    diags
        .iter()
        .filter(|d| d.code == hysteresis::CODE)
        .map(|d| {
            let p = file.position(d.span.start as usize);
            format!("{}:{}: {}", p.line, p.column, d.message)
        })
        .collect()
}

fn one_gap(body: &str) -> HysteresisGap {
    let found = gaps(body);
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

#[test]
fn the_idle_keyword_is_in_percent_of_one_cpu() {
    let body = rules("idle < 10", "idle > 50");
    let g = one_gap(&body);
    assert_eq!((g.pattern, g.decides), (Pattern::Share, Decides::Alone));
    assert_eq!((g.gap, g.unit), (40.0, 100.0));
    assert_eq!(
        warned(&body),
        [
            "4:10: HOTPLUG (4:10) and HOTUNPLUG (5:12) switch on `idle` 40 apart, less than one \
          CPU (100): at a steady load between them the guest can plug and unplug every interval"
        ]
    );
    let (_, diags, _) = loaded(&body);
    let d = diags.iter().find(|d| d.code == hysteresis::CODE).unwrap();
    assert_eq!(
        d.help.as_deref(),
        Some(
            "a plug adds one CPU (100) to what the rules measure: put HOTUNPLUG's threshold at \
             110 or above, at least one CPU from HOTPLUG's"
        )
    );
}

#[test]
fn share_gaps_of_just_under_at_and_just_over_one_cpu() {
    // Percent: 99, 100, 101 apart.
    for (unplug, narrow) in [("109", true), ("110", false), ("111", false)] {
        let body = rules("idle < 10", &format!("idle > {unplug}"));
        assert_eq!(one_gap(&body).too_narrow(), narrow, "idle > {unplug}");
        assert_eq!(warned(&body).len(), usize::from(narrow), "idle > {unplug}");
    }
    // Fractions of one CPU: 0.99, 1.0, 1.01 apart, written as in the paper.
    for (unplug, narrow) in [("1.19", true), ("1.2", false), ("1.21", false)] {
        let body = format!(
            "{SHARES}{}",
            rules(
                "((1 - busy_f) * onumcpus) < 0.2",
                &format!("(idle_f * onumcpus) > {unplug}")
            )
        );
        let g = one_gap(&body);
        assert_eq!(g.unit, 1.0);
        assert_eq!(g.too_narrow(), narrow, "> {unplug}: {g:?}");
        assert_eq!(warned(&body).len(), usize::from(narrow), "> {unplug}");
    }
}

#[test]
fn the_unit_is_worked_out_from_the_expression() {
    // Ticks times 100 and onumcpus: percent of one CPU, like `idle`.
    let percent = format!(
        "{SHARES}idle_pct=\"idle_f * 100 * onumcpus\"\n{}",
        rules("idle_pct < 20", "idle_pct > 90")
    );
    let g = one_gap(&percent);
    assert_eq!((g.gap, g.unit), (70.0, 100.0));
    assert!(
        warned(&percent)[0].contains("switch on `idle_pct` 70 apart, less than one CPU (100)"),
        "{:?}",
        warned(&percent)
    );
    // The same fraction without `* onumcpus` is an average over the CPUs: a
    // plug changes it by a different amount at every load, so it is judged
    // by the loads that plug and then unplug (0.9 to 1 on one CPU).
    let average = format!("{SHARES}{}", rules("idle_f < 0.1", "idle_f > 0.5"));
    let g = one_gap(&average);
    assert_eq!(
        (g.pattern, g.bands.first().map(|b| b.cpus)),
        (Pattern::PerCpu, Some(1))
    );
    assert!(warned(&average)[0].contains("between 0.9 and 1 CPUs"));
    // A factor scales the unit.
    let g = one_gap(&rules("idle / 50 < 1", "idle / 50 > 2.5"));
    assert_eq!((g.gap, g.unit), (1.5, 2.0));
}

#[test]
fn loads_against_onumcpus_need_offsets_adding_up_to_one() {
    for (b, narrow) in [("0.49", true), ("0.5", false), ("0.51", false)] {
        let body = rules(
            "loadavg > onumcpus + 0.5",
            &format!("loadavg < onumcpus - {b}"),
        );
        let g = one_gap(&body);
        assert_eq!((g.pattern, g.unit), (Pattern::Onumcpus, 1.0));
        assert_eq!(g.too_narrow(), narrow, "- {b}: {g:?}");
        assert_eq!(warned(&body).len(), usize::from(narrow), "- {b}");
    }
    let body = rules(
        "runnable_proc > onumcpus",
        "runnable_proc < onumcpus - 0.25",
    );
    assert_eq!(
        warned(&body),
        [
            "4:10: HOTPLUG (4:10) and HOTUNPLUG (5:12) switch on `runnable_proc` against \
          `onumcpus` 0.25 apart, less than one CPU (1): at a steady load between them the \
          guest can plug and unplug every interval"
        ]
    );
}

#[test]
fn swapped_operands_are_the_same_comparison() {
    let plain = one_gap(&rules("idle < 10", "idle > 50"));
    let swapped = one_gap(&rules("10 > idle", "50 < idle"));
    assert_eq!((swapped.gap, swapped.unit), (plain.gap, plain.unit));
    let g = one_gap(&rules(
        "onumcpus + 0.5 < loadavg",
        "0.2 + onumcpus > loadavg",
    ));
    assert_eq!((g.plug_threshold, g.unplug_threshold), (0.5, 0.2));
    assert!(g.too_narrow(), "{g:?}");
    // Through variables, written differently but meaning the same.
    let body = "m=\"(cpustat.loadavg)\"\nlo=\"onumcpus-0.25\"\n".to_string()
        + &rules("loadavg > onumcpus + 0.5", "((m)) < lo");
    assert!(one_gap(&body).too_narrow());
}

#[test]
fn cpuplugd_has_no_greater_or_equal() {
    // `>=` is not an operator: the file is refused, and no gap is made up.
    let (rules_, diags, _) = loaded(&rules("idle <= 10", "idle >= 50"));
    assert!(
        diags.iter().any(|d| d.code == "foreign-operator"),
        "{diags:?}"
    );
    assert!(!diags.iter().any(|d| d.code == hysteresis::CODE));
    assert!(hysteresis::gaps(&rules_).is_empty());
}

#[test]
fn a_hotplug_conjunct_does_not_decide_alone() {
    // The paper's cpu-loadavg.conf: the idle pair is 40 apart, but HOTPLUG
    // needs the loadavg half too; the loadavg offsets add up to exactly 1.
    let body = rules(
        "(loadavg > onumcpus + 0.75) & (idle < 10.0)",
        "(loadavg < onumcpus - 0.25) | (idle > 50)",
    );
    assert_eq!(warned(&body), Vec::<String>::new());
    let found = gaps(&body);
    let idle: Vec<_> = found
        .iter()
        .filter(|g| g.pattern == Pattern::Share)
        .collect();
    assert_eq!(idle.len(), 1, "{found:?}");
    assert_eq!(idle[0].decides, Decides::WithOthers);
    assert!(idle[0].too_narrow());
    let load: Vec<_> = found
        .iter()
        .filter(|g| g.pattern == Pattern::Onumcpus)
        .collect();
    assert_eq!(load.len(), 1, "{found:?}");
    assert!(!load[0].too_narrow(), "{:?}", load[0]);
}

#[test]
fn a_hotunplug_conjunct_does_not_decide_alone() {
    let body = rules("idle < 10", "(idle > 50) & (loadavg < 1)");
    assert_eq!(warned(&body), Vec::<String>::new());
    assert_eq!(one_gap(&body).decides, Decides::WithOthers);
    // A top-level `|` alternative does: cpuplugd unplugs whenever it is true.
    let body = rules(
        "(loadavg > 8) | (idle < 10)",
        "(loadavg < 0.1) | (idle > 50)",
    );
    assert_eq!(warned(&body).len(), 1);
    // A conjunct nested under `|` decides nothing alone either.
    let body = rules("((idle < 10) & (loadavg > 1)) | (loadavg > 8)", "idle > 50");
    assert_eq!(warned(&body), Vec::<String>::new());
}

#[test]
fn the_soonest_thresholds_of_each_rule_are_paired() {
    let body = rules("idle < 10 | idle < 30", "idle > 200 | idle > 120");
    let g = one_gap(&body);
    assert_eq!(
        (g.plug_threshold, g.unplug_threshold, g.gap),
        (30.0, 120.0, 90.0)
    );
    assert_eq!(
        warned(&body),
        [
            "4:22: HOTPLUG (4:22) and HOTUNPLUG (5:25) switch on `idle` 90 apart, less than one \
          CPU (100): at a steady load between them the guest can plug and unplug every interval"
        ]
    );
}

#[test]
fn overlapping_thresholds_are_the_wrong_way_round() {
    let found = warned(&rules("idle < 60", "idle > 50"));
    assert_eq!(found.len(), 1);
    assert!(
        found[0].contains("10 apart the wrong way round"),
        "{found:?}"
    );
}

#[test]
fn measures_a_plug_moves_away_from_unplugging_are_left_alone() {
    for (plug, unplug) in [
        // Plug on much idle time: the rules fight the other way, not this way.
        ("idle > 10", "idle < 50"),
        // A plug does not change the demand: busy time stays, so no flapping.
        ("user > 50", "user < 20"),
        // loadavg against constants stays too.
        ("loadavg > 3", "loadavg < 2.9"),
        // Different measures.
        ("idle < 10", "user > 50"),
        ("loadavg > onumcpus + 0.5", "runnable_proc < onumcpus - 0.2"),
        // A load compared the wrong way round with onumcpus.
        ("loadavg < onumcpus - 0.5", "loadavg > onumcpus + 0.2"),
    ] {
        let body = rules(plug, unplug);
        assert_eq!(warned(&body), Vec::<String>::new(), "{plug} / {unplug}");
    }
}

#[test]
fn a_negated_measure_keeps_its_direction() {
    // `-idle > -10` is `idle < 10`; the unit stays 100 either way.
    let g = one_gap(&rules("(-idle) > -10", "(-idle) < -50"));
    assert_eq!((g.gap, g.unit, g.unplug_above), (40.0, 100.0, false));
    assert!(g.too_narrow());
    let (_, diags, _) = loaded(&rules("(-idle) > -10", "(-idle) < -50"));
    let help = diags
        .iter()
        .find(|d| d.code == hysteresis::CODE)
        .and_then(|d| d.help.clone());
    assert!(
        help.as_deref()
            .is_some_and(|h| h.contains("at -110 or below")),
        "{help:?}"
    );
}

#[test]
fn what_cannot_be_told_is_not_said() {
    for (plug, unplug) in [
        // Memory and time readings: the model knows nothing of them.
        ("freemem < 10", "freemem > 20"),
        ("meminfo.MemFree < 10", "meminfo.MemFree > 20"),
        ("time < 10", "time > 10.5"),
        // onumcpus on both sides, or as the measure.
        ("onumcpus > onumcpus - 0.5", "onumcpus < onumcpus + 0.2"),
        ("onumcpus < 3", "onumcpus > 3.5"),
        (
            "loadavg + onumcpus > onumcpus + 0.5",
            "loadavg + onumcpus < onumcpus + 0.2",
        ),
        (
            "cpustat.onumcpus[1] > onumcpus + 0.5",
            "cpustat.onumcpus[1] < onumcpus",
        ),
        // Constant comparisons.
        ("1 < 2", "3 > 2"),
    ] {
        let body = rules(plug, unplug);
        assert_eq!(warned(&body), Vec::<String>::new(), "{plug} / {unplug}");
        assert!(
            gaps(&body).iter().all(|g| !g.too_narrow()),
            "{plug} / {unplug}: {:?}",
            gaps(&body)
        );
    }
}

#[test]
fn infinite_nan_and_huge_constants_make_no_gap() {
    for (plug, unplug) in [
        // 1e400 is infinity: HOTPLUG is always true and nothing flaps.
        ("idle < 1e400", "idle > 50"),
        ("idle < 10", "idle > 1e400"),
        // Arithmetic that faults, and a factor that overflows at a steady load.
        ("idle < 1e400 - 1e400", "idle > 50"),
        ("idle * 1e308 < 10", "idle * 1e308 > 50"),
        ("idle < 0/0", "idle > 50"),
    ] {
        let body = rules(plug, unplug);
        assert_eq!(warned(&body), Vec::<String>::new(), "{plug} / {unplug}");
        assert!(
            gaps(&body).is_empty(),
            "{plug} / {unplug}: {:?}",
            gaps(&body)
        );
    }
    // Huge but finite thresholds are thresholds like any other.
    let g = one_gap(&rules("idle < -1e300", "idle > 1e300"));
    assert!(!g.too_narrow(), "{g:?}");
    let g = one_gap(&rules("idle < 1e300", "idle > 1e300"));
    assert!(g.too_narrow(), "{g:?}");
}

#[test]
fn undefined_variables_refuse_the_file_and_make_no_gap() {
    let (rules_, diags, _) = loaded(&rules("idlex < 10", "idlex > 50"));
    assert!(diags.iter().any(|d| d.code == "unknown-name"), "{diags:?}");
    assert!(!diags.iter().any(|d| d.code == hysteresis::CODE));
    assert!(hysteresis::gaps(&rules_).is_empty());
}

#[test]
fn no_warning_where_the_cpu_group_cannot_plug() {
    let body = "HOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 50\"\n";
    for head in [
        // CPU_MIN equal to CPU_MAX: nothing to plug.
        "UPDATE=\"1\"\nCPU_MIN=\"2\"\nCPU_MAX=\"2\"\n",
        // No CPU limits: the CPU group is off.
        "UPDATE=\"1\"\n",
    ] {
        let file = SourceFile::new("t.conf", format!("{head}{body}").into_bytes());
        let outcome = load(&file, &SystemFacts::any_machine(4, "test"));
        assert!(
            !outcome
                .diagnostics
                .iter()
                .any(|d| d.code == hysteresis::CODE),
            "{head}: {:?}",
            outcome.diagnostics
        );
        // The analysis itself still sees the pair, for a tuner to judge.
        assert_eq!(hysteresis::gaps(&outcome.rules).len(), 1);
    }
    // CPU_MAX="0" on a machine with one CPU present.
    let file = SourceFile::new("t.conf", format!("{HEAD}{body}").into_bytes());
    let outcome = load(&file, &SystemFacts::any_machine(1, "test"));
    assert!(
        !outcome
            .diagnostics
            .iter()
            .any(|d| d.code == hysteresis::CODE)
    );
}

#[test]
fn deeply_nested_measures_are_matched_without_running_out_of_stack() {
    let deep = format!("{}idle{}", "(".repeat(900), ")".repeat(900));
    let body = rules(&format!("{deep} < 10"), "idle > 50");
    assert_eq!(warned(&body).len(), 1);
    assert_eq!(gaps(&body).len(), 1);
    // `-` runs two thousand deep (an even number: `idle` again), named
    // through variables on both sides.
    let minus = "-".repeat(2000);
    let body = format!(
        "v0=\"(({minus}idle))\"\nv1=\"v0 * 1\"\n{}",
        rules("v1 < 10", "v1 > 50")
    );
    let g = one_gap(&body);
    assert_eq!((g.gap, g.unit), (40.0, 100.0));
    assert_eq!(warned(&body).len(), 1);
}

#[test]
fn a_rule_of_thousands_of_alternatives_is_one_finding() {
    // 2^14 copies of the same alternative through doubling variables, and
    // hundreds of distinct ones on one line: one warning each way.
    let mut body = String::from("a0=\"idle < 10\"\n");
    for i in 1..=14 {
        body.push_str(&format!("a{i}=\"a{} | a{}\"\n", i - 1, i - 1));
    }
    let many: Vec<String> = (0..150).map(|i| format!("idle>{}", 50 + i)).collect();
    body.push_str(&rules("a14", &many.join("|")));
    let found = gaps(&body);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].plug_threshold, found[0].unplug_threshold),
        (10.0, 50.0)
    );
    assert_eq!(warned(&body).len(), 1);
}

#[test]
fn a_per_cpu_average_is_judged_by_the_loads_that_plug_and_then_unplug() {
    // On 1 CPU a load above 0.9 plugs; on 2 the average idle is above 50
    // below a load of 1.0: between 0.9 and 1.0 the guest flaps.
    let body = rules("idle / onumcpus < 10", "idle / onumcpus > 50");
    let g = one_gap(&body);
    assert_eq!(g.pattern, Pattern::PerCpu);
    assert_eq!(g.bands.len(), 1, "{:?}", g.bands);
    let band = g.bands[0];
    assert_eq!(band.cpus, 1);
    assert!(
        (band.from - 0.9).abs() < 1e-5 && (band.to - 1.0).abs() < 1e-5,
        "{band:?}"
    );
    assert!(g.too_narrow());
    let said = warned(&body);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("with 1 CPU online, a steady load between 0.9 and 1 CPUs"),
        "{said:?}"
    );
    // 5 and 55: on n CPUs a load above 0.95 n plugs, and on n + 1 only one
    // below 0.45 (n + 1) unplugs, which is less for every n.
    let wide = one_gap(&rules("idle / onumcpus < 5", "idle / onumcpus > 55"));
    assert_eq!((wide.bands.len(), wide.too_narrow()), (0, false));
    assert_eq!(
        warned(&rules("idle / onumcpus < 5", "idle / onumcpus > 55")),
        Vec::<String>::new()
    );
}

#[test]
fn a_share_of_all_cpu_time_is_a_per_cpu_average_too() {
    let body = format!("{SHARES}{}", rules("busy_f > 0.9", "idle_f > 0.6"));
    // Different measures (busy and idle shares) are not paired.
    assert!(gaps(&body).iter().all(|g| g.pattern != Pattern::PerCpu));
    let body = format!("{SHARES}{}", rules("idle_f < 0.1", "idle_f > 0.4"));
    let g = one_gap(&body);
    assert_eq!(g.pattern, Pattern::PerCpu);
    // On 1 CPU a load above 0.9 plugs; on 2, idle above 0.4 means a load
    // below 1.2: 0.9 to 1 (the load cannot pass the one CPU it plugged at).
    assert_eq!(g.bands.first().map(|b| b.cpus), Some(1), "{:?}", g.bands);
    // With three CPUs at most, a plug from 3 cannot happen; from 2 the band
    // is 1.8 to 1.8... none; so only n = 1 and n = 2 are looked at.
    let capped = format!(
        "{}{SHARES}{}",
        "CPU_MAX=\"2\"\n",
        rules("idle_f < 0.1", "idle_f > 0.4")
    );
    let g = one_gap(&capped);
    assert_eq!(g.bands.first().map(|b| b.cpus), Some(1));
}

#[test]
fn a_per_cpu_measure_that_turns_back_or_cannot_be_evaluated_is_left_alone() {
    for (plug, unplug) in [
        // Not monotonic in the load: low and high loads look alike.
        (
            "(idle / onumcpus - 50) * (idle / onumcpus - 50) < 100",
            "(idle / onumcpus - 50) * (idle / onumcpus - 50) > 400",
        ),
        // Division by zero at an idle guest.
        ("100 / idle < 1", "100 / idle > 5"),
    ] {
        let body = rules(plug, unplug);
        assert_eq!(warned(&body), Vec::<String>::new(), "{plug} / {unplug}");
    }
    // A huge CPU_MAX looks at no more than 64 CPU counts.
    let body = format!(
        "CPU_MAX=\"100000000\"\n{}",
        rules("idle / onumcpus < 10", "idle / onumcpus > 50")
    );
    assert_eq!(gaps(&body).len(), 1);
}

#[test]
fn loads_past_the_cpus_online_plug_and_may_unplug_one_cpu_later() {
    // Thresholds a hair apart: any load from 1 to 2 CPUs keeps one CPU
    // busy (HOTPLUG) and leaves the second almost idle (HOTUNPLUG); the
    // simulated guest flaps at every such load.
    let body = rules(
        "idle / onumcpus < 0.000000000001",
        "idle / onumcpus > 0.000000000002",
    );
    let g = one_gap(&body);
    let first = g.bands.first().copied().expect("a band");
    assert_eq!(first.cpus, 1);
    assert!(
        first.from <= 1.0 + 1e-6 && first.to >= 2.0 - 1e-6,
        "{first:?}"
    );
    assert_eq!(warned(&body).len(), 1);
    // 30 and 45: every CPU count has its own band, and all are named.
    let body = rules("idle / onumcpus < 30", "idle / onumcpus > 45");
    let g = one_gap(&body);
    let bands: Vec<(u32, f64, f64)> = g
        .bands
        .iter()
        .map(|b| {
            (
                b.cpus,
                (b.from * 100.0).round() / 100.0,
                (b.to * 100.0).round() / 100.0,
            )
        })
        .collect();
    assert_eq!(bands, [(1, 0.7, 1.1), (2, 1.4, 1.65), (3, 2.1, 2.2)]);
    let said = warned(&body);
    assert!(
        said[0].contains(
            "with 1 CPU online, a steady load between 0.7 and 1.1 CPUs; with 2, a steady load \
             between 1.4 and 1.65 CPUs; with 3, a steady load between 2.1 and 2.2 CPUs"
        ),
        "{said:?}"
    );
}
