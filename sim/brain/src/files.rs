//! Files and folders: the one way anything in Fly Chess writes a file, and the one place that
//! knows the layout of the user's data folder. A write goes to a temporary file beside its target
//! (a name unique to the process and the call, so two writers never share one), is synced to disk
//! and renamed into place, and the folder is synced after the rename: a reader sees the old file
//! or the new one, never a torn one, whenever the process is killed. `DataFolder` names every
//! path under the data folder (`$FLYCHESS_DATA`, else the platform's data dir), so the layout is
//! spelled out here once instead of in every caller. Text a user hands over line by line is read
//! through `BoundedLines`, which never holds more than a bound of any one line.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Writes `bytes` to `path` atomically (temporary file, sync, rename, folder sync).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomically_with(path, |f| f.write_all(bytes))
}

/// Writes `path` atomically through a writer: `write` fills the open temporary file (wrap it in a
/// `BufWriter` for many small writes; it is synced and renamed when `write` returns `Ok`).
pub fn write_atomically_with(path: &Path, write: impl FnOnce(&mut File) -> std::io::Result<()>) -> Result<()> {
    create_parent(path)?;
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = File::create(&tmp)?;
        write(&mut f)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    finish(path, &tmp, result.map_err(|e| Error::io(path, e)))
}

/// Writes `path` atomically through a library that insists on writing to a path of its own
/// (burn's recorders): `write` is given a temporary path with the same extension as `path`; the
/// file it leaves there is synced and renamed into place.
pub fn write_atomically_via(path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    create_parent(path)?;
    let tmp = temp_path_keeping_extension(path);
    // The library's error names the temporary file: say which file it was writing.
    let result = write(&tmp).map_err(|e| Error::table(path, format!("could not be written: {e}"))).and_then(|()| {
        let sync = File::open(&tmp).and_then(|f| f.sync_all());
        sync.and_then(|()| fs::rename(&tmp, path)).map_err(|e| Error::io(path, e))
    });
    finish(path, &tmp, result)
}

fn create_parent(path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => fs::create_dir_all(dir).map_err(|e| Error::io(dir, e)),
        _ => Ok(()),
    }
}

/// Removes the temporary file after a failure; syncs the folder after a success (so the rename
/// itself survives a power cut; a folder that cannot be opened for syncing is not an error).
fn finish(path: &Path, tmp: &Path, result: Result<()>) -> Result<()> {
    match result {
        Err(e) => {
            let _ = fs::remove_file(tmp);
            Err(e)
        }
        Ok(()) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
                && let Ok(d) = File::open(dir)
            {
                let _ = d.sync_all();
            }
            Ok(())
        }
    }
}

fn unique_suffix() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}.{n}.tmp", std::process::id())
}

/// A temporary name beside `path`, unique per process and per call (`NAME.PID.N.tmp`).
pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|s| s.to_os_string()).unwrap_or_default();
    name.push(format!(".{}", unique_suffix()));
    path.with_file_name(name)
}

/// Like `temp_path`, but ending in `path`'s own extension (`STEM.PID.N.tmp.EXT`).
fn temp_path_keeping_extension(path: &Path) -> PathBuf {
    match (path.file_stem(), path.extension()) {
        (Some(stem), Some(ext)) => {
            let mut name = stem.to_os_string();
            name.push(format!(".{}.", unique_suffix()));
            name.push(ext);
            path.with_file_name(name)
        }
        _ => temp_path(path),
    }
}

/// Lower-case hexadecimal of a digest (content keys are written this way everywhere).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The folder a portable copy keeps its data in: `flychess-data` beside the program, when it
/// exists (the Windows zip ships it empty, so that the unzipped app writes nothing outside its own
/// folder). None for an installed program.
pub fn portable_folder() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.join(PORTABLE_FOLDER)).filter(|d| d.is_dir())
}

/// The name of a portable copy's data folder (see [`portable_folder`]).
pub const PORTABLE_FOLDER: &str = "flychess-data";

