//! Philidor's aids to a policy (seed `001_…txt` §10–12): players of their own, named for what
//! they are and never reported as the fly's own strength (the fly-chess seed keeps search out of
//! the fly: "then the search would be the one playing"). Three aids over a base policy's five most
//! probable moves (its shortlist):
//! - a **judge**: each shortlisted move scored `ln P + w · value of the board after it` (the rules
//!   of one-move imagination, `play::LookAhead::pick`, on the shortlist only), `w` chosen on VAL;
//! - a **search**: PUCT over the shortlist's priors at every node, the value at the leaves, the
//!   most visited move played after N simulations (a visit to a checkmate, a dead draw or a board
//!   already seen in the game or on the path counts as one, valued by the rules);
//! - the **selection ceiling**: Stockfish at a fixed depth choosing among the shortlist (how good
//!   the policy's five are when something strong picks).
//!
//! Priors and values come from an `Evaluator`: a fly's brain and readout (both from one think), or
//! Charles's policy with a fly's value (Charles has no value head). A search sends its leaves
//! through the brain in batches of up to `LEAF_BATCH` (collected under virtual loss), and every
//! board's evaluation is kept for the game, so a board is thought once. The same position, history
//! and settings give the same move.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use shakmaty::fen::Fen;
use shakmaty::{Chess, EnPassantMode, Move, Position};

use crate::error::{Error, Result};
use crate::play::LookAhead;
use flychess_brain::brain::Brain;
use flychess_brain::brain::simulator::Simulator;
use flychess_brain::chess::planes;
use flychess_fly::readout::{Readout, policy, position_key, think_features_on};
use flychess_fly::stockfish::{Limit, Supervised};

/// How many of the policy's moves an aid considers.
pub const TOP_K: usize = 5;
/// The search's simulations when none are named.
pub const DEFAULT_SIMULATIONS: usize = 64;
/// PUCT's exploration constant.
pub const C_PUCT: f32 = 1.5;
/// Leaves collected (under virtual loss) before they go through the brain together.
pub const LEAF_BATCH: usize = 8;
/// Evaluations kept before the store is emptied (a game's search thinks a few thousand boards).
const KEPT_EVALUATIONS: usize = 200_000;

/// Which aid, with its setting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Aid {
    /// The shortlist scored by prior and value, `weight` on the value.
    Judge { weight: f32 },
    /// PUCT over the shortlist with this many simulations.
    Search { simulations: usize },
    /// Stockfish at this depth choosing among the shortlist.
    Select { depth: u32 },
}

impl Aid {
    /// What a player name's suffix after `+` means: `judge`, `search` (64 simulations), `searchN`,
    /// `sfD` (Stockfish at depth D among the top five); None when it names no aid. The judge comes
    /// with weight 1 until the caller sets the one chosen on VAL (`tune_judge`).
    pub fn parse(suffix: &str) -> Option<Result<Aid>> {
        let number = |digits: &str, what: &str| {
            digits
                .parse::<u64>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| Error::Invalid(format!("+{suffix}: {what} must be a whole number above 0, e.g. +search64 or +sf4")))
        };
        Some(if suffix == "judge" {
            Ok(Aid::Judge { weight: 1.0 })
        } else if suffix == "search" {
            Ok(Aid::Search { simulations: DEFAULT_SIMULATIONS })
        } else if let Some(n) = suffix.strip_prefix("search") {
            number(n, "the simulations").and_then(|n| {
                if n > 100_000 {
                    Err(Error::Invalid(format!("+{suffix}: at most 100000 simulations a move")))
                } else {
                    Ok(Aid::Search { simulations: n as usize })
                }
            })
        } else if let Some(d) = suffix.strip_prefix("sf") {
            number(d, "the depth").and_then(|d| {
                if d > 30 { Err(Error::Invalid(format!("+{suffix}: a depth of at most 30"))) } else { Ok(Aid::Select { depth: d as u32 }) }
            })
        } else {
            return None;
        })
    }

    /// How the player is labelled: "judge", "search 64", "Stockfish d4 among its top 5".
    pub fn label(&self) -> String {
        match self {
            Aid::Judge { .. } => "judge".into(),
            Aid::Search { simulations } => format!("search {simulations}"),
            Aid::Select { depth } => format!("Stockfish d{depth} among its top {TOP_K}"),
        }
    }

    /// The part of a player id this aid adds: every setting its moves depend on.
    pub fn id_part(&self) -> String {
        match self {
            Aid::Judge { weight } => format!("judge-k{TOP_K}-w{weight}"),
            Aid::Search { simulations } => format!("search{simulations}-k{TOP_K}-c{C_PUCT}-b{LEAF_BATCH}"),
            Aid::Select { depth } => format!("sf-d{depth}-k{TOP_K}"),
        }
    }

    /// The player name's suffix that means this aid (the inverse of `parse`).
    pub fn suffix(&self) -> String {
        match self {
            Aid::Judge { .. } => "judge".into(),
            Aid::Search { simulations } => format!("search{simulations}"),
            Aid::Select { depth } => format!("sf{depth}"),
        }
    }
}

