//! `flychess rate`: the rating ladder (`flychess_arena::ladder`) for every fly of the brain (with
//! imagination, habituation and two glances where tuned, and Philidor's aids with `--aided`),
//! every dopamine fly, every Charles and the user's UCI engines, against the fixed rungs; resumable
//! and shardable. The harness check and the clone test come with the Bradley–Terry ratings, all
//! written to DATA/ratings.json.

use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

use anyhow::{Result, anyhow};
use clap::Args;

use flychess_arena::ladder::{self, GameRow, LadderOptions, Rating};
use flychess_arena::players::{Entrant, Kit, Lookup, Seating};
use flychess_arena::search::{Aid, DEFAULT_SIMULATIONS};
use flychess_brain::brain::Brain;
use flychess_brain::connectome::brain_file::Loaded;
use flychess_fly::fly::{self, Fly};
use flychess_fly::stockfish::find_stockfish;
use flychess_lab::players::{charles_runs, flies_of_brain};
use flychess_lab::profiling::games_file;

use super::{engine, game_bar, hall, on_game};
use crate::cli::cluster::ShardArgs;
use crate::cli::options::{EngineArgs, UciEnginesArgs, WhichBrain};

// The arguments of `flychess rate` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct RateArgs {
    /// Games per pairing (each opening twice, colours swapped).
    #[arg(long, default_value_t = 20)]
    pub games: usize,
    /// 2 games per pairing, a 200-ply cap, flies without imagination only: minutes, not hours.
    #[arg(long)]
    pub quick: bool,
    /// Philidor's aided players too, labelled as such: each trained fly + judge and + search
    /// 64, and Charles + search 64 (the brain's fly valuing its boards). Hours on a CPU.
    #[arg(long)]
    pub aided: bool,
    /// Seed of the openings and of the simple players' choices.
    #[arg(long, default_value_t = 1)]
    pub game_seed: u64,
    /// Only these players against the rungs (repeat; any name `flychess play` takes, e.g.
    /// flywire, flywire+imagination, flywire+habituation): the others' games already played stay
    /// in the ratings. Default: every fly of the brain, with imagination, and with habituation
    /// and two glances where they are tuned, every dopamine fly and Charles.
    #[arg(long, value_name = "NAME")]
    pub players: Vec<String>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub shards: ShardArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub uci: UciEnginesArgs,
    #[command(flatten)]
    pub which: WhichBrain,
}

/// The anchor's rating: Stockfish's lowest UCI_Elo, as the engine states it.
fn anchor_elo(stockfish: &Path) -> Result<f64> {
    use flychess_fly::stockfish::{Engine, EngineOptions};
    Ok(Engine::start(stockfish, &EngineOptions::default())?.min_elo.unwrap_or(1350) as f64)
}

/// Each fly the kit seats, with its entrants.
type KitFlies = Vec<(Fly, Vec<Entrant>)>;

