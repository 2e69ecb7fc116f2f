//! A long job cut into shards, and the shards joined again: what lets one job run as a Slurm array
//! job (or on several machines by hand) and still end in exactly the file one run writes.
//!
//! A shard is `I/N` (1-based, as a person says "shard 2 of 4"; a Slurm array `--array=1-N` hands
//! out the same numbers). A job whose output is a list of records in a fixed order (the DN cache's
//! positions, `data label`'s lines) gives shard I the contiguous range `Shard::range` of its
//! records; the shard writes them to a part file beside the whole job's output
//! (`NAME.part-I-of-N.EXT`, `part_path`) with a sidecar that carries the whole job's key (brain,
//! homeostasis, dataset content, options) and the `Part` it is, so each part resumes on its own.
//! `check_parts` refuses to join parts of different jobs (naming the file and the field that
//! differs), a shard count that differs, a missing, doubled or unfinished part; `concatenate`
//! then writes the parts' bytes in shard order into the whole output, atomically. Where the job
//! is deterministic the result is the unsharded run's file byte for byte.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// More shards than this is surely a typo (a Slurm array is capped lower by default).
pub const MAX_SHARDS: usize = 100_000;

/// Shard `index` of `count` (1 ≤ index ≤ count).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Every shard of a job cut `count` ways, in order.
    pub fn all(count: usize) -> impl Iterator<Item = Shard> {
        (1..=count).map(move |index| Shard { index, count })
    }

    /// The records of `total` this shard does: contiguous, in order, sizes differing by at most one.
    pub fn range(self, total: usize) -> Range<usize> {
        let cut = |i: usize| (total as u128 * i as u128 / self.count as u128) as usize;
        cut(self.index - 1)..cut(self.index)
    }

    /// `part-I-of-N`, the tag of its part files.
    pub fn tag(self) -> String {
        format!("part-{}-of-{}", self.index, self.count)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Shard, String> {
        let bad = || format!("{s:?}: a shard is I/N, shard I of N, with 1 <= I <= N <= {MAX_SHARDS} (e.g. 2/4)");
        let (i, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let (index, count) = (i.trim().parse::<usize>().map_err(|_| bad())?, n.trim().parse::<usize>().map_err(|_| bad())?);
        if index == 0 || index > count || count > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// What a part file is: its shard and how many records the whole job has (so its range).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    pub shard: Shard,
    pub total: usize,
}

impl Part {
    pub fn range(&self) -> Range<usize> {
        self.shard.range(self.total)
    }
}

/// `DIR/NAME.EXT` → `DIR/NAME.part-I-of-N.EXT`.
pub fn part_path(whole: &Path, shard: Shard) -> PathBuf {
    let stem = whole.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = match whole.extension() {
        Some(ext) => format!("{stem}.{}.{}", shard.tag(), ext.to_string_lossy()),
        None => format!("{stem}.{}", shard.tag()),
    };
    whole.with_file_name(name)
}

/// `DIR/NAME.part-I-of-N.EXT` → (`DIR/NAME.EXT`, shard I/N); None for a name that is not a part's.
pub fn whole_path(part: &Path) -> Option<(PathBuf, Shard)> {
    let name = part.file_name()?.to_str()?;
    let at = name.rfind(".part-")?;
    let (stem, rest) = (&name[..at], &name[at + ".part-".len()..]);
    let (tag, ext) = match rest.split_once('.') {
        Some((tag, ext)) => (tag, Some(ext)),
        None => (rest, None),
    };
    let (i, n) = tag.split_once("-of-")?;
    let shard: Shard = format!("{i}/{n}").parse().ok()?;
    let whole = match ext {
        Some(ext) => format!("{stem}.{ext}"),
        None => stem.to_string(),
    };
    Some((part.with_file_name(whole), shard))
}

/// A part file's sidecar (`….part-I-of-N.json`): the whole job's key and the part.
#[derive(Serialize, Deserialize)]
struct Sidecar<K> {
    #[serde(flatten)]
    key: K,
    part: Part,
}

/// Makes `file` ready for its shard to write: its sidecar says `key` and `part`. A part file left
/// by another job or cut (another sidecar) is set aside as `NAME.EXT.stale-N` first, so a shard
/// never appends to records of another job; a part of this job is kept, to be resumed.
pub fn start_part<K: Serialize + DeserializeOwned + PartialEq + Clone>(file: &Path, key: &K, part: Part) -> Result<()> {
    let sidecar = file.with_extension("json");
    let same = std::fs::read(&sidecar)
        .ok()
        .and_then(|b| serde_json::from_slice::<Sidecar<K>>(&b).ok())
        .is_some_and(|m| m.key == *key && m.part == part);
    if same {
        return Ok(());
    }
    if file.exists() {
        let ext = file.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default();
        let stale = (1..).map(|n| file.with_extension(format!("{ext}.stale-{n}"))).find(|p| !p.exists()).expect("a free name");
        std::fs::rename(file, &stale).map_err(|e| Error::io(file, e))?;
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let sidecar_bytes = serde_json::to_vec_pretty(&Sidecar { key: key.clone(), part }).expect("plain struct");
    Ok(flychess_brain::files::write_atomically(&sidecar, &sidecar_bytes)?)
}

/// `start_part` for a whole (unsharded) job whose records are a prefix of any longer run of the
/// same key (the first N labelled rows of a dataset are the same rows whatever N): a file of the
/// same key with fewer records asked for is kept and grown (its sidecar says the new total), so
/// labelling 1.2 M rows goes on after the first 150,000 instead of setting them aside. A file of
/// another key, or of more records than now asked for, is set aside as `start_part` does.
pub fn start_growing<K: Serialize + DeserializeOwned + PartialEq + Clone>(file: &Path, key: &K, total: usize) -> Result<()> {
    let whole = Shard { index: 1, count: 1 };
    let sidecar = file.with_extension("json");
    let earlier = std::fs::read(&sidecar).ok().and_then(|b| serde_json::from_slice::<Sidecar<K>>(&b).ok());
    let grows = earlier.is_some_and(|m| m.key == *key && m.part.shard == whole && m.part.total < total);
    if grows {
        let sidecar_bytes =
            serde_json::to_vec_pretty(&Sidecar { key: key.clone(), part: Part { shard: whole, total } }).expect("plain struct");
        return Ok(flychess_brain::files::write_atomically(&sidecar, &sidecar_bytes)?);
    }
    start_part(file, key, Part { shard: whole, total })
}

/// The key and part in the sidecar of the part file `file` (`what` names the kind in errors).
pub fn read_sidecar<K: DeserializeOwned>(file: &Path, what: &str) -> Result<(K, Part)> {
    let sidecar = file.with_extension("json");
    let bytes = std::fs::read(&sidecar).map_err(|e| Error::io(&sidecar, e))?;
    let meta: Sidecar<K> =
        serde_json::from_slice(&bytes).map_err(|e| Error::Invalid(format!("{}: not the sidecar of {what}: {e}", sidecar.display())))?;
    Ok((meta.key, meta.part))
}

/// The whole output a part file belongs to, or an error naming a file not named as a part.
pub fn whole_file(part: &Path) -> Result<PathBuf> {
    whole_path(part)
        .map(|(w, _)| w)
        .ok_or_else(|| Error::Invalid(format!("{}: not named as a part (NAME.part-I-of-N.EXT)", part.display())))
}

/// One part file as its job's reader found it: the whole job's key (its sidecar without the
/// part), the part, and how many complete records the file holds.
#[derive(Debug)]
pub struct PartFile<K> {
    pub path: PathBuf,
    pub key: K,
    pub part: Part,
    pub records: usize,
}

/// The fields of two keys that differ, as `field is B (not A)`.
fn differences(a: &serde_json::Value, b: &serde_json::Value) -> Vec<String> {
    let short = |v: Option<&serde_json::Value>| match v {
        Some(serde_json::Value::String(s)) => format!("\"{}\"", flychess_brain::files::quote(s, 100)),
        Some(v) => flychess_brain::files::quote(&v.to_string(), 100),
        None => "(absent)".to_string(),
    };
    match (a.as_object(), b.as_object()) {
        (Some(x), Some(y)) => {
            let mut fields: Vec<&String> = x.keys().chain(y.keys()).collect();
            fields.sort();
            fields.dedup();
            fields
                .into_iter()
                .filter(|f| x.get(*f) != y.get(*f))
                .map(|f| format!("{f} is {} (not {})", short(y.get(f)), short(x.get(f))))
                .collect()
        }
        _ => vec![format!("key is {} (not {})", short(Some(b)), short(Some(a)))],
    }
}

/// Checks that `parts` are every part of one job, each finished: the same key (brain,
/// homeostasis, dataset, options), the same shard count and total, shards 1..=N each once, and
/// every part holding all the records of its range. The error names the file and what is wrong.
/// Returns the parts in shard order.
pub fn check_parts<K: Serialize + PartialEq>(mut parts: Vec<PartFile<K>>, what: &str) -> Result<Vec<PartFile<K>>> {
    let Some(first) = parts.first() else { return Err(Error::Invalid("no part files to merge".into())) };
    let (first_path, first_key) = (first.path.clone(), serde_json::to_value(&first.key).expect("plain struct"));
    let (count, total) = (first.part.shard.count, first.part.total);
    for p in &parts {
        if p.key != first.key {
            let diff = differences(&first_key, &serde_json::to_value(&p.key).expect("plain struct"));
            return Err(Error::Invalid(format!(
                "{}: a part of another job than {}: its {}",
                p.path.display(),
                first_path.display(),
                diff.join("; its ")
            )));
        }
        if p.part.shard.count != count {
            return Err(Error::Invalid(format!(
                "{}: shard {} of a job cut {} ways, but {} is of a job cut {count} ways",
                p.path.display(),
                p.part.shard,
                p.part.shard.count,
                first_path.display()
            )));
        }
        if p.part.total != total {
            return Err(Error::Invalid(format!(
                "{}: a part of a job of {} {what}, but {} is of a job of {total} (another --positions?)",
                p.path.display(),
                p.part.total,
                first_path.display()
            )));
        }
    }
    parts.sort_by_key(|p| p.part.shard.index);
    for (i, p) in parts.iter().enumerate() {
        if p.part.shard.index != i + 1 {
            let missing = Shard { index: i + 1, count };
            return Err(if p.part.shard.index == i {
                Error::Invalid(format!("{}: shard {} is given twice", p.path.display(), p.part.shard))
            } else {
                Error::Invalid(format!(
                    "shard {missing} is missing: {} is a part of a job cut {count} ways, and {} is not among the parts",
                    first_path.display(),
                    part_path(&whole_of(&first_path), missing).display()
                ))
            });
        }
    }
    if parts.len() != count {
        let missing = Shard { index: parts.len() + 1, count };
        return Err(Error::Invalid(format!(
            "shard {missing} is missing: {} is a part of a job cut {count} ways, and {} is not among the parts",
            first_path.display(),
            part_path(&whole_of(&first_path), missing).display()
        )));
    }
    for p in &parts {
        let want = p.part.range().len();
        if p.records != want {
            return Err(Error::Invalid(format!(
                "{}: holds {} of the {want} {what} of shard {}: that shard has not finished (run it again: it resumes)",
                p.path.display(),
                p.records,
                p.part.shard
            )));
        }
    }
    Ok(parts)
}

fn whole_of(part: &Path) -> PathBuf {
    whole_path(part).map(|(w, _)| w).unwrap_or_else(|| part.to_path_buf())
}

/// Writes the first `bytes[i]` bytes of each part, in order, into `whole` (atomically: a kill
/// leaves the old file or the new one). Returns the bytes written.
pub fn concatenate(parts: &[(PathBuf, u64)], whole: &Path) -> Result<u64> {
    use std::io::Read;
    let mut written = 0u64;
    flychess_brain::files::write_atomically_with(whole, |out| {
        for (path, bytes) in parts {
            let file = std::fs::File::open(path).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            let copied = std::io::copy(&mut file.take(*bytes), out)?;
            if copied != *bytes {
                return Err(std::io::Error::other(format!(
                    "{}: {copied} bytes where {bytes} were expected (changed while merging?)",
                    path.display()
                )));
            }
            written += copied;
        }
        Ok(())
    })?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_every_record_once_in_order() {
        for total in [0, 1, 7, 100, 1_000_003] {
            for count in [1, 2, 3, 4, 7, 64] {
                let ranges: Vec<Range<usize>> = Shard::all(count).map(|s| s.range(total)).collect();
                assert_eq!(ranges[0].start, 0);
                assert_eq!(ranges.last().unwrap().end, total);
                for w in ranges.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                }
                let (lo, hi) = (ranges.iter().map(|r| r.len()).min().unwrap(), ranges.iter().map(|r| r.len()).max().unwrap());
                assert!(hi - lo <= 1, "{total} in {count}: {lo}..{hi}");
            }
        }
    }

    #[test]
    fn a_whole_job_grows_on_its_records_and_a_job_of_another_key_is_set_aside() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("labels.jsonl");
        #[derive(Clone, PartialEq, Serialize, Deserialize)]
        struct Key {
            dataset: String,
            depth: u32,
        }
        let key = Key { dataset: "abc".into(), depth: 4 };
        start_growing(&file, &key, 150).unwrap();
        std::fs::write(&file, "row 0\nrow 1\n").unwrap();
        // Asked for more of the same: the records are kept, the sidecar says the new total.
        start_growing(&file, &key, 1200).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "row 0\nrow 1\n");
        let (kept, part): (Key, Part) = read_sidecar(&file, "labels").unwrap();
        assert!(kept == key && part.total == 1200);
        // Fewer than before, or another key: set aside, never appended to.
        start_growing(&file, &key, 100).unwrap();
        assert!(!file.exists() && t.path().join("labels.jsonl.stale-1").exists());
        std::fs::write(&file, "row 0\n").unwrap();
        start_growing(&file, &Key { depth: 6, ..key }, 1200).unwrap();
        assert!(!file.exists() && t.path().join("labels.jsonl.stale-2").exists());
    }

    #[test]
    fn shard_names_are_read_back_and_nonsense_is_refused() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", "1/1000000", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        let s = Shard { index: 3, count: 8 };
        let part = part_path(Path::new("/d/cache/flywire783-abc-123.dn"), s);
        assert_eq!(part, Path::new("/d/cache/flywire783-abc-123.part-3-of-8.dn"));
        assert_eq!(whole_path(&part), Some((PathBuf::from("/d/cache/flywire783-abc-123.dn"), s)));
        assert_eq!(
            whole_path(Path::new("/d/labels.part-1-of-2.jsonl")),
            Some((PathBuf::from("/d/labels.jsonl"), Shard { index: 1, count: 2 }))
        );
        assert_eq!(whole_path(Path::new("/d/labels.jsonl")), None);
    }

    #[derive(Debug, Serialize, PartialEq)]
    struct Key {
        dataset: String,
        brain: String,
    }

    fn part(i: usize, n: usize, dataset: &str, records: usize) -> PartFile<Key> {
        let shard = Shard { index: i, count: n };
        PartFile {
            path: part_path(Path::new("/c/x.dn"), shard),
            key: Key { dataset: dataset.into(), brain: "b".into() },
            part: Part { shard, total: 10 },
            records,
        }
    }

    #[test]
    fn parts_of_another_job_missing_doubled_or_unfinished_are_refused_by_name() {
        let ok = check_parts(vec![part(2, 2, "d", 5), part(1, 2, "d", 5)], "positions").unwrap();
        assert_eq!(ok.iter().map(|p| p.part.shard.index).collect::<Vec<_>>(), [1, 2]);
        let e = check_parts(vec![part(1, 2, "d", 5), part(2, 2, "other", 5)], "positions").unwrap_err().to_string();
        assert!(e.contains("x.part-2-of-2.dn") && e.contains("its dataset is \"other\" (not \"d\")") && !e.contains("brain"), "{e}");
        let e = check_parts(vec![part(1, 2, "d", 5)], "positions").unwrap_err().to_string();
        assert!(e.contains("shard 2/2 is missing") && e.contains("x.part-2-of-2.dn"), "{e}");
        let e = check_parts(vec![part(1, 2, "d", 5), part(1, 2, "d", 5)], "positions").unwrap_err().to_string();
        assert!(e.contains("given twice"), "{e}");
        let e = check_parts(vec![part(1, 2, "d", 5), part(2, 3, "d", 5)], "positions").unwrap_err().to_string();
        assert!(e.contains("cut 3 ways"), "{e}");
        let e = check_parts(vec![part(1, 2, "d", 5), part(2, 2, "d", 4)], "positions").unwrap_err().to_string();
        assert!(e.contains("holds 4 of the 5 positions of shard 2/2"), "{e}");
    }
}
