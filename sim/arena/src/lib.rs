//! Where Fly Chess's players meet (issue 58): one way from a name to a seated player (`players`),
//! games (`play`, `thinking`), Philidor's aids and search (`search`), the ladder, duels and
//! ratings (`ladder`, `duel`, `rating`), profiles, breakdowns and ceilings (`profile`,
//! `breakdown`, `ceiling`), habituation and two glances (`habituation`, `glances`) with their
//! tunings (`tuned`), the dopamine fly (`bio`) and probes of the brain's activity (`probe`). It
//! stands on the brain (`flychess-brain`) and the fly (`flychess-fly`) and has no burn: a trained
//! network such as Charles plays through `network::Network`, which `flychess-charles` (above)
//! implements. The fits (`flychess-learning`) are beside it, so a change here rebuilds no training
//! code. Its `native` feature turns on the brain's and the fly's; a page (wasm32) builds without.
#![warn(clippy::too_many_lines)]

pub mod bio;
pub mod breakdown;
pub mod ceiling;
pub mod duel;
pub mod error;
pub mod glances;
pub mod habituation;
pub mod ladder;
pub mod network;
pub mod play;
pub mod players;
pub mod probe;
pub mod profile;
pub mod rating;
pub mod search;
pub mod thinking;
pub mod tuned;

pub use error::{Error, Result};
