//! The lab: everything the window shows that is not drawing. It owns the domain state and the
//! background jobs below every tab: the brain in use and other brains being downloaded or built
//! (the current one plays on meanwhile; a failure is said and loses nothing), the workers (the
//! fly's thinker, Stockfish's grader, the speaker, the `--watch` opponent; a worker that dies is
//! noticed, said, and replaced), the flies, Charles runs and ratings on disk, and the game in play
//! (`game_play::Match`). Tabs are views over it: they read its state, send it a `Command`, and
//! the window hands them the `Notice`s that `poll` returns each frame. It never draws and knows
//! no egui widget; the connectome's tables stay behind `sim::store`, reached only through the
//! brain it loads (`ReadyBrain`). Without the `native` feature (a page, wasm32) there is one
//! brain and its flies, from the bytes the page fetched (`Fetched`), no flies on disk, no
//! Stockfish process, no `--watch` and no sound.

#[cfg(feature = "native")]
pub mod flies;
pub mod game_play;
pub mod jobs;
pub mod think_summary;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

use shakmaty::{Color, Move};

use flychess_brain::store;
#[cfg(feature = "native")]
use flychess_brain::store::Tables;

// The plain types and helpers the views are handed: the window names nothing of the simulator
// itself, only what the lab gives it.
pub use flychess_brain::brain::{Brain, Outgoing, STEPS};
pub use flychess_brain::chess::position_from_fen;
pub use flychess_brain::connectome::rules::Region;
pub use flychess_brain::connectome::{Connectome, Control, Info};
pub use flychess_brain::files::DataFolder;
#[cfg(feature = "native")]
pub use flychess_brain::store::BrainSpec;
pub use flychess_fly::fly::check_name;
pub use flychess_fly::grading::Verdict;
pub use flychess_fly::stockfish::{SEARCHED as STOCKFISH_SEARCHED, find_stockfish};

use crate::game::Game;
use crate::grader::{Grader, GraderEvent};
use crate::sound::Speaker;
use crate::thinker::Thinker;
pub use game_play::{CANDIDATES, KEEP_RATES, Match, REPLAY_SECONDS, Workers};

/// The default brain's shipped fly (FlyWire v783); any brain falls back to its own fly.
pub const DEFAULT_FLY: &str = "flywire";

/// The aids offered with each trained fly in the New game picker: a judge and a 64-simulation
/// search over its own top five moves.
pub const AIDED_SUFFIXES: [&str; 2] = ["judge", "search64"];

/// What a page says where the desktop program would do more (train, change flies, open files).
pub const NEEDS_DESKTOP: &str = "This needs the desktop program (flychess).";

/// What a page's grades say until Stockfish comes to the page.
pub const NO_PAGE_GRADES: &str = "Stockfish's grades load with the page: not in this build";

/// How many times a worker that died is started again before the lab gives up on it.
pub const RESTARTS: u32 = 3;

#[cfg(feature = "native")]
/// DATA/exports/NAME-<unix seconds>.EXT, for saving without a file dialog; two exports within
/// one second never overwrite each other.
pub fn export_path(data: &Path, name: &str, ext: &str) -> PathBuf {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let dir = DataFolder::at(data).exports();
    (1..)
        .map(|k| if k == 1 { dir.join(format!("{name}-{secs}.{ext}")) } else { dir.join(format!("{name}-{secs}-{k}.{ext}")) })
        .find(|p| !p.exists())
        .expect("an unused name")
}

/// The brain a page plays on: the one whose bytes it fetched (`Fetched`). The desktop program
/// names a brain by its tables and control (`flychess_brain::store::BrainSpec`); a page cannot
/// build another, so there is nothing to choose.
#[cfg(not(feature = "native"))]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BrainSpec;

#[cfg(not(feature = "native"))]
impl BrainSpec {
    /// The name the page's brain goes by.
    pub fn name(&self) -> String {
        "flywire783".into()
    }
}

/// What a page fetched for the lab (without the `native` feature): the brain file's bytes, its
/// homeostasis's (measured on that brain, `store::ready_brain_from_bytes`), and the flies that
/// play on it, by name.
#[derive(Clone, Debug, Default)]
pub struct Fetched {
    pub brain: Arc<Vec<u8>>,
    pub homeostasis: Arc<Vec<u8>>,
    pub flies: Vec<(String, Arc<Vec<u8>>)>,
}

/// Called from worker threads when they have news (the window's repaint).
pub type Wake = Arc<dyn Fn() + Send + Sync>;

/// A loaded, calibrated brain.
pub struct ReadyBrain {
    /// What it was built from (controls are built from the same tables).
    pub spec: BrainSpec,
    pub connectome: Arc<Connectome>,
    pub brain: Arc<Brain>,
    pub checksum: String,
    pub info: Info,
    /// The dopamine fly's models of this brain, by constants (`dopamine_model`).
    #[cfg(feature = "native")]
    dopamine_models: std::sync::Mutex<Vec<(flychess_arena::bio::Constants, Arc<flychess_arena::bio::BioBrain>)>>,
}

