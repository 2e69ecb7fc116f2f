//! `brain download --release flywire783` against a real HTTP server on 127.0.0.1 that plays
//! Zenodo (a record listing the connection table with its size and md5) and the Codex bucket
//! (gzip CSVs, HEAD answered with Content-Length and `x-goog-hash`), serving tables the test
//! makes: the files come down, are checked against what the servers state, the CSVs become
//! Feather tables the reader reads; a stated md5 that does not match, a record without the table
//! and a missing bucket file are clear errors.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, StringArray};
use base64::Engine;
use flychess_brain::connectome::feather::{self, Table};
use flychess_brain::connectome::flywire::{CELL_TYPES, CLASSIFICATION, COORDINATES, NEURONS, ZENODO_CONNECTIONS};
use flychess_brain::connectome::flywire_release::{CODEX_TABLES, download};
use flychess_brain::store::{self, BrainSpec, Tables};

/// path → (body, extra headers for HEAD and GET).
type Routes = HashMap<String, (Vec<u8>, Vec<String>)>;

fn md5_hex(data: &[u8]) -> String {
    use md5::Digest;
    md5::Md5::digest(data).iter().map(|b| format!("{b:02x}")).collect()
}

fn gzip(text: &str) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap()
}

/// The Zenodo table: one row per pair and neuropil, no threshold (1→2 is 3 + 4 = 7 synapses over
/// two neuropils; 2→3 has 4 and is cut).
fn connections() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.feather");
    let strings = |v: &[&str]| -> ArrayRef { Arc::new(StringArray::from(v.to_vec())) };
    feather::write(
        &path,
        &[feather::batch(vec![
            ("pre_pt_root_id", Arc::new(Int64Array::from(vec![1i64, 1, 2, 3])) as ArrayRef),
            ("post_pt_root_id", Arc::new(Int64Array::from(vec![2i64, 2, 3, 4])) as ArrayRef),
            ("neuropil", strings(&["ME_R", "LO_R", "ME_R", "LO_R"])),
            ("syn_count", Arc::new(Int32Array::from(vec![3, 4, 4, 9])) as ArrayRef),
        ])
        .unwrap()],
        &[],
    )
    .unwrap();
    std::fs::read(&path).unwrap()
}

fn codex() -> [(&'static str, Vec<u8>); 4] {
    [
        (
            "classification.csv.gz",
            gzip(
                "root_id,flow,super_class,class,sub_class,cell_type,hemibrain_type,hemilineage,side,nerve\n1,afferent,sensory,visual,,R1-6,,,right,\n2,intrinsic,optic,,,L1,,,right,\n3,intrinsic,optic,,,Mi1,,,right,\n4,efferent,descending,,,DNp02,,\"a, quoted\",right,\n",
            ),
        ),
        ("neurons.csv.gz", gzip("root_id,group,nt_type,nt_type_score\n1,LA,,\n2,LA.ME,GLUT,0.8\n3,ME,ACH,0.9\n4,GNG,ACH,0.7\n")),
        ("consolidated_cell_types.csv.gz", gzip("root_id,primary_type,additional_type(s)\n3,Mi1,\n4,DNp02,\n")),
        (
            "coordinates.csv.gz",
            gzip("root_id,position,supervoxel_id\n1,[437664 212992 94520],11\n2,\"[1000, 2000, 3000]\",22\n2,[3000 2000 1000],23\n"),
        ),
    ]
}

/// Zenodo and Codex on one server; `stated_md5` is what the record says the table's md5 is.
fn release(stated_md5: Option<&str>, list_table: bool) -> String {
    release_with(stated_md5, list_table, true)
}

/// `release`, with or without Codex's coordinates table in the bucket.
fn release_with(stated_md5: Option<&str>, list_table: bool, coordinates: bool) -> String {
    let table = connections();
    let mut routes: Routes = HashMap::new();
    routes.insert("files/conn".into(), (table.clone(), vec![]));
    for (name, body) in codex().into_iter().filter(|(name, _)| coordinates || !name.starts_with("coordinates")) {
        let md5 = {
            use md5::Digest;
            base64::engine::general_purpose::STANDARD.encode(md5::Md5::digest(&body))
        };
        routes.insert(format!("codex/{name}"), (body, vec![format!("x-goog-hash: crc32c=AAAAAA==,md5={md5}")]));
    }
    // The record names the table's address on this server: routed once the server is up.
    let listener_base = serve_late(routes);
    let key = if list_table { ZENODO_CONNECTIONS } else { "something_else.feather" };
    let record = serde_json::json!({
        "files": [{
            "key": key,
            "size": table.len(),
            "checksum": format!("md5:{}", stated_md5.map(str::to_owned).unwrap_or_else(|| md5_hex(&table))),
            "links": { "self": format!("{}files/conn", listener_base.0) },
        }]
    });
    listener_base
        .1
        .lock()
        .unwrap()
        .insert("record".into(), (record.to_string().into_bytes(), vec!["content-type: application/json".into()]));
    listener_base.0
}

/// A server whose routes can still be added to.
fn serve_late(routes: Routes) -> (String, Arc<std::sync::Mutex<Routes>>) {
    let shared = Arc::new(std::sync::Mutex::new(routes));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    let routes = shared.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let snapshot = routes.lock().unwrap().clone();
            answer(stream, &snapshot);
        }
    });
    (base, shared)
}

