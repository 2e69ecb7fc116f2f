//! Fly Chess's upper simulation layer: everything below the window that is not the brain itself.
//! This crate owns the readout and its training (`readout`, `train`, `burn_fit`, `cache`), the
//! datasets (`data`), the players and the arena they meet in (`play`, `search`, `ladder`, `duel`,
//! `rating`, `profile`, `ceiling`), Charles (`charles`), the dopamine fly (`bio`) and training the
//! brain itself by BPTT (`bptt`). The brain — connectome, engines, eye, store, shipped data — is
//! the layer below, `flychess-brain`, re-exported here under its own module names so a path such
//! as `flychess_sim::brain::cpu` names the same item as `flychess_brain::brain::cpu`.

pub use flychess_brain::{brain, calibrate, chess, connectome, container, error, eye, files, shipped, store};

pub mod bio;
pub mod bptt;
pub mod breakdown;
pub mod burn_fit;
pub mod cache;
pub mod ceiling;
pub mod charles;
pub mod curriculum;
pub mod data;
pub mod duel;
pub mod explain;
pub mod fly;
pub mod gemm_fit;
pub mod glances;
pub mod grading;
pub mod habituation;
pub mod ladder;
pub mod play;
pub mod players;
pub mod probe;
pub mod profile;
pub mod rating;
pub mod readout;
pub mod search;
pub mod shard;
pub mod stats;
pub mod stockfish;
pub mod stream_fit;
pub mod teacher;
pub mod thinking;
pub mod together;
pub mod train;
pub mod tuned;

pub use error::{Error, Result};
