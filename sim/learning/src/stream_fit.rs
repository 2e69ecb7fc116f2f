//! The fit at scale (the day-long fly): a `train::TrainSet` whose positions are read off a DN
//! cache a block at a time, so that a pass over a million cached positions holds one block of
//! features (16,384 positions) and never the whole cache. Each batch mixes two kinds of rows:
//! the streamed ones (master-move rows of a games dataset, `data::Labels::MasterMove`) and a
//! fixed set held in memory (the shipped Stockfish-labelled TRAIN rows, soft targets over their
//! scored moves), a set share of every batch coming from the fixed set, cycled in a shuffled
//! order. The share is what the caller chooses on VAL. The streamed rows may be taught by
//! Stockfish's own moves too (`with_teacher`, `crate::teacher`).
//!
//! Order: the streamed rows are already shuffled in the dataset (games datasets are ordered by a
//! seeded hash), each block is shuffled again each pass; the fixed rows are reshuffled each time
//! they have all been used.

use std::ops::Range;
use std::path::PathBuf;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::teacher::{EngineLabels, Teacher};
use crate::train::{BatchStep, Examples, TrainSet, shuffle_with};
use flychess_fly::cache::{Cache, Reading};
use flychess_fly::data::{Dataset, Row};
use flychess_fly::scoring::Target;

/// Positions of the streamed part read at once.
pub const BLOCK: usize = 16_384;

pub struct Mixed<'a> {
    cache: &'a Cache,
    dataset: PathBuf,
    range: Range<usize>,
    reading: Reading,
    block: usize,
    fixed_x: &'a [f32],
    fixed_t: &'a [Target],
    share: f64,
    inputs: usize,
    state: u64,
    fixed_order: Vec<usize>,
    fixed_at: usize,
    /// Stockfish's moves for the streamed rows (where labelled) and the sources' weights.
    labels: Option<&'a EngineLabels>,
    teacher: Teacher,
    /// The curriculum of finishing (`with_curriculum`): its rows in memory, their share of every
    /// batch, and its own shuffled order.
    curriculum_x: &'a [f32],
    curriculum_t: &'a [Target],
    curriculum_share: f64,
    curriculum_order: Vec<usize>,
    curriculum_at: usize,
}