impl ReadyBrain {
    /// This brain as players are seated on it (`flychess_arena::players::seat`), a dopamine fly's
    /// mushroom body made by `mushroom_body` (`dopamine_model`, said as the door says it).
    pub fn venue<'a>(
        &'a self,
        mushroom_body: &'a dyn Fn(flychess_arena::bio::Constants) -> flychess_arena::Result<Arc<flychess_arena::bio::BioBrain>>,
    ) -> flychess_arena::players::Venue<'a> {
        flychess_arena::players::Venue { brain: &self.brain, descending: &self.connectome.groups.descending, mushroom_body }
    }

    #[cfg(feature = "native")]
    /// The dopamine fly's model of this brain for `constants`, made once (the mushroom body split
    /// off, its homeostasis read back or measured) and shared by the Play tab, the lesson comic,
    /// the `--watch` opponent and the Train tab's runs. Called from worker threads only: making it
    /// takes seconds, and a second caller for the same model waits for the first.
    pub fn dopamine_model(
        &self,
        data: &Path,
        constants: flychess_arena::bio::Constants,
        progress: &(dyn Fn(usize) + Sync),
    ) -> flychess_arena::Result<Arc<flychess_arena::bio::BioBrain>> {
        let mut made = self.dopamine_models.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, b)) = made.iter().find(|(c, _)| *c == constants) {
            return Ok(b.clone());
        }
        let b = Arc::new(flychess_arena::bio::prepare(
            &self.connectome,
            &self.checksum,
            &self.brain,
            &self.spec.brain_path(data),
            constants,
            progress,
        )?);
        made.push((constants, b.clone()));
        Ok(b)
    }
}

enum Report {
    Progress {
        stage: String,
        fraction: f64,
    },
    Ready(Box<ReadyBrain>),
    Failed(String),
    /// What the flies job read off the disk.
    #[cfg(feature = "native")]
    Flies(Box<flies::FlyLists>),
    /// A PGN file read (its path, the game or why not).
    Pgn(PathBuf, Result<Box<Game>, String>),
    /// A PGN file written, or why not (in words).
    Saved(String),
    /// What became of a `FlyAction` (in words).
    #[cfg(feature = "native")]
    FlyDone(String),
}

/// What the Flies tab asks done to a fly on disk: done on a lab thread, said in
/// `Lab::flies_said`, then the flies are read again.
#[derive(Clone, Debug, PartialEq)]
pub enum FlyAction {
    /// Delete the user's fly called this (a shipped one is never in the list to delete).
    Delete(String),
    /// Rename a fly: `from` becomes `to` (refused when `to` is not a fly name or is taken).
    Rename { from: String, to: String },
    /// Copy the fly's file to `to` (a path the user chose).
    Export { name: String, to: PathBuf },
    /// Save the loaded brain with an untrained readout as a fly called this.
    Newborn(String),
}

pub enum BrainState {
    Loading { stage: String, fraction: f64 },
    Ready(Arc<ReadyBrain>),
    Failed(String),
}

/// What a view asks the lab to do.
pub enum Command {
    /// Play a move for whoever is to move (the user's move, a premove, a typed move).
    Play(Move),
    TakeBack,
    /// `colour` resigns the game.
    Resign(Color),
    /// A new game against `fly` (None: the same player), the user playing `user`.
    NewGame {
        game: Game,
        user: Color,
        fly: Option<String>,
    },
    /// Stockfish's best move in the current position.
    Hint,
    /// Load (or build) another brain; the current one plays on until it is ready.
    SwitchBrain(BrainSpec),
    /// Download MaleCNS v1.0's tables and build its brain.
    DownloadMaleCns,
    /// Grade with the Stockfish at this path (empty: search the usual places).
    UseStockfish(String),
    /// Read the flies, Charles runs and ratings on disk again (a fly was trained, renamed, deleted).
    ReadFlies,
    /// Play by itself from now on: the fly against `Watch::opponent` (sent once the game it
    /// watches is set up).
    Watch(Watch),
    /// Read a game from a PGN file (off the UI thread, at most `PGN_LIMIT` bytes) and play on
    /// from its last position against the same player; `Notice::GameLoaded` when it is in.
    LoadPgn(PathBuf),
    /// Write the game as PGN to this file (atomically, off the UI thread); the outcome is said in
    /// the game's status.
    SavePgn(PathBuf),
    /// Show the position after this many moves (None: follow the game).
    Show(Option<usize>),
    /// The game's status line says this (a copied FEN, a dropped premove, a typed move refused).
    Say(String),
    /// The fly looks at the board after each of its own moves (one-move imagination), or not.
    Imagination(bool),
    /// The Brain tab shows the second of a two-glances think (true) or its first look.
    SecondGlance(bool),
    /// Replay the fly's 12 steps before its move is played, or not.
    Replay(bool),
    /// Mute the move sounds, or not.
    Mute(bool),
    /// The fly called this plays on in the game as it stands (made ready off the UI thread).
    UseFly(String),
    /// Play this sound (the board refusing an illegal move).
    Sound(crate::sound::Sound),
    /// Delete, rename, export or build a fly (off the UI thread); the outcome in `flies_said`.
    Fly(FlyAction),
}

/// The largest PGN file the window reads (a game's PGN is a few kilobytes; a file this size is
/// not one game).
pub const PGN_LIMIT: u64 = 1 << 20;

/// What happened in the lab since the last frame, for the views that care.
#[derive(Clone, Debug, PartialEq)]
pub enum Notice {
    /// A brain is ready and in use (the first one, or another that replaced it).
    BrainReady,
    /// Another brain could not be prepared; the current one plays on.
    BrainFailed(String),
    /// A worker died and a new one was started (what, in words).
    WorkerReplaced(String),
    /// The game just ended (its id).
    GameOver(u64),
    /// A game read from a PGN file is in play (the user plays this colour).
    GameLoaded(Color),
}

/// A game the lab plays by itself: the fly against `opponent` (random, greedy, stockfish,
/// stockfish:P or a fly's name) until the game ends or `plies` moves are played.
#[derive(Clone, Debug, Default)]
pub struct Watch {
    pub opponent: String,
    pub plies: Option<usize>,
}

/// The window's wgpu device as the lab uses it: to choose the fly's engine and to draw figures
/// offscreen. The window makes it from eframe's render state; the lab never sees egui.
#[derive(Clone)]
pub struct Gpu {
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
}

