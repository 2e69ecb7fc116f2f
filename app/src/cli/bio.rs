//! `flychess bio …`: the dopamine fly on the command line. `train` gives a dopamine fly its
//! lessons (resumable: the fly's own file is the checkpoint), `eval` measures one as the seed did
//! (pairs right before and after with 95 % intervals, the flips of a second scoring, harder pairs,
//! top-1, the logistic ceilings on the Kenyon cells and the descending neurons, speed), `speed`
//! times its lessons and a move on the CPU model beside the GPU engine, `pilots` trains the
//! seed's variations of the rule from the same untrained mushroom body side by side.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::{Result, anyhow};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use flychess_arena::bio::file::{DopamineFly, dopamine_flies, is_dopamine_fly};
use flychess_arena::bio::learn::{self, Rule};
use flychess_arena::bio::measure::{self, EvalSizes};
use flychess_arena::bio::run::{self, Progress, RunOptions};
use flychess_arena::bio::{self, BioBrain, Constants};
use flychess_fly::data::{Dataset, Row, shipped_path};
use flychess_fly::stats::{self, Estimate};

use crate::cli::options::{EngineArgs, WhichBrain};

pub use measure::EVAL_SEED;

/// How `bio train` and `bio pilots` change the rule and the model.
#[derive(Clone, Debug, Default)]
struct Variation {
    pass_share: Option<f32>,
    eta: Option<f32>,
    rule: Rule,
}

impl From<&TrainArgs> for Variation {
    /// The variation `bio train`'s flags ask for.
    fn from(args: &TrainArgs) -> Variation {
        Variation {
            pass_share: args.pass_share,
            eta: args.eta,
            rule: Rule { strengthen_silent: args.strengthen_silent, harder_after: args.harder_after, own_dopamine: args.own_dopamine },
        }
    }
}

impl Variation {
    fn constants(&self) -> Constants {
        let d = Constants::default();
        Constants { pass_share: self.pass_share.unwrap_or(d.pass_share), eta: self.eta.unwrap_or(d.eta), ..d }
    }
}

fn bar(len: u64, what: &str) -> ProgressBar {
    let b = ProgressBar::new(len);
    b.set_style(
        ProgressStyle::with_template(&format!("{what} [{{bar:40}}] {{pos}}/{{len}} {{msg}} eta {{eta}}"))
            .expect("valid template")
            .progress_chars("=> "),
    );
    b
}

/// The brain, ready, and the dopamine fly's model on it.
fn model(
    which: &WhichBrain,
    data: &Path,
    constants: Constants,
) -> Result<(flychess_brain::connectome::brain_file::Loaded, BioBrain, String)> {
    let spec = which.spec(data)?;
    let (loaded, plain) = crate::cli::options::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    let b = bar(flychess_brain::brain::STEPS as u64, "dopamine fly's homeostasis (once per brain)");
    let bio = bio::prepare(&loaded.connectome, &loaded.checksum, &plain, &spec.brain_path(data), constants, &|t| b.set_position(t as u64))?;
    b.finish_and_clear();
    let label = loaded.connectome.provenance.label();
    Ok((loaded, bio, label))
}

/// Where a dopamine fly named `name` lives in the data folder.
fn fly_path(data: &Path, name: &str) -> PathBuf {
    flychess_brain::files::DataFolder::at(data).flies().join(format!("{name}.fly"))
}

