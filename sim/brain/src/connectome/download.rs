//! Fetching the release tables: resumable HTTP(S) downloads into `NAME.part`, resumed with a
//! `Range` request after a dropped connection (within one call, and across runs), checked for
//! size and sha256 (or the md5 a server states) before the file is renamed to its real name. A
//! file that fails its check is never used and never deleted: a wrong hash moves it aside to
//! `NAME.rejected-N` (the message says where, and what was expected), a short one is kept for the
//! next resume.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::files::hex;

/// One file to fetch.
#[derive(Clone, Debug)]
pub struct Fetch {
    pub url: String,
    pub dest: PathBuf,
    pub bytes: Option<u64>,
    pub sha256: Option<String>,
    /// md5 (lowercase hex), where that is all a server states (Zenodo, Google's buckets).
    pub md5: Option<String>,
}

/// How a fetch ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Already on disk and verified: nothing fetched.
    AlreadyThere,
    /// Fetched (resumed `resumes` times after a dropped connection).
    Fetched { resumes: u32 },
}

/// Progress: bytes on disk so far and the expected total when known.
pub type ByteProgress<'a> = &'a dyn Fn(u64, Option<u64>);

/// Moves a file that failed its check out of the way, keeping it: `NAME.rejected-1`, `-2`, ….
pub fn set_aside(path: &Path, dest: &Path) -> Result<PathBuf> {
    let name = dest.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let aside = (1..).map(|k| dest.with_file_name(format!("{name}.rejected-{k}"))).find(|p| !p.exists()).expect("an unused name");
    fs::rename(path, &aside).map_err(|e| Error::io(path, e))?;
    Ok(aside)
}

fn part_path(dest: &Path) -> PathBuf {
    let mut name = dest.file_name().map(|s| s.to_os_string()).unwrap_or_default();
    name.push(".part");
    dest.with_file_name(name)
}

/// A digest of a file, hex, read a megabyte at a time.
fn digest_file<D: Digest>(path: &Path) -> Result<String> {
    let mut f = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut h = D::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

/// sha256 of a file, hex.
pub fn sha256_file(path: &Path) -> Result<String> {
    digest_file::<Sha256>(path)
}

/// sha256 of a file, remembered in `memo` (a JSON map from the file's absolute path to its size,
/// modification time and digest): a large table is read once per version, not at every start.
/// A moved or re-downloaded file is read again, and gives the same digest when its content is
/// the same. A memo that cannot be read or written only costs the reading.
pub fn sha256_remembered(path: &Path, memo: &Path) -> Result<String> {
    #[derive(serde::Serialize, serde::Deserialize, PartialEq)]
    struct Seen {
        len: u64,
        modified_ns: u128,
        sha256: String,
    }
    let meta = fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let modified_ns = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map(|d| d.as_nanos()).unwrap_or(0);
    let key = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()).display().to_string();
    let mut known: std::collections::BTreeMap<String, Seen> =
        fs::read(memo).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    if let Some(seen) = known.get(&key)
        && seen.len == meta.len()
        && seen.modified_ns == modified_ns
        && modified_ns != 0
    {
        return Ok(seen.sha256.clone());
    }
    let sha256 = sha256_file(path)?;
    known.insert(key, Seen { len: meta.len(), modified_ns, sha256: sha256.clone() });
    if let Some(dir) = memo.parent() {
        let _ = fs::create_dir_all(dir);
    }
    if let Ok(text) = serde_json::to_vec_pretty(&known) {
        let _ = crate::files::write_atomically(memo, &text);
    }
    Ok(sha256)
}

/// md5 of a file, hex (what Zenodo and Google's buckets state).
pub fn md5_file(path: &Path) -> Result<String> {
    digest_file::<md5::Md5>(path)
}

fn verified(path: &Path, f: &Fetch) -> Result<bool> {
    let len = fs::metadata(path).map_err(|e| Error::io(path, e))?.len();
    if f.bytes.is_some_and(|b| b != len) {
        return Ok(false);
    }
    if let Some(want) = &f.md5
        && &md5_file(path)? != want
    {
        return Ok(false);
    }
    match &f.sha256 {
        Some(want) => Ok(&sha256_file(path)? == want),
        None => Ok(true),
    }
}

