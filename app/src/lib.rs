//! The Fly Chess desktop app as a library: the UCI engine (`uci`) and the progress bars the
//! terminal's front doors draw (`terminal`). The window whose tabs are views over the lab, and the
//! piece pictures its board draws, are the `flychess-window` crate (`flychess_window::ui`,
//! `flychess_window::pieces`); the lab itself (the brain, the workers, the flies, the game in play
//! and the training pipelines) is the `flychess-lab` crate, which the views, the command line and
//! the tests name as `flychess_lab`. The `flychess` binary's command line lives in src/main.rs and
//! src/cli/; the UI tests in tests/ drive the window through egui_kittest.
#![warn(clippy::too_many_lines)]

pub mod terminal;
pub mod uci;