/// `flychess bio train`: a dopamine fly's lessons (or games with --games) up to --lessons in all,
/// resumable (the fly's own file is the checkpoint), points of its curve printed as it goes.
fn train(args: &TrainArgs, data: &Path) -> Result<()> {
    let TrainArgs { ref name, lessons, games, every, monitor, lesson_seed: seed, ship, ref which, .. } = *args;
    let variation = &Variation::from(args);
    // A shipped fly's name only for the developers' --ship, which replaces that fly itself.
    if ship {
        flychess_fly::fly::check_name(name)?
    } else {
        flychess_fly::fly::check_new_name(name)?
    }
    let path = fly_path(data, name);
    std::fs::create_dir_all(path.parent().expect("flies folder"))?;
    let dataset = Dataset::load(&shipped_path())?;
    let (_, bio, label) = model(which, data, variation.constants())?;
    let mode = if games { "games" } else { "tutor" };
    let mut fly = if path.exists() {
        if !is_dopamine_fly(&path) {
            return Err(anyhow!("{} is a fly of another kind: choose another name", path.display()));
        }
        let f = DopamineFly::load(&path)?;
        f.check(&bio)?;
        if f.meta.mode != mode || f.meta.rule != variation.rule || f.meta.seed != seed {
            return Err(anyhow!(
                "{} was trained another way ({} mode, seed {}, {:?}): choose another name to start afresh",
                path.display(),
                f.meta.mode,
                f.meta.seed,
                f.meta.rule
            ));
        }
        eprintln!("resuming {name} at {} {}", f.meta.lessons.max(f.meta.games), if games { "games" } else { "lessons" });
        f
    } else {
        DopamineFly::newborn(name, &bio, &label, variation.rule, mode, seed)
    };
    let b = bar(lessons as u64, if games { "games" } else { "lessons" });
    b.set_position((fly.meta.lessons + fly.meta.games) as u64);
    let options =
        RunOptions { target: lessons, every, monitor_pairs: monitor, stockfish: flychess_fly::stockfish::find_stockfish(None).ok() };
    let started = Instant::now();
    let at_start = fly.meta.lessons + fly.meta.games;
    run::run(&bio, &mut fly, &dataset, &path, &options, &AtomicBool::new(false), &mut |p| match p {
        Progress::Lessons { done, batch, .. } => {
            b.set_position(done as u64);
            b.set_message(format!("batch right {:.0}% dose {:.2}", 100.0 * batch.pairs_right, batch.mean_dose));
        }
        Progress::Point(p) => b.suspend(|| {
            eprintln!(
                "  {:>7} {}: VAL pairs right {:.1}% [{:.1}, {:.1}]",
                p.lessons,
                if games { "games" } else { "lessons" },
                100.0 * p.pairs_right,
                100.0 * p.low,
                100.0 * p.high
            )
        }),
        Progress::Game { done, game, opponent, .. } => {
            b.set_position(done as u64);
            b.set_message(format!("{opponent}: score {} in {} plies", game.score, game.plies));
            b.suspend(|| eprintln!("  game {done} against {opponent}: score {} in {} plies, {} doses", game.score, game.plies, game.doses));
        }
    })?;
    b.finish_and_clear();
    let done = fly.meta.lessons + fly.meta.games - at_start;
    let secs = started.elapsed().as_secs_f64();
    let (unit, per) = if games { ("games", 60.0) } else { ("lessons", 1.0) };
    println!(
        "{name}: {} {unit} in all ({done} now, {:.1} a {}), saved {}",
        fly.meta.lessons.max(fly.meta.games),
        per * done as f64 / secs.max(1e-9),
        if games { "minute" } else { "second" },
        path.display()
    );
    if ship {
        let shipped = flychess_brain::shipped::repository_models().join(format!("{name}.fly"));
        fly.save(&shipped)?;
        println!("and {}", shipped.display());
    }
    Ok(())
}

fn estimate_json(e: &Estimate) -> serde_json::Value {
    serde_json::json!({"value": e.value, "low": e.low, "high": e.high})
}

/// A HOLD position with about 30 legal moves (the move-time figure's position).
fn thirty_moves(rows: &[Row]) -> Option<shakmaty::Chess> {
    use shakmaty::Position;
    rows.iter()
        .filter_map(|r| flychess_brain::chess::position_from_fen(&r.fen).ok())
        .min_by_key(|p| (p.legal_moves().len() as i64 - 30).abs())
}

/// The dopamine fly named (else the brain's shipped one, then the user's) and its model.
fn fly_and_model(which: &WhichBrain, data: &Path, name: Option<&str>) -> Result<(DopamineFly, BioBrain)> {
    let spec = which.spec(data)?;
    let (loaded, plain) = crate::cli::options::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    let path = match name {
        Some(n) => flychess_fly::fly::find(n, data)?,
        None => dopamine_flies(&loaded.checksum, data)
            .into_iter()
            .next()
            .map(|(p, _)| p)
            .ok_or_else(|| anyhow!("no dopamine fly for this brain yet: `flychess bio train --name NAME --lessons N`"))?,
    };
    if !is_dopamine_fly(&path) {
        return Err(anyhow!("{} is not a dopamine fly (`flychess eval` measures readout flies)", path.display()));
    }
    let fly = DopamineFly::load(&path)?;
    let b = bar(flychess_brain::brain::STEPS as u64, "dopamine fly's homeostasis (once per brain)");
    let bio = bio::prepare(&loaded.connectome, &loaded.checksum, &plain, &spec.brain_path(data), fly.meta.constants, &|t| {
        b.set_position(t as u64)
    })?;
    b.finish_and_clear();
    fly.check(&bio)?;
    Ok((fly, bio))
}

