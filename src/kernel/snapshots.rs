//! A directory of numbered snapshot directories (the conformance format):
//! each one a root with proc/, sys/ and a `time` file.

use std::fs;
use std::path::{Path, PathBuf};

use super::procfs_text::parse_time;
use super::root::RootReader;
use super::sample::Sample;
use super::source::{Interest, Source, SourceError};
use crate::rules::SystemFacts;

/// Replays snapshot directories in name order.
#[derive(Debug)]
pub struct SnapshotSource {
    dirs: Vec<PathBuf>,
    next: usize,
    reader: RootReader,
}

impl SnapshotSource {
    /// Lists the snapshots under `dir` (sub-directories, sorted by name).
    pub fn open(dir: &Path) -> Result<Self, SourceError> {
        let entries = fs::read_dir(dir).map_err(|source| SourceError::Open {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut named: Vec<(std::ffi::OsString, PathBuf)> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| (e.file_name(), e.path()))
            .collect();
        named.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let dirs = named.into_iter().map(|(_, p)| p).collect();
        let mut reader = RootReader::new();
        reader.scan_cpu_dirs = false;
        Ok(SnapshotSource {
            dirs,
            next: 0,
            reader,
        })
    }

    /// The first snapshot's directory, if any.
    pub fn first_dir(&self) -> Option<PathBuf> {
        self.dirs.first().cloned()
    }

    /// How many snapshots there are.
    pub fn len(&self) -> usize {
        self.dirs.len()
    }

    /// True when the directory holds no snapshot.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
    }

    fn read(&mut self, dir: &Path) -> Result<Sample, SourceError> {
        let text = self.reader.read_file(dir, "time")?;
        let stamp = parse_time(text).ok_or_else(|| SourceError::Malformed {
            path: dir.join("time"),
            what: "expected SEC or SEC.FRACTION".into(),
        })?;
        self.reader.read(dir, stamp)
    }
}

impl Source for SnapshotSource {
    fn facts(&mut self) -> SystemFacts {
        match self.dirs.first().cloned() {
            Some(first) => self.reader.facts(&first),
            None => SystemFacts {
                present_cpus: Err("no snapshots".into()),
                cmm_pages: false,
                meminfo_names: None,
                vmstat_names: None,
                origin: "the snapshots".into(),
            },
        }
    }

    fn narrow(&mut self, interest: &Interest) {
        self.reader.narrow(interest);
    }

    fn next_sample(&mut self) -> Option<Result<Sample, SourceError>> {
        let dir = std::mem::take(self.dirs.get_mut(self.next)?);
        self.next += 1;
        let sample = self.read(&dir);
        self.dirs[self.next - 1] = dir;
        Some(sample)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each snapshot is read from its own directory, its `time` included
    /// (files are opened relative to the current root's directory, which
    /// must change before the first file of the next snapshot is read).
    #[test]
    fn every_file_of_a_snapshot_comes_from_that_snapshot() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/series/oldkernel");
        let mut source = SnapshotSource::open(&dir).expect("fixture series");
        let mut read = 0;
        while let Some(sample) = source.next_sample() {
            let sample = sample.expect("readable");
            let here = dir.join(format!("{read:04}"));
            let time = fs::read(here.join("time")).expect("time");
            assert_eq!(Some(sample.stamp), parse_time(&time), "snapshot {read}");
            let meminfo = fs::read_to_string(here.join("proc/meminfo")).expect("meminfo");
            let free = meminfo
                .lines()
                .find_map(|l| l.strip_prefix("MemFree:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<f64>().ok());
            assert_eq!(sample.meminfo.get("MemFree"), free, "snapshot {read}");
            read += 1;
        }
        assert_eq!(read, 20);
    }
}
