//! `flychess train` and `flychess eval`: fitting a fly's readout over the DN-rate cache (the fast
//! way) with a progress bar and a metrics log the Train tab can draw, and measuring a fly on HOLD
//! next to the controls fitted the same way on the same rows (the blind baseline and the
//! board-linear readout), plus the random mover.

use std::path::Path;
use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use flychess_sim::brain::simulator::{self, EngineChoice, Simulator};
use flychess_sim::cache::Reading;
use flychess_sim::data::{shipped_path, Dataset, Row, HOLD, VAL};
use flychess_sim::fly::{self, Fly, FlyMeta};
use flychess_sim::readout::Readout;
use flychess_sim::stats;
use flychess_sim::train::{board_features, fit, outcomes, summarise, FitOptions, Metrics, PassRecord, PositionOutcome, Target};

use crate::WhichBrain;

fn targets(rows: &[Row]) -> Result<Vec<Target>> {
    Ok(rows.par_iter().map(Target::of).collect::<flychess_sim::Result<Vec<_>>>()?)
}

fn reading_of(read: &[usize]) -> Result<(Reading, Vec<usize>)> {
    match read {
        [12] => Ok((Reading::Step12, vec![11])),
        [9, 10, 11, 12] => Ok((Reading::Mean9To12, vec![8, 9, 10, 11])),
        _ => Err(anyhow!("--read takes 9,10,11,12 (the mean of steps 9–12) or 12")),
    }
}

/// One pass of a fit as the progress log prints it.
fn pass_line(name: &str, p: &PassRecord) -> String {
    format!(
        "  {name}: pass {:>2}  train loss {:.4}  VAL loss {:.4}  top-1 {:.1}%  good {:.1}%  step {:.1e}{}",
        p.pass,
        p.train_loss,
        p.val.loss,
        100.0 * p.val.top1,
        100.0 * p.val.good,
        p.learning_rate,
        if p.improved { "" } else { "  (no better: step halved)" }
    )
}

/// Fits with a pass-by-pass progress line (the controls `eval` fits beside a fly).
fn fit_logged(name: &str, options: &FitOptions, start: &Readout, train: (&[f32], &[Target]), val: (&[f32], &[Target])) -> Result<(Readout, Metrics)> {
    let bar = ProgressBar::new(options.max_passes as u64);
    bar.set_style(ProgressStyle::with_template("{msg:12} pass {pos:>2}/{len} [{bar:30}] {elapsed} {wide_msg}").expect("valid template").progress_chars("=> "));
    bar.set_message(name.to_string());
    bar.suspend(|| eprintln!("{name}: fitting on {}", options.on.describe().unwrap_or_else(|e| e.to_string())));
    let fitted = fit(start, train.0, train.1, val.0, val.1, options, &mut |p: &PassRecord, _| {
        bar.set_position(p.pass as u64);
        bar.suspend(|| eprintln!("{}", pass_line(name, p)));
    }, &|| false);
    bar.finish_and_clear();
    Ok(fitted?)
}

#[allow(clippy::too_many_arguments)]
pub fn train(which: &WhichBrain, data: &Path, name: &str, positions: Option<usize>, read: &[usize], ship: bool, options: &FitOptions, lessons: f64, engine: EngineChoice) -> Result<()> {
    use flychess::training::{self, Controls, Prepared, TrainEvent, TrainJob};
    let (reading, _) = reading_of(read)?;
    let spec = crate::cli::spec(which, data)?;
    let (loaded, brain) = crate::cli::ready(&spec, data, flychess_sim::calibrate::CalibrationOptions::default())?;
    let n = positions.unwrap_or(usize::MAX);
    let prepared = Prepared { connectome: &loaded.connectome, brain: &brain, checksum: &loaded.checksum, spec_name: spec.name(), engine };
    let job = TrainJob { name: name.to_string(), positions: n, reading, options: options.clone(), lessons };
    let bar = ProgressBar::new(1000);
    bar.set_style(ProgressStyle::with_template("[{bar:30}] {elapsed} {wide_msg}").expect("valid template").progress_chars("=> "));
    let started = Instant::now();
    let controls = Controls::default();
    let fly = training::train(&prepared, data, &job, &controls, &|e| match e {
        TrainEvent::Stage { text, fraction } => {
            bar.set_position((fraction * 1000.0) as u64);
            bar.set_message(text);
        }
        TrainEvent::Pass(p) => bar.suspend(|| eprintln!("{}", pass_line(name, &p))),
        TrainEvent::Done { .. } | TrainEvent::Stopped => {}
    })?;
    bar.finish_and_clear();
    let f = fly.ok_or_else(|| anyhow!("the run was stopped"))?;
    if ship {
        f.save(&flychess_sim::shipped::repository_models().join(format!("{name}.fly")))?;
    }
    let (val, hold) = (f.meta.val.unwrap_or_default(), f.meta.hold.unwrap_or_default());
    println!(
        "{name}: fitted in {:.0} s on {} positions; VAL top-1 {:.1}%, HOLD top-1 {:.1}% (good {:.1}%, loss {:.3})\n  saved {}{}",
        started.elapsed().as_secs_f64(),
        f.meta.train_positions,
        100.0 * val.top1,
        100.0 * hold.top1,
        100.0 * hold.good,
        hold.loss,
        data.join("flies").join(format!("{name}.fly")).display(),
        if ship { " and models/" } else { "" }
    );
    Ok(())
}