/// How the lab starts.
pub struct LabOptions {
    pub data: PathBuf,
    /// The window's wgpu device and queue (None in tests without a renderer).
    pub gpu: Option<Gpu>,
    /// A speaker that never opens a device (tests, screenshots).
    pub silent: bool,
    pub muted: bool,
    pub stockfish: String,
    pub fly: String,
    pub user: Color,
    /// The brain and flies a page fetched (the desktop program reads them from `data`).
    #[cfg(not(feature = "native"))]
    pub source: Fetched,
}

pub struct Lab {
    pub(in crate::lab) data: PathBuf,
    pub(in crate::lab) brain: BrainState,
    reports: Receiver<Report>,
    sender: Sender<Report>,
    /// A download in progress: (stage, fraction).
    pub(in crate::lab) download: Option<(String, f64)>,
    /// Another brain being built while the current one plays on: (stage, fraction).
    pub(in crate::lab) brain_job: Option<(String, f64)>,
    /// Why the last download or build of another brain failed (the current brain plays on).
    pub(in crate::lab) brain_job_error: Option<String>,
    /// The game in play.
    pub(in crate::lab) play: Match,
    pub(in crate::lab) thinker: Option<Thinker>,
    pub(in crate::lab) grader: Option<Grader>,
    pub(in crate::lab) grader_status: String,
    /// The Stockfish path the grader was started with (empty: the usual places; a page has no
    /// Stockfish to run).
    #[cfg_attr(not(feature = "native"), allow(dead_code))]
    stockfish: String,
    grader_restarts: u32,
    pub(in crate::lab) speaker: Speaker,
    /// What the lab says about its workers (one that died and was replaced).
    pub(in crate::lab) workers_status: String,
    /// What became of the last `FlyAction` (empty: none yet, or one still under way).
    flies_said: String,
    /// Which engine the fly thinks with, in words.
    pub(in crate::lab) engine: String,
    pub(in crate::lab) gpu: Option<Gpu>,
    pub(in crate::lab) flies: Vec<String>,
    /// The players the loaded brain can field (what the new-game picker offers).
    pub(in crate::lab) playable: Vec<String>,
    /// The finished Charles runs by player name.
    pub(in crate::lab) charles: Vec<String>,
    /// The brain the playable list was made for (None: before the first listing).
    playable_for: Option<String>,
    /// The flies job is reading the disk; `flies_again`: something changed meanwhile, read again.
    flies_job: bool,
    #[cfg(feature = "native")]
    flies_again: bool,
    pub(in crate::lab) ratings: HashMap<String, String>,
    /// The ladder's ratings file and where it came from, read with the flies.
    pub(in crate::lab) ratings_report: Option<(serde_json::Value, String)>,
    pub(in crate::lab) watch: Option<Watch>,
    /// `--watch`: the opponent playing the user's side, and the move asked of it (id, ply).
    #[cfg(feature = "native")]
    opponent: Option<crate::opponent::Opponent>,
    pub(in crate::lab) opponent_asked: Option<(u64, usize)>,
    /// Why the `--watch` opponent could not start or play (then the lab stops asking it).
    pub(in crate::lab) opponent_failed: Option<String>,
    notices: Vec<Notice>,
    /// The game whose end was last told.
    over_told: Option<(u64, usize)>,
    wake: Wake,
}

impl Lab {
    /// Starts the lab: the default brain loads (or is built) in the background, the grader starts.
    pub fn new(options: LabOptions, wake: Wake) -> Lab {
        let (sender, reports) = channel();
        #[cfg(feature = "native")]
        start_brain_job(BrainSpec::default(), options.data.clone(), sender.clone(), wake.clone());
        #[cfg(not(feature = "native"))]
        start_page_brain_job(options.source.clone(), sender.clone(), wake.clone());
        let mut lab = Lab {
            brain: BrainState::Loading { stage: "starting".into(), fraction: 0.0 },
            reports,
            sender,
            download: None,
            brain_job: None,
            brain_job_error: None,
            play: Match::new(options.fly, options.user),
            thinker: None,
            grader: None,
            grader_status: String::new(),
            stockfish: options.stockfish,
            grader_restarts: 0,
            speaker: if options.silent { Speaker::silent() } else { Speaker::new(options.muted) },
            workers_status: String::new(),
            flies_said: String::new(),
            engine: String::new(),
            gpu: options.gpu,
            flies: Vec::new(),
            playable: Vec::new(),
            charles: Vec::new(),
            playable_for: None,
            flies_job: false,
            #[cfg(feature = "native")]
            flies_again: false,
            ratings: HashMap::new(),
            ratings_report: None,
            watch: None,
            #[cfg(feature = "native")]
            opponent: None,
            opponent_asked: None,
            opponent_failed: None,
            notices: Vec::new(),
            over_told: None,
            wake,
            data: options.data,
        };
        #[cfg(not(feature = "native"))]
        {
            lab.play.fetched = options.source.flies;
        }
        lab.read_flies();
        lab.start_grader();
        lab
    }

    /// A page has no flies on disk to change.
    #[cfg(not(feature = "native"))]
    fn fly_action(&mut self, _action: FlyAction) {
        self.flies_said = NEEDS_DESKTOP.into();
    }

