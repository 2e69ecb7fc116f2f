//! The player a UCI session fields: the brain loaded once with the players it offers (`Ready`),
//! the player in force seated for its name (`Seat`: the seated player, as every front door seats
//! it, and a fly with imagination's plain self), its engine and thread pool, and its first think made at `isready`,
//! which measures what a think costs here (`Costs`).

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::{Result, anyhow};
use shakmaty::{Chess, Position};

use flychess_arena::players::{Entrant, Lookup, Seated};
use flychess_arena::search::{Aid, Budget, LEAF_BATCH};
use flychess_brain::brain::Brain;
use flychess_brain::brain::simulator::{EngineChoice, Simulator};
use flychess_brain::chess::planes;
use flychess_brain::connectome::brain_file::Loaded;
use flychess_brain::store::BrainSpec;
use flychess_fly::readout::think_features_on;
use flychess_lab::players::Hall;

use super::clock::{Costs, WIDE};
use super::{Session, engine_name, with_search};

/// The brain once loaded (as players are seated on it), with the players it can field.
pub(super) struct Ready {
    pub(super) hall: Hall,
    /// Every player the `Player` option offers, the default first.
    pub(super) players: Vec<String>,
}

impl Ready {
    /// What the window's New game offers (the brain's flies and dopamine flies, every finished
    /// Charles run, each trained fly with `+judge` and `+search64`), and besides: each trained
    /// fly with `+imagination`, with `+habituation` and `+glances` where they are tuned, with
    /// `+sf4` where Stockfish is installed, and the ladder's `random`, `greedy` and `stockfish`.
    pub(super) fn of(spec: &BrainSpec, data: &std::path::Path, loaded: Arc<Loaded>, brain: Arc<Brain>) -> Ready {
        let mut players = flychess_lab::lab::flies::read_lists(data, Some(loaded.checksum.clone())).playable;
        let stockfish = flychess_fly::stockfish::find_stockfish(None).is_ok();
        let trained: Vec<String> = players.iter().filter(|p| players.contains(&format!("{p}+search64"))).cloned().collect();
        for name in trained {
            players.push(format!("{name}+imagination"));
            if let Ok(fly) = flychess_fly::fly::find(&name, data).and_then(|p| flychess_fly::fly::Fly::load(&p)) {
                if flychess_arena::tuned::habituation(data, &fly).is_some() {
                    players.push(format!("{name}+habituation"));
                }
                if flychess_arena::tuned::glances(data, &fly).is_some() {
                    players.push(format!("{name}+glances"));
                }
            }
            if stockfish {
                players.push(format!("{name}+sf4"));
            }
        }
        players.extend(["random", "greedy"].map(String::from));
        if stockfish {
            players.push("stockfish".into());
        }
        Ready { hall: Hall::new(spec, data, loaded, brain), players }
    }
}

/// The player in force, made ready for its name (rebuilt when the name or imagination changes).
pub(super) struct Seat {
    pub(super) name: String,
    pub(super) imagination: f32,
    /// The player, seated as every front door seats it (on the CPU engine: each think puts the
    /// session's engine in, `Seated::on`).
    pub(super) seated: Seated,
    /// A fly with imagination: the same fly without it, what plays a move whose budget cannot
    /// hold the look-ahead.
    pub(super) plain: Option<Seated>,
}

impl Seat {
    /// Whether the player is Philidor's search (it stops at its budget).
    pub(super) fn searches(&self) -> bool {
        matches!(self.seated.entrant, Entrant::Aided { aid: Aid::Search { .. }, .. })
    }
}

impl Session {
    /// The `Player` option's value in force (None set: the brain's own fly).
    pub(super) fn player_option(&mut self) -> Result<String> {
        if let Some(p) = &self.player {
            return Ok(p.clone());
        }
        let checksum = self.ready()?.hall.loaded.checksum.clone();
        flychess_fly::fly::trained_for(&checksum, &self.start.data)
            .map(|(name, _)| name)
            .ok_or_else(|| anyhow!("this brain has no trained fly yet: train one with `flychess train` or name a player"))
    }

    /// The player's name in force: `Player`, with `Search` when it is set.
    pub(super) fn player_name(&mut self) -> Result<String> {
        Ok(with_search(&self.player_option()?, self.search))
    }

    /// The player in force, made ready (its files read, a dopamine fly's model made).
    pub(super) fn seat(&mut self) -> Result<&Seat> {
        let name = self.player_name()?;
        let stale = self.seat.as_ref().is_none_or(|s| s.name != name || s.imagination != self.imagination);
        if stale {
            self.seat = None;
            let imagination = self.imagination;
            let data = self.start.data.clone();
            let hall = &self.ready()?.hall;
            // The Imagination option: a readout fly playing its favourite looks one move ahead.
            let at = Lookup {
                imagination: (imagination > 0.0).then_some(imagination),
                ..Lookup::in_folder(&data, &flychess_charles::player::Runs).of_brain(&hall.loaded.checksum, Some(hall.venue()))
            };
            let seated =
                crate::terminal::with_lookup_bar(|progress| flychess_arena::players::seat(&name, &Lookup { progress, ..at }, None))?;
            let imagination_ignored = imagination > 0.0 && !matches!(seated.entrant, Entrant::Fly { imagination: Some(_), .. });
            // A fly with imagination plays as the plain fly when a move's budget cannot hold
            // the look-ahead.
            let plain = seated.without_imagination();
            self.seat = Some(Seat { name, imagination, seated, plain });
            self.imagination_ignored = imagination_ignored;
        }
        Ok(self.seat.as_ref().expect("made above"))
    }

