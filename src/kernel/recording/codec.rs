//! Samples as compact records. A record carries only what changed since the
//! previous sample: counters as zigzag varint deltas, /proc tables as a
//! bitmap of changed fields plus their deltas, CPU lists and sysfs state
//! only when they change, field names only when the kernel's layout changes.
//! See docs/recording.md for the byte layout.

use std::sync::Arc;

use super::varint::{Cursor, Truncated, put_i64, put_u64};
use crate::kernel::cpulist::CpuList;
use crate::kernel::fields::{FieldTable, Layout};
use crate::kernel::{CpuState, CpuTicks, Polarization, ProcBytes, Sample, Stamp};

/// Record kinds.
pub const KIND_MEMINFO_LAYOUT: u8 = 1;
/// The most lines a /proc table plugtop reads can have (each at least a
/// name and a newline, within the largest file it reads).
const MOST_LAYOUT_NAMES: usize = crate::kernel::read_buffer::FILE_LIMIT / 2;

/// The names of /proc/vmstat's lines.
pub const KIND_VMSTAT_LAYOUT: u8 = 2;
/// One sample.
pub const KIND_SAMPLE: u8 = 3;

const ONLINE_CHANGED: u64 = 1;
const PRESENT_CHANGED: u64 = 1 << 1;
const CPUS_CHANGED: u64 = 1 << 2;
const HAS_CMM: u64 = 1 << 3;
const POLARIZATION_CHANGED: u64 = 1 << 4;
const MEMINFO_RAW: u64 = 1 << 5;
const VMSTAT_RAW: u64 = 1 << 6;
const POSSIBLE_CHANGED: u64 = 1 << 7;
/// The byte lengths of meminfo and vmstat follow (added after the first
/// release; files without it read as lengths not known).
const PROC_BYTES_CHANGED: u64 = 1 << 8;

