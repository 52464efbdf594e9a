//! The real binary in a pseudo-terminal: keys in, the screen (parsed by a
//! vt100 emulator) and the files under the root checked.

use crate::common;

use std::io::{Read, Write};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use common::FakeRoot;
use portable_pty::{CommandBuilder, PtySize, native_pty_system};

pub(crate) struct Session {
    parser: vt100::Parser,
    output: Receiver<Vec<u8>>,
    input: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    /// Every byte the program wrote, for checking how it left the terminal.
    raw: Vec<u8>,
}

impl Session {
    pub(crate) fn start(args: &[&str], rows: u16, cols: u16) -> Session {
        Session::start_with(args, rows, cols, &[])
    }

    pub(crate) fn start_with(args: &[&str], rows: u16, cols: u16, env: &[(&str, &str)]) -> Session {
        Session::start_program(env!("CARGO_BIN_EXE_plugtop"), args, rows, cols, env)
    }

    fn start_program(
        program: &str,
        args: &[&str],
        rows: u16,
        cols: u16,
        env: &[(&str, &str)],
    ) -> Session {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("pty");
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        cmd.env("TERM", "xterm-256color");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.cwd(env!("CARGO_MANIFEST_DIR"));
        let child = pair.slave.spawn_command(cmd).expect("spawn");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("reader");
        let input = pair.master.take_writer().expect("writer");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let _master = pair.master;
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let size = |n: u16| std::num::NonZeroU16::new(n).expect("a non-zero size");
        Session {
            parser: vt100::Parser::new(size(rows), size(cols), 0),
            output: rx,
            input,
            child,
            raw: Vec::new(),
        }
    }

    fn take(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
        self.raw.extend_from_slice(bytes);
    }

    /// Sends a signal to plugtop (as an SSH drop or `kill` would).
    fn signal(&self, name: &str) {
        let pid = self.child.process_id().expect("a pid");
        let ok = std::process::Command::new("kill")
            .args([&format!("-{name}"), &pid.to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill -{name} {pid}");
    }

    /// Waits for plugtop to end; its exit code and everything it printed.
    pub(crate) fn wait_exit(&mut self) -> (Option<u32>, String) {
        let deadline = Instant::now() + common::hang_guard();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                // Everything it wrote, up to the end of the terminal's
                // output (bounded by the hang guard, never failing on it).
                while let Ok(bytes) = self.output.recv_timeout(common::hang_guard()) {
                    self.take(&bytes);
                }
                return (
                    Some(status.exit_code()),
                    String::from_utf8_lossy(&self.raw).into_owned(),
                );
            }
            assert!(
                Instant::now() < deadline,
                "plugtop did not end; screen:\n{}",
                self.screen()
            );
            if let Ok(bytes) = self.output.recv_timeout(Duration::from_millis(50)) {
                self.take(&bytes);
            }
        }
    }

    pub(crate) fn screen(&self) -> String {
        self.parser.screen().contents()
    }

    /// Reads output until `done` holds (bounded); `what` names it when it
    /// never does.
    pub(crate) fn wait_until(&mut self, what: &str, done: impl Fn(&Session) -> bool) {
        let deadline = Instant::now() + common::hang_guard();
        while !done(self) {
            assert!(
                Instant::now() < deadline,
                "{what}; screen:\n{}",
                self.screen()
            );
            if let Ok(bytes) = self.output.recv_timeout(Duration::from_millis(50)) {
                self.take(&bytes);
            }
        }
    }

    /// Reads output until the screen shows `text` (bounded).
    pub(crate) fn wait_for(&mut self, text: &str) {
        self.wait_until(&format!("never saw {text:?}"), |s| {
            s.screen().contains(text)
        });
    }

    /// Reads output until a whole line starting with `text` was printed,
    /// wherever the screen shows it.
    fn wait_for_raw(&mut self, text: &str) {
        self.wait_until(&format!("never printed {text:?}"), |s| {
            let raw = String::from_utf8_lossy(&s.raw);
            raw.rsplit(text)
                .next()
                .is_some_and(|rest| rest.contains('\n'))
                && raw.contains(text)
        });
    }

    /// Reads output until `text` is gone from the screen (bounded).
    pub(crate) fn wait_gone(&mut self, text: &str) {
        self.wait_until(&format!("{text:?} stayed"), |s| !s.screen().contains(text));
    }

    pub(crate) fn press(&mut self, keys: &str) {
        self.input.write_all(keys.as_bytes()).expect("write keys");
        self.input.flush().expect("flush keys");
    }

    /// Writes `bytes` to plugtop from another thread (a big write blocks
    /// until plugtop has read it) while its output is read here; returns
    /// once all is written (bounded).
    fn write_big(&mut self, bytes: Vec<u8>) {
        let mut input = std::mem::replace(&mut self.input, Box::new(std::io::sink()));
        let (done_tx, done_rx) = channel();
        std::thread::spawn(move || {
            let written = input.write_all(&bytes).and_then(|()| input.flush());
            let _ = done_tx.send((written.is_ok(), input));
        });
        // No time limit: the screen is read meanwhile so plugtop never
        // blocks on its output, and the writer ends when plugtop has read it
        // all or has gone (then the write fails).
        loop {
            if let Ok((written, input)) = done_rx.try_recv() {
                assert!(written, "plugtop stopped reading the terminal");
                self.input = input;
                return;
            }
            if let Ok(bytes) = self.output.recv_timeout(Duration::from_millis(20)) {
                self.take(&bytes);
            }
        }
    }

    /// Presses `keys` again each time 200 ms pass without `text` showing
    /// (bounded): for keys that may land while the program still waits for
    /// the end of an escape sequence.
    pub(crate) fn press_until(&mut self, keys: &str, text: &str) {
        self.press_again_until(keys, &format!("never saw {text:?}"), |s| {
            s.screen().contains(text).then_some(())
        });
    }

    /// Presses `keys` every 200 ms until `done` gives something (bounded;
    /// `what` names it when it never does).
    fn press_again_until<T>(
        &mut self,
        keys: &str,
        what: &str,
        mut done: impl FnMut(&mut Session) -> Option<T>,
    ) -> T {
        let deadline = Instant::now() + common::hang_guard();
        let mut last = Instant::now() - Duration::from_secs(1);
        loop {
            if let Some(got) = done(self) {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "{what} after {keys:?}; screen:\n{}",
                self.screen()
            );
            if last.elapsed() >= Duration::from_millis(200) {
                self.press(keys);
                last = Instant::now();
            }
            if let Ok(bytes) = self.output.recv_timeout(Duration::from_millis(50)) {
                self.take(&bytes);
            }
        }
    }

    /// Quits and waits for the process to end.
    pub(crate) fn quit(mut self) -> bool {
        self.press("q");
        let deadline = Instant::now() + common::hang_guard();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.success();
            }
            assert!(
                Instant::now() < deadline,
                "plugtop did not quit; screen:\n{}",
                self.screen()
            );
            if let Ok(bytes) = self.output.recv_timeout(Duration::from_millis(50)) {
                self.take(&bytes);
            }
        }
    }
}

/// What a shell printed after plugtop ended under it
/// ([`Session::start_under_shell`]): plugtop's exit status, whether the
/// terminal was back in its ordinary mode (line editing, echo and the
/// signal keys on: raw mode off), and every byte plugtop wrote.
pub(crate) struct AfterPlugtop {
    pub(crate) status: Option<u32>,
    pub(crate) cooked: bool,
    pub(crate) raw: String,
}

/// Prints plugtop's exit status and the terminal's mode once it ends.
const AFTER_PLUGTOP: &str = "\"$0\" \"$@\"; status=$?; \
    if stty -a | grep -qwE -- '-icanon|-echo|-isig'; then mode=raw; else mode=cooked; fi; \
    printf 'AFTER %s %s\\n' \"$status\" \"$mode\"";

impl Session {
    /// plugtop run by a shell that, once plugtop ends, prints its exit
    /// status and whether the terminal was left raw.
    pub(crate) fn start_under_shell(
        args: &[&str],
        rows: u16,
        cols: u16,
        env: &[(&str, &str)],
    ) -> Session {
        let mut all = vec!["-c", AFTER_PLUGTOP, env!("CARGO_BIN_EXE_plugtop")];
        all.extend_from_slice(args);
        Session::start_program("sh", &all, rows, cols, env)
    }

    /// Sends `signal` to plugtop, the shell's child.
    pub(crate) fn signal_under_shell(&self, signal: &str) {
        let sh = self.child.process_id().expect("a pid");
        let children =
            std::fs::read_to_string(format!("/proc/{sh}/task/{sh}/children")).expect("children");
        let plugtop = children.split_whitespace().next().expect("plugtop runs");
        let sent = std::process::Command::new("kill")
            .args([&format!("-{signal}"), plugtop])
            .status()
            .is_ok_and(|st| st.success());
        assert!(sent, "kill -{signal} {plugtop}");
    }

    /// Waits for the shell's line after plugtop ended.
    pub(crate) fn after_plugtop(&mut self) -> AfterPlugtop {
        self.wait_for_raw("AFTER ");
        let raw = String::from_utf8_lossy(&self.raw).into_owned();
        let after: Vec<&str> = raw
            .rsplit("AFTER ")
            .next()
            .map_or(vec![], |t| t.split_whitespace().take(2).collect());
        AfterPlugtop {
            status: after.first().and_then(|n| n.parse().ok()),
            cooked: after.get(1) == Some(&"cooked"),
            raw,
        }
    }

    /// Presses `keys` every 200 ms until plugtop ends (bounded): keys that
    /// may land while it still waits for the end of an escape sequence.
    /// Its exit status.
    pub(crate) fn press_until_exit(&mut self, keys: &str) -> Option<u32> {
        self.press_again_until(keys, "plugtop never ended", |s| match s.child.try_wait() {
            Ok(Some(status)) => Some(Some(status.exit_code())),
            _ => None,
        })
    }
}

/// SIGTERM to a full screen started under a shell
/// ([`Session::start_under_shell`]) once it shows `ready`: it ends with
/// 143, the alternate screen left, bracketed paste off, the cursor shown,
/// and raw mode off.
pub(crate) fn sigterm_gives_the_terminal_back(mut s: Session, ready: &str) {
    s.wait_for(ready);
    s.signal_under_shell("TERM");
    let after = s.after_plugtop();
    assert_eq!(after.status, Some(143), "exit status after SIGTERM");
    assert!(after.cooked, "the terminal was left in raw mode");
    let last = |seq: &str| after.raw.rfind(seq);
    for (on, off) in [
        ("\x1b[?1049h", "\x1b[?1049l"),
        ("\x1b[?2004h", "\x1b[?2004l"),
        ("\x1b[?25l", "\x1b[?25h"),
    ] {
        assert!(last(on).is_some(), "{on:?} was sent");
        assert!(last(off) > last(on), "{off:?} after the last {on:?}");
    }
}

/// The state letter of process `pid` (`T` stopped), from `/proc/PID/stat`.
fn process_state(pid: u32) -> Option<char> {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| t.rsplit(')').next().map(|r| r.trim().chars().next()))
        .flatten()
}

/// Ctrl-Z (the byte: raw mode reads it as a key, never as SIGTSTP) to a
/// full screen showing `ready`: it stops with the terminal given back
/// (the alternate screen left, bracketed paste off, the cursor shown,
/// cooked mode), and SIGCONT (`fg`) takes the terminal again and draws
/// `ready` anew. New user nu53 F14: `train` and `fleet` swallowed it.
pub(crate) fn ctrl_z_stops_and_sigcont_redraws(mut s: Session, ready: &str) {
    s.wait_for(ready);
    let pid = s.child.process_id().expect("a pid");
    s.press("\x1a");
    s.wait_until("Ctrl-Z did not stop it", |_| {
        process_state(pid) == Some('T')
    });
    s.wait_until("the terminal is given back while stopped", |s| {
        let raw = String::from_utf8_lossy(&s.raw);
        let last = |seq: &str| raw.rfind(seq);
        [
            ("\x1b[?1049h", "\x1b[?1049l"),
            ("\x1b[?2004h", "\x1b[?2004l"),
            ("\x1b[?25l", "\x1b[?25h"),
        ]
        .iter()
        .all(|(on, off)| last(off).is_some() && last(off) > last(on))
    });
    let stty = std::process::Command::new("stty")
        .args(["-a", "-F", &format!("/proc/{pid}/fd/0")])
        .output()
        .expect("stty");
    let modes = String::from_utf8_lossy(&stty.stdout);
    assert!(
        modes.contains(" icanon") && !modes.contains("-icanon"),
        "the terminal was left raw while stopped: {modes}"
    );
    let before = s.raw.len();
    s.signal("CONT");
    s.wait_until("SIGCONT did not take the terminal and draw again", |s| {
        String::from_utf8_lossy(&s.raw[before..]).contains("\x1b[?1049h")
            && s.screen().contains(ready)
    });
    assert_eq!(s.press_until_exit("q"), Some(0), "q quits after fg");
}

