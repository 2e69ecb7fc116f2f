//! The arena's error: a player, a game, a ladder or a file of theirs that cannot be used, said in
//! words a user can act on (`NeedsBrain`: not yet, the brain is not loaded), or the error of a crate below as it was.

flychess_brain::layer_error! {
    own {
        /// A player that needs its brain loaded to be seated or to play (said "NAME needs its
        /// brain"): a door with the brain on its way waits for it instead of refusing the name.
        NeedsBrain(String) = "{0} needs its brain",
    }
    /// The brain's error.
    Brain(flychess_brain::Error),
    /// The fly crate's error (a fly's file, a dataset, Stockfish).
    Fly(flychess_fly::Error),
}
