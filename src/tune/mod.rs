//! `plugtop tune` (issue 14, in progress): searching a rule file's
//! thresholds against a workload. So far: finding the knobs and writing a
//! tuned file that changes only them.

pub mod knobs;