#[test]
fn ctrl_z_stops_the_main_screen_and_sigcont_redraws_it() {
    ctrl_z_stops_and_sigcont_redraws(
        Session::start(&["--sim", "examples/scenarios/daytrader.toml"], 24, 80),
        "OBSERVE",
    );
}

/// The start of a terminal's reply that never ends (`ESC [ ?`), then `q`:
/// the screen showing `ready` still quits, with status 0.
pub(crate) fn an_unfinished_reply_then_q_quits(mut s: Session, ready: &str) {
    s.wait_for(ready);
    s.press("\x1b[?");
    assert_eq!(s.press_until_exit("q"), Some(0), "q quits well");
}

/// A failing test must not leave plugtop running.
impl Drop for Session {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
    }
}

const LEFT: &str = "\x1b[D";

#[test]
fn replay_help_pause_step_back_and_quit() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = common::record_fixture_series(dir.path(), "o.rec");
    let mut s = Session::start(
        &[
            "--replay",
            &rec,
            "-c",
            "examples/rules/recommended-default.conf",
            "--interval",
            "0.05",
        ],
        30,
        110,
    );
    s.wait_for("OBSERVE");
    s.wait_for("end of the recording");
    s.wait_for("#19");
    s.press("?");
    s.wait_for("Keys (any key closes");
    s.press("x");
    s.wait_for("Rules (t selects");
    s.press(LEFT);
    s.wait_for("PAUSED");
    s.wait_for("#18 (1 back)");
    s.press(LEFT);
    s.wait_for("#17 (2 back)");
    s.press("A");
    s.wait_for("Autonomous mode is not possible: this is a recording");
    s.press("\x1b");
    s.wait_gone("is not possible");
    s.press("\t");
    s.wait_for("Truth trace of HOTPLUG");
    assert!(s.quit(), "clean exit");
}

/// Adversary F11 (issue 45 #8): a rule file's name cannot pass for the
/// header's own parts at 80×24: quoted, its newline and escapes written
/// as such, the source (replay) named after it.
#[test]
fn the_header_quotes_a_rule_file_named_like_its_own_parts() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = common::record_fixture_series(dir.path(), "o.rec");
    let rules = crate::terminal_text::spoofing_rules(dir.path());
    let mut s = Session::start(&["--replay", &rec, "-c", &rules], 24, 80);
    s.wait_for("OBSERVE");
    let screen = s.screen();
    let first = screen.lines().next().unwrap_or_default();
    assert!(first.starts_with("plugtop \"evil\\n\\u{1b}[2J"), "{screen}");
    // After the quoted name: the real source, not the name's " · live".
    let Some((_, after)) = first.rsplit_once('"') else {
        panic!("no closing quote:\n{screen}");
    };
    assert!(
        after.contains("replay") && !after.contains("live"),
        "{screen}"
    );
    assert!(s.quit(), "clean exit");
}

#[test]
fn step_confirm_accept_and_reject_write_only_what_was_accepted() {
    let root = FakeRoot::guest(1);
    for i in 0..4 {
        root.write(
            &format!("sys/devices/system/cpu/cpu{i}/online"),
            if i == 0 { "1\n" } else { "0\n" },
        );
        root.write(&format!("sys/devices/system/cpu/cpu{i}/configure"), "1\n");
    }
    root.write("sys/devices/system/cpu/present", "0-3\n");
    let rules = root.path().join("rules.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"4\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules");
    let root_s = root.path().to_string_lossy().into_owned();
    let mut s = Session::start(
        &[
            "--root",
            &root_s,
            "-c",
            &rules.to_string_lossy(),
            "--interval",
            "0.2",
            "--mode",
            "step",
        ],
        30,
        110,
    );
    s.wait_for("STEP-CONFIRM");
    // The box names the CPU cpuplugd would take.
    s.wait_for("Proposed: plug cpu1");
    let online = |i: u32| {
        std::fs::read_to_string(
            root.path()
                .join(format!("sys/devices/system/cpu/cpu{i}/online")),
        )
        .unwrap_or_default()
    };
    assert_eq!(online(1), "0\n", "nothing written before y");
    assert!(
        root.path().join("run/plugtop/state").exists(),
        "journal written before acting"
    );
    s.press("y");
    s.wait_for("plugged cpu1");
    assert_eq!(online(1), "1\n");
    s.wait_for("Proposed: plug cpu2");
    s.press("n");
    s.wait_for("rejected: plug cpu2");
    assert_eq!(online(2), "0\n", "a rejected proposal writes nothing");
    s.press("o");
    s.wait_for("mode changed from step-confirm to observe");
    assert!(s.quit());
    assert_eq!(online(1), "0\n", "quitting put the guest back");
    assert!(!root.path().join("run/plugtop/state").exists());
}

#[test]
fn a_simulated_guest_runs_the_whole_loop_in_autonomous_mode() {
    let mut s = Session::start(
        &[
            "--sim",
            "examples/scenarios/daytrader.toml",
            "--mode",
            "auto",
            "--interval",
            "0.05",
        ],
        24,
        80,
    );
    s.wait_for("AUTONOMOUS");
    // The header says where the scenario stands.
    s.wait_for("idle · 0:");
    s.wait_for(" of 12:30");
    // The idle guest gives its CPUs and memory back, as the rules say,
    // cpu0 first (by name, as cpuplugd on the served root).
    s.wait_for("unplugged cpu0");
    s.wait_for("changing number of pages permanently reserved");
    s.press("+");
    s.wait_for("sim ×2 · ");
    assert!(s.quit());
}

/// New user nu53 F6: `Awxyz` in one write (a fast typist on a laggy link,
/// a paste without bracketed paste) opened the what-if editor *under* the
/// "Autonomous mode" question and typed `xyz` into it. Keys read with the
/// key that asks are dropped, and the log says so; the question is
/// answered only by a key pressed once it is shown.
#[test]
fn keys_typed_ahead_with_a_key_that_asks_never_reach_the_screen_under_the_question() {
    let mut s = Session::start(&["--sim", "examples/scenarios/daytrader.toml"], 24, 80);
    s.wait_for("OBSERVE");
    s.press("Awxyz");
    s.wait_for("y  switch to autonomous");
    s.press("\x1b");
    s.wait_gone("y  switch to autonomous");
    s.press("5");
    s.wait_for("dropped 4 keys typed ahead of a question");
    let screen = s.screen();
    assert!(
        !screen.contains("What-if") && !screen.contains("xyz"),
        "the what-if editor opened under the question:\n{screen}"
    );
    assert!(screen.contains("OBSERVE"), "{screen}");
    // Asked again and answered once shown, it arms.
    s.press("A");
    s.wait_for("y  switch to autonomous");
    s.press("y");
    s.wait_for("AUTONOMOUS");
    assert!(s.quit());
}

/// Issue 45: at 80 columns the header dropped "sim" once the speed and the
/// phase text grew, even in AUTONOMOUS mode; beside a real guest in the
/// next pane that is dangerous. The source's kind stays at every speed.
/// Issue 45 item 2 and new-user finding 12: at 80×24, paused, sped up,
/// back in time and with banners, the header names the simulator, its
/// phase and progress, the alarms with their facts, and tabs by name or
/// not at all (never digits); what it leaves out `?` lists.
#[test]
fn the_header_names_the_simulator_at_80_columns_whatever_the_speed() {
    let mut s = oscillating_autonomous("0.05", &[]);
    s.wait_for("AUTONOMOUS");
    s.wait_for("CPUS FLAPPING");
    // Paused first (at ×64 the scenario could end before the keys are
    // read on a loaded machine), then sped up and a dozen intervals back:
    // the clock takes more room too.
    s.press(" ");
    s.wait_for("PAUSED");
    for _ in 0..6 {
        s.press("+");
    }
    s.wait_for("×64");
    let screen = s.screen();
    let mut lines = screen.lines();
    let header = lines.next().unwrap_or_default();
    let second = lines.next().unwrap_or_default();
    assert!(header.contains(" sim ×64 · "), "{screen}");
    assert!(
        header.contains("oscillat") && header.contains(".conf"),
        "{screen}"
    );
    // The alarms with their facts, the tabs by name or not at all.
    assert!(
        second.contains("PAUSED") && second.contains("CPUS FLAP"),
        "{screen}"
    );
    assert!(second.contains(" intervals "), "{screen}");
    assert!(
        !second.contains(" 2  3 ") && !second.contains("  LOOP "),
        "{screen}"
    );
    // The phase and the progress: on the first line, else the second,
    // else `?` lists them with whatever else had no room.
    let phase = |text: &str| text.contains("pulses · ") && text.contains(" of 6:00");
    let more = second.contains(" in ? ");
    assert!(phase(header) || phase(second) || more, "{screen}");
    s.press("?");
    s.wait_for("Keys (any key closes");
    let help = s.screen();
    if more {
        assert!(help.contains("Not in the header (no room): "), "{help}");
        assert!(phase(&help), "{help}");
    }
    s.press("?");
    s.wait_gone("Keys (any key closes");
    // Intervals back the clock takes more room (the simulator reads on
    // while the screen is paused, so the count grows); the source stays.
    for _ in 0..12 {
        s.press("\x1b[D");
    }
    s.wait_until("never back in time", |s| {
        s.screen()
            .lines()
            .next()
            .is_some_and(|l| l.contains(" back) "))
    });
    let screen = s.screen();
    let header = screen.lines().next().unwrap_or_default();
    assert!(header.contains(" sim ×64 · "), "{screen}");
    assert!(
        header.contains("oscillat") && header.contains(".conf"),
        "{screen}"
    );
    assert!(s.quit());
}

#[test]
fn the_whatif_editor_checks_as_you_type_and_shows_the_counterfactual() {
    let mut s = oscillating_autonomous("0.02", &[]);
    // The banner comes when the pulses start (0:30) and the rules chase them.
    s.wait_for("CPUS FLAPPING");
    s.press("w");
    s.wait_for("What-if: HOTPLUG");
    s.wait_for("cpuplugd would load it");
    // A typo: the error shows at once, under the text.
    s.press("(");
    s.wait_for("^ unexpected `(`");
    // Undone: no edit is left, and the title stops counting one.
    s.press("\x7f");
    s.wait_for("cpuplugd would load it (nothing edited yet");
    assert!(!s.screen().contains("(1 edited)"), "{}", s.screen());
    // A valid edit: a stricter threshold, then Enter runs it.
    s.press("\x7f\x7f\x7f0.05");
    s.wait_for("< 0.05");
    s.press("\r");
    s.wait_for("what-if   ");
    s.wait_for("closed loop: the scenario played again");
    s.wait_for("differ in ");
    // Esc closes the editor; keys are the UI's again.
    s.press("\x1b");
    s.wait_gone("What-if: HOTPLUG");
    s.press("\t\t\t");
    s.wait_for("Flips: why the decisions changed");
    s.wait_for("HOTPLUG false → true");
    assert!(s.quit());
}

/// nu54 F1: a rule file that makes cpuplugd exit (a /proc/vmstat name
/// only old kernels have, on the new-kernel simulator) run from the
/// what-if editor: the box says cpuplugd stops and why, as `plugtop sim
/// --compare` does, and compares no figures (they were zeros: "online
/// CPUs, average 1.00 / 0.00").
#[test]
fn a_whatif_file_that_stops_cpuplugd_says_so_and_compares_no_figures() {
    let mut s = Session::start(
        &[
            "--sim",
            "examples/scenarios/webserver.toml",
            "--interval",
            "0.02",
        ],
        24,
        80,
    );
    s.wait_for("#20");
    let text = whatif_memory_config_4(&mut s, "a stopped run's mean nothing");
    assert!(
        text.contains(
            "memory-config-4.conf stopped the simulated cpuplugd after 0:03 \
             (as cpuplugd would exit): Symbol pgscan_direct_dma not found"
        ),
        "{}",
        s.screen()
    );
    assert!(text.contains("run with --old-kernel"), "{}", s.screen());
    assert!(
        text.contains("so no figures are compared: a stopped run's mean nothing"),
        "{}",
        s.screen()
    );
    assert!(!text.contains("as sim --compare"), "{}", s.screen());
    s.press("\x1b");
    s.wait_gone("What-if:");
    assert!(s.quit());
}

/// nu54 F1 over a recording (open loop): where the file would stop
/// cpuplugd, and that the edited rules decide nothing after it.
#[test]
fn a_whatif_file_that_stops_cpuplugd_over_a_recording_says_where() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = dir.path().join("web.rec");
    common::record_simulated("webserver", "recommended-modern", 30.0, 1.0, &rec);
    let rec = rec.to_string_lossy().into_owned();
    let mut s = Session::start(&["--replay", &rec], 24, 80);
    s.press("G");
    s.wait_for("#30");
    let text = whatif_memory_config_4(&mut s, "are compared only on --sim");
    assert!(
        text.contains(
            "memory-config-4.conf would stop cpuplugd at #3 (as cpuplugd would exit): \
             Symbol pgscan_direct_dma not found"
        ),
        "{}",
        s.screen()
    );
    assert!(
        text.contains("which this guest's kernel lacks"),
        "{}",
        s.screen()
    );
    assert!(text.contains("edited: 0 decided"), "{}", s.screen());
    s.press("\x1b");
    s.wait_gone("What-if:");
    assert!(s.quit());
}

