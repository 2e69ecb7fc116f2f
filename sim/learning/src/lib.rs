//! How Fly Chess's flies learn (issue 58): the readout fit (`train`, with its CPU kernel
//! `gemm_fit`, burn's steps `burn_fit` and the fit streamed over a DN cache `stream_fit`), the
//! teachers that label positions (`teacher`) and the finishing curriculum (`curriculum`), and
//! training the brain itself by backpropagation through time (`bptt`). It stands on the brain
//! (`flychess-brain`), the fly (`flychess-fly`: scoring, datasets, caches) and burn's device
//! (`flychess-charles`); the players and their games (`flychess-arena`) are beside it.

pub mod bptt;
pub mod burn_fit;
pub mod curriculum;
pub mod error;
pub mod gemm_fit;
pub mod stream_fit;
pub mod teacher;
pub mod train;

pub use error::{Error, Result};