/// `flychess bio lesson`: one lesson seen from inside the mushroom body (the lesson comic).
fn lesson(args: &LessonArgs, data: &Path) -> Result<()> {
    use shakmaty::Position;
    let (which, fen, name, json) = (&args.which, args.fen.as_str(), args.fly.as_deref(), args.json);
    let (good, bad) = (args.good.as_deref(), args.bad.as_deref());
    let pos = flychess_brain::chess::position_from_fen(fen)?;
    let moves: Vec<shakmaty::Move> = pos.legal_moves().into_iter().collect();
    if moves.len() < 2 {
        return Err(anyhow!("a lesson needs two legal moves to compare"));
    }
    let find = |uci: &str| learn::legal_move(&pos, uci).ok_or_else(|| anyhow!("{uci} is not a legal move in {fen}"));
    let good = match good {
        Some(u) => find(u)?,
        None => {
            let path = flychess_fly::stockfish::find_stockfish(None)
                .map_err(|e| anyhow!("give --good, or install Stockfish to find the best move: {e}"))?;
            let mut engine = flychess_fly::stockfish::Engine::start(&path, &flychess_fly::stockfish::EngineOptions::default())?;
            let uci = engine
                .best_move(fen, flychess_fly::stockfish::Limit::Depth(12), std::time::Duration::from_secs(30))?
                .ok_or_else(|| anyhow!("Stockfish found no move"))?;
            find(&uci)?
        }
    };
    let bad = match bad {
        Some(u) => find(u)?,
        None => {
            let others: Vec<shakmaty::Move> = moves.iter().copied().filter(|m| *m != good).collect();
            others[flychess_fly::stats::Dice::new(1).below(others.len())]
        }
    };
    if good == bad {
        return Err(anyhow!("the good and the bad move are the same"));
    }
    let (fly, bio) = fly_and_model(which, data, name)?;
    let us = pos.turn();
    let l = learn::Lesson { good: learn::after(&pos, good, us), bad: learn::after(&pos, bad, us) };
    let c = flychess_arena::bio::comic::comic(&bio, &fly.m, &l);
    let uci = |m: shakmaty::Move| flychess_brain::chess::uci(&m);
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"fly": fly.meta.name, "fen": fen, "good": uci(good), "bad": uci(bad), "comic": c})
            )?
        );
        return Ok(());
    }
    println!("lesson for {} in {fen}: good {} (sugar), bad {} (shock)", fly.meta.name, uci(good), uci(bad));
    println!(
        "  Kenyon cells firing: {} after the good move, {} after the bad, {} for both ({} of {} pass the cut)",
        c.fire_good, c.fire_bad, c.fire_both, c.passing, c.kenyon_cells
    );
    println!("  vote: good {:.4}, bad {:.4}; dose {:.3}", c.vote_good, c.vote_bad, c.dose);
    println!("  the Kenyon cells' share of the MBONs' input at step 12: {:.1} %", 100.0 * c.kenyon_share);
    println!("  MBONs this lesson weakens most:");
    for m in c.mbons.iter().take(8) {
        println!(
            "    MBON #{:<3} ({}, PAM {:.2}, PPL1 {:.2}): {:+.5} of {:.4} ({:+.3} %)",
            m.index,
            if m.valence > 0.0 { "approach" } else { "avoid" },
            m.rho_pam,
            m.rho_ppl1,
            m.change,
            m.strength,
            100.0 * m.change / m.strength.max(1e-12)
        );
    }
    Ok(())
}