    /// Does `action` on a thread of its own; its outcome comes back as `Report::FlyDone`.
    #[cfg(feature = "native")]
    fn fly_action(&mut self, action: FlyAction) {
        let (tx, wake, data) = (self.sender.clone(), self.wake.clone(), self.data.clone());
        let ready = self.ready().cloned();
        self.flies_said.clear();
        self.aside("fly-action", move || {
            let said = match action {
                FlyAction::Delete(name) => match flies::delete_fly(&data, &name) {
                    Ok(()) => format!("Deleted {name}."),
                    Err(e) => format!("Could not delete {name}: {e}"),
                },
                FlyAction::Rename { from, to } => match flies::rename_fly(&data, &from, to.trim()) {
                    Ok(()) => format!("Renamed {from} to {}.", to.trim()),
                    Err(e) => format!("Could not rename: {e:#}"),
                },
                FlyAction::Export { name, to } => match flychess_fly::fly::find(&name, &data) {
                    Err(e) => format!("Could not export: {e}"),
                    Ok(from) => match std::fs::copy(&from, &to) {
                        Ok(_) => format!("Exported {name} to {}", to.display()),
                        Err(e) => format!("Could not export to {}: {e}", to.display()),
                    },
                },
                FlyAction::Newborn(name) => match &ready {
                    Some(r) => match flychess_fly::fly::check_new_name(&name)
                        .map_err(anyhow::Error::from)
                        .and_then(|_| flies::save_newborn(&r.connectome, &r.checksum, &r.brain, &data, &name))
                    {
                        Ok(_) => format!("Built {name}."),
                        Err(e) => format!("Could not build {name}: {e:#}"),
                    },
                    None => format!("Could not build {name}: no brain is loaded yet."),
                },
            };
            let _ = tx.send(Report::FlyDone(said));
            wake();
        });
    }

    /// Runs `work` on a thread of its own; a thread that cannot start is said in the workers' status.
    fn aside(&mut self, name: &str, work: impl FnOnce() + Send + 'static) {
        if let Err(e) = jobs::runner::spawn(name, work) {
            self.workers_status = e;
        }
    }

    // Test doubles and states a window reaches only by chance (a worker that dies, a brain with no
    // fly yet): for the UI tests, never called by a view.

    #[doc(hidden)]
    pub fn replace_thinker_for_test(&mut self, thinker: Thinker) {
        self.thinker = Some(thinker);
    }

    #[doc(hidden)]
    pub fn replace_grader_for_test(&mut self, grader: Grader, status: &str) {
        self.grader = Some(grader);
        self.grader_status = status.to_string();
    }

    #[doc(hidden)]
    pub fn set_user_for_test(&mut self, user: Color) {
        self.play.user = user;
    }

    #[doc(hidden)]
    pub fn forget_fly_for_test(&mut self) {
        self.play.fly = None;
    }

    // What the views read of the lab (they change it only through `command`).

    pub fn data(&self) -> &PathBuf {
        &self.data
    }

    pub fn brain(&self) -> &BrainState {
        &self.brain
    }

    pub fn download(&self) -> &Option<(String, f64)> {
        &self.download
    }

    pub fn brain_job(&self) -> &Option<(String, f64)> {
        &self.brain_job
    }

    pub fn brain_job_error(&self) -> &Option<String> {
        &self.brain_job_error
    }

    pub fn play(&self) -> &Match {
        &self.play
    }

    pub fn thinker(&self) -> &Option<Thinker> {
        &self.thinker
    }

    pub fn grader(&self) -> &Option<Grader> {
        &self.grader
    }

    pub fn grader_status(&self) -> &String {
        &self.grader_status
    }

    pub fn speaker(&self) -> &Speaker {
        &self.speaker
    }

    /// What became of the last fly deleted, renamed, exported or built (empty: nothing yet).
    pub fn flies_said(&self) -> &str {
        &self.flies_said
    }

    pub fn workers_status(&self) -> &String {
        &self.workers_status
    }

    pub fn engine(&self) -> &String {
        &self.engine
    }

    pub fn gpu(&self) -> &Option<Gpu> {
        &self.gpu
    }

    pub fn flies(&self) -> &Vec<String> {
        &self.flies
    }

    pub fn playable(&self) -> &Vec<String> {
        &self.playable
    }

    pub fn charles(&self) -> &Vec<String> {
        &self.charles
    }

    pub fn ratings(&self) -> &HashMap<String, String> {
        &self.ratings
    }

    /// The ladder's ratings file (the user's own, else the shipped one) and where it came from,
    /// as last read with the flies (None: none, or not read yet).
    pub fn ratings_report(&self) -> Option<&(serde_json::Value, String)> {
        self.ratings_report.as_ref()
    }

    pub fn watch(&self) -> &Option<Watch> {
        &self.watch
    }

    pub fn opponent_asked(&self) -> &Option<(u64, usize)> {
        &self.opponent_asked
    }

    pub fn opponent_failed(&self) -> &Option<String> {
        &self.opponent_failed
    }

    pub fn ready(&self) -> Option<&Arc<ReadyBrain>> {
        match &self.brain {
            BrainState::Ready(b) => Some(b),
            _ => None,
        }
    }

    /// The game and the workers it uses, borrowed apart.
    pub(in crate::lab) fn game_and_workers(&mut self) -> (&mut Match, Workers<'_>) {
        let ready = match &self.brain {
            BrainState::Ready(b) => Some(b),
            _ => None,
        };
        (
            &mut self.play,
            Workers { thinker: self.thinker.as_ref(), grader: self.grader.as_ref(), speaker: &mut self.speaker, data: &self.data, ready },
        )
    }

