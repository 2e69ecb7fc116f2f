//! The labelled positions shipped in the repo (converted from ../shared/data by `flychess data
//! import`): complete, split as documented, and the calibration sample taken from TRAIN only.

use flychess_fly::data::{Dataset, HOLD, VAL, shipped_path};

#[test]
fn the_shipped_dataset_loads_with_its_splits() {
    let d = Dataset::load(&shipped_path()).unwrap();
    assert_eq!(d.rows.len(), 81_473);
    assert_eq!((d.hold().len(), d.val().len(), d.train().len()), (HOLD, VAL, 81_473 - HOLD - VAL));
    assert!(d.rows.iter().all(|r| !r.moves.is_empty() && r.moves.len() <= 8 && r.moves.len() <= r.legal as usize));
    // The first row of the shared file, as its README shows it.
    assert_eq!(d.rows[0].fen, "rnbqkb1r/ppp2ppp/4pn2/8/2BP4/4PN2/PP3PPP/RNBQK2R b KQkq - 0 5");
    assert_eq!(d.rows[0].moves[0].mv.uci(), "c7c5");
}

#[test]
fn the_calibration_sample_comes_from_the_training_split() {
    let d = Dataset::load(&shipped_path()).unwrap();
    let sample: Vec<String> = include_str!("../../brain/data/sample-positions.fen").lines().map(str::to_owned).collect();
    let train: Vec<&str> = d.train().iter().map(|r| r.fen.as_str()).collect();
    assert_eq!(sample.len(), 512);
    assert_eq!(&train[..512], &sample.iter().map(String::as_str).collect::<Vec<_>>()[..]);
}
