//! How a player loses (`sim::profile`), as one job that `flychess profile` and the Flies tab both
//! run: the player's games against the ladder's rungs come from the ladder's file for this brain
//! (the games `flychess rate` plays, so nothing is played twice), played where missing; the first
//! N by opening are analysed two at a time, each by a fresh Stockfish (so a rerun gives the same
//! figures); the report is kept in DATA/profiles/ under the player's id and the options, so the
//! window shows what the command measured and the other way round.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::Result;
use shakmaty::{Chess, Color};

use flychess_arena::ladder::{self, LadderOptions};
use flychess_arena::players::{Entrant, Kit};
use flychess_arena::profile::{self, GameLosses};
use flychess_fly::stockfish::{EngineOptions, Limit, Supervised};

/// Where a ladder's games are kept: DATA/ladder/WHAT + the brain's checksum and the options.
pub fn games_file(data: &Path, what: &str, checksum: &str, options: &LadderOptions) -> PathBuf {
    flychess_brain::files::DataFolder::at(data).ladder().join(format!(
        "{what}{}-seed{}-open{}-cap{}-nodes{}.jsonl",
        &checksum[..12.min(checksum.len())],
        options.seed,
        options.opening_plies,
        options.max_plies,
        options.stockfish_nodes
    ))
}

/// What the job is doing, for a progress bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Playing the ladder games still missing: (done, total).
    Playing,
    /// Analysing the player's games: (done, total).
    Analysing,
}

/// One profile to measure: `player` (in `kit`) on the brain with `checksum` (`brain` names it).
pub struct ProfileJob<'a> {
    pub player: &'a Entrant,
    pub kit: &'a Kit,
    pub brain: String,
    pub checksum: String,
    pub stockfish: PathBuf,
    pub games: usize,
    pub depth: u32,
}

/// Where the report of `player_id` measured over `games` games at `depth` is kept.
pub fn kept_path(data: &Path, player_id: &str, games: usize, depth: u32) -> PathBuf {
    flychess_brain::files::DataFolder::at(data).profiles().join(format!("{player_id}-games{games}-depth{depth}.json"))
}

/// Every kept report of `player_id`, the most games first (then the deeper analysis).
pub fn kept(data: &Path, player_id: &str) -> Vec<serde_json::Value> {
    let Ok(entries) = std::fs::read_dir(flychess_brain::files::DataFolder::at(data).profiles()) else { return Vec::new() };
    let prefix = format!("{player_id}-games");
    let mut found: Vec<serde_json::Value> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .filter_map(|e| std::fs::read(e.path()).ok())
        .filter_map(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .filter(|v| v["player_id"] == player_id)
        .collect();
    found.sort_by_key(|v| std::cmp::Reverse((v["profile"]["games"].as_u64().unwrap_or(0), v["depth"].as_u64().unwrap_or(0))));
    found
}

/// Runs the job (games first, then analysis) and keeps its report; `progress(stage, done, total)`.
pub fn run(
    job: &ProfileJob,
    data: &Path,
    progress: &(dyn Fn(Stage, usize, usize) + Sync),
) -> Result<(profile::Profile, serde_json::Value)> {
    // Its games against every rung, enough openings for `games` games in all.
    let mut entrants = ladder::rungs();
    let rungs = entrants.len();
    entrants.push(job.player.clone());
    let per_pairing = job.games.div_ceil(rungs).max(2).next_multiple_of(2);
    let options = LadderOptions { games: per_pairing, seed: 1, ..Default::default() };
    let file = games_file(data, "", &job.checksum, &options);
    let pairings: Vec<(usize, usize)> = (0..rungs).map(|r| (rungs, r)).collect();
    let rows = ladder::run_pairings(&entrants, &pairings, Some(job.kit), &options, &file, &|done, total, _| {
        progress(Stage::Playing, done, total)
    })?;
    let id = job.player.id();
    let mut mine: Vec<&ladder::GameRow> =
        rows.iter().filter(|g| (g.white_id == id || g.black_id == id) && g.opening < per_pairing / 2).collect();
    mine.sort_by_key(|g| (g.opening, g.swapped, g.white_id.clone(), g.black_id.clone()));
    mine.truncate(job.games);
    // Every position of those games, scored once at a fixed depth, two engines at a time.
    let started = Instant::now();
    let total = mine.len();
    progress(Stage::Analysing, 0, total);
    let queue = Mutex::new(mine.iter().enumerate());
    let results = Mutex::new(Vec::new());
    let failure = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while let Some((k, g)) = queue.lock().ok().and_then(|mut q| q.next()) {
                    // A fresh engine per game: its hash then holds that game's positions only, so
                    // the scores do not depend on which worker analysed what before.
                    let mut sf = Supervised::new(job.stockfish.clone(), EngineOptions { threads: 1, hash_mb: 32, ..Default::default() });
                    let analysed = (|| -> Result<GameLosses> {
                        let game = crate::game::Game::from_pgn(&g.pgn)?;
                        let positions: Vec<Chess> = (0..=game.plies()).map(|p| game.position(p).clone()).collect();
                        let values = profile::values(&mut sf, &positions, Limit::Depth(job.depth))?;
                        let colour = if g.white_id == id { Color::White } else { Color::Black };
                        let score = if g.white_id == id { g.score() } else { 1.0 - g.score() };
                        Ok(GameLosses { score, moves: profile::move_losses(&positions, &values, colour) })
                    })();
                    match analysed {
                        Ok(l) => {
                            let mut r = results.lock().expect("lock");
                            r.push((k, l));
                            progress(Stage::Analysing, r.len(), total);
                        }
                        Err(e) => {
                            *failure.lock().expect("lock") = Some(e);
                            break;
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut analysed = results.into_inner().unwrap_or_default();
    analysed.sort_by_key(|(k, _)| *k);
    let analysed: Vec<GameLosses> = analysed.into_iter().map(|(_, l)| l).collect();
    let measured = profile::profile(&analysed);
    let report = serde_json::json!({
        "player": job.player.name(), "player_id": id, "brain": job.brain,
        "depth": job.depth, "games_file": file.display().to_string(), "ladder_options": options,
        "profile": measured,
        "seconds": started.elapsed().as_secs_f64(),
        "note": "intervals: per-move normal intervals for mean losses (moves of one game are not independent: read them as rough), Wilson for the blunder share",
    });
    let path = kept_path(data, &id, job.games, job.depth);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    flychess_brain::files::write_atomically(&path, serde_json::to_string_pretty(&report)?.as_bytes())?;
    Ok((measured, report))
}