/// Appends one framed record: kind, varint length, payload, CRC32 of all three.
pub fn frame(out: &mut Vec<u8>, kind: u8, payload: &[u8]) {
    let start = out.len();
    out.push(kind);
    put_u64(out, payload.len() as u64);
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// Turns samples into records, remembering the previous one.
#[derive(Debug, Default)]
pub struct Encoder {
    prev: Option<Sample>,
    /// The previous sample's numbers, read once (tables keep their text).
    prev_meminfo: Vec<f64>,
    prev_vmstat: Vec<f64>,
    meminfo_layout: Option<u64>,
    vmstat_layout: Option<u64>,
    payload: Vec<u8>,
}

impl Encoder {
    /// A fresh encoder (the first sample is encoded against zeros).
    pub fn new() -> Self {
        Encoder::default()
    }

    /// Appends the records for `sample` (layouts first when they changed).
    pub fn encode(&mut self, sample: &Sample, out: &mut Vec<u8>) {
        let mut meminfo_base = true;
        let mut vmstat_base = true;
        if self.meminfo_layout != Some(sample.meminfo.layout().id()) {
            self.layout(out, KIND_MEMINFO_LAYOUT, sample.meminfo.layout());
            self.meminfo_layout = Some(sample.meminfo.layout().id());
            meminfo_base = false;
        }
        if self.vmstat_layout != Some(sample.vmstat.layout().id()) {
            self.layout(out, KIND_VMSTAT_LAYOUT, sample.vmstat.layout());
            self.vmstat_layout = Some(sample.vmstat.layout().id());
            vmstat_base = false;
        }
        let mut p = std::mem::take(&mut self.payload);
        p.clear();
        let prev = self.prev.as_ref();
        let meminfo_now = sample.meminfo.values();
        let vmstat_now = sample.vmstat.values();
        let meminfo_raw = !all_integral(&meminfo_now);
        let vmstat_raw = !all_integral(&vmstat_now);
        let flags = flags_for(sample, prev, meminfo_raw, vmstat_raw);
        put_u64(&mut p, flags);
        put_i64(
            &mut p,
            sample
                .stamp
                .micros
                .wrapping_sub(prev.map_or(0, |p| p.stamp.micros)),
        );
        ticks(&mut p, &sample.ticks, prev.map(|p| &p.ticks));
        put_u64(&mut p, sample.per_cpu.len() as u64);
        let mut last_id = 0i64;
        let mut earlier = PreviousTicks::new(prev);
        for (at, (id, t)) in sample.per_cpu.iter().enumerate() {
            put_i64(&mut p, i64::from(*id) - last_id);
            last_id = i64::from(*id);
            ticks(&mut p, t, earlier.of(at, *id));
        }
        number(&mut p, sample.loadavg, prev.map(|p| p.loadavg));
        number(&mut p, sample.runnable, prev.map(|p| p.runnable));
        let meminfo_before = prev
            .filter(|_| meminfo_base)
            .map(|_| self.prev_meminfo.as_slice());
        let vmstat_before = prev
            .filter(|_| vmstat_base)
            .map(|_| self.prev_vmstat.as_slice());
        table(&mut p, &meminfo_now, meminfo_before, meminfo_raw);
        table(&mut p, &vmstat_now, vmstat_before, vmstat_raw);
        if flags & ONLINE_CHANGED != 0 {
            cpu_list(&mut p, &sample.online);
        }
        if flags & PRESENT_CHANGED != 0 {
            cpu_list(&mut p, &sample.present);
        }
        if flags & POSSIBLE_CHANGED != 0 {
            match &sample.possible {
                Some(list) => {
                    p.push(1);
                    cpu_list(&mut p, list);
                }
                None => p.push(0),
            }
        }
        if flags & CPUS_CHANGED != 0 {
            put_u64(&mut p, sample.cpus.len() as u64);
            for c in sample.cpus.iter() {
                put_u64(&mut p, u64::from(c.id));
                p.push(flag_code(c.online) | (flag_code(c.configured) << 2));
            }
        }
        if let Some(pages) = sample.cmm_pages {
            let before = prev.and_then(|p| p.cmm_pages).unwrap_or(0);
            put_i64(&mut p, pages.wrapping_sub(before));
        }
        if flags & POLARIZATION_CHANGED != 0 {
            p.push(match sample.polarization {
                None => 0,
                Some(Polarization::Horizontal) => 1,
                Some(Polarization::Vertical) => 2,
            });
        }
        if flags & PROC_BYTES_CHANGED != 0 {
            put_u64(&mut p, u64::from(sample.proc_bytes.meminfo));
            put_u64(&mut p, u64::from(sample.proc_bytes.vmstat));
        }
        frame(out, KIND_SAMPLE, &p);
        self.payload = p;
        self.prev_meminfo.clear();
        self.prev_meminfo.extend_from_slice(&meminfo_now);
        self.prev_vmstat.clear();
        self.prev_vmstat.extend_from_slice(&vmstat_now);
        match &mut self.prev {
            Some(prev) => prev.clone_from(sample),
            None => self.prev = Some(sample.clone()),
        }
    }

    fn layout(&mut self, out: &mut Vec<u8>, kind: u8, layout: &Layout) {
        let mut p = Vec::with_capacity(layout.len() * 16);
        put_u64(&mut p, layout.len() as u64);
        for name in layout.names() {
            super::varint::put_str(&mut p, name);
        }
        frame(out, kind, &p);
    }
}

/// Which optional parts a sample record carries.
fn flags_for(sample: &Sample, prev: Option<&Sample>, meminfo_raw: bool, vmstat_raw: bool) -> u64 {
    let mut flags = 0;
    if prev.is_none_or(|p| p.online != sample.online) {
        flags |= ONLINE_CHANGED;
    }
    if prev.is_none_or(|p| p.present != sample.present) {
        flags |= PRESENT_CHANGED;
    }
    if prev.is_none_or(|p| p.cpus != sample.cpus) {
        flags |= CPUS_CHANGED;
    }
    if prev.is_none_or(|p| p.possible != sample.possible) {
        flags |= POSSIBLE_CHANGED;
    }
    if sample.cmm_pages.is_some() {
        flags |= HAS_CMM;
    }
    if prev.is_none_or(|p| p.polarization != sample.polarization) {
        flags |= POLARIZATION_CHANGED;
    }
    if prev.map_or(ProcBytes::default(), |p| p.proc_bytes) != sample.proc_bytes {
        flags |= PROC_BYTES_CHANGED;
    }
    if meminfo_raw {
        flags |= MEMINFO_RAW;
    }
    if vmstat_raw {
        flags |= VMSTAT_RAW;
    }
    flags
}

/// The previous sample's ticks of a CPU, found in constant time: a CPU's
/// line is usually where it was last time, and a kernel lists CPUs in
/// ascending order, so a 65,536-CPU sample costs no search per CPU. Lines
/// out of order or repeated (a damaged or hand-made file) are indexed once
/// per sample, first line of a CPU winning, as the format has always meant.
struct PreviousTicks<'a> {
    lines: &'a [(u32, CpuTicks)],
    /// Ids strictly ascending: a line at another place is found by bisection.
    ascending: bool,
    /// Built on the first miss when the ids are not ascending.
    index: Option<std::collections::HashMap<u32, usize>>,
}

