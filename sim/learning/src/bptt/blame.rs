//! "The error going back" (seed "Watching the error go back"): for one position and its labels,
//! d loss / d rate of every neuron after every one of the 12 steps, from the same hand-written
//! backward pass training uses (window 12, the brain as it is), and how much of it each region
//! carries per step. What the Brain tab draws and `flychess blame` prints.

use serde::Serialize;

use super::{Base, Heads, Reader, gradient};
use crate::error::{Error, Result};
use flychess_brain::brain::{Brain, STEPS};
use flychess_brain::chess::{planes, position_from_fen};
use flychess_brain::connectome::rules::Region;
use flychess_fly::data::{MoveCode, MoveLabel, Row};
use flychess_fly::grading::Score;
use flychess_fly::readout::Readout;
use flychess_fly::scoring::Target;

/// The blame of one think.
#[derive(Clone, Debug)]
pub struct Blame {
    pub loss: f64,
    pub neurons: usize,
    /// d loss / d rate after each step, `[step · neurons + neuron]`.
    pub per_step: Vec<f32>,
    /// Mean |d loss / d rate| per region at each step.
    pub region_mean: Vec<[f64; Region::COUNT]>,
    /// The largest |d loss / d rate| at each step.
    pub largest: [f32; STEPS],
}

/// Labels for a position from Stockfish's lines (UCI move and score, best first): the same
/// target as a labelled row's (τ-shares of the win chances).
pub fn target_of(fen: &str, lines: &[(String, Score)]) -> Result<Target> {
    let pos = position_from_fen(fen)?;
    use shakmaty::Position;
    let moves = lines
        .iter()
        .take(8)
        .map(|(uci, score)| {
            Ok(MoveLabel {
                mv: MoveCode::parse_uci(uci).ok_or_else(|| Error::Invalid(format!("{uci} is not a UCI move")))?,
                score: *score,
                wdl: None,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let row = Row { fen: fen.to_string(), game: 0, ply: 0, legal: pos.legal_moves().len().min(255) as u8, moves };
    Ok(Target::of(&row)?)
}

/// The blame of `fen` against `target` for the readout `readout` reading `descending`.
pub fn blame(
    brain: &Brain,
    base: &Base,
    readout: &Readout,
    descending: &[u32],
    regions: &[Region],
    fen: &str,
    target: &Target,
) -> Result<Blame> {
    let board = planes(&position_from_fen(fen)?);
    let boards = [board];
    let rates = flychess_brain::brain::cpu::think_walking(brain, &boards, false);
    let params = base.start();
    let model = base.model_of_brain(brain, &params);
    let x = brain.eye_input(&boards);
    let reader = Reader { descending, steps: &readout.read_steps };
    let g = gradient(&model, &x, &rates.data, 1, &Heads::<f32>::of(readout), &reader, std::slice::from_ref(target), STEPS, true);
    let per_step = g.blame.ok_or_else(|| Error::Invalid("the backward pass kept no blame".into()))?;
    let n = brain.neurons;
    let mut counts = [0usize; Region::COUNT];
    for r in regions {
        counts[*r as usize] += 1;
    }
    let mut region_mean = Vec::with_capacity(STEPS);
    let mut largest = [0f32; STEPS];
    for t in 0..STEPS {
        let mut sums = [0f64; Region::COUNT];
        for (j, r) in regions.iter().enumerate().take(n) {
            let v = per_step[t * n + j];
            sums[*r as usize] += v.abs() as f64;
            largest[t] = largest[t].max(v.abs());
        }
        for k in 0..Region::COUNT {
            sums[k] /= counts[k].max(1) as f64;
        }
        region_mean.push(sums);
    }
    Ok(Blame { loss: g.loss, neurons: n, per_step, region_mean, largest })
}

/// `flychess blame --json`: the loss and each step's blame by region.
#[derive(Clone, Debug, Serialize)]
pub struct BlameReport {
    pub fen: String,
    pub loss: f64,
    pub steps: Vec<StepBlame>,
}

#[derive(Clone, Debug, Serialize)]
pub struct StepBlame {
    /// 1-based.
    pub step: usize,
    pub largest: f32,
    /// Regions by mean |d loss / d rate|, largest first.
    pub regions: Vec<(String, f64)>,
}

impl Blame {
    pub fn report(&self, fen: &str) -> BlameReport {
        let steps = (0..STEPS)
            .map(|t| {
                let mut regions: Vec<(String, f64)> = Region::ALL
                    .iter()
                    .map(|r| (r.name().to_string(), self.region_mean[t][*r as usize]))
                    .filter(|(_, v)| *v > 0.0)
                    .collect();
                regions.sort_by(|a, b| b.1.total_cmp(&a.1));
                StepBlame { step: t + 1, largest: self.largest[t], regions }
            })
            .collect();
        BlameReport { fen: fen.to_string(), loss: self.loss, steps }
    }

    /// Each step scaled to the 99th percentile of its blamed neurons' |value| (the few larger ones
    /// drawn at full size), with the sign turned so that a positive value means "more activity
    /// here would lower the loss" (the view's red), in [−1, 1]: what the cloud draws.
    pub fn for_view(&self) -> Vec<f32> {
        let n = self.neurons;
        let scale: Vec<f32> = (0..STEPS).map(|t| self.scale(t)).collect();
        (0..STEPS * n).map(|k| (-self.per_step[k] / scale[k / n]).clamp(-1.0, 1.0)).collect()
    }

    /// The 99th percentile of |d loss / d rate| over the neurons blamed at step `t` (0-based).
    pub fn scale(&self, t: usize) -> f32 {
        let n = self.neurons;
        let mut blamed: Vec<f32> = self.per_step[t * n..(t + 1) * n].iter().map(|v| v.abs()).filter(|&v| v > 0.0).collect();
        if blamed.is_empty() {
            return 1.0;
        }
        let k = ((blamed.len() as f64 * 0.99) as usize).min(blamed.len() - 1);
        let (_, v, _) = blamed.select_nth_unstable_by(k, f32::total_cmp);
        v.max(1e-30)
    }
}

/// Stockfish's labels for `fen` (its 8 best moves at depth 12, as the dataset's), or the
/// dataset's own row where the position is one of the labelled ones.
pub fn label(fen: &str, stockfish: Option<&std::path::Path>, rows: &[Row]) -> Result<Target> {
    let key = |f: &str| f.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
    if let Some(row) = rows.iter().find(|r| key(&r.fen) == key(fen)) {
        return Ok(Target::of(row)?);
    }
    let path = flychess_fly::stockfish::find_stockfish(stockfish)?;
    let mut engine = flychess_fly::stockfish::Engine::start(&path, &flychess_fly::stockfish::EngineOptions::default())?;
    let lines = engine.analyse(fen, flychess_fly::stockfish::Limit::Depth(12), 8, std::time::Duration::from_secs(60))?;
    engine.kill();
    target_of(fen, &lines.into_iter().map(|l| (l.uci, l.score)).collect::<Vec<_>>())
}
