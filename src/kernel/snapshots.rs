//! A directory of numbered snapshot directories (the conformance format):
//! each one a root with proc/, sys/ and a `time` file.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use super::SystemFacts;
use super::procfs_text::parse_time;
use super::root::RootReader;
use super::sample::Sample;
use super::source::{Interest, Source, SourceError};

/// Replays snapshot directories in name order.
#[derive(Debug)]
pub struct SnapshotSource {
    base: PathBuf,
    /// The snapshots' names, sorted (paths are built when read: a series
    /// can be long, and a path per snapshot costs as much as reading one).
    names: Vec<OsString>,
    next: usize,
    /// The snapshot being read, built in place.
    dir: PathBuf,
    reader: RootReader,
}

impl SnapshotSource {
    /// Lists the snapshots under `dir` (sub-directories, sorted by name).
    pub fn open(dir: &Path) -> Result<Self, SourceError> {
        let entries = fs::read_dir(dir).map_err(|source| SourceError::Open {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut names: Vec<OsString> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.file_name())
            .collect();
        names.sort_unstable();
        let mut reader = RootReader::new();
        reader.scan_cpu_dirs = false;
        Ok(SnapshotSource {
            base: dir.to_path_buf(),
            names,
            next: 0,
            dir: PathBuf::new(),
            reader,
        })
    }

    /// The first snapshot's directory, if any.
    pub fn first_dir(&self) -> Option<PathBuf> {
        self.names.first().map(|n| self.base.join(n))
    }

    /// How many snapshots there are.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when the directory holds no snapshot.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Reads the snapshot in `self.dir` (its root opened once for all of
    /// its files, `time` included).
    fn read(&mut self) -> Result<Sample, SourceError> {
        let dir = &self.dir;
        self.reader.read_timed(dir, |text| {
            parse_time(text).ok_or_else(|| SourceError::Malformed {
                path: dir.join("time"),
                what: "expected SEC or SEC.FRACTION".into(),
            })
        })
    }
}

impl Source for SnapshotSource {
    fn facts(&mut self) -> SystemFacts {
        match self.first_dir() {
            Some(first) => self.reader.facts(&first),
            None => SystemFacts {
                present_cpus: Err(crate::kernel::PresentCpusError::NoSnapshots),
                cmm_pages: false,
                zvm_guest: None,
                meminfo_names: None,
                vmstat_names: None,
                origin: "the snapshots".into(),
                history: None,
            },
        }
    }

    fn narrow(&mut self, interest: &Interest) {
        self.reader.narrow(interest);
    }

    fn next_sample(&mut self) -> Option<Result<Sample, SourceError>> {
        let name = self.names.get(self.next)?;
        self.next += 1;
        self.dir.as_mut_os_string().clear();
        self.dir.push(&self.base);
        self.dir.push(name);
        Some(self.read())
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
