//! Stockfish's grades, in the background. A worker thread owns one supervised Stockfish process
//! (found from the setting, `$FLYCHESS_STOCKFISH`, beside the program, PATH or the usual install folders) and answers two kinds of
//! job: grade a position (its best line, and a score for each listed move: the fly's candidates
//! and the move played, through UCI `searchmoves`) and a hint (the best move, asked before any
//! grading waiting in line). Without Stockfish it reports why and how to install it, and
//! everything else keeps working; a new engine path starts a new grader. Dropping the grader ends
//! the thread after the analysis in hand, which stops and reaps the engine.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;
#[cfg(test)]
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender, select_biased, unbounded};

use flychess_fly::grading::{Score, Verdict, accuracy};
use flychess_fly::stockfish::{EngineOptions, Limit, Supervised, find_stockfish, kill_process};

/// The depth grades are computed at.
pub const GRADE_DEPTH: u32 = 12;
const TIMEOUT: Duration = Duration::from_secs(30);

pub struct GradeJob {
    /// Which game (the window's counter) and which ply: the position before move `ply`.
    pub game: u64,
    pub ply: usize,
    pub fen: String,
    /// UCI moves to score besides the best one.
    pub moves: Vec<String>,
}

/// Stockfish's view of one position: scores from the side to move.
#[derive(Clone, Debug, PartialEq)]
pub struct PositionGrade {
    pub game: u64,
    pub ply: usize,
    pub best: String,
    pub best_score: Score,
    pub scores: HashMap<String, Score>,
}

/// How one move compares with the best, for its mover.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MoveGrade {
    pub score: Score,
    /// Drop in the mover's win chance (points), ≥ 0.
    pub drop: f64,
    pub accuracy: f64,
    pub verdict: Verdict,
}

impl PositionGrade {
    pub fn grade(&self, uci: &str) -> Option<MoveGrade> {
        let score = *self.scores.get(uci)?;
        let is_best = uci == self.best;
        let drop = if is_best { 0.0 } else { (self.best_score.win_percent() - score.win_percent()).max(0.0) };
        Some(MoveGrade { score, drop, accuracy: accuracy(drop), verdict: Verdict::of(drop, is_best) })
    }
}

pub enum GraderEvent {
    Ready {
        path: PathBuf,
    },
    Graded(PositionGrade),
    Hint {
        fen: String,
        best: String,
    },
    /// No engine (or a broken one): what happened and what to do.
    Unavailable(String),
}

enum Job {
    Grade(GradeJob),
    Hint(String),
}

pub struct Grader {
    grades: Sender<Job>,
    hints: Sender<Job>,
    pub events: Receiver<GraderEvent>,
    thread: Option<JoinHandle<()>>,
    /// The running engine's process id (0: none), for killing a hung one on the way out.
    engine_pid: Arc<AtomicU32>,
    /// Set when the worker ends on its own terms (no engine, the grader dropped); a worker that
    /// ended without it died (`died`).
    ended_well: Arc<AtomicBool>,
}

/// Marks the worker's end as its own unless it is unwinding from a panic.
struct EndsWell(Arc<AtomicBool>);

impl Drop for EndsWell {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

impl Grader {
    /// Starts a grader for the engine at `setting` (None: search the usual places).
    pub fn start(setting: Option<PathBuf>, wake: impl Fn() + Send + 'static) -> Grader {
        let (grades, grade_jobs) = unbounded();
        let (hints, hint_jobs) = unbounded();
        let (tx, events) = unbounded();
        let engine_pid = Arc::new(AtomicU32::new(0));
        let pid_slot = engine_pid.clone();
        let ended_well = Arc::new(AtomicBool::new(false));
        let ends_well = EndsWell(ended_well.clone());
        let thread = std::thread::Builder::new()
            .name("stockfish-grader".into())
            .spawn(move || {
                let _ends_well = ends_well;
                let send = |e: GraderEvent| {
                    let _ = tx.send(e);
                    wake();
                };
                let path = match find_stockfish(setting.as_deref()) {
                    Ok(p) => p,
                    Err(e) => {
                        send(GraderEvent::Unavailable(e.to_string()));
                        return;
                    }
                };
                let mut engine =
                    Supervised::new(path.clone(), EngineOptions { threads: 1, hash_mb: 32, ..Default::default() }).publish_pid(pid_slot);
                // Start it now so a broken binary is reported before the first grade.
                if let Err(e) = engine.analyse("4k3/8/8/8/8/8/8/4K3 w - - 0 1", Limit::Depth(1), 1, TIMEOUT) {
                    send(GraderEvent::Unavailable(format!("{}: {e}", path.display())));
                    return;
                }
                send(GraderEvent::Ready { path: path.clone() });
                // After a failed job the next good one says the engine is back.
                let mut failing = false;
                loop {
                    let job = select_biased! {
                        recv(hint_jobs) -> j => j,
                        recv(grade_jobs) -> j => j,
                    };
                    let Ok(job) = job else { break };
                    let outcome = match job {
                        Job::Hint(fen) => match engine.best_move(&fen, Limit::Depth(GRADE_DEPTH), TIMEOUT) {
                            Ok(best) => Ok(best.map(|best| GraderEvent::Hint { fen, best })),
                            Err(e) => Err(e.to_string()),
                        },
                        Job::Grade(g) => grade(&mut engine, &g).map(|p| p.map(GraderEvent::Graded)),
                    };
                    match outcome {
                        Ok(event) => {
                            if std::mem::take(&mut failing) {
                                send(GraderEvent::Ready { path: path.clone() });
                            }
                            if let Some(e) = event {
                                send(e);
                            }
                        }
                        Err(e) => {
                            failing = true;
                            send(GraderEvent::Unavailable(e));
                        }
                    }
                }
            })
            .expect("a thread can be started");
        Grader { grades, hints, events, thread: Some(thread), engine_pid, ended_well }
    }