/// A board as a searcher sees it: a prior over its legal moves (shakmaty's order) and its value
/// for the side to move in [−1, 1].
#[derive(Clone, Debug)]
pub struct Evaluation {
    pub moves: Vec<Move>,
    pub prior: Vec<f32>,
    pub value: f32,
}

/// Where priors and values come from: a fly's think gives each board's value and, unless another
/// policy gives the prior (Charles, who has no value head), the prior too.
#[derive(Clone, Copy)]
pub struct Evaluator<'a> {
    pub brain: &'a Brain,
    pub readout: &'a Readout,
    pub descending: &'a [u32],
    /// Charles's policy as the prior instead of the fly's.
    pub prior: Option<&'a dyn crate::network::Network>,
    /// The engine the fly thinks on (None: the CPU engine).
    pub engine: Option<&'a Simulator>,
}

impl<'a> Evaluator<'a> {
    /// A fly alone: policy and value from one think.
    pub fn fly(brain: &'a Brain, readout: &'a Readout, descending: &'a [u32]) -> Evaluator<'a> {
        Evaluator { brain, readout, descending, prior: None, engine: None }
    }

    /// The same, thinking on `engine` (None: the CPU engine).
    pub fn on(self, engine: Option<&'a Simulator>) -> Evaluator<'a> {
        Evaluator { engine, ..self }
    }

    /// Every board's evaluation, the boards thought as one batch.
    pub fn evaluate(&self, boards: &[Chess]) -> Result<Vec<Evaluation>> {
        let features = think_features_on(
            self.engine,
            self.brain,
            &boards.iter().map(planes).collect::<Vec<_>>(),
            self.descending,
            &self.readout.read_steps,
        );
        boards
            .iter()
            .zip(features)
            .map(|(board, f)| {
                let fly = policy(board, &self.readout.heads(&f));
                match self.prior {
                    None => Ok(Evaluation { moves: fly.moves, prior: fly.probability, value: fly.value }),
                    Some(charles) => {
                        let c = charles.policy(board)?;
                        Ok(Evaluation { moves: c.moves, prior: c.probability, value: fly.value })
                    }
                }
            })
            .collect()
    }
}

/// The indices of the `k` most probable moves, most probable first (ties: generation order).
pub fn shortlist(prior: &[f32], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..prior.len()).collect();
    order.sort_by(|&a, &b| prior[b].total_cmp(&prior[a]).then(a.cmp(&b)));
    order.truncate(k);
    order
}

/// What the rules say of a board reached in play, from its side to move: lost (checkmated) −1,
/// a draw 0 (stalemate, dead position, the 50-move rule, or a board seen before in `seen`), or
/// None when play goes on.
fn rules_value(board: &Chess, seen: &[u64]) -> Option<f32> {
    if board.is_checkmate() {
        Some(-1.0)
    } else if board.is_stalemate() || board.is_insufficient_material() || board.halfmoves() >= 100 || seen.contains(&position_key(board)) {
        Some(0.0)
    } else {
        None
    }
}

/// What a decision may spend: a deadline, a flag that stops it early (UCI's `stop`), and at most
/// so many simulations (UCI's `nodes`). A search stops at whichever comes first and plays the
/// best move found so far; the default spends the aid's own simulations, however long they take.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    pub deadline: Option<Instant>,
    pub stop: Option<Arc<AtomicBool>>,
    pub simulations: Option<usize>,
}

