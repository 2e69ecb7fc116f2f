//! The fast way's first half (seed "Cheats" 4–5, "A day on a laptop"): with the brain frozen, a
//! position's descending neurons do the same thing every time, so the brain runs once per position
//! and their rates are kept as bytes (rate × 255, rounded) — the mean over steps 9–12 and step 12
//! alone, 2 × 1,314 bytes a position. The readout is then fitted over this cache pass after pass.
//!
//! The cache is one append-only file per brain, homeostasis, dataset content and readings
//! (`DATA/cache/SPEC-BRAIN-KEY.dn`, KEY hashing all of them; a JSON sidecar says what it belongs
//! to): a second dataset, or the same one relabelled under its old name, gets a file of its own
//! and never truncates another's. Positions are appended in dataset order in whole batches, so a
//! killed run resumes at the last complete position.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::data::Row;
use crate::error::{Error, Result};
use crate::shard::{Part, PartFile, Shard};
use flychess_brain::brain::simulator::Simulator;
use flychess_brain::brain::{Brain, STEPS};
use flychess_brain::chess::{Planes, planes, position_from_fen};

/// A batch's readings (`[(position · 4 + s) · k + i]`, steps 9–12 of `k` neurons) as the cache's
/// bytes: per position, the mean of the four steps (in step order) of every neuron, then step 12's.
fn bytes_of(readings: &[f32], b: usize, k: usize) -> Vec<u8> {
    let mut mean = vec![0f32; k * b];
    let mut last = vec![0f32; k * b];
    for p in 0..b {
        for s in 0..4 {
            for i in 0..k {
                let r = readings[(p * 4 + s) * k + i];
                mean[i * b + p] += r / 4.0;
                if s == 3 {
                    last[i * b + p] = r;
                }
            }
        }
    }
    let mut out = Vec::with_capacity(2 * k * b);
    for p in 0..b {
        out.extend((0..k).map(|i| to_byte(mean[i * b + p])));
        out.extend((0..k).map(|i| to_byte(last[i * b + p])));
    }
    out
}

/// What a readout reads, and so what a cache holds for each position: the brain's descending
/// neurons, or for the controls of `eval --controls-at-scale` the board itself (its 768 planes:
/// the board-linear control) or nothing (one input that is always 0: the blind baseline, whose
/// weights never move, so only the biases, move popularity, are learned). A control's cache has
/// the same layout as a brain's (both readings, the same values), so every fit reads it alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Sensor {
    Brain,
    BoardPlanes,
    Blind,
}

impl Sensor {
    /// The id a control's cache, run and fly carry where a brain's carry its checksum (None: the
    /// brain's own).
    pub fn control_id(self) -> Option<&'static str> {
        match self {
            Sensor::Brain => None,
            Sensor::BoardPlanes => Some("control-board-planes-768"),
            Sensor::Blind => Some("control-blind"),
        }
    }

    /// The kind a fly fitted on it is saved as.
    pub fn fly_kind(self) -> &'static str {
        match self {
            Sensor::Brain => "trained",
            Sensor::BoardPlanes => "board-linear control",
            Sensor::Blind => "blind control",
        }
    }

    /// What a control's cache files are named from (None: the brain's, named by its spec).
    pub fn control_cache_name(self) -> Option<&'static str> {
        match self {
            Sensor::Brain => None,
            Sensor::BoardPlanes => Some("control-board"),
            Sensor::Blind => Some("control-blind"),
        }
    }

    /// What it is, in words.
    pub fn label(self) -> &'static str {
        match self {
            Sensor::Brain => "the brain's descending neurons",
            Sensor::BoardPlanes => "no brain: the board's 768 planes (the board-linear control)",
            Sensor::Blind => "no brain and no board (the blind baseline)",
        }
    }

    /// A control's inputs a position (None: the brain's descending neurons).
    pub fn control_inputs(self) -> Option<usize> {
        match self {
            Sensor::Brain => None,
            Sensor::BoardPlanes => Some(768),
            Sensor::Blind => Some(1),
        }
    }

    /// A control's readings of a batch of boards, as the brain's are laid out for the cache
    /// (`[(position · 4 + s) · k + i]`, four steps alike). Empty for the brain (its readings are
    /// the simulator's).
    pub fn readings(self, boards: &[Planes]) -> Vec<f32> {
        let one = |p: &Planes| -> Vec<f32> {
            match self {
                Sensor::BoardPlanes => p.iter().flatten().map(|&b| if b { 1.0 } else { 0.0 }).collect(),
                Sensor::Blind => vec![0.0],
                Sensor::Brain => Vec::new(),
            }
        };
        boards
            .iter()
            .flat_map(|p| {
                let r = one(p);
                (0..4).flat_map(move |_| r.clone())
            })
            .collect()
    }
}