    /// True once the worker has ended without meaning to (a panic): the window starts another.
    /// A grader that found no engine ends on purpose and is not dead.
    pub fn died(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| t.is_finished()) && !self.ended_well.load(Ordering::SeqCst)
    }

    /// A grader whose worker takes jobs without answering and dies after `after`, as one that
    /// panicked would (tests of the window's recovery: the jobs it took are owed).
    #[doc(hidden)]
    pub fn dies_in(after: Duration) -> Grader {
        let (grades, grade_jobs) = unbounded::<Job>();
        let (hints, hint_jobs) = unbounded::<Job>();
        let (_tx, events) = unbounded();
        let thread = std::thread::spawn(move || {
            std::thread::sleep(after);
            drop((grade_jobs, hint_jobs, _tx));
        });
        Grader {
            grades,
            hints,
            events,
            thread: Some(thread),
            engine_pid: Arc::new(AtomicU32::new(0)),
            ended_well: Arc::new(AtomicBool::new(false)),
        }
    }

    pub fn grade(&self, job: GradeJob) {
        let _ = self.grades.send(Job::Grade(job));
    }

    pub fn hint(&self, fen: String) {
        let _ = self.hints.send(Job::Hint(fen));
    }
}

impl Drop for Grader {
    /// Never waits on the engine: the queued jobs are dropped with the channels, a running
    /// engine is killed (a hung one too: its worker's wait ends at once), and a thread of its own
    /// joins the worker, which reaps the engine on its way out.
    fn drop(&mut self) {
        let (dead, _) = unbounded();
        self.grades = dead.clone();
        self.hints = dead;
        kill_process(self.engine_pid.swap(0, Ordering::SeqCst));
        if let Some(t) = self.thread.take() {
            let _ = std::thread::Builder::new().name("grader-reaper".into()).spawn(move || {
                let _ = t.join();
            });
        }
    }
}