/// The user's data folder and every path in it. Built from a root (`DataFolder::at`) or from the
/// environment (`DataFolder::user`: `$FLYCHESS_DATA` when set, else a portable copy's own
/// `flychess-data` folder, else e.g. `~/.local/share/flychess`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataFolder {
    root: PathBuf,
}

impl DataFolder {
    pub fn at(root: impl AsRef<Path>) -> DataFolder {
        DataFolder { root: root.as_ref().to_path_buf() }
    }

    /// The folder this user's runs, flies and caches live in.
    pub fn user() -> DataFolder {
        if let Some(d) = std::env::var_os("FLYCHESS_DATA").filter(|d| !d.is_empty()) {
            return DataFolder::at(d);
        }
        if let Some(d) = portable_folder() {
            return DataFolder::at(d);
        }
        let root = directories::ProjectDirs::from("org", "flychess", "flychess")
            .map(|p| p.data_dir().to_path_buf())
            .unwrap_or_else(|| PathBuf::from(".flychess"));
        DataFolder::at(root)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    /// Built brains, `NAME.brain`, each carrying the fingerprint of its inputs.
    pub fn brains(&self) -> PathBuf {
        self.root.join("brains")
    }
    /// Tables the user downloaded or the stand-in generated.
    pub fn connectome(&self) -> PathBuf {
        self.root.join("connectome")
    }
    /// The user's flies (`NAME.fly`) and their dopamine kin.
    pub fn flies(&self) -> PathBuf {
        self.root.join("flies")
    }
    /// Readout training runs, one folder each.
    pub fn runs(&self) -> PathBuf {
        self.root.join("runs")
    }
    /// The descending neurons' cached readings, keyed by brain and dataset content.
    pub fn cache(&self) -> PathBuf {
        self.root.join("cache")
    }
    /// Datasets the user made (`NAME.flyd`, e.g. `flychess data games --out NAME`).
    pub fn datasets(&self) -> PathBuf {
        self.root.join("datasets")
    }
    /// The dopamine fly's runs and baselines.
    pub fn bio(&self) -> PathBuf {
        self.root.join("bio")
    }
    /// Charles's runs, one folder each.
    pub fn charles(&self) -> PathBuf {
        self.root.join("charles")
    }
    /// The ladder's games and ratings.
    pub fn ladder(&self) -> PathBuf {
        self.root.join("ladder")
    }
    /// Players' profiles (Stockfish's scores of their ladder games).
    pub fn profiles(&self) -> PathBuf {
        self.root.join("profiles")
    }
    /// Linear probe reports.
    pub fn probes(&self) -> PathBuf {
        self.root.join("probes")
    }
    /// The dopamine fly's lesson comics and records.
    pub fn lessons(&self) -> PathBuf {
        self.root.join("lessons")
    }
    /// Figures, GIFs and PGNs the user exported from the window.
    pub fn exports(&self) -> PathBuf {
        self.root.join("exports")
    }
    /// The Python environment the scipy reference check runs in.
    pub fn reference_venv(&self) -> PathBuf {
        self.root.join("reference-venv")
    }
}

/// One line of `BoundedLines`.
#[derive(Clone, Debug, PartialEq)]
pub enum Line {
    /// The line without its end (`\n` or `\r\n`), invalid UTF-8 replaced.
    Text(String),
    /// A line over the bound: read past, never held; its first characters and its length.
    TooLong { start: String, bytes: u64 },
}

/// The lines of a reader, each held only up to `max` bytes: a longer one is read past and
/// reported as `Line::TooLong` (a 50 MB file without a newline costs one buffer, not 50 MB).
pub struct BoundedLines<R> {
    reader: R,
    max: usize,
}

impl<R: std::io::BufRead> BoundedLines<R> {
    pub fn new(reader: R, max: usize) -> Self {
        BoundedLines { reader, max }
    }
}

/// The first `chars` characters of `text`, with "…" when there is more: what an error quotes.
pub fn quote(text: &str, chars: usize) -> String {
    let mut out: String = text.chars().take(chars).collect();
    if text.chars().nth(chars).is_some() {
        out.push('…');
    }
    out
}

impl<R: std::io::BufRead> Iterator for BoundedLines<R> {
    type Item = std::io::Result<Line>;

