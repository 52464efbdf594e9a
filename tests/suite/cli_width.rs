//! The commands' text output fits the README's 80 columns (issue 45,
//! new-user finding 7): by default, in a pipe as in a terminal, tables are
//! laid out narrow and prose wraps; `--wide` gives every column and value
//! in full. Each command on a representative input, measured in display
//! columns; `run`'s log entries, cpuplugd's messages among them, are one
//! line each, unchanged.

use crate::common::{plugtop, text};
use crate::fleet_fake;
use plugtop::tui::view::fit::cols;

/// A recording of a guest whose CPUs flap, with the memory group on.
const REC: &str = "examples/courses/cpuplugd-basics/flapping-incident.rec";
const MODERN: &str = "examples/rules/recommended-modern.conf";

/// The lines wider than 80 columns.
fn over_80(out: &str) -> Vec<&str> {
    out.lines().filter(|l| cols(l) > 80).collect()
}

fn stdout(args: &[&str]) -> String {
    let out = plugtop(args);
    assert!(out.status.success(), "{args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn eval_table_and_trace_fit_80_columns_and_wide_keeps_the_wide_form() {
    for extra in [&[][..], &["--trace"][..]] {
        let args = [&["eval", "--replay", REC, "-c", MODERN][..], extra].concat();
        let narrow = stdout(&args);
        assert!(narrow.lines().count() > 100, "{narrow}");
        assert_eq!(over_80(&narrow), Vec::<&str>::new(), "{args:?}");
        assert!(
            narrow.contains("reading HOTPL HOTUN CPU       MEMPL MEMUN    INC    DEC pool"),
            "{narrow}"
        );
        let wide = stdout(&[&args[..], &["--wide"]].concat());
        assert!(
            wide.contains(" reading  HOTPLUG   HOTUNPLUG CPU       MEMPLUG   MEMUNPLUG"),
            "{wide}"
        );
        assert!(!over_80(&wide).is_empty(), "--wide is as wide as it was");
    }
}

#[test]
fn whatif_fits_80_columns() {
    let narrow = stdout(&["whatif", "--replay", REC, "-c", MODERN]);
    assert_eq!(over_80(&narrow), Vec::<&str>::new());
    // A trace's tree goes on down beside a line that wraps.
    assert!(narrow.contains("intervals differ"), "{narrow}");
    let wide = stdout(&["whatif", "--replay", REC, "-c", MODERN, "--wide"]);
    assert!(!over_80(&wide).is_empty(), "--wide keeps each line whole");
    assert!(wide.lines().count() < narrow.lines().count());
}

/// Adversary F3: rule files named with 30 characters and more, or with
/// wide characters, keep `whatif`'s narrow table a table at 80 columns:
/// every row holds its label and both values, no line passes 80 columns
/// as drawn or ends in blanks, and each name keeps its start and `.conf`.
#[test]
fn whatif_keeps_its_table_with_long_and_wide_file_names() {
    let dir = crate::common::tempdir();
    let copy = |name: &str, from: &str| -> String {
        let to = dir.path().join(name);
        if let Err(e) = std::fs::copy(from, &to) {
            panic!("{e}");
        }
        to.display().to_string()
    };
    let after = copy(
        "cpuplugd-prod-db-after-the-incident-of-the-night.conf",
        "examples/rules/oscillating-damped.conf",
    );
    let before = copy("生产数据库规则文件事故之前的版本.conf", MODERN);
    for args in [
        vec!["whatif", "--replay", REC, "-c", &after],
        vec![
            "whatif",
            "--replay",
            REC,
            "-c",
            &after,
            "--against",
            &before,
        ],
        vec![
            "whatif",
            "--replay",
            REC,
            "-c",
            &before,
            "--against",
            &after,
        ],
    ] {
        let out = stdout(&args);
        assert_eq!(over_80(&out), Vec::<&str>::new(), "{out}");
        assert!(out.lines().all(|l| l == l.trim_end()), "{out}");
        for label in [
            "plug a CPU",
            "unplug a CPU",
            "grow the pool",
            "reversals",
            "flapping",
        ] {
            let Some(row) = out.lines().find(|l| l.trim_start().starts_with(label)) else {
                panic!("{label}:\n{out}");
            };
            // Both values on the label's row.
            let values = row.trim_start()[label.len()..]
                .split("  ")
                .filter(|v| !v.trim().is_empty())
                .count();
            assert_eq!(values, 2, "{row:?}\n{out}");
        }
        let heading = out
            .lines()
            .find(|l| l.contains(".conf") && l.starts_with("    "))
            .unwrap_or_default();
        assert!(
            heading.contains("cpuplugd-prod") && heading.contains("night.conf"),
            "{out}"
        );
    }
}

/// Adversary F10: `check`'s messages and summary and `sim --compare`'s
/// table (the built-in rules' name is 32 characters) passed 80 columns;
/// they fit by default, the quoted line and its caret whole, and `--wide`
/// keeps the old form.
#[test]
fn check_and_sim_compare_fit_80_columns_and_wide_keeps_the_old_form() {
    let dir = crate::common::tempdir();
    // Findings with long messages, in a file whose name is long too.
    let rules = dir
        .path()
        .join("cpuplugd-for-the-production-database-guests-after-review.conf");
    let text = std::fs::read_to_string(MODERN).expect("rules")
        + "\nMEMPLUG=\"meminfo.MemFree > 1e300 && meminfo.MemFree < 1\"\n";
    std::fs::write(&rules, text).expect("write");
    let rules = rules.display().to_string();
    let check = |extra: &[&str]| {
        let root = ["--root", "tests/fixtures/roots/newkernel"];
        let o = plugtop(&[&["check", &rules][..], &root, extra].concat());
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let narrow = check(&[]);
    assert!(narrow.contains(" | "), "{narrow}");
    assert_eq!(over_80(&narrow), Vec::<&str>::new(), "{narrow}");
    let wide = check(&["--wide"]);
    assert!(!over_80(&wide).is_empty(), "{wide}");
    // The quoted line and its caret are the same either way.
    let quoted = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.contains(" | ") || l.trim_start().starts_with('|'))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(quoted(&narrow), quoted(&wide));
    let compare = |extra: &[&str]| {
        stdout(
            &[
                &[
                    "sim",
                    "examples/scenarios/oscillating.toml",
                    "--compare",
                    "examples/rules/oscillating-damped.conf",
                    "--duration",
                    "1:00",
                ][..],
                extra,
            ]
            .concat(),
        )
    };
    let narrow = compare(&[]);
    assert_eq!(over_80(&narrow), Vec::<&str>::new(), "{narrow}");
    assert!(narrow.contains("oscillating-damped.conf"), "{narrow}");
    let wide = compare(&["--wide"]);
    assert!(wide.contains("built-in recommended-modern.conf"), "{wide}");
    assert!(!over_80(&wide).is_empty(), "{wide}");
}

/// Adversary F10: `eval`'s rows of a file without a memory group ended in
/// 9 blanks, a trace's `HOTPLUG = false` row in 3.
#[test]
fn eval_rows_and_traces_end_at_their_last_character() {
    for extra in [&[][..], &["--trace"][..]] {
        let args = [
            &[
                "eval",
                "--replay",
                REC,
                "-c",
                "examples/rules/oscillating-tight.conf",
            ][..],
            extra,
        ]
        .concat();
        let out = stdout(&args);
        let blank: Vec<&str> = out.lines().filter(|l| l.ends_with(' ')).collect();
        assert_eq!(blank, Vec::<&str>::new(), "{args:?}");
    }
}

#[test]
fn run_verbose_fits_80_columns_and_cpuplugds_messages_are_unchanged() {
    let run = |wide: bool| {
        let mut args = vec![
            "run",
            "-f",
            "-V",
            "--interval-ms",
            "1",
            "--mode",
            "observe",
            "--replay",
            REC,
            "-c",
            "examples/rules/oscillating-tight.conf",
        ];
        if wide {
            args.push("--wide");
        }
        stdout(&args)
    };
    let narrow = run(false);
    // The -V table: its heading and a row per interval, each on one line
    // within 80 columns (a row wrapped onto two at 80). The log's entries
    // (cpuplugd's messages and plugtop's) stay one line each, whole, as
    // scripts and the journal read them.
    let stamped = |l: &&str| l.len() > 9 && l.as_bytes()[2] == b':' && l.as_bytes()[5] == b':';
    let table: Vec<&str> = narrow.lines().filter(stamped).collect();
    assert!(table.len() > 100, "{narrow}");
    assert!(table[0].ends_with(" reading HOTPL HOTUN CPU       MEMPL MEMUN    INC    DEC pool"));
    assert_eq!(over_80(&table.join("\n")), Vec::<&str>::new(), "{narrow}");
    let wide = run(true);
    assert!(!over_80(&wide).is_empty(), "--wide is as wide as it was");
    // cpuplugd's messages, that scripts read, are the same lines either way.
    let cpuplugds = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.contains("cpu limit is reached") || l.contains("pages permanently"))
            .map(str::to_string)
            .collect()
    };
    assert!(!cpuplugds(&narrow).is_empty(), "{narrow}");
    assert_eq!(cpuplugds(&narrow), cpuplugds(&wide));
}

