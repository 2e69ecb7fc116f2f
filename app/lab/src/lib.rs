//! Fly Chess's lab as a crate with no egui in it: everything the window's views ask for and
//! nothing they draw. `lab` is the views' only door (a command/notice interface over the brain,
//! the game in play, the flies on disk and the long jobs); `game` holds one game's moves and
//! rules; the workers run on their own threads (`thinker` for the fly, `grader` for Stockfish,
//! `opponent` for `--watch`, `sound`); `training`, `learning_curve` and `profiling` are the
//! pipelines the command line and the Train tabs share (the datasets they learn from are made by
//! `flychess_learning::datasets`, the command line's alone); `players` seats the terminal's
//! players on a loaded brain; `figure_job` draws figures offscreen. Files
//! and threads live here and in the command line, never in the window's `ui` module (clippy's
//! `disallowed-methods` in app/clippy.toml makes that a compile error there). The desktop half
//! (the pipelines, `--watch`, the terminal's players, figures, the flies on disk, Stockfish as a
//! process, the speaker's device) is the `native` feature's; without it (a page, wasm32) the lab
//! plays from the bytes the page fetched (`lab::Fetched`) in the page's one thread.
#![warn(clippy::too_many_lines)]

#[cfg(feature = "native")]
pub mod figure_job;
pub mod game;
pub mod grader;
pub mod lab;
#[cfg(feature = "native")]
pub mod learning_curve;
pub mod openings;
#[cfg(feature = "native")]
pub mod opponent;
#[cfg(feature = "native")]
pub mod players;
#[cfg(feature = "native")]
pub mod profiling;
pub mod sound;
pub mod thinker;
#[cfg(feature = "native")]
pub mod training;
