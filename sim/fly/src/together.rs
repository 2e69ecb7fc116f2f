//! Thinks asked for at the same time go through the brain together. The CPU engine gives a board
//! the same rates bit for bit in any batch, and a batch of a few boards costs little more than one
//! (one position 40–60 ms, eight 130–160 ms on two cores), so when several threads want the
//! readout's features of the same brain at once — the ladder's games, each on its own worker —
//! the first becomes the leader and thinks its boards alone, and whoever asks meanwhile waits;
//! when the leader is done, one of those becomes the next leader and takes every waiting request
//! of its kind as one batch (up to `MOST_BOARDS`). A caller alone is never delayed: it leads at
//! once. The results are exactly what each caller would have got on its own.

use std::collections::{HashMap, HashSet};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};

use flychess_brain::chess::Planes;

/// The most boards a leader takes at once (the engine's fastest batch; a single request larger
/// than this still goes through whole).
const MOST_BOARDS: usize = 32;

/// What two requests must share to think as one batch: the same brain, descending neurons and
/// engine (by address: every caller holds its own borrowed while it waits, so equal addresses are
/// the same objects; no engine is the CPU engine) and the same read steps.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Kind {
    brain: usize,
    descending: (usize, usize),
    engine: usize,
    steps: Vec<usize>,
}

impl Kind {
    pub fn of(
        brain: &flychess_brain::brain::Brain,
        descending: &[u32],
        steps: &[usize],
        engine: Option<&flychess_brain::brain::simulator::Simulator>,
    ) -> Kind {
        Kind {
            brain: brain as *const _ as usize,
            descending: (descending.as_ptr() as usize, descending.len()),
            engine: engine.map_or(0, |e| e as *const _ as usize),
            steps: steps.to_vec(),
        }
    }
}

struct Request {
    id: u64,
    kind: Kind,
    boards: Vec<Planes>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    waiting: Vec<Request>,
    /// Kinds with a batch being thought right now.
    leading: HashSet<Kind>,
    done: HashMap<u64, Vec<Vec<f32>>>,
    /// Batches thought, and requests that shared one with another request.
    batches: u64,
    shared: u64,
}

fn state() -> &'static (Mutex<State>, Condvar) {
    static STATE: OnceLock<(Mutex<State>, Condvar)> = OnceLock::new();
    STATE.get_or_init(Default::default)
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// (batches thought, requests that shared a batch) since the process started.
pub fn counts() -> (u64, u64) {
    let s = lock(&state().0);
    (s.batches, s.shared)
}

/// Puts back what a leader took when its think unwinds, so the others can lead instead of waiting
/// for results that will never come.
struct Leading<'a> {
    kind: &'a Kind,
    others: Vec<Request>,
    finished: bool,
}

impl Drop for Leading<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let (m, cv) = state();
        let mut s = lock(m);
        s.leading.remove(self.kind);
        s.waiting.append(&mut self.others);
        cv.notify_all();
    }
}

/// `think(boards)` (one result per board, in order), in one batch with the requests of the same
/// kind other threads make meanwhile. A rayon worker thinks alone: waiting there could hold up the
/// very pool the leader's think runs on. So does a page (wasm32): it has one thread, so no other
/// request can be waiting, and it cannot wait.
pub fn think_together(kind: Kind, boards: &[Planes], think: impl Fn(&[Planes]) -> Vec<Vec<f32>>) -> Vec<Vec<f32>> {
    if cfg!(target_arch = "wasm32") || rayon::current_thread_index().is_some() || boards.is_empty() {
        return think(boards);
    }
    let (m, cv) = state();
    let mut s = lock(m);
    let id = s.next_id;
    s.next_id += 1;
    s.waiting.push(Request { id, kind: kind.clone(), boards: boards.to_vec() });
    loop {
        if let Some(features) = s.done.remove(&id) {
            return features;
        }
        if !s.leading.contains(&kind) {
            // Lead: this request first, then the others of its kind in the order they came.
            let mine = s.waiting.iter().position(|r| r.id == id).expect("an unanswered request is waiting");
            let mine = s.waiting.remove(mine);
            let mut total = mine.boards.len();
            let mut others = Vec::new();
            let mut i = 0;
            while i < s.waiting.len() {
                if s.waiting[i].kind == kind && total + s.waiting[i].boards.len() <= MOST_BOARDS {
                    total += s.waiting[i].boards.len();
                    others.push(s.waiting.remove(i));
                } else {
                    i += 1;
                }
            }
            s.leading.insert(kind.clone());
            s.batches += 1;
            if !others.is_empty() {
                s.shared += 1 + others.len() as u64;
            }
            drop(s);
            let mut leading = Leading { kind: &kind, others, finished: false };
            let all: Vec<Planes> = mine.boards.iter().chain(leading.others.iter().flat_map(|r| r.boards.iter())).copied().collect();
            let mut features = think(&all);
            assert_eq!(features.len(), all.len(), "one result per board");
            let mut s = lock(m);
            for r in leading.others.iter().rev() {
                let theirs = features.split_off(features.len() - r.boards.len());
                s.done.insert(r.id, theirs);
            }
            leading.finished = true;
            s.leading.remove(&kind);
            cv.notify_all();
            return features;
        }
        s = cv.wait(s).unwrap_or_else(PoisonError::into_inner);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flychess_brain::brain::Brain;
    use std::sync::mpsc;
    use std::time::Duration;

    fn board(squares: usize) -> Planes {
        let mut b = [[false; 64]; 12];
        b[0][..squares].fill(true);
        b
    }

    /// One number per board: how many squares it has lit.
    fn count(boards: &[Planes]) -> Vec<Vec<f32>> {
        boards.iter().map(|b| vec![b.iter().flatten().filter(|&&x| x).count() as f32]).collect()
    }

    #[test]
    fn a_leader_that_fails_hands_the_others_back_and_nobody_waits_forever() {
        let brain = Brain::from_parts(3, vec![0, 0, 0, 0], vec![], vec![], vec![]);
        let kind = Kind::of(&brain, &[], &[11], None);
        let (thinking, started) = mpsc::channel();
        let (release, go) = mpsc::channel::<()>();
        let outcomes = std::thread::scope(|s| {
            // The first caller leads alone and holds its batch until A and B wait behind it.
            let first_kind = kind.clone();
            let first = s.spawn(move || {
                think_together(first_kind, &[board(1)], |b| {
                    thinking.send(()).expect("the test listens");
                    go.recv().expect("the test releases");
                    count(b)
                })
            });
            started.recv().expect("the first caller leads");
            // A and B: each fails when it leads a batch of more than one request's boards.
            let fragile = |n: usize| {
                let kind = kind.clone();
                s.spawn(move || {
                    std::panic::catch_unwind(|| {
                        think_together(kind, &[board(n)], |b| {
                            assert!(b.len() == 1, "this think fails on a shared batch");
                            count(b)
                        })
                    })
                    .ok()
                })
            };
            let (a, b) = (fragile(2), fragile(3));
            std::thread::sleep(Duration::from_millis(200));
            release.send(()).expect("the first caller waits");
            (first.join().expect("the first caller"), a.join().expect("A's thread"), b.join().expect("B's thread"))
        });
        let (first, a, b) = outcomes;
        assert_eq!(first, vec![vec![1.0]]);
        // Whoever led A and B together failed; the other was handed back and thought alone.
        match (a, b) {
            (None, Some(b)) => assert_eq!(b, vec![vec![3.0]]),
            (Some(a), None) => assert_eq!(a, vec![vec![2.0]]),
            other => panic!("exactly one of A and B fails, got {other:?}"),
        }
    }
}
