//! /proc/loadavg read as cpuplugd reads it: glibc's
//! `fscanf(f, "%lf %lf %lf %lf/", ...)`, all four numbers converted or
//! cpuplugd exits, then each load printed with `%f` and read back with
//! `strtod`. The C library itself is the oracle: a small C program
//! (built with the machine's `cc`; the tests that need it say so and skip
//! without one) scans the same texts, and plugtop must accept, refuse and
//! read exactly what it does. Then the same through the binary: `eval`
//! and `run` end as cpuplugd ends on a text it cannot scan, whether or not
//! a rule names a load.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use plugtop::kernel::loadavg::{LoadavgText, parse_loadavg};
use proptest::prelude::*;

use crate::common;

/// The scan cpuplugd does, on every record of stdin (a 4-byte
/// little-endian length, then the text), each text written to a file of
/// its own and read from it: `fail`, or the two loads after the `%f`
/// round trip as the 16 hex digits of their bits.
const ORACLE: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

static unsigned long long bits(double v) {
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return (unsigned long long)u;
}

static double six_places(double v) {
    char text[1024];
    snprintf(text, sizeof text, "%f", v);
    return strtod(text, NULL);
}

int main(void) {
    static char buf[1 << 16];
    unsigned char head[4];
    while (fread(head, 1, 4, stdin) == 4) {
        size_t n = head[0] | head[1] << 8 | (size_t)head[2] << 16 | (size_t)head[3] << 24;
        if (n > sizeof buf || fread(buf, 1, n, stdin) != n)
            return 2;
        FILE *f = tmpfile();
        if (!f || fwrite(buf, 1, n, f) != n)
            return 3;
        rewind(f);
        double load, dummy, runnable;
        int rc = fscanf(f, "%lf %lf %lf %lf/", &load, &dummy, &dummy, &runnable);
        fclose(f);
        if (rc != 4)
            puts("fail");
        else
            printf("%016llx %016llx\n", bits(six_places(load)), bits(six_places(runnable)));
    }
    return 0;
}
"#;

/// The oracle built once, or `None` (said once) without a C compiler.
fn oracle() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
                .join(format!("fscanf-oracle-{}", std::process::id()));
            std::fs::create_dir_all(&dir).ok()?;
            let source = dir.join("scan.c");
            std::fs::write(&source, ORACLE).ok()?;
            let exe = dir.join("scan");
            let built = Command::new("cc")
                .arg("-O1")
                .arg("-o")
                .arg(&exe)
                .arg(&source)
                .status();
            match built {
                Ok(s) if s.success() => Some(exe),
                other => {
                    eprintln!(
                        "skipped: no C compiler to build the fscanf oracle (cc: {other:?}); \
                         the comparison with the C library is not made"
                    );
                    None
                }
            }
        })
        .as_deref()
}

/// What the C library makes of each text: `None` where cpuplugd exits,
/// else the bits of the two loads.
fn libc_reads(exe: &Path, texts: &[Vec<u8>]) -> Vec<Option<(u64, u64)>> {
    let mut input = Vec::new();
    for t in texts {
        input.extend_from_slice(&u32::try_from(t.len()).expect("short").to_le_bytes());
        input.extend_from_slice(t);
    }
    let mut child = Command::new(exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the oracle starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("the oracle ends");
    writer.join().expect("writer").expect("written");
    assert!(out.status.success(), "the oracle failed: {:?}", out.status);
    let lines: Vec<_> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let mut w = l.split(' ');
            let hex = |w: Option<&str>| w.and_then(|h| u64::from_str_radix(h, 16).ok());
            hex(w.next()).zip(hex(w.next()))
        })
        .collect();
    assert_eq!(lines.len(), texts.len(), "one answer per text");
    lines
}

/// What plugtop makes of each text, and that the daemon's kept text
/// (the file checked eight bytes at a time, converted later) agrees.
fn plugtop_reads(text: &[u8]) -> Option<(u64, u64)> {
    let read = parse_loadavg(text).ok();
    if text.len() <= 64 {
        let kept = LoadavgText::keep(text).and_then(|k| k.parse());
        assert_eq!(
            kept.map(|(a, b)| (a.to_bits(), b.to_bits())),
            read.map(|(a, b)| (a.to_bits(), b.to_bits())),
            "kept and converted differ on {text:?}"
        );
    }
    read.map(|(a, b)| (a.to_bits(), b.to_bits()))
}