impl Budget {
    /// The time is up or a stop was asked for.
    pub fn spent(&self) -> bool {
        self.spent_before(Duration::ZERO)
    }

    /// `spent`, or a piece of work taking `next` would end past the deadline (a search does not
    /// start a batch it cannot finish in time).
    pub fn spent_before(&self, next: Duration) -> bool {
        self.deadline.is_some_and(|d| Instant::now() + next >= d) || self.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
    }
}

/// One aided move: the move, and what the aid saw of each shortlisted move.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Decision {
    #[serde(skip)]
    pub chosen: Move,
    pub chosen_uci: String,
    /// The shortlist in UCI, most probable first.
    pub shortlist: Vec<String>,
    /// The base policy's probability of each.
    pub prior: Vec<f32>,
    /// The judge's value after each / the search's mean value and visits of each (from the mover's
    /// side); empty for Stockfish's choice.
    pub value: Vec<f32>,
    pub visits: Vec<u32>,
    /// Boards that went through the brain for this move (those already kept not counted).
    pub boards_thought: usize,
    /// The search's simulations (0 for the judge and Stockfish's choice).
    pub simulations: usize,
    pub seconds: f64,
}

/// A base policy with its aids and the boards it has evaluated so far (kept for the game).
pub struct Searcher<'a> {
    pub evaluator: Evaluator<'a>,
    kept: HashMap<u64, Evaluation>,
    /// What the next decisions may spend (a search's; the judge and Stockfish's choice are short).
    pub budget: Budget,
}

struct Node {
    board: Chess,
    /// The shortlist: moves, priors renormalised over it.
    moves: Vec<Move>,
    prior: Vec<f32>,
    /// The board's value for its side to move (the first guess for an unvisited move).
    value: f32,
    child: Vec<Child>,
    visits: Vec<u32>,
    /// Summed values from this node's side to move.
    total: Vec<f32>,
    virtual_loss: Vec<u32>,
    /// The game's keys and the path's down to this board (a board seen again is a draw).
    seen: Vec<u64>,
}

#[derive(Clone, Copy, PartialEq)]
enum Child {
    Unvisited,
    /// Waiting in the batch being collected.
    Pending,
    /// Settled by the rules, valued from this node's side.
    Rules(f32),
    Node(usize),
}

impl Node {
    fn new(board: Chess, e: &Evaluation, seen: Vec<u64>) -> Node {
        let top = shortlist(&e.prior, TOP_K);
        let sum: f32 = top.iter().map(|&i| e.prior[i]).sum::<f32>().max(1e-12);
        let n = top.len();
        Node {
            board,
            moves: top.iter().map(|&i| e.moves[i]).collect(),
            prior: top.iter().map(|&i| e.prior[i] / sum).collect(),
            value: e.value,
            child: vec![Child::Unvisited; n],
            visits: vec![0; n],
            total: vec![0.0; n],
            virtual_loss: vec![0; n],
            seen,
        }
    }

    /// PUCT's pick: mean value (virtual losses counted as lost visits; an unvisited move starts at
    /// the board's own value) plus C · prior · √(visits + 1) / (1 + its visits). Ties: the shortlist's order.
    fn select(&self) -> usize {
        let all: u32 = self.visits.iter().zip(&self.virtual_loss).map(|(v, l)| v + l).sum();
        let root = ((all + 1) as f32).sqrt();
        let score = |a: usize| {
            let n = self.visits[a] + self.virtual_loss[a];
            let q = if n == 0 { self.value } else { (self.total[a] - self.virtual_loss[a] as f32) / n as f32 };
            q + C_PUCT * self.prior[a] * root / (1 + n) as f32
        };
        let mut best = 0;
        for a in 1..self.moves.len() {
            if score(a) > score(best) {
                best = a;
            }
        }
        best
    }
}

