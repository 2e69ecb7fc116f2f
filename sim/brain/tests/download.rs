//! `brain download` against a real HTTP server on 127.0.0.1 serving files the test makes: a good
//! one, a truncated one, a corrupted one, a transfer that drops and resumes, a resume across runs.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use flychess_brain::connectome::download::{Fetch, Outcome, fetch, sha256_file};

#[derive(Clone)]
enum Serve {
    Whole(Vec<u8>),
    /// The first request gets the full Content-Length but the connection closes after n bytes.
    DropFirstAfter(Vec<u8>, usize),
}

type RequestLog = Arc<Mutex<Vec<(String, Option<String>)>>>;

struct Server {
    base: String,
    /// (path, Range header) of every request.
    log: RequestLog,
}

fn serve(files: HashMap<&'static str, Serve>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    let log = Arc::new(Mutex::new(Vec::new()));
    let log2 = log.clone();
    std::thread::spawn(move || {
        let mut served: HashMap<String, usize> = HashMap::new();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut first = String::new();
            if reader.read_line(&mut first).is_err() {
                continue;
            }
            let path = first.split_whitespace().nth(1).unwrap_or("/").trim_start_matches('/').to_string();
            let mut range = None;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("range:") {
                    range = Some(v.trim().to_string());
                }
            }
            log2.lock().unwrap().push((path.clone(), range.clone()));
            let count = served.entry(path.clone()).or_default();
            *count += 1;
            let Some(file) = files.get(path.as_str()).cloned() else {
                let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                continue;
            };
            let (data, cut) = match file {
                Serve::Whole(d) => (d, None),
                Serve::DropFirstAfter(d, n) => (d, if *count == 1 { Some(n) } else { None }),
            };
            let start: usize = range.as_deref().and_then(|r| r.strip_prefix("bytes=")?.strip_suffix('-')?.parse().ok()).unwrap_or(0);
            if start >= data.len() && start > 0 {
                let _ = stream.write_all(
                    format!(
                        "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                        data.len()
                    )
                    .as_bytes(),
                );
                continue;
            }
            let head = if start > 0 {
                format!(
                    "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {}-{}/{}\r\nConnection: close\r\n\r\n",
                    data.len() - start,
                    start,
                    data.len() - 1,
                    data.len()
                )
            } else {
                format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", data.len())
            };
            let _ = stream.write_all(head.as_bytes());
            let body = &data[start..];
            let body = match cut {
                Some(n) => &body[..n.min(body.len())],
                None => body,
            };
            let _ = stream.write_all(body);
            let _ = stream.flush();
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    });
    Server { base, log }
}

fn payload(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 % 251) as u8).collect()
}

fn sha(data: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x");
    std::fs::write(&p, data).unwrap();
    sha256_file(&p).unwrap()
}

fn spec(server: &Server, name: &str, dest: &std::path::Path, data: &[u8]) -> Fetch {
    Fetch {
        url: format!("{}{name}", server.base),
        dest: dest.join(name),
        bytes: Some(data.len() as u64),
        sha256: Some(sha(data)),
        md5: None,
    }
}

#[test]
fn a_good_file_is_fetched_verified_and_not_fetched_twice() {
    let data = payload(300_000);
    let server = serve(HashMap::from([("good.feather", Serve::Whole(data.clone()))]));
    let dir = tempfile::tempdir().unwrap();
    let f = spec(&server, "good.feather", dir.path(), &data);
    let seen = Mutex::new(0u64);
    assert_eq!(fetch(&f, 3, &|done, _| *seen.lock().unwrap() = done).unwrap(), Outcome::Fetched { resumes: 0 });
    assert_eq!(*seen.lock().unwrap(), data.len() as u64, "progress reached the end");
    assert_eq!(std::fs::read(&f.dest).unwrap(), data);
    assert!(!dir.path().join("good.feather.part").exists());
    assert_eq!(fetch(&f, 3, &|_, _| {}).unwrap(), Outcome::AlreadyThere);
    assert_eq!(server.log.lock().unwrap().len(), 1, "the second call asked the server nothing");
}

#[test]
fn a_truncated_file_is_refused_and_never_used() {
    let data = payload(200_000);
    let server = serve(HashMap::from([("t.feather", Serve::Whole(data[..150_000].to_vec()))]));
    let dir = tempfile::tempdir().unwrap();
    let f = spec(&server, "t.feather", dir.path(), &data);
    let e = fetch(&f, 3, &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("truncated") && e.contains("150000 of 200000"), "{e}");
    assert!(!f.dest.exists(), "a short file never takes the real name");
}

#[test]
fn a_corrupted_file_is_refused_and_kept_aside() {
    let data = payload(200_000);
    let mut bad = data.clone();
    bad[123_456] ^= 0xFF;
    let server = serve(HashMap::from([("c.feather", Serve::Whole(bad))]));
    let dir = tempfile::tempdir().unwrap();
    let f = spec(&server, "c.feather", dir.path(), &data);
    let e = fetch(&f, 3, &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("sha256 mismatch") && e.contains("c.feather"), "{e}");
    assert!(!f.dest.exists());
    assert!(!dir.path().join("c.feather.part").exists());
    // Kept, renamed, and the message says where.
    let aside = dir.path().join("c.feather.rejected-1");
    assert!(e.contains("c.feather.rejected-1"), "{e}");
    assert_eq!(std::fs::read(&aside).unwrap().len(), 200_000);
    // A damaged file under the real name is set aside too (never deleted) before fetching again.
    std::fs::write(&f.dest, b"damaged").unwrap();
    let _ = fetch(&f, 3, &|_, _| {});
    assert_eq!(std::fs::read(dir.path().join("c.feather.rejected-2")).unwrap(), b"damaged");
}

#[test]
fn an_interrupted_transfer_resumes_where_it_stopped() {
    let data = payload(500_000);
    let server = serve(HashMap::from([("i.feather", Serve::DropFirstAfter(data.clone(), 123_000))]));
    let dir = tempfile::tempdir().unwrap();
    let f = spec(&server, "i.feather", dir.path(), &data);
    assert_eq!(fetch(&f, 4, &|_, _| {}).unwrap(), Outcome::Fetched { resumes: 1 });
    assert_eq!(std::fs::read(&f.dest).unwrap(), data);
    let log = server.log.lock().unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].1, None);
    assert_eq!(log[1].1.as_deref(), Some("bytes=123000-"), "the second request resumes");
}

#[test]
fn a_partial_file_from_an_earlier_run_is_resumed() {
    let data = payload(100_000);
    let server = serve(HashMap::from([("p.feather", Serve::Whole(data.clone()))]));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.feather.part"), &data[..40_000]).unwrap();
    let f = spec(&server, "p.feather", dir.path(), &data);
    fetch(&f, 2, &|_, _| {}).unwrap();
    assert_eq!(std::fs::read(&f.dest).unwrap(), data);
    assert_eq!(server.log.lock().unwrap()[0].1.as_deref(), Some("bytes=40000-"));
}

#[test]
fn a_missing_file_says_so() {
    let server = serve(HashMap::new());
    let dir = tempfile::tempdir().unwrap();
    let f =
        Fetch { url: format!("{}nope.feather", server.base), dest: dir.path().join("nope.feather"), bytes: None, sha256: None, md5: None };
    let e = fetch(&f, 2, &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("404") && e.contains("nope.feather"), "{e}");
}
