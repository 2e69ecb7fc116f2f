//! A dopamine fly's training run, shared by `flychess bio train` and the Train tab: tutor lessons
//! from the TRAIN positions in a seeded order (lesson i is always the same lesson, so a run resumes
//! exactly where its file left off), batches of B through the rule, every `every` lessons the pairs
//! right on monitor pairs from VAL (the live curve) and an atomic save of the fly; or games mode
//! against random, greedy and then Stockfish at its lowest strength as the fly's last 50 games pass
//! 0.6. Stops when asked between batches, with the fly saved.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::BioBrain;
use super::file::{CurvePoint, DopamineFly};
use super::learn::{self, Lesson};
use super::measure;
use crate::error::Result;
use crate::players::{Entrant, Player};
use flychess_fly::data::Row;
use flychess_fly::stats::Dice;

/// How a run goes.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Lessons (tutor) or games in all, counting those the fly already had.
    pub target: usize,
    /// Lessons between curve points and saves.
    pub every: usize,
    /// Monitor pairs from VAL for the curve.
    pub monitor_pairs: usize,
    /// Stockfish for games mode's last opponent (None: random and greedy only).
    pub stockfish: Option<PathBuf>,
}

/// What the run reports as it goes.
pub enum Progress<'a> {
    /// Lessons (or games) done of the target, with the latest batch's report.
    Lessons { done: usize, target: usize, batch: learn::BatchReport },
    /// A new point of the curve (saved with the fly).
    Point(&'a CurvePoint),
    /// A training game finished (games mode), with the opponent's name.
    Game { done: usize, target: usize, game: &'a learn::TrainingGame, opponent: &'a str },
}

/// The seeded order of the TRAIN rows (a permutation, the same for every run with `seed`).
fn order(rows: usize, seed: u64) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..rows).collect();
    let mut d = Dice::new(seed ^ 0x5EED_0F1E5);
    for i in (1..idx.len()).rev() {
        idx.swap(i, d.below(i + 1));
    }
    idx
}

/// Lesson `i` of a run: TRAIN row `order[i mod rows]`, its bad move drawn with dice of (seed, i);
/// from `harder_after` on the second best move. Rows without a lesson are passed over.
fn lesson_at(train: &[Row], order: &[usize], seed: u64, i: usize, harder: bool) -> Result<Option<Lesson>> {
    let row = &train[order[i % order.len()]];
    learn::lesson(row, &mut measure::row_dice(seed, i), harder)
}

