//! `flychess cache` and the DN-rate cache every readout command reads: a brain run once over a
//! dataset's positions (the shipped one by default), its descending neurons' rates kept as bytes
//! in DATA/cache, resumable, streamed off the dataset a batch at a time; one shard of the job
//! (`--shard I/N`) into its part file, or the parts joined (`--merge-shards N`).

use std::path::Path;
use std::time::Instant;

use anyhow::{Result, anyhow};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use flychess_brain::brain::simulator::{EngineChoice, Simulator};
use flychess_brain::calibrate::CalibrationOptions;
use flychess_brain::connectome::brain_file::Loaded;

use crate::cli::cluster::ShardArgs;
use crate::cli::memory::peak_memory_mb;
use crate::cli::options::ready;
use crate::cli::options::{EngineArgs, WhichBrain};

// The arguments of `flychess cache` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct CacheArgs {
    /// How many positions (in dataset order: HOLD, VAL, then TRAIN). Default: all.
    #[arg(long)]
    pub positions: Option<usize>,
    /// The dataset: a name (DATA/datasets/NAME.flyd, e.g. from `flychess data games`) or a
    /// path ending in .flyd. Default: the shipped positions.
    #[arg(long)]
    pub dataset: Option<String>,
    /// Positions per think (default: 32 on the CPU engine, a few thousand on a GPU).
    #[arg(long)]
    pub batch: Option<usize>,
    #[command(flatten)]
    pub shards: ShardArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub which: WhichBrain,
}

/// Runs `flychess cache`: the dataset named (else the shipped one) cached whole, one shard of
/// it, or its shards' parts joined.
pub fn run(args: &CacheArgs, data: &Path) -> Result<()> {
    let dataset = match &args.dataset {
        Some(name) => crate::cli::datasets::dataset_path(name, data)?,
        None => flychess_fly::data::shipped_path(),
    };
    cache_job(&args.which, data, &dataset, args.positions, args.batch, args.engine.choice(), CacheJob::from(args.shards)).map(|_| ())
}

/// Fills (or resumes) the DN-rate cache of a brain over the shipped dataset.
/// Returns the cache and the brain file it belongs to.
pub fn cache(
    which: &WhichBrain,
    data: &Path,
    positions: Option<usize>,
    batch: Option<usize>,
    engine: EngineChoice,
) -> Result<(flychess_fly::cache::Cache, Loaded)> {
    cache_of(which, data, &flychess_fly::data::shipped_path(), positions, batch, engine)
}

/// Which part of a cache job a run does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CacheJob {
    /// Every position, into the whole cache.
    Whole,
    /// One shard's positions into its part file.
    Shard(flychess_fly::shard::Shard),
    /// No thinking: the parts of a job cut this many ways joined into the whole cache.
    Merge(usize),
}

impl From<ShardArgs> for CacheJob {
    /// `--shard I/N` is that shard's job, `--merge-shards N` the merge, neither the whole cache.
    fn from(shards: ShardArgs) -> CacheJob {
        match (shards.shard, shards.merge_shards) {
            (Some(shard), _) => CacheJob::Shard(shard),
            (None, Some(n)) => CacheJob::Merge(n as usize),
            (None, None) => CacheJob::Whole,
        }
    }
}

/// Fills (or resumes) the DN-rate cache of a brain over the dataset at `dataset` (its first
/// `positions` rows, default all), reading the rows off the file as it goes: memory is one batch
/// and the brain, whatever the dataset's size. Prints the speed, the bytes a position takes and
/// the peak memory.
pub fn cache_of(
    which: &WhichBrain,
    data: &Path,
    dataset: &Path,
    positions: Option<usize>,
    batch: Option<usize>,
    engine: EngineChoice,
) -> Result<(flychess_fly::cache::Cache, Loaded)> {
    cache_job(which, data, dataset, positions, batch, engine, CacheJob::Whole)
}

