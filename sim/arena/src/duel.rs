//! How two players compare when they meet over paired openings (Philidor's bench, seed `001`
//! §2): each opening is played twice with colours swapped, and the pair of games is the unit of
//! measurement (the pentanomial: 0, ½, 1, 1½ or 2 points for the first player), which takes the
//! opening's own bias out of the variance. The score's 95 % interval is Student's over the pair
//! scores (sample variance, n − 1 degrees of freedom: a short duel whose few decisive pairs went
//! one way is not called a difference, as the normal interval would); the Elo difference and its
//! interval are the logistic Elo of the score and of the interval's ends. The sequential test (SPRT) is the generalised one on the same pair scores
//! (normal approximation, as Fishtest's pentanomial GSPRT): log-likelihood ratio of "the first is
//! `elo1` better" against "it is `elo0` better", stopped at Wald's bounds for α and β.

use serde::{Deserialize, Serialize};

use flychess_fly::stats::Z95;

/// The logistic Elo difference of a score share (clamped to (0, 1) by `edge`).
pub fn elo_of(score: f64, edge: f64) -> f64 {
    let s = score.clamp(edge, 1.0 - edge);
    -400.0 * (1.0 / s - 1.0).log10()
}

/// The expected score share of an Elo difference.
pub fn score_of(elo: f64) -> f64 {
    1.0 / (1.0 + libm::pow(10.0, -elo / 400.0))
}

/// Student's t for a two-sided 95 % interval with `dof` degrees of freedom: exact table values
/// up to 9, then the Cornish–Fisher expansion around the normal quantile (within 0.002 of the
/// table from 10 on).
pub fn t95(dof: usize) -> f64 {
    match dof {
        0 | 1 => 12.706,
        2 => 4.303,
        3 => 3.182,
        4 => 2.776,
        5 => 2.571,
        6 => 2.447,
        7 => 2.365,
        8 => 2.306,
        9 => 2.262,
        _ => {
            let (z, v) = (Z95, dof as f64);
            z + (z.powi(3) + z) / (4.0 * v)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
                + (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / (384.0 * v * v * v)
        }
    }
}

/// A duel's figures from the first player's side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Duel {
    /// Openings with both games played.
    pub pairs: usize,
    /// How many pairs scored 0, ½, 1, 1½ and 2 points for the first player.
    pub pentanomial: [usize; 5],
    /// The first player's share of the points, with its 95 % interval.
    pub score: f64,
    pub score_low: f64,
    pub score_high: f64,
    /// The Elo difference (first minus second) and its 95 % interval. A score of 0 or 1 is
    /// clamped a quarter of a pair inside, so a sweep gives a large but finite figure.
    pub elo: f64,
    pub elo_low: f64,
    pub elo_high: f64,
}

impl Duel {
    /// The figures of these pair scores (each 0 … 1: the first player's share of a pair's points).
    pub fn of(pair_scores: &[f64]) -> Duel {
        let n = pair_scores.len();
        let mut pentanomial = [0usize; 5];
        for &x in pair_scores {
            pentanomial[((x * 4.0).round() as usize).min(4)] += 1;
        }
        if n == 0 {
            return Duel {
                pairs: 0,
                pentanomial,
                score: 0.5,
                score_low: 0.0,
                score_high: 1.0,
                elo: 0.0,
                elo_low: f64::NEG_INFINITY,
                elo_high: f64::INFINITY,
            };
        }
        let mean = pair_scores.iter().sum::<f64>() / n as f64;
        // Pairs that all scored the same have no sample variance, and a zero-width interval would
        // call a difference after one or two pairs. The variance is never taken below what one
        // more pair at an even score (a pseudo-pair in the spread, not in the mean) would give:
        // real duels' sample variance is far above it, a sweep of n pairs gets width ~1/√n.
        let spread = pair_scores.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>();
        let floor = (spread + (0.5 - mean) * (0.5 - mean)) / n as f64;
        let variance = (spread / (n.max(2) - 1) as f64).max(floor);
        let half = t95(n.saturating_sub(1).max(1)) * (variance / n as f64).sqrt();
        let edge = 1.0 / (4.0 * n as f64 + 1.0);
        let (low, high) = ((mean - half).max(0.0), (mean + half).min(1.0));
        Duel {
            pairs: n,
            pentanomial,
            score: mean,
            score_low: low,
            score_high: high,
            elo: elo_of(mean, edge),
            elo_low: elo_of(low, edge),
            elo_high: elo_of(high, edge),
        }
    }

    /// True when the 95 % interval of the score holds 50 % (no difference shown).
    pub fn holds_even(&self) -> bool {
        self.score_low <= 0.5 && 0.5 <= self.score_high
    }
}

/// The sequential test's settings: H0 "the first is `elo0` better", H1 "`elo1` better", error
/// rates α (accepting H1 when H0 holds) and β.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// Where a sequential test stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtState {
    pub llr: f64,
    pub lower: f64,
    pub upper: f64,
    /// "H1" (the first is at least `elo1` better), "H0", or "continue".
    pub verdict: String,
}

impl Sprt {
    /// Wald's bounds: (ln(β/(1−α)), ln((1−β)/α)).
    pub fn bounds(&self) -> (f64, f64) {
        (libm::log(self.beta / (1.0 - self.alpha)), libm::log((1.0 - self.beta) / self.alpha))
    }

