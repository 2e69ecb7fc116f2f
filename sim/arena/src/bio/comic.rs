//! The lesson comic (seed "How this fly learns chess"): one lesson seen from inside the mushroom
//! body. Which Kenyon cells fire for the board after the good move and after the bad one (how many
//! pass the APL's cut, how many fire for both), how the MBONs vote on each, the dose the lesson
//! carries, how much of the MBONs' input comes from the Kenyon cells against everything else, and
//! which MBONs' Kenyon-cell synapses this one lesson weakens, and by how much.

use serde::{Deserialize, Serialize};

use super::learn::Lesson;
use super::{BioBrain, sigmoid};
use flychess_brain::brain::STEPS;

/// A Kenyon cell "fires" for a board when its r̂ (after the cut) is above this.
pub const FIRING: f32 = 0.01;

/// One MBON in the comic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MbonChange {
    /// Index into the mushroom body's MBONs, and the neuron.
    pub index: usize,
    pub neuron: u32,
    /// +1 approach, −1 avoid.
    pub valence: f32,
    pub rho_pam: f32,
    pub rho_ppl1: f32,
    /// Its rate at step 12 after the good and after the bad move.
    pub rate_good: f32,
    pub rate_bad: f32,
    /// Σ M over its Kenyon-cell synapses before the lesson, and the change the lesson's dopamine
    /// makes (the rule's weakening, before the slow drift back every batch also gets).
    pub strength: f32,
    pub change: f32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LessonComic {
    pub kenyon_cells: usize,
    pub passing: usize,
    pub fire_good: usize,
    pub fire_bad: usize,
    pub fire_both: usize,
    pub vote_good: f32,
    pub vote_bad: f32,
    /// π: the chance the fly would still prefer the bad board (the lesson's dose).
    pub dose: f32,
    /// Mean over MBONs and both boards of |Kenyon-cell input| / (|Kenyon-cell input| + |the rest|)
    /// at step 12.
    pub kenyon_share: f32,
    /// Every MBON, the most changed first.
    pub mbons: Vec<MbonChange>,
}

/// The comic of `lesson` for the fly with strengths `m` (`m` itself is not changed).
pub fn comic(bio: &BioBrain, m: &[f32], lesson: &Lesson) -> LessonComic {
    let g = bio.glance(m, &[lesson.good, lesson.bad], true);
    let rates = g.rates.as_ref().expect("kept");
    let k = bio.body.kenyon.len();
    let fires = |b: usize| (0..k).filter(|&i| g.kc(i, b) > FIRING).collect::<Vec<_>>();
    let (good, bad) = (fires(0), fires(1));
    let both = good.iter().filter(|i| bad.binary_search(i).is_ok()).count();
    // The MBONs' input at step 12: Kenyon cells (M r̂ of step 11) against the rest (W′ r + x).
    let prev: Vec<f32> = rates.step(STEPS - 2).to_vec();
    let hat = bio.body.sparse_kenyon(&prev, 2, bio.constants.cut_width);
    let x = bio.brain.eye_input(&[lesson.good, lesson.bad]);
    let mut shares = Vec::new();
    for (i, &nid) in bio.body.mbon.iter().enumerate() {
        for b in 0..2 {
            let kc: f32 = bio.body.edges(i).map(|e| m[e] * hat[bio.body.edge_kc[e] as usize * 2 + b]).sum();
            let mut rest: f32 = bio.brain.row(nid as usize).map(|e| bio.brain.weight[e] * prev[bio.brain.pre[e] as usize * 2 + b]).sum();
            if bio.brain.eye_slot[nid as usize] != flychess_brain::brain::NO_EYE {
                rest += x[bio.brain.eye_slot[nid as usize] as usize * 2 + b];
            }
            if kc.abs() + rest.abs() > 0.0 {
                shares.push(kc.abs() / (kc.abs() + rest.abs()));
            }
        }
    }
    // The lesson's own dose (no drift back): sugar tags the good board's cells for PAM, the shock
    // the bad board's for PPL1, each by the dose π; a synapse never goes below 0.
    let dose = sigmoid(((g.vote[1] - g.vote[0]) / bio.constants.temperature).clamp(-30.0, 30.0));
    let eta = bio.constants.eta;
    let change_of = |i: usize| -> f32 {
        bio.body
            .edges(i)
            .map(|e| {
                let kc = bio.body.edge_kc[e] as usize;
                let tag = dose * g.kc(kc, 0) * bio.body.rho_pam[i] + dose * g.kc(kc, 1) * bio.body.rho_ppl1[i];
                (-eta * bio.body.m0[e] * tag).max(-m[e])
            })
            .sum()
    };
    let mut mbons: Vec<MbonChange> = bio
        .body
        .mbon
        .iter()
        .enumerate()
        .map(|(i, &neuron)| {
            let strength: f32 = m[bio.body.edges(i)].iter().sum();
            MbonChange {
                index: i,
                neuron,
                valence: bio.body.valence[i],
                rho_pam: bio.body.rho_pam[i],
                rho_ppl1: bio.body.rho_ppl1[i],
                rate_good: g.mbon[i * 2],
                rate_bad: g.mbon[i * 2 + 1],
                strength,
                change: change_of(i),
            }
        })
        .collect();
    mbons.sort_by(|a, b| a.change.total_cmp(&b.change).then(a.index.cmp(&b.index)));
    LessonComic {
        kenyon_cells: k,
        passing: bio.body.pass,
        fire_good: good.len(),
        fire_bad: bad.len(),
        fire_both: both,
        vote_good: g.vote[0],
        vote_bad: g.vote[1],
        dose,
        kenyon_share: if shares.is_empty() { 0.0 } else { shares.iter().sum::<f32>() / shares.len() as f32 },
        mbons,
    }
}
