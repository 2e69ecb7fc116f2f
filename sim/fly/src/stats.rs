//! 95 % intervals for the figures users compare: a rate measured on N positions (Wilson's score
//! interval) and the difference of two players on the same positions (paired: the mean of the
//! per-position differences, normal approximation, which is what makes ±1.3 points enough to
//! tell two flies apart on HOLD's 4,096 positions). Every comparison the CLI prints or the README
//! shows goes through here.

use serde::{Deserialize, Serialize};

/// z for a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// A measured value with its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

impl Estimate {
    /// "31.2 % [29.8, 32.6]" for rates (×100), as users read them.
    pub fn percent(&self) -> String {
        format!("{:.1} % [{:.1}, {:.1}]", 100.0 * self.value, 100.0 * self.low, 100.0 * self.high)
    }
    /// "+8.4 points [7.1, 9.7]" for differences of rates.
    pub fn points(&self) -> String {
        format!("{:+.1} points [{:+.1}, {:+.1}]", 100.0 * self.value, 100.0 * self.low, 100.0 * self.high)
    }
    /// True when the interval leaves out zero.
    pub fn excludes_zero(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }
}

/// A rate of `hits` in `n` trials with Wilson's 95 % score interval.
pub fn rate(hits: usize, n: usize) -> Estimate {
    if n == 0 {
        return Estimate { value: f64::NAN, low: f64::NAN, high: f64::NAN };
    }
    let (all, none) = (hits >= n, hits == 0);
    let (n, p) = (n as f64, hits as f64 / n as f64);
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
    // At the edges the interval ends exactly at 0 or 1 (not a rounding error away).
    let low = if none { 0.0 } else { (centre - half).max(0.0) };
    let high = if all { 1.0 } else { (centre + half).min(1.0) };
    Estimate { value: p, low, high }
}

/// The rate of `true` in `hits`.
pub fn rate_of(hits: &[bool]) -> Estimate {
    rate(hits.iter().filter(|&&h| h).count(), hits.len())
}

/// The mean of `values` with its 95 % interval (normal approximation).
pub fn mean(values: &[f64]) -> Estimate {
    let n = values.len() as f64;
    if values.is_empty() {
        return Estimate { value: f64::NAN, low: f64::NAN, high: f64::NAN };
    }
    let m = values.iter().sum::<f64>() / n;
    let var = if values.len() > 1 { values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
    let half = Z95 * (var / n).sqrt();
    Estimate { value: m, low: m - half, high: m + half }
}

/// A's rate minus B's on the same positions (paired), with its 95 % interval.
pub fn paired_difference(a: &[bool], b: &[bool]) -> Estimate {
    assert_eq!(a.len(), b.len(), "a paired difference needs the same positions");
    let d: Vec<f64> = a.iter().zip(b).map(|(&x, &y)| x as i32 as f64 - y as i32 as f64).collect();
    mean(&d)
}

/// Average ranks (1-based) of `values`, ties sharing the mean of their ranks (Spearman's ρ here,
/// the probes' AUC).
pub fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut rank = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let shared = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            rank[k] = shared;
        }
        i = j + 1;
    }
    rank
}

/// Spearman's rank correlation of two paired lists (Pearson's on their average ranks, so ties are
/// handled), with a 95 % interval from Fisher's z with Bonett and Wright's standard error
/// √((1 + ρ²/2)/(n − 3)). None for fewer than 4 pairs or a list without spread.
pub fn spearman(a: &[f64], b: &[f64]) -> Option<Estimate> {
    let n = a.len().min(b.len());
    if n < 4 {
        return None;
    }
    let (ra, rb) = (ranks(&a[..n]), ranks(&b[..n]));
    let mean = (n as f64 + 1.0) / 2.0;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for k in 0..n {
        let (x, y) = (ra[k] - mean, rb[k] - mean);
        sab += x * y;
        saa += x * x;
        sbb += y * y;
    }
    if saa == 0.0 || sbb == 0.0 {
        return None;
    }
    let rho = (sab / (saa * sbb).sqrt()).clamp(-1.0, 1.0);
    // libm, not the platform's C library: the same bits on Linux and Windows (installer/test-windows).
    let z = libm::atanh(rho.clamp(-0.999_999, 0.999_999));
    let se = ((1.0 + rho * rho / 2.0) / (n as f64 - 3.0)).sqrt();
    Some(Estimate { value: rho, low: libm::tanh(z - Z95 * se), high: libm::tanh(z + Z95 * se) })
}