    /// Does what a view asked. A move that is not legal is said in the game's status (false).
    pub fn command(&mut self, command: Command) -> bool {
        match command {
            Command::Play(m) => {
                let (game, mut w) = self.game_and_workers();
                return game.play_move(m, &mut w);
            }
            Command::TakeBack => self.play.take_back(&mut self.speaker),
            Command::Resign(colour) => self.play.resign(colour, &mut self.speaker),
            Command::NewGame { game, user, fly } => {
                if let Some(name) = fly {
                    self.play.fly_name = name;
                    if let Some(r) = self.ready().cloned() {
                        self.play.load_fly(&self.data, &r.checksum, Some(&r));
                    }
                }
                self.play.start_game(game, user);
                // An answer the opponent owes belongs to the last game.
                self.opponent_asked = None;
            }
            Command::Hint => self.play.ask_hint(self.grader.as_ref()),
            Command::SwitchBrain(spec) => self.switch_brain(spec),
            #[cfg(feature = "native")]
            Command::DownloadMaleCns => self.start_download(),
            #[cfg(not(feature = "native"))]
            Command::DownloadMaleCns => self.brain_job_error = Some(NEEDS_DESKTOP.into()),
            Command::UseStockfish(path) => {
                self.stockfish = path;
                self.grader_restarts = 0;
                self.start_grader();
                self.play.regrade(self.grader.as_ref());
            }
            Command::ReadFlies => self.read_flies(),
            Command::Watch(w) => {
                self.play.stop_at = w.plies;
                self.play.opponent_name = Some(format!("{} (watching)", w.opponent));
                self.watch = Some(w);
            }
            Command::LoadPgn(path) => {
                self.play.status = format!("Reading {}…", path.display());
                let (tx, wake) = (self.sender.clone(), self.wake.clone());
                self.aside("load-pgn", move || {
                    let game = read_pgn(&path).map(Box::new).map_err(|e| format!("{e:#}"));
                    let _ = tx.send(Report::Pgn(path, game));
                    wake();
                });
            }
            Command::SavePgn(path) => {
                let (tx, wake, text) = (self.sender.clone(), self.wake.clone(), self.play.pgn());
                self.aside("save-pgn", move || {
                    let said = match flychess_brain::files::write_atomically(&path, text.as_bytes()) {
                        Ok(()) => format!("Saved {}", path.display()),
                        Err(e) => format!("Could not save: {e}"),
                    };
                    let _ = tx.send(Report::Saved(said));
                    wake();
                });
            }
            Command::Fly(action) => self.fly_action(action),
            Command::Show(ply) => self.play.show(ply),
            Command::Say(words) => self.play.say(words),
            Command::Imagination(on) => {
                self.play.imagination = on;
                // An untuned fly's imagination plays at weight 1: said when it is switched on.
                if let (true, Some(note)) = (on, &self.play.imagination_note) {
                    self.play.status = note.clone();
                }
            }
            Command::SecondGlance(on) => self.play.second_glance = on,
            Command::Replay(on) => self.play.replay = on,
            Command::Mute(on) => self.speaker.muted = on,
            Command::Sound(sound) => self.speaker.play(sound),
            Command::UseFly(name) => {
                self.play.fly_name = name;
                let checksum = self.ready().map(|r| r.checksum.clone()).unwrap_or_default();
                let ready = self.ready().cloned();
                self.play.load_fly(&self.data, &checksum, ready.as_ref());
            }
        }
        true
    }

    /// A page's one brain: the one it fetched.
    #[cfg(not(feature = "native"))]
    pub fn brain_choices(&self) -> Vec<(&'static str, BrainSpec)> {
        vec![("FlyWire v783: real wiring within hemispheres (fetched with the page)", BrainSpec)]
    }

    /// The brains the window can run: FlyWire v783 (shipped), the full FlyWire release once
    /// `flychess brain download --release flywire783` has fetched it (its own positions in the
    /// cloud when Codex had them), the stand-in, and MaleCNS once its tables are downloaded.
    #[cfg(feature = "native")]
    pub fn brain_choices(&self) -> Vec<(&'static str, BrainSpec)> {
        let malecns = store::malecns_dir(&self.data);
        let mut choices = vec![
            ("FlyWire v783: real wiring within hemispheres (shipped)", BrainSpec::default()),
            ("Synthetic stand-in: random wiring within populations", BrainSpec::standin()),
        ];
        let flywire_full = store::flywire_full_dir(&self.data);
        if store::flywire_full_present(&flywire_full) {
            choices.insert(
                1,
                (
                    "FlyWire v783: the full release (downloaded)",
                    BrainSpec { tables: Tables::FlyWire { dir: Some(flywire_full) }, control: Default::default() },
                ),
            );
        }
        if store::malecns_present(&malecns) {
            choices
                .push(("MaleCNS v1.0 (downloaded)", BrainSpec { tables: Tables::Release { dir: malecns }, control: Default::default() }));
        }
        choices
    }

    /// Reads the flies, Charles runs and ratings on disk, and which of them the loaded brain can
    /// field, on a thread of its own (every fly file is opened and checked: never on the UI
    /// thread); the answer arrives as a report. Asked again while it runs, it reads once more
    /// when it is done.
    #[cfg(feature = "native")]
    fn read_flies(&mut self) {
        if self.flies_job {
            self.flies_again = true;
            return;
        }
        self.flies_job = true;
        let checksum = self.ready().map(|r| r.checksum.clone());
        let (data, tx, wake) = (self.data.clone(), self.sender.clone(), self.wake.clone());
        let spawned = jobs::runner::spawn("flies", move || {
            let _ = tx.send(Report::Flies(Box::new(flies::read_lists(&data, checksum))));
            wake();
        });
        if let Err(e) = spawned {
            self.flies_job = false;
            self.workers_status = format!("The flies on disk could not be read: {e}");
        }
    }

    /// A page's flies are the ones it fetched, each playable on its brain; nothing is on disk.
    #[cfg(not(feature = "native"))]
    fn read_flies(&mut self) {
        let names: Vec<String> = self.play.fetched.iter().map(|(name, _)| name.clone()).collect();
        (self.flies, self.playable) = (names.clone(), names);
        self.playable_for = self.ready().map(|r| r.checksum.clone());
        self.flies_job = false;
    }

    /// Per frame (`now`: the window's clock in seconds; `board_still`: no piece is sliding, so the
    /// `--watch` opponent may be asked): brain reports, workers' answers and deaths, the game's
    /// own step. Returns what happened and how long until the lab needs another look.
    pub fn poll(&mut self, now: f64, animate: bool, board_still: bool) -> (Vec<Notice>, Option<f64>) {
        self.take_reports();
        self.supervise();
        let (grades, hints) = self.grader_events();
        let (game, mut w) = self.game_and_workers();
        let wake = game.update(now, animate, &mut w, grades, hints);
        self.refresh_playable();
        self.watch_step(board_still);
        let key = (self.play.game_id, self.play.game.plies());
        if self.play.game.is_over() && self.over_told != Some(key) {
            self.over_told = Some(key);
            self.notices.push(Notice::GameOver(key.0));
        }
        (std::mem::take(&mut self.notices), wake)
    }

