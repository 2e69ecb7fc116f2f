//! A small random brain with an eye and a homeostasis, for the engine tests.

use flychess_brain::brain::{Brain, Homeostasis, STEPS};
use flychess_brain::eye::{EyeCell, EyeRole};

/// A small random brain: signed weights, an eye, and an arbitrary homeostasis.
pub fn small_brain(seed: u64) -> Brain {
    small_brain_hearing(seed, None)
}

/// `reach: Some(k)`: neuron j hears only neurons j − k .. j − 1 (and the eye sits on the first
/// neurons), so the board's influence spreads by about k neurons a step.
pub fn small_brain_hearing(seed: u64, reach: Option<usize>) -> Brain {
    let mut s = seed;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let n = 400;
    let mut row_start = vec![0u32];
    let (mut pre, mut weight) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let k = 5 + (rnd() * 30.0) as usize;
        let j = row_start.len() - 1;
        let (from, span) = match reach {
            Some(k) => (j.saturating_sub(k), j.min(k)),
            None => (0, n),
        };
        let mut senders: Vec<u32> = (0..k * (span > 0) as usize).map(|_| (from + (rnd() * span as f64) as usize) as u32).collect();
        senders.sort();
        senders.dedup();
        for p in senders {
            pre.push(p);
            let sign = if rnd() < 0.3 { -1.0 } else { 1.0 };
            weight.push(sign * (0.02 + rnd() * 0.2) as f32);
        }
        row_start.push(pre.len() as u32);
    }
    let eye: Vec<EyeCell> = (0..60)
        .map(|i| EyeCell {
            neuron: if reach.is_some() { i } else { i * 3 },
            square: (rnd() * 64.0) as u8,
            role: EyeRole::from_u8((rnd() * 8.0) as u8).unwrap(),
        })
        .collect();
    let mut b = Brain::from_parts(n, row_start, pre, weight, eye);
    b.set_homeostasis(Homeostasis {
        neurons: n,
        mu: (0..STEPS * n).map(|_| (rnd() - 0.5) as f32).collect(),
        sigma: (0..STEPS * n).map(|_| (0.05 + rnd()) as f32).collect(),
    });
    b
}
