//! Training sessions: a course of graded exercises on the simulated guest
//! (issue 30). A course file ([`course`]) lists exercises, each a workload,
//! a starting rule file and a goal over the simulator's report written in
//! a small language ([`goal`]); a trainee's file passes when the goal holds
//! on held-out seeds and scenarios ([`judge`], on `plugtop tune`'s runs).
//! Diagnosis exercises ([`diagnose`]) ask which rule and comparison made a
//! recorded guest misbehave. `plugtop train COURSE` is the trainee's
//! screen ([`screen`]), its progress kept in the state directory
//! ([`progress`]); `plugtop train grade` grades a class ([`grade`]).

pub mod course;
pub mod diagnose;
pub mod goal;
pub mod grade;
pub mod judge;
pub mod progress;
pub mod screen;
pub mod verify;

pub use course::{Course, CourseError, Exercise, Kind};
pub use goal::Goal;
pub use judge::{ExerciseJudge, ExerciseVerdict};