#[test]
fn fleet_batch_fits_80_columns_and_wide_has_every_column() {
    let guests = fleet_fake::five();
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&guests, path, params));
    let run = |extra: &[&str]| {
        let out = plugtop(&[&["fleet", "--prometheus", &fake.url, "--batch"][..], extra].concat());
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let narrow = run(&[]);
    assert_eq!(over_80(&narrow), Vec::<&str>::new(), "{narrow}");
    for kept in ["TROUBLE", "INSTANCE", "CPUS", "10.0.0.1:9866", "# drift:"] {
        assert!(narrow.contains(kept), "{kept}: {narrow}");
    }
    let wide = run(&["--wide"]);
    assert!(wide.contains("RULES"), "{wide}");
    assert!(!over_80(&wide).is_empty(), "{wide}");
}

#[test]
fn tune_fits_80_columns_and_wide_keeps_each_row_on_one_line() {
    let args = [
        "tune",
        "examples/scenarios/oscillating.toml",
        "-c",
        "examples/rules/oscillating-tight.conf",
        "--duration",
        "3m",
        "--budget",
        "30",
        "--only-workload",
        "--only-thresholds",
    ];
    let narrow = stdout(&args);
    assert!(narrow.contains("on what it was never tuned"), "{narrow}");
    assert_eq!(over_80(&narrow), Vec::<&str>::new());
    let wide = stdout(&[&args[..], &["--wide"]].concat());
    // Wide, a seed's row is labelled `recommended sN` on its own line.
    assert!(
        wide.lines()
            .any(|l| l.starts_with("  recommended s") && l.contains('%')),
        "{wide}"
    );
    // A rule file under a long path: the knobs' heading wraps too (adv51);
    // only the diff's own lines, which copy back whole, stay long.
    let dir = tempfile::tempdir().expect("temporary directory");
    let deep = dir.path().join("d".repeat(120));
    std::fs::create_dir(&deep).expect("a long directory name");
    let rules = deep.join("r.conf");
    std::fs::copy("examples/rules/oscillating-tight.conf", &rules).expect("rules");
    let rules = rules.to_str().expect("utf-8");
    let mut long = args;
    long[3] = rules;
    let narrow = stdout(&long);
    let over: Vec<&str> = over_80(&narrow)
        .into_iter()
        .filter(|l| !l.starts_with("--- ") && !l.starts_with("+++ "))
        .collect();
    assert_eq!(over, Vec::<&str>::new(), "{narrow}");
}

