//! What a training run is asked to do (`TrainJob`) and what it mixes in: the finishing curriculum
//! (`CurriculumMix`), the games dataset streamed beside the shipped rows with its teacher and
//! engine labels (`GamesMix`, `LabelsUsed`), and the fly a fit starts from (`StartFrom`). Also how
//! a killed run asked again with a labels folder that has grown since keeps the lines it started
//! on (`labels_kept_from`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::RunInfo;
use crate::error::{Error, Result};
use crate::teacher::{EngineLabels, Teacher};
use crate::train::FitOptions;
use flychess_brain::connectome::download::sha256_file;
use flychess_fly::cache::Reading;
use flychess_fly::data::Dataset;
use flychess_fly::fly::Fly;
use flychess_fly::readout::Readout;

/// What to train.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TrainJob {
    pub name: String,
    /// Rows of the shipped dataset used (HOLD and VAL first, the rest TRAIN).
    pub positions: usize,
    pub reading: Reading,
    pub options: FitOptions,
    /// Share of TRAIN made of finishing lessons (DATA/lessons/labels.jsonl, `flychess lessons`);
    /// 0: none.
    #[serde(default)]
    pub lessons: f64,
    /// Master-move rows from a games dataset streamed beside the shipped TRAIN rows (the fit at
    /// scale); None: the shipped rows alone.
    #[serde(default)]
    pub games: Option<GamesMix>,
    /// The curriculum of finishing mixed into every batch (`train --curriculum SHARE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curriculum: Option<CurriculumMix>,
    /// The fly whose readout the fit starts from (`train --from FLY`) instead of a newborn one;
    /// as always, nothing worse on VAL than the start is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<StartFrom>,
}

/// What a run reads besides the shipped rows, by content (issue 68): the sha256 of the games
/// dataset, of each curriculum dataset and of the finishing lessons, by their role ("games",
/// "curriculum 1", …, "lessons"), never their paths. A run records them when it starts
/// (`RunInfo::reads`): a killed run resumes only on the same files, and a control at the fly's
/// size (`eval --controls-at-scale`) is fitted only on the very rows the fly was fitted on.
pub type Reads = std::collections::BTreeMap<String, String>;

impl TrainJob {
    /// The content of every file the job reads besides the shipped rows (`Reads`), hashed now.
    /// The engine labels are keyed already (`LabelsUsed::sha256`).
    pub fn reads(&self, data: &Path) -> Result<Reads> {
        let mut reads = Reads::new();
        if let Some(g) = &self.games {
            reads.insert("games".into(), sha256_file(&g.dataset)?);
        }
        if let Some(c) = &self.curriculum {
            for (i, d) in c.datasets().enumerate() {
                reads.insert(format!("curriculum {}", i + 1), sha256_file(d)?);
            }
        }
        if self.lessons > 0.0 {
            let path = super::lessons_path(data);
            reads.insert(
                "lessons".into(),
                sha256_file(&path).map_err(|e| Error::Invalid(format!("{e} (make them with `flychess lessons`)")))?,
            );
        }
        Ok(reads)
    }
}

/// Where two records of what a run reads differ, in words (None: they agree).
pub fn reads_differ(then: &Reads, now: &Reads) -> Option<String> {
    let roles: std::collections::BTreeSet<&String> = then.keys().chain(now.keys()).collect();
    let changed: Vec<String> = roles
        .into_iter()
        .filter(|r| then.get(*r) != now.get(*r))
        .map(|r| match (then.get(r), now.get(r)) {
            (Some(a), Some(b)) => format!("the {r} file changed (sha256 {} then, {} now)", &a[..12.min(a.len())], &b[..12.min(b.len())]),
            (Some(_), None) => format!("the {r} file is no longer read"),
            _ => format!("the {r} file was not read then"),
        })
        .collect();
    (!changed.is_empty()).then(|| changed.join("; "))
}

/// A finished fly a fit starts from: its file and the sha256 of its bytes, so that a run resumes
/// only from the very fly it started from (a fly saved again under the same name is another start).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct StartFrom {
    pub name: String,
    pub path: PathBuf,
    pub sha256: String,
}

impl StartFrom {
    /// The fly called `name` (`fly::find`: the user's flies, then the shipped ones), keyed by its bytes.
    pub fn named(name: &str, data: &Path) -> Result<StartFrom> {
        let path = flychess_fly::fly::find(name, data)?;
        Ok(StartFrom { name: name.to_string(), sha256: sha256_file(&path)?, path })
    }

