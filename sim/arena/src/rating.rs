//! Ratings from games (seed "An Elo after all", "The maths" 12–13): a Bradley–Terry model on the
//! Elo scale, P(i beats j) = 1 / (1 + 10^((R_j − R_i)/400)), fitted by maximum likelihood with
//! Newton steps and one anchor held fixed. Every pairing that met gets one virtual draw, so a
//! 20–0 score gives a large but finite gap. 95 % intervals come from refitting on resampled games
//! (the bootstrap, 300 refits by default), each pairing's games drawn again within the pairing
//! (seed: "every pairing's games drawn again"), so every refit keeps every pairing and its size.

/// One game: `white` and `black` index players; `score` is White's (1, ½ or 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    pub white: usize,
    pub black: usize,
    pub score: f64,
}

const SCALE: f64 = std::f64::consts::LN_10 / 400.0;

fn expected(ri: f64, rj: f64) -> f64 {
    1.0 / (1.0 + libm::exp(-(ri - rj) * SCALE))
}

/// The games plus one virtual draw for every pair of players that met.
fn with_virtual_draws(games: &[Outcome]) -> Vec<Outcome> {
    let mut pairs: Vec<(usize, usize)> =
        games.iter().filter(|g| g.white != g.black).map(|g| (g.white.min(g.black), g.white.max(g.black))).collect();
    pairs.sort_unstable();
    pairs.dedup();
    let mut all = games.to_vec();
    all.extend(pairs.into_iter().map(|(a, b)| Outcome { white: a, black: b, score: 0.5 }));
    all
}

/// Maximum-likelihood ratings of `players` with `anchor` fixed at `anchor_elo`. Players connected
/// to the anchor by no chain of games keep the anchor's rating (they cannot be placed).
pub fn fit(players: usize, games: &[Outcome], anchor: usize, anchor_elo: f64) -> Vec<f64> {
    let games = with_virtual_draws(games);
    let mut r = vec![anchor_elo; players];
    let free: Vec<usize> = (0..players).filter(|&i| i != anchor).collect();
    let index: Vec<Option<usize>> = (0..players).map(|i| free.iter().position(|&f| f == i)).collect();
    let m = free.len();
    for _ in 0..100 {
        // Gradient and (negative) Hessian of the log-likelihood in Elo units.
        let mut g = vec![0f64; m];
        let mut h = vec![vec![0f64; m]; m];
        for o in &games {
            if o.white == o.black {
                continue;
            }
            let p = expected(r[o.white], r[o.black]);
            let w = p * (1.0 - p) * SCALE * SCALE;
            let d = (o.score - p) * SCALE;
            if let Some(a) = index[o.white] {
                g[a] += d;
                h[a][a] += w;
            }
            if let Some(b) = index[o.black] {
                g[b] -= d;
                h[b][b] += w;
            }
            if let (Some(a), Some(b)) = (index[o.white], index[o.black]) {
                h[a][b] -= w;
                h[b][a] -= w;
            }
        }
        // Unconnected players: keep them where they are.
        for (a, row) in h.iter_mut().enumerate() {
            if row[a] == 0.0 {
                row[a] = 1.0;
            }
        }
        let Some(step) = solve(h, g) else { break };
        let mut biggest = 0f64;
        for (a, &i) in free.iter().enumerate() {
            // Damped: never more than 400 Elo per step.
            let s = step[a].clamp(-400.0, 400.0);
            r[i] += s;
            biggest = biggest.max(s.abs());
        }
        if biggest < 1e-6 {
            break;
        }
    }
    r
}

/// Solves H x = g by Gaussian elimination with partial pivoting (H is small and dense).
fn solve(mut h: Vec<Vec<f64>>, mut g: Vec<f64>) -> Option<Vec<f64>> {
    let n = g.len();
    for c in 0..n {
        let p = (c..n).max_by(|&a, &b| h[a][c].abs().total_cmp(&h[b][c].abs()))?;
        if h[p][c].abs() < 1e-300 {
            return None;
        }
        h.swap(c, p);
        g.swap(c, p);
        for r in c + 1..n {
            let f = h[r][c] / h[c][c];
            let (above, below) = h.split_at_mut(r);
            for (x, y) in below[0][c..n].iter_mut().zip(&above[c][c..n]) {
                *x -= f * y;
            }
            g[r] -= f * g[c];
        }
    }
    let mut x = vec![0f64; n];
    for c in (0..n).rev() {
        let s: f64 = (c + 1..n).map(|k| h[c][k] * x[k]).sum();
        x[c] = (g[c] - s) / h[c][c];
    }
    Some(x)
}

/// One refit's games: every pairing's games drawn again with replacement within the pairing, as
/// many as it has. Every pairing is in every refit with its own number of games. (A pairing's
/// virtual draw is added by the fit, not drawn here: putting it in the pool pulled every refit
/// towards even and left the estimate outside its own interval. The price: a tiny pairing that
/// was a sweep resamples to the same sweep, so with 2 games a pairing the intervals are too
/// narrow to trust; `rate` says so.)
pub fn resample_within_pairings(games: &[Outcome], next: &mut dyn FnMut() -> u64) -> Vec<Outcome> {
    let mut pairings: std::collections::BTreeMap<(usize, usize), Vec<Outcome>> = std::collections::BTreeMap::new();
    for g in games {
        pairings.entry((g.white.min(g.black), g.white.max(g.black))).or_default().push(*g);
    }
    let mut out = Vec::with_capacity(games.len());
    for within in pairings.values() {
        out.extend((0..within.len()).map(|_| within[(next() % within.len() as u64) as usize]));
    }
    out
}

