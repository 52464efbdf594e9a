//! `plugtop fleet`: every guest's plugtop as the site's Prometheus holds
//! it (plugtop never scrapes the guests itself). [`query`] talks to the
//! HTTP API and distrusts every answer, [`fetch`] asks the fixed queries of
//! a refresh and builds the rows of [`model`] (trouble ranking, sorting,
//! rule-file drift — pure), [`format`] gives the cells both the screen
//! ([`table`], [`detail`], driven by [`app`] and [`screen`]) and
//! [`batch`] print; [`diff`] compares two guests' rule files.

pub mod app;
pub mod batch;
pub mod detail;
pub mod diff;
pub mod fetch;
pub mod format;
pub mod help;
pub mod model;
pub mod query;
pub mod screen;
pub mod table;

/// When the fleet screen or batch cannot start; each says what to fix.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error(transparent)]
    Query(#[from] query::QueryError),
    #[error("none of the {queries} queries was answered: {first}")]
    Down { queries: usize, first: String },
    #[error("the terminal")]
    Terminal(#[from] std::io::Error),
}
