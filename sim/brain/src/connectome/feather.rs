//! Reading Feather v2 (Arrow IPC file) tables column by column, whatever physical type the writer
//! chose. The MaleCNS release writes ids as int64, synapse counts as some integer, strings plain or
//! dictionary-encoded, positions as lists of three numbers and hex columns as floats with NaN or
//! nulls; this module turns each of those into one plain Rust shape (`Option<i64>`, `Option<f64>`,
//! `Option<String>`, `Option<[f64; 3]>`) and names the file and column in every error. Big tables
//! are read one record batch at a time so the 1 GB weights table is never held whole.

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_ipc::CompressionType;
use arrow_ipc::reader::FileReader;
use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_schema::DataType;

use crate::error::{Error, Result};

/// An open table: its path (for messages) and a batch-by-batch reader over the chosen columns.
pub struct Table {
    pub path: PathBuf,
    reader: FileReader<BufReader<File>>,
    /// Names of the projected columns, in the order of `columns` in `open`.
    names: Vec<String>,
    /// The file's schema metadata (the stand-in marks itself here).
    pub metadata: std::collections::HashMap<String, String>,
}

/// The first bytes of an Arrow IPC file (Feather v2).
const ARROW_MAGIC: &[u8; 6] = b"ARROW1";

/// The largest ratio of a buffer's unpacked length to its packed length believed: LZ4 and zstd
/// reach a few hundred on runs of one value; a header that claims more is damage, refused before
/// anything is allocated for it.
const MAX_UNPACK_RATIO: u64 = 1024;

/// Checks the file's layout before the Arrow reader trusts it: every record batch (and
/// dictionary) inside the file, every buffer inside its batch, and no compressed buffer claiming
/// to unpack to more than `MAX_UNPACK_RATIO` times its size. The Arrow reader sizes its
/// allocations by these numbers, so a damaged table is refused here with what is wrong instead
/// of asking for any amount of memory.
fn check_layout(path: &Path) -> Result<()> {
    use std::io::{Seek, SeekFrom};
    let bad = |what: String| Error::table(path, format!("damaged Arrow IPC file: {what}"));
    let io = |e: std::io::Error| Error::io(path, e);
    let mut f = File::open(path).map_err(io)?;
    let size = f.metadata().map_err(io)?.len();
    if size < 6 + 2 + 10 {
        return Err(bad(format!("{size} bytes is too short")));
    }
    let mut tail = [0u8; 10];
    f.seek(SeekFrom::End(-10)).and_then(|_| f.read_exact(&mut tail)).map_err(io)?;
    if &tail[4..] != ARROW_MAGIC {
        return Err(bad("it does not end with ARROW1 (cut short?)".into()));
    }
    let footer_len = i32::from_le_bytes(tail[..4].try_into().expect("4 bytes"));
    if footer_len <= 0 || footer_len as u64 > size - 18 {
        return Err(bad(format!("a footer of {footer_len} bytes")));
    }
    let mut footer = vec![0u8; footer_len as usize];
    f.seek(SeekFrom::End(-10 - footer_len as i64)).and_then(|_| f.read_exact(&mut footer)).map_err(io)?;
    let footer = arrow_ipc::root_as_footer(&footer).map_err(|e| bad(format!("its footer: {e}")))?;
    let blocks: Vec<arrow_ipc::Block> =
        footer.recordBatches().iter().flatten().chain(footer.dictionaries().iter().flatten()).copied().collect();
    for block in blocks {
        let (offset, meta_len, body_len) = (block.offset(), block.metaDataLength(), block.bodyLength());
        let inside = offset >= 0
            && meta_len >= 8
            && body_len >= 0
            && (offset as u64).checked_add(meta_len as u64).and_then(|m| m.checked_add(body_len as u64)).is_some_and(|end| end <= size);
        if !inside {
            return Err(bad(format!("a record batch at {offset} ({meta_len} + {body_len} bytes) lies outside the file of {size} bytes")));
        }
        let mut meta = vec![0u8; meta_len as usize];
        f.seek(SeekFrom::Start(offset as u64)).and_then(|_| f.read_exact(&mut meta)).map_err(io)?;
        // A message: the continuation marker (0xFFFFFFFF) and its length, or the length alone.
        let start = if meta[..4] == [0xFF; 4] { 8 } else { 4 };
        let n = i32::from_le_bytes(meta[start - 4..start].try_into().expect("4 bytes"));
        let message = usize::try_from(n)
            .ok()
            .and_then(|n| meta.get(start..start + n))
            .ok_or_else(|| bad(format!("a message of {n} bytes in a block of {meta_len}")))?;
        let message = arrow_ipc::root_as_message(message).map_err(|e| bad(format!("a record batch's header: {e}")))?;
        let batch = message.header_as_record_batch().or_else(|| message.header_as_dictionary_batch().and_then(|d| d.data()));
        let Some(batch) = batch else { continue };
        let compressed = batch.compression().is_some();
        let body = offset as u64 + meta_len as u64;
        for buffer in batch.buffers().iter().flatten() {
            let (o, l) = (buffer.offset(), buffer.length());
            if o < 0 || l < 0 || (o as u64).checked_add(l as u64).is_none_or(|end| end > body_len as u64) {
                return Err(bad(format!("a buffer at {o} of {l} bytes lies outside its record batch of {body_len} bytes")));
            }
            if compressed && l >= 8 {
                let mut prefix = [0u8; 8];
                f.seek(SeekFrom::Start(body + o as u64)).and_then(|_| f.read_exact(&mut prefix)).map_err(io)?;
                let unpacked = i64::from_le_bytes(prefix);
                if unpacked != -1 && (unpacked < 0 || unpacked as u64 > (l as u64).saturating_mul(MAX_UNPACK_RATIO)) {
                    return Err(bad(format!("a buffer of {l} bytes claims to unpack to {unpacked}")));
                }
            }
        }
    }
    Ok(())
}

