//! Charles's error: a run's file that cannot be read or is damaged, an input that cannot be used,
//! or the error of a crate below as it was.

flychess_brain::layer_error! {
    /// The brain's error.
    Brain(flychess_brain::Error),
    /// The fly crate's error (datasets, names, scoring).
    Fly(flychess_fly::Error),
    /// Learning's error (burn's device).
    Learning(flychess_learning::Error),
}