impl<'a> Searcher<'a> {
    pub fn new(evaluator: Evaluator<'a>) -> Searcher<'a> {
        Searcher { evaluator, kept: HashMap::new(), budget: Budget::default() }
    }

    /// The evaluations of `boards` (none settled by the rules), those not kept thought as one
    /// batch; returns them and how many were thought.
    fn evaluations(&mut self, boards: &[Chess]) -> Result<(Vec<Evaluation>, usize)> {
        let keys: Vec<u64> = boards.iter().map(position_key).collect();
        let mut unique: Vec<usize> = Vec::new();
        for i in (0..boards.len()).filter(|&i| !self.kept.contains_key(&keys[i])) {
            if !unique.iter().any(|&j| keys[j] == keys[i]) {
                unique.push(i);
            }
        }
        if !unique.is_empty() {
            if self.kept.len() + unique.len() > KEPT_EVALUATIONS {
                self.kept.clear();
            }
            let thought = self.evaluator.evaluate(&unique.iter().map(|&i| boards[i].clone()).collect::<Vec<_>>())?;
            for (&i, e) in unique.iter().zip(thought) {
                self.kept.insert(keys[i], e);
            }
        }
        Ok((keys.iter().map(|k| self.kept[k].clone()).collect(), unique.len()))
    }

    /// The aid's move in `pos` (`earlier`: the game's keys so far). `engine` is needed by `Select`.
    pub fn decide(&mut self, aid: Aid, pos: &Chess, earlier: &[u64], engine: Option<&mut Supervised>) -> Result<Decision> {
        let started = Instant::now();
        let mut d = match aid {
            Aid::Judge { weight } => self.judge(pos, earlier, weight)?,
            Aid::Search { simulations } => self.search(pos, earlier, simulations)?,
            Aid::Select { depth } => {
                let engine = engine.ok_or_else(|| Error::Invalid("Stockfish choosing among the top five needs Stockfish".into()))?;
                self.select(pos, depth, engine)?
            }
        };
        d.seconds = started.elapsed().as_secs_f64();
        Ok(d)
    }

    /// The evaluations of `boards` (each kept for the rest of the game, those not yet kept thought
    /// as one batch).
    pub fn evaluate(&mut self, boards: &[Chess]) -> Result<Vec<Evaluation>> {
        Ok(self.evaluations(boards)?.0)
    }

    /// The base policy's shortlist in `pos`, most probable first.
    pub fn shortlist(&mut self, pos: &Chess) -> Result<Vec<Move>> {
        let (e, top, _) = self.root(pos)?;
        Ok(top.into_iter().map(|i| e.moves[i]).collect())
    }

    fn root(&mut self, pos: &Chess) -> Result<(Evaluation, Vec<usize>, usize)> {
        let (mut e, thought) = self.evaluations(std::slice::from_ref(pos))?;
        let e = e.pop().expect("one board, one evaluation");
        if e.moves.is_empty() {
            return Err(Error::Invalid("the game is over: no legal move to choose".into()));
        }
        let top = shortlist(&e.prior, TOP_K);
        Ok((e, top, thought))
    }

    /// The judge: the shortlist's boards after, each valued (by the rules where they settle it,
    /// else by the value head, negated to the mover's side), then `LookAhead::pick` with `weight`.
    fn judge(&mut self, pos: &Chess, earlier: &[u64], weight: f32) -> Result<Decision> {
        let (root, top, mut thought) = self.root(pos)?;
        let afters: Vec<Chess> = top
            .iter()
            .map(|&i| {
                let mut a = pos.clone();
                a.play_unchecked(root.moves[i]);
                a
            })
            .collect();
        let open: Vec<usize> = (0..afters.len()).filter(|&j| rules_value(&afters[j], &[]).is_none()).collect();
        let (values, n) = self.evaluations(&open.iter().map(|&j| afters[j].clone()).collect::<Vec<_>>())?;
        thought += n;
        let mut ours = vec![0.0; afters.len()];
        for (&j, e) in open.iter().zip(&values) {
            ours[j] = -e.value;
        }
        let seen = LookAhead {
            probability: top.iter().map(|&i| root.prior[i]).collect(),
            ours: ours.clone(),
            draws: afters
                .iter()
                .map(|a| {
                    let key = position_key(a);
                    a.is_stalemate()
                        || a.is_insufficient_material()
                        || a.halfmoves() >= 100
                        || earlier.iter().filter(|&&k| k == key).count() >= 2
                })
                .collect(),
            repeats: afters.iter().map(|a| earlier.contains(&position_key(a))).collect(),
            mate: afters.iter().position(|a| a.is_checkmate()),
            features: Vec::new(),
        };
        let pick = seen.pick(weight);
        Ok(decision(&root, &top, top[pick], ours, Vec::new(), thought))
    }

    /// PUCT over the shortlist, `simulations` visits (fewer when the budget runs out first:
    /// checked between batches of leaves); the most visited move (ties: the higher mean value,
    /// then the shortlist's order; with no visit at all, the most probable move).
    fn search(&mut self, pos: &Chess, earlier: &[u64], simulations: usize) -> Result<Decision> {
        let simulations = self.budget.simulations.map_or(simulations, |n| n.min(simulations));
        let (root_eval, top, mut thought) = self.root(pos)?;
        let mut seen = earlier.to_vec();
        seen.push(position_key(pos));
        let mut nodes = vec![Node::new(pos.clone(), &root_eval, seen)];
        let mut done = 0;
        // How long the last batch of leaves took to think: the next one is not started unless it
        // can end before the deadline.
        let mut last_batch = Duration::ZERO;
        while done < simulations && !self.budget.spent_before(last_batch) {
            let batch_started = Instant::now();
            // Collect leaves under virtual loss.
            let mut leaves: Vec<(Vec<(usize, usize)>, Chess)> = Vec::new();
            while leaves.len() < LEAF_BATCH && done + leaves.len() < simulations {
                let mut path = Vec::new();
                let mut at = 0;
                let reached = loop {
                    let a = nodes[at].select();
                    path.push((at, a));
                    match nodes[at].child[a] {
                        Child::Node(c) => at = c,
                        Child::Rules(v) => break Some(Err(v)),
                        Child::Pending => break None,
                        Child::Unvisited => {
                            let mut after = nodes[at].board.clone();
                            after.play_unchecked(nodes[at].moves[a]);
                            match rules_value(&after, &nodes[at].seen) {
                                Some(v) => {
                                    nodes[at].child[a] = Child::Rules(-v);
                                    break Some(Err(-v));
                                }
                                None => {
                                    nodes[at].child[a] = Child::Pending;
                                    break Some(Ok(after));
                                }
                            }
                        }
                    }
                };
                match reached {
                    // A leaf the batch already holds: think what is collected first.
                    None => break,
                    // Settled by the rules: one simulation, backed up at once.
                    Some(Err(v)) => {
                        backup(&mut nodes, &path, v, false);
                        done += 1;
                    }
                    Some(Ok(after)) => {
                        for &(n, a) in &path {
                            nodes[n].virtual_loss[a] += 1;
                        }
                        leaves.push((path, after));
                    }
                }
            }
            if leaves.is_empty() {
                continue;
            }
            let (values, n) = self.evaluations(&leaves.iter().map(|(_, b)| b.clone()).collect::<Vec<_>>())?;
            last_batch = batch_started.elapsed();
            thought += n;
            for ((path, board), e) in leaves.into_iter().zip(values) {
                let &(parent, a) = path.last().expect("a leaf has a path");
                let mut seen = nodes[parent].seen.clone();
                seen.push(position_key(&board));
                nodes.push(Node::new(board, &e, seen));
                nodes[parent].child[a] = Child::Node(nodes.len() - 1);
                backup(&mut nodes, &path, -e.value, true);
                done += 1;
            }
        }
        let root = &nodes[0];
        let mean = |a: usize| if root.visits[a] == 0 { f32::NEG_INFINITY } else { root.total[a] / root.visits[a] as f32 };
        let mut best = 0;
        for a in 1..root.moves.len() {
            if (root.visits[a], mean(a)) > (root.visits[best], mean(best)) {
                best = a;
            }
        }
        let values = (0..root.moves.len()).map(|a| if root.visits[a] == 0 { 0.0 } else { mean(a) }).collect();
        let mut d = decision(&root_eval, &top, top[best], values, root.visits.clone(), thought);
        d.simulations = done;
        Ok(d)
    }

    /// Stockfish at `depth` choosing among the shortlist (UCI `searchmoves`).
    fn select(&mut self, pos: &Chess, depth: u32, engine: &mut Supervised) -> Result<Decision> {
        let (root, top, thought) = self.root(pos)?;
        let ucis: Vec<String> = top.iter().map(|&i| flychess_brain::chess::uci(&root.moves[i])).collect();
        let fen = Fen::from_position(pos, EnPassantMode::Legal).to_string();
        let lines = engine.analyse_among(&fen, Limit::Depth(depth), 1, &ucis, Duration::from_secs(120))?;
        let uci = lines.first().map(|l| l.uci.clone()).ok_or_else(|| Error::Invalid(format!("Stockfish gave no move for {fen}")))?;
        let pick = ucis
            .iter()
            .position(|u| *u == uci)
            .ok_or_else(|| Error::Invalid(format!("Stockfish chose {uci}, not one of {}", ucis.join(" "))))?;
        Ok(decision(&root, &top, top[pick], Vec::new(), Vec::new(), thought))
    }
}

/// The judge's weights tried on VAL (∞ would let the value alone decide among the five).
pub const JUDGE_WEIGHTS: [f32; 8] = [0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0];
/// VAL positions the judge's weight is chosen on.
pub const JUDGE_TUNING_POSITIONS: usize = 256;

/// How the judge did at each weight on VAL positions, and the weight chosen: most good moves,
/// then most top-1, then the smaller weight (imagination's rule).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JudgeTuning {
    pub positions: usize,
    pub weights: Vec<f32>,
    pub top1: Vec<usize>,
    pub good: Vec<usize>,
    pub chosen: f32,
}

