//! `flychess ceiling`: the selection ceiling (Philidor's lesson, `flychess_arena::ceiling`) of a
//! fly or Charles on HOLD middlegames: its favourite against its judge, its search and Stockfish
//! at depths 1, 4 and 12 choosing among its top five, and the five's best; with `--duel-games N`,
//! each aid's duel against the policy alone (the games file `flychess duel` keeps).

use std::path::Path;
use std::time::Instant;

use anyhow::{Result, anyhow};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use flychess::terminal::with_lookup_bar;
use flychess_arena::ceiling::{Ceiling, Selector, measure, middlegames, selectors};
use flychess_arena::duel::Duel;
use flychess_arena::ladder::{self, LadderOptions};
use flychess_arena::players::{Entrant, Lookup, Named, Seating, named};
use flychess_arena::search::{Aid, Evaluator};
use flychess_fly::data::{Dataset, shipped_path};
use flychess_fly::fly::{self, Fly};
use flychess_lab::profiling::games_file;

use super::{engine, game_bar, hall, on_game};
use crate::cli::options::{EngineArgs, WhichBrain};

// The arguments of `flychess ceiling` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct CeilingArgs {
    #[arg(long)]
    pub player: Option<String>,
    /// HOLD middlegame positions.
    #[arg(long, default_value_t = 200)]
    pub positions: usize,
    /// Stockfish's depth when scoring a pick.
    #[arg(long, default_value_t = 10)]
    pub depth: u32,
    /// The search's simulations a move.
    #[arg(long, default_value_t = 64)]
    pub simulations: usize,
    /// Games of each aided player against the policy alone (0: no duels).
    #[arg(long, default_value_t = 0)]
    pub duel_games: usize,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub which: WhichBrain,
}