impl<'a> Mixed<'a> {
    /// Rows `range` of the dataset at `dataset` (their features in `cache`, which must hold them)
    /// streamed, with `share` of each batch (0 ≤ share < 1) from the `fixed` rows.
    pub fn new(
        cache: &'a Cache,
        dataset: PathBuf,
        range: Range<usize>,
        reading: Reading,
        fixed: Examples<'a>,
        share: f64,
        seed: u64,
    ) -> Result<Mixed<'a>> {
        let Examples { x: fixed_x, targets: fixed_t } = fixed;
        if range.end > cache.positions {
            return Err(Error::Invalid(format!("the cache holds {} positions; the fit asks for {}", cache.positions, range.end)));
        }
        if !(0.0..1.0).contains(&share) || (share > 0.0 && fixed_t.is_empty()) {
            return Err(Error::Invalid(format!("a share of {share} from {} fixed rows", fixed_t.len())));
        }
        let inputs = cache.meta.descending;
        if fixed_x.len() != fixed_t.len() * inputs {
            return Err(Error::Invalid("the fixed rows' features do not match their targets".into()));
        }
        Ok(Mixed {
            cache,
            dataset,
            range,
            reading,
            block: BLOCK,
            fixed_x,
            fixed_t,
            share,
            inputs,
            state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            fixed_order: (0..fixed_t.len()).collect(),
            fixed_at: fixed_t.len(),
            labels: None,
            teacher: Teacher::default(),
            curriculum_x: &[],
            curriculum_t: &[],
            curriculum_share: 0.0,
            curriculum_order: Vec::new(),
            curriculum_at: 0,
        })
    }

    /// `share` of every batch (rounded, at least one row when above 0) from the curriculum of
    /// finishing (`crate::curriculum`): rows held in memory like the fixed ones, cycled in their
    /// own shuffled order. The fixed rows' share stays what it was; the streamed rows give way.
    pub fn with_curriculum(mut self, x: &'a [f32], t: &'a [Target], share: f64) -> Result<Mixed<'a>> {
        if !(0.0..1.0).contains(&(share + self.share)) || share < 0.0 || (share > 0.0 && t.is_empty()) {
            return Err(Error::Invalid(format!(
                "a curriculum share of {share} beside a fixed share of {} (together below 1) from {} curriculum rows",
                self.share,
                t.len()
            )));
        }
        if x.len() != t.len() * self.inputs {
            return Err(Error::Invalid("the curriculum rows' features do not match their targets".into()));
        }
        self.curriculum_x = x;
        self.curriculum_t = t;
        self.curriculum_share = share;
        self.curriculum_order = (0..t.len()).collect();
        self.curriculum_at = t.len();
        Ok(self)
    }

    /// The streamed rows taught by `teacher`, with Stockfish's moves from `labels` where a row
    /// has one (`crate::teacher::target`). A teacher without the master needs every streamed row
    /// labelled.
    pub fn with_teacher(mut self, labels: Option<&'a EngineLabels>, teacher: Teacher) -> Result<Mixed<'a>> {
        let labelled_to = labels.map_or(0, |l| l.end());
        if teacher.engine > 0.0 && labels.is_none() {
            return Err(Error::Invalid("a teacher with Stockfish's moves needs engine labels".into()));
        }
        if teacher.every_move && labels.is_some_and(|l| l.every.is_none()) {
            return Err(Error::Invalid(format!(
                "{}: these labels hold Stockfish's best move alone; the every-move teacher needs `data label --every-move`'s",
                labels.map(|l| l.path.display().to_string()).unwrap_or_default()
            )));
        }
        if teacher.engine_only() && labels.is_none_or(|l| l.first_row > self.range.start || labelled_to < self.range.end) {
            return Err(Error::Invalid(format!(
                "Stockfish alone teaches rows {}..{}, but only rows {}..{labelled_to} are labelled",
                self.range.start,
                self.range.end,
                labels.map_or(0, |l| l.first_row)
            )));
        }
        self.labels = labels;
        self.teacher = teacher;
        Ok(self)
    }

    /// Smaller blocks (tests).
    pub fn with_block(mut self, block: usize) -> Mixed<'a> {
        self.block = block.max(1);
        self
    }

    /// Of each batch of `batch`, this many streamed rows (at least one); the rest are fixed.
    fn streamed_per(&self, batch: usize) -> usize {
        (((batch as f64) * (1.0 - self.share - self.curriculum_share)).round() as usize).clamp(1, batch)
    }

    /// Of each batch of `batch`, this many curriculum rows (at least one when it has a share, and
    /// never a streamed row's place).
    fn curriculum_per(&self, batch: usize) -> usize {
        if self.curriculum_share <= 0.0 {
            return 0;
        }
        (((batch as f64) * self.curriculum_share).round() as usize).max(1).min(batch - self.streamed_per(batch))
    }

    /// The next curriculum row (reshuffling them when all have been used).
    fn next_curriculum(&mut self) -> usize {
        if self.curriculum_at >= self.curriculum_order.len() {
            shuffle_with(&mut self.curriculum_order, &mut self.state);
            self.curriculum_at = 0;
        }
        self.curriculum_at += 1;
        self.curriculum_order[self.curriculum_at - 1]
    }

    /// The held rows of one batch besides `streamed` streamed ones: (fixed, curriculum) indices.
    fn held_rows(&mut self, batch: usize, streamed: usize) -> (Vec<usize>, Vec<usize>) {
        let curriculum = self.curriculum_per(batch);
        let fixed = (0..batch - streamed - curriculum).map(|_| self.next_fixed()).collect();
        (fixed, (0..curriculum).map(|_| self.next_curriculum()).collect())
    }

    /// The next fixed row (reshuffling the fixed rows when all have been used).
    fn next_fixed(&mut self) -> usize {
        if self.fixed_at >= self.fixed_order.len() {
            shuffle_with(&mut self.fixed_order, &mut self.state);
            self.fixed_at = 0;
        }
        self.fixed_at += 1;
        self.fixed_order[self.fixed_at - 1]
    }
}