    /// Its readout, refused (naming the fly and what differs) when the file changed since the run
    /// was set up, or when it reads another brain, other steps or (with `inputs`, once the cache
    /// says it) another number of neurons. Checked without `inputs` before any cache is made, so
    /// that a fly of another brain is refused at once, not after minutes of thinking.
    pub fn readout(&self, brain_checksum: &str, steps: &[usize], inputs: Option<usize>) -> Result<Readout> {
        if sha256_file(&self.path)? != self.sha256 {
            return Err(Error::Invalid(format!("{}: the fly {:?} changed since the run started from it", self.path.display(), self.name)));
        }
        let fly = Fly::load(&self.path)?;
        let problem = if fly.meta.brain_checksum != brain_checksum {
            Some(format!("it was fitted on another brain ({}, this one is {brain_checksum})", fly.meta.brain_checksum))
        } else if fly.readout.read_steps != steps {
            Some(format!("it reads steps {:?}, the run {:?}", fly.readout.read_steps, steps))
        } else if let Some(inputs) = inputs.filter(|&n| n != fly.readout.inputs) {
            Some(format!("it reads {} neurons, the cache has {inputs}", fly.readout.inputs))
        } else {
            None
        };
        match problem {
            Some(p) => Err(Error::Invalid(format!("cannot start from the fly {:?}: {p}", self.name))),
            None => Ok(fly.readout),
        }
    }
}

/// The curriculum of finishing in a run (`flychess data curriculum`, `datasets::finishing`): the
/// TRAIN rows of the curriculum dataset at `dataset` (never its held-out HOLD), each taught the
/// quickest win (`Target::lesson`), making `share` of every batch.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CurriculumMix {
    pub dataset: PathBuf,
    pub share: f64,
    /// More curricula whose TRAIN rows join the first's (e.g. lessons from a fly's own games,
    /// `data curriculum --own-games`), all of them together making `share` of every batch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more: Vec<PathBuf>,
}

impl CurriculumMix {
    /// Every curriculum dataset of the mix, the first one first.
    pub fn datasets(&self) -> impl Iterator<Item = &PathBuf> {
        std::iter::once(&self.dataset).chain(&self.more)
    }
}

/// The master-move part of a run (`flychess data games`): TRAIN rows of the dataset at
/// `dataset`, their DN readings cached like the shipped rows' and read a block at a time
/// (`crate::stream_fit`), with `stockfish_share` of every batch drawn from the shipped
/// Stockfish-labelled TRAIN rows.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GamesMix {
    pub dataset: PathBuf,
    pub positions: usize,
    pub stockfish_share: f64,
    /// Stockfish's moves for the dataset's TRAIN rows (issue 55); None: the master's alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_labels: Option<LabelsUsed>,
    /// Who teaches the dataset's rows (the master's move by default, as before issue 55).
    #[serde(default)]
    pub teacher: Teacher,
}

/// The engine labels a run uses: their folder and how many of its lines, fixed when the run
/// starts (the labelling job may go on writing; a resumed run reads the same lines).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LabelsUsed {
    pub dir: PathBuf,
    pub rows: usize,
    /// The sha256 of those lines (`teacher::lines_sha256`): a resumed run checks it reads the very
    /// lines it started with. Absent in the runs of before (they resume as they did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

impl GamesMix {
    /// The master's moves alone (every run before issue 55).
    pub fn master(dataset: PathBuf, positions: usize, stockfish_share: f64) -> GamesMix {
        GamesMix { dataset, positions, stockfish_share, engine_labels: None, teacher: Teacher::default() }
    }

    /// `positions` TRAIN rows of `dataset` taught by `teacher` (`Teacher::parse`'s words; default:
    /// Stockfish where `labels` is given, else the master), with the engine labels in `labels`.
    /// A teacher without the master takes only the labelled rows (`positions` shrinks to them).
    pub fn taught(
        dataset: PathBuf,
        positions: usize,
        stockfish_share: f64,
        labels: Option<PathBuf>,
        teacher: Option<&str>,
    ) -> Result<GamesMix> {
        let teacher = match (teacher, &labels) {
            (Some(t), _) => Teacher::parse(t)?,
            (None, Some(_)) => Teacher::parse("engine")?,
            (None, None) => Teacher::default(),
        };
        let Some(dir) = labels else {
            if teacher.engine > 0.0 {
                return Err(Error::Invalid(
                    "a teacher with Stockfish's moves needs them: --engine-labels DIR (`flychess data label --dataset`)".into(),
                ));
            }
            return Ok(GamesMix::master(dataset, positions, stockfish_share));
        };
        // The same folder and dataset however they are written (relative one time, absolute the
        // next): a run is keyed by what it reads.
        let dir = std::fs::canonicalize(&dir).map_err(|e| Error::io(&dir, e))?;
        let dataset = std::fs::canonicalize(&dataset).map_err(|e| Error::io(&dataset, e))?;
        let labels = read_engine_labels(&dataset, &dir, positions)?;
        if teacher.every_move && labels.every.is_none() {
            return Err(Error::Invalid(format!(
                "{}: these labels hold Stockfish's best move alone; `--teacher every-move` needs labels of `flychess data label --every-move`",
                dir.display()
            )));
        }
        let rows = labels.labels.len();
        let sha256 = crate::teacher::lines_sha256(&dir.join("labels.jsonl"), rows)?;
        let positions = if teacher.engine_only() { positions.min(rows) } else { positions };
        Ok(GamesMix { dataset, positions, stockfish_share, engine_labels: Some(LabelsUsed { dir, rows, sha256 }), teacher })
    }

