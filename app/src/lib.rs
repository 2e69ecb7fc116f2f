//! The Fly Chess desktop app as a library: the lab (`lab`: the brain, the workers, the flies and
//! the game in play, with a command/notice interface), the window whose tabs are views over it
//! (`ui`), one game's moves and rules (`game`), the workers (`thinker` for the fly, `grader` for
//! Stockfish, `opponent` for `--watch`, `sound`), and the assets it embeds (`pieces`,
//! `openings`). The `flychess` binary's command line lives in src/main.rs; the
//! UI tests in tests/ drive this library through egui_kittest.

pub mod figure_job;
pub mod finishing;
pub mod game;
pub mod game_positions;
pub mod grader;
pub mod lab;
pub mod label;
pub mod learning_curve;
pub mod openings;
pub mod opponent;
pub mod pieces;
pub mod players;
pub mod profiling;
pub mod sound;
pub mod thinker;
pub mod training;
pub mod uci;
pub mod ui;