/// Runs a call into the Arrow reader, turning a panic of its own on damaged input into an error
/// naming the file.
fn guarded<T>(path: &Path, what: &str, call: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)).unwrap_or_else(|panic| {
        let why =
            panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
        Err(Error::table(path, format!("{what}: the Arrow reader failed on it: {}", crate::files::quote(&why, 200))))
    })
}

impl Table {
    /// Opens `path` and projects it onto `required` columns (all must exist) plus any of
    /// `optional` that exist. Missing required columns are an error naming them.
    pub fn open(path: &Path, required: &[&str], optional: &[&str]) -> Result<Table> {
        let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
        let mut magic = [0u8; 6];
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        if len == 0 {
            return Err(Error::table(path, "the file is empty"));
        }
        if file.read_exact(&mut magic).is_err() || &magic != ARROW_MAGIC {
            return Err(Error::table(path, "not a Feather v2 / Arrow IPC file (it does not start with ARROW1)"));
        }
        check_layout(path)?;
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let probe = guarded(path, "unreadable Arrow IPC file", || {
            FileReader::try_new_buffered(file, None).map_err(|e| Error::table(path, format!("unreadable Arrow IPC file: {e}")))
        })?;
        let schema = probe.schema();
        let mut projection = Vec::new();
        let mut names = Vec::new();
        let mut missing = Vec::new();
        for (name, needed) in required.iter().map(|n| (n, true)).chain(optional.iter().map(|n| (n, false))) {
            match schema.index_of(name) {
                Ok(i) => {
                    projection.push(i);
                    names.push(name.to_string());
                }
                Err(_) if needed => missing.push(*name),
                Err(_) => {}
            }
        }
        if !missing.is_empty() {
            let have: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            return Err(Error::table(path, format!("missing column(s) {} (the file has: {})", missing.join(", "), have.join(", "))));
        }
        let metadata = schema.metadata().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        drop(probe);
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let reader = guarded(path, "unreadable Arrow IPC file", || {
            FileReader::try_new_buffered(file, Some(projection)).map_err(|e| Error::table(path, format!("unreadable Arrow IPC file: {e}")))
        })?;
        Ok(Table { path: path.to_path_buf(), reader, names, metadata })
    }

    /// Record batches in the file (for progress).
    pub fn num_batches(&self) -> usize {
        self.reader.num_batches()
    }

    /// True when the optional column `name` was found.
    pub fn has(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    /// The next record batch, or None at the end. A damaged batch is an error naming the file.
    pub fn next_batch(&mut self) -> Result<Option<Batch<'_>>> {
        let path = self.path.clone();
        let reader = &mut self.reader;
        let next = guarded(&path, "damaged record batch", || match reader.next() {
            None => Ok(None),
            Some(Err(e)) => Err(Error::table(&path, format!("damaged record batch: {e}"))),
            Some(Ok(batch)) => Ok(Some(batch)),
        })?;
        Ok(next.map(|batch| Batch { batch, path: &self.path }))
    }
}

