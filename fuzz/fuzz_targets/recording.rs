//! The recording decoder on any bytes, and on a real recording with the
//! fuzzer's bytes spliced in after its header: every sample it yields is
//! replayed to the end.
#![no_main]

use libfuzzer_sys::fuzz_target;
use plugtop::kernel::recording::RecordingSource;
use plugtop::kernel::source::Source;

fn replay(bytes: Vec<u8>) {
    if let Ok(mut source) = RecordingSource::from_bytes("fuzz.rec", bytes) {
        let _ = source.header();
        let mut count = 0u32;
        while let Some(next) = source.next_sample() {
            if next.is_err() || count > 100_000 {
                break;
            }
            count += 1;
        }
        let _ = source.warning();
    }
}

fuzz_target!(|data: &[u8]| {
    replay(data.to_vec());
    // The same bytes after a valid magic and version, so the fuzzer reaches
    // the frames without having to find the magic first.
    let mut framed = plugtop::kernel::recording::MAGIC.to_vec();
    framed.extend_from_slice(&plugtop::kernel::recording::VERSION.to_le_bytes());
    framed.extend_from_slice(data);
    replay(framed);
});
