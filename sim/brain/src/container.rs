//! The small binary container the project's own files share (datasets, flies, homeostasis):
//! an 8-byte magic, a u32 format version, a u32 header length, the header (JSON), the body, and
//! sha256 of everything before it. Written atomically; read back only when magic, version and
//! checksum all hold, so a damaged or foreign file is refused with a reason, never half-used.
//! The same checks read a container from bytes (`read_bytes`: a file read whole, or fetched by a
//! page).

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::files::write_atomically;

/// Writes `header` and `body` under `magic` and `version`.
pub fn write<H: Serialize>(path: &Path, magic: &[u8; 8], version: u32, header: &H, body: &[u8]) -> Result<()> {
    let header = serde_json::to_vec_pretty(header).map_err(|e| Error::table(path, e.to_string()))?;
    let mut buf = Vec::with_capacity(16 + header.len() + body.len() + 32);
    buf.extend_from_slice(magic);
    buf.extend_from_slice(&version.to_le_bytes());
    buf.extend_from_slice(&(header.len() as u32).to_le_bytes());
    buf.extend_from_slice(&header);
    buf.extend_from_slice(body);
    let digest = Sha256::digest(&buf);
    buf.extend_from_slice(&digest);
    write_atomically(path, &buf)
}

/// Reads a container back: its header and body. `what` names the kind of file in errors. The
/// file's first 16 bytes are checked (magic, version, a header length that fits the file) before
/// anything else is read, so a foreign file costs 16 bytes, not its size.
pub fn read<H: DeserializeOwned>(path: &Path, magic: &[u8; 8], version: u32, what: &str) -> Result<(H, Vec<u8>)> {
    read_at_most(path, magic, version, what, u64::MAX)
}

/// `read`, refusing (before reading it) a file over `limit` bytes: the largest of its kind.
pub fn read_at_most<H: DeserializeOwned>(path: &Path, magic: &[u8; 8], version: u32, what: &str, limit: u64) -> Result<(H, Vec<u8>)> {
    let bytes = file_bytes(path, magic, version, what, limit)?;
    let (header, body) = read_bytes(&bytes, path, magic, version, what, limit)?;
    Ok((header, body.to_vec()))
}

/// The whole of the container file at `path`, for `read_bytes` to check: its first 16 bytes are
/// checked (`check_head`) before the rest is read, so a foreign file or one over `limit` costs 16
/// bytes, and no more is set aside than the file's size.
pub fn file_bytes(path: &Path, magic: &[u8; 8], version: u32, what: &str, limit: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let bad = |problem: String| Error::table(path, problem);
    let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let size = f.metadata().map_err(|e| Error::io(path, e))?.len();
    let mut head = [0u8; 16];
    if size < 48 || f.read_exact(&mut head).is_err() {
        return Err(bad(format!("not a Fly Chess {what}")));
    }
    check_head(&head, size, path, magic, version, what, limit)?;
    // The rest, at most what the file's size said (a file growing meanwhile is read no further).
    let mut bytes = head.to_vec();
    bytes.try_reserve_exact((size - 16) as usize).map_err(|e| bad(format!("{size} bytes cannot be held: {e}")))?;
    (&mut f).take(size - 16).read_to_end(&mut bytes).map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 != size {
        return Err(bad(format!("{} bytes read of {size}: the file changed while it was read", bytes.len())));
    }
    Ok(bytes)
}

/// Reads a container from its bytes (a file read whole, or fetched by a page): its header and
/// body, once magic, version, size (at most `limit`), header length and checksum all hold.
/// `name` is what errors call it. Nothing is allocated beyond the header and its values.
pub fn read_bytes<'a, H: DeserializeOwned>(
    bytes: &'a [u8],
    name: &Path,
    magic: &[u8; 8],
    version: u32,
    what: &str,
    limit: u64,
) -> Result<(H, &'a [u8])> {
    let bad = |problem: String| Error::table(name, problem);
    let len = check_head(bytes, bytes.len() as u64, name, magic, version, what, limit)? as usize;
    let (content, stored) = bytes.split_at(bytes.len() - 32);
    if Sha256::digest(content).as_slice() != stored {
        return Err(bad("checksum mismatch: the file is damaged".into()));
    }
    let header = content.get(16..16 + len).and_then(|h| serde_json::from_slice(h).ok()).ok_or_else(|| bad("damaged header".into()))?;
    Ok((header, &content[16 + len..]))
}

/// Checks a container's first 16 bytes against the `size` of the whole: long enough for a head
/// and checksum, `magic`, `version`, at most `limit` bytes, and a header length that fits between
/// head and checksum. Returns the header length.
fn check_head(head: &[u8], size: u64, name: &Path, magic: &[u8; 8], version: u32, what: &str, limit: u64) -> Result<u64> {
    let bad = |problem: String| Error::table(name, problem);
    if size < 48 || head.len() < 16 || &head[..8] != magic {
        return Err(bad(format!("not a Fly Chess {what}")));
    }
    if head[8..12] != version.to_le_bytes() {
        return Err(bad(format!("a {what} of another format version")));
    }
    if size > limit {
        return Err(bad(format!("{size} bytes, more than a {what} can be (at most {limit})")));
    }
    let len = u32::from_le_bytes(head[12..16].try_into().expect("4 bytes")) as u64;
    if 16 + len > size - 32 {
        return Err(bad("damaged header".into()));
    }
    Ok(len)
}

/// Checks a container without holding it: the checksum over a streamed read, then the header.
/// Returns the header and where the body starts and ends in the file.
pub fn check_streamed<H: DeserializeOwned>(path: &Path, magic: &[u8; 8], version: u32, what: &str) -> Result<(H, u64, u64)> {
    use std::io::Read;
    let bad = |problem: String| Error::table(path, problem);
    let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let size = f.metadata().map_err(|e| Error::io(path, e))?.len();
    if size < 48 {
        return Err(bad(format!("not a Fly Chess {what}")));
    }
    let mut head = [0u8; 16];
    f.read_exact(&mut head).map_err(|e| Error::io(path, e))?;
    if &head[..8] != magic {
        return Err(bad(format!("not a Fly Chess {what}")));
    }
    if head[8..12] != version.to_le_bytes() {
        return Err(bad(format!("a {what} of another format version")));
    }
    let len = u32::from_le_bytes(head[12..16].try_into().expect("4 bytes")) as u64;
    if 16 + len > size - 32 {
        return Err(bad("damaged header".into()));
    }
    let mut header = vec![0u8; len as usize];
    f.read_exact(&mut header).map_err(|e| Error::io(path, e))?;
    let mut digest = Sha256::new();
    digest.update(head);
    digest.update(&header);
    let mut rest = (&mut f).take(size - 32 - 16 - len);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = rest.read(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        digest.update(&buf[..n]);
    }
    let mut stored = [0u8; 32];
    f.read_exact(&mut stored).map_err(|e| Error::io(path, e))?;
    if digest.finalize().as_slice() != stored {
        return Err(bad("checksum mismatch: the file is damaged".into()));
    }
    let header = serde_json::from_slice(&header).map_err(|_| bad("damaged header".into()))?;
    Ok((header, 16 + len, size - 32))
}

/// f32 values as little-endian bytes, and back.
pub fn f32_bytes(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_le_bytes).collect()
}

pub fn f32_values(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}