/// Which of the stored readings a readout uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reading {
    /// Mean of steps 9–12.
    Mean9To12,
    /// Step 12 alone.
    Step12,
}

impl Reading {
    /// The steps (0-based) a readout of this reading averages.
    pub fn steps(self) -> Vec<usize> {
        match self {
            Reading::Mean9To12 => crate::readout::Readout::default_steps(),
            Reading::Step12 => vec![11],
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheMeta {
    pub brain_checksum: String,
    pub homeostasis: String,
    pub dataset: String,
    pub descending: usize,
    /// For a shard's part file: which shard of how many positions (absent for the whole cache,
    /// whose key and sidecar are as they were before shards).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<Part>,
}

/// What the cache stores for every position: both readings, in this order.
pub const READINGS: &str = "mean of steps 9-12, then step 12; rate x 255 as u8";

impl CacheMeta {
    /// The meta of the cache of this brain (its checksum), homeostasis (its fingerprint) and
    /// dataset (by content).
    pub fn new(brain_checksum: &str, homeostasis: &str, dataset: &crate::data::Dataset, descending: usize) -> CacheMeta {
        CacheMeta::of(brain_checksum, homeostasis, &dataset.meta.source, dataset.rows.len(), &dataset.content_hash(), descending)
    }

    /// The same from a dataset's source, row count and content hash (a dataset read as a stream:
    /// `data::RowStream::content_hash`).
    pub fn of(brain_checksum: &str, homeostasis: &str, source: &str, rows: usize, content_hash: &str, descending: usize) -> CacheMeta {
        CacheMeta {
            brain_checksum: brain_checksum.to_string(),
            homeostasis: homeostasis.to_string(),
            dataset: format!("{source} ({rows} rows), sha256 {content_hash}; {READINGS}"),
            descending,
            part: None,
        }
    }

    /// The meta of shard `shard`'s part of this cache filled up to `total` positions.
    pub fn part(&self, shard: Shard, total: usize) -> CacheMeta {
        CacheMeta { part: Some(Part { shard, total }), ..self.clone() }
    }

    /// Where this cache lives in `dir`: named by the brain spec (for people) and a hash of
    /// everything it belongs to (for the program).
    /// A shard's part lies beside the whole cache (`….part-I-of-N.dn`), under the same key.
    pub fn path_in(&self, dir: &Path, spec_name: &str) -> PathBuf {
        use sha2::{Digest, Sha256};
        let whole = CacheMeta { part: None, ..self.clone() };
        let key = flychess_brain::files::hex(&Sha256::digest(serde_json::to_vec(&whole).expect("plain struct")));
        let path = dir.join(format!("{spec_name}-{}-{}.dn", &self.brain_checksum.get(..12).unwrap_or(&self.brain_checksum), &key[..12]));
        match self.part {
            Some(part) => crate::shard::part_path(&path, part.shard),
            None => path,
        }
    }
}

pub struct Cache {
    pub path: PathBuf,
    pub meta: CacheMeta,
    /// Complete positions in the file.
    pub positions: usize,
}

fn row_bytes(descending: usize) -> usize {
    2 * descending
}

impl Cache {
    /// Opens (or starts) the cache at `path`; a cache of another brain, homeostasis or dataset is
    /// started again. Opening only reads: `positions` counts the whole positions in the file, and
    /// a half-written last one is cut off by the next `fill`, under the file's lock (so a reader
    /// never cuts what another process is in the middle of writing).
    pub fn open(path: &Path, meta: CacheMeta) -> Result<Cache> {
        let sidecar = path.with_extension("json");
        let same = std::fs::read(&sidecar).ok().and_then(|b| serde_json::from_slice::<CacheMeta>(&b).ok()).is_some_and(|m| m == meta);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        if !same {
            File::create(path).map_err(|e| Error::io(path, e))?;
            flychess_brain::files::write_atomically(&sidecar, &serde_json::to_vec_pretty(&meta).expect("plain struct"))?;
        }
        let len = std::fs::metadata(path).map_err(|e| Error::io(path, e))?.len() as usize;
        let per = row_bytes(meta.descending);
        Ok(Cache { path: path.to_path_buf(), meta, positions: len / per })
    }

    /// Runs the brain over `rows[self.positions..]` in batches on `sim` (the CPU or the GPU
    /// engine) and appends their DN rates; `progress(done, total)` after each batch. Stops early
    /// (resumably) when `stop()` says so.
    #[allow(clippy::too_many_arguments)]
    pub fn fill(
        &mut self,
        sim: &Simulator,
        brain: &Brain,
        descending: &[u32],
        rows: &[Row],
        batch: usize,
        progress: &dyn Fn(usize, usize),
        stop: &dyn Fn() -> bool,
    ) -> Result<()> {
        self.fill_streamed(sim, brain, descending, rows.iter().cloned().map(Ok), rows.len(), batch, progress, stop)
    }

    /// `fill` over rows read one at a time (a `data::RowStream` off a dataset file: the rows
    /// already cached are read past, and memory holds a few batches whatever the dataset's size);
    /// `total` is how many rows `rows` gives, the cache filled up to it.
    ///
    /// Three threads in a pipeline, so the engine never waits for the rest: one reads the rows
    /// and turns batch k + 1 into eye input while the simulator thinks about batch k (on this
    /// thread), and one turns batch k − 1's readings into bytes and appends them. The bytes and
    /// their order are the unpipelined loop's; a killed run loses at most the batches in flight
    /// (two), never part of one.
    #[allow(clippy::too_many_arguments)]
    pub fn fill_streamed(
        &mut self,
        sim: &Simulator,
        brain: &Brain,
        descending: &[u32],
        rows: impl Iterator<Item = Result<Row>> + Send,
        total: usize,
        batch: usize,
        progress: &dyn Fn(usize, usize),
        stop: &dyn Fn() -> bool,
    ) -> Result<()> {
        let read_steps: Vec<usize> = (STEPS - 4..STEPS).collect();
        self.fill_reading(rows, total, batch, &|boards| Ok(sim.read(brain, boards, descending, &read_steps)?), progress, stop)
    }

    /// `fill_streamed` with what a position's readings are given by `read` (for a batch of
    /// boards: `[(position · 4 + s) · k + i]`, steps 9–12 of the cache's `k` inputs): the brain's
    /// descending neurons, or a control's `Sensor::readings`.
    pub fn fill_reading(
        &mut self,
        mut rows: impl Iterator<Item = Result<Row>> + Send,
        total: usize,
        batch: usize,
        read: &dyn Fn(&[Planes]) -> Result<Vec<f32>>,
        progress: &dyn Fn(usize, usize),
        stop: &dyn Fn() -> bool,
    ) -> Result<()> {
        let mut file = OpenOptions::new().append(true).open(&self.path).map_err(|e| Error::io(&self.path, e))?;
        // One writer at a time: a second `cache` of the same positions (another window, a shard
        // started twice) is refused instead of interleaving its batches with this one's.
        file.try_lock().map_err(|e| match e {
            std::fs::TryLockError::WouldBlock => Error::Invalid(format!(
                "{}: another flychess is filling this cache now; wait for it to finish (or stop it) and run this again",
                self.path.display()
            )),
            std::fs::TryLockError::Error(e) => Error::io(&self.path, e),
        })?;
        // Under the lock: the whole positions in the file, a half-written last one (a killed
        // run's) cut off.
        let per = row_bytes(self.meta.descending);
        let len = file.metadata().map_err(|e| Error::io(&self.path, e))?.len() as usize;
        self.positions = len / per;
        if !len.is_multiple_of(per) {
            file.set_len((self.positions * per) as u64).map_err(|e| Error::io(&self.path, e))?;
        }
        let start = self.positions.min(total);
        let sizes: Vec<usize> = (start..total).step_by(batch.max(1)).map(|first| batch.max(1).min(total - first)).collect();
        let path = self.path.clone();
        let k = self.meta.descending;
        let (boards_out, boards_in) = std::sync::mpsc::sync_channel::<Result<Vec<Planes>>>(1);
        let (bytes_out, bytes_in) = std::sync::mpsc::sync_channel::<(Vec<f32>, usize)>(1);
        let (done, written) = std::thread::scope(|scope| -> Result<(usize, Result<File>)> {
            // Batch k + 1's boards while batch k thinks.
            scope.spawn(move || {
                for _ in 0..start {
                    if let Some(Err(e)) = rows.next() {
                        let _ = boards_out.send(Err(e));
                        return;
                    }
                }
                let mut read = start;
                for want in sizes {
                    let chunk: Result<Vec<Row>> = rows.by_ref().take(want).collect();
                    let boards = chunk.and_then(|chunk| {
                        read += chunk.len();
                        if chunk.len() < want {
                            return Err(Error::Invalid(format!("the dataset ended after {read} of the {total} positions asked for")));
                        }
                        chunk.iter().map(|r| Ok(planes(&position_from_fen(&r.fen)?))).collect()
                    });
                    let failed = boards.is_err();
                    if boards_out.send(boards).is_err() || failed {
                        return;
                    }
                }
            });
            // Batch k − 1's bytes appended while batch k thinks.
            let writer = scope.spawn(move || -> Result<File> {
                for (readings, b) in bytes_in {
                    file.write_all(&bytes_of(&readings, b, k)).map_err(|e| Error::io(&path, e))?;
                    file.flush().map_err(|e| Error::io(&path, e))?;
                }
                file.sync_all().map_err(|e| Error::io(&path, e))?;
                Ok(file)
            });
            let mut thought = self.positions;
            let mut outcome = Ok(());
            while thought < total && !stop() {
                let Ok(boards) = boards_in.recv() else { break };
                let result = boards.and_then(|boards| {
                    let r = read(&boards)?;
                    if r.len() != 4 * k * boards.len() {
                        return Err(Error::Invalid(format!("{} readings for {} positions of {k} inputs", r.len(), boards.len())));
                    }
                    Ok((r, boards.len()))
                });
                match result {
                    // A refused send means the writer stopped on an error: its join says which.
                    Ok((readings, b)) => {
                        if bytes_out.send((readings, b)).is_err() {
                            break;
                        }
                        thought += b;
                        progress(thought, total);
                    }
                    Err(e) => {
                        outcome = Err(e);
                        break;
                    }
                }
            }
            drop(bytes_out);
            drop(boards_in);
            let written = writer.join().unwrap_or_else(|_| Err(Error::Invalid("the cache's writer stopped".into())));
            outcome.map(|()| (thought, written))
        })?;
        written?;
        self.positions = done;
        Ok(())
    }

    /// The readings of positions `range` as f32 in [0, 1]: `[position][descending]`.
    pub fn read(&self, range: std::ops::Range<usize>, reading: Reading) -> Result<Vec<f32>> {
        let d = self.meta.descending;
        let per = row_bytes(d);
        if range.end > self.positions {
            return Err(Error::Invalid(format!("the cache holds {} positions, {} asked for", self.positions, range.end)));
        }
        let mut f = File::open(&self.path).map_err(|e| Error::io(&self.path, e))?;
        f.seek(SeekFrom::Start((range.start * per) as u64)).map_err(|e| Error::io(&self.path, e))?;
        let mut raw = vec![0u8; range.len() * per];
        f.read_exact(&mut raw).map_err(|e| Error::io(&self.path, e))?;
        let offset = if reading == Reading::Mean9To12 { 0 } else { d };
        Ok(raw.chunks_exact(per).flat_map(|row| row[offset..offset + d].iter().map(|&x| x as f32 / 255.0)).collect())
    }
}

/// What a merge did: the whole cache and the bytes joined.
pub struct Merged {
    pub cache: Cache,
    pub parts: usize,
    pub bytes: u64,
}

impl Cache {
    /// Joins the part files of a sharded cache (`cache --shard I/N`) into the whole cache they
    /// belong to (the path without `.part-I-of-N`): the same bytes, in the same order, as one
    /// unsharded run. Refused, naming the file and what differs, when the parts are not all the
    /// parts of one cache (brain, homeostasis, dataset, positions, shard count) or one is unfinished.
    pub fn merge(parts: &[PathBuf]) -> Result<Merged> {
        let mut found = Vec::new();
        for path in parts {
            let sidecar = path.with_extension("json");
            let bytes = std::fs::read(&sidecar).map_err(|e| Error::io(&sidecar, e))?;
            let meta: CacheMeta =
                serde_json::from_slice(&bytes).map_err(|e| Error::Invalid(format!("{}: not a cache's sidecar: {e}", sidecar.display())))?;
            let Some(part) = meta.part else {
                return Err(Error::Invalid(format!("{}: the sidecar of a whole cache, not of a shard's part", sidecar.display())));
            };
            let len = std::fs::metadata(path).map_err(|e| Error::io(path, e))?.len() as usize;
            let records = len / row_bytes(meta.descending.max(1));
            found.push(PartFile { path: path.clone(), key: CacheMeta { part: None, ..meta }, part, records });
        }
        let parts = crate::shard::check_parts(found, "positions")?;
        let whole = crate::shard::whole_file(&parts[0].path)?;
        let meta = parts[0].key.clone();
        let per = row_bytes(meta.descending);
        let pieces: Vec<(PathBuf, u64)> = parts.iter().map(|p| (p.path.clone(), (p.records * per) as u64)).collect();
        let bytes = crate::shard::concatenate(&pieces, &whole)?;
        flychess_brain::files::write_atomically(&whole.with_extension("json"), &serde_json::to_vec_pretty(&meta).expect("plain struct"))?;
        let positions = parts[0].part.total;
        Ok(Merged { cache: Cache { path: whole, meta, positions }, parts: parts.len(), bytes })
    }

    /// The part files of every shard of the cache at `whole` cut `count` ways that exist on disk
    /// (a missing one is named by `merge`'s check).
    pub fn part_files(whole: &Path, count: usize) -> Vec<PathBuf> {
        Shard::all(count).map(|s| crate::shard::part_path(whole, s)).filter(|p| p.exists() && p.with_extension("json").exists()).collect()
    }
}

fn to_byte(rate: f32) -> u8 {
    (rate.clamp(0.0, 1.0) * 255.0).round() as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A control's cache holds what the control reads: the board's planes as `scoring::board_features`
    /// gives them (both readings alike), or the blind baseline's single 0.
    #[test]
    fn a_controls_cache_reads_back_the_board_or_nothing() {
        let data = crate::data::Dataset::load(&crate::data::shipped_path()).unwrap();
        let rows = &data.rows[..37];
        let dir = tempfile::tempdir().unwrap();
        for sensor in [Sensor::BoardPlanes, Sensor::Blind] {
            let k = sensor.control_inputs().unwrap();
            let meta = CacheMeta::new(sensor.control_id().unwrap(), "none", &data, k);
            let path = meta.path_in(dir.path(), "control");
            let mut cache = Cache::open(&path, meta).unwrap();
            cache.fill_reading(rows.iter().cloned().map(Ok), rows.len(), 8, &|b| Ok(sensor.readings(b)), &|_, _| {}, &|| false).unwrap();
            assert_eq!(cache.positions, rows.len());
            let want: Vec<f32> = match sensor {
                Sensor::BoardPlanes => rows.iter().flat_map(|r| crate::scoring::board_features(r).unwrap()).collect(),
                _ => vec![0.0; rows.len()],
            };
            assert_eq!(cache.read(0..rows.len(), Reading::Mean9To12).unwrap(), want, "{sensor:?}, mean of steps 9-12");
            assert_eq!(cache.read(0..rows.len(), Reading::Step12).unwrap(), want, "{sensor:?}, step 12");
        }
        // A reader that gives the wrong number of readings is an error, not a torn cache.
        let meta = CacheMeta::new("wrong", "none", &data, 768);
        let mut cache = Cache::open(&meta.path_in(dir.path(), "wrong"), meta).unwrap();
        let e = cache.fill_reading(rows.iter().cloned().map(Ok), rows.len(), 8, &|_| Ok(vec![0.0; 5]), &|_, _| {}, &|| false);
        assert!(e.is_err() && cache.positions == 0);
    }
}