/// `flychess rate`: the ladder (sim::ladder) for every fly of the brain, resumable; the harness
/// check, the clone test with independent seeds, per-pairing W-D-L, how each player's games
/// ended, and Bradley–Terry ratings with bootstrap intervals, written to DATA/ratings.json.
pub fn run(args: &RateArgs, data: &Path) -> Result<()> {
    let RateArgs { games, quick, game_seed: seed, json, shards, .. } = *args;
    if games == 0 && !quick {
        return Err(anyhow!("rate --games 0: nothing to play (games come in pairs per pairing, e.g. --games 20)"));
    }
    let stockfish = find_stockfish(None).map_err(|e| anyhow!("the ladder's rungs are Stockfish: {e}"))?;
    let anchor_elo = anchor_elo(&stockfish)?;
    let hall = hall(&args.which, data)?;
    let (loaded, brain) = (&*hall.loaded, &hall.brain);
    let flies = flies_of_brain(data, &loaded.checksum);
    let (dopamine, bio) = hall.dopamine(data)?;
    if flies.is_empty() {
        return Err(anyhow!("no fly of this brain to rate ({}); train one with `flychess train`", loaded.connectome.provenance.label()));
    }
    let options = if quick {
        LadderOptions { games: 2, max_plies: 200, seed, ..Default::default() }
    } else {
        LadderOptions { games: games.max(2), seed, ..Default::default() }
    };
    let (mut entrants, kit_flies) = fly_entrants(args, data, &flies, brain, loaded)?;
    // The flies' thinks go through the chosen engine (the GPU one batches the games' moves too).
    let sim = engine(args.engine.choice(), brain)?;
    // Dopamine flies play as they are (one look per legal move, the highest vote).
    entrants.extend(dopamine.iter().map(Entrant::dopamine));
    // Every finished Charles run, shipped or the user's: the network that never was a fly.
    let charles = charles_runs(data);
    entrants.extend(charles.iter().map(|c| Entrant::charles(c.as_ref())));
    // Charles + search 64, its boards valued by the brain's trained fly.
    if args.aided
        && let Some(value) = flies.iter().find(|f| f.meta.kind == "trained")
    {
        for c in &charles {
            entrants.push(Entrant::aided(Entrant::charles(c.as_ref()), Aid::Search { simulations: DEFAULT_SIMULATIONS }, Some(value))?);
        }
    }
    // The user's own UCI engines, rated against the rungs like any player.
    entrants.extend(args.uci.entrants()?);
    // Every current player (with --players too): the games are named as the players are called
    // now (a renamed shipped fly's games carry its new name) and the report marks which rows
    // are of a current player and which of an earlier version.
    let mut every = entrants.clone();
    let at = Lookup::in_folder(data, &flychess_charles::player::Runs).of_brain(&loaded.checksum, Some(hall.venue()));
    let seating = Seating::new(&at).with_flies(&kit_flies).with_charles(&charles);
    let mut seating = match bio {
        Some(bio) => seating.with_dopamine(bio, &dopamine)?,
        None => seating,
    };
    // Only the players asked for (seated as every front door seats a name) against the rungs.
    if !args.players.is_empty() {
        entrants.retain(Entrant::is_rung);
        for name in &args.players {
            entrants.push(seating.seat(name, &at)?);
        }
    }
    let kit = seating.on(Some(sim)).kit();
    let file = games_file(data, "", &loaded.checksum, &options);
    let bar = game_bar();
    let started = Instant::now();
    let pairings = ladder::pairings(&entrants);
    if let Some(shard) = shards.shard {
        let (part, rows) = ladder::play_shard(&entrants, &pairings, Some(&kit), &options, &file, shard, &on_game(&bar))?;
        bar.finish_and_clear();
        println!("shard {shard}: {} games in {} (join the parts with --merge-shards {})", rows.len(), part.display(), shard.count);
        return Ok(());
    }
    if let Some(count) = shards.merge_shards {
        let added = ladder::merge_shards(&entrants, &pairings, &options, &file, count as usize)?;
        eprintln!("{added} games of {count} shards added to {}", file.display());
    }
    let mut rows = ladder::run(&entrants, Some(&kit), &options, &file, &on_game(&bar))?;
    bar.finish_and_clear();
    every.extend(entrants.iter().cloned());
    ladder::name_as_now(&mut rows, &every);
    let ladder = Ladder { rows, options, every, entrants, anchor: Entrant::Stockfish { random_share: 0.0 }.id(), anchor_elo };
    let checks = Checks::of(&flies[0], &kit, &ladder.options, data, &loaded.checksum)?;
    let mut ratings = ladder::ratings(&ladder.rows, &ladder.anchor, anchor_elo, 300, seed);
    ratings.sort_by(|a, b| b.elo.total_cmp(&a.elo));
    let report = ladder.report(loaded, &stockfish, &checks, &ratings, (&file, started.elapsed().as_secs_f64()));
    let text = serde_json::to_string_pretty(&report)?;
    flychess_brain::files::write_atomically(&data.join("ratings.json"), text.as_bytes())?;
    if json {
        println!("{text}");
        return Ok(());
    }
    ladder.print(data, &checks, &ratings);
    Ok(())
}