    fn take_reports(&mut self) {
        while let Ok(r) = self.reports.try_recv() {
            let playing = self.ready().is_some();
            match r {
                Report::Progress { stage, fraction } => {
                    if stage.starts_with("downloading") {
                        self.download = Some((stage, fraction));
                    } else if playing {
                        // Another brain is being built: the current one plays on meanwhile.
                        self.brain_job = Some((stage, fraction));
                    } else {
                        self.brain = BrainState::Loading { stage, fraction };
                    }
                }
                Report::Ready(ready) => {
                    self.download = None;
                    self.brain_job = None;
                    self.brain_job_error = None;
                    let ready: Arc<ReadyBrain> = Arc::from(ready);
                    self.start_thinker(&ready);
                    self.play.load_fly(&self.data, &ready.checksum, Some(&ready));
                    #[cfg(feature = "native")]
                    {
                        self.opponent = None;
                    }
                    self.brain = BrainState::Ready(ready);
                    self.notices.push(Notice::BrainReady);
                }
                #[cfg(feature = "native")]
                Report::Flies(lists) => {
                    self.flies_job = false;
                    let flies::FlyLists { flies, charles, ratings, ratings_report, playable, checksum } = *lists;
                    (self.flies, self.charles, self.ratings, self.ratings_report) = (flies, charles, ratings, ratings_report);
                    if checksum.is_some() {
                        (self.playable, self.playable_for) = (playable, checksum);
                    }
                    if std::mem::take(&mut self.flies_again) {
                        self.read_flies();
                    }
                }
                Report::Pgn(path, Ok(game)) => {
                    let user = self.play.user;
                    self.command(Command::NewGame { game: *game, user, fly: None });
                    self.play.status = format!("Loaded {} ({} moves).", path.display(), self.play.game.plies());
                    self.notices.push(Notice::GameLoaded(user));
                }
                Report::Pgn(path, Err(e)) => self.play.status = format!("Could not load {}: {e}", path.display()),
                Report::Saved(said) => self.play.status = said,
                #[cfg(feature = "native")]
                Report::FlyDone(said) => {
                    self.flies_said = said;
                    self.read_flies();
                }
                Report::Failed(e) => {
                    self.download = None;
                    self.brain_job = None;
                    if playing {
                        // The game and the brain it is played on stay; the failure is said.
                        self.brain_job_error = Some(e.clone());
                        self.notices.push(Notice::BrainFailed(e));
                    } else {
                        self.brain = BrainState::Failed(e);
                    }
                }
            }
        }
    }

    /// A thinker or grader that died is replaced (the fly's move in hand and the grades not yet
    /// given are asked again of the new one); the speaker replaces its own on the next sound.
    fn supervise(&mut self) {
        if let Some(said) = self.thinker.as_ref().and_then(|t| t.engine.try_recv().ok()) {
            tracing::info!("simulator: {said}");
            self.engine = said;
        }
        if self.thinker.as_ref().is_some_and(|t| !t.alive())
            && let Some(ready) = self.ready().cloned()
        {
            tracing::warn!("the fly's thinker stopped; starting a new one");
            self.workers_status = "The fly's thinker stopped unexpectedly; a new one was started.".into();
            self.start_thinker(&ready);
            self.play.forget_requests();
            self.notices.push(Notice::WorkerReplaced("the fly's thinker".into()));
        }
        if self.grader.as_ref().is_some_and(Grader::died) {
            if self.grader_restarts < RESTARTS {
                self.grader_restarts += 1;
                tracing::warn!("the grader stopped; starting a new one ({} of {RESTARTS})", self.grader_restarts);
                self.workers_status = "Stockfish's grader stopped unexpectedly; a new one was started.".into();
                self.start_grader();
                self.play.regrade(self.grader.as_ref());
                self.notices.push(Notice::WorkerReplaced("Stockfish's grader".into()));
            } else {
                self.grader = None;
                self.grader_status = format!("No grades: the grader stopped {RESTARTS} times; choose the engine again in About to retry.");
                self.workers_status = "Stockfish's grader kept stopping; grades are off.".into();
            }
        }
    }

    fn grader_events(&mut self) -> (Vec<crate::grader::PositionGrade>, Vec<(String, String)>) {
        let mut grades = Vec::new();
        let mut hints = Vec::new();
        if let Some(g) = &self.grader {
            while let Ok(e) = g.events.try_recv() {
                match e {
                    GraderEvent::Ready { path } => {
                        self.grader_status = format!("Grades: Stockfish ({}) at depth {}.", path.display(), crate::grader::GRADE_DEPTH)
                    }
                    GraderEvent::Graded(p) => grades.push(p),
                    GraderEvent::Hint { fen, best } => hints.push((fen, best)),
                    GraderEvent::Unavailable(msg) => self.grader_status = format!("No grades: {msg}"),
                }
            }
        }
        (grades, hints)
    }

    /// A page's thinker has no GPU engine: the CPU engine thinks, in the page's one thread.
    #[cfg(not(feature = "native"))]
    fn simulator_device(&mut self) -> Option<crate::thinker::GpuDevice> {
        self.engine = "CPU engine, in the page's one thread".into();
        None
    }

