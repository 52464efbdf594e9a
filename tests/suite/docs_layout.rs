//! The contributor map in docs/architecture.md ("Where things are") names
//! every top-level entry of `src/`: a module added without a line there
//! fails here, so the map cannot go stale the way the README's did.

#[test]
fn every_top_level_entry_of_src_is_on_the_map() {
    let map = std::fs::read_to_string("docs/architecture.md").expect("docs/architecture.md");
    let map = map
        .split_once("## Where things are")
        .map(|(_, m)| m)
        .expect("a \"Where things are\" section");
    let mut missing = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir("src").expect("src") {
        let entry = entry.expect("an entry of src");
        let name = entry.file_name().to_string_lossy().into_owned();
        let shown = if entry.path().is_dir() {
            format!("src/{name}/")
        } else {
            format!("src/{name}")
        };
        seen += 1;
        if !map.contains(&shown) {
            missing.push(shown);
        }
    }
    assert!(seen > 10, "src/ has only {seen} entries");
    assert!(
        missing.is_empty(),
        "not on docs/architecture.md's map: {missing:?}"
    );
}

/// nu53 M5: a replay's log says "would unplug a CPU" (it has no /sys to
/// choose a CPU from), where the docs promised "would unplug cpu3" without
/// saying when. The words a replay logs, and the docs saying when a CPU is
/// named.
#[test]
fn the_docs_say_when_a_would_line_names_its_cpu() {
    use plugtop::control::controller::{Action, Event};
    let blind = Event::Would {
        action: Action::UnplugCpu,
        cpu: None,
        why: "HOTUNPLUG true".into(),
    };
    assert_eq!(blind.to_string(), "would unplug a CPU (HOTUNPLUG true)");
    for doc in ["docs/run.md", "docs/screen.md"] {
        let text = std::fs::read_to_string(doc)
            .expect("doc")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(text.contains("would unplug a CPU"), "{doc}");
        assert!(
            text.contains("a replay has no /sys") || text.contains("has no /sys to choose"),
            "{doc}"
        );
    }
}
