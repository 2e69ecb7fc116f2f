//! The brain file: one compact, versioned, checksummed binary file per built brain, in the user's
//! data folder. Layout (all little-endian):
//!
//! ```text
//! "FLYBRAIN"  u32 format version  u32 header length  header (JSON: provenance, names, eye, groups)
//! per array: u64 byte length, raw values   (body_id i64, cell_type u32, class u32, superclass u32,
//!            side u8, region u8, soma_um 3×f32, transmitter u8, sign i8, row_start u32, pre u32,
//!            synapses u32, strength f32)
//! sha256 of everything above (32 bytes)      <- the brain's id; trained flies are tied to it
//! u32 length, build note (JSON: how long the build took; not part of the id)
//! ```
//!
//! Writes go to a temporary file in the same folder that is renamed into place, so a crash never
//! leaves a half-written brain. Reading checks the magic, the version, every length and the
//! checksum before anything is used.

use std::fs::{self, File};
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use web_time::Instant;

use super::rules::{Region, Side, Transmitter};
use super::{Connectome, Csr, Groups, Neurons, Provenance};
use crate::error::{Error, Result};
use crate::eye::Eye;
use crate::files::{hex, write_atomically};

const MAGIC: &[u8; 8] = b"FLYBRAIN";
pub const FORMAT_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
pub struct Header {
    pub provenance: Provenance,
    pub neurons: u64,
    pub connections: u64,
    names: Vec<String>,
    eye: Eye,
    groups: Groups,
}

#[derive(Serialize, Deserialize, Default)]
struct BuildNote {
    build_seconds: f64,
}

/// A brain read back from its file.
pub struct Loaded {
    pub connectome: Connectome,
    /// sha256 of the file's content (hex): the brain's id.
    pub checksum: String,
    pub load_seconds: f64,
}

/// Writes `c` to `path` atomically and returns its checksum.
pub fn save(c: &Connectome, path: &Path) -> Result<String> {
    let n = &c.neurons;
    let header = Header {
        provenance: c.provenance.clone(),
        neurons: n.len() as u64,
        connections: c.inputs.len() as u64,
        names: n.names.clone(),
        eye: c.eye.clone(),
        groups: c.groups.clone(),
    };
    let header = serde_json::to_vec(&header).map_err(|e| Error::brain_file(path, e.to_string()))?;
    let mut buf: Vec<u8> = Vec::with_capacity(16 + header.len() + c.inputs.len() * 12 + n.len() * 40);
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    buf.extend_from_slice(&(header.len() as u32).to_le_bytes());
    buf.extend_from_slice(&header);
    fn section<T: Copy, const W: usize>(buf: &mut Vec<u8>, v: &[T], f: impl Fn(T) -> [u8; W]) {
        buf.extend_from_slice(&((v.len() * W) as u64).to_le_bytes());
        for &x in v {
            buf.extend_from_slice(&f(x));
        }
    }
    section(&mut buf, &n.body_id, i64::to_le_bytes);
    section(&mut buf, &n.cell_type, u32::to_le_bytes);
    section(&mut buf, &n.class, u32::to_le_bytes);
    section(&mut buf, &n.superclass, u32::to_le_bytes);
    section(&mut buf, &n.side, |s| [s as u8]);
    section(&mut buf, &n.region, |r| [r as u8]);
    let soma: Vec<f32> = n.soma_um.iter().flatten().copied().collect();
    section(&mut buf, &soma, f32::to_le_bytes);
    section(&mut buf, &n.transmitter, |t| [t as u8]);
    section(&mut buf, &n.sign, i8::to_le_bytes);
    section(&mut buf, &c.inputs.row_start, u32::to_le_bytes);
    section(&mut buf, &c.inputs.pre, u32::to_le_bytes);
    section(&mut buf, &c.inputs.synapses, u32::to_le_bytes);
    section(&mut buf, &c.inputs.strength, f32::to_le_bytes);
    let digest = Sha256::digest(&buf);
    buf.extend_from_slice(&digest);
    let note = serde_json::to_vec(&BuildNote { build_seconds: c.build_seconds }).expect("plain struct");
    buf.extend_from_slice(&(note.len() as u32).to_le_bytes());
    buf.extend_from_slice(&note);
    write_atomically(path, &buf)?;
    Ok(hex(&digest))
}

/// Reads only the header (fast: used to decide whether a brain must be rebuilt).
pub fn read_header(path: &Path) -> Result<Header> {
    let mut f = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut head = [0u8; 16];
    f.read_exact(&mut head).map_err(|_| Error::brain_file(path, "too short to be a brain file"))?;
    let len = check_prefix(path, &head)?;
    // The length is the file's word: no more is set aside than the file holds.
    let size = f.metadata().map_err(|e| Error::io(path, e))?.len();
    if 16 + len as u64 > size {
        return Err(Error::brain_file(path, "truncated header"));
    }
    let mut header = vec![0u8; len];
    f.read_exact(&mut header).map_err(|_| Error::brain_file(path, "truncated header"))?;
    serde_json::from_slice(&header).map_err(|e| Error::brain_file(path, format!("damaged header: {e}")))
}

fn check_prefix(path: &Path, head: &[u8]) -> Result<usize> {
    if &head[..8] != MAGIC {
        return Err(Error::brain_file(path, "not a Fly Chess brain file"));
    }
    let version = u32::from_le_bytes(head[8..12].try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        return Err(Error::brain_file(
            path,
            format!("format version {version}, this build reads version {FORMAT_VERSION}: rebuild the brain"),
        ));
    }
    Ok(u32::from_le_bytes(head[12..16].try_into().expect("4 bytes")) as usize)
}