/// nu54 F3: one flap period. A guest whose flapping quickens (the combo
/// scenario under the incident's rules: a cycle every 4.0 intervals when
/// it starts, about 3.5 at the end): the replay's Flips view at the end of
/// the recording and `plugtop whatif` over it say the same reversals and
/// the same period (whatif said the first window's, 4.0).
#[test]
fn the_flips_view_and_whatif_give_one_flap_period_for_a_recording() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = dir.path().join("combo.rec");
    common::record_simulated("combo", "oscillating-tight", 120.0, 1.0, &rec);
    let rec = rec.to_string_lossy().into_owned();
    let rules = "examples/rules/oscillating-tight.conf";
    let o = common::plugtop(&["whatif", "--replay", &rec, "-c", rules, "--wide"]);
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    // "oscillating-tight.conf at #120: CPU count flapping: …"
    let said = report
        .lines()
        .find(|l| l.starts_with("oscillating-tight.conf at #"))
        .and_then(|l| l.split_once(": "))
        .map(|(at, finding)| {
            (
                at.rsplit('#').next().unwrap_or_default().to_string(),
                finding.to_string(),
            )
        })
        .unwrap_or_default();
    assert!(said.1.starts_with("CPU count flapping: "), "{report}");
    // The period it found at first is not the one at the end.
    assert!(!said.1.contains("every 4.0 intervals"), "{report}");
    let mut s = Session::start(&["--replay", &rec, "-c", rules], 24, 80);
    s.press("G");
    s.wait_for("end of the recording");
    s.wait_for(&format!("#{}", said.0));
    s.press("4");
    s.wait_for("Flips: why the decisions changed");
    let words = |s: &Session| screen_words(s);
    s.wait_until("the flapping said", |s| words(s).contains("a cycle every"));
    assert!(words(&s).contains(&said.1), "{}\n{report}", s.screen());
    assert!(s.quit());
}

/// The what-if editor opened on `s` with `examples/rules/memory-config-4.conf`
/// (it names /proc/vmstat fields only old kernels have) run by Enter: the
/// screen's words once the box says cpuplugd stops and ends with `last`,
/// its borders and a wrapped line's break as blanks. Before Enter the editor says cpuplugd
/// would load the file and then exit.
fn whatif_memory_config_4(s: &mut Session, last: &str) -> String {
    let words = |s: &Session| {
        s.screen()
            .replace('│', " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    s.press("w");
    s.wait_for("What-if: HOTPLUG");
    s.press("\x0f");
    s.wait_for("type the path of a rule file");
    s.press("examples/rules/memory-config-4.conf");
    s.wait_until("the load said", |s| {
        words(s).contains(
            "cpuplugd would load this file, then exit the first time it evaluates line 22:11",
        )
    });
    assert!(
        !words(s).contains("✓ cpuplugd would load"),
        "{}",
        s.screen()
    );
    s.press("\r");
    s.wait_until("the stop said", |s| {
        let w = words(s);
        w.contains("(as cpuplugd would exit)") && w.contains(last)
    });
    words(s)
}

/// Adversary F1 (issue 45): while the simulator ran on, the what-if
/// box's timeline drained as old intervals left the history ("differ in 0
/// of 248" beside 209 decisions). The box keeps the window it ran over at
/// Enter, says so, and its lines stay as they were while 700 more readings
/// come in. (Paused, the simulator now waits: `time_pty`.)
#[test]
fn a_whatif_box_keeps_its_window_while_the_simulator_runs_on() {
    let mut s = oscillating_autonomous("0.005", &[]);
    s.wait_for("AUTONOMOUS");
    s.press("w");
    s.wait_for("What-if: HOTPLUG");
    s.press("\x7f\x7f\x7f0.05");
    s.wait_for("< 0.05");
    s.press("\r");
    s.wait_for(" as at Enter");
    s.wait_for("flapping ");
    // The box's lines, from the window's span to its last figure.
    let window = |s: &Session| -> Vec<String> {
        let screen = s.screen();
        let lines: Vec<&str> = screen.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains(" as at Enter"))
            .unwrap_or(lines.len());
        lines[at..]
            .iter()
            .take_while(|l| !l.contains('└'))
            .map(|l| l.to_string())
            .collect()
    };
    let at_enter = window(&s);
    assert!(at_enter.len() > 5, "{}", s.screen());
    // The newest reading: the interval shown ("#N") and how far back it
    // is ("(B back)"), from the header.
    let newest = |s: &Session| -> usize {
        let screen = s.screen();
        let header = screen.lines().next().unwrap_or_default().to_string();
        let number = |text: &str| -> usize {
            let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().unwrap_or(0)
        };
        let shown = header.find('#').map_or(0, |at| number(&header[at + 1..]));
        let back = header.find(" (").map_or(0, |at| number(&header[at + 2..]));
        shown + back
    };
    let from = newest(&s);
    // Far more readings than the history keeps: the window's intervals
    // have left it.
    s.wait_until("700 more readings", |s| newest(s) > from + 700);
    assert_eq!(window(&s), at_enter, "{}", s.screen());
    s.press("\x1b");
    s.wait_gone("What-if: HOTPLUG");
    assert!(s.quit());
}

/// A replay at 80×24 under the rules `good`, which then become `broken`
/// and are reloaded with `r`: the screen showing the refusal.
fn reload_refused(good: &str, broken: &str) -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = common::record_fixture_series(dir.path(), "o.rec");
    let rules = dir.path().join("r.conf");
    std::fs::write(&rules, good).expect("rules written");
    let path = rules.to_string_lossy().into_owned();
    let mut s = Session::start(
        &["--replay", &rec, "-c", &path, "--interval", "0.05"],
        24,
        80,
    );
    s.wait_for("#19");
    std::fs::write(&rules, broken).expect("rules broken");
    s.press("r");
    s.wait_for("Reload failed: the old rules stay active");
    (dir, s)
}

#[test]
fn a_refused_reload_is_drawn_like_check_with_its_caret_and_the_old_rules_stay() {
    let good =
        std::fs::read_to_string("examples/rules/recommended-default.conf").expect("the rules");
    // A typo in a variable's name: cpuplugd would refuse the file.
    let broken = good.replace("(1 - CP_ActiveAVG)", "(1 - CP_ActiveAVX)");
    assert_ne!(broken, good);
    let (_dir, mut s) = reload_refused(&good, &broken);
    let screen = s.screen();
    assert!(!screen.contains("Not possible"), "{screen}");
    // As `plugtop check` draws it: the source line, and the caret on the
    // next line under the unknown name.
    let lines: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let at = lines
        .iter()
        .position(|l| l.iter().collect::<String>().contains("| HOTPLUG="))
        .unwrap_or_else(|| panic!("no source line:\n{screen}"));
    let caret = lines[at + 1]
        .iter()
        .position(|c| *c == '^')
        .unwrap_or_else(|| panic!("no caret under it:\n{screen}"));
    let pointed: String = lines[at][caret..].iter().take(12).collect();
    assert_eq!(pointed, "CP_ActiveAVX", "{screen}");
    assert!(screen.contains("did you mean `CP_ActiveAVG`?"), "{screen}");
    // Any key closes it; the rules that ran before still run.
    s.press("x");
    s.wait_gone("Reload failed");
    s.press("\t");
    s.wait_for("Truth trace of HOTPLUG");
    s.wait_for("HOTPLUG = ((1 - CP_ActiveAVG) * onumcpus) < 0.08");
    assert!(s.quit());
}

/// newuser51 #21: a failed reload said "1 error, 1 warning" and showed
/// only the error; the warning (a setting given twice, the later one
/// used) is the very reason an edit takes effect. Both are shown.
#[test]
fn a_refused_reload_shows_the_warnings_it_counts() {
    // The CPU rules alone: no finding of a memory group this machine has
    // off among the warnings.
    let good = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 300\"\n";
    let broken = good.replace("idle < 10", "idle < 10 +") + "HOTUNPLUG=\"idle > 100\"\n";
    let (_dir, mut s) = reload_refused(good, &broken);
    let screen = s.screen();
    assert!(screen.contains("1 error, 1 warning"), "{screen}");
    assert!(
        screen.contains("HOTUNPLUG was already set on line"),
        "{screen}"
    );
    s.press("x");
    s.wait_gone("Reload failed");
    assert!(s.quit());
}