/// Downloads `f.url` to `f.dest`, resuming up to `attempts` times after a dropped connection.
pub fn fetch(f: &Fetch, attempts: u32, progress: ByteProgress) -> Result<Outcome> {
    if f.dest.exists() {
        if verified(&f.dest, f)? {
            return Ok(Outcome::AlreadyThere);
        }
        // A damaged final file is moved out of the way (kept), never used.
        let aside = set_aside(&f.dest, &f.dest)?;
        tracing::warn!("{} does not match what is expected; kept as {}", f.dest.display(), aside.display());
    }
    if let Some(dir) = f.dest.parent() {
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let part = part_path(&f.dest);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_recv_response(Some(Duration::from_secs(60)))
        .build()
        .into();
    let mut resumes = 0;
    let mut last_problem = String::new();
    let mut finished = false;
    for attempt in 0..attempts.max(1) {
        let have = fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
        if f.bytes.is_some_and(|b| have > b) {
            fs::remove_file(&part).map_err(|e| Error::io(&part, e))?;
            continue;
        }
        if f.bytes.is_some_and(|b| have == b) {
            finished = true;
            break;
        }
        if attempt > 0 {
            resumes += 1;
            std::thread::sleep(Duration::from_millis(200 * attempt as u64));
        }
        match fetch_once(&agent, f, &part, have, progress) {
            Ok(()) => {
                finished = true;
                break;
            }
            Err(Transfer::Retry(problem)) => last_problem = problem,
            Err(Transfer::Fatal(e)) => return Err(e),
        }
    }
    if !finished {
        return Err(Error::download(
            &f.url,
            format!("gave up after {} attempts ({last_problem}); run the command again to resume", attempts.max(1)),
        ));
    }
    let len = fs::metadata(&part).map_err(|e| Error::io(&part, e))?.len();
    if let Some(want) = f.bytes
        && len < want
    {
        return Err(Error::download(
            &f.url,
            format!("truncated: the server sent {len} of {want} bytes; the partial file is kept to resume later"),
        ));
    }
    if let Some(want) = &f.sha256 {
        let got = sha256_file(&part)?;
        if &got != want {
            let aside = set_aside(&part, &f.dest)?;
            return Err(Error::download(
                &f.url,
                format!("sha256 mismatch: expected {want}, got {got}; the file was not used and is kept as {}", aside.display()),
            ));
        }
    }
    if let Some(want) = &f.md5 {
        let got = md5_file(&part)?;
        if &got != want {
            let aside = set_aside(&part, &f.dest)?;
            return Err(Error::download(
                &f.url,
                format!(
                    "md5 mismatch: the server states {want}, the file has {got}; the file was not used and is kept as {}",
                    aside.display()
                ),
            ));
        }
    }
    fs::rename(&part, &f.dest).map_err(|e| Error::io(&f.dest, e))?;
    Ok(Outcome::Fetched { resumes })
}

enum Transfer {
    /// A dropped or short transfer: resume.
    Retry(String),
    Fatal(Error),
}

fn fetch_once(agent: &ureq::Agent, f: &Fetch, part: &Path, have: u64, progress: ByteProgress) -> std::result::Result<(), Transfer> {
    let mut request = agent.get(&f.url);
    if have > 0 {
        request = request.header("Range", format!("bytes={have}-"));
    }
    let response = request.call().map_err(|e| Transfer::Retry(format!("connection failed: {e}")))?;
    let status = response.status().as_u16();
    let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let content_length = header("content-length").and_then(|v| v.parse::<u64>().ok());
    let (append, start) = match status {
        206 => {
            // "bytes START-END/TOTAL": only append when the server starts where we stopped.
            let start = header("content-range")
                .and_then(|r| r.strip_prefix("bytes ").and_then(|r| r.split('-').next()).and_then(|s| s.parse::<u64>().ok()));
            if start != Some(have) { (false, 0) } else { (true, have) }
        }
        200 => (false, 0),
        416 if have > 0 => return Ok(()), // nothing more to send: the size check decides
        404 => return Err(Transfer::Fatal(Error::download(&f.url, "not found on the server (HTTP 404)"))),
        s => return Err(Transfer::Fatal(Error::download(&f.url, format!("the server answered HTTP {s}")))),
    };
    if status == 206 && !append {
        // The server ignored where we were; start over on the next attempt.
        let _ = fs::remove_file(part);
        return Err(Transfer::Retry("the server resumed at the wrong place".into()));
    }
    let mut out = OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(part)
        .map_err(|e| Transfer::Fatal(Error::io(part, e)))?;
    let total = f.bytes.or(content_length.map(|l| l + start));
    let mut reader = response.into_body().into_reader();
    let mut buf = vec![0u8; 1 << 16];
    let mut got = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                let _ = out.flush();
                return Err(Transfer::Retry(format!("connection dropped after {} bytes: {e}", start + got)));
            }
        };
        out.write_all(&buf[..n]).map_err(|e| Transfer::Fatal(Error::io(part, e)))?;
        got += n as u64;
        progress(start + got, total);
    }
    out.sync_all().map_err(|e| Transfer::Fatal(Error::io(part, e)))?;
    if content_length.is_some_and(|l| got < l) {
        return Err(Transfer::Retry(format!("connection closed after {} of {} bytes", got, content_length.unwrap_or(0))));
    }
    Ok(())
}