    /// Seats the player, starts its engine and makes its first think (`warm_up`), saying on
    /// `output` what went wrong or what stands in (a GPU that could not start).
    pub(super) fn make_ready(&mut self, output: &mut dyn Write) -> Result<()> {
        let made = self.seat().map(|_| ()).and_then(|_| self.prepare().map(|_| ())).and_then(|_| self.warm_up());
        for notice in std::mem::take(&mut self.notices) {
            self.say(output, &notice)?;
        }
        if let Err(e) = made {
            self.say(output, &format!("{e:#}"))?;
        }
        Ok(())
    }

    /// Makes the seated player's engine and thread pool ready (at `isready`, so the first `go`
    /// spends its budget thinking); returns whether the player thinks with the brain's engine.
    pub(super) fn prepare(&mut self) -> Result<bool> {
        let uses_brain = self
            .seat
            .as_ref()
            .is_some_and(|s| s.seated.kit.fly(&s.seated.entrant).is_some() || matches!(s.seated.entrant, Entrant::Aided { .. }));
        if uses_brain && self.simulator.as_ref().is_none_or(|(c, _)| *c != self.engine) {
            let brain = self.ready()?.hall.brain.clone();
            let sim = match Simulator::choose(self.engine, &brain) {
                Ok(sim) => sim,
                Err(e) => {
                    // Said in an `info string` too: a GUI shows those and hides stderr.
                    let words = format!("the {} engine could not start ({e}); thinking on the CPU", engine_name(self.engine));
                    eprintln!("uci: {words}");
                    self.notices.push(words);
                    Simulator::choose(EngineChoice::Cpu, &brain)?
                }
            };
            self.simulator = Some((self.engine, Arc::new(sim)));
            // Another engine thinks at another speed.
            self.costs = None;
            self.warmed = None;
        }
        if self.pool.as_ref().is_none_or(|(n, _)| *n != self.threads) {
            self.pool = Some((self.threads, rayon::ThreadPoolBuilder::new().num_threads(self.threads).build()?));
        }
        Ok(uses_brain)
    }

    /// One think of the start position by the seated player (a search stopped at once: its root
    /// alone), so that what a first think builds on the way (the rows its readout needs, the
    /// engine's buffers) is built before `readyok`, not on the first `go`'s clock.
    pub(super) fn warm_up(&mut self) -> Result<()> {
        if self.warmed.as_deref() == Some(self.seat.as_ref().map_or("", |s| s.name.as_str())) {
            return Ok(());
        }
        let (Some(seat), Some(ready), Some(pool)) = (self.seat.as_ref(), self.ready.as_ref(), self.pool.as_ref()) else { return Ok(()) };
        let seated = seat.seated.on(self.simulator.as_ref().map(|(_, s)| s.clone()));
        let brain = ready.hall.brain.clone();
        let costs = pool.1.install(|| -> Result<Option<Costs>> {
            let mut player = seated.player(20_000, 0, &None)?;
            if !seated.entrant.needs_stockfish() && seated.kit.brain().is_some() {
                player.set_budget(Budget { stop: Some(Arc::new(AtomicBool::new(true))), ..Default::default() });
                player.consider(&Chess::default(), &[])?;
            }
            // What a think of 1, a search's batch and a look-ahead's boards costs, on the engine
            // and threads this player thinks with: the budget of each move is weighed against it.
            let Some(fly) = seated.kit.fly(&seated.entrant) else { return Ok(None) };
            let start = Chess::default();
            let boards: Vec<_> = std::iter::once(start.clone())
                .chain(start.legal_moves().into_iter().map(|m| {
                    let mut after = start.clone();
                    after.play_unchecked(m);
                    after
                }))
                .map(|b| planes(&b))
                .cycle()
                .take(WIDE)
                .collect();
            let time = |n: usize| {
                let t = Instant::now();
                think_features_on(seated.kit.engine(), &brain, &boards[..n], seated.kit.descending(), &fly.readout.read_steps);
                t.elapsed().as_secs_f64() * 1000.0
            };
            // The think above paid for what a first think builds (a few hundred milliseconds):
            // these are timed warm. Only what the player can spend is measured: a batch for a
            // search, the widest for a look-ahead (in between, on the line from one board to the
            // widest; else as so many single boards, an overestimate).
            let one = time(1);
            let wide = seat.plain.is_some().then(|| time(WIDE));
            let batch = match (seat.searches(), wide) {
                (true, _) => time(LEAF_BATCH),
                (false, Some(w)) => one + (w - one) * (LEAF_BATCH - 1) as f64 / (WIDE - 1) as f64,
                (false, None) => one * LEAF_BATCH as f64,
            };
            let wide = wide.unwrap_or(batch * (WIDE / LEAF_BATCH) as f64);
            Ok(Some(Costs { one, batch, wide, load: 1.0 }))
        })?;
        self.costs = costs;
        self.warmed = Some(seat.name.clone());
        Ok(())
    }
}