    /// The window's own device for the GPU engine when that is a real GPU (or when
    /// FLYCHESS_ENGINE=gpu asks for it); None: the CPU engine (software adapters, no wgpu,
    /// FLYCHESS_ENGINE=cpu). The thinker makes the engine on its own thread and says whether it
    /// started (a device too small for the brain: the CPU engine); said in the log and in About.
    #[cfg(feature = "native")]
    fn simulator_device(&mut self) -> Option<crate::thinker::GpuDevice> {
        let forced = std::env::var("FLYCHESS_ENGINE").ok();
        let cpu_threads = format!("CPU engine ({} threads)", rayon::current_num_threads());
        let Some(rs) = &self.gpu else {
            self.engine = format!("{cpu_threads}: no wgpu device");
            tracing::info!("simulator: {}", self.engine);
            return None;
        };
        let software = rs.adapter.get_info().device_type == wgpu::DeviceType::Cpu;
        let want = match forced.as_deref() {
            Some("gpu") => true,
            Some("cpu") => false,
            _ => !software,
        };
        if !want {
            self.engine = if software {
                format!("{cpu_threads}: faster than the software GPU here")
            } else {
                format!("{cpu_threads}: asked by FLYCHESS_ENGINE")
            };
            tracing::info!("simulator: {}", self.engine);
            return None;
        }
        self.engine = "GPU engine: starting on the window's device…".into();
        Some((rs.device.clone(), rs.queue.clone()))
    }

    /// A page has its one brain: another needs the desktop program.
    #[cfg(not(feature = "native"))]
    fn switch_brain(&mut self, _spec: BrainSpec) {
        self.brain_job_error = Some(NEEDS_DESKTOP.into());
    }

    /// Loads (or builds) `spec` in the background. The current brain and its game stay until the
    /// new one is ready; if it fails, they stay and the failure is said.
    #[cfg(feature = "native")]
    fn switch_brain(&mut self, spec: BrainSpec) {
        if self.ready().is_some() {
            self.brain_job = Some(("starting".into(), 0.0));
            self.brain_job_error = None;
        } else {
            self.brain = BrainState::Loading { stage: "starting".into(), fraction: 0.0 };
        }
        start_brain_job(spec, self.data.clone(), self.sender.clone(), self.wake.clone());
    }

    fn start_thinker(&mut self, ready: &Arc<ReadyBrain>) {
        let wake = self.wake.clone();
        let gpu = self.simulator_device();
        self.thinker = Some(Thinker::start(ready.brain.clone(), gpu, move || wake()));
    }

    /// A page has no Stockfish process; its grades are said to be missing (until a Web Worker
    /// grades there).
    #[cfg(not(feature = "native"))]
    fn start_grader(&mut self) {
        self.grader = None;
        self.grader_status = format!("No grades: {NO_PAGE_GRADES}");
    }

    #[cfg(feature = "native")]
    fn start_grader(&mut self) {
        let setting = Some(PathBuf::from(self.stockfish.trim())).filter(|p| !p.as_os_str().is_empty());
        let wake = self.wake.clone();
        self.grader = None;
        self.grader_status = "Starting Stockfish…".into();
        self.grader = Some(Grader::start(setting, move || wake()));
    }

    #[cfg(feature = "native")]
    fn start_download(&mut self) {
        let data = self.data.clone();
        let dir = store::malecns_dir(&data);
        let (tx, wake) = (self.sender.clone(), self.wake.clone());
        self.download = Some(("starting".into(), 0.0));
        let downloading = jobs::runner::spawn("download", move || {
            let progress = |file: &str, done: u64, total: Option<u64>| {
                let fraction = total.map(|t| done as f64 / t.max(1) as f64).unwrap_or(0.0);
                let _ = tx.send(Report::Progress { stage: format!("downloading {file}"), fraction });
                wake();
            };
            if let Err(e) = store::download_malecns(&dir, flychess_brain::connectome::release::BASE_URL, 8, &progress) {
                let _ = tx.send(Report::Failed(format!("{e}")));
                wake();
                return;
            }
            start_brain_job(BrainSpec { tables: Tables::Release { dir }, control: Default::default() }, data, tx, wake);
        });
        if let Err(e) = downloading {
            self.download = None;
            self.workers_status = e;
        }
    }

    /// The players the loaded brain can field are listed again when the brain changes.
    fn refresh_playable(&mut self) {
        let Some(checksum) = self.ready().map(|r| r.checksum.clone()) else { return };
        if self.playable_for.as_ref() != Some(&checksum) && !self.flies_job {
            self.read_flies();
        }
    }

    /// A page plays no `--watch` opponent: said once.
    #[cfg(not(feature = "native"))]
    fn watch_step(&mut self, _board_still: bool) {
        if self.watch.is_some() && self.opponent_failed.is_none() {
            self.opponent_failed = Some(format!("--watch: {NEEDS_DESKTOP}"));
        }
    }

    /// `--watch`: starts the opponent once the brain is ready, asks it for a move whenever it is
    /// its turn (the fly's think and replay finished, the board still), and plays its answer. An
    /// opponent that cannot start is said once (`opponent_failed`) and never asked again.
    #[cfg(feature = "native")]
    fn watch_step(&mut self, board_still: bool) {
        let (Some(watch), Some(ready)) = (self.watch.clone(), self.ready().cloned()) else { return };
        if self.opponent_failed.is_some() {
            return;
        }
        if self.opponent.is_none() {
            let wake = self.wake.clone();
            match crate::opponent::Opponent::start(&watch.opponent, &self.data, ready, move || wake()) {
                Ok(o) => self.opponent = Some(o),
                Err(e) => {
                    let e = format!("--watch {}: {e}", watch.opponent);
                    tracing::error!("{e}");
                    self.play.status = e.clone();
                    self.opponent_failed = Some(e);
                    return;
                }
            }
        }
        let plies = self.play.game.plies();
        if self.opponent_asked.is_some_and(|(_, p)| p != plies) {
            // Taken back or a new game: that answer is no longer wanted.
            self.opponent_asked = None;
        }
        let (name, answers): (String, Vec<_>) = match &self.opponent {
            Some(o) => (o.name.clone(), o.answers.try_iter().collect()),
            None => (String::new(), Vec::new()),
        };
        for (id, answer) in answers {
            if self.opponent_asked != Some((id, plies)) {
                continue;
            }
            self.opponent_asked = None;
            match answer {
                Ok(m) => {
                    self.command(Command::Play(m));
                }
                Err(e) => self.play.status = format!("{name} could not move: {e}"),
            }
        }
        let game = &self.play;
        let limit = watch.plies.is_some_and(|n| game.game.plies() >= n);
        let opponents_turn = !game.game.is_over() && game.game.turn() == game.user && !limit;
        if opponents_turn
            && self.opponent_asked.is_none()
            && game.thinking.is_none()
            && !game.replaying()
            && board_still
            && let Some(o) = &self.opponent
        {
            let id = game.game_id * 1_000_000 + game.game.plies() as u64;
            self.opponent_asked = Some((id, game.game.plies()));
            o.ask(id, game.game.current().clone(), game.game.keys().to_vec());
        }
    }