/// One row of `eval`'s table: a player's HOLD figures with their 95 % intervals, and its
/// difference from the fly on the same positions; printed as text or as JSON from the same row.
struct PlayerRow {
    player: &'static str,
    top1: stats::Estimate,
    good: stats::Estimate,
    loss: stats::Estimate,
    fly_minus_top1: stats::Estimate,
    fly_minus_good: stats::Estimate,
}

impl PlayerRow {
    fn of(player: &'static str, per: &[PositionOutcome], fly: &[PositionOutcome]) -> PlayerRow {
        let hits = |o: &[PositionOutcome], f: fn(&PositionOutcome) -> bool| o.iter().map(f).collect::<Vec<bool>>();
        let (top1, good) = (hits(per, |o| o.top1), hits(per, |o| o.good));
        PlayerRow {
            player,
            top1: stats::rate_of(&top1),
            good: stats::rate_of(&good),
            loss: stats::mean(&per.iter().map(|o| o.loss).collect::<Vec<_>>()),
            fly_minus_top1: stats::paired_difference(&hits(fly, |o| o.top1), &top1),
            fly_minus_good: stats::paired_difference(&hits(fly, |o| o.good), &good),
        }
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "player": self.player,
            "top1": self.top1.value, "top1_interval": [self.top1.low, self.top1.high],
            "good": self.good.value, "good_interval": [self.good.low, self.good.high],
            "loss": self.loss.value, "loss_interval": [self.loss.low, self.loss.high],
            "fly_minus_this_top1": self.fly_minus_top1,
            "fly_minus_this_good": self.fly_minus_good,
        })
    }

    fn line(&self) -> String {
        let versus = if self.player == "fly" { String::new() } else { format!("  fly − this: {}", self.fly_minus_top1.points()) };
        format!("  {:16} top-1 {}  good {}  loss {:.3}{versus}", self.player, self.top1.percent(), self.good.percent(), self.loss.value)
    }
}

/// The control with the brain's wiring shuffled (seed 1): its DN-rate cache (made once, kept in
/// DATA/cache) and a readout fitted on it exactly as the fly's, measured on HOLD.
#[allow(clippy::too_many_arguments)]
fn shuffled_control(which: &WhichBrain, data: &Path, n: usize, reading: Reading, options: &FitOptions, hold_t: &[Target], val_t: &[Target], train_t: &[Target]) -> Result<Vec<PositionOutcome>> {
    let mut shuffled = which.clone();
    shuffled.shuffle_wiring = Some(1);
    eprintln!("shuffled wiring: caching the DN rates of the same brain with its connections handed out again (seed 1)");
    let (cache, _) = crate::cli::cache(&shuffled, data, Some(n), None, EngineChoice::Auto)?;
    let x = |r: std::ops::Range<usize>| cache.read(r, reading);
    let start = Readout::newborn(cache.meta.descending, reading.steps(), 1);
    let (readout, _) = fit_logged("shuffled", options, &start, (&x(HOLD + VAL..n)?, train_t), (&x(HOLD..HOLD + VAL)?, val_t))?;
    Ok(outcomes(&readout, &x(0..HOLD)?, hold_t))
}

