//! "Did you mean" for misspelt names. A suggestion is only offered when it
//! is close enough to be plausible, so it is never silly.

use super::diagnostic::DiagnosticCode;

/// Edit distance (insertions, deletions, substitutions; a swap of two
/// neighbours counts once) between two names. Names are short, so the
/// usual ones are compared on the stack: `check` asks this for every
/// variable of a file, and 100,000 variables must not cost 100,000s of
/// allocations.
pub fn distance(a: &str, b: &str) -> usize {
    const SHORT: usize = 32;
    let (a_len, b_len) = (a.chars().count(), b.chars().count());
    if a_len <= SHORT && b_len <= SHORT {
        let mut a_chars = ['\0'; SHORT];
        let mut b_chars = ['\0'; SHORT];
        a_chars
            .iter_mut()
            .zip(a.chars())
            .for_each(|(slot, c)| *slot = c);
        b_chars
            .iter_mut()
            .zip(b.chars())
            .for_each(|(slot, c)| *slot = c);
        let mut rows = [[0usize; SHORT + 1]; 3];
        let [r0, r1, r2] = &mut rows;
        return table(&a_chars[..a_len], &b_chars[..b_len], [r0, r1, r2]);
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; 3];
    let [r0, r1, r2] = &mut rows[..] else {
        return a.len().max(b.len());
    };
    table(&a, &b, [r0, r1, r2])
}

/// The dynamic-programming table of [`distance`], two rows back kept for
/// the swap; each row holds at least `b.len() + 1` cells.
fn table(a: &[char], b: &[char], rows: [&mut [usize]; 3]) -> usize {
    let [mut prev2, mut prev, mut cur] = rows;
    for (j, cell) in prev.iter_mut().enumerate().take(b.len() + 1) {
        *cell = j;
    }
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
    closest(word, candidates, || true)
}