/// `cache_of` for the whole cache, one shard of it (its positions `Shard::range` of the total into
/// `….part-I-of-N.dn`, resumable on its own), or the merge of the shards' parts into the whole
/// cache (refused, naming the file, when a part is missing, unfinished or of another job).
pub fn cache_job(
    which: &WhichBrain,
    data: &Path,
    dataset: &Path,
    positions: Option<usize>,
    batch: Option<usize>,
    engine: EngineChoice,
    job: CacheJob,
) -> Result<(flychess_fly::cache::Cache, Loaded)> {
    use flychess_fly::cache::{Cache, CacheMeta};
    use flychess_fly::data::Dataset;
    let spec = which.spec(data)?;
    let (loaded, brain) = ready(&spec, data, CalibrationOptions::default())?;
    let stream = Dataset::stream(dataset)?;
    let meta = stream.meta.clone();
    let total = positions.unwrap_or(meta.rows).min(meta.rows);
    let descending = &loaded.connectome.groups.descending;
    let whole_meta = CacheMeta::of(
        &loaded.checksum,
        &flychess_brain::calibrate::fingerprint(brain.homeostasis()),
        &meta.source,
        meta.rows,
        &stream.content_hash()?,
        descending.len(),
    );
    let cache_dir = flychess_brain::files::DataFolder::at(data).cache();
    let whole = whole_meta.path_in(&cache_dir, &spec.name());
    let (meta, range) = match job {
        CacheJob::Whole => (whole_meta, 0..total),
        CacheJob::Shard(shard) => (whole_meta.part(shard, total), shard.range(total)),
        CacheJob::Merge(count) => {
            let started = Instant::now();
            let merged = Cache::merge(&Cache::part_files(&whole, count)).map_err(|e| match e {
                flychess_fly::Error::Invalid(m) if m.starts_with("no part files") => {
                    anyhow!("no part of this cache cut {count} ways is in {} (run `cache --shard I/{count}` first)", cache_dir.display())
                }
                e => e.into(),
            })?;
            if merged.cache.positions != total {
                return Err(anyhow!("the parts hold {} positions, {total} asked for", merged.cache.positions));
            }
            eprintln!(
                "{}: {} positions joined from {} parts ({:.1} MB in {:.2} s)",
                merged.cache.path.display(),
                merged.cache.positions,
                merged.parts,
                merged.bytes as f64 / 1e6,
                started.elapsed().as_secs_f64()
            );
            return Ok((merged.cache, loaded));
        }
    };
    let path = meta.path_in(&cache_dir, &spec.name());
    let mut cache = Cache::open(&path, meta)?;
    let want = range.len();
    if cache.positions >= want {
        eprintln!("{}: all {want} positions already cached", path.display());
        return Ok((cache, loaded));
    }
    let sim = Simulator::choose(engine, &brain)?;
    let batch = batch.unwrap_or_else(|| sim.preferred_batch());
    match job {
        CacheJob::Shard(shard) => eprintln!(
            "shard {shard}: positions {}..{} of {total}, thinking on the {}, {batch} positions at a time",
            range.start,
            range.end,
            sim.describe()
        ),
        _ => eprintln!("thinking on the {}, {batch} positions at a time", sim.describe()),
    }
    let bar = ProgressBar::new(want as u64);
    bar.set_style(
        ProgressStyle::with_template("caching DN rates [{bar:40}] {pos}/{len} positions, {per_sec}, eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_position(cache.positions as u64);
    let started = Instant::now();
    let from = cache.positions;
    let rows = Dataset::stream(dataset)?.skip(range.start);
    cache.fill_streamed(&sim, &brain, descending, rows, want, batch, &|done, _| bar.set_position(done as u64), &|| false)?;
    bar.finish_and_clear();
    let made = cache.positions - from;
    let seconds = started.elapsed().as_secs_f64().max(1e-9);
    eprintln!(
        "{}: {} positions cached ({} new in {:.1} s, {:.1} positions/s, {}, batch {batch}); {} bytes a position ({:.2} GB in all); peak memory {}",
        path.display(),
        cache.positions,
        made,
        seconds,
        made as f64 / seconds,
        sim.describe(),
        2 * descending.len(),
        (cache.positions * 2 * descending.len()) as f64 / 1e9,
        peak_memory_mb().map(|mb| format!("{mb:.0} MB")).unwrap_or_else(|| "unknown".into()),
    );
    Ok((cache, loaded))
}
