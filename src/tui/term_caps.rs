//! What the terminal can do, from `TERM` and its compiled terminfo entry:
//! colours, mouse reports and bracketed paste are asked of a terminal only
//! where its entry says it has them. A 3270 or SCLP console (`TERM=vt100`)
//! gets none of them; the Linux console gets mouse reports but no colours
//! (it has 8, and crossterm writes every colour as a 256-colour SGR) and no
//! bracketed paste (not among its control sequences, console_codes(4)).
//!
//! The entry is read bounded (32 KiB) from the places ncurses looks
//! (`$TERMINFO`, `~/.terminfo`, `$TERMINFO_DIRS`, /etc/terminfo,
//! /lib/terminfo, /usr/share/terminfo): only its `colors` number and its
//! `kmous` string are used, so no terminfo library is needed. Without an
//! entry, a short table of terminal families decides, and any other name
//! gets the plain screen (no colours, no mouse, no bracketed paste).

use std::io::Read;
use std::path::PathBuf;

/// What the screen may ask of the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermCaps {
    /// 256 colours (crossterm writes every colour that way).
    pub colors: bool,
    /// Mouse reports (xterm's modes 1000/1002/1006).
    pub mouse: bool,
    /// Bracketed paste (mode 2004): pasted text arrives as text.
    pub paste: bool,
}

impl TermCaps {
    /// Everything: an xterm-compatible terminal.
    const FULL: TermCaps = TermCaps {
        colors: true,
        mouse: true,
        paste: true,
    };
    /// Nothing but text and cursor movement.
    const PLAIN: TermCaps = TermCaps {
        colors: false,
        mouse: false,
        paste: false,
    };

    /// The capabilities of the terminal `TERM` names.
    pub fn from_env() -> TermCaps {
        let term = std::env::var("TERM").unwrap_or_default();
        decide(&term, read_entry(&term).as_deref().and_then(parse))
    }
}

/// The most of a compiled entry that is read (xterm-256color is 3.9 KB).
const ENTRY_LIMIT: u64 = 32 * 1024;

/// The two things used from an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TerminfoEntry {
    /// `colors` (max_colors), when set.
    colors: Option<i32>,
    /// `kmous` (key_mouse), when set: the terminal reports the mouse.
    kmous: Option<Vec<u8>>,
}

/// Index of `colors` among the numbers, of `kmous` among the strings
/// (term.h's order, the same in every compiled entry).
const MAX_COLORS: usize = 13;
const KEY_MOUSE: usize = 355;

fn decide(term: &str, entry: Option<TerminfoEntry>) -> TermCaps {
    let Some(entry) = entry else {
        return by_name(term);
    };
    let mouse = entry.kmous.as_ref().is_some_and(|k| !k.is_empty());
    TermCaps {
        colors: entry.colors.is_some_and(|c| c >= 256),
        mouse,
        paste: mouse && !term.starts_with("linux"),
    }
}

/// Without an entry: terminal families known to be xterm-compatible get
/// everything, any other name the plain screen.
fn by_name(term: &str) -> TermCaps {
    let families = [
        "xterm",
        "screen",
        "tmux",
        "rxvt",
        "alacritty",
        "kitty",
        "foot",
        "wezterm",
        "vte",
        "gnome",
        "konsole",
        "iterm",
    ];
    if families.iter().any(|f| term.starts_with(f)) || term.ends_with("-256color") {
        TermCaps::FULL
    } else {
        TermCaps::PLAIN
    }
}

/// Where ncurses looks for the compiled entry of `term`, in its order.
fn entry_paths(term: &str) -> Vec<PathBuf> {
    let Some(first) = term.chars().next() else {
        return Vec::new();
    };
    // A name is one path component: nothing else is looked up.
    if term.contains('/') || term.starts_with('.') {
        return Vec::new();
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(d) = std::env::var_os("TERMINFO") {
        dirs.push(d.into());
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".terminfo"));
    }
    if let Some(list) = std::env::var_os("TERMINFO_DIRS") {
        dirs.extend(std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()));
    }
    dirs.extend(["/etc/terminfo", "/lib/terminfo", "/usr/share/terminfo"].map(PathBuf::from));
    let hex = format!("{:02x}", u32::from(first));
    dirs.iter()
        .flat_map(|d| {
            [
                d.join(first.to_string()).join(term),
                d.join(&hex).join(term),
            ]
        })
        .collect()
}

/// The first entry found, at most [`ENTRY_LIMIT`] bytes, read without
/// blocking (a FIFO planted there reads as nothing).
fn read_entry(term: &str) -> Option<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    entry_paths(term).into_iter().find_map(|path| {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open(path)
            .ok()?;
        if !file.metadata().ok()?.is_file() {
            return None;
        }
        let mut bytes = Vec::new();
        file.take(ENTRY_LIMIT).read_to_end(&mut bytes).ok()?;
        Some(bytes)
    })
}

