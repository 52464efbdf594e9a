//! The kernel side: what one interval's readings look like ([`Sample`]),
//! how /proc and /sys text becomes one, and where samples come from.

pub mod actuator;
mod bytes;
pub mod claimed_dir;
pub mod cpu_choice;
pub mod cpu_dir;
pub mod cpulist;
pub mod deltas;
pub mod facts;
pub mod fields;
pub mod fs;
pub mod integer;
pub mod live;
pub mod loadavg;
pub mod machine;
pub mod processes;
pub mod procfs_text;
mod read_buffer;
pub mod recording;
pub mod root;
pub mod root_file;
pub mod sample;
pub mod snapshots;
pub mod source;
pub mod tasks;

pub use facts::{PresentCpusError, SystemFacts};
pub use sample::{CpuState, CpuTicks, Polarization, ProcBytes, Sample, Stamp};
pub use source::{Interest, Source, SourceError};