#[allow(clippy::too_many_arguments)]
pub fn eval(which: &WhichBrain, data: &Path, name: Option<&str>, positions: Option<usize>, json: bool, options: &FitOptions, controls: bool) -> Result<()> {
    let dataset = Dataset::load(&shipped_path())?;
    // The fly: the one named, else the brain's own (the default brain's shipped fly).
    let (name, f) = match name {
        Some(name) => (name.to_string(), Fly::load(&fly::find(name, data)?)?),
        None => {
            let spec = crate::cli::spec(which, data)?;
            // Only the brain's id is needed here (the cache below loads it with its homeostasis).
            let loaded = flychess_sim::store::ensure(&spec, data, &|_, _| {})?;
            let (name, path) = fly::trained_for(&loaded.checksum, data).ok_or_else(|| {
                anyhow!("no trained fly for {} ({}); train one with `flychess train --name NAME`, or name one with --fly", loaded.connectome.provenance.label(), &loaded.checksum[..12])
            })?;
            (name, Fly::load(&path)?)
        }
    };
    let name = name.as_str();
    let n = positions.unwrap_or(HOLD + VAL + f.meta.train_positions).min(dataset.rows.len());
    let (cache, loaded) = crate::cli::cache(which, data, Some(n), None, EngineChoice::Auto)?;
    if cache.meta.brain_checksum != f.meta.brain_checksum {
        return Err(anyhow!("fly {name} belongs to brain {} ({}), not to the brain asked for ({})", f.meta.brain, &f.meta.brain_checksum[..12], &cache.meta.brain_checksum[..12]));
    }
    let rows = &dataset.rows[..n];
    let (hold_rows, val_rows, train_rows) = (&rows[..HOLD], &rows[HOLD..HOLD + VAL], &rows[HOLD + VAL..]);
    let (hold_t, val_t, train_t) = (targets(hold_rows)?, targets(val_rows)?, targets(train_rows)?);
    let fly_x = cache.read(0..HOLD, f.meta.reading)?;
    let fly_o = outcomes(&f.readout, &fly_x, &hold_t);
    // The blind baseline: no input, only the biases (from/to/promotion popularity).
    let blind_start = Readout::newborn(0, vec![], 1);
    let (blind, _) = fit_logged("blind", options, &blind_start, (&[], &train_t), (&[], &val_t))?;
    let blind_o = outcomes(&blind, &[], &hold_t);
    // The board-linear readout: the same heads on the 768 board planes, no brain.
    let planes = |rs: &[Row]| -> Result<Vec<f32>> { Ok(rs.par_iter().map(board_features).collect::<flychess_sim::Result<Vec<_>>>()?.concat()) };
    let board_start = Readout::newborn(768, vec![], 1);
    let (board, _) = fit_logged("board-linear", options, &board_start, (&planes(train_rows)?, &train_t), (&planes(val_rows)?, &val_t))?;
    let board_o = outcomes(&board, &planes(hold_rows)?, &hold_t);
    // Shuffled wiring: only for a fly of an unaltered brain (a control's fly is its own control).
    let is_plain = matches!(loaded.connectome.provenance.control, flychess_sim::connectome::Control::None);
    let shuffled_o = if controls && is_plain {
        Some(shuffled_control(which, data, n, f.meta.reading, options, &hold_t, &val_t, &train_t)?)
    } else {
        None
    };
    let random_top1 = hold_t.iter().map(|t| 1.0 / t.legal.len() as f64).sum::<f64>() / hold_t.len() as f64;
    let (won, fastest) = fastest_wins(&f.readout, &fly_x, hold_rows)?;
    let (fly_m, blind_m, board_m) = (summarise(&fly_o), summarise(&blind_o), summarise(&board_o));
    let mut table = vec![PlayerRow::of("fly", &fly_o, &fly_o), PlayerRow::of("blind", &blind_o, &fly_o), PlayerRow::of("board-linear", &board_o, &fly_o)];
    if let Some(o) = &shuffled_o {
        table.push(PlayerRow::of("shuffled wiring", o, &fly_o));
    }
    let report = serde_json::json!({
        "fly": name,
        "brain": f.meta.brain,
        "brain_checksum": f.meta.brain_checksum,
        "hold_positions": HOLD,
        "train_positions": train_rows.len(),
        "top1": fly_m.top1, "good": fly_m.good, "loss": fly_m.loss, "policy_loss": fly_m.policy_loss,
        "top1_interval": [table[0].top1.low, table[0].top1.high],
        "blind_top1": blind_m.top1, "blind_good": blind_m.good, "blind_loss": blind_m.loss,
        "board_top1": board_m.top1, "board_good": board_m.good, "board_loss": board_m.loss,
        "shuffled_top1": shuffled_o.as_ref().map(|o| summarise(o).top1),
        "fly_minus_blind_top1": table[1].fly_minus_top1,
        "random_top1": random_top1,
        "players": table.iter().map(PlayerRow::json).collect::<Vec<_>>(),
        "won_positions": won,
        "fastest_win": if won > 0 { serde_json::json!(fastest as f64 / won as f64) } else { serde_json::Value::Null },
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{name} ({}) on HOLD ({HOLD} positions), controls fitted on the same {} TRAIN positions; 95 % intervals:", f.meta.brain, train_rows.len());
        for row in &table {
            println!("{}", row.line());
        }
        println!("  {:16} top-1 {:5.1}%", "random move", 100.0 * random_top1);
        if won > 0 {
            println!("  fastest win: on {won} HOLD positions Stockfish sees a forced mate in; the fly's favourite is the quickest mate in {fastest} ({:.1}%)", 100.0 * fastest as f64 / won as f64);
        }
    }
    Ok(())
}

/// Of the rows where Stockfish found a forced mate for the side to move, how many, and in how many
/// the fly's most probable move is one of the quickest mates labelled.
fn fastest_wins(readout: &Readout, x: &[f32], rows: &[Row]) -> Result<(usize, usize)> {
    use flychess_sim::chess::position_from_fen;
    use flychess_sim::eval::Score;
    use flychess_sim::readout::policy;
    use shakmaty::CastlingMode;
    let d = readout.inputs;
    let mut won = 0;
    let mut found = 0;
    for (i, row) in rows.iter().enumerate() {
        let quickest = row.moves.iter().filter_map(|m| match m.score { Score::Mate(n) if n > 0 => Some(n), _ => None }).min();
        let Some(q) = quickest else { continue };
        won += 1;
        let pos = position_from_fen(&row.fen)?;
        let p = policy(&pos, &readout.heads(&x[i * d..(i + 1) * d]));
        let Some(fav) = (0..p.moves.len()).max_by(|&a, &b| p.probability[a].total_cmp(&p.probability[b])) else { continue };
        let uci = p.moves[fav].to_uci(CastlingMode::Standard).to_string();
        if row.moves.iter().any(|m| m.score == Score::Mate(q) && m.mv.uci() == uci) {
            found += 1;
        }
    }
    Ok((won, found))
}

/// A newborn fly (untrained readout) for a brain, saved like any other.
pub fn newborn(which: &WhichBrain, data: &Path, name: &str, ship: bool) -> Result<()> {
    let spec = crate::cli::spec(which, data)?;
    let loaded = flychess_sim::store::ensure(&spec, data, &|_, _| {}).context("preparing the brain")?;
    let f = Fly {
        meta: FlyMeta {
            name: name.to_string(),
            kind: "newborn".into(),
            brain: loaded.connectome.provenance.label(),
            brain_checksum: loaded.checksum.clone(),
            homeostasis: String::new(),
            reading: Reading::Mean9To12,
            data: "none (untrained)".into(),
            train_positions: 0,
            val: None,
            hold: None,
            created: fly::today(),
        },
        readout: Readout::newborn(loaded.connectome.groups.descending.len(), Readout::default_steps(), 1),
    };
    let path = data.join("flies").join(format!("{name}.fly"));
    f.save(&path)?;
    if ship {
        f.save(&flychess_sim::shipped::repository_models().join(format!("{name}.fly")))?;
    }
    println!("saved the newborn fly {}", path.display());
    Ok(())
}

/// The fly's view of positions: every legal move with its probability (UCI and SAN), its value
/// and its choice. All positions go through the brain as one batch.
pub fn analyse(which: &WhichBrain, data: &Path, name: &str, fens: &[String], json: bool) -> Result<()> {
    use flychess_sim::brain::cpu;
    use flychess_sim::chess::{planes, position_from_fen};
    use flychess_sim::readout::{choose, descending_features, policy};
    use shakmaty::san::San;
    use shakmaty::CastlingMode;
    if fens.is_empty() {
        return Err(anyhow!("give --fen FEN or --fens FILE"));
    }
    let f = Fly::load(&fly::find(name, data)?)?;
    let spec = crate::cli::spec(which, data)?;
    let (loaded, brain) = crate::cli::ready(&spec, data, flychess_sim::calibrate::CalibrationOptions::default())?;
    if loaded.checksum != f.meta.brain_checksum {
        return Err(anyhow!("fly {name} belongs to brain {}, not to {}", f.meta.brain, loaded.connectome.provenance.label()));
    }
    let positions: Vec<shakmaty::Chess> = fens.iter().map(|s| position_from_fen(s)).collect::<flychess_sim::Result<_>>()?;
    let boards: Vec<_> = positions.iter().map(planes).collect();
    let started = Instant::now();
    let rates = cpu::think(&brain, &boards);
    let think_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut out = Vec::new();
    for (b, pos) in positions.iter().enumerate() {
        let d = descending_features(&rates, b, &loaded.connectome.groups.descending, &f.readout.read_steps);
        let heads = f.readout.heads(&d);
        let p = policy(pos, &heads);
        let mut moves: Vec<(String, String, f32)> = p
            .moves
            .iter()
            .zip(&p.probability)
            .map(|(m, &q)| (m.to_uci(CastlingMode::Standard).to_string(), San::from_move(pos, *m).to_string(), q))
            .collect();
        moves.sort_by(|a, b| b.2.total_cmp(&a.2));
        let chosen = choose(pos, &p, &[]).map(|(i, _)| p.moves[i].to_uci(CastlingMode::Standard).to_string());
        out.push(serde_json::json!({
            "fen": fens[b],
            "value": p.value,
            "chosen": chosen,
            "moves": moves.iter().map(|(u, s, q)| serde_json::json!({"uci": u, "san": s, "probability": q})).collect::<Vec<_>>(),
        }));
    }
    if json {
        let v = if out.len() == 1 { out.remove(0) } else { serde_json::json!(out) };
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        for o in &out {
            println!("{}  value {:+.2}  plays {}", o["fen"].as_str().unwrap_or(""), o["value"].as_f64().unwrap_or(0.0), o["chosen"].as_str().unwrap_or("-"));
            for m in o["moves"].as_array().into_iter().flatten().take(8) {
                println!("  {:8} {:6} {:5.1}%", m["san"].as_str().unwrap_or(""), m["uci"].as_str().unwrap_or(""), 100.0 * m["probability"].as_f64().unwrap_or(0.0));
            }
        }
        println!("({} positions in one batch, {think_ms:.0} ms)", out.len());
    }
    Ok(())
}

/// `flychess play`: games between flies, the random and greedy movers and Stockfish.
#[allow(clippy::too_many_arguments)]
pub fn play(which: &WhichBrain, data: &Path, white: &str, black: &str, games: usize, seed: u64, json: bool, imagination: Option<f32>) -> Result<()> {
    use flychess_sim::engine::{find_stockfish, EngineOptions, Limit, Supervised};
    use flychess_sim::play::{play_game, Dice, Player};
    let spec = crate::cli::spec(which, data)?;
    let needs_brain = [white, black].iter().any(|p| !matches!(p.split(':').next(), Some("random" | "greedy" | "stockfish")));
    let prepared = if needs_brain { Some(crate::cli::ready(&spec, data, flychess_sim::calibrate::CalibrationOptions::default())?) } else { None };
    let mut flies = std::collections::HashMap::new();
    for name in [white, black] {
        if let Some((loaded, _)) = &prepared
            && !matches!(name.split(':').next(), Some("random" | "greedy" | "stockfish"))
        {
            let f = Fly::load(&fly::find(name, data)?)?;
            if f.meta.brain_checksum != loaded.checksum {
                return Err(anyhow!("fly {name} belongs to brain {}, not to {}", f.meta.brain, loaded.connectome.provenance.label()));
            }
            flies.insert(name.to_string(), f);
        }
    }
    let descending: Vec<u32> = prepared.as_ref().map(|(l, _)| l.connectome.groups.descending.clone()).unwrap_or_default();
    let make = |name: &str, dice: u64| -> Result<Player> {
        let mut parts = name.split(':');
        Ok(match parts.next() {
            Some("random") => Player::Random(Dice::new(dice)),
            Some("greedy") => Player::Greedy(Dice::new(dice)),
            Some("stockfish") => {
                let share: f64 = parts.next().map(|s| s.parse()).transpose().map_err(|_| anyhow!("stockfish:P takes a share of random moves, e.g. stockfish:0.25"))?.unwrap_or(0.0);
                let path = find_stockfish(None)?;
                let engine = Supervised::new(path, EngineOptions { elo: Some(0), ..Default::default() });
                Player::Stockfish { engine, limit: Limit::Nodes(20_000), random_share: share, dice: Dice::new(dice) }
            }
            _ => {
                let (_, brain) = prepared.as_ref().expect("prepared for flies");
                Player::Fly { brain, readout: &flies[name].readout, descending: &descending, imagination }
            }
        })
    };
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
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({
            "player": white, "opponent": black, "games": games, "wins": w, "draws": d, "losses": l,
            "score": (w as f64 + 0.5 * d as f64) / games.max(1) as f64,
            "records": records,
        }))?);
    } else {
        println!("{white} against {black}: +{w} ={d} -{l}");
    }
    Ok(())
}

