//! What `plugtop run` hands `plugtop-run` (src/cli/run_exe.rs): the
//! command line as `plugtop` parsed and checked it, a [`Request`], written
//! as one text by [`encode`] and read back by its inverse, [`decode`].
//! `plugtop-run` thus links no parser of its own (clap was a tenth of its
//! text and its resident pages). The command line itself still passes
//! unchanged, for ps and /proc/PID/cmdline.
//!
//! The text is every field of the request in one fixed order, each
//! `NAME=` and then `-` when it is absent or `LENGTH:BYTES` (the bytes as
//! they are: a file name that is not UTF-8, begins with `-` or holds a
//! blank, `=` or a newline passes as it is), one blank between fields.
//! Only what [`encode`] writes is read back: anything else is refused.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};

use super::run::Request;
use plugtop::control::controller::Mode;
use plugtop::control::flap::FlapConfig;

/// The request as one text (for the environment: no NUL byte, as none
/// can be in a command line). A field left out here fails [`decode`]'s
/// round trip (the tests).
pub fn encode(request: &Request) -> OsString {
    let mut text = Text(Vec::new());
    text.field("config", Some(path(&request.config)))
        .field("foreground", flag(request.foreground))
        .field("verbose", flag(request.verbose))
        .field("root", Some(path(&request.root)))
        .field("mode", Some(request.mode.key().as_bytes()))
        .field("state", request.state.as_deref().map(path))
        .field("force", flag(request.force))
        .field("allow-non-zvm", flag(request.allow_non_zvm))
        .field("replay", request.replay.as_deref().map(path))
        .field(
            "interval-ms",
            request
                .interval_ms
                .map(|ms| ms.to_string())
                .as_deref()
                .map(str::as_bytes),
        )
        .field(
            "flap-window",
            Some(request.flap.window.to_string().as_bytes()),
        )
        .field(
            "flap-reversals",
            Some(request.flap.reversals.to_string().as_bytes()),
        )
        .field(
            "metrics-listen",
            request.metrics_listen.as_deref().map(str::as_bytes),
        )
        .field(
            "metrics-textfile",
            request.metrics_textfile.as_deref().map(path),
        )
        .field("wide", flag(request.wide));
    OsString::from_vec(text.0)
}

/// The request [`encode`] wrote as `text`; an error names the first field
/// that is not as [`encode`] writes it.
#[allow(dead_code)] // plugtop-run's alone (and the tests')
pub fn decode(text: &OsStr) -> anyhow::Result<Request> {
    let mut fields = Fields {
        rest: text.as_bytes(),
        first: true,
    };
    let request = Request {
        config: fields.path("config")?,
        foreground: fields.flag("foreground")?,
        verbose: fields.flag("verbose")?,
        root: fields.path("root")?,
        mode: fields.mode("mode")?,
        state: fields.optional("state")?.map(to_path),
        force: fields.flag("force")?,
        allow_non_zvm: fields.flag("allow-non-zvm")?,
        replay: fields.optional("replay")?.map(to_path),
        interval_ms: fields
            .optional("interval-ms")?
            .map(|n| number("interval-ms", n))
            .transpose()?,
        flap: FlapConfig {
            window: number("flap-window", fields.required("flap-window")?)?,
            reversals: number("flap-reversals", fields.required("flap-reversals")?)?,
        },
        metrics_listen: fields
            .optional("metrics-listen")?
            .map(|s| {
                std::str::from_utf8(s)
                    .map(str::to_owned)
                    .map_err(|_| anyhow!("metrics-listen: not UTF-8"))
            })
            .transpose()?,
        metrics_textfile: fields.optional("metrics-textfile")?.map(to_path),
        wide: fields.flag("wide")?,
    };
    if !fields.rest.is_empty() {
        bail!("more after the last field");
    }
    // What clap lets through (FlapArgs: a window of at least 1, two
    // reversals at least), so the run never sees less.
    if request.flap.window == 0 || request.flap.reversals < 2 {
        bail!("flap-window or flap-reversals: below what plugtop run takes");
    }
    // One text for one request: a number with a sign or leading zeros, a
    // length written otherwise, is refused too.
    if encode(&request) != text {
        bail!("not as plugtop writes it");
    }
    Ok(request)
}

/// The text being written.
struct Text(Vec<u8>);

impl Text {
    /// `NAME=-` (absent) or `NAME=LENGTH:BYTES`, after a blank unless first.
    fn field(&mut self, name: &str, value: Option<&[u8]>) -> &mut Text {
        if !self.0.is_empty() {
            self.0.push(b' ');
        }
        self.0.extend_from_slice(name.as_bytes());
        self.0.push(b'=');
        match value {
            None => self.0.push(b'-'),
            Some(bytes) => {
                self.0.extend_from_slice(bytes.len().to_string().as_bytes());
                self.0.push(b':');
                self.0.extend_from_slice(bytes);
            }
        }
        self
    }
}

fn path(path: &Path) -> &[u8] {
    path.as_os_str().as_bytes()
}