    /// Positions of the dataset taught by the master's move and by Stockfish's.
    pub fn by_teacher(&self) -> Vec<(&'static str, usize)> {
        let labelled = self.engine_labels.as_ref().map_or(0, |l| l.rows.min(self.positions));
        let mut by = Vec::new();
        if self.teacher.master > 0.0 {
            by.push(("master", self.positions));
        }
        if self.teacher.engine > 0.0 {
            by.push((self.teacher.engine_source(), labelled));
        }
        by
    }
}

/// The first `most` engine labels in `dir` for the TRAIN rows of the dataset at `dataset`:
/// refused when they are another dataset's (by content hash) or do not start at its first TRAIN row.
pub fn read_engine_labels(dataset: &Path, dir: &Path, most: usize) -> Result<EngineLabels> {
    let stream = Dataset::stream(dataset)?;
    let first = stream.meta.hold + stream.meta.val;
    let sha = stream.content_hash()?;
    let labels = EngineLabels::read(dir, &sha, most)?;
    if labels.first_row != first {
        return Err(Error::Invalid(format!(
            "{}: the labels start at row {}, the TRAIN rows of {} at {first}",
            dir.display(),
            labels.first_row,
            dataset.display()
        )));
    }
    if labels.labels.is_empty() {
        return Err(Error::Invalid(format!("{}: no whole line of labels yet", dir.display())));
    }
    Ok(labels)
}

