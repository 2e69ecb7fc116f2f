//! The one-off jobs the tabs' panels ask for — the error going back, the lesson comic, what the fly
//! looks at, how a fly is doing and how it loses, the figures, a control brain's think — each on a
//! thread of its own that the lab starts. A panel keeps only the `Aside` its answer arrives on and
//! draws it; the work, and every simulator call in it, lives here. The Train tab's runs are each a
//! `Talk` (one type for every kind of run: its messages as they come, its end, a thread that died
//! said so), and the disk scans the tabs draw from are each a `Scan` (read aside, the last value
//! kept on show). The jobs that need the desktop program (training, the error going back, the
//! lesson comic, how a fly is doing, profiles, figures, control brains, files written) are the
//! `native` feature's; a page runs the others one at a time in its one thread (`runner`).

#[cfg(feature = "native")]
pub mod blame;
#[cfg(feature = "native")]
pub mod control;
#[cfg(feature = "native")]
pub mod doing;
pub mod explain;
#[cfg(feature = "native")]
pub mod figures;
#[cfg(feature = "native")]
pub mod lesson;
#[cfg(feature = "native")]
pub mod profile;
pub mod runner;
#[cfg(feature = "native")]
pub mod train;
#[cfg(feature = "native")]
pub mod train_brain;
#[cfg(feature = "native")]
pub mod train_charles;
#[cfg(feature = "native")]
pub mod train_dopamine;
pub mod window;

use std::sync::mpsc::{Receiver, channel};

use super::Wake;

/// Where the answer of a job run aside arrives (an error as text).
pub type Aside<T> = std::sync::mpsc::Receiver<Result<T, String>>;

/// Runs `work` on a thread of its own named `name` and hands back where its answer (an error as
/// text) arrives; `wake` is called when it has (the window repaints). A thread that cannot be
/// started answers with that error at once.
pub fn aside<T: Send + 'static>(wake: Wake, name: &str, work: impl FnOnce() -> anyhow::Result<T> + Send + 'static) -> Aside<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    let answer = tx.clone();
    let spawned = runner::spawn(name, move || {
        let _ = tx.send(work().map_err(|e| format!("{e:#}")));
        wake();
    });
    if let Err(e) = spawned {
        let _ = answer.send(Err(e));
    }
    rx
}

/// What a talking job's thread sends: a message while it runs, then its end (an error as text).
enum Said<M, T> {
    Says(M),
    Ended(Result<T, String>),
}

/// A job that talks while it runs (the Train tab's runs), as a view keeps it: the view drains its
/// messages each frame (`poll`), and its end is kept once it has come (`outcome`). A thread that
/// went away without its last word (it died) ends the job with an error that says so, never a
/// job left "running" for ever. One type for every kind of run, so no tab polls a channel itself.
pub struct Talk<M, T> {
    said: Receiver<Said<M, T>>,
    outcome: Option<Result<T, String>>,
    /// What the job ends with when its thread dies.
    died: String,
}

impl<M: Send + 'static, T: Send + 'static> Talk<M, T> {
    /// Runs `work` on a thread of its own named `name`: `work` is handed `send` for its messages
    /// (each wakes the window); its end arrives last, also when the thread cannot be started.
    /// `died` is what the job ends with if the thread dies before its end (e.g. what is kept).
    pub fn start(
        wake: Wake,
        name: &str,
        died: &str,
        work: impl FnOnce(&(dyn Fn(M) + Sync)) -> anyhow::Result<T> + Send + 'static,
    ) -> Talk<M, T> {
        let (tx, said) = channel();
        let (answer, unstarted) = (tx.clone(), wake.clone());
        let spawned = runner::spawn(name, move || {
            let send = |m: M| {
                let _ = tx.send(Said::Says(m));
                wake();
            };
            let result = work(&send).map_err(|e| format!("{e:#}"));
            let _ = tx.send(Said::Ended(result));
            wake();
        });
        if let Err(e) = spawned {
            let _ = answer.send(Said::Ended(Err(e)));
            unstarted();
        }
        Talk { said, outcome: None, died: died.to_string() }
    }
}

impl<M, T> Talk<M, T> {
    /// Hands every message waiting to `each`, oldest first; true when the job ended in this call
    /// (its outcome is then there, an error too when its thread died).
    pub fn poll(&mut self, mut each: impl FnMut(M)) -> bool {
        if self.outcome.is_some() {
            return false;
        }
        loop {
            match self.said.try_recv() {
                Ok(Said::Says(m)) => each(m),
                Ok(Said::Ended(r)) => {
                    self.outcome = Some(r);
                    return true;
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => return false,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    self.outcome = Some(Err(self.died.clone()));
                    return true;
                }
            }
        }
    }

    /// Whether it has not ended yet (as far as the last `poll` knows).
    pub fn running(&self) -> bool {
        self.outcome.is_none()
    }

    /// How it ended, once it has.
    pub fn outcome(&self) -> Option<&Result<T, String>> {
        self.outcome.as_ref()
    }
}

/// A disk scan the views draw from (every run's curves, say), kept as a cached job: the last
/// value read stays on show while a fresh read runs aside, started when the last one is older
/// than the view asks for (never two at once), so no view reads the disk on the UI thread.
/// Derefs to the value read last.
pub struct Scan<T> {
    value: T,
    reading: Option<Aside<T>>,
    /// When the last read was started (the view's clock, seconds); −∞: read at the next chance.
    started: f64,
    name: &'static str,
    /// What the last read that failed said (the value before it stays).
    pub failed: Option<String>,
}