/// The rungs and every fly's entrants: its plain self; for a trained fly (not --quick) its
/// imagination and, where tuned, habituation and two glances; with --aided its judge and search;
/// and the first fly's sampling copy for the clone test (in the kit only).
fn fly_entrants(args: &RateArgs, data: &Path, flies: &[Fly], brain: &Brain, loaded: &Loaded) -> Result<(Vec<Entrant>, KitFlies)> {
    let mut entrants = ladder::rungs();
    let mut kit_flies = Vec::new();
    for f in flies {
        let mut mine = vec![Entrant::fly(f, None)];
        // Imagination for the trained flies (a newborn's values are noise: only its plain self plays).
        if !args.quick && f.meta.kind == "trained" {
            mine.push(Entrant::fly(f, Some(flychess_arena::tuned::imagination(data, f))));
            // Habituation and two glances where they are tuned (issue 56).
            if let Some(h) = flychess_arena::tuned::habituation(data, f) {
                mine.push(Entrant::fly_with(f, None, Some(h)));
            }
            if let Some(g) = flychess_arena::tuned::glances(data, f) {
                mine.push(Entrant::glancing(f, g));
            }
        }
        // Philidor's aids, asked for: the fly + judge and + search 64, named as such.
        if args.aided && f.meta.kind == "trained" {
            let weight = flychess::terminal::judge_weight_with_bar(data, f, brain, &loaded.connectome.groups.descending)?;
            for aid in [Aid::Judge { weight }, Aid::Search { simulations: DEFAULT_SIMULATIONS }] {
                mine.push(Entrant::aided(Entrant::fly(f, None), aid, None)?);
            }
        }
        entrants.extend(mine.iter().cloned());
        // The first fly's sampling copy plays the clone test.
        mine.push(Entrant::sampling(f));
        kit_flies.push((f.clone(), mine));
    }
    Ok((entrants, kit_flies))
}

/// The ladder's checks on the harness, with the first fly: against itself (deterministic, dice by
/// colour: exactly 50 %), and two sampling copies with independent dice (50 % within the interval).
struct Checks {
    fly: String,
    harness_share: f64,
    harness_games: Vec<GameRow>,
    sampling: Entrant,
    clone: flychess_arena::duel::Duel,
}

impl Checks {
    fn of(first: &Fly, kit: &Kit, options: &LadderOptions, data: &Path, checksum: &str) -> Result<Checks> {
        // The harness check: the first fly (deterministic) against itself, dice by colour.
        let (harness_share, harness_games) =
            ladder::harness_check(&Entrant::fly(first, None), Some(kit), options, options.games.div_ceil(2))?;
        // The clone test: two sampling copies with independent dice, at least 20 pairs.
        let clone_options = LadderOptions { games: options.games.max(40), ..options.clone() };
        let sampling = Entrant::sampling(first);
        let clone = ladder::clone_test(&sampling, Some(kit), &clone_options, &games_file(data, "clone-", checksum, &clone_options))?;
        Ok(Checks { fly: first.meta.name.clone(), harness_share, harness_games, sampling, clone })
    }
}

/// The ladder's games, as played now, and who plays on it: every current player, those of this
/// run, and the anchor with its rating.
struct Ladder {
    rows: Vec<GameRow>,
    options: LadderOptions,
    every: Vec<Entrant>,
    entrants: Vec<Entrant>,
    anchor: String,
    anchor_elo: f64,
}

