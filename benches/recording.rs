//! Costs of the recording path: reading one Sample from a root, and
//! encoding and decoding one record.
//!
//! Run: `cargo bench --bench recording`

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use plugtop::kernel::Source;
use plugtop::kernel::recording::codec::{Decoder, Encoder};
use plugtop::kernel::root::RootReader;
use plugtop::kernel::snapshots::SnapshotSource;
use plugtop::kernel::{Sample, Stamp};

fn samples() -> Vec<Sample> {
    let mut source = match SnapshotSource::open(Path::new("tests/fixtures/series/oldkernel")) {
        Ok(s) => s,
        Err(e) => panic!("benchmark snapshots: {e}"),
    };
    let mut out = Vec::new();
    while let Some(Ok(s)) = source.next_sample() {
        out.push(s);
    }
    out
}

/// Splits framed records: (kind, payload) pairs.
fn frames(bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let kind = bytes[pos];
        let mut len = 0usize;
        let mut shift = 0;
        let mut i = pos + 1;
        loop {
            let b = bytes[i];
            len |= usize::from(b & 0x7f) << shift;
            i += 1;
            if b < 0x80 {
                break;
            }
            shift += 7;
        }
        out.push((kind, bytes[i..i + len].to_vec()));
        pos = i + len + 4;
    }
    out
}

fn bench(c: &mut Criterion) {
    let mut reader = RootReader::new();
    let root = Path::new("tests/fixtures/roots/newkernel");
    c.bench_function("read/sample/fixture-root", |b| {
        b.iter(|| black_box(reader.read(root, Stamp::default())))
    });
    let mut live = RootReader::new();
    c.bench_function("read/sample/this-machine", |b| {
        b.iter(|| black_box(live.read(Path::new("/"), Stamp::default())))
    });

    let series = samples();
    let mut encoder = Encoder::new();
    let mut buf = Vec::with_capacity(4096);
    encoder.encode(&series[0], &mut buf);
    let mut i = 1;
    c.bench_function("record/encode", |b| {
        b.iter(|| {
            buf.clear();
            encoder.encode(&series[i % series.len()], &mut buf);
            i += 1;
            black_box(buf.len())
        })
    });

    let mut encoder = Encoder::new();
    let mut stream = Vec::new();
    for s in series.iter().cycle().take(1000) {
        encoder.encode(s, &mut stream);
    }
    let records = frames(&stream);
    let sample_records = records.iter().filter(|(k, _)| *k == 3).count();
    eprintln!(
        "{} bytes for {sample_records} samples: {:.0} bytes per sample (old-kernel series, 4 CPUs)",
        stream.len(),
        stream.len() as f64 / sample_records as f64
    );
    c.bench_function("record/decode-1000-samples", |b| {
        b.iter(|| {
            let mut decoder = Decoder::new();
            let mut n = 0;
            for (kind, payload) in &records {
                if let Ok(Some(s)) = decoder.decode(*kind, payload) {
                    n += s.per_cpu.len();
                }
            }
            black_box(n)
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
