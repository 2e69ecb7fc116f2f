//! How the dopamine fly learns: the three-factor rule, no gradients (seed "The maths" 10). A
//! plastic synapse Kenyon cell k → MBON n changes only when three things meet at it: k was active
//! (its tag), dopamine arrived, and that kind of dopamine neuron reaches n's compartment (ρ from the
//! connectome). Dopamine only weakens, by a share of the synapse's measured strength, and after
//! every dose every synapse drifts back a little towards that strength, so 0 ≤ M ≤ M⁰ always.
//!
//! - **Tutor lessons** (the default): the board after Stockfish's move gets sugar (PAM), the board
//!   after another legal move a shock (PPL1); the dose is the chance the fly would still prefer the
//!   other one, so lessons it already gets right stop teaching it; tags are averaged over the batch.
//! - **Games**: eligibility traces over the fly's own moves (decay 0.8), dopamine from the material
//!   won or lost in between and a check, ±1 at the end of a game.
//!
//! Pilots change one thing at a time (`Rule`): silent synapses strengthening, harder lessons later.

use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Color, Move, Position, Role};

use super::{BioBrain, sigmoid, vote_probabilities};
use crate::error::{Error, Result};
use crate::play::rules_ending;
use crate::players::Player;
use flychess_brain::chess::{Planes, planes_from, position_from_fen};
use flychess_fly::data::Row;
use flychess_fly::readout::position_key;
use flychess_fly::stats::Dice;

/// What a lesson shows: the board after the good move and after the bad one, both from the side
/// that moved.
#[derive(Clone, Debug, PartialEq)]
pub struct Lesson {
    pub good: Planes,
    pub bad: Planes,
}

/// Changes to the rule a pilot tries (the default: the seed's rule as it is).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// Synapses of Kenyon cells silent in every lesson of a batch (r̂ never above
    /// `comic::FIRING`) get stronger (up to M⁰) by the batch's mean dose (Berry et al. 2018:
    /// dopamine potentiates the untagged).
    pub strengthen_silent: bool,
    /// From this lesson on, the bad move is Stockfish's second best instead of a random one.
    pub harder_after: Option<usize>,
    /// The dose each compartment gets comes from the fly's own dopamine neurons' rates for the
    /// lesson's boards (PAM after the good move, PPL1 after the bad, MBON feedback included:
    /// Felsenberg et al. 2017) instead of the connectome's fixed shares ρ.
    #[serde(default)]
    pub own_dopamine: bool,
}

/// The board after `m` from `us`'s side.
pub fn after(pos: &Chess, m: Move, us: Color) -> Planes {
    let mut p = pos.clone();
    p.play_unchecked(m);
    planes_from(&p, us)
}

/// The legal move of `pos` written `uci` (standard castling notation, as the labels are).
pub fn legal_move(pos: &Chess, uci: &str) -> Option<Move> {
    flychess_brain::chess::legal_by_uci(pos, uci)
}

/// The lesson of a labelled position: the board after Stockfish's best move and after another
/// legal move drawn with `dice` (`harder`: the second best labelled move). None when there is no
/// other move to compare with.
pub fn lesson(row: &Row, dice: &mut Dice, harder: bool) -> Result<Option<Lesson>> {
    let pos = position_from_fen(&row.fen)?;
    let us = pos.turn();
    let Some(best) = row.moves.first() else { return Ok(None) };
    let good = legal_move(&pos, &best.mv.uci())
        .ok_or_else(|| Error::Invalid(format!("{}: labelled move {} is not legal", row.fen, best.mv.uci())))?;
    let bad = if harder {
        match row.moves.get(1).and_then(|m| legal_move(&pos, &m.mv.uci())) {
            Some(m) => m,
            None => return Ok(None),
        }
    } else {
        let others: Vec<Move> = pos.legal_moves().into_iter().filter(|m| *m != good).collect();
        if others.is_empty() {
            return Ok(None);
        }
        others[dice.below(others.len())]
    };
    Ok(Some(Lesson { good: after(&pos, good, us), bad: after(&pos, bad, us) }))
}

/// What one batch of tutor lessons did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchReport {
    /// Share of the batch's pairs the fly had right before the dose (ties half).
    pub pairs_right: f64,
    /// Mean dose π (the chance it would still prefer the bad board).
    pub mean_dose: f64,
}