impl Ladder {
    /// DATA/ratings.json: the options, the checks, each pairing's result, how games ended, and
    /// the ratings, each marked current or an earlier version and aided or not.
    fn report(
        &self,
        loaded: &Loaded,
        stockfish: &Path,
        checks: &Checks,
        ratings: &[Rating],
        (file, seconds): (&Path, f64),
    ) -> serde_json::Value {
        let (rows, options, anchor, anchor_elo) = (&self.rows, &self.options, &self.anchor, self.anchor_elo);
        let current: HashSet<String> = self.every.iter().map(Entrant::id).collect();
        let aided_ids: HashSet<String> = self.entrants.iter().filter(|e| matches!(e, Entrant::Aided { .. })).map(Entrant::id).collect();
        let by_player = ladder::endings_by_player(rows);
        let rated: Vec<serde_json::Value> = ratings
            .iter()
            .map(|r| {
                let mut v = serde_json::to_value(r).expect("plain struct");
                v["current"] = serde_json::json!(current.contains(&r.id));
                // A player with Philidor's aids: its strength is the search's, not the fly's own.
                v["aided"] = serde_json::json!(aided_ids.contains(&r.id));
                v["endings"] = serde_json::json!(by_player.get(&r.id));
                v
            })
            .collect();
        let Checks { harness_share, harness_games, clone, .. } = checks;
        serde_json::json!({
            "brain": loaded.connectome.provenance.label(),
            "brain_checksum": loaded.checksum,
            "date": fly::today(),
            "anchor": anchor,
            "anchor_elo": anchor_elo,
            "stockfish": stockfish.display().to_string(),
            "options": options,
            "games": rows.len(),
            "games_file": file.display().to_string(),
            "seconds": seconds,
            "harness_check": {
                "what": "the first fly against itself, dice by colour: exactly 50 % unless the harness favours a colour or is not deterministic",
                "fly": checks.fly, "games": harness_games.len(), "score": harness_share, "passed": *harness_share == 0.5,
            },
            "clone": {
                "what": "two copies of the first fly sampling their moves from the policy with independent seeds, paired openings: the score must hold 50 % in its 95 % interval",
                "fly": checks.sampling.name(), "games": 2 * clone.pairs, "pairs": clone.pairs, "pentanomial": clone.pentanomial,
                "score": clone.score, "score_interval": [clone.score_low, clone.score_high],
                "elo": clone.elo, "elo_interval": [clone.elo_low, clone.elo_high], "within": clone.holds_even(),
            },
            "intervals_caveat": (options.games < 10).then_some("with fewer than 10 games a pairing the bootstrap intervals are too narrow to trust (a sweep resamples to itself): run the full ladder"),
            "pairings": ladder::pairing_results(rows),
            "endings": ladder::endings(rows),
            "ratings": rated,
        })
    }

    /// The ladder as text: the games, the checks, each pairing, and the ratings with how each
    /// player's games ended.
    fn print(&self, data: &Path, checks: &Checks, ratings: &[Rating]) {
        let (rows, options, anchor, anchor_elo) = (&self.rows, &self.options, &self.anchor, self.anchor_elo);
        let Checks { fly: first, harness_share, harness_games, clone, .. } = checks;
        let harness_share = *harness_share;
        let current: HashSet<String> = self.every.iter().map(Entrant::id).collect();
        let by_player = ladder::endings_by_player(rows);
        println!(
            "{} games ({} per pairing), anchor {anchor} = {anchor_elo:.0}; saved {}",
            rows.len(),
            options.games,
            data.join("ratings.json").display()
        );
        println!(
            "harness check: {} against itself (dice by colour) scored {:.1}% over {} games{}",
            first,
            100.0 * harness_share,
            harness_games.len(),
            if harness_share == 0.5 { "" } else { " — NOT 50%: the harness is broken, do not trust these ratings" }
        );
        println!(
            "clone test: two sampling copies of {} with independent seeds scored {:.1}% [{:.1}, {:.1}] over {} pairs{}",
            first,
            100.0 * clone.score,
            100.0 * clone.score_low,
            100.0 * clone.score_high,
            clone.pairs,
            if clone.holds_even() { " (holds 50%)" } else { " — 50% is OUTSIDE the interval: do not trust these ratings" }
        );
        println!("pairings (first player's wins-draws-losses):");
        for p in ladder::pairing_results(rows) {
            println!("  {:32} – {:32} {:>2}-{:>2}-{:>2}  {:5.1}%", p.first, p.second, p.wins, p.draws, p.losses, 100.0 * p.score);
        }
        println!(
            "ratings (95% intervals{}):",
            if options.games < 10 { "; with so few games a pairing they are too narrow to trust: run the full ladder" } else { "" }
        );
        for r in ratings {
            let old =
                if current.contains(&r.id) { String::new() } else { format!("  (an earlier version, {})", &r.id[..8.min(r.id.len())]) };
            println!(
                "  {:32} {:>6.0}  [{:>5.0}, {:>5.0}]  {:>3} games, score {:.0}%{old}",
                r.name,
                r.elo,
                r.low,
                r.high,
                r.games,
                100.0 * r.score
            );
            if let Some(e) = by_player.get(&r.id) {
                let ends: Vec<String> = e.iter().map(|(k, v)| format!("{k} {v}")).collect();
                println!("  {:32} ended: {}", "", ends.join(", "));
            }
        }
    }
}