/// One record batch with the path of its file, for error messages.
pub struct Batch<'a> {
    batch: RecordBatch,
    path: &'a Path,
}

impl Batch<'_> {
    pub fn len(&self) -> usize {
        self.batch.num_rows()
    }

    pub fn is_empty(&self) -> bool {
        self.batch.num_rows() == 0
    }

    fn column(&self, name: &str) -> Result<&ArrayRef> {
        self.batch.column_by_name(name).ok_or_else(|| Error::table(self.path, format!("missing column {name}")))
    }

    fn wrong_type(&self, name: &str, want: &str, got: &DataType) -> Error {
        Error::table(self.path, format!("column {name} should hold {want}, but holds {got}"))
    }

    /// An integer column (any width, signed or not) as i64, nulls as None.
    pub fn ints(&self, name: &str) -> Result<Vec<Option<i64>>> {
        let col = self.column(name)?;
        integers(col)
            .ok_or_else(|| self.wrong_type(name, "integers", col.data_type()))?
            .map_err(|problem| Error::table(self.path, format!("column {name}: {problem}")))
    }

    /// A numeric column (integers or floats) as f64; nulls and NaN as None.
    pub fn numbers(&self, name: &str) -> Result<Vec<Option<f64>>> {
        let col = self.column(name)?;
        let values = numbers(col).ok_or_else(|| self.wrong_type(name, "numbers", col.data_type()))?;
        Ok(values.into_iter().map(|v| v.filter(|x| !x.is_nan())).collect())
    }

    /// A string column, plain (utf8, large utf8, utf8 view) or dictionary-encoded.
    pub fn strings(&self, name: &str) -> Result<Vec<Option<String>>> {
        let col = self.column(name)?;
        strings(col).ok_or_else(|| self.wrong_type(name, "strings", col.data_type()))
    }

    /// A column of [x, y, z] positions: a list (any offset width, or fixed size) of three numbers.
    /// Null rows, and lists that are not three numbers, are None.
    pub fn points(&self, name: &str) -> Result<Vec<Option<[f64; 3]>>> {
        let col = self.column(name)?;
        let n = col.len();
        let list_rows = |values: &ArrayRef, offsets: &dyn Fn(usize) -> (usize, usize)| -> Option<Vec<Option<[f64; 3]>>> {
            let flat = numbers(values)?;
            Some(
                (0..n)
                    .map(|i| {
                        if col.is_null(i) {
                            return None;
                        }
                        let (start, end) = offsets(i);
                        if end - start != 3 {
                            return None;
                        }
                        Some([flat[start]?, flat[start + 1]?, flat[start + 2]?])
                    })
                    .collect(),
            )
        };
        let result = if let Some(l) = col.as_list_opt::<i32>() {
            let off = l.value_offsets();
            list_rows(l.values(), &|i| (off[i] as usize, off[i + 1] as usize))
        } else if let Some(l) = col.as_list_opt::<i64>() {
            let off = l.value_offsets();
            list_rows(l.values(), &|i| (off[i] as usize, off[i + 1] as usize))
        } else if let Some(l) = col.as_fixed_size_list_opt() {
            let w = l.value_length() as usize;
            list_rows(l.values(), &|i| (i * w, i * w + w))
        } else {
            None
        };
        result.ok_or_else(|| self.wrong_type(name, "lists of three numbers", col.data_type()))
    }
}

macro_rules! ints_of {
    ($col:expr, $($t:ty),*) => {{
        $(
            if let Some(a) = $col.as_primitive_opt::<$t>() {
                let mut out = Vec::with_capacity(a.len());
                for i in 0..a.len() {
                    if a.is_null(i) {
                        out.push(None);
                    } else {
                        let v = a.value(i);
                        match i64::try_from(v) {
                            Ok(x) => out.push(Some(x)),
                            Err(_) => return Some(Err(format!("value {v} at row {i} does not fit in int64"))),
                        }
                    }
                }
                return Some(Ok(out));
            }
        )*
    }};
}

fn integers(col: &ArrayRef) -> Option<std::result::Result<Vec<Option<i64>>, String>> {
    ints_of!(col, Int64Type, Int32Type, Int16Type, Int8Type, UInt64Type, UInt32Type, UInt16Type, UInt8Type);
    None
}

macro_rules! numbers_of {
    ($col:expr, $($t:ty),*) => {{
        $(
            if let Some(a) = $col.as_primitive_opt::<$t>() {
                return Some((0..a.len()).map(|i| if a.is_null(i) { None } else { Some(a.value(i) as f64) }).collect());
            }
        )*
    }};
}

