//! `plugtop fleet` with 1,000 guests: a refresh's answer taken in (rows
//! ranked, sorted, drift grouped) and one frame drawn, at 80×24 and
//! 160×48 — issue 29's "1,000 guests render in under 10 ms".
//!
//! Run: `cargo bench --bench fleet_render`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use plugtop::fleet::app::FleetApp;
use plugtop::fleet::model::{Fleet, FleetGuest, Health};
use plugtop::fleet::table;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const AT: f64 = 1_700_000_000.0;

/// 1,000 guests as a refresh brings them: some flap, fault, stopped.
fn fleet() -> Fleet {
    let guests = (0..1000u32)
        .map(|i| FleetGuest {
            job: "plugtop".into(),
            instance: format!("guest{i:04}.example:9866"),
            zvm_name: format!("LNX{i:04}"),
            system: format!("LPAR{}", i % 8),
            online: Some(f64::from(i % 4 + 1)),
            present: Some(4.0),
            cpu_max: Some(4.0),
            online_history: (0..60).map(|k| f64::from((i + k) % 4 + 1)).collect(),
            pool_pages: Some(f64::from(i * 97 % 262_144)),
            pool_max_pages: Some(262_144.0),
            mode: Some("auto".into()),
            flapping: i % 25 == 0,
            flap_period: (i % 25 == 0).then_some(6.0),
            faulting: if i % 40 == 3 {
                vec!["HOTPLUG".into()]
            } else {
                Vec::new()
            },
            faulted: if i % 40 == 3 {
                vec!["HOTPLUG".into()]
            } else {
                Vec::new()
            },
            fault_counts: Vec::new(),
            readings_in_window: None,
            recent_fault_counts: Vec::new(),
            readings_recently: None,
            actions_per_hour: Some(f64::from(i % 7)),
            last_reading: Some(if i % 100 == 99 { AT - 3600.0 } else { AT - 1.0 }),
            update: Some(1.0),
            rules_file: Some("/etc/cpuplugd.conf".into()),
            rules_crc: Some(if i % 33 == 7 { "0badf00d" } else { "1234abcd" }.into()),
            wants_cpu: i % 3 == 0,
            wants_pool: false,
            last_change: None,
            last_change_at: 0.0,
            duplicated: false,
            gone: false,
        })
        .collect();
    Fleet {
        guests,
        at: AT,
        health: Health {
            queries: 17,
            ..Health::default()
        },
    }
}

fn bench(c: &mut Criterion) {
    let fleet = fleet();
    let mut app = FleetApp::new("http://prometheus:9090", 3600.0, 60.0);
    app.on_fleet(fleet.clone(), AT);
    c.bench_function("fleet: take in a refresh of 1000 guests", |b| {
        b.iter(|| {
            let mut a = FleetApp::new("http://prometheus:9090", 3600.0, 60.0);
            a.on_fleet(black_box(fleet.clone()), AT);
            black_box(a.rows.len())
        })
    });
    for (w, h) in [(80u16, 24u16), (160, 48)] {
        let mut terminal = match Terminal::new(TestBackend::new(w, h)) {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        };
        c.bench_function(&format!("fleet: draw 1000 guests at {w}x{h}"), |b| {
            b.iter(|| {
                let _ = terminal.draw(|f| table::draw(f, black_box(&app)));
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