impl<'a> PreviousTicks<'a> {
    fn new(prev: Option<&'a Sample>) -> Self {
        let lines = prev.map_or(&[][..], |p| p.per_cpu.as_slice());
        PreviousTicks {
            lines,
            ascending: lines.windows(2).all(|w| w[0].0 < w[1].0),
            index: None,
        }
    }

    /// The ticks CPU `id` had, guessing it stood at position `at`.
    fn of(&mut self, at: usize, id: u32) -> Option<&'a CpuTicks> {
        let lines = self.lines;
        let found = if self.ascending {
            match lines.get(at) {
                Some((i, _)) if *i == id => Some(at),
                _ => lines.binary_search_by_key(&id, |(i, _)| *i).ok(),
            }
        } else {
            let index = self.index.get_or_insert_with(|| {
                let mut index = std::collections::HashMap::with_capacity(lines.len());
                for (pos, (i, _)) in lines.iter().enumerate() {
                    index.entry(*i).or_insert(pos);
                }
                index
            });
            index.get(&id).copied()
        };
        found.and_then(|pos| lines.get(pos)).map(|(_, t)| t)
    }
}

fn all_integral(values: &[f64]) -> bool {
    values.iter().all(|v| v.fract() == 0.0 && v.abs() < 9.0e15)
}

fn ticks(p: &mut Vec<u8>, t: &CpuTicks, before: Option<&CpuTicks>) {
    let b = before.map_or([0; 10], CpuTicks::columns);
    for (now, then) in t.columns().iter().zip(b) {
        put_i64(p, now.wrapping_sub(then) as i64);
    }
}

/// 0: unchanged; 1: hundredths, as a delta; 2: the raw bits.
fn number(p: &mut Vec<u8>, v: f64, before: Option<f64>) {
    if before.is_some_and(|b| b.to_bits() == v.to_bits()) {
        p.push(0);
    } else if let Some(h) = hundredths(v) {
        p.push(1);
        put_i64(p, h.wrapping_sub(before.and_then(hundredths).unwrap_or(0)));
    } else {
        p.push(2);
        p.extend_from_slice(&v.to_bits().to_le_bytes());
    }
}

fn hundredths(v: f64) -> Option<i64> {
    let h = (v * 100.0).round();
    (h.abs() < 9.0e15 && h / 100.0 == v).then_some(h as i64)
}