fn numbers(col: &ArrayRef) -> Option<Vec<Option<f64>>> {
    numbers_of!(col, Float64Type, Float32Type, Int64Type, Int32Type, Int16Type, Int8Type, UInt64Type, UInt32Type, UInt16Type, UInt8Type);
    None
}

fn strings(col: &ArrayRef) -> Option<Vec<Option<String>>> {
    if let Some(a) = col.as_string_opt::<i32>() {
        return Some(a.iter().map(|s| s.map(str::to_owned)).collect());
    }
    if let Some(a) = col.as_string_opt::<i64>() {
        return Some(a.iter().map(|s| s.map(str::to_owned)).collect());
    }
    if let Some(a) = col.as_string_view_opt() {
        return Some(a.iter().map(|s| s.map(str::to_owned)).collect());
    }
    if let Some(d) = col.as_any_dictionary_opt() {
        let values = strings(d.values())?;
        let keys = d.normalized_keys();
        return Some(keys.iter().enumerate().map(|(i, &k)| if col.is_null(i) { None } else { values.get(k).cloned().flatten() }).collect());
    }
    if col.data_type() == &DataType::Null {
        return Some(vec![None; col.len()]);
    }
    None
}

/// Writes record batches as a Feather v2 file (LZ4-compressed, as pyarrow writes them) through a
/// temporary file that is renamed into place.
pub fn write(path: &Path, batches: &[RecordBatch], metadata: &[(&str, String)]) -> Result<()> {
    let first = batches.first().ok_or_else(|| Error::table(path, "could not write the table: no batches"))?.schema();
    let schema = std::sync::Arc::new(
        first
            .as_ref()
            .clone()
            .with_metadata(metadata.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<std::collections::HashMap<_, _>>()),
    );
    let arrow = |e: arrow_schema::ArrowError| std::io::Error::other(format!("could not write the table: {e}"));
    crate::files::write_atomically_with(path, |file| {
        let options = IpcWriteOptions::default().try_with_compression(Some(CompressionType::LZ4_FRAME)).map_err(arrow)?;
        let mut writer = FileWriter::try_new_with_options(std::io::BufWriter::new(file), &schema, options).map_err(arrow)?;
        for b in batches {
            let b = b.clone().with_schema(schema.clone()).map_err(arrow)?;
            writer.write(&b).map_err(arrow)?;
        }
        writer.finish().map_err(arrow)?;
        writer.into_inner().map_err(arrow)?.flush()
    })
}

/// A record batch from named columns.
pub fn batch(columns: Vec<(&str, ArrayRef)>) -> Result<RecordBatch> {
    RecordBatch::try_from_iter(columns).map_err(|e| Error::Invalid(format!("stand-in table: {e}")))
}

/// Writes a think's rates as a long Feather table, one row per position, step and neuron:
/// `position` (u32), `step` (u8, 1-based), `neuron` (u32, the brain's index), `root_id` (i64),
/// `rate` (f32). `rates` is laid out `[(position · steps + s) · neurons + k]` (what
/// `Simulator::read` returns); `steps` are 0-based. The table `flychess brain think --out` and
/// the Python package's `export_think` both write.
pub fn write_rates(path: &Path, rates: &[f32], positions: usize, steps: &[usize], neurons: &[u32], root_ids: &[i64]) -> Result<()> {
    use arrow_array::{Float32Array, Int64Array, UInt8Array, UInt32Array};
    let (s, k) = (steps.len(), neurons.len());
    if rates.len() != positions * s * k {
        return Err(Error::table(path, format!("{} rates for {positions} positions × {s} steps × {k} neurons", rates.len())));
    }
    let rows = rates.len();
    let position: UInt32Array = (0..rows).map(|i| (i / (s * k)) as u32).collect();
    let step: UInt8Array = (0..rows).map(|i| (steps[(i / k) % s] + 1) as u8).collect();
    let neuron: UInt32Array = (0..rows).map(|i| neurons[i % k]).collect();
    let root: Int64Array = (0..rows).map(|i| root_ids[neurons[i % k] as usize]).collect();
    let rate = Float32Array::from(rates.to_vec());
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("position", std::sync::Arc::new(position)),
        ("step", std::sync::Arc::new(step)),
        ("neuron", std::sync::Arc::new(neuron)),
        ("root_id", std::sync::Arc::new(root)),
        ("rate", std::sync::Arc::new(rate)),
    ];
    write(path, &[batch(columns)?], &[])
}
