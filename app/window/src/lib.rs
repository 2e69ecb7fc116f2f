//! The Fly Chess desktop window as a library: the views whose tabs draw the lab and send it
//! commands (`ui`: Play, Brain, Train, Flies, About, the start screen, the settings kept across
//! restarts) and the piece pictures the board draws (`pieces`). It has no command line and no
//! terminal: the `flychess` binary opens it (`ui::run`), and the UI tests in app/tests drive it
//! through egui_kittest. The views name no simulator crate; they go through the lab
//! (`flychess_lab`), which owns every file, thread and process they ask for (app/clippy.toml holds
//! that rule here too).
#![warn(clippy::too_many_lines)]

pub mod pieces;
pub mod ui;
