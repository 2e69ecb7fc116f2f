//! The trained fly and what it is scored on, below both the arena and learning (issue 58): the
//! readout (`readout`, `together`, `explain`), a fly's file (`fly`), the datasets (`data`), the
//! descending-neuron caches and their shards (`cache`, `shard`), grading and the Stockfish client
//! (`grading`, `stockfish`), scoring a readout against its teacher (`scoring`) and the 95 %
//! intervals (`stats`). The brain itself is the crate below, `flychess-brain`; the players and their
//! games (`flychess-arena`) and the fits (`flychess-learning`) are the crates beside each other
//! above. No burn here. The datasets' zstd and the shipped data's paths are the `native`
//! feature's, on by default; a page (wasm32) builds without it and reads its flies from bytes
//! (`fly::Fly::from_bytes`).
#![warn(clippy::too_many_lines)]

pub mod cache;
pub mod data;
pub mod error;
pub mod explain;
pub mod fly;
pub mod grading;
pub mod readout;
pub mod scoring;
pub mod shard;
pub mod stats;
pub mod stockfish;
pub mod together;

pub use error::{Error, Result};
