//! The cpuplugd rule language: reading a rule file line by line exactly as the
//! daemon does, parsing expressions (grammar in `grammar/cpuplugd.pest`),
//! evaluating them with cpuplugd's floating-point fault rules, and explaining
//! problems as diagnostics that point at the user's own text.

pub mod config;
pub mod diagnostic;
pub mod eval;
pub mod expr;
pub mod fpu;
pub mod lint;
pub mod number;
pub mod parser;
pub mod print;
pub mod render;
pub mod source;
pub mod suggest;

pub use config::{LoadOutcome, RuleSet, Settings, SystemFacts, load};
pub use diagnostic::{Diagnostic, Severity};
pub use eval::{Evaluator, Outcome, Stop, Trace};
pub use expr::{NodeId, RuleKind};
pub use source::{SourceFile, Span};
