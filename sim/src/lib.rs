//! Fly Chess simulator: everything that is not UI. This crate owns the connectome (reading the
//! MaleCNS release or generating its synthetic stand-in, the rules that make a brain of it, the
//! brain file), the eye (board → photoreceptors), and where brains are kept on disk (`store`).
//! The rate model, readouts, training, Stockfish client and rating ladder join it as they are
//! built (see ARCHITECTURE.md for the whole data flow).

pub mod bio;
pub mod brain;
pub mod breakdown;
pub mod bptt;
pub mod burn_fit;
pub mod cache;
pub mod calibrate;
pub mod ceiling;
pub mod charles;
pub mod chess;
pub mod connectome;
pub mod container;
pub mod data;
pub mod duel;
pub mod engine;
pub mod error;
pub mod eval;
pub mod explain;
pub mod eye;
pub mod fly;
pub mod ladder;
pub mod play;
pub mod probe;
pub mod profile;
pub mod rating;
pub mod search;
pub mod readout;
pub mod shipped;
pub mod stats;
pub mod store;
pub mod together;
pub mod train;

pub use error::{Error, Result};
