//! Fly Chess's lower layer: the brain. This crate owns the connectome (reading FlyWire's and
//! MaleCNS's tables, or generating the synthetic stand-in, and the rules that make a brain of
//! them), the brain file and where brains are kept on disk (`store`), the eye (board →
//! photoreceptors), the 12-step rate model on the CPU and on the GPU (`brain`), calibration of
//! its homeostasis, the data that ships inside the binary (`shipped`) and the file helpers every
//! layer writes through (`files`). It knows nothing of readouts, training, players or burn: the
//! crates above (`flychess-fly`, `flychess-charles`, `flychess-arena`, `flychess-learning`) build
//! those on it (see ARCHITECTURE.md). What only a desktop build does (the table readers and
//! builders, downloads, the shipped data, peaks, the building half of `store`) is the `native`
//! feature's, on by default; without it the crate compiles for a page (wasm32), which reads its
//! brain from fetched bytes (`store::ready_brain_from_bytes`) and thinks on the CPU engine.
#![warn(clippy::too_many_lines)]

pub mod brain;
pub mod calibrate;
pub mod chess;
pub mod connectome;
pub mod container;
pub mod error;
pub mod eye;
pub mod files;
#[cfg(feature = "native")]
pub mod shipped;
pub mod store;

pub use error::{Error, Result};