/// Adversary F10: `fleet --batch --wide` counted an instance label of
/// wide characters in characters, pushing its row's later columns two
/// columns right for each; every row's cells start where the heading's do.
#[test]
fn fleet_batch_lines_up_a_label_of_wide_characters() {
    let mut guests = fleet_fake::five();
    guests[0].instance = "主机一号:9866";
    let fake = fleet_fake::start(move |path, params| fleet_fake::answer(&guests, path, params));
    for extra in [&[][..], &["--wide"][..]] {
        let out = plugtop(&[&["fleet", "--prometheus", &fake.url, "--batch"][..], extra].concat());
        let out = String::from_utf8_lossy(&out.stdout).into_owned();
        let table: Vec<&str> = out.lines().filter(|l| !l.starts_with('#')).collect();
        // Where each cell starts, in columns as drawn: after two blanks.
        let starts = |line: &str| -> Vec<usize> {
            let mut at = Vec::new();
            let mut blanks = 0;
            let mut col = 0;
            for c in line.chars() {
                if c != ' ' && (col == 0 || blanks >= 2) {
                    at.push(col);
                }
                blanks = if c == ' ' { blanks + 1 } else { 0 };
                col += cols(c.encode_utf8(&mut [0; 4]));
            }
            at
        };
        let heading = starts(table[0]);
        let Some(row) = table.iter().find(|l| l.contains("主机一号")) else {
            panic!("{out}");
        };
        for at in starts(row) {
            assert!(heading.contains(&at), "{at} in {row:?}\n{out}");
        }
    }
}

/// The subcommands `--help` lists under "Commands:" (not `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect()
}

/// nu53 F2: `--help` was not wrapped at all (clap without its wrapping):
/// 19 lines over 80 in `plugtop --help`, `plugtop sim --help` broken by
/// the terminal mid-word. Every command's `-h` and `--help`, through a
/// pipe, fit 80 columns.
#[test]
fn every_commands_help_fits_80_columns_in_a_pipe() {
    let mut todo = vec![Vec::<String>::new()];
    let mut seen = 0;
    while let Some(command) = todo.pop() {
        for flag in ["-h", "--help"] {
            let args: Vec<&str> = command.iter().map(String::as_str).chain([flag]).collect();
            let help = stdout(&args);
            assert_eq!(over_80(&help), Vec::<&str>::new(), "{args:?}");
            if flag == "--help" {
                for sub in subcommands(&help) {
                    todo.push([command.clone(), vec![sub]].concat());
                }
            }
        }
        seen += 1;
    }
    assert!(seen > 15, "only {seen} commands found");
}