/// The judge at every weight of `JUDGE_WEIGHTS` on `rows` (VAL: never HOLD), each position's
/// boards thought once; `progress` after each position.
pub fn tune_judge(evaluator: Evaluator, rows: &[flychess_fly::data::Row], progress: &dyn Fn()) -> Result<JudgeTuning> {
    let (mut top1, mut good) = (vec![0; JUDGE_WEIGHTS.len()], vec![0; JUDGE_WEIGHTS.len()]);
    for row in rows {
        let pos = flychess_brain::chess::position_from_fen(&row.fen)?;
        let target = flychess_fly::scoring::Target::of(row)?;
        let moves: Vec<Move> = pos.legal_moves().into_iter().collect();
        let mut searcher = Searcher::new(evaluator);
        for (k, &w) in JUDGE_WEIGHTS.iter().enumerate() {
            let chosen = searcher.judge(&pos, &[], w)?.chosen;
            let i = moves.iter().position(|m| *m == chosen).expect("the judge plays a legal move");
            top1[k] += usize::from(i == target.best);
            good[k] += usize::from(target.good.contains(&i));
        }
        progress();
    }
    let best = (0..JUDGE_WEIGHTS.len()).max_by(|&a, &b| (good[a], top1[a]).cmp(&(good[b], top1[b])).then(b.cmp(&a))).expect("weights");
    Ok(JudgeTuning { positions: rows.len(), weights: JUDGE_WEIGHTS.to_vec(), top1, good, chosen: JUDGE_WEIGHTS[best] })
}

