//! The sources' identity, `PLUGTOP_SOURCES`: a hash of every file that
//! `plugtop` and `plugtop-run` are built from. `plugtop run` hands the run
//! over to a `plugtop-run` beside it only when that one was built from the
//! same sources (src/cli/run_exe.rs): `cargo run` and `cargo build --bin
//! plugtop` build `plugtop` alone and would otherwise leave an older
//! daemon to act on the guest. A hash of the contents, not a time: the
//! same sources give the same binaries.

use std::hash::{DefaultHasher, Hasher};
use std::path::Path;

fn main() -> std::io::Result<()> {
    let mut hash = DefaultHasher::new();
    for dir in ["src", "grammar"] {
        add_dir(Path::new(dir), &mut hash)?;
        println!("cargo:rerun-if-changed={dir}");
    }
    for file in ["Cargo.toml", "Cargo.lock", "build.rs"] {
        add_file(Path::new(file), &mut hash)?;
        println!("cargo:rerun-if-changed={file}");
    }
    println!("cargo:rustc-env=PLUGTOP_SOURCES={:016x}", hash.finish());
    Ok(())
}

/// Every file below `dir`, in name order, its path and its bytes.
fn add_dir(dir: &Path, hash: &mut DefaultHasher) -> std::io::Result<()> {
    let mut entries = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<Vec<_>>>()?;
    entries.sort();
    for path in entries {
        if std::fs::symlink_metadata(&path)?.is_dir() {
            add_dir(&path, hash)?;
        } else {
            add_file(&path, hash)?;
        }
    }
    Ok(())
}

fn add_file(path: &Path, hash: &mut DefaultHasher) -> std::io::Result<()> {
    hash.write(path.as_os_str().as_encoded_bytes());
    hash.write(&std::fs::read(path)?);
    Ok(())
}