/// One batch of tutor lessons through the rule: sugar (PAM) for the good boards, a shock (PPL1)
/// for the bad ones, each Kenyon cell tagged by its r̂ times the lesson's dose, averaged over the
/// batch; then weaken and drift back.
pub fn tutor(bio: &BioBrain, m: &mut [f32], lessons: &[Lesson], rule: Rule) -> BatchReport {
    let n = lessons.len();
    if n == 0 {
        return BatchReport::default();
    }
    let boards: Vec<Planes> = lessons.iter().map(|l| l.good).chain(lessons.iter().map(|l| l.bad)).collect();
    let g = bio.look_reading(m, &boards, if rule.own_dopamine { &bio.body.dopamine } else { &[] });
    let t = bio.constants.temperature;
    let k = bio.body.kenyon.len();
    let (mut sugar, mut shock) = (vec![0f32; k], vec![0f32; k]);
    let (mut right, mut dose_sum) = (0.0, 0.0);
    for b in 0..n {
        let (good, bad) = (g.vote[b], g.vote[n + b]);
        right += if good > bad {
            1.0
        } else if good == bad {
            0.5
        } else {
            0.0
        };
        let dose = sigmoid(((bad - good) / t).clamp(-30.0, 30.0));
        dose_sum += dose as f64;
        for kc in 0..k {
            sugar[kc] += dose * g.kc(kc, b);
            shock[kc] += dose * g.kc(kc, n + b);
        }
    }
    for v in sugar.iter_mut().chain(shock.iter_mut()) {
        *v /= n as f32;
    }
    let mean_dose = (dose_sum / n as f64) as f32;
    if rule.own_dopamine {
        own_dopamine(bio, m, &g, n);
        return BatchReport { pairs_right: right / n as f64, mean_dose: dose_sum / n as f64 };
    }
    if rule.strengthen_silent {
        // Silent: the cell fired for no board of the batch (r̂ never above the comic's threshold;
        // with the sigmoid cut no r̂ is exactly 0). Its tags are left out, and its synapses gain.
        let silent: Vec<bool> = (0..k).map(|kc| (0..2 * n).all(|b| g.kc(kc, b) <= super::comic::FIRING)).collect();
        for kc in (0..k).filter(|&kc| silent[kc]) {
            (sugar[kc], shock[kc]) = (0.0, 0.0);
        }
    }
    weaken(bio, m, &sugar, &shock, rule.strengthen_silent.then_some(mean_dose));
    BatchReport { pairs_right: right / n as f64, mean_dose: dose_sum / n as f64 }
}

/// The own-dopamine pilot's update for a batch of n lessons looked at in `g` (good boards first,
/// then bad, with the dopamine neurons read):
/// Mₖₙ ← Mₖₙ − η M⁰ₖₙ · mean_b πᵦ (r̂ₖ(goodᵦ) Dᴾᴬᴹₙ(goodᵦ) + r̂ₖ(badᵦ) Dᴾᴾᴸ¹ₙ(badᵦ)),
/// D the dopamine neurons' rates weighted by their synapses onto n; then the drift back as always.
fn own_dopamine(bio: &BioBrain, m: &mut [f32], g: &super::Glance, n: usize) {
    let body = &bio.body;
    let (eta, kappa, t) = (bio.constants.eta, bio.constants.kappa, bio.constants.temperature);
    let dose: Vec<f32> = (0..n).map(|b| sigmoid(((g.vote[n + b] - g.vote[b]) / t).clamp(-30.0, 30.0))).collect();
    for i in 0..body.mbon.len() {
        // This compartment's dopamine for every board: PAM's after the good, PPL1's after the bad.
        let delivered = |board: usize, pam: bool| -> f32 {
            body.dopamine_inputs[i]
                .iter()
                .filter(|d| d.2 == pam)
                .map(|&(d, share, _)| share * g.reading[d as usize * g.batch + board])
                .sum()
        };
        let sugar: Vec<f32> = (0..n).map(|b| dose[b] * delivered(b, true)).collect();
        let shock: Vec<f32> = (0..n).map(|b| dose[b] * delivered(n + b, false)).collect();
        for e in body.edges(i) {
            let kc = body.edge_kc[e] as usize;
            let tag: f32 = (0..n).map(|b| sugar[b] * g.kc(kc, b) + shock[b] * g.kc(kc, n + b)).sum::<f32>() / n as f32;
            let v = m[e] - eta * body.m0[e] * tag;
            m[e] = (v + kappa * (body.m0[e] - v)).max(0.0);
        }
    }
}