impl<T: Send + 'static> Scan<T> {
    /// A scan named `name` (its thread's name) showing `empty` until its first read arrives.
    pub fn new(name: &'static str, empty: T) -> Scan<T> {
        Scan { value: empty, reading: None, started: f64::NEG_INFINITY, name, failed: None }
    }

    /// Takes in a read that has arrived, and starts a fresh one aside when the last was started
    /// `every` seconds or more before `now` and none is under way: `read` makes the work (it is
    /// called only then). True when a new value arrived in this call (the view may redraw).
    pub fn keep_fresh<F>(&mut self, wake: &Wake, now: f64, every: f64, read: impl FnOnce() -> F) -> bool
    where
        F: FnOnce() -> anyhow::Result<T> + Send + 'static,
    {
        let mut arrived = false;
        if let Some(rx) = &self.reading {
            match rx.try_recv() {
                Ok(Ok(v)) => {
                    (self.value, self.failed, self.reading, arrived) = (v, None, None, true);
                }
                Ok(Err(e)) => (self.failed, self.reading) = (Some(e), None),
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    (self.failed, self.reading) = (Some(format!("the {} thread stopped unexpectedly", self.name)), None)
                }
            }
        }
        if self.reading.is_none() && now - self.started >= every {
            self.started = now;
            self.reading = Some(aside(wake.clone(), self.name, read()));
        }
        arrived
    }

    /// Asks for a fresh read at the next `keep_fresh` (something on disk just changed).
    pub fn refresh(&mut self) {
        self.started = f64::NEG_INFINITY;
    }

    /// Whether a read is under way.
    pub fn reading(&self) -> bool {
        self.reading.is_some()
    }
}

impl<T> std::ops::Deref for Scan<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    fn until(what: &str, mut done: impl FnMut() -> bool) {
        let start = Instant::now();
        while !done() {
            assert!(start.elapsed() < Duration::from_secs(10), "waited 10 s for {what}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn a_talking_job_hands_over_its_messages_in_order_then_its_end_once() {
        let mut talk = Talk::start(Arc::new(|| {}), "counts", "it died", |send| {
            (1..=3).for_each(send);
            Ok("done")
        });
        let mut heard = Vec::new();
        let mut ends = 0;
        until("the end", || {
            ends += usize::from(talk.poll(|m| heard.push(m)));
            !talk.running()
        });
        assert!(!talk.poll(|m| heard.push(m)), "it ends once");
        assert_eq!((heard, ends), (vec![1, 2, 3], 1));
        assert_eq!(talk.outcome(), Some(&Ok("done")));
    }

    #[test]
    fn a_talking_job_whose_thread_dies_ends_with_what_it_was_told_to_say() {
        let mut talk: Talk<u8, ()> = Talk::start(Arc::new(|| {}), "dies", "the thread died; its checkpoint is kept", |send| {
            send(7);
            panic!("on purpose");
        });
        let mut heard = Vec::new();
        until("the end", || {
            talk.poll(|m| heard.push(m));
            !talk.running()
        });
        assert_eq!(heard, vec![7]);
        assert_eq!(talk.outcome(), Some(&Err("the thread died; its checkpoint is kept".to_string())));
        let mut error: Talk<u8, ()> = Talk::start(Arc::new(|| {}), "fails", "it died", |_| Err(anyhow::anyhow!("no such fly")));
        until("the error", || {
            error.poll(|_| {});
            !error.running()
        });
        assert_eq!(error.outcome(), Some(&Err("no such fly".to_string())));
    }

    #[test]
    fn a_scan_reads_aside_keeps_its_value_between_reads_and_reads_again_when_told() {
        let reads = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let wake: Wake = Arc::new(|| {});
        let mut scan = Scan::new("test scan", 0usize);
        let read = |reads: &Arc<std::sync::atomic::AtomicUsize>| {
            let reads = reads.clone();
            move || Ok(reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1)
        };
        // The first call starts a read; its value arrives at a later call.
        assert!(!scan.keep_fresh(&wake, 0.0, 1.0, || read(&reads)));
        assert_eq!(*scan, 0, "the empty value until the first read arrives");
        until("the first read", || scan.keep_fresh(&wake, 0.5, 1.0, || read(&reads)));
        assert_eq!(*scan, 1);
        // Not stale yet: no new read, the value stays.
        assert!(!scan.keep_fresh(&wake, 0.9, 1.0, || read(&reads)) && !scan.reading());
        assert_eq!(reads.load(std::sync::atomic::Ordering::SeqCst), 1);
        // Told that something changed: read again at once.
        scan.refresh();
        until("the second read", || scan.keep_fresh(&wake, 0.95, 1.0, || read(&reads)));
        assert_eq!(*scan, 2);
        // A failed read keeps the value and says why.
        let mut failing = Scan::new("failing scan", 5usize);
        failing.keep_fresh(&wake, 0.0, 1.0, || || Err(anyhow::anyhow!("the disk is gone")));
        until("the failure", || {
            failing.keep_fresh(&wake, 0.1, 1.0, || || Ok(9));
            failing.failed.is_some()
        });
        assert_eq!((*failing, failing.failed.as_deref()), (5, Some("the disk is gone")));
    }
}
