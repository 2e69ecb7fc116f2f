//! The UCI session's two streams: the input read line by line on a thread of its own (each line
//! at most `LINE_LIMIT` bytes, a longer one refused unread), and the output shared by the reader
//! of the input and the think, with when the last `info` line went out (for the heartbeat).

use std::io::{BufRead, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};

use super::LINE_LIMIT;

/// One line of input, or why it could not be read.
pub(super) enum Line {
    Text(String),
    TooLong(usize),
}

/// Reads `input` line by line on a thread of its own (so `stop` and `quit` arrive while the
/// engine waits), each line at most `LINE_LIMIT` bytes: a longer one is skipped to its end
/// without being kept. The channel closes at the end of the input or on a read error.
pub(super) fn read_lines(input: impl BufRead + Send + 'static) -> crossbeam_channel::Receiver<Line> {
    let (tx, rx) = crossbeam_channel::unbounded();
    std::thread::Builder::new()
        .name("uci-input".into())
        .spawn(move || {
            let mut input = input;
            loop {
                let mut kept = Vec::new();
                let mut seen = 0usize;
                let ended = loop {
                    let buf = match input.fill_buf() {
                        Ok(b) => b,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(_) => break true,
                    };
                    if buf.is_empty() {
                        break true;
                    }
                    let (part, newline) = match buf.iter().position(|&b| b == b'\n') {
                        Some(i) => (&buf[..i], Some(i)),
                        None => (buf, None),
                    };
                    if seen + part.len() <= LINE_LIMIT {
                        kept.extend_from_slice(part);
                    }
                    seen += part.len();
                    let used = newline.map_or(buf.len(), |i| i + 1);
                    input.consume(used);
                    if newline.is_some() {
                        break false;
                    }
                };
                if seen > 0 || !ended {
                    let line = if seen > LINE_LIMIT {
                        Line::TooLong(seen)
                    } else {
                        Line::Text(String::from_utf8_lossy(&kept).trim_end_matches('\r').to_string())
                    };
                    if tx.send(line).is_err() {
                        return;
                    }
                }
                if ended {
                    return;
                }
            }
        })
        .expect("a thread can be started");
    rx
}

/// The output, shared by the reader of the input (`readyok`, the heartbeat of a long think) and
/// the think (`info`), with when the last `info` line went out and the nodes it reported.
pub(super) struct Out<'a> {
    writer: Mutex<&'a mut (dyn Write + Send)>,
    epoch: Instant,
    /// Milliseconds after `epoch` when the last `info` line was written.
    last_info_ms: AtomicU64,
    /// The nodes of the think in progress so far (`NO_NODES`: none reported yet).
    pub(super) nodes: AtomicU64,
}

pub(super) const NO_NODES: u64 = u64::MAX;

impl<'a> Out<'a> {
    pub(super) fn new(writer: &'a mut (dyn Write + Send)) -> Out<'a> {
        Out { writer: Mutex::new(writer), epoch: Instant::now(), last_info_ms: AtomicU64::new(0), nodes: AtomicU64::new(NO_NODES) }
    }

    pub(super) fn lock(&self) -> Result<std::sync::MutexGuard<'_, &'a mut (dyn Write + Send)>> {
        self.writer.lock().map_err(|_| anyhow!("the output's lock was poisoned"))
    }

    /// How long ago the last `info` line went out.
    pub(super) fn since_info(&self) -> Duration {
        self.epoch.elapsed().saturating_sub(Duration::from_millis(self.last_info_ms.load(Ordering::Relaxed)))
    }
}

pub(super) fn write_line(out: &Out, line: &str) -> Result<()> {
    let mut o = out.lock()?;
    writeln!(o, "{line}")?;
    o.flush()?;
    if line.starts_with("info") {
        out.last_info_ms.store(out.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn a_line_longer_than_the_limit_is_refused_and_the_next_is_read() {
        let mut text = vec![b'x'; LINE_LIMIT + 10];
        text.extend_from_slice(b"\nisready\r\nquit");
        let lines = read_lines(std::io::Cursor::new(text));
        let got: Vec<String> = lines
            .iter()
            .map(|l| match l {
                Line::Text(t) => t,
                Line::TooLong(n) => format!("too long {n}"),
            })
            .collect();
        assert_eq!(got, [format!("too long {}", LINE_LIMIT + 10), "isready".into(), "quit".into()]);
    }
}
