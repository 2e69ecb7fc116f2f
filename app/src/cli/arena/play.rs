//! `flychess play`: games between any two players by name (a fly, FLY+imagination, a dopamine
//! fly, charles, a fly or Charles with an aid, random, greedy, stockfish, stockfish:P), colours
//! alternating game by game, each game's line and the score printed as text or JSON; `--dry-run`
//! seats the players and stops.

use std::path::Path;

use anyhow::{Result, anyhow};
use clap::Args;

use flychess_arena::play::play_game;
use flychess_arena::players::{Entrant, Lookup, Player, Seating};
use flychess_fly::stockfish::find_stockfish;
use flychess_lab::players::Hall;

use super::{hall, seat};
use crate::cli::options::WhichBrain;

// The arguments of `flychess play` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct PlayArgs {
    #[arg(long)]
    pub white: String,
    #[arg(long)]
    pub black: String,
    #[arg(long, default_value_t = 20)]
    pub games: usize,
    /// Seed of the random choices (random and greedy movers, Stockfish's random moves).
    #[arg(long, default_value_t = 1)]
    pub game_seed: u64,
    #[arg(long)]
    pub json: bool,
    /// Flies look one move ahead (weight w of the value after; SPEC default 1).
    #[arg(long, num_args = 0..=1, default_missing_value = "1", value_name = "W")]
    pub imagination: Option<f32>,
    /// Seat both players (everything they need loaded) and stop before the first move: how a
    /// script checks that two names can play.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub which: WhichBrain,
}

/// `flychess play`: games between flies, Charles, the random and greedy movers and Stockfish.
pub fn run(args: &PlayArgs, data: &Path) -> Result<()> {
    let PlayArgs { ref white, ref black, games, game_seed: seed, json, imagination, dry_run, ref which } = *args;
    if games == 0 && !dry_run {
        return Err(anyhow!("play --games 0: nothing to play (give 1 or more; --dry-run seats the players and stops)"));
    }
    let (white, black) = (white.as_str(), black.as_str());
    // The rungs and plain Charles need no brain; any other name is resolved on it.
    let needs_brain = [white, black].iter().any(|p| flychess_arena::players::needs_brain(p));
    let hall = if needs_brain { Some(hall(which, data)?) } else { None };
    let at = Lookup {
        checksum: hall.as_ref().map(|h| h.loaded.checksum.as_str()),
        venue: hall.as_ref().map(Hall::venue),
        imagination,
        ..Lookup::in_folder(data, &flychess_charles::player::Runs)
    };
    // Every player is the ladder's (`Player::new`): Stockfish at its lowest UCI_Elo on 20,000
    // nodes a move, a fly playing its favourite (with imagination at the weight asked for).
    let mut seating = Seating::new(&at);
    let mut entrants = std::collections::HashMap::new();
    for name in [white, black] {
        entrants.insert(name, seat(&mut seating, name, &at)?);
    }
    let kit = seating.kit();
    let stockfish = if entrants.values().any(Entrant::needs_stockfish) { Some(find_stockfish(None)?) } else { None };
    let make = |name: &str, dice: u64| Player::new(&entrants[name], Some(&kit), 20_000, dice, &stockfish);
    if dry_run {
        make(white, 0)?;
        make(black, 1)?;
        if json {
            println!("{}", serde_json::json!({ "player": white, "opponent": black, "seated": true, "games": 0 }));
        } else {
            println!("{white} and {black} are seated and can play (--dry-run: no game played)");
        }
        return Ok(());
    }
    let mut records = Vec::new();
    let (mut w, mut d, mut l) = (0, 0, 0);
    for g in 0..games {
        // Colours alternate: even games as asked, odd games swapped; scores are for `white`.
        let swap = g % 2 == 1;
        let (a, b) = if swap { (black, white) } else { (white, black) };
        let mut pa = make(a, seed * 1000 + 2 * g as u64)?;
        let mut pb = make(b, seed * 1000 + 2 * g as u64 + 1)?;
        let mut rec = play_game(&mut pa, &mut pb, shakmaty::Chess::default(), 400)?;
        rec.white = a.to_string();
        rec.black = b.to_string();
        let first_wins = match (rec.result.as_str(), swap) {
            ("1-0", false) | ("0-1", true) => Some(true),
            ("0-1", false) | ("1-0", true) => Some(false),
            _ => None,
        };
        match first_wins {
            Some(true) => w += 1,
            Some(false) => l += 1,
            None => d += 1,
        }
        if !json {
            println!("game {:>2}: {} – {}  {}  ({}, {} plies)", g + 1, rec.white, rec.black, rec.result, rec.termination, rec.san.len());
        }
        records.push(rec);
    }
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "player": white, "opponent": black, "games": games, "wins": w, "draws": d, "losses": l,
                "score": (w as f64 + 0.5 * d as f64) / games.max(1) as f64,
                "records": records,
            }))?
        );
    } else {
        println!("{white} against {black}: +{w} ={d} -{l}");
    }
    Ok(())
}
