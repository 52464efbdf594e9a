//! The /proc and /sys text parsers on any bytes: /proc/stat, loadavg,
//! meminfo and vmstat (twice, so the remembered layout is tried), CPU
//! lists, integers, the uptime stamp and cpuinfo.
#![no_main]

use libfuzzer_sys::fuzz_target;
use plugtop::kernel::cpulist::CpuList;
use plugtop::kernel::fields::FieldParser;
use plugtop::kernel::machine::is_zvm_guest;
use plugtop::kernel::procfs_text::{parse_loadavg, parse_long, parse_stat, parse_time};

fuzz_target!(|data: &[u8]| {
    let _ = parse_stat(data, true);
    let _ = parse_loadavg(data);
    let _ = parse_time(data);
    let _ = parse_long(data);
    if let Some(list) = CpuList::parse(data) {
        assert!(list.ids.len() <= plugtop::kernel::cpulist::MAX_CPUS as usize);
        let _ = list.exact();
    }
    let _ = is_zvm_guest(data);
    for separator in [b':', b' '] {
        let mut parser = FieldParser::new(separator);
        let _ = parser.parse(data);
        let _ = parser.parse(data);
    }
});
