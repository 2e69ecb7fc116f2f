//! The Fly Chess desktop app as a library: the window whose tabs are views over the lab (`ui`),
//! the UCI engine (`uci`) and the piece pictures the board draws (`pieces`). The lab itself (the
//! brain, the workers, the flies, the game in play and the training pipelines) is the
//! `flychess-lab` crate, re-exported here under its own module names so that the command line
//! and the tests reach it as before. The `flychess` binary's command line lives in src/main.rs
//! and src/cli/; the UI tests in tests/ drive this library through egui_kittest.
#![warn(clippy::too_many_lines)]

pub use flychess_lab::{
    figure_job, finishing, game, game_positions, grader, lab, label, learning_curve, openings, opponent, players, profiling, sound,
    thinker, training,
};
pub mod pieces;
pub mod uci;
pub mod ui;
