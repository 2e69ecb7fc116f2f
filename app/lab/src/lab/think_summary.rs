//! What one think did, region by region: the mean rate of each of the 18 regions at each step,
//! how much the board moved each region (against the same brain's think of an empty board), and
//! the words the views put on them (a step's caption, a step's sentence). Worked out from a
//! think's rates alone, for the brain view, the classroom, the figures and `flychess figure`.

use flychess_brain::connectome::Connectome;
use flychess_brain::connectome::rules::Region;

use crate::thinker::Thought;

/// Mean rate per region at each step of `rates` (`steps × neurons`).
pub fn region_means(rates: &[f32], connectome: &Connectome) -> Vec<[f32; Region::COUNT]> {
    let regions = &connectome.neurons.region;
    let n = regions.len().max(1);
    let mut counts = [0usize; Region::COUNT];
    for r in regions {
        counts[*r as usize] += 1;
    }
    (0..rates.len() / n)
        .map(|s| {
            let mut m = [0f32; Region::COUNT];
            for (j, r) in regions.iter().enumerate() {
                m[*r as usize] += rates[s * n + j];
            }
            for k in 0..Region::COUNT {
                m[k] /= counts[k].max(1) as f32;
            }
            m
        })
        .collect()
}

/// Per-region summaries of one think, per step.
pub struct ThinkSummary {
    /// Mean rate per region and step.
    pub mean: Vec<[f32; Region::COUNT]>,
    /// Mean |rate − empty-board rate| per region and step: how much the board moved it.
    pub moved: Vec<[f32; Region::COUNT]>,
}

impl ThinkSummary {
    pub fn of(t: &Thought, connectome: &Connectome) -> ThinkSummary {
        ThinkSummary::from_rates(&t.rates, &t.baseline, t.neurons, connectome)
    }

    /// The summary of a think's rates (`[step · neurons + neuron]`) against an empty board's.
    pub fn from_rates(rates: &[f32], baseline: &[f32], n: usize, connectome: &Connectome) -> ThinkSummary {
        let steps = rates.len() / n.max(1);
        let regions = &connectome.neurons.region;
        let mut counts = [0usize; Region::COUNT];
        for r in regions {
            counts[*r as usize] += 1;
        }
        let mut mean = vec![[0f32; Region::COUNT]; steps];
        let mut moved = vec![[0f32; Region::COUNT]; steps];
        for s in 0..steps {
            for (j, r) in regions.iter().enumerate() {
                let v = rates[s * n + j];
                mean[s][*r as usize] += v;
                moved[s][*r as usize] += (v - baseline.get(s * n + j).copied().unwrap_or(0.0)).abs();
            }
            for k in 0..Region::COUNT {
                let c = counts[k].max(1) as f32;
                mean[s][k] /= c;
                moved[s][k] /= c;
            }
        }
        ThinkSummary { mean, moved }
    }

    /// A short caption for `step` (0-based): the region the board moved most.
    pub fn caption(&self, step: usize) -> String {
        let Some(moved) = self.moved.get(step) else { return format!("Step {}", step + 1) };
        let top = (0..Region::COUNT).max_by(|&a, &b| moved[a].total_cmp(&moved[b])).expect("regions");
        if moved[top] < 1e-6 {
            return format!("Step {}: the board has not reached past the eye", step + 1);
        }
        format!("Step {}: {} moved most ({:.3})", step + 1, Region::ALL[top].name(), moved[top])
    }

    /// One sentence for `step` (0-based): the regions whose firing changed most since the step
    /// before.
    pub fn sentence(&self, step: usize) -> String {
        let Some(now) = self.mean.get(step.min(self.mean.len().saturating_sub(1))) else {
            return "Thinking this position again (its rates were let go to save memory)…".into();
        };
        let before = if step == 0 { [0f32; Region::COUNT] } else { self.mean.get(step - 1).copied().unwrap_or(*now) };
        let mut change: Vec<(usize, f32)> = (0..Region::COUNT).map(|k| (k, now[k] - before[k])).collect();
        change.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
        let name = |k: usize| Region::ALL[k].name();
        let verb = |d: f32| if d >= 0.0 { "fire more" } else { "quieten" };
        let (a, b) = (change[0], change[1]);
        if a.1.abs() < 1e-4 {
            return format!("Step {}: the brain has settled; nothing changes much any more.", step + 1);
        }
        if step == 0 {
            // What the board itself changed (against an empty board), not the resting activity.
            let moved = self.moved.first().copied().unwrap_or([0f32; Region::COUNT]);
            let mut order: Vec<usize> = (0..Region::COUNT).collect();
            order.sort_by(|&x, &y| moved[y].total_cmp(&moved[x]));
            return if moved[order[1]] < 1e-4 {
                format!("Step 1: the eye sees the board; only the {} differ from an empty board so far.", name(order[0]))
            } else {
                format!("Step 1: the eye sees the board; {} and {} differ most from an empty board.", name(order[0]), name(order[1]))
            };
        }
        format!(
            "Step {}: {} {} ({:+.3}) and {} {} ({:+.3}) — the biggest changes since step {}.",
            step + 1,
            name(a.0),
            verb(a.1),
            a.1,
            name(b.0),
            verb(b.1),
            b.1,
            step
        )
    }
}