/// `flychess rate`: the ladder (sim::ladder) for every fly of the brain, resumable, then
/// Bradley–Terry ratings with bootstrap intervals written to DATA/ratings.json.
pub fn rate(which: &WhichBrain, data: &Path, games: usize, quick: bool, seed: u64, json: bool, engine: EngineChoice) -> Result<()> {
    use flychess_sim::engine::{find_stockfish, Engine, EngineOptions};
    use flychess_sim::ladder::{self, Entrant, FlyKit, LadderOptions};
    let stockfish = find_stockfish(None).map_err(|e| anyhow!("the ladder's rungs are Stockfish: {e}"))?;
    let anchor_elo = Engine::start(&stockfish, &EngineOptions::default())?.min_elo.unwrap_or(1350) as f64;
    let spec = crate::cli::spec(which, data)?;
    let (loaded, brain) = crate::cli::ready(&spec, data, flychess_sim::calibrate::CalibrationOptions::default())?;
    // Every fly of this brain, the user's first (a shipped fly of the same name is shadowed).
    let mut readouts = std::collections::BTreeMap::new();
    for name in flychess::ui::list_flies(data) {
        match fly::find(&name, data).and_then(|p| Fly::load(&p)) {
            Ok(f) if f.meta.brain_checksum == loaded.checksum => {
                readouts.insert(f.meta.name.clone(), f.readout);
            }
            Ok(_) => {}
            Err(e) => eprintln!("skipping fly {name}: {e}"),
        }
    }
    if readouts.is_empty() {
        return Err(anyhow!("no fly of this brain to rate ({}); train one with `flychess train`", loaded.connectome.provenance.label()));
    }
    let options = if quick {
        LadderOptions { games: 2, max_plies: 200, seed, ..Default::default() }
    } else {
        LadderOptions { games: games.max(2), seed, ..Default::default() }
    };
    let mut entrants = ladder::rungs();
    for name in readouts.keys() {
        entrants.push(Entrant::Fly { name: name.clone(), imagination: None });
        if !quick {
            entrants.push(Entrant::Fly { name: name.clone(), imagination: Some(flychess::training::tuned_imagination(data, name)) });
        }
    }
    let descending = loaded.connectome.groups.descending.clone();
    // The flies' thinks go through the chosen engine (the GPU one batches the games' moves too).
    let simulator = std::sync::Arc::new(Simulator::choose(engine, &brain)?);
    eprintln!("the flies think on the {}", simulator.describe());
    let _in_force = simulator::install(&brain, simulator);
    let kit = FlyKit { brain: &brain, descending: &descending, readouts };
    let file = data.join("ladder").join(format!(
        "{}-seed{}-open{}-cap{}-nodes{}.jsonl",
        &loaded.checksum[..12],
        options.seed,
        options.opening_plies,
        options.max_plies,
        options.stockfish_nodes
    ));
    let bar = ProgressBar::new(0);
    bar.set_style(ProgressStyle::with_template("games [{bar:40}] {pos}/{len} {elapsed}/{eta} {wide_msg}").expect("valid template").progress_chars("=> "));
    let started = Instant::now();
    let rows = ladder::run(&entrants, Some(&kit), &options, &file, &|done, total, row| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(format!("{} – {}: {} ({})", row.white, row.black, row.result, row.termination));
    })?;
    bar.finish_and_clear();
    // The clone control: the first fly against itself.
    let first = entrants.iter().find(|e| e.is_fly()).cloned().expect("a fly");
    let (clone_share, clone_games) = ladder::clone_match(&first, Some(&kit), &options, options.games.div_ceil(2))?;
    let anchor = Entrant::Stockfish { random_share: 0.0 }.name();
    let mut ratings = ladder::ratings(&rows, &anchor, anchor_elo, 300, seed);
    ratings.sort_by(|a, b| b.elo.total_cmp(&a.elo));
    let report = serde_json::json!({
        "brain": loaded.connectome.provenance.label(),
        "anchor": anchor,
        "anchor_elo": anchor_elo,
        "stockfish": stockfish.display().to_string(),
        "options": options,
        "games": rows.len(),
        "games_file": file.display().to_string(),
        "seconds": started.elapsed().as_secs_f64(),
        "clone": { "fly": first.name(), "games": clone_games.len(), "score": clone_share, "trusted": clone_share == 0.5 },
        "endings": ladder::endings(&rows),
        "ratings": ratings,
    });
    let text = serde_json::to_string_pretty(&report)?;
    flychess_sim::connectome::brain_file::write_atomically(&data.join("ratings.json"), text.as_bytes())?;
    if json {
        println!("{text}");
    } else {
        println!("{} games ({} per pairing), anchor {anchor} = {anchor_elo:.0}; saved {}", rows.len(), options.games, data.join("ratings.json").display());
        println!("clone control: {} against itself scored {:.1}% over {} games{}", first.name(), 100.0 * clone_share, clone_games.len(), if clone_share == 0.5 { "" } else { " — NOT 50%: do not trust these ratings" });
        for r in &ratings {
            println!("  {:32} {:>6.0}  [{:>5.0}, {:>5.0}]  {:>3} games, score {:.0}%", r.name, r.elo, r.low, r.high, r.games, 100.0 * r.score);
        }
        let endings: Vec<String> = ladder::endings(&rows).into_iter().map(|(k, v)| format!("{k} {v}")).collect();
        println!("games ended by: {}", endings.join(", "));
    }
    Ok(())
}

