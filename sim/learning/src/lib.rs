//! How Fly Chess's flies learn (issue 58): one training run of a readout from DN cache to saved fly
//! (`pipeline`, shared by `flychess train` and the Train tab), the readout fit (`train`, with its
//! CPU kernel `gemm_fit`, burn's steps `burn_fit` and the fit streamed over a DN cache
//! `stream_fit`), the
//! teachers that label positions (`teacher`) and the finishing curriculum (`curriculum`), the
//! datasets they learn from as the command line's `flychess data` makes them (`datasets`: positions
//! from real games, Stockfish's labels, the curriculum's dataset), and
//! training the brain itself by backpropagation through time (`bptt`), and where burn runs
//! (`burn_device`). It stands on the brain (`flychess-brain`) and the fly (`flychess-fly`: scoring,
//! datasets, caches); the players and their games (`flychess-arena`) are beside it, and Charles
//! (`flychess-charles`, trained here on burn's device, played there) above both.
#![warn(clippy::too_many_lines)]

pub mod bptt;
pub mod burn_device;
pub mod burn_fit;
pub mod curriculum;
pub mod datasets;
pub mod error;
pub mod gemm_fit;
pub mod pipeline;
pub mod stream_fit;
pub mod teacher;
pub mod train;

pub use error::{Error, Result};
