//! The selection ceiling (Philidor's lesson, seed `001_…txt` §10): how good a policy's five most
//! probable moves are when something else picks among them. On held-out middlegame positions
//! (HOLD rows in `breakdown::phase`'s middlegame; never trained on) each selector picks a move:
//! the policy alone (its favourite), its judge and its search (`search`), Stockfish at depths 1,
//! 4 and 12 among the five, and the five's best by the scorer itself (the ceiling: no selector
//! over these five can lose less). Stockfish at a fixed depth, a fresh engine per position, scores
//! the position and the board after each picked move once; a pick costs `max(0, before − after)`
//! centipawns from the mover's side, clipped as `profile` clips, and one losing more than 400 cp
//! is a blunder (`profile::BLUNDER_CP`). Every selector thinks with a fresh searcher per position,
//! so its time per move is its own.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use shakmaty::{Move, Position};

use crate::error::{Error, Result};
use crate::profile::{BLUNDER_CP, values};
use crate::search::{Aid, Evaluator, Searcher, TOP_K};
use flychess_brain::chess::position_from_fen;
use flychess_brain::chess::uci;
use flychess_fly::data::Row;
use flychess_fly::stats::{self, Estimate};
use flychess_fly::stockfish::{EngineOptions, Limit, Supervised};

/// Who picks among the shortlist.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Selector {
    /// The policy's favourite (no aid).
    Alone,
    Aided(Aid),
    /// The shortlisted move the scorer rates best: the ceiling.
    Best,
}

impl Selector {
    pub fn name(&self) -> String {
        match self {
            Selector::Alone => "the policy alone".into(),
            Selector::Aided(aid) => aid.label(),
            Selector::Best => format!("the best of its top {TOP_K} (the ceiling)"),
        }
    }
}