    fn next(&mut self) -> Option<Self::Item> {
        use std::io::{BufRead, Read};
        let mut buf = Vec::new();
        match (&mut self.reader).take(self.max as u64 + 1).read_until(b'\n', &mut buf) {
            Ok(0) => return None,
            Ok(_) => {}
            Err(e) => return Some(Err(e)),
        }
        let ended = buf.last() == Some(&b'\n');
        if ended || buf.len() <= self.max {
            if ended {
                buf.pop();
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
            }
            return Some(Ok(Line::Text(String::from_utf8_lossy(&buf).into_owned())));
        }
        // Over the bound: read past the rest of the line without keeping it.
        let mut bytes = buf.len() as u64;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(c) => c,
                Err(e) => return Some(Err(e)),
            };
            if chunk.is_empty() {
                break;
            }
            match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    bytes += i as u64;
                    self.reader.consume(i + 1);
                    break;
                }
                None => {
                    let n = chunk.len();
                    bytes += n as u64;
                    self.reader.consume(n);
                }
            }
        }
        Some(Ok(Line::TooLong { start: quote(&String::from_utf8_lossy(&buf), 40), bytes }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_atomic_write_replaces_whole_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/inside/file.bin");
        write_atomically(&path, b"old").unwrap();
        write_atomically(&path, b"new contents").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new contents");
        let left: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("file.bin")]);
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.bpk");
        write_atomically(&path, b"old").unwrap();
        let e = write_atomically_with(&path, |f| {
            f.write_all(b"half")?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(e.to_string().contains("model.bpk") && e.to_string().contains("disk full"), "{e}");
        let e = write_atomically_via(&path, |tmp| {
            assert_eq!(tmp.extension().unwrap(), "bpk", "the library sees the target's extension");
            fs::write(tmp, b"half").unwrap();
            Err(Error::Invalid("recorder failed".into()))
        })
        .unwrap_err();
        assert!(e.to_string().contains("recorder failed"));
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left behind");
        write_atomically_via(&path, |tmp| fs::write(tmp, b"whole").map_err(|e| Error::io(tmp, e))).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"whole");
    }

    #[test]
    fn temporary_names_never_repeat() {
        let p = Path::new("/x/ratings.json");
        let names: std::collections::HashSet<_> = (0..100).map(|_| temp_path(p)).collect();
        assert_eq!(names.len(), 100);
        assert!(temp_path_keeping_extension(Path::new("/x/model.bpk")).to_string_lossy().ends_with(".tmp.bpk"));
    }

    #[test]
    fn a_line_over_the_bound_is_read_past_not_held() {
        let long = "x".repeat(5_000_000);
        let text = format!("first\r\n{long}\nthird\nlast");
        let lines: Vec<Line> =
            BoundedLines::new(std::io::BufReader::with_capacity(8192, text.as_bytes()), 100).map(|l| l.unwrap()).collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], Line::Text("first".into()));
        assert_eq!(lines[1], Line::TooLong { start: format!("{}…", "x".repeat(40)), bytes: 5_000_000 });
        assert_eq!(lines[2], Line::Text("third".into()));
        assert_eq!(lines[3], Line::Text("last".into()), "a last line without its newline");
        // Exactly at the bound is a line; one byte over is not.
        let at: Vec<Line> = BoundedLines::new("abc\nabcd\n".as_bytes(), 3).map(|l| l.unwrap()).collect();
        assert_eq!(at, [Line::Text("abc".into()), Line::TooLong { start: "abcd".into(), bytes: 4 }]);
        assert_eq!(quote("éèê", 2), "éè…");
    }
}