/// Mₖₙ ← Mₖₙ − η M⁰ₖₙ (sugarₖ ρᴾᴬᴹₙ + shockₖ ρᴾᴾᴸ¹ₙ), then Mₖₙ ← max(0, Mₖₙ + κ (M⁰ₖₙ − Mₖₙ)).
/// With `silent_dose`, a synapse whose Kenyon cell carried no tag gains η M⁰ times that dose
/// instead (kept at most M⁰).
pub fn weaken(bio: &BioBrain, m: &mut [f32], sugar: &[f32], shock: &[f32], silent_dose: Option<f32>) {
    let body = &bio.body;
    let (eta, kappa) = (bio.constants.eta, bio.constants.kappa);
    for i in 0..body.mbon.len() {
        let (pam, ppl1) = (body.rho_pam[i], body.rho_ppl1[i]);
        for e in body.edges(i) {
            let kc = body.edge_kc[e] as usize;
            let m0 = body.m0[e];
            let tag = sugar[kc] * pam + shock[kc] * ppl1;
            let mut v = m[e] - eta * m0 * tag;
            if let Some(d) = silent_dose
                && sugar[kc] == 0.0
                && shock[kc] == 0.0
            {
                v = (v + eta * m0 * d * pam.max(ppl1)).min(m0);
            }
            m[e] = (v + kappa * (m0 - v)).max(0.0);
        }
    }
}

/// Material from `us`'s side: pawn 1, knight and bishop 3, rook 5, queen 9, own minus the other's.
pub fn material(pos: &Chess, us: Color) -> f32 {
    pos.board()
        .clone()
        .into_iter()
        .map(|(_, p)| {
            let v = match p.role {
                Role::Pawn => 1.0,
                Role::Knight | Role::Bishop => 3.0,
                Role::Rook => 5.0,
                Role::Queen => 9.0,
                Role::King => 0.0,
            };
            if p.color == us { v } else { -v }
        })
        .sum()
}

/// How a training game went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainingGame {
    /// The fly's score: 1 win, ½ draw, 0 loss.
    pub score: f64,
    pub plies: usize,
    pub doses: usize,
    pub fly_white: bool,
}

/// One game against `opponent` in games mode: the fly draws each move from P = softmax(A/T), every
/// Kenyon cell's trace eₖ ← 0.8 eₖ + r̂ₖ(board after the fly's move), and after each reply the
/// dopamine δ = 0.1 Δmaterial − 0.05·[in check] goes through the rule with the trace as the tag;
/// at the end δ = +1, −1 or 0. A game longer than `max_plies` is a draw.
pub fn game(
    bio: &BioBrain,
    m: &mut [f32],
    opponent: &mut Player,
    fly_white: bool,
    dice: &mut Dice,
    max_plies: usize,
) -> Result<TrainingGame> {
    let us = if fly_white { Color::White } else { Color::Black };
    let c = bio.constants;
    let mut pos = Chess::default();
    let mut keys = vec![position_key(&pos)];
    let mut trace = vec![0f32; bio.body.kenyon.len()];
    let (mut plies, mut doses) = (0, 0);
    let mut before: Option<f32> = None;
    let score = loop {
        if let Some(end) = rules_ending(&pos, &keys) {
            break match end.result {
                "1-0" if fly_white => 1.0,
                "0-1" if !fly_white => 1.0,
                "1/2-1/2" => 0.5,
                _ => 0.0,
            };
        }
        if plies >= max_plies {
            break 0.5;
        }
        let mover = pos.turn();
        let mv = if mover == us {
            // A reply came in since the fly's last move: its dopamine first.
            if let Some(start) = before.take() {
                let delta = c.per_pawn * (material(&pos, us) - start) + if pos.is_check() { c.in_check } else { 0.0 };
                dose(bio, m, &trace, delta);
                doses += 1;
            }
            before = Some(material(&pos, us));
            let moves: Vec<Move> = pos.legal_moves().into_iter().collect();
            let boards: Vec<Planes> = moves.iter().map(|&mv| after(&pos, mv, us)).collect();
            let g = bio.look(m, &boards);
            let i = dice.sample(&vote_probabilities(&g.vote, c.temperature));
            for (k, e) in trace.iter_mut().enumerate() {
                *e = c.trace_decay * *e + g.kc(k, i);
            }
            moves[i]
        } else {
            opponent.choose(&pos, &keys)?
        };
        pos.play_unchecked(mv);
        keys.push(position_key(&pos));
        plies += 1;
    };
    dose(bio, m, &trace, (2.0 * score - 1.0) as f32);
    Ok(TrainingGame { score, plies, doses: doses + 1, fly_white })
}

/// One dose δ with `tag`: PAM for δ > 0, PPL1 for δ < 0, none for 0 (the drift still applies).
pub fn dose(bio: &BioBrain, m: &mut [f32], tag: &[f32], delta: f32) {
    let reward: Vec<f32> = tag.iter().map(|&e| e * delta.max(0.0)).collect();
    let punish: Vec<f32> = tag.iter().map(|&e| e * (-delta).max(0.0)).collect();
    weaken(bio, m, &reward, &punish, None);
}
