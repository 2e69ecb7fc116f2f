//! The fly crate's error: a file, a table or an input that cannot be used, said in words a user can
//! act on (naming the file), or the brain crate's error as it was.

flychess_brain::layer_error! {
    /// The brain's error (a brain file, a table, a download).
    Brain(flychess_brain::Error),
}