/// Adds one visit of value `v` (from the last edge's mover's side) along `path`, the sign
/// turning at every ply; `virtual_loss`: the path carried one, taken off now.
fn backup(nodes: &mut [Node], path: &[(usize, usize)], mut v: f32, virtual_loss: bool) {
    for &(n, a) in path.iter().rev() {
        let node = &mut nodes[n];
        if virtual_loss {
            node.virtual_loss[a] -= 1;
        }
        node.visits[a] += 1;
        node.total[a] += v;
        v = -v;
    }
}

fn decision(root: &Evaluation, top: &[usize], chosen: usize, value: Vec<f32>, visits: Vec<u32>, boards_thought: usize) -> Decision {
    let uci = |i: usize| flychess_brain::chess::uci(&root.moves[i]);
    Decision {
        chosen: root.moves[chosen],
        chosen_uci: uci(chosen),
        shortlist: top.iter().map(|&i| uci(i)).collect(),
        prior: top.iter().map(|&i| root.prior[i]).collect(),
        value,
        visits,
        boards_thought,
        simulations: 0,
        seconds: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aid_names_read_back_and_bad_ones_say_what_is_wrong() {
        for aid in [Aid::Judge { weight: 2.0 }, Aid::Search { simulations: 64 }, Aid::Search { simulations: 8 }, Aid::Select { depth: 4 }] {
            assert_eq!(
                Aid::parse(&aid.suffix()).unwrap().unwrap(),
                if matches!(aid, Aid::Judge { .. }) { Aid::Judge { weight: 1.0 } } else { aid }
            );
        }
        assert_eq!(Aid::parse("search").unwrap().unwrap(), Aid::Search { simulations: DEFAULT_SIMULATIONS });
        assert!(Aid::parse("imagination").is_none());
        assert!(Aid::parse("searchlots").unwrap().unwrap_err().to_string().contains("+search64"));
        assert!(Aid::parse("sf0").unwrap().is_err());
        // Settings that change the moves change the id.
        assert_ne!(Aid::Judge { weight: 1.0 }.id_part(), Aid::Judge { weight: 2.0 }.id_part());
        assert_ne!(Aid::Search { simulations: 64 }.id_part(), Aid::Search { simulations: 65 }.id_part());
    }

    #[test]
    fn the_shortlist_is_the_most_probable_first_ties_in_order() {
        assert_eq!(shortlist(&[0.1, 0.3, 0.05, 0.3, 0.2, 0.05], 5), vec![1, 3, 4, 0, 2]);
        assert_eq!(shortlist(&[0.5, 0.5], 5), vec![0, 1]);
    }

    fn node(prior: Vec<f32>, value: f32) -> Node {
        let moves: Vec<Move> = Chess::default().legal_moves().into_iter().take(prior.len()).collect();
        let e = Evaluation { moves: moves.clone(), prior, value };
        Node::new(Chess::default(), &e, Vec::new())
    }

    #[test]
    fn puct_explores_by_prior_then_follows_the_value() {
        let mut n = node(vec![0.6, 0.3, 0.1], 0.0);
        // Nothing visited: the prior leads.
        assert_eq!(n.select(), 0);
        // The favourite keeps losing, the second wins: the second is chosen.
        n.visits = vec![10, 1, 0];
        n.total = vec![-9.0, 1.0, 0.0];
        assert_eq!(n.select(), 1);
        // Virtual losses push the next leaf elsewhere.
        n.virtual_loss = vec![0, 20, 0];
        assert_eq!(n.select(), 2);
    }

    #[test]
    fn a_visit_backs_up_with_the_sign_turning_every_ply() {
        let mut nodes = vec![node(vec![0.5, 0.5], 0.0), node(vec![0.5, 0.5], 0.0), node(vec![1.0], 0.0)];
        let path = [(0, 1), (1, 0), (2, 0)];
        for &(n, a) in &path {
            nodes[n].virtual_loss[a] += 1;
        }
        backup(&mut nodes, &path, 0.75, true);
        assert_eq!((nodes[2].total[0], nodes[1].total[0], nodes[0].total[1]), (0.75, -0.75, 0.75));
        assert!(nodes.iter().all(|n| n.virtual_loss.iter().all(|&l| l == 0)));
        assert_eq!(nodes[0].visits, vec![0, 1]);
    }

    #[test]
    fn the_rules_settle_mates_dead_draws_and_boards_seen_before() {
        let mated = flychess_brain::chess::position_from_fen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3").unwrap();
        assert_eq!(rules_value(&mated, &[]), Some(-1.0));
        let start = Chess::default();
        assert_eq!(rules_value(&start, &[]), None);
        assert_eq!(rules_value(&start, &[position_key(&start)]), Some(0.0));
    }
}