/// Trains `fly` on `bio` up to `options.target` lessons (or games), saving it at `path` at every
/// curve point and at the end. `stop` is checked between batches.
pub fn run(
    bio: &BioBrain,
    fly: &mut DopamineFly,
    dataset: &flychess_fly::data::Dataset,
    path: &Path,
    options: &RunOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Result<()> {
    let (train, val) = (dataset.train(), dataset.val());
    fly.check(bio)?;
    let monitor = measure::pairs(val, fly.meta.seed, false, options.monitor_pairs)?;
    let started = Instant::now();
    let seconds_before = fly.meta.seconds;
    let clock = Clock { started, before: seconds_before };
    let mut point = |fly: &mut DopamineFly, mean_dose: Option<f64>, progress: &mut dyn FnMut(Progress)| -> Result<()> {
        let p = add_point(bio, fly, &monitor, path, &clock, mean_dose)?;
        progress(Progress::Point(&p));
        Ok(())
    };
    if fly.meta.curve.is_empty() {
        point(fly, None, progress)?;
    }
    if fly.meta.mode == "games" {
        return games(bio, fly, path, options, stop, progress, &mut point);
    }
    let order = order(train.len(), fly.meta.seed);
    let batch = bio.constants.batch;
    let (mut dose_sum, mut batches) = (0.0, 0usize);
    while fly.meta.lessons < options.target && !stop.load(Ordering::Relaxed) {
        let start = fly.meta.lessons;
        let end = (start + batch).min(options.target);
        let mut lessons = Vec::with_capacity(end - start);
        for i in start..end {
            let harder = fly.meta.rule.harder_after.is_some_and(|h| i >= h);
            if let Some(l) = lesson_at(train, &order, fly.meta.seed, i, harder)? {
                lessons.push(l);
            }
        }
        let report = learn::tutor(bio, &mut fly.m, &lessons, fly.meta.rule);
        fly.meta.lessons = end;
        dose_sum += report.mean_dose;
        batches += 1;
        progress(Progress::Lessons { done: end, target: options.target, batch: report });
        if end / options.every.max(1) > start / options.every.max(1) || end >= options.target {
            point(fly, Some(dose_sum / batches.max(1) as f64), progress)?;
            (dose_sum, batches) = (0.0, 0);
        }
    }
    fly.meta.seconds = seconds_before + started.elapsed().as_secs_f64();
    fly.save(path)
}

/// Games mode: the fly plays White and Black in turn; the opponent gets harder once the average of
/// the fly's last 50 games is above 0.6.
type PointFn<'a> = dyn FnMut(&mut DopamineFly, Option<f64>, &mut dyn FnMut(Progress)) -> Result<()> + 'a;

fn games(
    bio: &BioBrain,
    fly: &mut DopamineFly,
    path: &Path,
    options: &RunOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
    point: &mut PointFn,
) -> Result<()> {
    let mut recent: Vec<f64> = Vec::new();
    let mut level = 0usize;
    let mut stockfish_player = None;
    while fly.meta.games < options.target && !stop.load(Ordering::Relaxed) {
        let i = fly.meta.games;
        let seed = fly.meta.seed.wrapping_mul(1_000_003).wrapping_add(i as u64);
        // Its opponents are the ladder's rungs: the random and greedy movers, then Stockfish at its
        // lowest strength on 2,000 nodes a move (one engine kept for the rest of the run).
        let mut simple;
        let (opponent, name): (&mut Player, &str) = match level {
            0 => {
                simple = Player::new(&Entrant::Random, None, 0, seed, &None)?;
                (&mut simple, "random")
            }
            1 => {
                simple = Player::new(&Entrant::Greedy, None, 0, seed, &None)?;
                (&mut simple, "greedy")
            }
            _ => {
                let p = match &mut stockfish_player {
                    Some(p) => p,
                    None => stockfish_player.insert(Player::new(
                        &Entrant::Stockfish { random_share: 0.0 },
                        None,
                        2_000,
                        seed,
                        &options.stockfish,
                    )?),
                };
                (p, "stockfish (lowest strength)")
            }
        };
        let game = learn::game(bio, &mut fly.m, opponent, i.is_multiple_of(2), &mut Dice::new(seed ^ 0xF1), 200)?;
        fly.meta.games += 1;
        recent.push(game.score);
        if recent.len() > 50 {
            recent.remove(0);
        }
        let max_level = if options.stockfish.is_some() { 2 } else { 1 };
        if recent.len() == 50 && recent.iter().sum::<f64>() / 50.0 > 0.6 && level < max_level {
            level += 1;
            recent.clear();
        }
        progress(Progress::Game { done: fly.meta.games, target: options.target, game: &game, opponent: name });
        if fly.meta.games.is_multiple_of(options.every.max(1)) || fly.meta.games >= options.target {
            point(fly, None, progress)?;
        }
    }
    fly.save(path)
}

/// When this run started and how long the fly had trained before it.
struct Clock {
    started: Instant,
    before: f64,
}

/// Scores the monitor pairs, adds the point to the fly's curve and saves the fly.
fn add_point(
    bio: &BioBrain,
    fly: &mut DopamineFly,
    monitor: &[Lesson],
    path: &Path,
    clock: &Clock,
    mean_dose: Option<f64>,
) -> Result<CurvePoint> {
    let e = measure::pairs_right(&measure::score(bio, &fly.m, monitor, 64, &|_| {}));
    fly.meta.seconds = clock.before + clock.started.elapsed().as_secs_f64();
    let p = CurvePoint {
        lessons: fly.meta.lessons + fly.meta.games,
        pairs_right: e.value,
        low: e.low,
        high: e.high,
        mean_dose,
        seconds: fly.meta.seconds,
    };
    fly.meta.curve.push(p);
    fly.save(path)?;
    Ok(p)
}
