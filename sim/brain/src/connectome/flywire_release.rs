//! The full FlyWire v783 release, for users with internet: the connection table of Zenodo record
//! 10676866 (`proofread_connections_783.feather`: one row per pair and neuropil, no threshold;
//! the reader sums per pair, then cuts at 5 synapses) and FlyWire Codex's tables from its public
//! bucket (`classification.csv.gz`, `neurons.csv.gz`, `consolidated_cell_types.csv.gz`, and
//! `coordinates.csv.gz` when the bucket has it: the points the cloud then shows instead of a
//! layout from wiring), fetched by the same resumable downloader as MaleCNS. Nothing of it is pinned here, so each
//! file is checked against what its server states (the Zenodo record's size and md5; the
//! bucket's Content-Length and `x-goog-hash` md5), and a listing without the expected file, or
//! a file that does not match, is a clear error. The Codex CSVs are turned into Feather tables in
//! the bundle's schema (arrow's CSV reader), so one reader (`flywire`) reads both.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema};
use base64::Engine;

use super::download::{ByteProgress, Fetch, Outcome, fetch};
use super::feather;
use super::flywire::{CELL_TYPES, CLASSIFICATION, COORDINATES, NEURONS, ZENODO_CONNECTIONS};
use crate::error::{Error, Result};

/// The Zenodo record's metadata (its file list with sizes and md5 sums).
pub const ZENODO_RECORD: &str = "https://zenodo.org/api/records/10676866";
/// FlyWire Codex's public bucket for release 783.
pub const CODEX_BASE: &str = "https://storage.googleapis.com/flywire-data/codex/data/fafb/783/";
/// The Codex tables fetched, and the Feather table each becomes.
pub const CODEX_TABLES: [(&str, &str); 3] =
    [("classification.csv.gz", CLASSIFICATION), ("neurons.csv.gz", NEURONS), ("consolidated_cell_types.csv.gz", CELL_TYPES)];
/// Codex tables fetched when the bucket has them: the points on each neuron (`root_id`,
/// `position` as "[x y z]"), which replace the layout from wiring in the cloud. Without them the
/// brain is built all the same and its positions say so.
pub const CODEX_OPTIONAL: [(&str, &str); 1] = [("coordinates.csv.gz", COORDINATES)];

/// Written beside the downloaded tables: the data keep their licence and credit wherever they
/// are copied.
pub const LICENCE: &str = "# Licence of the FlyWire data in this folder\n\n\
The tables here were downloaded from Zenodo record 10676866 and FlyWire Codex (release 783) and are\n\
published by the FlyWire Consortium under the Creative Commons Attribution-NonCommercial 4.0\n\
International licence (CC BY-NC 4.0): https://creativecommons.org/licenses/by-nc/4.0/\n\
(the Codex CSV tables are also kept here converted to Feather, unchanged otherwise).\n\n\
Credit: the FlyWire Consortium; Dorkenwald et al., Nature 634 (2024); Schlegel et al., Nature 634\n\
(2024); Eckstein et al., Cell 187 (2024); Zheng et al., Cell 174 (2018).\n";

/// A file as its server states it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stated {
    pub url: String,
    pub bytes: Option<u64>,
    /// Lowercase hex.
    pub md5: Option<String>,
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_recv_response(Some(Duration::from_secs(60)))
        .build()
        .into()
}

/// What the Zenodo record (`record_url`, its API address) states of `file`: its download
/// address, size and md5.
pub fn zenodo_file(record_url: &str, file: &str) -> Result<Stated> {
    let mut response =
        agent().get(record_url).call().map_err(|e| Error::download(record_url, format!("could not read the record: {e}")))?;
    let status = response.status().as_u16();
    if status != 200 {
        return Err(Error::download(record_url, format!("the record answered HTTP {status}")));
    }
    let text = response.body_mut().read_to_string().map_err(|e| Error::download(record_url, format!("could not read the record: {e}")))?;
    let record: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| Error::download(record_url, format!("the record is not JSON: {e}")))?;
    let files = record["files"].as_array().ok_or_else(|| Error::download(record_url, "the record lists no files"))?;
    let listed: Vec<&str> = files.iter().filter_map(|f| f["key"].as_str()).collect();
    let entry = files
        .iter()
        .find(|f| f["key"].as_str() == Some(file))
        .ok_or_else(|| Error::download(record_url, format!("the record has no {file} (it lists: {})", listed.join(", "))))?;
    let url = entry["links"]["self"]
        .as_str()
        .or_else(|| entry["links"]["content"].as_str())
        .ok_or_else(|| Error::download(record_url, format!("the record gives no address for {file}")))?
        .to_string();
    let md5 = entry["checksum"].as_str().and_then(|c| c.strip_prefix("md5:")).map(str::to_ascii_lowercase);
    Ok(Stated { url, bytes: entry["size"].as_u64(), md5 })
}

/// What a bucket states of the file at `url` (a HEAD request): its size, and its md5 from the
/// `x-goog-hash` header (base64) when given.
pub fn bucket_file(url: &str) -> Result<Stated> {
    bucket_file_if_there(url)?
        .ok_or_else(|| Error::download(url, "not found on the server (HTTP 404): the release's file names may have changed"))
}