fn flag(on: bool) -> Option<&'static [u8]> {
    Some(if on { b"1" } else { b"0" })
}

fn to_path(bytes: &[u8]) -> PathBuf {
    PathBuf::from(OsString::from_vec(bytes.to_vec()))
}

fn number<T: std::str::FromStr>(name: &str, bytes: &[u8]) -> anyhow::Result<T> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| anyhow!("{name}: not a number"))
}

/// The text being read: what is left of it.
struct Fields<'a> {
    rest: &'a [u8],
    first: bool,
}

impl<'a> Fields<'a> {
    /// The next field, which must be `name`: its bytes, or `None` if absent.
    fn optional(&mut self, name: &str) -> anyhow::Result<Option<&'a [u8]>> {
        let mut rest = self.rest;
        if !self.first {
            rest = rest
                .strip_prefix(b" ")
                .ok_or_else(|| anyhow!("{name}: no blank before it"))?;
        }
        self.first = false;
        rest = rest
            .strip_prefix(name.as_bytes())
            .and_then(|r| r.strip_prefix(b"="))
            .ok_or_else(|| anyhow!("{name}: not the next field"))?;
        if let Some(after) = rest.strip_prefix(b"-") {
            self.rest = after;
            return Ok(None);
        }
        let colon = rest
            .iter()
            .position(|&b| b == b':')
            .ok_or_else(|| anyhow!("{name}: no length"))?;
        let length: usize = number(name, &rest[..colon])?;
        let (value, after) = rest[colon + 1..]
            .split_at_checked(length)
            .ok_or_else(|| anyhow!("{name}: shorter than its length"))?;
        self.rest = after;
        Ok(Some(value))
    }

    fn required(&mut self, name: &str) -> anyhow::Result<&'a [u8]> {
        self.optional(name)?
            .ok_or_else(|| anyhow!("{name}: absent"))
    }

    fn path(&mut self, name: &str) -> anyhow::Result<PathBuf> {
        self.required(name).map(to_path)
    }

    fn flag(&mut self, name: &str) -> anyhow::Result<bool> {
        match self.required(name)? {
            b"1" => Ok(true),
            b"0" => Ok(false),
            _ => Err(anyhow!("{name}: neither 0 nor 1")),
        }
    }

    /// `plugtop run`'s modes: auto and observe (it has no step mode).
    fn mode(&mut self, name: &str) -> anyhow::Result<Mode> {
        match self.required(name)? {
            b"auto" => Ok(Mode::Auto),
            b"observe" => Ok(Mode::Observe),
            _ => Err(anyhow!("{name}: neither auto nor observe")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn request() -> Request {
        Request {
            config: PathBuf::from("/etc/cpuplugd.conf"),
            foreground: false,
            verbose: false,
            root: PathBuf::from("/"),
            mode: Mode::Auto,
            state: None,
            force: false,
            allow_non_zvm: false,
            replay: None,
            interval_ms: None,
            flap: FlapConfig::default(),
            metrics_listen: None,
            metrics_textfile: None,
            wide: false,
        }
    }

    fn bytes_path(bytes: &[u8]) -> PathBuf {
        to_path(bytes)
    }

    fn round_trip(request: &Request) {
        let text = encode(request);
        assert_eq!(
            decode(&text).as_ref().ok(),
            Some(request),
            "{text:?}: {:?}",
            decode(&text).err()
        );
    }

    #[test]
    fn the_default_request_reads_as_it_is_written() {
        let text = encode(&request());
        assert_eq!(
            text,
            "config=18:/etc/cpuplugd.conf foreground=1:0 verbose=1:0 root=1:/ mode=4:auto \
             state=- force=1:0 allow-non-zvm=1:0 replay=- interval-ms=- flap-window=2:30 \
             flap-reversals=1:4 metrics-listen=- metrics-textfile=- wide=1:0"
        );
        round_trip(&request());
    }

    /// Every field, set and unset, with values a command line may hold:
    /// not UTF-8, empty, beginning with `-`, holding a newline, a blank,
    /// `=`, `:` or what looks like the next field.
    #[test]
    fn every_field_with_hostile_values_reads_back_the_same() {
        let hostile: [&[u8]; 8] = [
            b"",
            b"-",
            b"-c",
            b"--mode=observe",
            b"plug rules \xff.conf",
            b"a\nb\r\n",
            b"x=1:y wide=1:1",
            b"12:",
        ];
        for bytes in hostile {
            let text = String::from_utf8_lossy(bytes).into_owned();
            let p = bytes_path(bytes);
            let mut all = vec![
                Request {
                    config: p.clone(),
                    ..request()
                },
                Request {
                    root: p.clone(),
                    ..request()
                },
                Request {
                    state: Some(p.clone()),
                    ..request()
                },
                Request {
                    replay: Some(p.clone()),
                    ..request()
                },
                Request {
                    metrics_textfile: Some(p.clone()),
                    ..request()
                },
                Request {
                    metrics_listen: Some(text),
                    ..request()
                },
            ];
            all.push(Request {
                config: p.clone(),
                root: p.clone(),
                state: Some(p.clone()),
                replay: Some(p.clone()),
                metrics_textfile: Some(p),
                ..request()
            });
            for r in &all {
                round_trip(r);
            }
        }
        for on in [false, true] {
            round_trip(&Request {
                foreground: on,
                verbose: !on,
                force: on,
                allow_non_zvm: !on,
                wide: on,
                mode: if on { Mode::Observe } else { Mode::Auto },
                ..request()
            });
        }
        for ms in [0, 1, u64::MAX] {
            round_trip(&Request {
                interval_ms: Some(ms),
                ..request()
            });
        }
        round_trip(&Request {
            flap: FlapConfig {
                window: usize::MAX,
                reversals: 2,
            },
            ..request()
        });
    }

    #[test]
    fn what_encode_does_not_write_is_refused() {
        let good = encode(&request()).into_vec();
        let swap = |from: &str, to: &str| {
            let text = String::from_utf8(good.clone()).expect("ASCII");
            assert!(text.contains(from), "{from}");
            OsString::from(text.replacen(from, to, 1))
        };
        let bad = [
            OsString::new(),
            OsString::from(" "),
            OsString::from_vec(good[..good.len() - 1].to_vec()),
            OsString::from_vec([&good[..], b" "].concat()),
            OsString::from_vec([&good[..], b" extra=-"].concat()),
            swap("config=18:", "config=19:"),
            swap("config=18:", "config=99999999999999999999999:"),
            swap("config=18:", "config=018:"),
            swap("config=18:", "config=+18:"),
            swap("config=18:/etc/cpuplugd.conf", "config=-"),
            swap("config=", "konfig="),
            swap(" foreground", "  foreground"),
            swap("foreground=1:0", "foreground=1:2"),
            swap("foreground=1:0", "foreground=-"),
            swap("mode=4:auto", "mode=4:step"),
            swap("mode=4:auto", "mode=7:observ"),
            swap("interval-ms=-", "interval-ms=2:+1"),
            swap("interval-ms=-", "interval-ms=2:01"),
            swap("interval-ms=-", "interval-ms=1:x"),
            swap("interval-ms=-", "interval-ms=2:-1"),
            swap("flap-window=2:30", "flap-window=1:0"),
            swap("flap-reversals=1:4", "flap-reversals=1:1"),
            swap("verbose=1:0 root=1:/", "root=1:/ verbose=1:0"),
        ];
        for text in bad {
            assert!(decode(&text).is_err(), "{text:?} is refused");
        }
        let field = b"metrics-listen=-";
        let at = good
            .windows(field.len())
            .position(|w| w == field)
            .expect("the field");
        let not_utf8 = OsString::from_vec(
            [
                &good[..at],
                b"metrics-listen=1:\xff",
                &good[at + field.len()..],
            ]
            .concat(),
        );
        assert!(decode(&not_utf8).is_err(), "metrics-listen is UTF-8");
    }

    fn path_bytes() -> impl Strategy<Value = PathBuf> {
        proptest::collection::vec(1u8.., 0..24).prop_map(|b| bytes_path(&b))
    }

    fn requests() -> impl Strategy<Value = Request> {
        (
            (
                path_bytes(),
                path_bytes(),
                proptest::option::of(path_bytes()),
            ),
            (
                proptest::option::of(path_bytes()),
                proptest::option::of(path_bytes()),
                // No NUL: none can be in a command line.
                proptest::option::of("[^\\x00]{0,12}"),
            ),
            (
                any::<[bool; 6]>(),
                proptest::option::of(any::<u64>()),
                1usize..,
                2usize..,
            ),
        )
            .prop_map(
                |(
                    (config, root, state),
                    (replay, metrics_textfile, metrics_listen),
                    (flags, interval_ms, window, reversals),
                )| Request {
                    config,
                    foreground: flags[0],
                    verbose: flags[1],
                    root,
                    mode: if flags[2] { Mode::Observe } else { Mode::Auto },
                    state,
                    force: flags[3],
                    allow_non_zvm: flags[4],
                    replay,
                    interval_ms,
                    flap: FlapConfig { window, reversals },
                    metrics_listen,
                    metrics_textfile,
                    wide: flags[5],
                },
            )
    }

    proptest! {
        #[test]
        fn any_request_reads_back_the_same(request in requests()) {
            let text = encode(&request);
            prop_assert!(!text.as_bytes().contains(&0), "no NUL for the environment");
            prop_assert_eq!(decode(&text).ok(), Some(request));
        }

        /// Any text: refused or read, never a panic; what is read is the
        /// one text of its request.
        #[test]
        fn any_text_is_read_only_as_encode_writes_it(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let text = OsString::from_vec(bytes);
            if let Ok(request) = decode(&text) {
                prop_assert_eq!(encode(&request), text);
            }
        }
    }
}