/// `flychess bio eval`: a dopamine fly measured as the seed did (pairs before and after, flips,
/// harder pairs, top-1, the logistic ceilings, speed), as text or JSON.
fn eval(args: &EvalArgs, data: &Path) -> Result<()> {
    let (which, name, json) = (&args.which, args.fly.as_deref(), args.json);
    let sizes = EvalSizes { pairs: args.pairs, ceiling_pairs: args.ceiling_pairs, top1: args.top1 };
    let dataset = Dataset::load(&shipped_path())?;
    let (fly, bio) = fly_and_model(which, data, name)?;
    let started = Instant::now();
    let hold = measure::pairs(dataset.hold(), EVAL_SEED, false, sizes.pairs)?;
    let harder = measure::pairs(dataset.hold(), EVAL_SEED, true, sizes.pairs)?;
    let b = bar(1, "the untrained body (measured once, then kept)");
    let base = measure::baseline(&bio, &dataset, data, &hold, &harder, sizes, &|stage, done, total| {
        b.set_length(total as u64);
        b.set_position(done as u64);
        b.set_message(stage.to_string());
    })?;
    b.finish_and_clear();
    let b = bar(hold.len() as u64 * 3, "the fly: pairs, again reversed, harder pairs");
    let after = measure::score(&bio, &fly.m, &hold, 64, &|n| b.set_position(n as u64));
    let flips = measure::rescore_flips(&bio, &fly.m, &hold, &after, 24);
    b.set_position(hold.len() as u64 * 2);
    let harder_after = measure::score(&bio, &fly.m, &harder, 64, &|n| b.set_position((2 * hold.len() + n) as u64));
    b.finish_and_clear();
    let b = bar(sizes.top1 as u64, "the fly: top-1 (positions)");
    let top1 = measure::top1(&bio, &fly.m, &dataset.hold()[..sizes.top1.min(dataset.hold().len())], &|n| b.set_position(n as u64))?;
    b.finish_and_clear();
    // Speed: one batch of lessons, and one move in a position with about 30 legal moves.
    let lessons: Vec<learn::Lesson> = measure::pairs(dataset.train(), EVAL_SEED + 1, false, bio.constants.batch)?;
    let mut scratch = fly.m.clone();
    let t = Instant::now();
    learn::tutor(&bio, &mut scratch, &lessons, fly.meta.rule);
    let lessons_per_second = lessons.len() as f64 / t.elapsed().as_secs_f64();
    let pos = thirty_moves(dataset.hold()).ok_or_else(|| anyhow!("no HOLD positions"))?;
    let t = Instant::now();
    let (moves, _, _) = bio.choose(&fly.m, &pos, &[]).ok_or_else(|| anyhow!("no legal move"))?;
    let move_seconds = t.elapsed().as_secs_f64();

    let (before_e, after_e) = (measure::pairs_right(&base.scores), measure::pairs_right(&after));
    let diff: Vec<f64> = measure::right(&after).iter().zip(measure::right(&base.scores)).map(|(a, b)| a - b).collect();
    let gain = stats::mean(&diff);
    let (hb, ha) = (measure::pairs_right(&base.harder), measure::pairs_right(&harder_after));
    let (t1b, t1a) = (stats::rate(base.top1.0, base.top1.1), stats::rate(top1.0, top1.1));
    let before_flips = measure::rescore_flips(&bio, &bio.body.m0, &hold[..hold.len().min(256)], &base.scores[..hold.len().min(256)], 24);
    let report = serde_json::json!({
        "fly": fly.meta.name,
        "player_id": fly.player_id(),
        "brain": fly.meta.brain,
        "mode": fly.meta.mode,
        "lessons": fly.meta.lessons,
        "games": fly.meta.games,
        "training_seconds": fly.meta.seconds,
        "constants": fly.meta.constants,
        "rule": fly.meta.rule,
        "kenyon_cells": bio.body.kenyon.len(),
        "kenyon_cells_passing": bio.body.pass,
        "mbons": bio.body.mbon.len(),
        "plastic_synapses": bio.body.synapses(),
        "pairs": hold.len(),
        "pairs_from": "HOLD: the board after Stockfish's best move against the board after a random other legal move (seeded), from the mover's side; a tie counts half",
        "pairs_right_before": estimate_json(&before_e),
        "pairs_right_after": estimate_json(&after_e),
        "pairs_right_gain": estimate_json(&gain),
        "flips": flips,
        "flips_how": "the same pairs scored a second time in reverse order, 24 pairs a look instead of 64: comparisons that came out the other way",
        "flips_before_on_256": before_flips,
        "harder_pairs": harder.len(),
        "harder_pairs_right_before": estimate_json(&hb),
        "harder_pairs_right_after": estimate_json(&ha),
        "top1_positions": top1.1,
        "top1_before": estimate_json(&t1b),
        "top1_after": estimate_json(&t1a),
        "logistic_ceiling_kc": estimate_json(&base.ceiling_kc.hold),
        "logistic_ceiling_dn": estimate_json(&base.ceiling_dn.hold),
        "ceilings": {"kc": base.ceiling_kc, "dn": base.ceiling_dn, "how": "logistic regression on the untrained model's feature differences (good − bad): Kenyon cells' r̂ at step 12, descending neurons' mean of steps 9–12; fitted on TRAIN pairs, L2 chosen on VAL pairs, reported on the HOLD pairs"},
        "speed": {"lessons_per_second": lessons_per_second, "move_seconds": move_seconds, "move_legal_moves": moves.len(), "engine": "cpu"},
        "seconds": started.elapsed().as_secs_f64(),
        "baseline_seconds": base.seconds,
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "dopamine fly {} ({} {}, {} synapses that learn), {} HOLD pairs:",
        fly.meta.name,
        fly.meta.lessons.max(fly.meta.games),
        fly.meta.mode,
        bio.body.synapses(),
        hold.len()
    );
    println!("  pairs right       before {}   after {}   gain {}", before_e.percent(), after_e.percent(), gain.points());
    println!("  flips             {flips} of {} (scored again in another order and batch size)", hold.len());
    println!("  harder pairs      before {}   after {}", hb.percent(), ha.percent());
    println!("  top-1 ({} pos.)  before {}   after {}", top1.1, t1b.percent(), t1a.percent());
    println!("  ceiling, Kenyon cells       {}   (logistic, {} train pairs)", base.ceiling_kc.hold.percent(), base.ceiling_kc.train_pairs);
    println!("  ceiling, descending neurons {}", base.ceiling_dn.hold.percent());
    println!("  speed: {lessons_per_second:.1} lessons a second; a move with {} legal moves in {:.2} s (CPU)", moves.len(), move_seconds);
    Ok(())
}

/// `bio speed`: a batch of lessons and a move in a position with about 30 legal moves, on the
/// CPU model and on the GPU engine `engine` chooses (auto: a hardware GPU only), each the fastest
/// of `repeat` runs; and the largest difference between the two engines' votes on the lessons'
/// boards, and whether they choose the same move.
fn speed(args: &SpeedArgs, data: &Path) -> Result<()> {
    let (which, name, lessons, repeat, json) = (&args.which, args.fly.as_deref(), args.lessons, args.repeat, args.json);
    let engine = args.engine.choice();
    let dataset = Dataset::load(&shipped_path())?;
    let (fly, on_cpu) = fly_and_model(which, data, name)?;
    let lessons: Vec<learn::Lesson> =
        measure::pairs(dataset.train(), EVAL_SEED + 1, false, lessons.unwrap_or(on_cpu.constants.batch).max(1))?;
    let pos = thirty_moves(dataset.hold()).ok_or_else(|| anyhow!("no HOLD positions"))?;
    let boards: Vec<flychess_brain::chess::Planes> = lessons.iter().flat_map(|l| [l.good, l.bad]).collect();
    let fastest = |f: &mut dyn FnMut()| {
        (0..repeat.max(1))
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    let measure = |bio: &BioBrain| -> Result<serde_json::Value> {
        let lesson_seconds = fastest(&mut || {
            let mut scratch = fly.m.clone();
            learn::tutor(bio, &mut scratch, &lessons, fly.meta.rule);
        });
        let mut chosen = None;
        let move_seconds = fastest(&mut || chosen = bio.choose(&fly.m, &pos, &[]).map(|(moves, _, i)| moves[i]));
        let chosen = chosen.ok_or_else(|| anyhow!("no legal move"))?;
        Ok(serde_json::json!({
            "lessons_per_second": lessons.len() as f64 / lesson_seconds,
            "move_seconds": move_seconds,
            "move": flychess_brain::chess::uci(&chosen),
        }))
    };
    let cpu = measure(&on_cpu)?;
    let mut on_gpu = on_cpu.clone();
    let described = on_gpu.think_on(engine)?;
    let (gpu, agreement) = if on_gpu.on_gpu() {
        let gpu = measure(&on_gpu)?;
        let (a, b) = (on_cpu.look(&fly.m, &boards).vote, on_gpu.look(&fly.m, &boards).vote);
        let worst = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0f32, f32::max);
        let agreement = serde_json::json!({
            "boards": boards.len(),
            "max_vote_difference": worst,
            "same_move": gpu["move"] == cpu["move"],
        });
        (Some(serde_json::json!({ "engine": described, "figures": gpu })), Some(agreement))
    } else {
        (None, None)
    };
    let legal_moves = {
        use shakmaty::Position;
        pos.legal_moves().len()
    };
    let ratio = |key: &str| gpu.as_ref().and_then(|g| Some(g["figures"][key].as_f64()? / cpu[key].as_f64()?));
    let report = serde_json::json!({
        "fly": fly.meta.name,
        "brain": fly.meta.brain,
        "lessons": lessons.len(),
        "move_legal_moves": legal_moves,
        "repeat": repeat.max(1),
        "cpu": { "engine": flychess_brain::brain::simulator::Simulator::Cpu.describe(), "figures": cpu },
        "gpu": gpu,
        "gpu_note": if gpu.is_none() { serde_json::Value::from(format!("no GPU engine: {described}")) } else { serde_json::Value::Null },
        "gpu_over_cpu": { "lessons_per_second": ratio("lessons_per_second"), "move_seconds": ratio("move_seconds") },
        "agreement": agreement,
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "dopamine fly {} ({} lessons, a move among {} legal moves; fastest of {}):",
        fly.meta.name,
        lessons.len(),
        report["move_legal_moves"],
        repeat.max(1)
    );
    let line = |who: &str, f: &serde_json::Value| {
        println!(
            "  {who}: {:.1} lessons a second, a move in {:.3} s ({})",
            f["lessons_per_second"].as_f64().unwrap_or(f64::NAN),
            f["move_seconds"].as_f64().unwrap_or(f64::NAN),
            f["move"].as_str().unwrap_or("?")
        )
    };
    line(report["cpu"]["engine"].as_str().unwrap_or("CPU"), &cpu);
    match (&gpu, &agreement) {
        (Some(g), Some(a)) => {
            line(g["engine"].as_str().unwrap_or("GPU"), &g["figures"]);
            println!(
                "  votes on {} boards within {:e} of the CPU model's; {}",
                a["boards"],
                a["max_vote_difference"].as_f64().unwrap_or(f64::NAN),
                if a["same_move"] == true { "the same move" } else { "another move" }
            );
        }
        _ => println!("  no GPU engine: {described}"),
    }
    Ok(())
}

/// One pilot of `bio pilots`.
struct Pilot {
    name: &'static str,
    variation: Variation,
}

fn pilots_list(lessons: usize) -> Vec<Pilot> {
    let share = |s: f32| Variation { pass_share: Some(s), ..Variation::default() };
    vec![
        Pilot { name: "the rule as it is (5% of Kenyon cells)", variation: Variation::default() },
        Pilot { name: "2% of Kenyon cells", variation: share(0.02) },
        Pilot { name: "10% of Kenyon cells", variation: share(0.10) },
        Pilot { name: "learning rate 10x smaller", variation: Variation { eta: Some(0.01), ..Variation::default() } },
        Pilot {
            name: "silent cells' synapses get stronger (Berry et al. 2018)",
            variation: Variation { rule: Rule { strengthen_silent: true, ..Rule::default() }, ..Variation::default() },
        },
        Pilot {
            name: "harder lessons after half",
            variation: Variation { rule: Rule { harder_after: Some(lessons / 2), ..Rule::default() }, ..Variation::default() },
        },
        Pilot { name: "3% of Kenyon cells", variation: share(0.03) },
        Pilot {
            name: "the dose from its own dopamine neurons, MBON feedback included (Felsenberg et al. 2017)",
            variation: Variation { rule: Rule { own_dopamine: true, ..Rule::default() }, ..Variation::default() },
        },
    ]
}

/// `flychess bio pilots`: the seed's variations of the rule trained side by side from the same
/// untrained mushroom body (each resumable from its file), each measured as `eval` measures.
fn pilots(args: &PilotsArgs, data: &Path) -> Result<()> {
    let PilotsArgs { lessons, pairs, top1, ref only, json, ref which } = *args;
    let dataset = Dataset::load(&shipped_path())?;
    let spec = which.spec(data)?;
    let (loaded, plain) = crate::cli::options::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    let hold = measure::pairs(dataset.hold(), EVAL_SEED, false, pairs)?;
    let harder = measure::pairs(dataset.hold(), EVAL_SEED, true, pairs)?;
    let mut rows = Vec::new();
    for (index, p) in pilots_list(lessons).into_iter().enumerate() {
        if !only.is_empty() && !only.contains(&index) {
            continue;
        }
        let started = Instant::now();
        let constants = p.variation.constants();
        let bio = bio::prepare(&loaded.connectome, &loaded.checksum, &plain, &spec.brain_path(data), constants, &|_| {})?;
        let before = measure::score(&bio, &bio.body.m0, &hold, 64, &|_| {});
        let dir = flychess_brain::files::DataFolder::at(data).bio().join("pilots");
        std::fs::create_dir_all(&dir)?;
        let file = dir.join(format!("{index}-{lessons}.fly"));
        // A pilot run before (the same rule, model and lessons) goes on from its file.
        let mut fly = match DopamineFly::load(&file) {
            Ok(f) if f.check(&bio).is_ok() && f.meta.rule == p.variation.rule && f.meta.lessons <= lessons => f,
            _ => DopamineFly::newborn(
                &format!("pilot {}", p.name),
                &bio,
                &loaded.connectome.provenance.label(),
                p.variation.rule,
                "tutor",
                1,
            ),
        };
        let b = bar(lessons as u64, p.name);
        let options = RunOptions { target: lessons, every: lessons, monitor_pairs: 256, stockfish: None };
        run::run(&bio, &mut fly, &dataset, &file, &options, &AtomicBool::new(false), &mut |e| {
            if let Progress::Lessons { done, .. } = e {
                b.set_position(done as u64)
            }
        })?;
        b.finish_and_clear();
        let after = measure::score(&bio, &fly.m, &hold, 64, &|_| {});
        let hard = measure::score(&bio, &fly.m, &harder, 64, &|_| {});
        let t1 = measure::top1(&bio, &fly.m, &dataset.hold()[..top1.min(dataset.hold().len())], &|_| {})?;
        let (b_e, a_e, h_e, t_e) =
            (measure::pairs_right(&before), measure::pairs_right(&after), measure::pairs_right(&hard), stats::rate(t1.0, t1.1));
        let gain = stats::mean(&measure::right(&after).iter().zip(measure::right(&before)).map(|(a, b)| a - b).collect::<Vec<f64>>());
        let row = serde_json::json!({
            "pilot": p.name, "index": index, "constants": constants, "rule": p.variation.rule, "lessons": lessons,
            "pairs_right_before": estimate_json(&b_e), "pairs_right_after": estimate_json(&a_e), "pairs_right_gain": estimate_json(&gain),
            "harder_pairs_right": estimate_json(&h_e), "top1": estimate_json(&t_e), "top1_positions": t1.1,
            "seconds": started.elapsed().as_secs_f64(),
        });
        eprintln!(
            "{:58} {} → {} ({})   harder {}   top-1 {}   ({:.0} s)",
            p.name,
            b_e.percent(),
            a_e.percent(),
            gain.points(),
            h_e.percent(),
            t_e.percent(),
            started.elapsed().as_secs_f64()
        );
        rows.push(row);
    }
    let report =
        serde_json::json!({"lessons": lessons, "pairs": hold.len(), "harder_pairs": harder.len(), "top1_positions": top1, "pilots": rows});
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(())
}

#[derive(Subcommand)]
pub enum BioCommand {
    /// Give a dopamine fly lessons (Stockfish's move: sugar; another legal move: a shock), or
    /// games with --games. Resumable: run it again with the same name to go on to --lessons.
    Train(TrainArgs),
    /// Measure a dopamine fly on held-out pairs (before and after training, flips, harder pairs,
    /// top-1, the logistic ceilings, speed). Default: the brain's shipped dopamine fly.
    Eval(EvalArgs),
    /// One lesson seen from inside the mushroom body (the lesson comic): Kenyon cells that fire
    /// after the good and the bad move, their overlap, the vote, the dose, the MBONs it changes.
    Lesson(LessonArgs),
    /// How fast a dopamine fly learns and moves on the CPU model and on the GPU engine, measured
    /// in one run, with how far the two engines' votes part. Default: the brain's shipped fly.
    Speed(SpeedArgs),
    /// The seed's pilots side by side, each from the same untrained mushroom body.
    Pilots(PilotsArgs),
}

/// Runs a `flychess bio …` subcommand.
pub fn run(cmd: BioCommand, data: &Path) -> Result<()> {
    match cmd {
        BioCommand::Train(args) => train(&args, data),
        BioCommand::Eval(args) => eval(&args, data),
        BioCommand::Lesson(args) => lesson(&args, data),
        BioCommand::Speed(args) => speed(&args, data),
        BioCommand::Pilots(args) => pilots(&args, data),
    }
}

// The arguments of `flychess bio train` (its help text is the subcommand's doc comment in `BioCommand`).
#[derive(Args)]
pub struct TrainArgs {
    #[arg(long)]
    pub name: String,
    /// Lessons in all (games with --games), counting those the fly already had.
    #[arg(long, default_value_t = 32_000)]
    pub lessons: usize,
    /// Learn from its own games instead (eligibility traces, dopamine from material).
    #[arg(long)]
    pub games: bool,
    /// Lessons between points of the curve (pairs right on VAL pairs) and saves.
    #[arg(long, default_value_t = 2_048)]
    pub every: usize,
    /// VAL pairs the curve is measured on.
    #[arg(long, default_value_t = 512)]
    pub monitor: usize,
    /// Seed of the lesson order and the other moves.
    #[arg(long, default_value_t = 1)]
    pub lesson_seed: u64,
    /// Share of Kenyon cells that pass (default 0.05).
    #[arg(long)]
    pub pass_share: Option<f32>,
    /// Learning rate η (default 0.1).
    #[arg(long)]
    pub eta: Option<f32>,
    /// Silent cells' synapses get stronger (a pilot).
    #[arg(long)]
    pub strengthen_silent: bool,
    /// The second best move as the bad one from this lesson on (a pilot).
    #[arg(long)]
    pub harder_after: Option<usize>,
    /// The dose from the fly's own dopamine neurons' rates instead of the connectome's shares (a pilot).
    #[arg(long)]
    pub own_dopamine: bool,
    /// Also write the fly into models/ (shipped with the app).
    #[arg(long)]
    pub ship: bool,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess bio eval` (its help text is the subcommand's doc comment in `BioCommand`).
#[derive(Args)]
pub struct EvalArgs {
    #[arg(long)]
    pub fly: Option<String>,
    /// HOLD pairs (at least 2,048 for the must-show figures).
    #[arg(long, default_value_t = 2_048)]
    pub pairs: usize,
    /// TRAIN pairs the logistic ceilings are fitted on.
    #[arg(long, default_value_t = 8_192)]
    pub ceiling_pairs: usize,
    /// HOLD positions for top-1 (every legal move looked at).
    #[arg(long, default_value_t = 300)]
    pub top1: usize,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess bio lesson` (its help text is the subcommand's doc comment in `BioCommand`).
#[derive(Args)]
pub struct LessonArgs {
    #[arg(long)]
    pub fen: String,
    /// The good move (default: Stockfish's best).
    #[arg(long)]
    pub good: Option<String>,
    /// The bad move (default: a random other legal move).
    #[arg(long)]
    pub bad: Option<String>,
    /// The dopamine fly (default: the brain's shipped one).
    #[arg(long)]
    pub fly: Option<String>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess bio speed` (its help text is the subcommand's doc comment in `BioCommand`).
#[derive(Args)]
pub struct SpeedArgs {
    #[arg(long)]
    pub fly: Option<String>,
    /// Lessons timed (one batch of the fly's size by default).
    #[arg(long)]
    pub lessons: Option<usize>,
    /// Times each measurement is repeated (the fastest is reported).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess bio pilots` (its help text is the subcommand's doc comment in `BioCommand`).
#[derive(Args)]
pub struct PilotsArgs {
    #[arg(long, default_value_t = 8_192)]
    pub lessons: usize,
    #[arg(long, default_value_t = 1_024)]
    pub pairs: usize,
    #[arg(long, default_value_t = 200)]
    pub top1: usize,
    /// Only these pilots (their numbers in the list, from 0).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<usize>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub which: WhichBrain,
}
