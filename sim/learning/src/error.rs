//! Learning's error: a fit, a run or a file of theirs that cannot be used, said in words a user
//! can act on, or the error of a crate below as it was.

flychess_brain::layer_error! {
    /// The brain's error.
    Brain(flychess_brain::Error),
    /// The fly crate's error (a fly's file, a dataset, a DN cache, Stockfish).
    Fly(flychess_fly::Error),
}
