//! Failures on purpose, for the tests of the failure policy: a panic in a
//! chosen thread, a sysfs write that takes as long as the test says.
//! Compiled in only with the `fault-injection` feature, which the test
//! build alone enables; a shipped binary ignores `PLUGTOP_FAULT`,
//! `PLUGTOP_TEST_WRITE_GATE`, `PLUGTOP_TEST_WRITE_TOKEN`,
//! `PLUGTOP_TEST_FAIL_WRITES` and `PLUGTOP_TEST_NO_OPENAT2`.

/// Where a failure can be injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    /// The control loop, after the given number of intervals
    /// (`PLUGTOP_FAULT=control:N`).
    Control,
    /// The metrics endpoint's thread, at its Nth request (`metrics:N`).
    Metrics,
    /// The screen's key-reading thread, at its Nth input (`input:N`).
    Input,
    /// Judging a training submission, after its Nth held-out run
    /// (`judge:N`).
    Judge,
}

impl Site {
    #[cfg(feature = "fault-injection")]
    fn name(self) -> &'static str {
        match self {
            Site::Control => "control",
            Site::Metrics => "metrics",
            Site::Input => "input",
            Site::Judge => "judge",
        }
    }
}

/// Panics when `PLUGTOP_FAULT=SITE:N` names this site and `count` has
/// reached N. Does nothing in a build without `fault-injection`.
pub fn panic_at(site: Site, count: usize) {
    #[cfg(feature = "fault-injection")]
    if let Ok(spec) = std::env::var("PLUGTOP_FAULT")
        && let Some((name, after)) = spec.split_once(':')
        && name == site.name()
        && after.parse::<usize>().is_ok_and(|n| count >= n)
    {
        panic!("injected fault in the {name} thread ({spec})");
    }
    #[cfg(not(feature = "fault-injection"))]
    let _ = (site, count);
}

/// Whether `openat2` is to answer `ENOSYS` as on a kernel before 5.6
/// (RHEL 8's 4.18, SLES 15 SP3's 5.3): with `PLUGTOP_TEST_NO_OPENAT2=1`,
/// so that the suite's second pass (`.ci/run`) takes the walk
/// component by component everywhere, in the test process and in every
/// binary it starts. Read once; never in a shipped binary.
pub fn openat2_hidden() -> bool {
    #[cfg(feature = "fault-injection")]
    {
        static HIDDEN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *HIDDEN
            .get_or_init(|| std::env::var_os("PLUGTOP_TEST_NO_OPENAT2").is_some_and(|v| v == "1"))
    }
    #[cfg(not(feature = "fault-injection"))]
    false
}

/// Files whose writes fail (as a CPU the hypervisor will not give up),
/// for the tests of what a failed write does.
#[cfg(feature = "fault-injection")]
static FAILING: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// From now on every write to `path` fails (test build only).
#[cfg(feature = "fault-injection")]
pub fn fail_writes_to(path: &std::path::Path) {
    FAILING
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(path.to_path_buf());
}

/// Whether a write to `rel` below `root` is to fail: a path given to
/// [`fail_writes_to`], or one of the paths below the root listed in
/// `PLUGTOP_TEST_FAIL_WRITES` (comma-separated, for a spawned binary on a
/// file system where a file cannot be made unwritable to root); never in
/// a shipped binary.
pub fn write_fails(root: &std::path::Path, rel: &str) -> bool {
    #[cfg(feature = "fault-injection")]
    {
        let path = root.join(rel);
        let listed = std::env::var("PLUGTOP_TEST_FAIL_WRITES")
            .is_ok_and(|list| list.split(',').any(|r| r == rel));
        return listed
            || FAILING
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(&path);
    }
    #[cfg(not(feature = "fault-injection"))]
    {
        let _ = (root, rel);
        false
    }
}

/// Holds every sysfs write until the file `PLUGTOP_TEST_WRITE_GATE` names
/// exists, as taking an s390 CPU offline can take seconds: a test keeps a
/// write in progress exactly as long as it looks, so no clock decides what
/// it sees. With `PLUGTOP_TEST_WRITE_TOKEN`, also waits until the test
/// kernel's token file exists (it is ready for a write). Returns at once in
/// a shipped binary.
pub fn wait_at_write_gate() {
    #[cfg(feature = "fault-injection")]
    {
        if let Some(gate) = std::env::var_os("PLUGTOP_TEST_WRITE_GATE") {
            wait_for_file(std::path::Path::new(&gate));
        }
        if let Some(token) = std::env::var_os("PLUGTOP_TEST_WRITE_TOKEN") {
            wait_for_file(std::path::Path::new(&token));
        }
    }
}

/// After a sysfs write, with `PLUGTOP_TEST_WRITE_TOKEN=FILE`: removes FILE
/// and waits until the test kernel creates it again, which it does only
/// after it has published what the write changed (`cpu/online`). So the
/// write returns when the kernel's files agree with it, as a real kernel's
/// write does, and a starved test kernel can never show a stale list.
/// Returns at once in a shipped binary.
pub fn wait_for_write_acknowledged() {
    #[cfg(feature = "fault-injection")]
    if let Some(token) = std::env::var_os("PLUGTOP_TEST_WRITE_TOKEN") {
        let token = std::path::Path::new(&token);
        // Removed only after the write: a kernel that sees the token gone
        // reads the files after the write and cannot acknowledge too early.
        let _ = std::fs::remove_file(token);
        wait_for_file(token);
    }
}

/// Polls until `path` exists (the test's hang guard ends a stuck wait).
#[cfg(feature = "fault-injection")]
fn wait_for_file(path: &std::path::Path) {
    while !path.exists() {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}