/// A portable xorshift stream for the random choices of the simple players.
#[derive(Clone, Debug)]
pub struct Dice(u64);

impl Dice {
    pub fn new(seed: u64) -> Dice {
        Dice(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.below(1 << 30) as f64) < p * (1u64 << 30) as f64
    }
    /// An index drawn with the given weights (all zero or not finite: uniformly).
    pub fn sample(&mut self, weights: &[f32]) -> usize {
        let total: f64 = weights.iter().map(|&w| if w.is_finite() { w.max(0.0) as f64 } else { 0.0 }).sum();
        if total <= 0.0 {
            return self.below(weights.len());
        }
        let mut u = self.below(1 << 30) as f64 / (1u64 << 30) as f64 * total;
        for (i, &w) in weights.iter().enumerate() {
            let w = if w.is_finite() { w.max(0.0) as f64 } else { 0.0 };
            if u < w {
                return i;
            }
            u -= w;
        }
        weights.iter().rposition(|&w| w > 0.0).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_ranks_with_ties_and_says_its_interval() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let e = spearman(&a, &[10.0, 20.0, 30.0, 40.0, 50.0, 60.0]).unwrap();
        assert!((e.value - 1.0).abs() < 1e-12);
        let e = spearman(&a, &[6.0, 5.0, 4.0, 3.0, 2.0, 1.0]).unwrap();
        assert!((e.value + 1.0).abs() < 1e-12);
        // Ties share their mean rank: Pearson on the ranks [1..6] and [1.5,1.5,3.5,3.5,5.5,5.5], by hand.
        let e = spearman(&a, &[1.0, 1.0, 2.0, 2.0, 3.0, 3.0]).unwrap();
        assert!((e.value - 0.956_182_887_467_514_9).abs() < 1e-12, "{e:?}");
        assert!(e.low < e.value && e.value < e.high && e.high <= 1.0);
        assert!(spearman(&a, &[1.0; 6]).is_none() && spearman(&a[..3], &a[..3]).is_none());
    }

    #[test]
    fn wilson_interval_matches_the_textbook() {
        // 30 % of 4,096: the normal interval is ±1.40 points; Wilson's is nearly the same there.
        let e = rate(1229, 4096);
        assert!((e.value - 0.30005).abs() < 1e-4);
        assert!((e.high - e.low - 2.0 * 0.0140).abs() < 0.0005, "{e:?}");
        // At the edges it stays inside [0, 1] and is not empty.
        let zero = rate(0, 50);
        assert_eq!(zero.low, 0.0);
        assert!(zero.high > 0.05);
        assert_eq!(rate(50, 50).high, 1.0);
    }

    #[test]
    fn paired_differences_are_tighter_than_unpaired_when_players_agree() {
        // Two players right on the same 1,000 of 4,000 positions, and one more right on 80 others.
        let a: Vec<bool> = (0..4000).map(|i| i < 1080).collect();
        let b: Vec<bool> = (0..4000).map(|i| i < 1000).collect();
        let d = paired_difference(&a, &b);
        assert!((d.value - 0.02).abs() < 1e-12);
        assert!(d.excludes_zero(), "{d:?}");
        // Unpaired, the two rates' intervals overlap.
        assert!(rate_of(&a).low < rate_of(&b).high);
        // No difference: an interval around zero.
        let same = paired_difference(&b, &b);
        assert_eq!((same.low, same.high), (0.0, 0.0));
    }
}
