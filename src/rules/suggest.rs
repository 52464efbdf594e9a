//! "Did you mean" for misspelt names. A suggestion is only offered when it
//! is close enough to be plausible, so it is never silly.

/// Edit distance (insertions, deletions, substitutions; a swap of two
/// neighbours counts once) between two names.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev2: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The closest candidate to `word`, if it is close enough: case-only
/// differences always qualify, otherwise at most a third of the word may
/// differ. Ties go to the earlier candidate.
pub fn best_match<'a, I>(word: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let limit = (word.chars().count() / 3).max(1);
    let lower = word.to_ascii_lowercase();
    let mut best: Option<(usize, &'a str)> = None;
    for c in candidates {
        if c == word {
            continue;
        }
        let d = if c.to_ascii_lowercase() == lower {
            0
        } else {
            distance(word, c)
        };
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// The rule or setting a variable's name most likely meant (`HOTPLGU` for
/// HOTPLUG, `CPUMAX` for CPU_MAX). cpuplugd takes such a line for a user
/// variable and leaves the rule unset, so a typo here silently turns a group
/// off. Only names one edit away (two for long ones) count.
pub fn misspelt_keyword(name: &str) -> Option<&'static str> {
    const KEYWORDS: [&str; 11] = [
        "HOTPLUG",
        "HOTUNPLUG",
        "MEMPLUG",
        "MEMUNPLUG",
        "CMM_INC",
        "CMM_DEC",
        "UPDATE",
        "CPU_MIN",
        "CPU_MAX",
        "CMM_MIN",
        "CMM_MAX",
    ];
    let upper = name.to_ascii_uppercase();
    KEYWORDS
        .iter()
        .map(|k| (distance(&upper, k), *k))
        .filter(|(d, k)| *d == 1 || (*d == 2 && k.len() >= 8))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// What newer kernels call the zone-suffixed counters that old rule files
/// (and the white paper) use. Since Linux 4.8 the per-zone scan and steal
/// counters were merged into one per reclaim path.
pub fn renamed_vmstat(name: &str) -> Option<&'static str> {
    if name == "kswapd_steal" {
        return Some("pgsteal_kswapd");
    }
    const ZONES: [&str; 5] = ["_dma32", "_dma", "_normal", "_movable", "_high"];
    let base = ZONES.iter().find_map(|z| name.strip_suffix(z))?;
    match base {
        "pgscan_kswapd" => Some("pgscan_kswapd"),
        "pgscan_direct" => Some("pgscan_direct"),
        "pgsteal_kswapd" | "pgsteal" => Some("pgsteal_kswapd"),
        "pgsteal_direct" => Some("pgsteal_direct"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_suggested_and_far_ones_not() {
        let names = ["loadavg", "onumcpus", "idle"];
        assert_eq!(best_match("onumcpu", names), Some("onumcpus"));
        assert_eq!(best_match("LOADAVG", names), Some("loadavg"));
        assert_eq!(best_match("laodavg", names), Some("loadavg"));
        assert_eq!(best_match("pgscanrate", names), None);
    }

    #[test]
    fn zone_counters_map_to_their_merged_names() {
        assert_eq!(renamed_vmstat("pgscan_direct_dma"), Some("pgscan_direct"));
        assert_eq!(
            renamed_vmstat("pgscan_kswapd_movable"),
            Some("pgscan_kswapd")
        );
        assert_eq!(renamed_vmstat("pgsteal_normal"), Some("pgsteal_kswapd"));
        assert_eq!(renamed_vmstat("pgpgin"), None);
    }
}
