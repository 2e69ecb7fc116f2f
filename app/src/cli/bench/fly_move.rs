//! How long one fly move takes in play, for `flychess bench`: a move after 1.e4 e5, plain and
//! with imagination, and the ladder's case of one move in each of the games it plays at once.

use std::path::Path;
use std::time::Instant;

use anyhow::{Result, anyhow};

use flychess_brain::brain::Brain;
use flychess_brain::chess::sample_positions;
use flychess_brain::connectome::brain_file::Loaded;

/// How long one fly move takes in play, plain and with imagination, for the first fly of this
/// brain found among the user's and the shipped flies (None when there is none).
pub fn fly_move_timing(brain: &Brain, loaded: &Loaded, data: &Path) -> Result<Option<serde_json::Value>> {
    use flychess_arena::players::Player;
    use flychess_fly::fly::Fly;
    let Some((_, path)) = flychess_fly::fly::trained_for(&loaded.checksum, data) else { return Ok(None) };
    let fly = Fly::load(&path)?;
    let pos = flychess_brain::chess::position_from_fen("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")?;
    let descending = &loaded.connectome.groups.descending;
    let player = |imagination: Option<f32>| Player::Fly {
        brain,
        readout: &fly.readout,
        descending,
        engine: None,
        imagination,
        habituation: None,
        glances: None,
    };
    let time = |imagination: Option<f32>| -> Result<f64> {
        let mut p = player(imagination);
        p.choose(&pos, &[])?; // warm-up
        let started = Instant::now();
        for _ in 0..3 {
            p.choose(&pos, &[])?;
        }
        Ok(started.elapsed().as_secs_f64() * 1000.0 / 3.0)
    };
    // The ladder's case: one fly move in each of the games it plays at once, asked for one after
    // another and then all at once from as many threads (their thinks go through the brain together).
    let games = flychess_arena::ladder::LadderOptions::default().workers;
    let positions: Vec<shakmaty::Chess> =
        sample_positions().into_iter().skip(300).filter(|p| !p.legal_moves().is_empty()).take(games).collect();
    let one_move = |pos: &shakmaty::Chess| player(None).choose(pos, &[]).map(|_| ());
    let started = Instant::now();
    for pos in &positions {
        one_move(pos)?;
    }
    let one_at_a_time = started.elapsed().as_secs_f64() * 1000.0 / positions.len() as f64;
    let start = std::sync::Barrier::new(positions.len());
    let started = Instant::now();
    std::thread::scope(|s| {
        let moves: Vec<_> = positions
            .iter()
            .map(|pos| {
                s.spawn(|| {
                    start.wait();
                    one_move(pos)
                })
            })
            .collect();
        moves.into_iter().try_for_each(|m| m.join().map_err(|_| anyhow!("a move's thread panicked"))?.map_err(anyhow::Error::from))
    })?;
    let at_once = started.elapsed().as_secs_f64() * 1000.0 / positions.len() as f64;
    use shakmaty::Position;
    Ok(Some(serde_json::json!({
        "fly": fly.meta.name,
        "ms": time(None)?,
        "ms_imagination": time(Some(1.0))?,
        "boards_imagined": pos.legal_moves().len(),
        "games_at_once": { "games": positions.len(), "ms_per_move": at_once, "ms_per_move_one_at_a_time": one_at_a_time },
    })))
}