/// 95 % intervals (2.5th and 97.5th percentiles) of each player's rating over `refits` fits, each
/// on `resample_within_pairings` of the games (a portable xorshift stream seeded by `seed`).
pub fn bootstrap(players: usize, games: &[Outcome], anchor: usize, anchor_elo: f64, refits: usize, seed: u64) -> Vec<(f64, f64)> {
    if games.is_empty() {
        return vec![(anchor_elo, anchor_elo); players];
    }
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(refits); players];
    for _ in 0..refits {
        let resampled = resample_within_pairings(games, &mut next);
        for (i, r) in fit(players, &resampled, anchor, anchor_elo).into_iter().enumerate() {
            samples[i].push(r);
        }
    }
    samples
        .into_iter()
        .map(|mut v| {
            v.sort_by(f64::total_cmp);
            let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
            (at(0.025), at(0.975))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Games between players of known ratings, drawn from the model itself.
    fn simulate(truth: &[f64], per_pair: usize, seed: u64) -> Vec<Outcome> {
        let mut s = seed | 1;
        let mut uniform = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut games = Vec::new();
        for i in 0..truth.len() {
            for j in i + 1..truth.len() {
                for k in 0..per_pair {
                    let (w, b) = if k % 2 == 0 { (i, j) } else { (j, i) };
                    let score = if uniform() < expected(truth[w], truth[b]) { 1.0 } else { 0.0 };
                    games.push(Outcome { white: w, black: b, score });
                }
            }
        }
        games
    }

    #[test]
    fn known_ratings_are_recovered_within_their_intervals() {
        let truth = [1350.0, 1100.0, 1500.0, 800.0];
        let games = simulate(&truth, 200, 7);
        let fitted = fit(4, &games, 0, 1350.0);
        let intervals = bootstrap(4, &games, 0, 1350.0, 300, 11);
        assert_eq!(fitted[0], 1350.0, "the anchor stays put");
        for i in 1..4 {
            let (lo, hi) = intervals[i];
            assert!(lo <= truth[i] && truth[i] <= hi, "player {i}: truth {} outside [{lo:.0}, {hi:.0}] (fit {:.0})", truth[i], fitted[i]);
            assert!(hi - lo < 200.0, "200 games per pair give a usable interval: {:.0}", hi - lo);
        }
    }

    #[test]
    fn every_pairing_is_in_every_refit_and_the_fit_lies_inside_its_interval() {
        // A (the anchor) and B drew 40 games; C lost its only game to B.
        let mut games: Vec<Outcome> = (0..40).map(|k| Outcome { white: k % 2, black: 1 - k % 2, score: 0.5 }).collect();
        games.push(Outcome { white: 1, black: 2, score: 1.0 });
        let mut s = 7u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let count = |g: &[Outcome], a: usize, b: usize| {
            g.iter().filter(|o| o.white.min(o.black) == a.min(b) && o.white.max(o.black) == a.max(b)).count()
        };
        for _ in 0..200 {
            let r = resample_within_pairings(&games, &mut next);
            assert_eq!((count(&r, 0, 1), count(&r, 1, 2)), (40, 1), "each pairing keeps its games");
        }
        // Refits centre on the fit: the estimate lies inside its own interval.
        let fitted = fit(3, &games, 0, 1500.0);
        let intervals = bootstrap(3, &games, 0, 1500.0, 300, 3);
        for i in 1..3 {
            assert!(
                intervals[i].0 <= fitted[i] + 1e-9 && fitted[i] <= intervals[i].1 + 1e-9,
                "player {i}: {} outside {:?}",
                fitted[i],
                intervals[i]
            );
        }
    }

    #[test]
    fn a_clean_sweep_stays_finite_thanks_to_the_virtual_draw() {
        let games: Vec<Outcome> = (0..20)
            .map(|k| if k % 2 == 0 { Outcome { white: 1, black: 0, score: 1.0 } } else { Outcome { white: 0, black: 1, score: 0.0 } })
            .collect();
        let r = fit(2, &games, 0, 1000.0);
        assert!(r[1].is_finite() && r[1] > 1300.0 && r[1] < 2000.0, "{r:?}");
        // 20–0 plus one virtual draw: 20.5 of 21, so 400·log10(20.5/0.5) above the anchor.
        let want = 1000.0 + 400.0 * (20.5f64 / 0.5).log10();
        assert!((r[1] - want).abs() < 0.01, "{} vs {want}", r[1]);
    }

    #[test]
    fn even_scores_give_equal_ratings_and_unplaced_players_stay_at_the_anchor() {
        let games = vec![Outcome { white: 0, black: 1, score: 1.0 }, Outcome { white: 1, black: 0, score: 1.0 }];
        let r = fit(3, &games, 0, 1500.0);
        assert!((r[1] - 1500.0).abs() < 1e-6);
        assert_eq!(r[2], 1500.0);
    }
}