/// The first text on which plugtop and the C library differ.
fn first_difference(exe: &Path, texts: &[Vec<u8>]) -> Option<String> {
    let want = libc_reads(exe, texts);
    texts.iter().zip(want).find_map(|(t, w)| {
        let got = plugtop_reads(t);
        (got != w).then(|| {
            let show = |v: Option<(u64, u64)>| {
                v.map_or("exits".to_string(), |(a, b)| {
                    format!("{} {}", f64::from_bits(a), f64::from_bits(b))
                })
            };
            format!(
                "{:?}: libc {}, plugtop {}",
                String::from_utf8_lossy(t),
                show(w),
                show(got)
            )
        })
    })
}

/// The texts adversaries tried (adv52 #2), and the kernel's own.
fn table() -> Vec<Vec<u8>> {
    let texts: &[&[u8]] = &[
        b"0.50 0.40 0.30 1/99 999\n",
        b"+0.5 0 0 1/2\n",
        b"inf 0 0 1/2\n",
        b"nan 0 0 1/2\n",
        b"-inf 0 0 1/2\n",
        b"NaN 0 0 1/2\n",
        b"-nan 0 0 1/2\n",
        b"Infinity 0 0 1/2\n",
        b"infinit 0 0 1/2\n",
        b"infx 0 0 1/2\n",
        b"0x1p3 0 0 1/2\n",
        b"0.5 0 0 0x10/2\n",
        b"0x 0 0 1/2\n",
        b"0x. 0 0 1/2\n",
        b"0x.8p1 0 0 1/2\n",
        b"0X1P-3 0 0 1/2\n",
        b"0x1p 0 0 1/2\n",
        b"0x1e+3 0 0 1/2\n",
        b"0.5 x 0 1/2\n",
        b"0.5 0 x 1/2\n",
        b"0.5abc 0 0 1/2\n",
        b"0.5,0 0 0 1/2\n",
        b"0.5 0 0 x/2\n",
        b"0.5\x0b0 0 1/2\n",
        b"0.5\x0c0\r0\t1/2\n",
        b"0.5 0 0 1\n",
        b"0.5 0 0\n",
        b"- 0 0 1/2\n",
        b". 0 0 1/2\n",
        b"-e 0 0 1/2\n",
        b"0.5 0 0 +/2\n",
        b"0.5 0 0 ./2\n",
        b"0.5 0 0 -/2\n",
        b"0.5 0 0 +-1/2\n",
        b"0.5-1 0 0 1/2\n",
        b"1.2.3 0 0 1/2\n",
        b"\x00.5 0 0 1/2\n",
        b"0.5 0 0 1\x00/2\n",
        b"1e999 0 0 1/2\n",
        b"1e5 0 0 1e3/2\n",
        b"-0.5 0 0 -3/2\n",
        b"0.5 0 01/2",
        b"0.5 0 0 1/",
        b"0.5 0 0 1.5/2\n",
        b"99999999999999999999999 0 0 1/2\n",
        b"0.5e 0 0 1/2\n",
        b"0.5 0 0 1e/2\n",
        b"0.5 0 0 1e+/2\n",
        b"5. 0 0 1/2\n",
        b".5 0 0 .5/2\n",
        b"0.5 0 0 -.5/2\n",
        b"0.5 0 0 inf/2\n",
        b"0.5 0 0 nan\n",
        b"0.5 1e400 0 1/2\n",
        b"0.12345678 0 0 1/2\n",
        b"0.0078125 0 0 1/2\n",
        b"-0.0000001 0 0 1/2\n",
        b"\xc2\xa00.5 0 0 1/2\n",
        b"e5 0 0 1/2\n",
        b"0.5 0 0 e5\n",
        b"1234567.1234567 0 0 1/2\n",
        b"",
        b" \n\t",
    ];
    texts.iter().map(|t| t.to_vec()).collect()
}

