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