/// The imagination weights `imagine-tune` tries (SPEC §4); ∞ lets the value decide.
pub const IMAGINATION_WEIGHTS: [f32; 9] = [0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, f32::INFINITY];

/// `flychess imagine-tune`: on the first `positions` HOLD positions, the fly's move with one-move
/// imagination at each weight, scored against Stockfish's labels (top-1, good move); the best
/// weight is written to DATA/imagination.json for this fly (the app and `play` use it).
pub fn imagine_tune(which: &WhichBrain, data: &Path, name: &str, positions: usize, json: bool) -> Result<()> {
    use flychess_sim::chess::{planes, position_from_fen};
    use flychess_sim::play::look_ahead;
    use flychess_sim::readout::{policy, think_features};
    let f = Fly::load(&fly::find(name, data)?)?;
    let spec = crate::cli::spec(which, data)?;
    let (loaded, brain) = crate::cli::ready(&spec, data, flychess_sim::calibrate::CalibrationOptions::default())?;
    if loaded.checksum != f.meta.brain_checksum {
        return Err(anyhow!("fly {name} belongs to brain {}, not to {}", f.meta.brain, loaded.connectome.provenance.label()));
    }
    let dataset = Dataset::load(&shipped_path())?;
    let rows = &dataset.rows[..positions.clamp(1, HOLD)];
    let descending = &loaded.connectome.groups.descending;
    let bar = ProgressBar::new(rows.len() as u64);
    bar.set_style(ProgressStyle::with_template("imagining [{bar:40}] {pos}/{len} positions, eta {eta}").expect("valid template").progress_chars("=> "));
    let started = Instant::now();
    // Per weight: (top-1 hits, good hits); plus the plain fly for reference.
    let mut hits = vec![(0usize, 0usize); IMAGINATION_WEIGHTS.len()];
    let mut plain = (0usize, 0usize);
    for row in rows {
        let pos = position_from_fen(&row.fen)?;
        let target = Target::of(row)?;
        let features = think_features(&brain, &[planes(&pos)], descending, &f.readout.read_steps);
        let p = policy(&pos, &f.readout.heads(&features[0]));
        let favourite = (0..p.moves.len()).max_by(|&a, &b| p.probability[a].total_cmp(&p.probability[b])).unwrap_or(0);
        plain.0 += usize::from(favourite == target.best);
        plain.1 += usize::from(target.good.contains(&favourite));
        let seen = look_ahead(&brain, &f.readout, descending, &pos, &p, &[]);
        for (k, &w) in IMAGINATION_WEIGHTS.iter().enumerate() {
            let pick = seen.pick(w);
            hits[k].0 += usize::from(pick == target.best);
            hits[k].1 += usize::from(target.good.contains(&pick));
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let n = rows.len() as f64;
    let best = (0..IMAGINATION_WEIGHTS.len()).max_by(|&a, &b| hits[a].cmp(&hits[b]).then(b.cmp(&a))).expect("weights");
    let weight = |w: f32| if w.is_infinite() { serde_json::json!("inf") } else { serde_json::json!(w) };
    let table: Vec<serde_json::Value> = IMAGINATION_WEIGHTS
        .iter()
        .zip(&hits)
        .map(|(&w, &(t, g))| serde_json::json!({"w": weight(w), "top1": t as f64 / n, "good": g as f64 / n}))
        .collect();
    let report = serde_json::json!({
        "fly": name,
        "positions": rows.len(),
        "seconds": started.elapsed().as_secs_f64(),
        "plain": {"top1": plain.0 as f64 / n, "good": plain.1 as f64 / n},
        "weights": table,
        "chosen": weight(IMAGINATION_WEIGHTS[best]),
    });
    // Kept per fly in DATA/imagination.json.
    let path = data.join("imagination.json");
    let mut all: serde_json::Map<String, serde_json::Value> = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    all.insert(name.to_string(), report.clone());
    flychess_sim::connectome::brain_file::write_atomically(&path, serde_json::to_string_pretty(&all)?.as_bytes())?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{name}, one-move imagination on {} HOLD positions ({:.0} s):", rows.len(), started.elapsed().as_secs_f64());
        println!("  plain        top-1 {:5.1}%  good {:5.1}%", 100.0 * plain.0 as f64 / n, 100.0 * plain.1 as f64 / n);
        for (&w, &(t, g)) in IMAGINATION_WEIGHTS.iter().zip(&hits) {
            let mark = if w == IMAGINATION_WEIGHTS[best] || (w.is_infinite() && IMAGINATION_WEIGHTS[best].is_infinite()) { "  <- chosen" } else { "" };
            println!("  w = {:<6}   top-1 {:5.1}%  good {:5.1}%{mark}", if w.is_infinite() { "inf".to_string() } else { format!("{w}") }, 100.0 * t as f64 / n, 100.0 * g as f64 / n);
        }
        println!("saved {}", path.display());
    }
    Ok(())
}

/// `flychess lessons`: the finishing lessons. Won positions of the shipped TRAIN split (the mover
/// mates by force or leads by 3 pawns or more) relabelled by Stockfish with every legal move
/// scored, so mates can be ranked by distance and a stalemating move shows as the draw it is;
/// written to DATA/lessons/labels.jsonl (resumable) for `train --lessons SHARE`.
pub fn lessons(data: &Path, positions: usize, depth: u32, workers: Option<usize>) -> Result<()> {
    use flychess::label::{label, LabelOptions, Sample};
    use flychess_sim::chess::position_from_fen;
    use flychess_sim::eval::Score;
    use shakmaty::Position;
    let dataset = Dataset::load(&shipped_path())?;
    let won: Vec<&Row> = dataset.rows[HOLD + VAL..]
        .iter()
        .filter(|r| r.moves.first().is_some_and(|m| match m.score { Score::Mate(n) => n > 0, Score::Cp(cp) => cp >= 300 }))
        .collect();
    let samples: Vec<Sample> = won.iter().map(|r| Sample { fen: r.fen.clone(), game: r.game, ply: r.ply, legal: r.legal }).collect();
    let traps = won
        .iter()
        .take(positions)
        .filter(|r| {
            position_from_fen(&r.fen).is_ok_and(|p| {
                p.legal_moves().iter().any(|m| {
                    let mut a = p.clone();
                    a.play_unchecked(*m);
                    a.is_stalemate()
                })
            })
        })
        .count();
    let stockfish = flychess_sim::engine::find_stockfish(None)?;
    let workers = workers.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let total = positions.min(samples.len());
    println!("{} won TRAIN positions; relabelling {total} with every legal move at depth {depth} ({traps} of them hold a stalemate trap)", samples.len());
    let bar = ProgressBar::new(total as u64);
    bar.set_style(ProgressStyle::with_template("lessons [{bar:40}] {pos}/{len}, {per_sec}, eta {eta}").expect("valid template").progress_chars("=> "));
    let file = flychess::training::lessons_path(data);
    let options = LabelOptions { depth, multipv: 255, workers, positions, seed: 0, stockfish };
    let done = label(&samples, &file, &options, &|d, _| bar.set_position(d as u64))?;
    bar.finish_and_clear();
    println!("{done} lessons in {}; mix them into training with `flychess train --lessons 0.1`", file.display());
    Ok(())
}
