//! Formatting what the engine decided: JSON lines for machines (the
//! conformance format) and a readable table for people.

pub mod flips;
pub mod jsonl;
pub mod table;
pub mod trace;