fn answer(mut stream: std::net::TcpStream, routes: &Routes) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    let mut parts = first.split_whitespace();
    let method = parts.next().unwrap_or("GET").to_string();
    let path = parts.next().unwrap_or("/").trim_start_matches('/').to_string();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
    }
    let Some((body, headers)) = routes.get(&path) else {
        let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
    };
    let mut head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    if method != "HEAD" {
        let _ = stream.write_all(body);
    }
}

fn rows(path: &Path, column: &str) -> usize {
    let mut t = Table::open(path, &[column], &[]).unwrap();
    let mut n = 0;
    while let Some(b) = t.next_batch().unwrap() {
        n += b.len();
    }
    n
}

#[test]
fn the_release_comes_down_checked_and_becomes_the_readers_tables() {
    let base = release(None, true);
    let dir = tempfile::tempdir().unwrap();
    let outcomes = download(dir.path(), &format!("{base}record"), &format!("{base}codex"), 2, &|_, _, _| {}).unwrap();
    assert_eq!(outcomes.len(), 5);
    assert_eq!(std::fs::read(dir.path().join(ZENODO_CONNECTIONS)).unwrap(), connections());
    for (csv, _) in CODEX_TABLES {
        assert!(dir.path().join(csv).exists(), "{csv} kept as downloaded");
    }
    assert_eq!(rows(&dir.path().join(CLASSIFICATION), "root_id"), 4);
    assert_eq!(rows(&dir.path().join(NEURONS), "nt_type"), 4);
    assert_eq!(rows(&dir.path().join(CELL_TYPES), "primary_type"), 2);
    assert_eq!(rows(&dir.path().join(COORDINATES), "position"), 3, "the points, one row each");
    // A second run fetches nothing.
    let again = download(dir.path(), &format!("{base}record"), &format!("{base}codex"), 2, &|_, _, _| {}).unwrap();
    assert!(again.iter().all(|(_, o)| *o == flychess_brain::connectome::download::Outcome::AlreadyThere), "{again:?}");
    // The reader takes the folder: the per-neuropil rows are read, summed and cut, and this
    // four-neuron brain then stops at its eye (too few columns), without writing a brain.
    let data = tempfile::tempdir().unwrap();
    let spec = BrainSpec { tables: Tables::FlyWire { dir: Some(dir.path().to_path_buf()) }, control: Default::default() };
    let e = store::ensure(&spec, data.path(), &|_, _| {}).err().expect("too small for an eye").to_string();
    assert!(e.contains("the eye") && e.contains(ZENODO_CONNECTIONS), "{e}");
    assert!(!spec.brain_path(data.path()).exists());
}

/// A bucket without the coordinates table: the rest comes down, and the brain's cloud is the
/// layout from wiring.
#[test]
fn a_bucket_without_coordinates_still_gives_the_release() {
    let base = release_with(None, true, false);
    let dir = tempfile::tempdir().unwrap();
    let outcomes = download(dir.path(), &format!("{base}record"), &format!("{base}codex"), 2, &|_, _, _| {}).unwrap();
    assert_eq!(outcomes.len(), 4, "{outcomes:?}");
    assert!(!dir.path().join(COORDINATES).exists());
    assert_eq!(rows(&dir.path().join(CLASSIFICATION), "root_id"), 4);
}

#[test]
fn a_file_that_does_not_match_what_the_server_states_is_refused() {
    let base = release(Some("0123456789abcdef0123456789abcdef"), true);
    let dir = tempfile::tempdir().unwrap();
    let e = download(dir.path(), &format!("{base}record"), &format!("{base}codex"), 2, &|_, _, _| {}).unwrap_err().to_string();
    assert!(e.contains("md5 mismatch") && e.contains("0123456789abcdef0123456789abcdef"), "{e}");
    assert!(!dir.path().join(ZENODO_CONNECTIONS).exists(), "a file that fails its check is never used");
    assert!(dir.path().join(format!("{ZENODO_CONNECTIONS}.rejected-1")).exists(), "but kept aside");
}

#[test]
fn a_record_without_the_table_and_a_missing_bucket_file_say_so() {
    let base = release(None, false);
    let dir = tempfile::tempdir().unwrap();
    let e = download(dir.path(), &format!("{base}record"), &format!("{base}codex"), 2, &|_, _, _| {}).unwrap_err().to_string();
    assert!(e.contains("has no proofread_connections_783.feather") && e.contains("something_else.feather"), "{e}");
    let base = release(None, true);
    let e = download(dir.path(), &format!("{base}record"), &format!("{base}elsewhere"), 2, &|_, _, _| {}).unwrap_err().to_string();
    assert!(e.contains("404") && e.contains("classification.csv.gz"), "{e}");
}