    /// The `--watch` game is done: over, at its plies, with no fly, or with an opponent that
    /// could not play.
    pub fn watch_done(&self) -> bool {
        match &self.watch {
            Some(w) => {
                self.play.game.is_over()
                    || w.plies.is_some_and(|n| self.play.game.plies() >= n)
                    || (self.play.fly.is_none() && !self.play.preparing_fly())
                    || self.opponent_failed.is_some()
            }
            None => true,
        }
    }
}

/// Reads the brain a page fetched (`store::ready_brain_from_bytes`: never built, never
/// calibrated) aside, reporting to `tx`.
#[cfg(not(feature = "native"))]
fn start_page_brain_job(source: Fetched, tx: Sender<Report>, wake: Wake) {
    brain_job(tx, wake, move |tx, wake| {
        let _ = tx.send(Report::Progress { stage: "reading the brain".into(), fraction: 0.5 });
        wake();
        match store::ready_brain_from_bytes(&source.brain, &source.homeostasis) {
            Ok((loaded, brain)) => Report::Ready(Box::new(ReadyBrain {
                spec: BrainSpec,
                info: loaded.connectome.info(),
                connectome: Arc::new(loaded.connectome),
                brain: Arc::new(brain),
                checksum: loaded.checksum,
            })),
            Err(e) => Report::Failed(e.to_string()),
        }
    });
}

/// Loads (or builds and calibrates) `spec` on a worker thread, reporting to `tx`.
#[cfg(feature = "native")]
fn start_brain_job(spec: BrainSpec, data: PathBuf, tx: Sender<Report>, wake: Wake) {
    brain_job(tx, wake, move |tx, wake| {
        let progress = std::sync::Mutex::new({
            let tx = tx.clone();
            let wake = wake.clone();
            move |stage: &str, fraction: f64| {
                let _ = tx.send(Report::Progress { stage: stage.to_string(), fraction });
                wake();
            }
        });
        match store::ready_brain(&spec, &data, Default::default(), &|s, f| {
            if let Ok(p) = progress.lock() {
                p(s, f)
            }
        }) {
            Ok((loaded, brain)) => Report::Ready(Box::new(ReadyBrain {
                spec: spec.clone(),
                info: loaded.connectome.info(),
                connectome: Arc::new(loaded.connectome),
                brain: Arc::new(brain),
                checksum: loaded.checksum,
                dopamine_models: Default::default(),
            })),
            Err(e) => Report::Failed(e.to_string()),
        }
    });
}

/// Runs a brain load aside (`load` is handed the report channel and the wake for its progress):
/// its report, ready or failed, is sent and the window woken; a job that cannot be started is
/// reported as a failure.
fn brain_job(tx: Sender<Report>, wake: Wake, load: impl FnOnce(&Sender<Report>, &Wake) -> Report + Send + 'static) {
    let (failed, failed_wake) = (tx.clone(), wake.clone());
    let started = jobs::runner::spawn("brain", move || {
        let report = load(&tx, &wake);
        let _ = tx.send(report);
        wake();
    });
    if let Err(e) = started {
        let _ = failed.send(Report::Failed(e));
        failed_wake();
    }
}

/// Reads one game from a PGN file of at most `PGN_LIMIT` bytes (a larger file is refused before
/// it is read, so a wrong file never fills the memory).
/// Every error names the file.
pub fn read_pgn(path: &Path) -> anyhow::Result<Game> {
    use anyhow::Context;
    use std::io::Read;
    let named = || path.display().to_string();
    let file = std::fs::File::open(path).with_context(named)?;
    let mut text = String::new();
    file.take(PGN_LIMIT + 1).read_to_string(&mut text).with_context(|| format!("{}: not text", path.display()))?;
    if text.len() as u64 > PGN_LIMIT {
        anyhow::bail!("{}: larger than {} kB: not one game's PGN", path.display(), PGN_LIMIT / 1024);
    }
    Game::from_pgn(&text).with_context(named)
}

/// How the New game picker names a player: Charles as a network that never was a fly, an aided
/// fly as the fly's brain with a search's help (never its own play), a fly by its name; each with
/// its rating (`elo`).
pub fn opponent_label(name: &str, elo: &str) -> String {
    if flychess_arena::network::run_name(name).is_some() {
        format!("Charles — a network that never was a fly ({name}, {elo})")
    } else if let Some((base, suffix)) = name.rsplit_once('+')
        && let Some(Ok(aid)) = flychess_arena::search::Aid::parse(suffix)
    {
        format!("{base} + {} — the fly's brain with a search's help, not its own play ({elo})", aid.label())
    } else {
        format!("{name} ({elo})")
    }
}

/// The finished Charles runs there are, by the names they play under (`charles`, `charles:RUN`).
#[cfg(feature = "native")]
pub fn charles_players(data: &Path) -> Vec<String> {
    flychess_charles::player::list(data).iter().map(|run| flychess_arena::network::player_name(run)).collect()
}