fn table(p: &mut Vec<u8>, values: &[f64], base: Option<&[f64]>, raw: bool) {
    if raw {
        for v in values {
            p.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        return;
    }
    let before = |i: usize| base.and_then(|b| b.get(i)).map_or(0, |v| *v as i64);
    let start = p.len();
    p.resize(start + values.len().div_ceil(8), 0);
    for (i, v) in values.iter().enumerate() {
        if *v as i64 != before(i) {
            p[start + i / 8] |= 1 << (i % 8);
        }
    }
    for (i, v) in values.iter().enumerate() {
        let delta = (*v as i64).wrapping_sub(before(i));
        if delta != 0 {
            put_i64(p, delta);
        }
    }
}

fn cpu_list(p: &mut Vec<u8>, list: &CpuList) {
    // The C int's 32 bits, so a negative count survives (as in v1 files).
    put_u64(p, u64::from(list.count as u32));
    put_u64(p, list.ids.len() as u64);
    let mut last = 0i64;
    for id in list.ids.iter() {
        put_i64(p, i64::from(*id) - last);
        last = i64::from(*id);
    }
}

fn flag_code(v: Option<bool>) -> u8 {
    match v {
        None => 0,
        Some(false) => 1,
        Some(true) => 2,
    }
}

fn flag_value(code: u8) -> Option<bool> {
    match code & 3 {
        1 => Some(false),
        2 => Some(true),
        _ => None,
    }
}

/// Why a record could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The payload ended early or holds an impossible value.
    Malformed(&'static str),
    /// A sample came before the names of its /proc tables.
    NoLayout,
    /// A kind this version does not know.
    UnknownKind(u8),
}

impl From<Truncated> for DecodeError {
    fn from(_: Truncated) -> Self {
        DecodeError::Malformed("payload ends early")
    }
}

/// Turns records back into samples.
#[derive(Debug, Default)]
pub struct Decoder {
    prev: Option<Sample>,
    meminfo: Option<(Arc<Layout>, bool)>,
    vmstat: Option<(Arc<Layout>, bool)>,
}

impl Decoder {
    /// A fresh decoder.
    pub fn new() -> Self {
        Decoder::default()
    }

    /// Decodes one record; `Some` for a sample, `None` for a layout.
    pub fn decode(&mut self, kind: u8, payload: &[u8]) -> Result<Option<Sample>, DecodeError> {
        let mut c = Cursor::new(payload);
        match kind {
            KIND_MEMINFO_LAYOUT | KIND_VMSTAT_LAYOUT => {
                let n =
                    usize::try_from(c.u64()?).map_err(|_| DecodeError::Malformed("layout size"))?;
                // No more names than a kernel table plugtop reads can have
                // lines: a record of millions of empty names would make a
                // few megabytes of recording cost gigabytes.
                if n > payload.len() || n > MOST_LAYOUT_NAMES {
                    return Err(DecodeError::Malformed("layout size"));
                }
                let mut names = Vec::with_capacity(n);
                for _ in 0..n {
                    names.push(Box::from(c.string()?.as_str()));
                }
                let layout = Some((Arc::new(Layout::new(names)), true));
                if kind == KIND_MEMINFO_LAYOUT {
                    self.meminfo = layout;
                } else {
                    self.vmstat = layout;
                }
                Ok(None)
            }
            KIND_SAMPLE => self.sample(&mut c).map(Some),
            other => Err(DecodeError::UnknownKind(other)),
        }
    }

    fn sample(&mut self, c: &mut Cursor<'_>) -> Result<Sample, DecodeError> {
        let (Some((meminfo_layout, meminfo_new)), Some((vmstat_layout, vmstat_new))) =
            (self.meminfo.clone(), self.vmstat.clone())
        else {
            return Err(DecodeError::NoLayout);
        };
        let prev = self.prev.as_ref();
        let flags = c.u64()?;
        let stamp = Stamp {
            micros: prev.map_or(0, |p| p.stamp.micros).wrapping_add(c.i64()?),
        };
        let ticks_now = read_ticks(c, prev.map(|p| &p.ticks))?;
        let per_cpu = read_per_cpu(c, prev)?;
        let loadavg = read_number(c, prev.map(|p| p.loadavg))?;
        let runnable = read_number(c, prev.map(|p| p.runnable))?;
        let base = |new: bool, t: Option<&FieldTable>| {
            if new {
                None
            } else {
                t.map(|t| t.values().to_vec())
            }
        };
        let meminfo = read_table(
            c,
            meminfo_layout,
            base(meminfo_new, prev.map(|p| &p.meminfo)),
            flags & MEMINFO_RAW != 0,
        )?;
        let vmstat = read_table(
            c,
            vmstat_layout,
            base(vmstat_new, prev.map(|p| &p.vmstat)),
            flags & VMSTAT_RAW != 0,
        )?;
        let (online, present, possible, cpus) = read_cpu_state(c, prev, flags)?;
        let cmm_pages = if flags & HAS_CMM != 0 {
            Some(
                prev.and_then(|p| p.cmm_pages)
                    .unwrap_or(0)
                    .wrapping_add(c.i64()?),
            )
        } else {
            None
        };
        let polarization = if flags & POLARIZATION_CHANGED != 0 {
            match c.byte()? {
                1 => Some(Polarization::Horizontal),
                2 => Some(Polarization::Vertical),
                _ => None,
            }
        } else {
            prev.and_then(|p| p.polarization)
        };
        let proc_bytes = if flags & PROC_BYTES_CHANGED != 0 {
            ProcBytes {
                meminfo: c.u32()?,
                vmstat: c.u32()?,
            }
        } else {
            prev.map(|p| p.proc_bytes).unwrap_or_default()
        };
        if !c.is_done() {
            return Err(DecodeError::Malformed("bytes left after the sample"));
        }
        if let Some(m) = self.meminfo.as_mut() {
            m.1 = false;
        }
        if let Some(v) = self.vmstat.as_mut() {
            v.1 = false;
        }
        let sample = Sample {
            stamp,
            ticks: ticks_now,
            per_cpu,
            loadavg,
            runnable,
            loadavg_text: None,
            meminfo,
            vmstat,
            online,
            present,
            possible,
            cpus,
            cmm_pages,
            polarization,
            proc_bytes,
        };
        // Into the previous copy's lines: 65,536 CPUs' are 5.7 MB, not to
        // be allocated (and faulted in) anew every sample.
        match &mut self.prev {
            Some(prev) => prev.clone_from(&sample),
            None => self.prev = Some(sample.clone()),
        }
        Ok(sample)
    }
}

/// The `cpuN` tick lines, each against the same CPU's previous ticks.
fn read_per_cpu(
    c: &mut Cursor<'_>,
    prev: Option<&Sample>,
) -> Result<Vec<(u32, CpuTicks)>, DecodeError> {
    let n = read_cpu_count(c, "CPU count")?;
    let mut per_cpu = Vec::with_capacity(n);
    let mut last_id = 0i64;
    let mut earlier = PreviousTicks::new(prev);
    for at in 0..n {
        last_id += c.i64()?;
        let id = u32::try_from(last_id).map_err(|_| DecodeError::Malformed("CPU number"))?;
        per_cpu.push((id, read_ticks(c, earlier.of(at, id))?));
    }
    Ok(per_cpu)
}

/// Online, present and possible CPUs, and the per-CPU states.
type CpuState4 = (
    CpuList,
    CpuList,
    Option<CpuList>,
    std::sync::Arc<[CpuState]>,
);

/// The CPU lists and per-CPU states of a sample: new ones where the flags
/// say they changed, the previous sample's otherwise.
fn read_cpu_state(
    c: &mut Cursor<'_>,
    prev: Option<&Sample>,
    flags: u64,
) -> Result<CpuState4, DecodeError> {
    let online = if flags & ONLINE_CHANGED != 0 {
        read_cpu_list(c)?
    } else {
        prev.map(|p| p.online.clone())
            .ok_or(DecodeError::Malformed("online list missing"))?
    };
    let present = if flags & PRESENT_CHANGED != 0 {
        read_cpu_list(c)?
    } else {
        prev.map(|p| p.present.clone())
            .ok_or(DecodeError::Malformed("present list missing"))?
    };
    let possible = if flags & POSSIBLE_CHANGED != 0 {
        match c.byte()? {
            0 => None,
            _ => Some(read_cpu_list(c)?),
        }
    } else {
        prev.and_then(|p| p.possible.clone())
    };
    let cpus = if flags & CPUS_CHANGED != 0 {
        let n = read_cpu_count(c, "CPU states")?;
        let mut cpus = Vec::with_capacity(n);
        for _ in 0..n {
            let id = c.u32()?;
            let code = c.byte()?;
            cpus.push(CpuState {
                id,
                online: flag_value(code),
                configured: flag_value(code >> 2),
            });
        }
        cpus.into()
    } else {
        prev.map(|p| std::sync::Arc::clone(&p.cpus))
            .unwrap_or_default()
    };
    Ok((online, present, possible, cpus))
}

fn read_ticks(c: &mut Cursor<'_>, before: Option<&CpuTicks>) -> Result<CpuTicks, DecodeError> {
    let b = before.map_or([0; 10], CpuTicks::columns);
    let mut cols = [0u64; 10];
    for (col, then) in cols.iter_mut().zip(b) {
        *col = then.wrapping_add(c.i64()? as u64);
    }
    Ok(CpuTicks::from_columns(cols))
}

fn read_number(c: &mut Cursor<'_>, before: Option<f64>) -> Result<f64, DecodeError> {
    match c.byte()? {
        0 => before.ok_or(DecodeError::Malformed(
            "unchanged number without a previous one",
        )),
        1 => {
            let h = before
                .and_then(hundredths)
                .unwrap_or(0)
                .wrapping_add(c.i64()?);
            Ok(h as f64 / 100.0)
        }
        2 => {
            let bytes: [u8; 8] = c
                .take(8)?
                .try_into()
                .map_err(|_| DecodeError::Malformed("number"))?;
            Ok(f64::from_bits(u64::from_le_bytes(bytes)))
        }
        _ => Err(DecodeError::Malformed("number tag")),
    }
}

fn read_table(
    c: &mut Cursor<'_>,
    layout: Arc<Layout>,
    base: Option<Vec<f64>>,
    raw: bool,
) -> Result<FieldTable, DecodeError> {
    let n = layout.len();
    let mut values = Vec::with_capacity(n);
    if raw {
        for _ in 0..n {
            let bytes: [u8; 8] = c
                .take(8)?
                .try_into()
                .map_err(|_| DecodeError::Malformed("value"))?;
            values.push(f64::from_bits(u64::from_le_bytes(bytes)));
        }
        return Ok(FieldTable::new(layout, values));
    }
    let bitmap = c.take(n.div_ceil(8))?;
    for i in 0..n {
        let before = base
            .as_ref()
            .and_then(|b| b.get(i))
            .map_or(0, |v| *v as i64);
        let changed = bitmap[i / 8] & (1 << (i % 8)) != 0;
        let v = if changed {
            before.wrapping_add(c.i64()?)
        } else {
            before
        };
        values.push(v as f64);
    }
    Ok(FieldTable::new(layout, values))
}

/// A count of CPUs (CPU lines, states or list entries): at most 65,536,
/// so a damaged record cannot make a larger allocation.
fn read_cpu_count(c: &mut Cursor<'_>, what: &'static str) -> Result<usize, DecodeError> {
    usize::try_from(c.u64()?)
        .ok()
        .filter(|n| *n <= 1 << 16)
        .ok_or(DecodeError::Malformed(what))
}

fn read_cpu_list(c: &mut Cursor<'_>) -> Result<CpuList, DecodeError> {
    let count = c.u32()? as i32;
    let n = read_cpu_count(c, "CPU list")?;
    let mut ids = Vec::with_capacity(n);
    let mut last = 0i64;
    for _ in 0..n {
        last += c.i64()?;
        ids.push(u32::try_from(last).map_err(|_| DecodeError::Malformed("CPU number"))?);
    }
    Ok(CpuList {
        ids: ids.into(),
        count,
    })
}