#[test]
fn plugtop_reads_the_adversaries_table_as_fscanf_does() {
    let Some(exe) = oracle() else { return };
    if let Some(d) = first_difference(exe, &table()) {
        panic!("{d}");
    }
}

/// Bytes glibc's scan treats differently: digits, signs, the dot, the
/// letters of exponents, hexadecimal, `nan` and `inf`, every blank
/// `isspace` knows, the slash and NUL.
const ALPHABET: &[u8] = b"0123456789+-.eExXpPaAfFiInNtTyYz/ \t\n\x0b\x0c\r\x00";

fn hostile_text() -> impl Strategy<Value = Vec<u8>> {
    let byte = proptest::sample::select(ALPHABET.to_vec());
    let word = proptest::collection::vec(byte.clone(), 0..7);
    prop_oneof![
        proptest::collection::vec(byte, 0..24),
        // Four words, so that more texts reach the later numbers.
        (
            proptest::collection::vec(word, 4),
            proptest::sample::select(b" \t\x0b\n".to_vec())
        )
            .prop_map(|(words, blank)| words.join(&blank)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random short texts: plugtop accepts, refuses and reads as the C
    /// library's `fscanf` does.
    #[test]
    fn plugtop_reads_loadavg_as_fscanf_does(
        texts in proptest::collection::vec(hostile_text(), 1..400),
    ) {
        let Some(exe) = oracle() else { return Ok(()) };
        let d = first_difference(exe, &texts);
        prop_assert!(d.is_none(), "{}", d.unwrap_or_default());
    }
}

/// A copy of the fixture series whose every /proc/loadavg is `text`.
fn series_with_loadavg(dir: &Path, text: &[u8]) -> PathBuf {
    let series = dir.join("series");
    let from = Path::new("tests/fixtures/series/oldkernel");
    for entry in walk(from) {
        let rel = entry.strip_prefix(from).expect("inside");
        let to = series.join(rel);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("dir");
        if rel.ends_with("proc/loadavg") {
            std::fs::write(&to, text).expect("loadavg");
        } else {
            std::fs::copy(&entry, &to).expect("copy");
        }
    }
    series
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

const NO_LOAD_RULES: &str = "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\n\
    HOTPLUG=\"idle < 10\"\nHOTUNPLUG=\"idle > 500\"\n";

/// `eval` reads /proc/loadavg every interval, as cpuplugd does, even
/// when no rule names a load: a text cpuplugd cannot scan ends it as
/// cpuplugd ends (a fatal line, status 1), one it can is read.
#[test]
fn eval_checks_loadavg_even_when_no_rule_names_a_load() {
    let dir = common::tempdir();
    let rules = dir.path().join("noload.conf");
    std::fs::write(&rules, NO_LOAD_RULES).expect("rules");
    for (text, exits) in [
        (&b"garbage\n"[..], true),
        (b"0.5 x 0 1/2\n", true),
        (b"0.5 0 0 +/2\n", true),
        (b"+0.5 0 0 1/2\n", false),
        (b"0.5\x0b0 0 1/2\n", false),
        (b"nan 0 0 1/2\n", false),
    ] {
        let case = tempfile::tempdir_in(dir.path()).expect("case dir");
        let series = series_with_loadavg(case.path(), text);
        let o = common::plugtop(&[
            "eval",
            "-c",
            &rules.to_string_lossy(),
            "--snapshots",
            &series.to_string_lossy(),
            "--jsonl",
        ]);
        let out = String::from_utf8_lossy(&o.stdout);
        let last = out.lines().last().unwrap_or_default();
        if exits {
            assert!(
                last.contains("\"fatal\"") && last.contains("loadavg"),
                "{text:?}: {out}"
            );
            assert_eq!(o.status.code(), Some(1), "{text:?}: {out}");
        } else {
            assert!(!out.contains("fatal"), "{text:?}: {out}");
            assert_eq!(o.status.code(), Some(0), "{text:?}: {out}");
        }
    }
}