impl TrainSet for Mixed<'_> {
    fn positions(&self) -> usize {
        let streamed = self.range.len();
        let held = self.share + self.curriculum_share;
        streamed + (streamed as f64 * held / (1.0 - held)).round() as usize
    }

    fn skip_passes(&mut self, batch: usize, passes: usize) -> Result<()> {
        let batch = batch.max(1);
        let streamed_per = self.streamed_per(batch);
        for _ in 0..passes {
            let mut at = self.range.start;
            while at < self.range.end {
                let end = (at + self.block).min(self.range.end);
                let mut order: Vec<usize> = (0..end - at).collect();
                shuffle_with(&mut order, &mut self.state);
                for _chunk in order.chunks(streamed_per) {
                    self.held_rows(batch, streamed_per);
                }
                at = end;
            }
        }
        Ok(())
    }

    fn pass(&mut self, batch: usize, step: &mut BatchStep) -> Result<()> {
        let d = self.inputs;
        let batch = batch.max(1);
        let streamed_per = self.streamed_per(batch);
        let mut rows = Dataset::stream(&self.dataset)?;
        for _ in 0..self.range.start {
            rows.next().transpose()?;
        }
        let mut at = self.range.start;
        while at < self.range.end {
            let end = (at + self.block).min(self.range.end);
            let block_rows: Vec<Row> = rows.by_ref().take(end - at).collect::<flychess_fly::Result<_>>()?;
            if block_rows.len() < end - at {
                return Err(Error::Invalid(format!("{}: the dataset ended before row {end}", self.dataset.display())));
            }
            let (labels, teacher) = (self.labels, self.teacher);
            let targets: Vec<Target> = block_rows
                .par_iter()
                .enumerate()
                .map(|(k, row)| Ok(crate::teacher::target(row, labels.and_then(|l| l.label(at + k)), &teacher)?.0))
                .collect::<Result<_>>()?;
            let x = self.cache.read(at..end, self.reading)?;
            let mut order: Vec<usize> = (0..targets.len()).collect();
            shuffle_with(&mut order, &mut self.state);
            let mut bx: Vec<f32> = Vec::new();
            for chunk in order.chunks(streamed_per) {
                let (fixed, curriculum) = self.held_rows(batch, streamed_per);
                bx.clear();
                let mut bt: Vec<&Target> = Vec::with_capacity(chunk.len() + fixed.len() + curriculum.len());
                for &i in chunk {
                    bx.extend_from_slice(&x[i * d..(i + 1) * d]);
                    bt.push(&targets[i]);
                }
                for &i in &fixed {
                    bx.extend_from_slice(&self.fixed_x[i * d..(i + 1) * d]);
                    bt.push(&self.fixed_t[i]);
                }
                for &i in &curriculum {
                    bx.extend_from_slice(&self.curriculum_x[i * d..(i + 1) * d]);
                    bt.push(&self.curriculum_t[i]);
                }
                step(&mut bx, &bt)?;
            }
            at = end;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flychess_fly::cache::CacheMeta;
    use flychess_fly::data::{Labels, Meta, MoveCode, Result3, master_label};
    use std::io::Write;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    /// A cache of 24 positions of 3 descending neurons whose mean reading is the position's
    /// number (÷ 255), over a master-move dataset of 24 rows.
    fn setup(dir: &std::path::Path) -> (Cache, PathBuf) {
        let row = |i: u32| Row {
            fen: START.into(),
            game: i,
            ply: 0,
            legal: 20,
            moves: vec![master_label(MoveCode::parse_uci("e2e4").unwrap(), Result3::Won)],
        };
        let rows: Vec<Row> = (0..24).map(row).collect();
        let meta = Meta { source: "t".into(), labeller: "t".into(), rows: 24, hold: 0, val: 0, labels: Labels::MasterMove };
        let path = dir.join("games.flyd");
        Dataset { meta, rows }.save(&path).unwrap();
        let meta = CacheMeta::of("brain", "h", "t", 24, "x", 3);
        let cpath = dir.join("c.dn");
        let cache = Cache::open(&cpath, meta.clone()).unwrap();
        let mut f = std::fs::OpenOptions::new().append(true).open(&cache.path).unwrap();
        for i in 0..24u8 {
            f.write_all(&[i, i, i, 0, 0, 0]).unwrap();
        }
        drop(f);
        (Cache::open(&cpath, meta).unwrap(), path)
    }

    /// Five fixed rows: 1.d4 drawn, from the start.
    fn fixed_targets() -> Vec<Target> {
        let row = Row {
            fen: START.into(),
            game: 0,
            ply: 0,
            legal: 20,
            moves: vec![master_label(MoveCode::parse_uci("d2d4").unwrap(), Result3::Drawn)],
        };
        (0..5).map(|_| Target::of(&row).unwrap()).collect()
    }

    #[test]
    fn a_pass_reads_every_streamed_row_once_and_mixes_in_the_share_of_fixed_rows() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, path) = setup(dir.path());
        let fixed_t = fixed_targets();
        // Fixed rows read 1.0 on every neuron (no streamed row does).
        let fixed_x = vec![1.0f32; 5 * 3];
        let mut m = Mixed::new(&cache, path.clone(), 2..22, Reading::Mean9To12, Examples { x: &fixed_x, targets: &fixed_t }, 0.25, 3)
            .unwrap()
            .with_block(7);
        for _pass in 0..2 {
            let mut seen = Vec::new();
            let mut fixed = 0;
            let mut batches = 0;
            m.pass(8, &mut |x, t| {
                assert_eq!(x.len(), t.len() * 3);
                batches += 1;
                for (i, row) in x.chunks(3).enumerate() {
                    if row[0] == 1.0 {
                        fixed += 1;
                        assert_eq!(t[i].value, 0.0, "a fixed row's own target");
                    } else {
                        seen.push((row[0] * 255.0).round() as usize);
                        assert!(t[i].value > 0.9, "a streamed row's own target");
                    }
                }
                assert!(t.len() <= 8);
                Ok(0.0)
            })
            .unwrap();
            seen.sort();
            assert_eq!(seen, (2..22).collect::<Vec<_>>(), "every streamed row once");
            assert_eq!(fixed, 2 * batches, "a quarter of each batch of 8 is fixed rows");
        }
        // A range past what the cache holds is refused.
        assert!(Mixed::new(&cache, path, 0..25, Reading::Mean9To12, Examples { x: &fixed_x, targets: &fixed_t }, 0.25, 3).is_err());
    }

    /// With a curriculum, a set share of every batch is curriculum rows (each used in turn), the
    /// fixed rows keep theirs, every streamed row still comes once a pass, and resuming after a
    /// pass (`skip_passes`) draws the same batches as going on.
    #[test]
    fn the_curriculum_takes_its_share_of_every_batch_and_a_resumed_pass_draws_the_same_rows() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, path) = setup(dir.path());
        let fixed_t = fixed_targets();
        let fixed_x = vec![1.0f32; 5 * 3];
        // Four curriculum rows read 2.0, 3.0, 4.0, 5.0.
        let curriculum_t: Vec<Target> = fixed_targets().into_iter().take(4).collect();
        let curriculum_x: Vec<f32> = (0..4).flat_map(|k| [2.0 + k as f32; 3]).collect();
        let new = || {
            Mixed::new(&cache, path.clone(), 0..24, Reading::Mean9To12, Examples { x: &fixed_x, targets: &fixed_t }, 0.25, 9)
                .unwrap()
                .with_block(10)
                .with_curriculum(&curriculum_x, &curriculum_t, 0.25)
                .unwrap()
        };
        let record = |m: &mut Mixed| {
            let mut batches: Vec<Vec<u32>> = Vec::new();
            m.pass(8, &mut |x, _| {
                batches.push(x.chunks(3).map(|r| (r[0] * 255.0).round() as u32).collect());
                Ok(0.0)
            })
            .unwrap();
            batches
        };
        let mut m = new();
        assert_eq!(m.positions(), 48, "24 streamed rows are half of every batch");
        let first = record(&mut m);
        let second = record(&mut m);
        for batch in &first {
            let kinds = |lo: u32, hi: u32| batch.iter().filter(|&&v| (lo..=hi).contains(&v)).count();
            let (curriculum, fixed) = (kinds(510, 1275), kinds(255, 255));
            assert_eq!((curriculum, fixed), (2, 2), "{batch:?}");
        }
        let mut streamed: Vec<u32> = first.iter().flatten().copied().filter(|&v| v < 255).collect();
        streamed.sort();
        assert_eq!(streamed, (0..24).collect::<Vec<_>>());
        let used: std::collections::BTreeSet<u32> = first.iter().flatten().copied().filter(|&v| v >= 510).collect();
        assert_eq!(used.len(), 4, "every curriculum row is used");
        let mut resumed = new();
        resumed.skip_passes(8, 1).unwrap();
        assert_eq!(record(&mut resumed), second);
        // A curriculum and fixed share of 1 or more leave no room for the streamed rows.
        assert!(
            Mixed::new(&cache, path.clone(), 0..24, Reading::Mean9To12, Examples { x: &fixed_x, targets: &fixed_t }, 0.5, 9)
                .unwrap()
                .with_curriculum(&curriculum_x, &curriculum_t, 0.5)
                .is_err()
        );
    }

    /// Taught by Stockfish alone, every streamed row's target is its engine label (1.d4, even),
    /// not the master's 1.e4 in a won game; rows past the labels are refused for that teacher.
    #[test]
    fn stockfish_as_the_teacher_replaces_the_masters_move_and_the_result() {
        use crate::teacher::EngineLabel;
        use flychess_fly::grading::Score;
        let dir = tempfile::tempdir().unwrap();
        let (cache, path) = setup(dir.path());
        let d4 = MoveCode::parse_uci("d2d4").unwrap();
        let labels = EngineLabels {
            path: dir.path().join("labels.jsonl"),
            dataset_sha256: "x".into(),
            first_row: 2,
            depth: 10,
            labels: (2..22).map(|i| EngineLabel { mv: d4, score: Score::Cp(0), game: i, ply: 0 }).collect(),
            every: None,
        };
        let (fixed_x, fixed_t) = (Vec::new(), Vec::new());
        let new = |range: Range<usize>| {
            Mixed::new(&cache, path.clone(), range, Reading::Mean9To12, Examples { x: &fixed_x, targets: &fixed_t }, 0.0, 3).unwrap()
        };
        let mut m = new(2..22).with_teacher(Some(&labels), Teacher::parse("engine").unwrap()).unwrap();
        let d4_index = fixed_targets()[0].best;
        let mut rows = 0;
        m.pass(8, &mut |_, t| {
            for target in t {
                assert_eq!((target.share[d4_index], target.value), (1.0, 0.0));
                rows += 1;
            }
            Ok(0.0)
        })
        .unwrap();
        assert_eq!(rows, 20);
        assert!(new(2..23).with_teacher(Some(&labels), Teacher::parse("engine").unwrap()).is_err());
        // Both teachers: rows past the labels take the master's move alone.
        let mut m = new(0..24).with_teacher(Some(&labels), Teacher::parse("master=1,engine=1").unwrap()).unwrap();
        let mut halves = 0;
        m.pass(24, &mut |_, t| {
            halves += t.iter().filter(|t| t.share[d4_index] == 0.5).count();
            Ok(0.0)
        })
        .unwrap();
        assert_eq!(halves, 20);
    }

    /// A resumed fit skips the passes it already made: the third pass after skipping two sees the
    /// rows (streamed and fixed, in batches) in the order an unbroken third pass does.
    #[test]
    fn skipping_passes_replays_the_shuffles_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, path) = setup(dir.path());
        let fixed_t = fixed_targets();
        // Fixed row i reads 1 + i on every neuron, so a batch's rows name themselves.
        let fixed_x: Vec<f32> = (0..5).flat_map(|i| [1.0 + i as f32; 3]).collect();
        let new = || {
            Mixed::new(&cache, path.clone(), 2..22, Reading::Mean9To12, Examples { x: &fixed_x, targets: &fixed_t }, 0.25, 3)
                .unwrap()
                .with_block(7)
        };
        let third = |m: &mut Mixed| {
            let mut batches: Vec<Vec<u32>> = Vec::new();
            m.pass(8, &mut |x, _| {
                batches.push(x.chunks(3).map(|r| (r[0] * 255.0).round() as u32).collect());
                Ok(0.0)
            })
            .unwrap();
            batches
        };
        let mut unbroken = new();
        for _ in 0..2 {
            unbroken.pass(8, &mut |_, _| Ok(0.0)).unwrap();
        }
        let mut resumed = new();
        resumed.skip_passes(8, 2).unwrap();
        assert_eq!(third(&mut resumed), third(&mut unbroken));
        // Without the skip, the first pass's order: another one.
        assert_ne!(third(&mut new()), third(&mut new().with_block(7)).into_iter().skip(1).collect::<Vec<_>>());
        let mut not_skipped = new();
        assert_ne!(third(&mut not_skipped), third(&mut unbroken), "the first pass and the fourth differ");
    }
}