/// `flychess ceiling`: the selection ceiling (`sim::ceiling`) of a fly or Charles on HOLD
/// middlegames, and with `duel_games` each aid's duel against the policy alone (the same games
/// file `flychess duel` keeps, so either reuses the other's games).
pub fn run(args: &CeilingArgs, data: &Path) -> Result<()> {
    let CeilingArgs { ref player, positions, depth, simulations, duel_games, json, engine: ref engine_args, ref which } = *args;
    let (player, engine_choice) = (player.as_deref(), engine_args.choice());
    let stockfish = flychess_fly::stockfish::find_stockfish(None)?;
    let hall = hall(which, data)?;
    let (loaded, brain) = (&hall.loaded, &hall.brain);
    let descending = &loaded.connectome.groups.descending;
    let player = match player {
        Some(p) => p.to_string(),
        None => fly::trained_for(&loaded.checksum, data)
            .map(|(n, _)| n)
            .ok_or_else(|| anyhow!("no trained fly for {}; name one with --player", loaded.connectome.provenance.label()))?,
    };
    let at = Lookup::in_folder(data, &flychess_charles::player::Runs).of_brain(&loaded.checksum, Some(hall.venue()));
    let (base, named) = with_lookup_bar(|progress| named(&player, &Lookup { progress, ..at }))?;
    // The value fly: the fly itself, or for Charles the brain's trained fly.
    let (value_fly, charles) = match named {
        Named::Fly(f) if matches!(base, Entrant::Fly { imagination: None, sample: false, .. }) => (f, None),
        Named::Charles(c) => {
            let (_, path) = fly::trained_for(&loaded.checksum, data)
                .ok_or_else(|| anyhow!("this brain has no trained fly to value Charles's boards"))?;
            (Fly::load(&path)?, Some(c))
        }
        _ => return Err(anyhow!("{player}: the ceiling is measured for a fly playing its favourite or for Charles")),
    };
    let sim = engine(engine_choice, brain)?;
    let evaluator = match &charles {
        None => Evaluator::fly(brain, &value_fly.readout, descending),
        Some(c) => Evaluator { prior: Some(c.as_ref()), ..Evaluator::fly(brain, &value_fly.readout, descending) },
    }
    .on(Some(&sim));
    // Charles has no value head of its own: no judge for it (its search borrows the fly's value).
    let judge_weight =
        if charles.is_none() { flychess::terminal::judge_weight_with_bar(data, &value_fly, brain, descending)? } else { f32::NAN };
    let chosen: Vec<Selector> =
        selectors(simulations).into_iter().filter(|s| charles.is_none() || !matches!(s, Selector::Aided(Aid::Judge { .. }))).collect();
    let dataset = Dataset::load(&shipped_path())?;
    let rows = middlegames(dataset.hold(), positions)?;
    let bar = ProgressBar::new(rows.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("ceiling [{bar:40}] {pos}/{len} middlegame positions, eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let started = Instant::now();
    let ceiling = measure(evaluator, judge_weight, &chosen, &rows, &stockfish, depth, &|k| bar.set_position(k as u64))?;
    bar.finish_and_clear();
    let measure_seconds = started.elapsed().as_secs_f64();
    // Each aid against the policy alone.
    let mut duels = Vec::new();
    if duel_games > 0 {
        let value = charles.as_ref().map(|_| &value_fly);
        let aided: Vec<Entrant> = chosen
            .iter()
            .filter_map(|s| match s {
                Selector::Aided(Aid::Judge { .. }) => Some(Aid::Judge { weight: judge_weight }),
                Selector::Aided(aid) => Some(*aid),
                _ => None,
            })
            .map(|aid| Entrant::aided(base.clone(), aid, value))
            .collect::<std::result::Result<_, _>>()?;
        let mut flies_entrants = vec![Entrant::fly(&value_fly, None)];
        flies_entrants.extend(aided.iter().cloned());
        let kit = Seating::new(&at)
            .with_flies(&[(value_fly.clone(), flies_entrants)])
            .with_charles(&charles.iter().cloned().collect::<Vec<_>>())
            .on(Some(sim.clone()))
            .kit();
        let options = LadderOptions { games: duel_games.max(2), seed: 1, dice_by_seat: true, ..Default::default() };
        for first in &aided {
            let file = games_file(data, &format!("duel-{}-{}-", first.id(), base.id()), &loaded.checksum, &options);
            let bar = game_bar();
            let t = Instant::now();
            let rows = ladder::duel_games(first, &base, Some(&kit), &options, &file, &on_game(&bar))?;
            bar.finish_and_clear();
            let d = Duel::of(&ladder::pair_scores(&rows));
            duels.push(serde_json::json!({
                "first": first.name(), "second": base.name(), "first_id": first.id(), "games": rows.len(), "pentanomial": d.pentanomial,
                "score": d.score, "score_interval": [d.score_low, d.score_high], "elo": d.elo, "elo_interval": [d.elo_low, d.elo_high],
                "difference_shown": !d.holds_even(), "endings": ladder::endings(&rows), "seconds": t.elapsed().as_secs_f64(),
            }));
        }
    }
    let report = serde_json::json!({
        "player": base.name(), "player_id": base.id(),
        "value_from": value_fly.meta.name,
        "brain": loaded.connectome.provenance.label(),
        "what": "HOLD middlegame positions: each selector picks among the policy's five most probable moves; Stockfish at scoring_depth scores the position and each pick once; loss = max(0, before - after) cp; a blunder loses more than 400 cp",
        "judge_weight": if judge_weight.is_finite() { serde_json::json!(judge_weight) } else { serde_json::Value::Null },
        "simulations": simulations,
        "ceiling": ceiling,
        "duels": duels,
        "seconds": measure_seconds,
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    print_ceiling(&base, &ceiling, &duels, depth, measure_seconds);
    Ok(())
}

/// The ceiling as text: each selector's centipawns lost a move, blunders, top-1 and time, and
/// each aid's duel against the policy alone.
fn print_ceiling(base: &Entrant, ceiling: &Ceiling, duels: &[serde_json::Value], depth: u32, measure_seconds: f64) {
    println!(
        "{}: selection ceiling on {} HOLD middlegame positions (scored at depth {depth}, {measure_seconds:.0} s)",
        base.name(),
        ceiling.positions
    );
    println!("  Stockfish's best move among its top five: {}", ceiling.best_in_top5.percent());
    println!("  {:44} {:>22} {:>22} {:>18} {:>9}", "selector", "cp lost a move", "blunders (> 400 cp)", "top-1", "s/move");
    for r in &ceiling.rows {
        println!(
            "  {:44} {:>6.0} [{:>5.0}, {:>5.0}] {:>22} {:>18} {:>9.3}",
            r.selector,
            r.mean_loss_cp.value,
            r.mean_loss_cp.low,
            r.mean_loss_cp.high,
            r.blunder_rate.percent(),
            r.top1.percent(),
            r.seconds_per_move
        );
    }
    for d in duels {
        println!(
            "  {} against {}: Elo {:+.0} [{:+.0}, {:+.0}] over {} games",
            d["first"].as_str().unwrap_or(""),
            d["second"].as_str().unwrap_or(""),
            d["elo"].as_f64().unwrap_or(f64::NAN),
            d["elo_interval"][0].as_f64().unwrap_or(f64::NAN),
            d["elo_interval"][1].as_f64().unwrap_or(f64::NAN),
            d["games"]
        );
    }
}