/// One selector over the positions.
#[derive(Clone, Debug, Serialize)]
pub struct SelectorRow {
    pub selector: String,
    pub positions: usize,
    /// Mean centipawns lost per pick, 95 % interval.
    pub mean_loss_cp: Estimate,
    /// Picks losing more than 400 cp (Wilson 95 %).
    pub blunders: usize,
    pub blunder_rate: Estimate,
    /// Picks equal to the label's best move (Stockfish 15.1 at depth 10, the dataset's).
    pub top1: Estimate,
    /// Mean seconds to pick, the policy's own think included (an aid thinks again itself); the
    /// scoring is not counted, so the oracle's row shows only the policy's think.
    pub seconds_per_move: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Ceiling {
    pub positions: usize,
    pub scoring_depth: u32,
    /// The label's best move is among the policy's five.
    pub best_in_top5: Estimate,
    pub rows: Vec<SelectorRow>,
}

/// The selectors the ceiling compares, in order.
pub fn selectors(simulations: usize) -> Vec<Selector> {
    vec![
        Selector::Alone,
        Selector::Aided(Aid::Judge { weight: f32::NAN }),
        Selector::Aided(Aid::Search { simulations }),
        Selector::Aided(Aid::Select { depth: 1 }),
        Selector::Aided(Aid::Select { depth: 4 }),
        Selector::Aided(Aid::Select { depth: 12 }),
        Selector::Best,
    ]
}

/// The middlegame rows among `rows`, the first `n`.
pub fn middlegames(rows: &[Row], n: usize) -> Result<Vec<Row>> {
    let mut out = Vec::new();
    for r in rows {
        if out.len() == n {
            break;
        }
        if crate::breakdown::phase(&position_from_fen(&r.fen)?) == 1 {
            out.push(r.clone());
        }
    }
    Ok(out)
}

/// Every selector of `selectors` (a `Judge` takes `judge_weight`) on `rows`, scored at `depth`.
pub fn measure(
    evaluator: Evaluator,
    judge_weight: f32,
    selectors: &[Selector],
    rows: &[Row],
    stockfish: &Path,
    depth: u32,
    progress: &dyn Fn(usize),
) -> Result<Ceiling> {
    let engine = || Supervised::new(stockfish.to_path_buf(), EngineOptions { threads: 1, hash_mb: 16, ..Default::default() });
    let mut losses: Vec<Vec<f64>> = vec![Vec::new(); selectors.len()];
    let mut best_hits: Vec<Vec<bool>> = vec![Vec::new(); selectors.len()];
    let mut seconds = vec![0.0; selectors.len()];
    let mut in_top5 = Vec::new();
    for (k, row) in rows.iter().enumerate() {
        let pos = position_from_fen(&row.fen)?;
        let moves: Vec<Move> = pos.legal_moves().into_iter().collect();
        let target = flychess_fly::scoring::Target::of(row)?;
        // The policy's own think: what "alone" (and the oracle, past its Stockfish) costs a move.
        let thought = Instant::now();
        let top = Searcher::new(evaluator).shortlist(&pos)?;
        let think_seconds = thought.elapsed().as_secs_f64();
        in_top5.push(top.iter().any(|m| *m == moves[target.best]));
        // Every shortlisted move scored once (the picks are among them), with the position.
        let mut scorer = engine();
        let mut boards = vec![pos.clone()];
        boards.extend(top.iter().map(|m| {
            let mut a = pos.clone();
            a.play_unchecked(*m);
            a
        }));
        let v = values(&mut scorer, &boards, Limit::Depth(depth))?;
        let loss: BTreeMap<String, f64> = top.iter().enumerate().map(|(i, m)| (uci(m), (v[0] + v[i + 1]).max(0.0))).collect();
        let mut select_engine = engine();
        for (s, selector) in selectors.iter().enumerate() {
            let started = Instant::now();
            let pick = match selector {
                Selector::Alone => top[0],
                Selector::Best => *top.iter().min_by(|a, b| loss[&uci(a)].total_cmp(&loss[&uci(b)])).expect("a shortlist"),
                Selector::Aided(aid) => {
                    let aid = match aid {
                        Aid::Judge { .. } => Aid::Judge { weight: judge_weight },
                        other => *other,
                    };
                    Searcher::new(evaluator).decide(aid, &pos, &[], Some(&mut select_engine))?.chosen
                }
            };
            seconds[s] += started.elapsed().as_secs_f64() + if matches!(selector, Selector::Aided(_)) { 0.0 } else { think_seconds };
            let l = *loss
                .get(&uci(&pick))
                .ok_or_else(|| Error::Invalid(format!("{} picked {}, outside the shortlist", selector.name(), uci(&pick))))?;
            losses[s].push(l);
            best_hits[s].push(pick == moves[target.best]);
        }
        progress(k + 1);
    }
    let n = rows.len();
    Ok(Ceiling {
        positions: n,
        scoring_depth: depth,
        best_in_top5: stats::rate_of(&in_top5),
        rows: selectors
            .iter()
            .enumerate()
            .map(|(s, selector)| {
                let blunders = losses[s].iter().filter(|&&l| l > BLUNDER_CP).count();
                SelectorRow {
                    selector: match selector {
                        Selector::Aided(Aid::Judge { .. }) => format!("judge (w {judge_weight})"),
                        other => other.name(),
                    },
                    positions: n,
                    mean_loss_cp: stats::mean(&losses[s]),
                    blunders,
                    blunder_rate: stats::rate(blunders, n),
                    top1: stats::rate_of(&best_hits[s]),
                    seconds_per_move: seconds[s] / n.max(1) as f64,
                }
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn middlegames_are_picked_by_phase_in_order() {
        let row = |fen: &str| Row { fen: fen.into(), game: 1, ply: 1, legal: 1, moves: Vec::new() };
        let start = row("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        let kings = row("4k3/8/8/8/8/8/8/4K3 w - - 0 1");
        let middle = row("r3k2r/ppp2ppp/2n5/3q4/3P4/2N5/PP3PPP/R2QK2R w KQkq - 0 20");
        let got = middlegames(&[start, kings, middle.clone(), middle.clone()], 1).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].fen, middle.fen);
    }
}