/// `bucket_file`, with None where the server has no such file (HTTP 404).
pub fn bucket_file_if_there(url: &str) -> Result<Option<Stated>> {
    let response = agent().head(url).call().map_err(|e| Error::download(url, format!("could not ask the server: {e}")))?;
    let status = response.status().as_u16();
    if status == 404 {
        return Ok(None);
    }
    if status != 200 {
        return Err(Error::download(url, format!("the server answered HTTP {status}")));
    }
    let bytes = response.headers().get("content-length").and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    let md5 = response
        .headers()
        .get_all("x-goog-hash")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .find_map(|part| part.trim().strip_prefix("md5="))
        .map(|b64| base64::engine::general_purpose::STANDARD.decode(b64.trim()))
        .transpose()
        .map_err(|e| Error::download(url, format!("the server's md5 is not base64: {e}")))?
        .map(|raw| crate::files::hex(&raw));
    Ok(Some(Stated { url: url.to_string(), bytes, md5 }))
}

/// A Codex CSV (gzip) as a Feather table in the same folder: ids as int64, every other column as
/// text (empty fields are nulls), written atomically.
pub fn csv_gz_to_feather(csv_gz: &Path, out: &Path) -> Result<usize> {
    let open = || -> Result<flate2::read::GzDecoder<BufReader<File>>> {
        Ok(flate2::read::GzDecoder::new(BufReader::new(File::open(csv_gz).map_err(|e| Error::io(csv_gz, e))?)))
    };
    // The header names the columns; ids are integers, the rest text.
    let mut header = String::new();
    {
        use std::io::BufRead;
        let mut lines = std::io::BufReader::new(open()?);
        lines.read_line(&mut header).map_err(|e| Error::table(csv_gz, format!("not a gzip CSV file: {e}")))?;
    }
    let names: Vec<String> = header.trim_end().split(',').map(|s| s.trim().trim_matches('"').to_string()).collect();
    if names.iter().all(|n| n.is_empty()) {
        return Err(Error::table(csv_gz, "the file has no header"));
    }
    let fields: Vec<Field> = names
        .iter()
        .map(|n| Field::new(n, if n == "root_id" || n.ends_with("_root_id") { DataType::Int64 } else { DataType::Utf8 }, true))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let reader = arrow_csv::ReaderBuilder::new(schema)
        .with_header(true)
        .with_batch_size(65_536)
        .build(open()?)
        .map_err(|e| Error::table(csv_gz, format!("unreadable CSV: {e}")))?;
    let mut batches: Vec<RecordBatch> = Vec::new();
    let mut rows = 0;
    for batch in reader {
        let batch = batch.map_err(|e| Error::table(csv_gz, format!("row {}: {e}", rows + 1)))?;
        rows += batch.num_rows();
        batches.push(batch);
    }
    if rows == 0 {
        return Err(Error::table(csv_gz, "the table has no rows"));
    }
    feather::write(out, &batches, &[("converted_from", csv_gz.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())])?;
    Ok(rows)
}

/// Fetches the release into `dir` (resumable; files already there and matching are kept) and
/// converts the Codex tables (the optional ones where the bucket has them; one it lacks is said in
/// the log and left out). `progress` sees (file, bytes so far, total).
pub fn download(
    dir: &Path,
    record_url: &str,
    codex_base: &str,
    attempts: u32,
    progress: &dyn Fn(&str, u64, Option<u64>),
) -> Result<Vec<(String, Outcome)>> {
    let base = if codex_base.ends_with('/') { codex_base.to_string() } else { format!("{codex_base}/") };
    let mut wanted: Vec<(String, Stated)> = vec![(ZENODO_CONNECTIONS.to_string(), zenodo_file(record_url, ZENODO_CONNECTIONS)?)];
    for (file, _) in CODEX_TABLES {
        wanted.push((file.to_string(), bucket_file(&format!("{base}{file}"))?));
    }
    let mut converted: Vec<(&str, &str)> = CODEX_TABLES.to_vec();
    for (file, table) in CODEX_OPTIONAL {
        match bucket_file_if_there(&format!("{base}{file}"))? {
            Some(stated) => {
                wanted.push((file.to_string(), stated));
                converted.push((file, table));
            }
            None => tracing::warn!("{base}{file} is not on the server: the cloud will show a layout made from the wiring"),
        }
    }
    let mut outcomes = Vec::new();
    for (file, stated) in wanted {
        let f = Fetch { url: stated.url.clone(), dest: dir.join(&file), bytes: stated.bytes, sha256: None, md5: stated.md5.clone() };
        let shown: ByteProgress = &|done, total| progress(&file, done, total);
        let outcome = fetch(&f, attempts, shown)?;
        outcomes.push((file, outcome));
    }
    for (csv, table) in converted {
        csv_gz_to_feather(&dir.join(csv), &dir.join(table))?;
    }
    Ok(outcomes)
}