/// The `colors` number and `kmous` string of a compiled entry (the legacy
/// format, magic 0432, or the 32-bit one, magic 01036); `None` for
/// anything else or anything cut short.
fn parse(bytes: &[u8]) -> Option<TerminfoEntry> {
    let short = |at: usize| -> Option<i32> {
        let b = bytes.get(at..at + 2)?;
        Some(i32::from(i16::from_le_bytes([b[0], b[1]])))
    };
    let count = |at: usize| short(at).and_then(|n| usize::try_from(n).ok());
    let width = match short(0)? {
        0o432 => 2,
        0o1036 => 4,
        _ => return None,
    };
    let (names, bools, nums, strings) = (count(2)?, count(4)?, count(6)?, count(8)?);
    let mut at = 12 + names + bools;
    at += at % 2;
    let colors = (MAX_COLORS < nums)
        .then(|| {
            let b = bytes.get(at + MAX_COLORS * width..at + (MAX_COLORS + 1) * width)?;
            Some(if width == 2 {
                i32::from(i16::from_le_bytes([b[0], b[1]]))
            } else {
                i32::from_le_bytes([b[0], b[1], b[2], b[3]])
            })
        })
        .flatten()
        .filter(|c| *c >= 0);
    at += nums * width;
    let table = at + strings * 2;
    let kmous = if KEY_MOUSE < strings {
        let offset = short(at + KEY_MOUSE * 2)?;
        usize::try_from(offset).ok().and_then(|o| {
            let text = bytes.get(table + o..)?;
            let end = text.iter().position(|b| *b == 0)?;
            Some(text[..end].to_vec())
        })
    } else {
        None
    };
    Some(TerminfoEntry { colors, kmous })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compiled entry in the legacy format with `colors` and, when
    /// given, `kmous`.
    fn entry(colors: Option<i16>, kmous: Option<&[u8]>) -> Vec<u8> {
        let names = b"t|test\0";
        let nums = 15usize;
        let strings = 400usize;
        let mut table = Vec::new();
        let mut offsets = vec![-1i16; strings];
        if let Some(k) = kmous {
            offsets[KEY_MOUSE] = 0;
            table.extend_from_slice(k);
            table.push(0);
        }
        let mut out = Vec::new();
        for v in [
            0o432i16,
            names.len() as i16,
            0,
            nums as i16,
            strings as i16,
            table.len() as i16,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(names);
        if out.len() % 2 == 1 {
            out.push(0);
        }
        for i in 0..nums {
            let v = if i == MAX_COLORS {
                colors.unwrap_or(-1)
            } else {
                -1
            };
            out.extend_from_slice(&v.to_le_bytes());
        }
        for o in offsets {
            out.extend_from_slice(&o.to_le_bytes());
        }
        out.extend_from_slice(&table);
        out
    }

    #[test]
    fn the_entry_says_what_the_terminal_has() {
        let xterm = parse(&entry(Some(256), Some(b"\x1b[<"))).expect("entry");
        assert_eq!(decide("xterm-256color", Some(xterm)), TermCaps::FULL);
        let vt100 = parse(&entry(None, None)).expect("entry");
        assert_eq!(decide("vt100", Some(vt100)), TermCaps::PLAIN);
        let linux = parse(&entry(Some(8), Some(b"\x1b[M"))).expect("entry");
        assert_eq!(
            decide("linux", Some(linux)),
            TermCaps {
                colors: false,
                mouse: true,
                paste: false
            }
        );
    }

    #[test]
    fn without_an_entry_known_families_get_everything_and_others_nothing() {
        assert_eq!(decide("xterm-kitty", None), TermCaps::FULL);
        assert_eq!(decide("tmux-256color", None), TermCaps::FULL);
        for plain in ["vt100", "vt220", "dumb", "ansi", "", "3270"] {
            assert_eq!(decide(plain, None), TermCaps::PLAIN, "{plain:?}");
        }
    }

    #[test]
    fn cut_or_foreign_entries_are_no_entries() {
        let whole = entry(Some(256), Some(b"\x1b[<"));
        for cut in [0, 1, 11, 12, 40, whole.len() - 2] {
            // Never a panic; a cut before the strings is no entry.
            let _ = parse(&whole[..cut]);
        }
        assert_eq!(parse(b"not terminfo at all"), None);
        assert_eq!(parse(&[]), None);
    }

    #[test]
    fn names_that_are_paths_are_not_looked_up() {
        for name in ["../../etc/passwd", "a/b", ".hidden", ""] {
            assert!(entry_paths(name).is_empty(), "{name}");
        }
        assert!(!entry_paths("vt100").is_empty());
    }

    /// This machine's own entries, where it has them (the test says so
    /// when it has none).
    #[test]
    fn this_machine_s_vt100_and_xterm_entries_read_as_expected() {
        let Some(vt100) = read_entry("vt100").as_deref().and_then(parse) else {
            eprintln!("skipped: no terminfo entry for vt100 on this machine");
            return;
        };
        assert_eq!(decide("vt100", Some(vt100)), TermCaps::PLAIN);
        if let Some(x) = read_entry("xterm-256color").as_deref().and_then(parse) {
            assert_eq!(decide("xterm-256color", Some(x)), TermCaps::FULL);
        }
    }
}