/// nu53 F2: text written through a pipe past 80 columns: `sim`'s
/// "feedback loop:" line (report and running lines), `train check`'s
/// findings (up to 205 columns), a rule file's diagnostics and summary
/// from `tune` and the screen (`check` wrapped them), and `sim --serve`'s
/// start and end. Each now wraps at 80; the quoted rule lines under a
/// caret stay whole (none here is that long).
#[test]
fn reports_diagnostics_and_banners_fit_80_columns_in_a_pipe() {
    let sim = ["sim", "examples/scenarios/oscillating.toml"];
    let tight = ["-c", "examples/rules/oscillating-tight.conf"];
    for extra in [&["--report"][..], &["--fast"][..]] {
        let args = [&sim[..], &tight[..], extra].concat();
        let out = stdout(&args);
        assert!(out.contains("feedback loop:"), "{args:?}: {out}");
        assert_eq!(over_80(&out), Vec::<&str>::new(), "{args:?}");
    }
    let course = plugtop(&["train", "check", "examples/courses/cpuplugd-basics.toml"]);
    let said = String::from_utf8_lossy(&course.stdout).into_owned();
    assert!(said.contains("held-out runs"), "{}", text(&course));
    assert_eq!(over_80(&said), Vec::<&str>::new(), "train check");
    let dir = crate::common::tempdir();
    let bad = dir.path().join("bad.conf");
    let rules = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"idle < 1 &&\"\nHOTUNPLUG=\"idle >= 2 ||\"\n";
    if let Err(e) = std::fs::write(&bad, rules) {
        panic!("{e}");
    }
    let bad = bad.display().to_string();
    for args in [
        vec!["tune", "examples/scenarios/daytrader.toml", "-c", &bad],
        vec!["-c", &bad, "--batch"],
        vec!["sim", "examples/scenarios/oscillating.toml", "-c", &bad],
    ] {
        let out = plugtop(&args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            err.contains("cpuplugd would refuse it") && !out.status.success(),
            "{args:?}: {}",
            text(&out)
        );
        assert_eq!(over_80(&err), Vec::<&str>::new(), "{args:?}");
    }
    let served = dir.path().join("guest");
    let served = served.display().to_string();
    let out = plugtop(
        &[
            &sim[..],
            &["--serve", &served, "--duration", "20", "--fast"],
        ]
        .concat(),
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.contains("serving stopped") && out.status.success(),
        "{}",
        text(&out)
    );
    assert_eq!(over_80(&err), Vec::<&str>::new(), "sim --serve");
}

/// nu54 M1: warnings and errors on stderr wrap at 80 in a pipe as the
/// reports do: grade's warning for a file that matches no exercise (150
/// columns), a scenario given where a course goes, `tune` given its two
/// files the wrong way round.
#[test]
fn warnings_and_errors_on_stderr_fit_80_columns_in_a_pipe() {
    let dir = crate::common::tempdir();
    let class = dir
        .path()
        .join("a-class-directory-with-a-long-name/trainee");
    std::fs::create_dir_all(&class).expect("class");
    std::fs::write(class.join("nosuchexercise.conf"), "UPDATE=\"1\"\n").expect("file");
    let course = "examples/courses/cpuplugd-basics.toml";
    let class = dir.path().join("a-class-directory-with-a-long-name");
    let class = class.display().to_string();
    for args in [
        vec!["train", "grade", course, &class],
        vec!["train", "examples/scenarios/daytrader.toml"],
        vec![
            "tune",
            "examples/rules/cpu-loadavg.conf",
            "-c",
            "examples/scenarios/daytrader.toml",
        ],
    ] {
        let out = plugtop(&args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(err.len() > 100, "{args:?}: {}", text(&out));
        assert_eq!(over_80(&err), Vec::<&str>::new(), "{args:?}: {err}");
    }
}

/// stderr into a file (or the journal's stream, a socket, under the unit)
/// keeps each message one line, for grep and `journalctl`; into a pipe it
/// wraps at 80 (adv54b).
#[test]
fn stderr_into_a_file_keeps_each_message_whole() {
    let dir = crate::common::tempdir();
    let missing = dir
        .path()
        .join("a-directory-with-a-long-name/and_another_one/and.a.third.one/rules.conf");
    let errors = dir.path().join("errors.txt");
    let file = std::fs::File::create(&errors).expect("stderr's file");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .arg("check")
        .arg(&missing)
        .stderr(file)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("plugtop check");
    assert_eq!(status.code(), Some(1));
    let said = std::fs::read_to_string(&errors).expect("what it said");
    let path = missing.display().to_string();
    assert!(
        said.lines().any(|l| l.contains(&path) && cols(l) > 80),
        "one line, the path whole: {said}"
    );
    // Into a pipe, the same message wraps at 80.
    let piped = plugtop(&["check", &path]);
    assert!(over_80(&String::from_utf8_lossy(&piped.stderr)).is_empty());
}
