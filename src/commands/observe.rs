//! The built-in rules `plugtop` observes with when no rule file is named:
//! the seed paper's recommended file, in the variant the kernel can run.

use crate::rules::{SourceFile, SystemFacts};

/// The white paper's recommended rules, for kernels with per-zone counters.
pub const RECOMMENDED: &str = include_str!("../../examples/rules/recommended-default.conf");
/// The same rules for kernels 4.8 and later.
pub const RECOMMENDED_MODERN: &str = include_str!("../../examples/rules/recommended-modern.conf");

/// The built-in rules that fit the kernel `facts` describes: the paper's
/// own file where its `vmstat` names exist, else the modern variant.
pub fn built_in_rules(facts: &SystemFacts) -> SourceFile {
    let old_names = facts
        .vmstat_names
        .as_ref()
        .is_some_and(|names| names.iter().any(|n| n == "pgscan_direct_dma"));
    if old_names {
        SourceFile::new(
            "built-in recommended-default.conf",
            RECOMMENDED.as_bytes().to_vec(),
        )
    } else {
        SourceFile::new(
            "built-in recommended-modern.conf",
            RECOMMENDED_MODERN.as_bytes().to_vec(),
        )
    }
}