fn grade(engine: &mut Supervised, job: &GradeJob) -> Result<Option<PositionGrade>, String> {
    let best = engine.analyse(&job.fen, Limit::Depth(GRADE_DEPTH), 1, TIMEOUT).map_err(|e| e.to_string())?;
    let Some(top) = best.first() else { return Ok(None) };
    let mut scores = HashMap::new();
    scores.insert(top.uci.clone(), top.score);
    let mut among: Vec<String> = job.moves.iter().filter(|m| **m != top.uci).cloned().collect();
    among.sort();
    among.dedup();
    if !among.is_empty() {
        let lines = engine.analyse_among(&job.fen, Limit::Depth(GRADE_DEPTH), among.len(), &among, TIMEOUT).map_err(|e| e.to_string())?;
        for l in lines {
            scores.entry(l.uci).or_insert(l.score);
        }
    }
    // A listed move can only be as good as the best: clip search noise.
    let best_score = top.score;
    for s in scores.values_mut() {
        if s.win_percent() > best_score.win_percent() {
            *s = best_score;
        }
    }
    Ok(Some(PositionGrade { game: job.game, ply: job.ply, best: top.uci.clone(), best_score, scores }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_engine_is_reported_with_the_install_hint() {
        let g = Grader::start(Some(PathBuf::from("/nonexistent/stockfish")), || {});
        match g.events.recv_timeout(Duration::from_secs(10)).unwrap() {
            GraderEvent::Unavailable(msg) => assert!(msg.contains("install"), "{msg}"),
            _ => panic!("expected Unavailable"),
        }
        // Its worker ended on purpose: not a death the window would answer with a new grader.
        let started = Instant::now();
        while !g.thread.as_ref().unwrap().is_finished() {
            assert!(started.elapsed() < Duration::from_secs(10));
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!g.died(), "a grader without an engine did not die");
        let dying = Grader::dies_in(Duration::from_millis(50));
        assert!(!dying.died());
        std::thread::sleep(Duration::from_millis(300));
        assert!(dying.died());
    }

    /// A fake UCI engine in `dir`: a shell script that runs `first`, then answers uci and isready
    /// and whatever `more` (extra `case` arms) says; anything else it ignores.
    #[cfg(unix)]
    fn fake_engine(dir: &std::path::Path, first: &str, more: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let script = dir.join("fake-engine");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\n{first}\nwhile read line; do case \"$line\" in uci) echo uciok;; isready) echo readyok;; {more} esac; done\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        script
    }

    #[cfg(unix)]
    #[test]
    fn closing_with_a_hung_engine_returns_at_once_and_the_engine_is_gone() {
        // A fake engine: it says uciok and readyok, then never answers a search.
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = fake_engine(dir.path(), &format!("echo $$ > {}", pid_file.display()), "");
        let g = Grader::start(Some(script), || {});
        // Wait until the engine runs and hangs in its first search.
        let started = Instant::now();
        while !pid_file.exists() || std::fs::read_to_string(&pid_file).unwrap().trim().is_empty() {
            assert!(started.elapsed() < Duration::from_secs(10), "the fake engine never started");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        assert!(g.events.try_recv().is_err(), "no answer from a hung engine");
        let pid: u32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
        let closing = Instant::now();
        drop(g);
        assert!(closing.elapsed() < Duration::from_secs(1), "closing waited {:?} on the hung engine", closing.elapsed());
        // Killed and reaped: no process of that id is left, not even a zombie.
        let gone = Instant::now();
        while std::path::Path::new(&format!("/proc/{pid}")).exists() {
            assert!(gone.elapsed() < Duration::from_secs(5), "the hung engine {pid} is still there");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[cfg(unix)]
    #[test]
    fn after_an_engine_failure_the_grader_says_ready_again_when_the_engine_answers() {
        // A fake engine: answers every search with e2e4 at +0.10, or dies on `go` while the
        // file `broken` exists.
        let dir = tempfile::tempdir().unwrap();
        let broken = dir.path().join("broken");
        let go = format!(
            "go*) if [ -e {} ]; then exit 1; fi; echo 'info depth 12 multipv 1 score cp 10 pv e2e4'; echo 'bestmove e2e4';;",
            broken.display()
        );
        let script = fake_engine(dir.path(), "", &go);
        let g = Grader::start(Some(script), || {});
        let next = || g.events.recv_timeout(Duration::from_secs(20)).expect("an event");
        assert!(matches!(next(), GraderEvent::Ready { .. }));
        let job = |ply| GradeJob {
            game: 1,
            ply,
            fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
            moves: vec!["d2d4".into()],
        };
        // The engine dies (twice: the supervisor replaces it once): the grader says so.
        std::fs::write(&broken, b"").unwrap();
        g.grade(job(0));
        assert!(matches!(next(), GraderEvent::Unavailable(_)));
        // It answers again: ready, then the grade.
        std::fs::remove_file(&broken).unwrap();
        g.grade(job(1));
        assert!(matches!(next(), GraderEvent::Ready { .. }), "the status comes back to ready");
        match next() {
            GraderEvent::Graded(p) => assert_eq!((p.ply, p.best.as_str()), (1, "e2e4")),
            _ => panic!("expected the grade"),
        }
    }

    #[test]
    fn grades_compare_moves_with_the_best() {
        let mut scores = HashMap::new();
        scores.insert("e2e4".to_string(), Score::Cp(30));
        scores.insert("f2f3".to_string(), Score::Cp(-400));
        let p = PositionGrade { game: 0, ply: 0, best: "e2e4".into(), best_score: Score::Cp(30), scores };
        assert_eq!(p.grade("e2e4").unwrap().verdict, Verdict::Best);
        let bad = p.grade("f2f3").unwrap();
        assert_eq!(bad.verdict, Verdict::Blunder);
        assert!(bad.accuracy < 30.0);
        assert!(p.grade("a2a3").is_none());
    }
}