/// Reads and verifies a brain file (`load_bytes` on the file's bytes; `load_seconds` counts the
/// reading too).
pub fn load(path: &Path) -> Result<Loaded> {
    let started = Instant::now();
    let bytes = fs::read(path).map_err(|e| Error::io(path, e))?;
    let loaded = load_bytes(&bytes, path)?;
    Ok(Loaded { load_seconds: started.elapsed().as_secs_f64(), ..loaded })
}

/// Verifies and reads a brain from its bytes (a file read whole, or fetched by a page); `name` is
/// what errors call it. Every array's length is checked against the header and against the bytes
/// there are before anything is set aside for it.
pub fn load_bytes(bytes: &[u8], name: &Path) -> Result<Loaded> {
    let started = Instant::now();
    let bad = |problem: &str| Error::brain_file(name, problem.to_string());
    if bytes.len() < 16 {
        return Err(bad("too short to be a brain file"));
    }
    let header_len = check_prefix(name, &bytes[..16])?;
    let mut cursor = Cursor { bytes, at: 16, path: name };
    let header_bytes = cursor.take(header_len)?;
    let header: Header = serde_json::from_slice(header_bytes).map_err(|e| Error::brain_file(name, format!("damaged header: {e}")))?;
    // Counts this machine can index (a 32-bit page included), else refused, never truncated.
    let counts = usize::try_from(header.neurons).ok().zip(usize::try_from(header.connections).ok());
    let (n, e) = counts.ok_or_else(|| bad("more neurons or connections than this machine can hold"))?;
    let body_id = cursor.array(n, i64::from_le_bytes)?;
    let cell_type = cursor.array(n, u32::from_le_bytes)?;
    let class = cursor.array(n, u32::from_le_bytes)?;
    let superclass = cursor.array(n, u32::from_le_bytes)?;
    let side = cursor.array(n, |b: [u8; 1]| Side::from_u8(b[0]))?;
    let region = cursor.array(n, |b: [u8; 1]| Region::from_u8(b[0]))?;
    let soma = cursor.array(n.saturating_mul(3), f32::from_le_bytes)?;
    let transmitter = cursor.array(n, |b: [u8; 1]| Transmitter::from_u8(b[0]))?;
    let sign = cursor.array(n, i8::from_le_bytes)?;
    let row_start = cursor.array(n.saturating_add(1), u32::from_le_bytes)?;
    let pre = cursor.array(e, u32::from_le_bytes)?;
    let synapses = cursor.array(e, u32::from_le_bytes)?;
    let strength = cursor.array(e, f32::from_le_bytes)?;
    let content_end = cursor.at;
    let stored = cursor.take(32)?;
    let digest = Sha256::digest(&bytes[..content_end]);
    if digest.as_slice() != stored {
        return Err(bad("checksum mismatch: the file is damaged; delete it and it will be rebuilt"));
    }
    let note: BuildNote = cursor
        .take(4)
        .ok()
        .map(|l| u32::from_le_bytes(l.try_into().expect("4 bytes")) as usize)
        .and_then(|l| cursor.take(l).ok())
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or_default();
    // Structural checks, so later code can index without fear.
    let names = header.names.len() as u32;
    if [&cell_type, &class, &superclass].iter().any(|v| v.iter().any(|&i| i >= names)) {
        return Err(bad("a name index points past the name table"));
    }
    if row_start.first() != Some(&0) || row_start.last() != Some(&(e as u32)) || row_start.windows(2).any(|w| w[0] > w[1]) {
        return Err(bad("connection rows are not in order"));
    }
    if pre.iter().any(|&p| p as usize >= n) || header.eye.cells.iter().any(|c| c.neuron as usize >= n || c.square >= 64) {
        return Err(bad("an index points past the neurons"));
    }
    let g = &header.groups;
    if [&g.descending, &g.kenyon, &g.mbon, &g.pam, &g.ppl1].iter().any(|v| v.iter().any(|&i| i as usize >= n)) {
        return Err(bad("a group lists a neuron past the neurons"));
    }
    if g.mbon_valence.len() != g.mbon.len() {
        return Err(bad("the MBONs' valences do not match the MBONs"));
    }
    let connectome = Connectome {
        provenance: header.provenance,
        neurons: Neurons {
            body_id,
            cell_type,
            class,
            superclass,
            names: header.names,
            side,
            region,
            soma_um: soma.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect(),
            transmitter,
            sign,
        },
        inputs: Csr { row_start, pre, synapses, strength },
        eye: header.eye,
        groups: header.groups,
        build_seconds: note.build_seconds,
    };
    Ok(Loaded { connectome, checksum: hex(&digest), load_seconds: started.elapsed().as_secs_f64() })
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, len: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(len).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(Error::brain_file(self.path, "truncated: the file ends early; delete it and it will be rebuilt"));
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn array<T, const W: usize>(&mut self, count: usize, f: impl Fn([u8; W]) -> T) -> Result<Vec<T>> {
        let len = u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")) as usize;
        let expected = count.checked_mul(W).filter(|&e| e <= self.bytes.len());
        if expected != Some(len) {
            return Err(Error::brain_file(self.path, format!("an array holds {len} bytes, {count} values of {W} bytes expected")));
        }
        let raw = self.take(len)?;
        Ok(raw.chunks_exact(W).map(|c| f(c.try_into().expect("chunk of W"))).collect())
    }
}
