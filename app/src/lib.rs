//! The Fly Chess desktop app as a library: the window whose tabs are views over the lab (`ui`),
//! the UCI engine (`uci`), the piece pictures the board draws (`pieces`) and the progress bars the
//! terminal's front doors draw (`terminal`). The lab itself (the brain, the workers, the flies,
//! the game in play and the training pipelines) is the `flychess-lab` crate, which the views, the
//! command line and the tests name as `flychess_lab`. The `flychess` binary's command line lives
//! in src/main.rs and src/cli/; the UI tests in tests/ drive this library through egui_kittest.
#![warn(clippy::too_many_lines)]

pub mod pieces;
pub mod terminal;
pub mod uci;
pub mod ui;
