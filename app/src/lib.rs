//! The Fly Chess desktop app as a library: the window (`ui`), the game it keeps (`game`), the
//! workers behind it (`thinker` for the fly, `grader` for Stockfish, `sound`), and the assets it
//! embeds (`pieces`, `openings`). The `flychess` binary's command line lives in src/main.rs; the
//! UI tests in tests/ drive this library through egui_kittest.

pub mod game;
pub mod grader;
pub mod label;
pub mod opponent;
pub mod openings;
pub mod pieces;
pub mod profiling;
pub mod sound;
pub mod thinker;
pub mod training;
pub mod ui;