#[test]
fn a_whatif_edit_applied_runs_in_the_session_and_written_passes_check() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let state = dir.path().join("state");
    let state_env = state.display().to_string();
    let mut s = oscillating_autonomous("0.05", &[("XDG_STATE_HOME", &state_env)]);
    s.wait_for("AUTONOMOUS");
    s.press("w");
    s.wait_for("What-if: HOTPLUG");
    // HOTPLUG never true: Ctrl-U clears, then the new rule.
    s.press("\x15");
    s.press("0");
    s.wait_for("(edited: HOTPLUG)");
    // Ctrl-R: the diff first; nothing changes before the yes.
    s.press("\x12");
    s.wait_for("Apply the edited rules?");
    s.wait_for("+ HOTPLUG=\"0\"");
    s.wait_for("- HOTPLUG=\"((1 - CP_Active) * onumcpus) < 0.3\"");
    s.press("y");
    s.wait_gone("Apply the edited rules?");
    // The session decides with the edited rules from the next interval.
    s.press("2");
    s.wait_for("HOTPLUG false (the constant 0)");
    s.press("/reloaded\r");
    s.wait_for("rules reloaded; the history is kept");
    // Written from the editor: a new file in the state directory offered.
    s.press("1w");
    s.wait_for("nothing edited yet: these are the rules in force");
    s.press("\x13");
    s.wait_for("Write the edited rules");
    s.wait_for(&state.join("plugtop").display().to_string());
    s.press("\r");
    s.wait_for("Edited rules written");
    s.press("x");
    s.press("\x1b");
    s.wait_gone("What-if:");
    assert!(s.quit());
    let files: Vec<_> = std::fs::read_dir(state.join("plugtop"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert_eq!(files.len(), 1, "{files:?}");
    let written = std::fs::read_to_string(&files[0]).unwrap_or_default();
    assert!(written.contains("\nHOTPLUG=\"0\"\n"), "{written}");
    assert!(
        written.starts_with("# The rules of the oscillating-guest incident"),
        "the file's comments are kept: {written}"
    );
    let check = std::process::Command::new(env!("CARGO_BIN_EXE_plugtop"))
        .arg("check")
        .arg(&files[0])
        .output()
        .expect("plugtop check");
    assert!(check.status.success(), "{check:?}");
}

/// A four-CPU test guest with cpu0 online, and rules that always plug.
fn plugging_guest() -> (FakeRoot, String) {
    let root = FakeRoot::guest(1);
    for i in 0..4 {
        root.write(
            &format!("sys/devices/system/cpu/cpu{i}/online"),
            if i == 0 { "1\n" } else { "0\n" },
        );
        root.write(&format!("sys/devices/system/cpu/cpu{i}/configure"), "1\n");
    }
    root.write("sys/devices/system/cpu/present", "0-3\n");
    let rules = root.path().join("rules.conf");
    std::fs::write(
        &rules,
        "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"4\"\nHOTPLUG=\"1\"\nHOTUNPLUG=\"0\"\n",
    )
    .expect("rules");
    let rules = rules.to_string_lossy().into_owned();
    (root, rules)
}

fn cpu_online(root: &FakeRoot, i: u32) -> String {
    std::fs::read_to_string(
        root.path()
            .join(format!("sys/devices/system/cpu/cpu{i}/online")),
    )
    .unwrap_or_default()
}

/// The terminal was given back: alternate screen left, mouse reporting and
/// bracketed paste off, cursor shown, each after it was last turned on.
fn terminal_restored(output: &str) -> bool {
    let last = |seq: &str| output.rfind(seq);
    [
        ("\x1b[?1049h", "\x1b[?1049l"),
        ("\x1b[?1000h", "\x1b[?1000l"),
        ("\x1b[?2004h", "\x1b[?2004l"),
        ("\x1b[?25l", "\x1b[?25h"),
    ]
    .iter()
    .all(|(on, off)| last(off).is_some() && last(off) > last(on))
}

fn autonomous_then_signal(signal: &str, code: u32) {
    let (root, rules) = plugging_guest();
    let root_s = root.path().to_string_lossy().into_owned();
    let mut s = Session::start(
        &[
            "--root",
            &root_s,
            "-c",
            &rules,
            "--interval",
            "0.2",
            "--mode",
            "auto",
        ],
        30,
        110,
    );
    s.wait_for("AUTONOMOUS");
    s.wait_for("plugged cpu1");
    assert_eq!(cpu_online(&root, 1), "1\n");
    assert!(root.path().join("run/plugtop/state").exists());
    s.signal(signal);
    let (status, output) = s.wait_exit();
    assert_eq!(status, Some(code), "exit code after SIG{signal}");
    for i in 1..4 {
        assert_eq!(
            cpu_online(&root, i),
            "0\n",
            "cpu{i} is put back after SIG{signal}"
        );
    }
    assert!(
        !root.path().join("run/plugtop/state").exists(),
        "the journal goes after a full restore"
    );
    assert!(
        terminal_restored(&output),
        "terminal left raw after SIG{signal}"
    );
}

#[test]
fn sighup_in_autonomous_mode_puts_the_guest_and_the_terminal_back() {
    autonomous_then_signal("HUP", 129);
}

#[test]
fn sigterm_in_autonomous_mode_puts_the_guest_and_the_terminal_back() {
    autonomous_then_signal("TERM", 143);
}

#[test]
fn a_failed_restore_keeps_the_journal_and_says_how_to_retry() {
    let (root, rules) = plugging_guest();
    let root_s = root.path().to_string_lossy().into_owned();
    let mut s = Session::start(
        &[
            "--root",
            &root_s,
            "-c",
            &rules,
            "--interval",
            "0.2",
            "--mode",
            "auto",
        ],
        30,
        110,
    );
    s.wait_for("plugged cpu1");
    // cpu1's online file can no longer be written: the restore cannot
    // finish (these rules have no memory group, so the pool is not put
    // back and cannot be what fails).
    let online = root.path().join("sys/devices/system/cpu/cpu1/online");
    std::fs::remove_file(&online).expect("remove cpu1/online");
    std::fs::create_dir(&online).expect("cpu1/online as a directory");
    s.signal("TERM");
    let (status, output) = s.wait_exit();
    assert_eq!(status, Some(1), "a failed restore is a failure");
    assert!(
        root.path().join("run/plugtop/state").exists(),
        "the journal stays for `plugtop restore`"
    );
    // Wrapped at the terminal's width, like every line said after it.
    assert!(
        said_after_the_screen(&output).contains("plugtop restore --root"),
        "{output}"
    );
    assert!(terminal_restored(&output));
}

/// The screen's text with runs of blanks (a wrapped line's break and
/// indent among them) as one space.
fn screen_words(s: &Session) -> String {
    s.screen().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The screen on `root` under `rules`, a reading every 0.2 s, with
/// `more` options, at `size` (rows, columns).
fn screen_on(root: &FakeRoot, rules: &str, more: &[&str], size: (u16, u16)) -> Session {
    let root = root.path().to_string_lossy().into_owned();
    let mut args = vec!["--root", &root, "-c", rules, "--interval", "0.2"];
    args.extend_from_slice(more);
    Session::start(&args, size.0, size.1)
}

/// [`plugging_guest`] with the journal of a dead plugtop (pid 999999999)
/// that found CPUs `online`, as a `kill -9` leaves it.
fn left_changed_by_a_dead_run(online: &str) -> (FakeRoot, String) {
    let (root, rules) = plugging_guest();
    let canonical = std::fs::canonicalize(root.path()).expect("canonical root");
    root.write(
        "run/plugtop/state",
        &format!(
            "plugtop-state 1\npid 999999999\nroot {}\nonline {online}\ncmm_pages none\n",
            canonical.display()
        ),
    );
    (root, rules)
}

/// New user nu53 F7: after a `kill -9`'d daemon left the guest changed,
/// the screen said nothing until arming, its question promised a restore
/// it could not make, and the refusal said "start with --force", which the
/// screen does not accept. Now the header and the Log say it at once (who,
/// what it found, the command), `s` is refused naming commands that work,
/// and once `plugtop restore` ran the alarm goes and arming asks again.
#[test]
fn a_dead_plugtops_journal_is_said_at_once_and_arming_names_commands_that_work() {
    let (root, rules) = left_changed_by_a_dead_run("0-2");
    let root_s = root.path().to_string_lossy().into_owned();
    let mut s = screen_on(&root, &rules, &[], (24, 80));
    s.wait_for("OBSERVE");
    s.wait_for("UNRESTORED");
    s.press("5");
    s.wait_until("the Log says who left the guest changed", |s| {
        screen_words(s).contains("a plugtop (pid 999999999) ended without putting this guest back")
    });
    s.wait_until("the Log says what it found and how to put it back", |s| {
        let words = screen_words(s);
        words.contains("CPUs 0-2 online") && words.contains("(now cpu0 online)")
    });
    s.press("s");
    s.wait_for("will not change this machine");
    let words = screen_words(&s);
    assert!(
        words.contains("then arm again") && words.contains("plugtop run --force"),
        "{words}"
    );
    assert!(
        !words.contains("Act on this guest?") && !words.contains("start with --force"),
        "{words}"
    );
    s.press("\x1b");
    s.wait_gone("will not change this machine");
    let restored = common::plugtop(&["restore", "--root", &root_s]);
    assert!(restored.status.success(), "{restored:?}");
    s.wait_gone("UNRESTORED");
    // nu54 M16: the Log says why the alarm went.
    s.wait_until("the Log says the journal went", |s| {
        screen_words(s).contains("the journal of plugtop pid 999999999 is gone")
    });
    s.press("s");
    s.wait_for("Act on this guest?");
    s.press("n");
    assert!(s.quit());
}

/// New user nu53 F11: `--mode auto` refused at the start logged "starting
/// in autonomous mode" and nothing of the refusal once its box was
/// closed. The Log says what happened and why. (A dead run's journal
/// refuses here; off s390 the machine check refuses the same way.)
#[test]
fn a_mode_refused_at_the_start_is_logged_as_refused_never_as_started() {
    let (root, rules) = left_changed_by_a_dead_run("0");
    let mut s = screen_on(&root, &rules, &["--mode=auto"], (24, 80));
    s.wait_for("staying in observe mode");
    s.press("\x1b");
    s.wait_gone("staying in observe mode");
    s.press("5");
    s.wait_until("the Log says the mode was refused", |s| {
        screen_words(s).contains(
            "autonomous mode refused at the start, observing: a plugtop (pid 999999999) ended",
        )
    });
    let words = screen_words(&s);
    assert!(!words.contains("starting in"), "{words}");
    assert!(words.contains("OBSERVE"), "{words}");
    assert!(s.quit());
}

#[test]
fn arming_a_test_root_asks_first_and_says_what_it_takes() {
    let (root, rules) = plugging_guest();
    let mut s = screen_on(&root, &rules, &[], (30, 110));
    s.wait_for("OBSERVE");
    s.wait_for("#2");
    // The header names the z/VM guest from the root's /proc/sysinfo.
    s.wait_for("(z/VM LINUX01)");
    s.press("s");
    s.wait_for("Act on this guest?");
    s.wait_for("takes the lock");
    s.wait_for("quitting puts back: cpu0 online");
    assert!(
        !root.path().join("run/plugtop/state").exists(),
        "nothing taken before y"
    );
    s.press("n");
    s.wait_gone("Act on this guest?");
    assert!(!root.path().join("run/plugtop/state").exists());
    s.press("s");
    s.wait_for("Act on this guest?");
    s.press("y");
    s.wait_for("STEP-CONFIRM");
    assert!(root.path().join("run/plugtop/state").exists());
    // Quitting prints what it put back on the normal terminal, after
    // leaving the alternate screen, as `plugtop run` does (new-user
    // finding 15).
    s.press("q");
    let (code, output) = s.wait_exit();
    assert_eq!(code, Some(0), "{output}");
    let left = output.rfind("\x1b[?1049l").unwrap_or_default();
    assert!(
        output[left..].contains("plugtop: restored the start state: cpu0 online"),
        "{output}"
    );
}

/// What plugtop printed once the screen was gone (after it left the
/// alternate screen), its words joined by single blanks.
pub(crate) fn said_after_the_screen(output: &str) -> String {
    let left = output.rfind("\x1b[?1049l").unwrap_or_default();
    output[left..]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Adversary F9 (issue 45 #11): quitting an acting `--sim` screen says
/// what ended, as quitting a served root says what it put back: the
/// simulated guest is discarded, nothing real was changed.
#[test]
fn quitting_the_simulator_says_the_simulated_guest_is_discarded() {
    let mut s = Session::start(
        &[
            "--sim",
            "examples/scenarios/daytrader.toml",
            "--mode",
            "auto",
        ],
        24,
        80,
    );
    s.wait_for("AUTONOMOUS");
    s.wait_for("#2 ");
    s.press("q");
    let (code, output) = s.wait_exit();
    assert_eq!(code, Some(0), "{output}");
    let after = said_after_the_screen(&output);
    assert!(
        after.contains("plugtop: the simulated guest ended with CPU")
            && after.contains("is discarded; nothing on this machine was changed"),
        "{output}"
    );
    // nu53 F2: said as one line of 110 columns, which the 80-column
    // terminal broke mid-word ("disc|arded"); it wraps between words.
    let left = output.rfind("\x1b[?1049l").unwrap_or_default();
    let rows: Vec<String> = output[left..].split('\n').map(without_escapes).collect();
    assert!(rows.len() > 2, "{rows:?}");
    assert!(
        rows.iter().all(|r| plugtop::tui::view::fit::cols(r) <= 80),
        "{rows:#?}"
    );
}

/// `raw` without its escape sequences (CSI, ESC and one character) and
/// carriage returns: the text a terminal shows of it.
fn without_escapes(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' if chars.peek() == Some(&'[') => {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() || c == '~' {
                        break;
                    }
                }
            }
            '\x1b' => {
                chars.next();
            }
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// newuser51 #21: SIGTERM to an observing screen said "the guest was put
/// back" though nothing was changed. It says what was done: nothing on
/// an observed guest, and a simulated guest discarded.
#[test]
fn a_signal_to_an_observing_screen_says_nothing_was_changed() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = dir.path().join("day.rec");
    common::record_simulated("daytrader", "cpu-loadavg", 30.0, 1.0, &rec);
    let rec = rec.to_string_lossy().into_owned();
    for (args, said) in [
        (
            vec!["--sim", "examples/scenarios/daytrader.toml"],
            "ended by signal 15; the simulated guest is discarded; nothing on this machine was changed",
        ),
        (
            vec![
                "--replay",
                rec.as_str(),
                "-c",
                "examples/rules/cpu-loadavg.conf",
            ],
            "ended by signal 15; nothing on the guest was changed (it was only observed)",
        ),
    ] {
        let mut s = Session::start(&args, 24, 80);
        s.wait_for("OBSERVE");
        s.signal("TERM");
        let (code, output) = s.wait_exit();
        assert_eq!(code, Some(143), "{output}");
        let after = said_after_the_screen(&output);
        assert!(after.contains(said), "{args:?}: {after}");
        assert!(!after.contains("put back"), "{args:?}: {after}");
    }
}

/// newuser51 #21: `]` at the newest interval on `--sim` said nothing;
/// docs/screen.md says it tells there is no later change yet.
#[test]
fn next_change_at_the_newest_on_the_simulator_says_there_is_none_yet() {
    let mut s = Session::start(&["--sim", "examples/scenarios/daytrader.toml"], 24, 80);
    s.wait_for("OBSERVE");
    s.wait_for("#3 ");
    s.press(" ");
    s.wait_for("PAUSED");
    s.press("]");
    s.wait_for("no later change yet");
    s.press("\x1b");
    s.wait_gone("no later change yet");
    assert!(s.quit());
}

#[test]
fn tmux_kill_session_puts_the_guest_back() {
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("tmux is not installed; skipped");
        return;
    }
    let (root, rules) = plugging_guest();
    let name = format!("plugtop-test-{}", std::process::id());
    let bin = env!("CARGO_BIN_EXE_plugtop");
    let command = format!(
        "{bin} --root {} -c {rules} --interval 0.2 --mode auto",
        root.path().display()
    );
    let started = std::process::Command::new("tmux")
        .args([
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            "110",
            "-y",
            "30",
            &command,
        ])
        .status()
        .is_ok_and(|s| s.success());
    assert!(started, "tmux new-session");
    let journal = root.path().join("run/plugtop/state");
    let deadline = Instant::now() + common::hang_guard();
    while cpu_online(&root, 1) != "1\n" {
        assert!(
            Instant::now() < deadline,
            "plugtop never plugged cpu1 in tmux"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(journal.exists());
    let _ = std::process::Command::new("tmux")
        .args(["kill-session", "-t", &name])
        .status();
    let deadline = Instant::now() + common::hang_guard();
    while journal.exists() {
        assert!(
            Instant::now() < deadline,
            "the journal stayed after kill-session"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    for i in 1..4 {
        assert_eq!(
            cpu_online(&root, i),
            "0\n",
            "cpu{i} put back after kill-session"
        );
    }
}

#[test]
fn acting_on_this_machine_is_refused_when_it_is_not_a_zvm_guest() {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    if cpuinfo.contains("version = FF") {
        eprintln!("this machine is a z/VM guest; the refusal does not apply");
        return;
    }
    let (_root, rules) = plugging_guest();
    let mut s = Session::start(&["-c", &rules, "--interval", "0.2"], 30, 160);
    s.wait_for("OBSERVE");
    s.wait_for("(not a z/VM guest)");
    s.press("s");
    s.wait_for("plugtop will not change this machine");
    s.wait_for("--allow-non-zvm");
    assert!(
        !std::path::Path::new("/run/plugtop/state").exists(),
        "nothing journaled"
    );
    s.press("x");
    s.wait_gone("will not change");
    s.press("A");
    s.wait_for("plugtop will not change this machine");
    assert!(s.screen().contains("OBSERVE"));
    drop(s);
}

/// The screen in step-confirm on `root`, with cpu1's plug accepted and its
/// write held: every sysfs write waits until the returned gate file
/// exists, as taking an s390 CPU offline can take seconds, so the write is
/// in progress for as long as the test looks, however loaded the machine.
fn plugging_held_at_the_gate(root: &FakeRoot, rules: &str) -> (Session, std::path::PathBuf) {
    let root_s = root.path().to_string_lossy().into_owned();
    let gate = root.path().join("write-gate");
    let gate_s = gate.to_string_lossy().into_owned();
    let mut s = Session::start_with(
        &[
            "--root",
            &root_s,
            "-c",
            rules,
            "--interval",
            "3",
            "--mode",
            "step",
        ],
        30,
        110,
        &[("PLUGTOP_TEST_WRITE_GATE", &gate_s)],
    );
    accept(&mut s, "Proposed: plug cpu1", "… plugging a CPU");
    (s, gate)
}

/// Presses `y` on `proposal` until the screen shows `progress`. A `y` that
/// a loaded machine delivers as one interval's proposal gives way to the
/// next is pressed again once the interval number moves on; each wait is
/// for something the screen shows, never for a time.
fn accept(s: &mut Session, proposal: &str, progress: &str) {
    let interval = |s: &Session| {
        let screen = s.screen();
        let first = screen.lines().next().unwrap_or("").to_string();
        first.rsplit('#').next().map(|t| {
            t.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
    };
    for _ in 0..20 {
        s.wait_until(&format!("never saw {proposal:?} or {progress:?}"), |s| {
            let screen = s.screen();
            screen.contains(proposal) || screen.contains(progress)
        });
        if s.screen().contains(progress) {
            return;
        }
        let at = interval(s);
        s.press("y");
        s.wait_until(&format!("never saw {progress:?} after y"), |s| {
            s.screen().contains(progress) || interval(s) != at
        });
    }
    panic!(
        "{proposal:?} never led to {progress:?}; screen:\n{}",
        s.screen()
    );
}

#[test]
fn a_slow_cpu_write_shows_progress_and_the_keys_go_on_working() {
    let (root, rules) = plugging_guest();
    let (mut s, gate) = plugging_held_at_the_gate(&root, &rules);
    // The screen is not held by the write: the help opens while it runs.
    s.press("?");
    s.wait_for("Keys (any key closes");
    assert!(s.screen().contains("… plugging a CPU"), "{}", s.screen());
    assert_eq!(cpu_online(&root, 1), "0\n", "still writing");
    std::fs::write(&gate, "").expect("open the gate");
    s.wait_gone("plugging a CPU");
    assert_eq!(cpu_online(&root, 1), "1\n");
    s.press("x");
    s.wait_gone("Keys (any key closes");
    assert!(s.quit());
    assert_eq!(cpu_online(&root, 1), "0\n", "put back on quit");
}

#[test]
fn quitting_while_a_cpu_write_is_held_gives_the_guest_back_once_it_ends() {
    let (root, rules) = plugging_guest();
    let (mut s, gate) = plugging_held_at_the_gate(&root, &rules);
    // `q` while the write is held: the screen stays until the control
    // thread has put the guest back, which waits for the write to end.
    s.press("q");
    assert!(
        matches!(s.child.try_wait(), Ok(None)),
        "it must not end before the guest is given back"
    );
    std::fs::write(&gate, "").expect("open the gate");
    assert!(s.quit(), "ends well once the write ended");
    assert_eq!(cpu_online(&root, 1), "0\n", "put back after the held write");
    assert!(
        !root.path().join("run/plugtop/state").exists(),
        "journal removed after the restore"
    );
}

#[test]
fn sigtstp_gives_the_terminal_back_and_fg_redraws_everything() {
    let (root, rules) = plugging_guest();
    let root_s = root.path().to_string_lossy().into_owned();
    let mut s = Session::start(
        &["--root", &root_s, "-c", &rules, "--interval", "0.5"],
        30,
        110,
    );
    s.wait_for("OBSERVE");
    let pid = s.child.process_id().expect("a pid");
    s.signal("TSTP");
    s.wait_until("plugtop did not stop", |_| process_state(pid) == Some('T'));
    // Stopped, it has written all it will: the restore is on its way.
    s.wait_until("the terminal is given back while stopped", |s| {
        terminal_restored(&String::from_utf8_lossy(&s.raw))
    });
    s.signal("CONT");
    s.wait_for("OBSERVE");
    s.wait_for("Rules (t selects");
    assert!(s.quit());
}

#[test]
fn an_unfinished_escape_sequence_never_eats_the_keyboard() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = common::record_fixture_series(dir.path(), "o.rec");
    let mut s = Session::start(
        &[
            "--replay",
            &rec,
            "-c",
            "examples/rules/recommended-default.conf",
        ],
        24,
        80,
    );
    s.wait_for("OBSERVE");
    // The start of a terminal's reply, never finished; then replies and
    // sequences plugtop does not know, and a string sequence.
    s.press("\x1b[?");
    s.press_until("?", "Keys (any key closes");
    s.press("x");
    s.wait_gone("Keys (any key closes");
    s.press("\x1b[?1;2c\x1b[?7u\x1b[999~\x1b]11;rgb:0/0/0\x07");
    s.press("?");
    s.wait_for("Keys (any key closes");
    s.press("x");
    s.wait_gone("Keys (any key closes");
    // Ctrl-C right after another unfinished reply still quits.
    s.press("\x1b[?");
    let deadline = Instant::now() + common::hang_guard();
    let mut last = Instant::now() - Duration::from_secs(1);
    loop {
        if let Ok(Some(status)) = s.child.try_wait() {
            assert!(status.success(), "Ctrl-C is a clean quit");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Ctrl-C never quit:\n{}",
            s.screen()
        );
        if last.elapsed() >= Duration::from_millis(200) {
            s.press("\x03");
            last = Instant::now();
        }
        if let Ok(bytes) = s.output.recv_timeout(Duration::from_millis(50)) {
            s.take(&bytes);
        }
    }
}

/// The CPU names in the CPU panel (the left 40 columns) of the screen.
fn cpus_on_screen(screen: &str) -> Vec<u32> {
    screen
        .lines()
        .filter_map(|l| {
            let left: String = l.chars().take(40).collect();
            let rest = left.strip_prefix("cpu")?;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect()
}

#[test]
fn paging_the_table_of_a_64_cpu_guest_shows_every_cpu_exactly_once() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let scenario = dir.path().join("big.toml");
    std::fs::write(
        &scenario,
        "name = \"big\"\ncpus = 64\nonline = 64\nmemory_mib = 8192\nduration = \"1:00:00\"\n\n[[phases]]\nstart = \"0\"\nthreads = 8\nworking_set_mib = 300\n",
    )
    .expect("scenario");
    let scenario = scenario.display().to_string();
    for (rows, cols) in [(24, 80), (48, 160)] {
        let mut s = Session::start(
            &[
                "--sim",
                &scenario,
                "-c",
                "examples/rules/recommended-modern.conf",
            ],
            rows,
            cols,
        );
        // All 64 fit as meters; `c` shows the per-CPU table, which pages.
        s.wait_for("c table");
        s.press("c");
        s.wait_for("more below (PgDn");
        let mut seen: Vec<u32> = Vec::new();
        loop {
            let page = cpus_on_screen(&s.screen());
            assert!(!page.is_empty(), "no CPUs on screen:\n{}", s.screen());
            seen.extend(&page);
            // The CPU table's own "more below" (the values beside it may
            // say so too).
            let more = s.screen().lines().any(|l| {
                l.chars()
                    .take(40)
                    .collect::<String>()
                    .contains("more below")
            });
            if !more {
                break;
            }
            assert!(seen.len() <= 64, "pages overlap: {seen:?}");
            s.press("\x1b[6~");
            let first = page[0];
            s.wait_until("PgDn did nothing", |s| {
                cpus_on_screen(&s.screen()).first() != Some(&first)
            });
        }
        assert_eq!(
            seen,
            (0..64).collect::<Vec<u32>>(),
            "{rows}x{cols}: every CPU once, in order"
        );
        assert!(s.quit());
    }
}

#[test]
fn number_keys_pick_views_h_and_f1_help_and_ctrl_l_repaints() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = common::record_fixture_series(dir.path(), "o.rec");
    let mut s = Session::start(
        &[
            "--replay",
            &rec,
            "-c",
            "examples/rules/recommended-default.conf",
        ],
        24,
        80,
    );
    s.wait_for("OBSERVE");
    // The first frame is drawn on a cleared screen, not over what the
    // alternate screen held before.
    let raw = String::from_utf8_lossy(&s.raw).into_owned();
    let (cleared, drawn) = (raw.find("\x1b[2J"), raw.find("OBSERVE"));
    assert!(
        matches!((cleared, drawn), (Some(c), Some(d)) if c < d),
        "clear at {cleared:?}, first drawn at {drawn:?}"
    );
    s.press("5");
    s.wait_for("Log · recorded times, UTC (↑↓");
    s.press("2");
    s.wait_for("Truth trace of");
    s.press("1");
    s.wait_gone("Truth trace of");
    s.press("h");
    s.wait_for("Keys (any key closes");
    s.press("x");
    s.wait_gone("Keys (any key closes");
    s.press("\x1bOP");
    s.wait_for("Keys (any key closes");
    s.press("x");
    s.wait_gone("Keys (any key closes");
    // Another program scribbles on the terminal; Ctrl-L paints it all again.
    let clears = |raw: &[u8]| raw.windows(4).filter(|w| w == b"\x1b[2J").count();
    let before = clears(&s.raw);
    s.press("\x0c");
    s.wait_until("Ctrl-L did not repaint", |s| clears(&s.raw) != before);
    assert!(s.quit());
}

#[test]
fn e_asks_where_to_export_the_log_defaulting_to_the_state_directory() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = common::record_fixture_series(dir.path(), "o.rec");
    let state = dir.path().join("state");
    let state_env = state.display().to_string();
    let mut s = Session::start_with(
        &[
            "--replay",
            &rec,
            "-c",
            "examples/rules/recommended-default.conf",
            "--interval",
            "0.05",
        ],
        24,
        160,
        &[("XDG_STATE_HOME", &state_env)],
    );
    s.wait_for("end of the recording");
    s.press("e");
    s.wait_for("Export the log");
    s.wait_for(&state.join("plugtop").display().to_string());
    s.press("\r");
    s.wait_for("Log exported");
    s.press("x");
    s.wait_gone("Log exported");
    // Another path, typed over the default; then the same path again is
    // refused, not overwritten.
    let custom = dir.path().join("mine").join("incident.txt");
    if let Err(e) = std::fs::create_dir(dir.path().join("mine")) {
        panic!("{e}");
    }
    for said in ["Log exported", "Not possible"] {
        s.press("e");
        s.wait_for("Export the log");
        s.press("\x15");
        s.press(&custom.display().to_string());
        s.press("\r");
        s.wait_for(said);
        s.press("x");
        s.wait_gone(said);
    }
    assert!(s.quit());
    let mine = std::fs::read_to_string(&custom).unwrap_or_default();
    assert!(mine.contains("log exported to"), "{mine:?}");
    let files: Vec<_> = std::fs::read_dir(state.join("plugtop"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert_eq!(files.len(), 1, "{files:?}");
    // Named after the local time, as a person reads it.
    let name = files[0]
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stamp = name
        .strip_prefix("plugtop-log-")
        .and_then(|n| n.strip_suffix(".txt"))
        .unwrap_or_default();
    assert!(
        stamp.len() == "2025-11-25_144701".len()
            && stamp.chars().enumerate().all(|(i, c)| match i {
                4 | 7 => c == '-',
                10 => c == '_',
                _ => c.is_ascii_digit(),
            }),
        "{name}"
    );
    let text = std::fs::read_to_string(&files[0]).unwrap_or_default();
    assert!(
        text.lines()
            .next()
            .is_some_and(|l| l.as_bytes().get(2) == Some(&b':')),
        "each line starts with its time: {text:?}"
    );
}

/// An SGR mouse click (press and release) at 0-based `column`, `row`.
fn click(s: &mut Session, column: usize, row: usize) {
    s.press(&format!(
        "\x1b[<0;{};{}M\x1b[<0;{};{}m",
        column + 1,
        row + 1,
        column + 1,
        row + 1
    ));
}

#[test]
fn clicks_select_a_cpu_row_a_rule_and_a_tab() {
    let mut s = Session::start(
        &[
            "--sim",
            "examples/scenarios/daytrader.toml",
            "-c",
            "examples/rules/recommended-modern.conf",
        ],
        24,
        80,
    );
    s.wait_for("cpu0 ");
    let row_of = |screen: &str, start: &str| {
        screen
            .lines()
            .position(|l| l.trim_start_matches(['▸', ' ']).starts_with(start))
            .unwrap_or_else(|| panic!("no {start:?} line:\n{screen}"))
    };
    let row = row_of(&s.screen(), "cpu0 ");
    click(&mut s, 1, row);
    s.wait_for("cpu0: p pins its busy %");
    let row = row_of(&s.screen(), "MEMPLUG");
    click(&mut s, 3, row);
    s.wait_for("▸MEMPLUG");
    let tabs = s.screen().lines().nth(1).unwrap_or_default().to_string();
    let column = tabs
        .find("Flips")
        .map(|b| tabs[..b].chars().count())
        .unwrap_or_else(|| panic!("no Flips tab: {tabs}"));
    click(&mut s, column + 1, 1);
    s.wait_for("Flips: why the decisions changed");
    assert!(s.quit());
}

/// A two-minute guest whose load pulses (the oscillating scenario, cut
/// short so a debug build tunes it in seconds a candidate).
const SHORT_PULSES: &str = "name = \"short-pulses\"\ncpus = 4\nonline = 1\nmemory_mib = 2048\n\
contention = 0.02\nduration = \"2:00\"\nseed = 7\n\n[[phases]]\nname = \"quiet\"\nstart = \"0:00\"\n\
threads = 0.3\ncpu_per_thread = 0.5\nworking_set_mib = 300\n\n[[phases]]\nname = \"pulses\"\n\
start = \"0:20\"\nthreads = 3.0\ncpu_per_thread = 1.0\nworking_set_mib = 500\npulse_period_s = 6\n";

/// Issue 40: the screen's `T` runs the judged search of `plugtop tune`
/// (forms, portfolio) and marks the point the command line recommends,
/// with the current rules as a row of their own.
#[test]
fn t_tunes_in_the_background_and_marks_what_the_command_line_recommends() {
    let dir = common::tempdir();
    let scenario = dir.path().join("short.toml");
    std::fs::write(&scenario, SHORT_PULSES).expect("scenario");
    let scenario = scenario.display().to_string();
    let rules = "examples/rules/oscillating-tight.conf";
    let cli = common::plugtop(&[
        "tune", &scenario, "-c", rules, "--budget", "20", "--format", "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&cli.stdout).expect("tune's JSON");
    let mut s = Session::start(
        &[
            "--sim",
            &scenario,
            "-c",
            rules,
            "--mode",
            "auto",
            "--tune-budget",
            "20",
        ],
        24,
        80,
    );
    s.wait_for("#2 ");
    s.press("T");
    // Progress first (or, on a fast machine, the front at once).
    s.wait_until("no tune box", |s| s.screen().contains("candidates"));
    // The candidates run, as `plugtop tune` counts them (issue 45: the box
    // said its budget); the budget is a cap (adversary F7: "20 of at most
    // 20", then "the front of 234"), the recommendation rewritten in fewer
    // digits said apart.
    let rounded = u64::from(!v["rounded_from"].is_null());
    let ran = v["candidates"].as_u64().unwrap_or_default() - rounded;
    assert!((1..=20).contains(&ran), "the budget is a cap: {v}");
    s.wait_for(&format!("Tune: the front of {ran} candidates"));
    s.wait_until("no recommendation line", |s| {
        s.screen().contains("★ marks") || s.screen().contains("recommended: none")
    });
    let screen = s.screen();
    // The current rules have a row of their own.
    assert!(
        screen
            .lines()
            .any(|l| l.trim_start().starts_with("C ") || l.contains("│C ")),
        "{screen}"
    );
    match v["recommended"]["score"].as_object() {
        Some(score) => {
            let f = |k: &str| score[k].as_f64().unwrap_or(f64::NAN);
            let figures = format!(
                "{:>11.1} {:>9.2} {:>9.2}",
                f("unmet_cpu_seconds"),
                f("avg_online_cpus"),
                f("guest_to_working_set")
            );
            let starred = screen
                .lines()
                .find(|l| l.contains("★ recommended"))
                .unwrap_or_else(|| panic!("no ★ row:\n{screen}"));
            assert!(
                starred.contains(&figures),
                "the screen marks {starred:?}, the command line recommends {figures:?}"
            );
        }
        None => assert!(screen.contains("recommended: none"), "{screen}"),
    }
    s.press("\x1b");
    s.wait_gone("Tune: the front");
    assert!(s.quit());
}

/// `n` bytes of `unit` repeated (the last copy cut).
fn repeated(unit: &[u8], n: usize) -> Vec<u8> {
    unit.iter().copied().cycle().take(n).collect()
}

#[test]
fn sigterm_is_acted_on_behind_megabytes_of_pasted_and_typed_input() {
    let (root, rules) = plugging_guest();
    let root_s = root.path().to_string_lossy().into_owned();
    let mut s = Session::start(
        &[
            "--root",
            &root_s,
            "-c",
            &rules,
            "--interval",
            "0.2",
            "--mode",
            "auto",
        ],
        30,
        110,
    );
    s.wait_for("AUTONOMOUS");
    s.wait_for("plugged cpu1");
    s.press("w");
    s.wait_for("What-if: HOTPLUG");
    // A megabyte pasted: keys, Ctrl-C, escape sequences and line breaks
    // in it are text. Then a megabyte typed without paste markers (a
    // terminal without bracketed paste): plain characters, `q`, `A` and
    // `y` among them, all text for the editor.
    let mut bytes = b"\x1b[200~".to_vec();
    bytes.extend(repeated(
        b"q A y \x03 \x1b[A \x1b \r\n(onumcpus < 2) & (idle > 50)\n",
        1 << 20,
    ));
    bytes.extend(b"\x1b[201~");
    bytes.extend(repeated(b"(onumcpus > 1) | qAy+-s ", 1 << 20));
    s.write_big(bytes);
    s.signal("TERM");
    let (status, output) = s.wait_exit();
    assert_eq!(status, Some(143), "exit code after SIGTERM");
    for i in 1..4 {
        assert_eq!(cpu_online(&root, i), "0\n", "cpu{i} is put back");
    }
    assert!(
        !root.path().join("run/plugtop/state").exists(),
        "the journal goes after a full restore"
    );
    assert!(terminal_restored(&output), "terminal left raw");
}

#[test]
fn a_paste_cut_by_sigterm_never_reaches_the_shell_after_plugtop() {
    let (root, rules) = plugging_guest();
    let root_s = root.path().to_string_lossy().into_owned();
    // What runs after plugtop in the same terminal counts what it can read
    // at once: every byte of the paste there is one a shell would run.
    let script = "\"$0\" \"$@\"; stty -icanon min 0 time 0; \
        printf 'LEFT %s\\n' \"$(dd bs=65536 count=64 2>/dev/null | wc -c)\"";
    let mut s = Session::start_program(
        "sh",
        &[
            "-c",
            script,
            env!("CARGO_BIN_EXE_plugtop"),
            "--root",
            &root_s,
            "-c",
            &rules,
            "--interval",
            "0.2",
            "--mode",
            "auto",
        ],
        30,
        110,
        &[],
    );
    s.wait_for("AUTONOMOUS");
    s.press("w");
    s.wait_for("What-if: HOTPLUG");
    let line = b"touch /nonexistent/PASTED-AFTER-PLUGTOP\n";
    // A quarter of the paste is read by plugtop before the signal ...
    let mut first = b"\x1b[200~".to_vec();
    first.extend(repeated(line, 1 << 18));
    s.write_big(first);
    // ... the rest is still arriving when it comes.
    let mut rest = repeated(line, 3 << 18);
    rest.extend(b"\x1b[201~");
    let mut input = std::mem::replace(&mut s.input, Box::new(std::io::sink()));
    std::thread::spawn(move || {
        let _ = input.write_all(&rest).and_then(|()| input.flush());
    });
    // The signal goes to plugtop, not to the shell around it.
    let sh = s.child.process_id().expect("a pid");
    let children =
        std::fs::read_to_string(format!("/proc/{sh}/task/{sh}/children")).expect("children");
    let plugtop = children.split_whitespace().next().expect("plugtop runs");
    let sent = std::process::Command::new("kill")
        .args(["-TERM", plugtop])
        .status()
        .is_ok_and(|st| st.success());
    assert!(sent, "kill -TERM {plugtop}");
    s.wait_for_raw("LEFT ");
    let text = String::from_utf8_lossy(&s.raw).into_owned();
    let left = text
        .rsplit("LEFT ")
        .next()
        .and_then(|t| t.split_whitespace().next())
        .and_then(|n| n.parse::<usize>().ok());
    assert_eq!(left, Some(0), "the rest of the paste reached the shell");
    for i in 1..4 {
        assert_eq!(cpu_online(&root, i), "0\n", "cpu{i} is put back");
    }
}

#[test]
fn a_paste_goes_into_the_text_input_and_is_never_taken_for_keys() {
    let (root, rules) = plugging_guest();
    let root_s = root.path().to_string_lossy().into_owned();
    let mut s = Session::start(
        &["--root", &root_s, "-c", &rules, "--interval", "0.2"],
        30,
        110,
    );
    s.wait_for("OBSERVE");
    s.wait_for("#2");
    // As keys this would ask to act, approve it, and quit.
    s.press("\x1b[200~Ay q\x1b[201~");
    s.press("5");
    s.wait_for("a paste was ignored");
    assert!(!s.screen().contains("Act on this guest?"));
    assert!(s.screen().contains("OBSERVE"));
    assert!(
        !root.path().join("run/plugtop/state").exists(),
        "nothing armed"
    );
    // In the what-if editor a paste is one insertion, made one line.
    s.press("w");
    s.wait_for("What-if: HOTPLUG");
    s.press("\x15");
    s.press("\x1b[200~(onumcpus < 3)\r\n& (idle > 50)\n\x1b[201~");
    s.wait_for("HOTPLUG=(onumcpus < 3) & (idle > 50)");
    s.wait_for("cpuplugd would load the edited file");
    s.press("\x1b");
    s.wait_gone("What-if: HOTPLUG");
    assert!(s.quit());
}

/// A recording of `seconds` of daytrader under the recommended rules, a
/// reading every 5 s, replayed on the screen at 80×24 (at its pace).
fn daytrader_replay(seconds: f64) -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = dir.path().join("day.rec");
    common::record_simulated("daytrader", "recommended-modern", seconds, 5.0, &rec);
    let rec = rec.to_string_lossy().into_owned();
    let s = Session::start(
        &[
            "--replay",
            &rec,
            "-c",
            "examples/rules/recommended-modern.conf",
        ],
        24,
        80,
    );
    (dir, s)
}

#[test]
fn a_replay_jumps_ahead_to_a_time_and_the_graphs_show_the_interval_shown() {
    // At its pace the replay takes two hours; J reads ahead at once.
    let (_dir, mut s) = daytrader_replay(2.0 * 3600.0);
    s.wait_for("OBSERVE");
    s.press("J");
    s.wait_for("Jump to a time");
    s.press("+1h30m\r");
    s.wait_for("#1080 01:30:00");
    s.wait_for("PAUSED");
    s.press("3");
    s.wait_for("Graphs: ");
    s.press(&LEFT.repeat(3));
    s.wait_for("▲ the interval shown (3 back)");
    s.wait_for("#1077 (3 back) 01:29:45");
    let screen = s.screen();
    let row = |label: &str| {
        screen
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} row:\n{screen}"))
            .to_string()
    };
    // The marker stands three columns left of the newest, which the time
    // axis names 01:30:00 at the right edge: the interval of 01:29:45.
    let marker = row("interval shown");
    assert_eq!(
        marker.chars().position(|c| c == '▲'),
        Some(80 - 1 - 3),
        "{screen}"
    );
    assert!(row("time (UTC)").ends_with("01:30:00↑"), "{screen}");
    // G reads the replay to its end.
    s.press("G");
    s.wait_for("#1440 02:00:00");
    assert!(s.quit(), "clean exit");
}

/// The CPUs in the meters of the CPU panel (the first `panel` columns),
/// down each column first, once every CPU has a share (none just online).
fn meters_on_screen(screen: &str, panel: usize) -> Option<Vec<u32>> {
    if !screen.lines().any(|l| l.starts_with("all ")) {
        return None;
    }
    let mut found = crate::cpu_meters::meters(screen, panel);
    found.sort_by_key(|m| (m.aligned, m.row));
    // `+` marks a CPU just online (the legend under the meters says so).
    let fresh = screen
        .lines()
        .skip_while(|l| !l.starts_with("all "))
        .take_while(|l| !l.starts_with(" Rules") && !l.starts_with("busy % now"))
        .any(|l| l.chars().take(panel).collect::<String>().contains('+'));
    (!fresh).then(|| found.iter().map(|m| m.id).collect())
}

#[test]
fn a_256_cpu_lpar_at_160x48_and_a_64_cpu_guest_at_80x24_show_every_cpu() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let guest64 = dir.path().join("big.toml");
    std::fs::write(
        &guest64,
        "name = \"big\"\ncpus = 64\nonline = 64\nmemory_mib = 8192\nduration = \"1:00:00\"\n\n[[phases]]\nstart = \"0\"\nthreads = 8\nworking_set_mib = 300\n",
    )
    .expect("scenario");
    let guest64 = guest64.display().to_string();
    let cases = [
        (
            "examples/scenarios/big-lpar.toml",
            256u32,
            48u16,
            160u16,
            62usize,
        ),
        (guest64.as_str(), 64, 24, 80, 40),
    ];
    for (scenario, cpus, rows, cols, panel) in cases {
        // Observe mode: the rules never take a CPU away mid-test.
        let mut s = Session::start(
            &[
                "--sim",
                scenario,
                "-c",
                "examples/rules/recommended-modern.conf",
                "--interval",
                "0.05",
            ],
            rows,
            cols,
        );
        let all: Vec<u32> = (0..cpus).collect();
        s.wait_until("not every CPU was on the screen", |s| {
            meters_on_screen(&s.screen(), panel).as_ref() == Some(&all)
        });
        assert!(
            !s.screen().contains("more below (PgDn") && !s.screen().contains("more below, "),
            "{}",
            s.screen()
        );
        // `b`: busiest first, said under the meters where a row is spare
        // (the simulator spreads work evenly, so the order barely moves;
        // tests/suite/cpu_meters.rs sorts uneven shares).
        if cpus == 256 {
            s.wait_for("busy % now, by number");
            s.press("b");
            s.wait_for("busy % now, busiest first");
            s.press("b");
            s.wait_for("busy % now, by number");
        }
        // `c`: the per-CPU table, paged; `c` again: every CPU in sight.
        s.press("c");
        s.wait_for("% now");
        s.wait_for("more below (PgDn");
        s.press("c");
        s.wait_until("c did not bring the meters back", |s| {
            meters_on_screen(&s.screen(), panel).as_ref() == Some(&all)
        });
        assert!(s.quit());
    }
}

/// A 3270 or SCLP console says `TERM=vt100`: no 256-colour SGR, mouse
/// reports or bracketed paste are asked of it (its terminfo entry, or
/// without one the name, says it has none); an xterm gets all three.
#[test]
fn a_vt100_gets_no_colours_mouse_or_bracketed_paste() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = common::record_fixture_series(dir.path(), "o.rec");
    let args = [
        "--replay",
        rec.as_str(),
        "-c",
        "examples/rules/recommended-default.conf",
        "--interval",
        "0.05",
    ];
    let asked = |raw: &str| {
        (
            raw.contains("\x1b[38;5;") || raw.contains("\x1b[48;5;"),
            raw.contains("\x1b[?1000h"),
            raw.contains("\x1b[?2004h"),
        )
    };
    for (term, has) in [("vt100", false), ("xterm-256color", true)] {
        let mut s = Session::start_with(&args, 24, 80, &[("TERM", term)]);
        s.wait_for("OBSERVE");
        s.wait_for("#3");
        s.press("q");
        let (code, raw) = s.wait_exit();
        assert_eq!(code, Some(0), "{term}: clean exit");
        assert_eq!(asked(&raw), (has, has, has), "{term}: {raw:?}");
    }
}

/// The main screen on a replay, under a shell at 80×24.
fn replay_under_shell() -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = common::record_fixture_series(dir.path(), "o.rec");
    let s = Session::start_under_shell(
        &[
            "--replay",
            &rec,
            "-c",
            "examples/rules/recommended-default.conf",
        ],
        24,
        80,
        &[],
    );
    (dir, s)
}

#[test]
fn sigterm_gives_the_main_screen_terminal_back_with_143() {
    let (_dir, s) = replay_under_shell();
    sigterm_gives_the_terminal_back(s, "OBSERVE");
}

#[test]
fn an_unfinished_reply_then_q_quits_the_main_screen() {
    let (_dir, s) = replay_under_shell();
    an_unfinished_reply_then_q_quits(s, "OBSERVE");
}

/// A full screen on a terminal without bracketed paste or mouse reports
/// (`TERM=vt100`, a 3270 or SCLP console) showing `ready`: neither is
/// asked of it, and `q` quits.
pub(crate) fn a_plain_terminal_is_asked_for_no_paste_or_mouse(mut s: Session, ready: &str) {
    s.wait_for(ready);
    s.press("q");
    let (status, raw) = s.wait_exit();
    assert_eq!(status, Some(0), "q quits well");
    assert!(raw.contains("\x1b[?1049h"), "the alternate screen is taken");
    for asked in ["\x1b[?2004h", "\x1b[?1000h", "\x1b[?1006h"] {
        assert!(!raw.contains(asked), "{asked:?} asked of a vt100");
    }
}

/// The oscillating guest (examples/scenarios/oscillating.toml) under the
/// rules that chase it, in autonomous mode, a reading every `interval`
/// seconds, at 80×24.
fn oscillating_autonomous(interval: &str, env: &[(&str, &str)]) -> Session {
    Session::start_with(
        &[
            "--sim",
            "examples/scenarios/oscillating.toml",
            "-c",
            "examples/rules/oscillating-tight.conf",
            "--mode",
            "auto",
            "--interval",
            interval,
        ],
        24,
        80,
        env,
    )
}

/// The oscillating guest in autonomous mode at 0.05 s a reading, on the
/// Flips view once its decisions have started to change.
fn flipping_guest_on_the_flips_view() -> Session {
    let mut s = oscillating_autonomous("0.05", &[]);
    s.wait_for("CPUS FLAPPING");
    s.press("4");
    s.wait_for("Flips: why the decisions changed");
    s
}

/// The number `text` starts with.
fn leading_number(text: &str) -> Option<usize> {
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Waits until the header counts at least `n` readings after the interval
/// shown (a loaded machine may draw one frame for several readings, so
/// the count can pass `n` without showing it).
fn at_least_back(s: &mut Session, n: usize) {
    let back = |s: &Session| {
        let screen = s.screen();
        let header = screen.lines().next().unwrap_or_default().to_string();
        header
            .split_once(" (")
            .and_then(|(_, rest)| leading_number(rest))
            .is_some_and(|b| b >= n && header.contains(" back)"))
    };
    s.wait_until(&format!("never {n} readings back"), back);
}

/// The interval the header shows: its "#N".
fn header_number(screen: &str) -> Option<usize> {
    let header = screen.lines().next()?;
    leading_number(header.split_once(" #")?.1)
}

/// The changes the Flips view lists, top to bottom (oldest first).
fn flips_listed(screen: &str) -> Vec<usize> {
    screen
        .lines()
        .skip(1)
        .filter_map(|l| leading_number(l.strip_prefix('#')?))
        .collect()
}

/// Twenty readings more, then paused on the Flips view and twenty
/// intervals back (paused, the simulator waits: the way back is `←`).
fn paused_with_twenty_readings_since(s: &mut Session) -> usize {
    let now = header_number(&s.screen()).unwrap_or_default();
    s.wait_until("twenty more readings never came", |s| {
        header_number(&s.screen()).is_some_and(|n| n >= now + 20)
    });
    s.press(" ");
    s.wait_for("PAUSED");
    s.press(&LEFT.repeat(20));
    at_least_back(s, 20);
    let shown = header_number(&s.screen());
    assert!(shown.is_some(), "{}", s.screen());
    shown.unwrap_or_default()
}

/// `?` opens the help over the screen and `?` closes it again: keys the
/// screen answers while it stays paused.
fn help_open_and_closed(s: &mut Session) {
    s.press("?");
    s.wait_for("Keys (any key closes");
    s.press("?");
    s.wait_gone("Keys (any key closes");
}

#[test]
fn paused_the_flips_view_lists_nothing_newer_than_the_interval_shown() {
    let mut s = flipping_guest_on_the_flips_view();
    let shown = paused_with_twenty_readings_since(&mut s);
    let screen = s.screen();
    let listed = flips_listed(&screen);
    assert!(!listed.is_empty(), "{screen}");
    assert!(
        listed.iter().all(|n| *n <= shown),
        "changes after #{shown} listed: {listed:?}\n{screen}"
    );
    assert!(s.quit());
}

#[test]
fn home_on_the_paused_flips_view_stays_at_the_oldest_change() {
    let mut s = flipping_guest_on_the_flips_view();
    paused_with_twenty_readings_since(&mut s);
    s.press("\x1b[H");
    s.wait_gone("older (↑ PgUp)");
    let top = flips_listed(&s.screen()).first().copied();
    // Keys go on coming while paused; the list stays where Home put it.
    help_open_and_closed(&mut s);
    let screen = s.screen();
    assert!(!screen.contains("older (↑ PgUp)"), "{screen}");
    assert_eq!(flips_listed(&screen).first().copied(), top, "{screen}");
    assert!(s.quit());
}

#[test]
fn up_on_the_paused_flips_view_goes_back_to_older_changes() {
    let mut s = flipping_guest_on_the_flips_view();
    let shown = paused_with_twenty_readings_since(&mut s);
    let newest = flips_listed(&s.screen()).last().copied();
    s.press("\x1b[A");
    s.wait_for("1 newer (↓ PgDn)");
    help_open_and_closed(&mut s);
    let screen = s.screen();
    let bottom = flips_listed(&screen).last().copied();
    assert!(
        bottom < newest && bottom.is_some_and(|n| n < shown),
        "↑ from #{newest:?} shows #{bottom:?} at the bottom\n{screen}"
    );
    assert!(s.quit());
}

#[test]
fn brackets_land_on_the_change_listed_and_undo_each_other() {
    let mut s = flipping_guest_on_the_flips_view();
    let start = paused_with_twenty_readings_since(&mut s);
    let moved_from =
        |from: usize| move |s: &Session| header_number(&s.screen()).is_some_and(|n| n != from);
    s.press("[");
    s.wait_until("[ never moved", moved_from(start));
    let first = header_number(&s.screen()).unwrap_or_default();
    // The interval `[` lands on is the change itself (not the one before
    // it), and the newest listed.
    assert!(
        flips_listed(&s.screen()).contains(&first),
        "#{first} is no change\n{}",
        s.screen()
    );
    assert_eq!(
        flips_listed(&s.screen()).last().copied(),
        Some(first),
        "{}",
        s.screen()
    );
    s.press("[");
    s.wait_until("the second [ never moved", moved_from(first));
    let second = header_number(&s.screen()).unwrap_or_default();
    assert!(second < first, "{}", s.screen());
    assert_eq!(flips_listed(&s.screen()).last().copied(), Some(second));
    s.press("]");
    s.wait_until("] never moved", moved_from(second));
    assert_eq!(
        header_number(&s.screen()),
        Some(first),
        "] undoes [\n{}",
        s.screen()
    );
    assert!(s.quit());
}

/// Issue 45 item 7: observing a guest that something else acts on says
/// so in the header (who, pid, since when): first cpuplugd by its pid file,
/// then whoever holds the guest lock (this test), and the badge goes when
/// the lock does. Arming meanwhile is refused at once, naming who holds
/// the lock.
#[test]
fn observe_names_whoever_else_acts_on_the_guest() {
    let (root, rules) = plugging_guest();
    let me = std::process::id();
    root.write("run/cpuplugd.pid", &format!("{me}\n"));
    let root_s = root.path().to_string_lossy().into_owned();
    let mut s = Session::start(
        &["--root", &root_s, "-c", &rules, "--interval", "0.2"],
        24,
        80,
    );
    s.wait_for("OBSERVE");
    // newuser51 #8: a live process that is no cpuplugd (here this test)
    // in the root's pid file is named a stale pid file, never "ACTS":
    // under --root its pid is not looked up on this machine.
    s.wait_for("STALE cpuplugd.pid");
    assert!(!s.screen().contains("ACTS"), "{}", s.screen());
    std::fs::remove_file(root.path().join("run/cpuplugd.pid")).expect("pid file");
    std::fs::create_dir_all(root.path().join("var/lock")).expect("lock dir");
    let lock = std::fs::File::create(root.path().join("var/lock/cpuplugd.lock")).expect("lock");
    lock.try_lock().expect("the lock is free");
    s.wait_gone("STALE");
    // The test binary's name is long: at 80 columns the pid stays, with
    // the name when there is room.
    s.wait_until("never named the lock's holder", |s| {
        let screen = s.screen();
        screen.contains(&format!("PID {me} ACTS HERE"))
            || screen.contains(&format!(" pid {me} ACTS HERE"))
    });
    // nu53 M3: refused at `s`, naming the pid, without asking first.
    s.press("s");
    s.wait_for(&format!("locked by pid {me}"));
    assert!(!s.screen().contains("Act on this guest?"), "{}", s.screen());
    s.press("\x1b");
    s.press("A");
    s.wait_for(&format!("locked by pid {me}"));
    assert!(!s.screen().contains("Act on this guest?"), "{}", s.screen());
    s.press("\x1b");
    drop(lock);
    s.wait_gone(&format!("{me} ACTS"));
    assert!(s.quit());
}

/// nu53 M2: a plugtop stopped with Ctrl-Z (SIGSTOP) still holds the
/// guest lock, but nothing acts: the header says STOPPED, not ACTS, and
/// ACTS again once it is continued. The holder here is flock(1), stopped
/// by this test.
#[test]
fn a_stopped_lock_holder_is_named_stopped_not_acting() {
    if !std::path::Path::new("/usr/bin/flock").exists() {
        eprintln!("skipped: no /usr/bin/flock to hold the lock");
        return;
    }
    let (root, rules) = plugging_guest();
    std::fs::create_dir_all(root.path().join("var/lock")).expect("lock dir");
    let lock = root.path().join("var/lock/cpuplugd.lock");
    let mut holder = std::process::Command::new("/usr/bin/flock")
        .arg(&lock)
        .args(["sleep", "600"])
        .spawn()
        .expect("flock");
    let pid = holder.id().to_string();
    let root_s = root.path().to_string_lossy().into_owned();
    let mut s = Session::start(
        &["--root", &root_s, "-c", &rules, "--interval", "0.2"],
        24,
        80,
    );
    s.wait_for(&format!("{pid} ACTS"));
    let signal = |sig: &str| {
        let done = std::process::Command::new("kill")
            .args([sig, &pid])
            .status()
            .expect("kill");
        assert!(done.success(), "kill {sig} {pid}");
    };
    signal("-STOP");
    s.wait_for(&format!("{pid} STOPPED"));
    assert!(!s.screen().contains("ACTS"), "{}", s.screen());
    // nu54 M7: arming is refused in the header's words, not "acts on".
    s.press("s");
    s.wait_for("stopped (SIGSTOP");
    s.press("\x1b");
    signal("-CONT");
    s.wait_for(&format!("{pid} ACTS"));
    assert!(!s.screen().contains("STOPPED"), "{}", s.screen());
    let _ = holder.kill();
    let _ = holder.wait();
    assert!(s.quit());
}

/// nu53 M7: a Log search that matches no line says so instead of an
/// empty Log.
#[test]
fn a_log_search_without_a_match_says_so() {
    let mut s = Session::start(&["--sim", "examples/scenarios/daytrader.toml"], 24, 80);
    s.wait_for("#2");
    s.press("/");
    s.wait_for("Search the log");
    s.press("zzqqx");
    s.press("\r");
    s.wait_for("no line matches \"zzqqx\"");
    assert!(s.quit());
}

/// nu53 M6: replaying a simulated recording without -c says in the Log
/// which rules it was recorded under and how to replay their decisions.
#[test]
fn a_replay_without_rules_names_the_rules_it_was_recorded_under() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let rec = dir.path().join("osc.rec");
    let rules = "examples/rules/oscillating-tight.conf";
    common::record_simulated("oscillating", "oscillating-tight", 20.0, 1.0, &rec);
    let rec = rec.to_string_lossy().into_owned();
    let mut s = Session::start(&["--replay", &rec], 24, 80);
    s.wait_for("OBSERVE");
    s.press("5");
    s.wait_for(&format!("recorded under {rules}"));
    assert!(s.quit());
    // With -c, nothing to say.
    let mut s = Session::start(&["--replay", &rec, "-c", rules], 24, 80);
    s.wait_for("OBSERVE");
    s.press("5");
    s.wait_for(" Log ");
    assert!(!s.screen().contains("recorded under"), "{}", s.screen());
    assert!(s.quit());
}

/// The screen's text beside a box drawn over it, row by row, from the
/// box's top right corner down to its bottom one: what shows right of the
/// border (issue 45: `┐B`, the last letter of `MiB` under the box).
fn right_of_the_box(screen: &str, title: &str) -> Vec<String> {
    let rows: Vec<&str> = screen.lines().collect();
    let top = rows
        .iter()
        .position(|r| r.contains(title))
        .unwrap_or_else(|| panic!("no {title:?} on\n{screen}"));
    let mut beside = Vec::new();
    for row in &rows[top..] {
        let cut = row
            .rfind(['┐', '│', '┘'])
            .unwrap_or_else(|| panic!("a row of the box without its border:\n{screen}"));
        let border = row[cut..].chars().next().map_or(0, char::len_utf8);
        beside.push(row[cut + border..].to_string());
        if row.contains('┘') {
            break;
        }
    }
    beside
}

#[test]
fn a_box_over_the_screen_at_80_columns_has_no_cut_text_touching_its_border() {
    let mut s = Session::start(&["--sim", "examples/scenarios/daytrader.toml"], 24, 80);
    s.wait_for("#2");
    // The Values panel's `MemFree/MemTotal 4655 MiB / 4955 MiB` ends in
    // the last column, under the box's right margin.
    s.wait_for("MiB");
    s.press("J");
    s.wait_for("Jump to a time");
    let screen = s.screen();
    for beside in right_of_the_box(&screen, "Jump to a time") {
        assert!(
            beside.trim().is_empty(),
            "{beside:?} beside the box:\n{screen}"
        );
    }
    s.press("\x1b");
    s.wait_gone("Jump to a time");
    assert!(s.quit());
}

/// Issue 45: `]` at the newest interval of a replay did nothing and said
/// nothing; the future is on disk, so it reads ahead to the next change
/// (as `J` reads ahead to a time), and `[` goes back over it.
#[test]
fn next_change_at_the_newest_interval_of_a_replay_reads_ahead_to_it() {
    let (_dir, mut s) = daytrader_replay(3600.0);
    s.wait_for("OBSERVE");
    s.press(" ");
    s.wait_for("PAUSED");
    let before = header_number(&s.screen()).expect("an interval number");
    // Past whatever changes the few intervals read hold, `]` reads on.
    s.press_until("]", "read ahead to the next change");
    let after = header_number(&s.screen()).expect("an interval number");
    assert!(after > before + 1, "#{before} → #{after}:\n{}", s.screen());
    assert!(s.quit(), "clean exit");
}

/// Issue 45: `plugtop tune` in a terminal of 80 columns printed tables 83
/// to 104 wide and prose lines of hundreds of characters, each wrapped by
/// the terminal mid-word. Every line but the diff's (the file's own text,
/// which must copy back whole) now fits.
#[test]
fn tune_in_an_80_column_terminal_fits_it() {
    let mut s = Session::start(
        &[
            "tune",
            "examples/scenarios/daytrader.toml",
            "-c",
            "examples/rules/recommended-modern.conf",
            "--budget",
            "120",
            "--only-workload",
            "--duration",
            "4m",
        ],
        24,
        80,
    );
    let (code, raw) = s.wait_exit();
    assert_eq!(code, Some(0), "{raw}");
    assert!(raw.contains("recommended, as a diff"), "{raw}");
    let diff = |l: &str| ["+", "-", "@@"].iter().any(|p| l.starts_with(p));
    for line in raw.split("\r\n").filter(|l| !diff(l)) {
        // The progress bar's line is redrawn in place with `\r`.
        let line = line.rsplit('\r').next().unwrap_or_default();
        assert!(
            line.chars().count() <= 80,
            "{} wide: {line:?}",
            line.chars().count()
        );
    }
}

/// nu54 F5: a rule file the what-if editor cannot read (Ctrl-O) is said
/// in words, not "(os error 2)", and not as cpuplugd refusing the edit.
#[test]
fn a_missing_rule_file_in_the_whatif_editor_is_said_in_words() {
    let mut s = Session::start(&["--sim", "examples/scenarios/daytrader.toml"], 24, 80);
    s.wait_for("#2");
    s.press("w");
    s.wait_for("What-if: HOTPLUG");
    s.press("\x0f");
    s.press("/nonexistent/x.conf");
    s.wait_for("no such file or directory");
    let flat = crate::time_pty::flat(&s.screen());
    assert!(
        flat.contains("Enter runs nothing until the file reads and cpuplugd would load it"),
        "{}",
        s.screen()
    );
    assert!(!flat.contains("os error"), "{}", s.screen());
    s.press("\x1b");
    s.wait_gone("What-if: a rule file");
    assert!(s.quit());
}