    /// The log-likelihood ratio of the pair scores under H1 against H0 (normal approximation:
    /// N·(s1 − s0)·(2·mean − s0 − s1) / (2·variance)). The pentanomial's empty cells get a
    /// thousandth of a pair each before the variance is taken, so a sweep does not divide by 0.
    pub fn state(&self, pair_scores: &[f64]) -> SprtState {
        let (lower, upper) = self.bounds();
        let n = pair_scores.len();
        let llr = if n == 0 {
            0.0
        } else {
            let mut counts = [0f64; 5];
            for &x in pair_scores {
                counts[((x * 4.0).round() as usize).min(4)] += 1.0;
            }
            for c in &mut counts {
                if *c == 0.0 {
                    *c = 1e-3;
                }
            }
            let total: f64 = counts.iter().sum();
            let value = |k: usize| k as f64 / 4.0;
            let mean = (0..5).map(|k| counts[k] * value(k)).sum::<f64>() / total;
            let variance = (0..5).map(|k| counts[k] * (value(k) - mean).powi(2)).sum::<f64>() / total;
            let (s0, s1) = (score_of(self.elo0), score_of(self.elo1));
            n as f64 * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * variance)
        };
        let verdict = if llr >= upper {
            "H1"
        } else if llr <= lower {
            "H0"
        } else {
            "continue"
        };
        SprtState { llr, lower, upper, verdict: verdict.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_pairs_hold_fifty_percent_and_elo_follows_the_logistic_curve() {
        let d = Duel::of(&[0.5, 0.25, 0.75, 0.5, 0.5, 0.5]);
        assert_eq!(d.pentanomial, [0, 1, 4, 1, 0]);
        assert!((d.score - 0.5).abs() < 1e-12 && d.elo.abs() < 1e-9 && d.holds_even());
        assert!(d.elo_low < 0.0 && d.elo_high > 0.0);
        // 75 % is 400·log10(3) ≈ 190.8 Elo.
        assert!((elo_of(0.75, 1e-9) - 190.848).abs() < 0.01);
        assert!((score_of(elo_of(0.3, 1e-9)) - 0.3).abs() < 1e-12);
    }

    #[test]
    fn students_t_matches_its_table() {
        for (dof, t) in [(9, 2.262), (10, 2.228), (12, 2.179), (19, 2.093), (29, 2.045), (100, 1.984)] {
            assert!((t95(dof) - t).abs() < 0.002, "dof {dof}: {} vs {t}", t95(dof));
        }
        // Three decisive pairs out of ten, all one way (a sign test's p = 0.25): no difference.
        let few = Duel::of(&[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.75, 0.75, 0.75]);
        assert!(few.holds_even(), "{few:?}");
    }

    #[test]
    fn a_clear_edge_leaves_fifty_percent_outside_and_a_sweep_stays_finite() {
        let d = Duel::of(&[1.0, 0.75, 1.0, 0.75, 0.5, 1.0, 1.0, 0.75, 1.0, 1.0]);
        assert!(!d.holds_even() && d.elo_low > 0.0, "{d:?}");
        let sweep = Duel::of(&[1.0; 20]);
        assert!(sweep.elo.is_finite() && sweep.elo > 500.0, "{sweep:?}");
        assert!(!sweep.holds_even() && sweep.score_low > 0.9, "{sweep:?}");
    }

    #[test]
    fn one_or_two_pairs_that_scored_the_same_show_no_difference() {
        for pairs in [&[1.0][..], &[1.0, 1.0], &[0.0, 0.0], &[0.75, 0.75]] {
            let d = Duel::of(pairs);
            assert!(d.holds_even() && d.score_high > d.score_low, "{pairs:?}: {d:?}");
        }
        // A real duel's interval is the sample's own (the floor is far below it).
        let real = [0.5, 0.25, 0.75, 0.5, 1.0, 0.5, 0.25, 0.75, 0.5, 0.5];
        let d = Duel::of(&real);
        let mean = real.iter().sum::<f64>() / 10.0;
        let s = (real.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / 9.0).sqrt();
        assert!((d.score_high - (mean + t95(9) * s / 10f64.sqrt())).abs() < 1e-12, "{d:?}");
    }

    #[test]
    fn the_sequential_test_accepts_a_real_edge_and_rejects_none() {
        let t = Sprt { elo0: 0.0, elo1: 50.0, alpha: 0.05, beta: 0.05 };
        let (lo, hi) = t.bounds();
        assert!((hi - (0.95f64 / 0.05).ln()).abs() < 1e-12 && (lo + hi).abs() < 1e-12);
        // 100 pairs scoring 65 %: well past H1.
        let strong: Vec<f64> = (0..100).map(|i| [0.5, 0.75, 0.75, 1.0, 0.25][i % 5]).collect();
        assert_eq!(t.state(&strong).verdict, "H1", "{:?}", t.state(&strong));
        // 400 even pairs: H0.
        let even: Vec<f64> = (0..400).map(|i| [0.5, 0.25, 0.75, 0.5][i % 4]).collect();
        assert_eq!(t.state(&even).verdict, "H0", "{:?}", t.state(&even));
        assert_eq!(t.state(&even[..4]).verdict, "continue");
    }
}