/// A killed run whose labels folder has grown since it started (the labelling job went on) is
/// asked again with more lines than it started with: it takes the games mix it started with, when
/// the two differ only in how many lines of the same labels folder they read and the folder still
/// begins with those very lines (by their sha256). Lines that have changed are refused, saying so
/// (the run would otherwise start again and lose its passes). (the job, what was kept in words.)
pub(super) fn labels_kept_from(job: &TrainJob, previous: Option<&RunInfo>) -> Result<(TrainJob, Option<String>)> {
    let unchanged = || Ok((job.clone(), None));
    let (Some(then), Some(now)) = (previous.filter(|p| !p.finished).and_then(|p| p.games.as_ref()), job.games.as_ref()) else {
        return unchanged();
    };
    let (Some(l_then), Some(l_now)) = (&then.engine_labels, &now.engine_labels) else { return unchanged() };
    let same_source = l_then.dir == l_now.dir
        && then.dataset == now.dataset
        && then.teacher == now.teacher
        && then.stockfish_share == now.stockfish_share;
    if then == now || !same_source || l_then.rows == l_now.rows {
        return unchanged();
    }
    let Some(sha) = &l_then.sha256 else { return unchanged() };
    let path = l_then.dir.join("labels.jsonl");
    if crate::teacher::lines_sha256(&path, l_then.rows)?.as_ref() != Some(sha) {
        return Err(Error::Invalid(format!(
            "{}: the first {} lines, which the killed run {} started on, are not the lines it read (the labels were changed or cut); \
             it cannot resume on them: put those labels back, or train under another name",
            path.display(),
            l_then.rows,
            job.name
        )));
    }
    let mut kept = job.clone();
    kept.games = Some(then.clone());
    let words = format!(
        "the {} lines of labels it started on (the folder has {} now; a new run under another name reads them all)",
        l_then.rows, l_now.rows
    );
    Ok((kept, Some(words)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flychess_fly::fly::FlyMeta;

    /// Issue 68: a killed run whose labels folder has grown since (the labelling job went on)
    /// resumes on the lines it started with instead of starting again; labels whose first lines
    /// changed are refused, naming the file; an old run without the lines' hash is left as it was.
    #[test]
    fn a_run_resumes_on_the_labels_it_started_with_when_the_folder_has_grown() {
        let dir = tempfile::tempdir().unwrap();
        let labels = dir.path().join("labels.jsonl");
        let lines: Vec<String> = (0..5).map(|i| format!("{{\"i\":{i}}}\n")).collect();
        std::fs::write(&labels, lines[..3].concat()).unwrap();
        let mix = |rows: usize| GamesMix {
            dataset: dir.path().join("g.flyd"),
            positions: rows,
            stockfish_share: 0.25,
            engine_labels: Some(LabelsUsed {
                dir: dir.path().to_path_buf(),
                rows,
                sha256: crate::teacher::lines_sha256(&labels, rows).unwrap(),
            }),
            teacher: Teacher::parse("engine").unwrap(),
        };
        let job = |games: GamesMix| TrainJob {
            name: "grown".into(),
            positions: 7000,
            reading: Reading::Mean9To12,
            options: FitOptions::default(),
            lessons: 0.0,
            games: Some(games),
            curriculum: None,
            from: None,
        };
        let started = job(mix(3));
        let run = RunInfo {
            name: "grown".into(),
            brain: "b".into(),
            brain_checksum: "c".into(),
            positions: 7000,
            reading: Reading::Mean9To12,
            fit: FitOptions::default(),
            lessons: 0.0,
            games: started.games.clone(),
            curriculum: None,
            from: None,
            reads: None,
            blind: None,
            hold: None,
            finished: false,
        };
        // The labelling job wrote two more lines; the run is asked again.
        std::fs::write(&labels, lines.concat()).unwrap();
        let again = job(mix(5));
        let (kept, words) = labels_kept_from(&again, Some(&run)).unwrap();
        assert_eq!(kept.games, started.games, "the lines it started with");
        assert!(words.unwrap().contains("the 3 lines"));
        // A finished run, or the same lines, change nothing.
        assert_eq!(labels_kept_from(&again, Some(&RunInfo { finished: true, ..run.clone() })).unwrap().0.games, again.games);
        assert_eq!(labels_kept_from(&started, Some(&run)).unwrap().1, None);
        // The first lines changed under it: refused, naming the file.
        std::fs::write(&labels, "{\"i\":9}\n".to_string() + &lines[1..].concat()).unwrap();
        let e = labels_kept_from(&again, Some(&run)).unwrap_err().to_string();
        assert!(e.contains("labels.jsonl") && e.contains("cannot resume"), "{e}");
        // A run of before the lines' hash: as before (no claim about lines it cannot check).
        let mut old = run.clone();
        old.games.as_mut().unwrap().engine_labels.as_mut().unwrap().sha256 = None;
        assert_eq!(labels_kept_from(&again, Some(&old)).unwrap().0.games, again.games);
    }

    fn save(data: &Path, name: &str, checksum: &str, steps: Vec<usize>, inputs: usize) {
        let flies = flychess_brain::files::DataFolder::at(data).flies();
        std::fs::create_dir_all(&flies).unwrap();
        let meta = FlyMeta {
            name: name.into(),
            kind: "trained".into(),
            brain: "b".into(),
            brain_checksum: checksum.into(),
            homeostasis: "h".into(),
            reading: Reading::Mean9To12,
            data: "d".into(),
            train_positions: 1,
            val: None,
            hold: None,
            created: "2026-12-06".into(),
            teacher: None,
            positions_by_teacher: None,
        };
        Fly { meta, readout: Readout::newborn(inputs, steps, 7) }.save(&flies.join(format!("{name}.fly"))).unwrap();
    }

    #[test]
    fn a_fit_starts_only_from_the_very_fly_it_was_set_up_with_of_the_same_brain_steps_and_width() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        let steps: Vec<usize> = (8..12).collect();
        save(data, "mine", "brain-a", steps.clone(), 5);
        let from = StartFrom::named("mine", data).unwrap();
        let r = from.readout("brain-a", &steps, Some(5)).unwrap();
        assert_eq!(from.readout("brain-a", &steps, None).unwrap(), r);
        assert_eq!(r, Fly::load(&from.path).unwrap().readout);
        // Another brain, other steps, another width: refused, naming the fly and what differs.
        let e = from.readout("brain-b", &steps, None).unwrap_err().to_string();
        assert!(e.contains("\"mine\"") && e.contains("another brain"), "{e}");
        assert!(from.readout("brain-a", &[11], None).unwrap_err().to_string().contains("steps"));
        assert!(from.readout("brain-a", &steps, Some(6)).unwrap_err().to_string().contains("neurons"));
        // The same name saved again is another fly: a run set up with the old one refuses it.
        save(data, "mine", "brain-a", steps.clone(), 4);
        let e = from.readout("brain-a", &steps, Some(5)).unwrap_err().to_string();
        assert!(e.contains("changed"), "{e}");
        assert_ne!(StartFrom::named("mine", data).unwrap().sha256, from.sha256);
        assert!(StartFrom::named("nobody", data).is_err());
    }
}
