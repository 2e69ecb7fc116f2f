//! The datasets the flies learn from, made by the command line's `flychess data` commands:
//! training positions from real games labelled with the move the master played (`game_positions`,
//! `data games`), positions labelled by Stockfish's search into the JSONL that `data import` and
//! the engine-label teachers read (`stockfish_labels`, `data label`), and the curriculum of
//! finishing planned, labelled and built into its dataset (`finishing`, `data curriculum`, with
//! `eval`'s figures of it). Each keeps its held-out rows out of TRAIN where it makes them, and a
//! killed run resumes to the same file.

pub mod finishing;
pub mod game_positions;
pub mod stockfish_labels;

use crate::Error;

/// An error said after what was being done (`opening FILE: cause`), in the words the command
/// line prints for a failed step.
fn during<E: std::fmt::Display>(what: String) -> impl FnOnce(E) -> Error {
    move |e| Error::Invalid(format!("{what}: {e}"))
}