/// [`best_match`], comparing only while `charge` allows one more
/// candidate; `None` once it does not.
fn closest<'a, I>(word: &str, candidates: I, mut charge: impl FnMut() -> bool) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let length = word.chars().count();
    let limit = (length / 3).max(1);
    let lower = word.to_ascii_lowercase();
    let mut best: Option<(usize, &'a str)> = None;
    for c in candidates {
        if !charge() {
            return None;
        }
        if c == word {
            continue;
        }
        // Lengths further apart than the limit are further apart in edits
        // too (and a case-only difference keeps the length).
        if c.chars().count().abs_diff(length) > limit {
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

/// How many candidates "did you mean" compares in one file at most: a file
/// of 10,000 unknown names beside 10,000 variables asked for 10^8 edit
/// distances (15 s). Past it, names get no suggestion and the file one
/// finding that says so ([`Budget::finding`]).
pub const COMPARISONS: usize = 1_000_000;

/// The comparisons left for one file's suggestions ([`COMPARISONS`]).
#[derive(Debug)]
pub struct Budget {
    left: std::cell::Cell<usize>,
    stopped: std::cell::Cell<bool>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            left: std::cell::Cell::new(COMPARISONS),
            stopped: std::cell::Cell::new(false),
        }
    }
}

impl Budget {
    /// [`best_match`] within what is left; `None` once it is spent.
    pub fn best_match<'a, I>(&self, word: &str, candidates: I) -> Option<&'a str>
    where
        I: IntoIterator<Item = &'a str>,
    {
        closest(word, candidates, || match self.left.get() {
            0 => {
                self.stopped.set(true);
                false
            }
            n => {
                self.left.set(n - 1);
                true
            }
        })
    }

    /// The finding that says suggestions stopped, once they did.
    pub fn finding(&self) -> Option<super::Diagnostic> {
        self.stopped.get().then(|| {
            super::Diagnostic::warning(
                DiagnosticCode::SuggestionsStopped,
                super::Span::FILE,
                format!(
                    "stopped looking for similar names after {COMPARISONS} comparisons: the names found unknown after that have no \"did you mean\""
                ),
            )
        })
    }
}

/// The rule or setting a variable's name most likely meant (`HOTPLGU` for
/// HOTPLUG, `CPUMAX` for CPU_MAX). cpuplugd takes such a line for a user
/// variable and leaves the rule unset, so a typo here silently turns a group
/// off. Only names one edit away (two for long ones) count.
pub fn misspelt_keyword(name: &str) -> Option<&'static str> {
    const KEYWORDS: [&str; 11] = super::expr::FILE_NAMES;
    // An edit adds at most one letter that the two names share, so a
    // keyword sharing fewer than all but two of its letters with the name
    // is more than two edits away: most variables of a long file are
    // told apart by that count, without the distance's table.
    let length = name.chars().count();
    let mut letters = [0u16; 128];
    for b in name.bytes().filter(u8::is_ascii) {
        let slot = &mut letters[usize::from(b.to_ascii_uppercase())];
        *slot = slot.saturating_add(1);
    }
    let near = |k: &str| {
        let mut left = letters;
        let shared = k
            .bytes()
            .filter(|b| {
                let slot = &mut left[usize::from(*b)];
                let had = *slot > 0;
                *slot = slot.saturating_sub(1);
                had
            })
            .count();
        k.len().max(length) - shared <= 2
    };
    if !KEYWORDS.iter().any(|k| near(k)) {
        return None;
    }
    let upper = name.to_ascii_uppercase();
    KEYWORDS
        .iter()
        .filter(|k| near(k))
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

    /// The textbook table, allocated afresh: what `distance` must equal.
    fn reference(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        for (j, cell) in d[0].iter_mut().enumerate() {
            *cell = j;
        }
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                let mut v = (d[i - 1][j] + 1)
                    .min(d[i][j - 1] + 1)
                    .min(d[i - 1][j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    v = v.min(d[i - 2][j - 2] + 1);
                }
                d[i][j] = v;
            }
        }
        d[a.len()][b.len()]
    }

    #[test]
    fn distance_on_the_stack_and_off_it_is_the_edit_distance() {
        let long = "x".repeat(33);
        let words = [
            "",
            "a",
            "ab",
            "ba",
            "HOTPLUG",
            "HOTPLGU",
            "hotplug",
            "CPU_MAX",
            "CPUMAX",
            "é",
            "éa",
            "aé",
            "漢字",
            "字漢",
            "UPDATE",
            "v12345",
            long.as_str(),
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxy",
            "yxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "abcdefghijklmnopqrstuvwxyz0123456789",
        ];
        for a in words {
            for b in words {
                assert_eq!(distance(a, b), reference(a, b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn misspelt_keywords_are_found_whatever_the_length_filter_skips() {
        assert_eq!(misspelt_keyword("HOTPLGU"), Some("HOTPLUG"));
        assert_eq!(misspelt_keyword("cpumax"), Some("CPU_MAX"));
        assert_eq!(misspelt_keyword("UPDAT"), Some("UPDATE"));
        assert_eq!(misspelt_keyword("HOTUNPLUGGG"), Some("HOTUNPLUG"));
        assert_eq!(misspelt_keyword("v1"), None);
        assert_eq!(misspelt_keyword("v12345"), None);
        assert_eq!(misspelt_keyword(&"H".repeat(5000)), None);
        assert_eq!(
            misspelt_keyword("XHOTUNPLUGY"),
            Some("HOTUNPLUG"),
            "two edits"
        );
        assert_eq!(
            misspelt_keyword("CMM_ÍNC"),
            Some("CMM_INC"),
            "one non-ASCII letter"
        );
        assert_eq!(misspelt_keyword("CMMINCÉÉ"), None, "three edits");
    }

    #[test]
    fn close_names_are_suggested_and_far_ones_not() {
        let names = ["loadavg", "onumcpus", "idle"];
        assert_eq!(best_match("onumcpu", names), Some("onumcpus"));
        assert_eq!(best_match("LOADAVG", names), Some("loadavg"));
        assert_eq!(best_match("laodavg", names), Some("loadavg"));
        assert_eq!(best_match("pgscanrate", names), None);
    }

    #[test]
    fn a_spent_budget_suggests_nothing_and_says_so() {
        let budget = Budget::default();
        let many: Vec<String> = (0..COMPARISONS).map(|i| format!("v{i}")).collect();
        assert_eq!(
            budget.best_match("v00", many.iter().map(String::as_str)),
            Some("v0")
        );
        assert!(budget.finding().is_none());
        assert_eq!(budget.best_match("idel", ["idle"]), None);
        assert!(budget.finding().is_some());
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
