//! `flychess train` and `flychess eval`: fitting a fly's readout over the DN-rate cache (the fast
//! way) with a progress bar and a metrics log the Train tab can draw, and measuring a fly on HOLD
//! next to the controls fitted the same way on the same rows (the blind baseline and the
//! board-linear readout), plus the random mover.

use crate::cli::brain_training::BrainTrainArgs;
use crate::cli::{EngineArgs, FitArgs, UciEnginesArgs, WhichBrain};
use clap::Args;
use std::path::Path;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, anyhow};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use flychess_brain::brain::simulator::{self, EngineChoice, Simulator};
use flychess_fly::cache::Reading;
use flychess_fly::data::{Dataset, HOLD, Row, VAL, shipped_path};
use flychess_fly::fly::{self, Fly};
use flychess_fly::readout::Readout;
use flychess_fly::stats;
use flychess_learning::train::{FitOptions, Metrics, PassRecord, PositionOutcome, Target, board_features, fit, outcomes, summarise};

use flychess::players::{charles_runs, dopamine_of_brain, flies_of_brain, player_on_terminal};
use flychess::profiling::games_file;
use flychess_arena::players::{Named, kit_parts};

pub(crate) fn targets(rows: &[Row]) -> Result<Vec<Target>> {
    Ok(rows.par_iter().map(Target::of).collect::<flychess_fly::Result<Vec<_>>>()?)
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
pub(crate) fn fit_logged(
    name: &str,
    options: &FitOptions,
    start: &Readout,
    train: (&[f32], &[Target]),
    val: (&[f32], &[Target]),
) -> Result<(Readout, Metrics)> {
    let bar = ProgressBar::new(options.max_passes as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg:12} pass {pos:>2}/{len} [{bar:30}] {elapsed} {wide_msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(name.to_string());
    bar.suspend(|| eprintln!("{name}: fitting on {}", options.on.describe().unwrap_or_else(|e| e.to_string())));
    let fitted = fit(
        start,
        train.0,
        train.1,
        val.0,
        val.1,
        options,
        &mut |p: &PassRecord, _| {
            bar.set_position(p.pass as u64);
            bar.suspend(|| eprintln!("{}", pass_line(name, p)));
        },
        &|| false,
    );
    bar.finish_and_clear();
    Ok(fitted?)
}

#[allow(clippy::too_many_arguments)]
pub fn train(
    which: &WhichBrain,
    data: &Path,
    name: &str,
    positions: Option<usize>,
    read: &[usize],
    ship: bool,
    options: &FitOptions,
    lessons: f64,
    engine: EngineChoice,
    games: Option<flychess::training::GamesMix>,
    curriculum: Option<flychess::training::CurriculumMix>,
    from: Option<flychess::training::StartFrom>,
    json: bool,
) -> Result<()> {
    use flychess::training::{self, Controls, Prepared, TrainEvent, TrainJob};
    // A shipped fly's name only for the developers' --ship, which replaces that fly itself.
    if ship {
        fly::check_name(name)?
    } else {
        fly::check_new_name(name)?
    }
    let (reading, _) = reading_of(read)?;
    let spec = crate::cli::brain::spec(which, data)?;
    let (loaded, brain) = crate::cli::brain::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    let n = positions.unwrap_or(usize::MAX);
    let prepared = Prepared {
        connectome: &loaded.connectome,
        brain: &brain,
        checksum: &loaded.checksum,
        spec_name: spec.name(),
        engine,
        sensor: flychess_fly::cache::Sensor::Brain,
    };
    let job = TrainJob { name: name.to_string(), positions: n, reading, options: options.clone(), lessons, games, curriculum, from };
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
        TrainEvent::Resumed { passes, why } => bar.suspend(|| eprintln!("{name}: resumed after pass {passes}, on {why}")),
        TrainEvent::Done { .. } | TrainEvent::Stopped => {}
    })?;
    bar.finish_and_clear();
    let f = fly.ok_or_else(|| anyhow!("the run was stopped"))?;
    if ship {
        f.save(&flychess_brain::shipped::repository_models().join(format!("{name}.fly")))?;
    }
    let (val, hold) = (f.meta.val.unwrap_or_default(), f.meta.hold.unwrap_or_default());
    let saved = flychess_brain::files::DataFolder::at(data).flies().join(format!("{name}.fly"));
    let peak = crate::cli::brain::peak_memory_mb();
    if json {
        let figures = |m: &flychess_fly::scoring::Metrics| serde_json::json!({"top1": m.top1, "good": m.good, "loss": m.loss});
        let report = serde_json::json!({
            "name": name,
            "seconds": started.elapsed().as_secs_f64(),
            "positions_trained": f.meta.train_positions,
            "teacher": f.meta.teacher,
            "positions_by_teacher": f.meta.positions_by_teacher,
            "peak_memory_mb": peak,
            "val": figures(&val),
            "hold": figures(&hold),
            "saved": saved,
            "shipped": ship,
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "{name}: fitted in {:.0} s on {} positions (peak memory {}); VAL top-1 {:.1}%, HOLD top-1 {:.1}% (good {:.1}%, loss {:.3})\n  saved {}{}",
        started.elapsed().as_secs_f64(),
        f.meta.train_positions,
        peak.map(|m| format!("{m:.0} MB")).unwrap_or_else(|| "unknown".into()),
        100.0 * val.top1,
        100.0 * hold.top1,
        100.0 * hold.good,
        hold.loss,
        saved.display(),
        if ship { " and models/" } else { "" }
    );
    Ok(())
}

/// Who taught a fly and how many positions each source taught: the fly's own words where it
/// keeps them (issue 55 on); for a fly made before, what its data line says: the shipped rows'
/// scored moves and, at scale, "…; and N positions of SOURCE" master moves with the games' results.
pub(crate) fn taught_by(meta: &flychess_fly::fly::FlyMeta) -> (String, std::collections::BTreeMap<String, usize>) {
    if let (Some(words), Some(by)) = (&meta.teacher, &meta.positions_by_teacher) {
        return (words.clone(), by.clone());
    }
    let shipped = "Stockfish's scored moves (MultiPV) on the shipped rows";
    let games = meta.data.split("; and ").nth(1).and_then(|rest| rest.split(' ').next()).and_then(|n| n.parse::<usize>().ok());
    let mut by = std::collections::BTreeMap::new();
    match games.filter(|&n| n <= meta.train_positions) {
        Some(n) => {
            by.insert("master".to_string(), n);
            by.insert("stockfish_multipv".to_string(), meta.train_positions - n);
            (format!("master's move on {n} games rows (value: the game's result); {shipped}"), by)
        }
        None => {
            by.insert("stockfish_multipv".to_string(), meta.train_positions);
            (shipped.to_string(), by)
        }
    }
}

/// One row of `eval`'s table: a player's HOLD figures with their 95 % intervals, and its
/// difference from the fly on the same positions; printed as text or as JSON from the same row.
pub(crate) struct PlayerRow {
    player: String,
    top1: stats::Estimate,
    good: stats::Estimate,
    loss: stats::Estimate,
    fly_minus_top1: stats::Estimate,
    fly_minus_good: stats::Estimate,
}

impl PlayerRow {
    pub(crate) fn of(player: impl Into<String>, per: &[PositionOutcome], fly: &[PositionOutcome]) -> PlayerRow {
        let hits = |o: &[PositionOutcome], f: fn(&PositionOutcome) -> bool| o.iter().map(f).collect::<Vec<bool>>();
        let (top1, good) = (hits(per, |o| o.top1), hits(per, |o| o.good));
        PlayerRow {
            player: player.into(),
            top1: stats::rate_of(&top1),
            good: stats::rate_of(&good),
            loss: stats::mean(&per.iter().map(|o| o.loss).collect::<Vec<_>>()),
            fly_minus_top1: stats::paired_difference(&hits(fly, |o| o.top1), &top1),
            fly_minus_good: stats::paired_difference(&hits(fly, |o| o.good), &good),
        }
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "player": self.player,
            "top1": self.top1.value, "top1_interval": [self.top1.low, self.top1.high],
            "good": self.good.value, "good_interval": [self.good.low, self.good.high],
            "loss": self.loss.value, "loss_interval": [self.loss.low, self.loss.high],
            "fly_minus_this_top1": self.fly_minus_top1,
            "fly_minus_this_good": self.fly_minus_good,
        })
    }

    pub(crate) fn line(&self) -> String {
        let versus = if self.player == "fly" { String::new() } else { format!("  fly − this: {}", self.fly_minus_top1.points()) };
        format!("  {:16} top-1 {}  good {}  loss {:.3}{versus}", self.player, self.top1.percent(), self.good.percent(), self.loss.value)
    }
}

/// The control with the brain's wiring shuffled (seed 1): its DN-rate cache (made once, kept in
/// DATA/cache) and a readout fitted on it exactly as the fly's, measured on HOLD.
#[allow(clippy::too_many_arguments)]
fn shuffled_control(
    which: &WhichBrain,
    data: &Path,
    n: usize,
    reading: Reading,
    options: &FitOptions,
    hold_t: &[Target],
    val_t: &[Target],
    train_t: &[Target],
    human_t: &[Target],
) -> Result<(Vec<PositionOutcome>, Vec<PositionOutcome>)> {
    let mut shuffled = which.clone();
    shuffled.shuffle_wiring = Some(1);
    eprintln!("shuffled wiring: caching the DN rates of the same brain with its connections handed out again (seed 1)");
    let (cache, _) = crate::cli::brain::cache(&shuffled, data, Some(n), None, EngineChoice::Auto)?;
    let x = |r: std::ops::Range<usize>| cache.read(r, reading);
    let start = Readout::newborn(cache.meta.descending, reading.steps(), 1);
    let (readout, _) = fit_logged("shuffled", options, &start, (&x(HOLD + VAL..n)?, train_t), (&x(HOLD..HOLD + VAL)?, val_t))?;
    let human = human_features(&shuffled, data, human_t.len(), reading)?;
    Ok((outcomes(&readout, &x(0..HOLD)?, hold_t), outcomes(&readout, &human, human_t)))
}

/// The human test (the shipped `human-test.flyd`: positions from master games no training row
/// came from, each labelled with the move the master played): its first `n` HOLD rows.
fn human_test(n: Option<usize>) -> Result<Vec<Row>> {
    let d = Dataset::load(&flychess_fly::data::human_test_path())?;
    let hold = d.hold();
    Ok(hold[..n.unwrap_or(hold.len()).min(hold.len())].to_vec())
}

/// The DN readings of the human test's first `n` positions on a brain (cached like any dataset's).
fn human_features(which: &WhichBrain, data: &Path, n: usize, reading: Reading) -> Result<Vec<f32>> {
    let (cache, _) = crate::cli::brain::cache_of(which, data, &flychess_fly::data::human_test_path(), Some(n), None, EngineChoice::Auto)?;
    Ok(cache.read(0..n, reading)?)
}

#[allow(clippy::too_many_arguments)]
pub fn eval(
    which: &WhichBrain,
    data: &Path,
    name: Option<&str>,
    positions: Option<usize>,
    json: bool,
    options: &FitOptions,
    controls: bool,
    human_positions: Option<usize>,
    against: &[String],
    curriculum: Option<PathBuf>,
    controls_at_scale: Option<(&str, &[String])>,
) -> Result<()> {
    let dataset = Dataset::load(&shipped_path())?;
    // The fly: the one named, else the brain's own (the default brain's shipped fly).
    let (name, f) = match name {
        Some(name) => (name.to_string(), Fly::load(&fly::find(name, data)?)?),
        None => {
            let spec = crate::cli::brain::spec(which, data)?;
            // Only the brain's id is needed here (the cache below loads it with its homeostasis).
            let loaded = flychess_brain::store::ensure(&spec, data, &|_, _| {})?;
            let (name, path) = fly::trained_for(&loaded.checksum, data).ok_or_else(|| {
                anyhow!(
                    "no trained fly for {} ({}); train one with `flychess train --name NAME`, or name one with --fly",
                    loaded.connectome.provenance.label(),
                    fly::short_checksum(&loaded.checksum)
                )
            })?;
            (name, Fly::load(&path)?)
        }
    };
    let name = name.as_str();
    let n = positions.unwrap_or(HOLD + VAL + f.meta.train_positions).min(dataset.rows.len());
    // The controls are fitted on the rows after HOLD and VAL: refused before anything is cached.
    if n <= HOLD + VAL {
        return Err(anyhow!(
            "eval --positions {n}: the first {} rows are HOLD and VAL, and the controls are fitted on the rows after them; give more than {}",
            HOLD + VAL,
            HOLD + VAL
        ));
    }
    // The fly is measured on HOLD only (the controls read the board, not the brain), so only HOLD's
    // rates are cached here (the first rows of the cache that training fills further).
    let (cache, loaded) = crate::cli::brain::cache(which, data, Some(HOLD), None, EngineChoice::Auto)?;
    if cache.meta.brain_checksum != f.meta.brain_checksum {
        return Err(anyhow!(
            "fly {name} belongs to brain {} ({}), not to the brain asked for ({})",
            f.meta.brain,
            fly::short_checksum(&f.meta.brain_checksum),
            fly::short_checksum(&cache.meta.brain_checksum)
        ));
    }
    let rows = &dataset.rows[..n];
    let (hold_rows, val_rows, train_rows) = (&rows[..HOLD], &rows[HOLD..HOLD + VAL], &rows[HOLD + VAL..]);
    let (hold_t, val_t, train_t) = (targets(hold_rows)?, targets(val_rows)?, targets(train_rows)?);
    // The human test: does the fly's favourite match the move a master played?
    let human_rows = human_test(human_positions)?;
    let human_t = targets(&human_rows)?;
    let fly_hx = human_features(which, data, human_rows.len(), f.meta.reading)?;
    let fly_h = outcomes(&f.readout, &fly_hx, &human_t);
    let fly_x = cache.read(0..HOLD, f.meta.reading)?;
    let fly_o = outcomes(&f.readout, &fly_x, &hold_t);
    // The value head against Stockfish's win chance on HOLD, by rank (the target value is a
    // monotone map of the best move's win %), beside what a plain material count ranks.
    let d = f.readout.inputs;
    let fly_values: Vec<f64> = (0..hold_rows.len()).map(|i| f.readout.heads(&fly_x[i * d..(i + 1) * d]).value as f64).collect();
    let stockfish_values: Vec<f64> = hold_t.iter().map(|t| t.value as f64).collect();
    let material: Vec<f64> = hold_rows.iter().map(material_balance).collect::<Result<_>>()?;
    let value_rho = flychess_fly::stats::spearman(&fly_values, &stockfish_values);
    let material_rho = flychess_fly::stats::spearman(&material, &stockfish_values);
    // The blind baseline: no input, only the biases (from/to/promotion popularity).
    let blind_start = Readout::newborn(0, vec![], 1);
    let (blind, _) = fit_logged("blind", options, &blind_start, (&[], &train_t), (&[], &val_t))?;
    let blind_o = outcomes(&blind, &[], &hold_t);
    // The board-linear readout: the same heads on the 768 board planes, no brain.
    let planes =
        |rs: &[Row]| -> Result<Vec<f32>> { Ok(rs.par_iter().map(board_features).collect::<flychess_fly::Result<Vec<_>>>()?.concat()) };
    let board_start = Readout::newborn(768, vec![], 1);
    let (board, _) = fit_logged("board-linear", options, &board_start, (&planes(train_rows)?, &train_t), (&planes(val_rows)?, &val_t))?;
    let board_o = outcomes(&board, &planes(hold_rows)?, &hold_t);
    // Shuffled wiring: only for a fly of an unaltered brain (a control's fly is its own control).
    let is_plain = matches!(loaded.connectome.provenance.control, flychess_brain::connectome::Control::None);
    let (shuffled_o, shuffled_h) = if controls && is_plain {
        let (o, h) = shuffled_control(which, data, n, f.meta.reading, options, &hold_t, &val_t, &train_t, &human_t)?;
        (Some(o), Some(h))
    } else {
        (None, None)
    };
    let blind_h = outcomes(&blind, &[], &human_t);
    let board_h = outcomes(&board, &planes(&human_rows)?, &human_t);
    let mut human_table = vec![
        PlayerRow::of("fly", &fly_h, &fly_h),
        PlayerRow::of("blind", &blind_h, &fly_h),
        PlayerRow::of("board-linear", &board_h, &fly_h),
    ];
    if let Some(h) = &shuffled_h {
        human_table.push(PlayerRow::of("shuffled wiring", h, &fly_h));
    }
    let human_random = human_t.iter().map(|t| 1.0 / t.legal.len() as f64).sum::<f64>() / human_t.len().max(1) as f64;
    let random_top1 = hold_t.iter().map(|t| 1.0 / t.legal.len() as f64).sum::<f64>() / hold_t.len() as f64;
    let (won, fastest) = fastest_wins(&f.readout, &fly_x, hold_rows)?;
    // The curriculum's held-out won positions, where there is a curriculum: the fly's finishing,
    // and a reader of its readings for the flies it is compared with.
    let curriculum_held = match curriculum.filter(|p| p.exists()) {
        Some(path) => {
            let c = flychess::finishing::load(&path)?;
            let held = c.hold().to_vec();
            let (cc, _) = crate::cli::brain::cache_of(which, data, &path, Some(held.len()), None, EngineChoice::Auto)?;
            Some((held, cc))
        }
        None => None,
    };
    let finishing = match &curriculum_held {
        Some((held, cc)) => Some(flychess::finishing::judge(&f.readout, &cc.read(0..held.len(), f.meta.reading)?, held)?),
        None => None,
    };
    let mut finishing_against = Vec::new();
    let (fly_m, blind_m, board_m) = (summarise(&fly_o), summarise(&blind_o), summarise(&board_o));
    let mut table = vec![
        PlayerRow::of("fly", &fly_o, &fly_o),
        PlayerRow::of("blind", &blind_o, &fly_o),
        PlayerRow::of("board-linear", &board_o, &fly_o),
    ];
    if let Some(o) = &shuffled_o {
        table.push(PlayerRow::of("shuffled wiring", o, &fly_o));
    }
    // The controls fitted on the fly's own rows and teachers (`--controls-at-scale RUN`).
    let at_scale = match controls_at_scale {
        Some((run, only)) => {
            let at =
                crate::cli::controls::controls_at_scale(which, data, (run, only), &f.meta.brain_checksum, &hold_t, &human_rows, &human_t)?;
            for c in &at {
                table.push(PlayerRow::of(&c.player, &c.hold, &fly_o));
                human_table.push(PlayerRow::of(&c.player, &c.human, &fly_h));
            }
            Some(crate::cli::controls::report(run, &fly_o, &fly_h, &at))
        }
        None => None,
    };
    // Other flies of this brain, on the same rows (their features from the same caches).
    for other in against {
        let o = Fly::load(&fly::find(other, data)?)?;
        if o.meta.brain_checksum != f.meta.brain_checksum {
            return Err(anyhow!(
                "fly {other} belongs to brain {} ({}), not to {name}'s",
                o.meta.brain,
                fly::short_checksum(&o.meta.brain_checksum)
            ));
        }
        // The fly's own features serve when the other reads the same steps; else its own reading.
        let (x, hx) = if o.meta.reading == f.meta.reading {
            (std::borrow::Cow::Borrowed(&fly_x[..]), std::borrow::Cow::Borrowed(&fly_hx[..]))
        } else {
            let hx = human_features(which, data, human_rows.len(), o.meta.reading)?;
            (std::borrow::Cow::Owned(cache.read(0..HOLD, o.meta.reading)?), std::borrow::Cow::Owned(hx))
        };
        table.push(PlayerRow::of(format!("fly {other}"), &outcomes(&o.readout, &x, &hold_t), &fly_o));
        human_table.push(PlayerRow::of(format!("fly {other}"), &outcomes(&o.readout, &hx, &human_t), &fly_h));
        if let (Some((held, cc)), Some(mine)) = (&curriculum_held, &finishing) {
            let theirs = flychess::finishing::judge(&o.readout, &cc.read(0..held.len(), o.meta.reading)?, held)?;
            let d = stats::paired_difference(&mine.fastest, &theirs.fastest);
            finishing_against.push(serde_json::json!({
                "fly": other,
                "fastest_win": theirs.fastest_win.value,
                "fastest_win_interval": [theirs.fastest_win.low, theirs.fastest_win.high],
                "stalemated": theirs.stalemated.value,
                "fly_minus_this_fastest_win": d.value,
                "fly_minus_this_fastest_win_interval": [d.low, d.high],
            }));
        }
    }
    let taught = taught_by(&f.meta);
    let finishing_by_kind = finishing.as_ref().map(|c| {
        c.by_kind
            .iter()
            .map(|(k, (n, hit))| (k.clone(), serde_json::json!({"positions": n, "fastest": hit})))
            .collect::<serde_json::Map<_, _>>()
    });
    let mut report = serde_json::json!({
        "fly": name,
        "brain": f.meta.brain,
        "brain_checksum": f.meta.brain_checksum,
        "hold_positions": HOLD,
        "train_positions": train_rows.len(),
        "positions_trained": f.meta.train_positions,
        "teacher": taught.0,
        "positions_by_teacher": taught.1,
        "top1": fly_m.top1, "good": fly_m.good, "loss": fly_m.loss, "policy_loss": fly_m.policy_loss,
        "top1_interval": [table[0].top1.low, table[0].top1.high],
        "blind_top1": blind_m.top1, "blind_good": blind_m.good, "blind_loss": blind_m.loss,
        "board_top1": board_m.top1, "board_good": board_m.good, "board_loss": board_m.loss,
        "shuffled_top1": shuffled_o.as_ref().map(|o| summarise(o).top1),
        "fly_minus_blind_top1": table[1].fly_minus_top1,
        "random_top1": random_top1,
        "players": table.iter().map(PlayerRow::json).collect::<Vec<_>>(),
        "human_positions": human_t.len(),
        "human_top1": human_table[0].top1.value,
        "human_top1_interval": [human_table[0].top1.low, human_table[0].top1.high],
        "human_random_top1": human_random,
        "human_players": human_table.iter().map(PlayerRow::json).collect::<Vec<_>>(),
        "value_rho": value_rho.map(|e| e.value),
        "value_rho_interval": value_rho.map(|e| [e.low, e.high]),
        "material_rho": material_rho.map(|e| e.value),
        "material_rho_interval": material_rho.map(|e| [e.low, e.high]),
        "controls_at_scale": at_scale,
    });
    // How it finishes won games (issue 56), beside the rest.
    let finishing_report = serde_json::json!({
        "won_positions": finishing.as_ref().map_or(won, |c| c.won_positions),
        "fastest_win": match &finishing {
            Some(c) => serde_json::json!(c.fastest_win.value),
            None if won > 0 => serde_json::json!(fastest as f64 / won as f64),
            None => serde_json::Value::Null,
        },
        "fastest_win_interval": finishing.as_ref().map(|c| [c.fastest_win.low, c.fastest_win.high]),
        "fastest_win_from": if finishing.is_some() { "the curriculum's held-out won positions" } else { "HOLD positions with a forced mate" },
        "stalemate_lessons": finishing.as_ref().map(|c| c.stalemate_lessons),
        "stalemated": finishing.as_ref().map(|c| c.stalemated.value),
        "stalemated_interval": finishing.as_ref().map(|c| [c.stalemated.low, c.stalemated.high]),
        "finishing_by_kind": finishing_by_kind,
        "hold_mates": won,
        "hold_fastest_mates": fastest,
        "finishing_against": finishing_against,
    });
    if let (Some(report), serde_json::Value::Object(more)) = (report.as_object_mut(), finishing_report) {
        report.extend(more);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{name} ({}) on HOLD ({HOLD} positions), controls fitted on the same {} TRAIN positions; 95 % intervals:",
            f.meta.brain,
            train_rows.len()
        );
        for row in &table {
            println!("{}", row.line());
        }
        println!("  {:16} top-1 {:5.1}%", "random move", 100.0 * random_top1);
        println!(
            "the human test ({} positions from master games no training row came from): top-1 = the master's move is the favourite",
            human_t.len()
        );
        for row in &human_table {
            println!("{}", row.line());
        }
        println!("  {:16} top-1 {:5.1}%", "random move", 100.0 * human_random);
        if let (Some(v), Some(m)) = (value_rho, material_rho) {
            println!(
                "  the value head ranks HOLD positions as Stockfish's win chance does: Spearman ρ {:.3} [{:.3}, {:.3}]; a plain material count: {:.3} [{:.3}, {:.3}]",
                v.value, v.low, v.high, m.value, m.low, m.high
            );
        }
        if let Some(c) = &finishing {
            println!(
                "  finishing: on {} held-out won positions of the curriculum the favourite is the quickest win in {}; in {} stalemate lessons it stalemates in {}",
                c.won_positions,
                c.fastest_win.percent(),
                c.stalemate_lessons,
                c.stalemated.percent()
            );
            for a in &finishing_against {
                println!(
                    "    fly {}: quickest win {:.1} %; {name} − it: {:+.1} points [{:+.1}, {:+.1}]",
                    a["fly"].as_str().unwrap_or(""),
                    100.0 * a["fastest_win"].as_f64().unwrap_or(f64::NAN),
                    100.0 * a["fly_minus_this_fastest_win"].as_f64().unwrap_or(f64::NAN),
                    100.0 * a["fly_minus_this_fastest_win_interval"][0].as_f64().unwrap_or(f64::NAN),
                    100.0 * a["fly_minus_this_fastest_win_interval"][1].as_f64().unwrap_or(f64::NAN),
                );
            }
        }
        if won > 0 {
            println!(
                "  fastest win: on {won} HOLD positions Stockfish sees a forced mate in; the fly's favourite is the quickest mate in {fastest} ({:.1}%)",
                100.0 * fastest as f64 / won as f64
            );
        }
    }
    Ok(())
}

/// The material of the side to move less the other side's (pawn 1, knight and bishop 3, rook 5,
/// queen 9), read off the row's FEN.
fn material_balance(row: &Row) -> Result<f64> {
    use shakmaty::{Position, Role};
    let pos = flychess_brain::chess::position_from_fen(&row.fen)?;
    let board = pos.board();
    let worth = |c: shakmaty::Color| -> f64 {
        [(Role::Pawn, 1.0), (Role::Knight, 3.0), (Role::Bishop, 3.0), (Role::Rook, 5.0), (Role::Queen, 9.0)]
            .iter()
            .map(|&(r, v)| v * (board.by_role(r) & board.by_color(c)).count() as f64)
            .sum()
    };
    Ok(worth(pos.turn()) - worth(!pos.turn()))
}

/// Of the rows where Stockfish found a forced mate for the side to move, how many, and in how many
/// the fly's most probable move is one of the quickest mates labelled.
fn fastest_wins(readout: &Readout, x: &[f32], rows: &[Row]) -> Result<(usize, usize)> {
    use flychess_brain::chess::position_from_fen;
    use flychess_fly::grading::Score;
    use flychess_fly::readout::policy;

    let d = readout.inputs;
    let mut won = 0;
    let mut found = 0;
    for (i, row) in rows.iter().enumerate() {
        let quickest = row
            .moves
            .iter()
            .filter_map(|m| match m.score {
                Score::Mate(n) if n > 0 => Some(n),
                _ => None,
            })
            .min();
        let Some(q) = quickest else { continue };
        won += 1;
        let pos = position_from_fen(&row.fen)?;
        let p = policy(&pos, &readout.heads(&x[i * d..(i + 1) * d]));
        let Some(fav) = (0..p.moves.len()).max_by(|&a, &b| p.probability[a].total_cmp(&p.probability[b])) else { continue };
        let uci = flychess_brain::chess::uci(&p.moves[fav]);
        if row.moves.iter().any(|m| m.score == Score::Mate(q) && m.mv.uci() == uci) {
            found += 1;
        }
    }
    Ok((won, found))
}

/// A newborn fly (untrained readout) for a brain, saved like any other (by the lab, as the Flies
/// tab saves one).
pub fn newborn(which: &WhichBrain, data: &Path, name: &str, ship: bool) -> Result<()> {
    if !ship {
        fly::check_new_name(name)?;
    }
    let spec = crate::cli::brain::spec(which, data)?;
    let (loaded, brain) = crate::cli::brain::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    let path = flychess::lab::flies::save_newborn(&loaded.connectome, &loaded.checksum, &brain, data, name)?;
    if ship {
        Fly::load(&path)?.save(&flychess_brain::shipped::repository_models().join(format!("{name}.fly")))?;
    }
    println!("saved the newborn fly {}", path.display());
    Ok(())
}

/// Where `analyse` reads its positions: one FEN, or a file of one FEN per line.
pub enum Positions {
    One(String),
    File(std::path::PathBuf),
}

/// Positions per think in `analyse`: memory stays this many boards' worth, whatever the file.
const ANALYSE_BATCH: usize = 32;
/// The longest line `analyse --fens` reads as a FEN (a FEN is under 100 characters).
const MAX_FEN_LINE: usize = 512;

/// The fly's view of positions: every legal move with its probability (UCI and SAN), its value
/// and its choice, and with `imagination` the move one-move imagination plays (weight W; the
/// fly's tuned weight when W is not given) with the value it saw after each move. A file is
/// streamed ANALYSE_BATCH positions at a time, one JSON value per position as it goes (JSON
/// lines); a line that is not a FEN is reported with its number and the rest go on.
pub fn analyse(
    which: &WhichBrain,
    data: &Path,
    name: &str,
    positions: Positions,
    json: bool,
    imagination: Option<Option<f32>>,
) -> Result<()> {
    use flychess_arena::play::think_and_look_ahead;
    use flychess_brain::chess::{planes, position_from_fen};
    use flychess_brain::files::{BoundedLines, Line, quote};
    use flychess_fly::readout::{choose, policy, think_features};
    use shakmaty::Position;
    use shakmaty::san::San;
    use std::io::Write;
    let f = Fly::load(&fly::find(name, data)?)?;
    // Read the input before the brain loads: a missing file or a bad single FEN fails at once.
    // Lines are bounded (a FEN is under 100 characters): a longer one is read past, not held,
    // and reported with its first characters only.
    let (lines, single): (Box<dyn Iterator<Item = std::io::Result<Line>>>, bool) = match positions {
        Positions::One(fen) => {
            position_from_fen(&fen)?;
            (Box::new(std::iter::once(Ok(Line::Text(fen)))), true)
        }
        Positions::File(path) => {
            // A folder opens on Linux and fails only when read ("Is a directory", no name).
            if path.is_dir() {
                return Err(anyhow!("{}: a folder, not a file of FENs (one a line)", path.display()));
            }
            let file = std::fs::File::open(&path).with_context(|| format!("{}", path.display()))?;
            (Box::new(BoundedLines::new(std::io::BufReader::new(file), MAX_FEN_LINE)), false)
        }
    };
    let spec = crate::cli::brain::spec(which, data)?;
    let (loaded, brain) = crate::cli::brain::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    if loaded.checksum != f.meta.brain_checksum {
        return Err(anyhow!("fly {name} belongs to brain {}, not to {}", f.meta.brain, loaded.connectome.provenance.label()));
    }
    let weight = imagination.map(|w| w.unwrap_or_else(|| flychess::training::tuned_imagination(data, &f)));
    let descending = &loaded.connectome.groups.descending;
    let uci = |m: &shakmaty::Move| flychess_brain::chess::uci(m);
    let describe = |line: usize, fen: &str, pos: &shakmaty::Chess, features: Option<&[f32]>| -> serde_json::Value {
        let (p, seen) = match (weight, features) {
            (None, Some(d)) => (policy(pos, &f.readout.heads(d)), None),
            _ => {
                let (p, seen) = think_and_look_ahead(&brain, &f.readout, descending, pos, &[]);
                (p, Some(seen))
            }
        };
        let mut order: Vec<usize> = (0..p.moves.len()).collect();
        order.sort_by(|&a, &b| p.probability[b].total_cmp(&p.probability[a]));
        let moves: Vec<serde_json::Value> = order
            .iter()
            .map(|&i| {
                let mut m = serde_json::json!({"uci": uci(&p.moves[i]), "san": San::from_move(pos, p.moves[i]).to_string(), "probability": p.probability[i]});
                if let Some(seen) = &seen {
                    m["value_after"] = serde_json::json!(seen.ours.get(i));
                }
                m
            })
            .collect();
        let chosen = choose(pos, &p, &[]).map(|(i, _)| uci(&p.moves[i]));
        let mut v = serde_json::json!({"line": line, "fen": fen, "value": p.value, "chosen": chosen, "moves": moves});
        if let (Some(w), Some(seen)) = (weight, &seen) {
            v["imagination"] = serde_json::json!({"weight": if w.is_infinite() { serde_json::json!("inf") } else { serde_json::json!(w) }, "chosen": uci(&p.moves[seen.pick(w)])});
        }
        v
    };
    let out = std::io::stdout();
    let started = Instant::now();
    let (mut done, mut bad) = (0usize, 0usize);
    let mut emit = |v: serde_json::Value| -> Result<()> {
        let mut o = out.lock();
        if json && single {
            writeln!(o, "{}", serde_json::to_string_pretty(&v)?)?;
        } else if json {
            writeln!(o, "{}", serde_json::to_string(&v)?)?;
        } else if let Some(e) = v["error"].as_str() {
            writeln!(o, "line {}: {e}", v["line"])?;
        } else {
            writeln!(
                o,
                "{}  value {:+.2}  plays {}",
                v["fen"].as_str().unwrap_or(""),
                v["value"].as_f64().unwrap_or(0.0),
                v["chosen"].as_str().unwrap_or("-")
            )?;
            if let Some(i) = v.get("imagination") {
                writeln!(o, "  with imagination (w = {}) plays {}", i["weight"], i["chosen"].as_str().unwrap_or("-"))?;
            }
            for m in v["moves"].as_array().into_iter().flatten().take(8) {
                writeln!(
                    o,
                    "  {:8} {:6} {:5.1}%",
                    m["san"].as_str().unwrap_or(""),
                    m["uci"].as_str().unwrap_or(""),
                    100.0 * m["probability"].as_f64().unwrap_or(0.0)
                )?;
            }
        }
        Ok(())
    };
    // Each line's position, or what is wrong with the line: answered in the file's order, an
    // error in its place among the results.
    type Entry = (usize, String, std::result::Result<shakmaty::Chess, String>);
    let mut batch: Vec<Entry> = Vec::with_capacity(ANALYSE_BATCH);
    let flush = |batch: &mut Vec<Entry>, emit: &mut dyn FnMut(serde_json::Value) -> Result<()>| -> Result<()> {
        // Plain: the batch thinks as one; with imagination each position thinks with its boards after.
        let boards: Vec<_> = batch.iter().filter_map(|(_, _, p)| p.as_ref().ok().map(planes)).collect();
        let features = if weight.is_none() && !boards.is_empty() {
            think_features(&brain, &boards, descending, &f.readout.read_steps)
        } else {
            Vec::new()
        };
        let mut k = 0;
        for (line, fen, pos) in batch.drain(..) {
            match pos {
                Ok(pos) => {
                    emit(describe(line, &fen, &pos, features.get(k).map(Vec::as_slice)))?;
                    k += 1;
                }
                Err(error) => {
                    eprintln!("line {line}: {error}");
                    emit(serde_json::json!({"line": line, "fen": fen, "error": error}))?;
                }
            }
        }
        Ok(())
    };
    for (i, line) in lines.enumerate() {
        let number = i + 1;
        let line = match line.with_context(|| format!("reading line {number}"))? {
            Line::Text(text) => text,
            Line::TooLong { start, bytes } => {
                bad += 1;
                let error = format!("{bytes} bytes long: not a FEN (a FEN line is at most {MAX_FEN_LINE} bytes)");
                batch.push((number, start, Err(error)));
                if batch.len() == ANALYSE_BATCH {
                    flush(&mut batch, &mut emit)?;
                }
                continue;
            }
        };
        let fen = line.trim();
        if fen.is_empty() || fen.starts_with('#') {
            continue;
        }
        match position_from_fen(fen) {
            Ok(pos) if !pos.legal_moves().is_empty() => {
                batch.push((number, fen.to_string(), Ok(pos)));
                done += 1;
            }
            Ok(pos) => {
                bad += 1;
                batch.push((number, fen.to_string(), Err(flychess_brain::chess::game_over_words(&pos))));
            }
            Err(e) => {
                bad += 1;
                batch.push((number, quote(fen, 100), Err(quote(&e.to_string(), 200))));
            }
        }
        if batch.len() == ANALYSE_BATCH {
            flush(&mut batch, &mut emit)?;
        }
    }
    flush(&mut batch, &mut emit)?;
    eprintln!(
        "{done} positions in {:.1} s ({ANALYSE_BATCH} at a time){}",
        started.elapsed().as_secs_f64(),
        if bad > 0 { format!("; {bad} lines could not be read (listed above)") } else { String::new() }
    );
    if bad > 0 {
        return Err(anyhow!("{bad} of {} lines were not positions in play", done + bad));
    }
    Ok(())
}

/// `flychess play`: games between flies, Charles, the random and greedy movers and Stockfish.
pub fn play(data: &Path, args: &PlayArgs) -> Result<()> {
    let PlayArgs { ref white, ref black, games, game_seed: seed, json, imagination, dry_run, ref which } = *args;
    if games == 0 && !dry_run {
        return Err(anyhow!("play --games 0: nothing to play (give 1 or more; --dry-run seats the players and stops)"));
    }
    let (white, black) = (white.as_str(), black.as_str());
    use flychess_arena::play::play_game;
    use flychess_arena::players::{Entrant, Kit, Player};
    use flychess_fly::stockfish::find_stockfish;
    let spec = crate::cli::brain::spec(which, data)?;
    // The rungs and plain Charles need no brain; any other name is resolved on it.
    let needs_brain = [white, black].iter().any(|p| flychess_arena::players::needs_brain(p));
    let prepared = if needs_brain {
        Some(crate::cli::brain::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?)
    } else {
        None
    };
    let descending = prepared.as_ref().map(|(l, _)| l.connectome.groups.descending.clone()).unwrap_or_default();
    let checksum = prepared.as_ref().map(|(l, _)| l.checksum.clone());
    // Every player is the ladder's (`Player::new`): Stockfish at its lowest UCI_Elo on 20,000
    // nodes a move, a fly playing its favourite (with imagination at the weight asked for).
    let mut entrants = std::collections::HashMap::new();
    let (mut nameds, mut seated) = (Vec::new(), Vec::new());
    for name in [white, black] {
        let ready = prepared.as_ref().map(|(_, brain)| (brain, &descending[..]));
        let (entrant, named) = player_on_terminal(name, data, checksum.as_deref(), ready)?;
        let entrant = match (&entrant, &named, imagination) {
            (Entrant::Fly { imagination: None, sample: false, .. }, Named::Fly(f), Some(w)) => Entrant::fly(f, Some(w)),
            _ => entrant,
        };
        entrants.insert(name, entrant.clone());
        nameds.push(named);
        seated.push(entrant);
    }
    let (kit_flies, dopamine, charles) = kit_parts(nameds.into_iter().zip(&seated));
    let kit = match prepared {
        Some((loaded, brain)) => {
            let brain = std::sync::Arc::new(brain);
            let bio = if dopamine.is_empty() { None } else { dopamine_of_brain(&spec, data, &loaded, &brain, Some(dopamine.clone()))?.1 };
            let kit = Kit::new(brain, descending.clone()).with_flies(&kit_flies);
            match bio {
                Some(bio) => kit.with_dopamine(bio, &dopamine)?,
                None => kit,
            }
        }
        None => Kit::default(),
    }
    .with_charles(&charles);
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

/// The anchor's rating: Stockfish's lowest UCI_Elo, as the engine states it.
fn anchor_elo(stockfish: &Path) -> Result<f64> {
    use flychess_fly::stockfish::{Engine, EngineOptions};
    Ok(Engine::start(stockfish, &EngineOptions::default())?.min_elo.unwrap_or(1350) as f64)
}

fn game_bar() -> ProgressBar {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("games [{bar:40}] {pos}/{len} {elapsed}/{eta} {wide_msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

fn on_game(bar: &ProgressBar) -> impl Fn(usize, usize, &flychess_arena::ladder::GameRow) + Sync + '_ {
    move |done, total, row| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(format!("{} – {}: {} ({})", row.white, row.black, row.result, row.termination));
    }
}

/// `flychess rate`: the ladder (sim::ladder) for every fly of the brain, resumable; the harness
/// check, the clone test with independent seeds, per-pairing W-D-L, how each player's games
/// ended, and Bradley–Terry ratings with bootstrap intervals, written to DATA/ratings.json.
pub fn rate(data: &Path, args: &RateArgs) -> Result<()> {
    let RateArgs { games, quick, aided, game_seed: seed, ref players, json, shards, ref engine, ref uci, ref which } = *args;
    if games == 0 && !quick {
        return Err(anyhow!("rate --games 0: nothing to play (games come in pairs per pairing, e.g. --games 20)"));
    }
    let engine = engine.choice();
    use flychess_arena::ladder::{self, LadderOptions};
    use flychess_arena::players::{Entrant, Kit};
    use flychess_arena::search::{Aid, DEFAULT_SIMULATIONS};
    use flychess_fly::stockfish::find_stockfish;
    let stockfish = find_stockfish(None).map_err(|e| anyhow!("the ladder's rungs are Stockfish: {e}"))?;
    let anchor_elo = anchor_elo(&stockfish)?;
    let spec = crate::cli::brain::spec(which, data)?;
    let (loaded, brain) = crate::cli::brain::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    let brain = std::sync::Arc::new(brain);
    let flies = flies_of_brain(data, &loaded.checksum);
    let (dopamine, bio) = dopamine_of_brain(&spec, data, &loaded, &brain, None)?;
    if flies.is_empty() {
        return Err(anyhow!("no fly of this brain to rate ({}); train one with `flychess train`", loaded.connectome.provenance.label()));
    }
    let options = if quick {
        LadderOptions { games: 2, max_plies: 200, seed, ..Default::default() }
    } else {
        LadderOptions { games: games.max(2), seed, ..Default::default() }
    };
    let mut entrants = ladder::rungs();
    let mut kit_flies = Vec::new();
    for f in &flies {
        let mut mine = vec![Entrant::fly(f, None)];
        // Imagination for the trained flies (a newborn's values are noise: only its plain self plays).
        if !quick && f.meta.kind == "trained" {
            mine.push(Entrant::fly(f, Some(flychess::training::tuned_imagination(data, f))));
            // Habituation and two glances where they are tuned (issue 56).
            if let Some(h) = flychess_arena::tuned::habituation(data, f) {
                mine.push(Entrant::fly_with(f, None, Some(h)));
            }
            if let Some(g) = flychess_arena::tuned::glances(data, f) {
                mine.push(Entrant::glancing(f, g));
            }
        }
        // Philidor's aids, asked for: the fly + judge and + search 64, named as such.
        if aided && f.meta.kind == "trained" {
            let weight = flychess::training::judge_weight(data, f, &brain, &loaded.connectome.groups.descending)?;
            for aid in [Aid::Judge { weight }, Aid::Search { simulations: DEFAULT_SIMULATIONS }] {
                mine.push(Entrant::aided(Entrant::fly(f, None), aid, None)?);
            }
        }
        entrants.extend(mine.iter().cloned());
        // The first fly's sampling copy plays the clone test.
        mine.push(Entrant::sampling(f));
        kit_flies.push((f.clone(), mine));
    }
    let descending = loaded.connectome.groups.descending.clone();
    // The flies' thinks go through the chosen engine (the GPU one batches the games' moves too).
    let simulator = std::sync::Arc::new(Simulator::choose(engine, &brain)?);
    eprintln!("the flies think on the {}", simulator.describe());
    let _in_force = simulator::install(&brain, simulator);
    // Dopamine flies play as they are (one look per legal move, the highest vote).
    entrants.extend(dopamine.iter().map(Entrant::dopamine));
    // Every finished Charles run, shipped or the user's: the network that never was a fly.
    let charles = charles_runs(data);
    entrants.extend(charles.iter().map(|c| Entrant::charles(c.as_ref())));
    // Charles + search 64, its boards valued by the brain's trained fly.
    if aided && let Some(value) = flies.iter().find(|f| f.meta.kind == "trained") {
        for c in &charles {
            entrants.push(Entrant::aided(Entrant::charles(c.as_ref()), Aid::Search { simulations: DEFAULT_SIMULATIONS }, Some(value))?);
        }
    }
    // The user's own UCI engines, rated against the rungs like any player.
    entrants.extend(uci.entrants()?);
    // Every current player (with --players too): the games are named as the players are called
    // now (a renamed shipped fly's games carry its new name) and the report marks which rows
    // are of a current player and which of an earlier version.
    let mut every = entrants.clone();
    // Only the players asked for (resolved as every front door resolves a name).
    let mut charles = charles;
    let mut dopamine = dopamine;
    if !players.is_empty() {
        let lookup = flychess_arena::players::Lookup {
            data,
            networks: &flychess_charles::player::Runs,
            checksum: Some(&loaded.checksum),
            brain: Some((&brain, &descending[..])),
            progress: &|_, _, _| {},
        };
        let mut wanted = Vec::new();
        for name in players {
            let (e, found) = flychess_arena::players::named(name, &lookup)?;
            let (fs, ds, cs) = flychess_arena::players::kit_parts([(found, &e)]);
            kit_flies.extend(fs);
            dopamine.extend(ds);
            charles.extend(cs);
            wanted.push(e);
        }
        entrants.retain(|e| e.is_rung());
        entrants.extend(wanted);
    }
    let kit = Kit::new(brain.clone(), descending.clone()).with_flies(&kit_flies).with_charles(&charles);
    let kit = match bio {
        Some(bio) => kit.with_dopamine(bio, &dopamine)?,
        None => kit,
    };
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
    // The harness check: the first fly (deterministic) against itself, dice by colour.
    let first = &flies[0];
    let (harness_share, harness_games) =
        ladder::harness_check(&Entrant::fly(first, None), Some(&kit), &options, options.games.div_ceil(2))?;
    // The clone test: two sampling copies with independent dice, at least 20 pairs.
    let clone_options = LadderOptions { games: options.games.max(40), ..options.clone() };
    let sampling = Entrant::sampling(first);
    let clone = ladder::clone_test(&sampling, Some(&kit), &clone_options, &games_file(data, "clone-", &loaded.checksum, &clone_options))?;
    let anchor = Entrant::Stockfish { random_share: 0.0 }.id();
    let current: std::collections::HashSet<String> = every.iter().map(Entrant::id).collect();
    let aided_ids: std::collections::HashSet<String> =
        entrants.iter().filter(|e| matches!(e, Entrant::Aided { .. })).map(Entrant::id).collect();
    let mut ratings = ladder::ratings(&rows, &anchor, anchor_elo, 300, seed);
    ratings.sort_by(|a, b| b.elo.total_cmp(&a.elo));
    let by_player = ladder::endings_by_player(&rows);
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
    let report = serde_json::json!({
        "brain": loaded.connectome.provenance.label(),
        "brain_checksum": loaded.checksum,
        "date": fly::today(),
        "anchor": anchor,
        "anchor_elo": anchor_elo,
        "stockfish": stockfish.display().to_string(),
        "options": options,
        "games": rows.len(),
        "games_file": file.display().to_string(),
        "seconds": started.elapsed().as_secs_f64(),
        "harness_check": {
            "what": "the first fly against itself, dice by colour: exactly 50 % unless the harness favours a colour or is not deterministic",
            "fly": first.meta.name, "games": harness_games.len(), "score": harness_share, "passed": harness_share == 0.5,
        },
        "clone": {
            "what": "two copies of the first fly sampling their moves from the policy with independent seeds, paired openings: the score must hold 50 % in its 95 % interval",
            "fly": sampling.name(), "games": 2 * clone.pairs, "pairs": clone.pairs, "pentanomial": clone.pentanomial,
            "score": clone.score, "score_interval": [clone.score_low, clone.score_high],
            "elo": clone.elo, "elo_interval": [clone.elo_low, clone.elo_high], "within": clone.holds_even(),
        },
        "intervals_caveat": (options.games < 10).then_some("with fewer than 10 games a pairing the bootstrap intervals are too narrow to trust (a sweep resamples to itself): run the full ladder"),
        "pairings": ladder::pairing_results(&rows),
        "endings": ladder::endings(&rows),
        "ratings": rated,
    });
    let text = serde_json::to_string_pretty(&report)?;
    flychess_brain::files::write_atomically(&data.join("ratings.json"), text.as_bytes())?;
    if json {
        println!("{text}");
        return Ok(());
    }
    println!(
        "{} games ({} per pairing), anchor {anchor} = {anchor_elo:.0}; saved {}",
        rows.len(),
        options.games,
        data.join("ratings.json").display()
    );
    println!(
        "harness check: {} against itself (dice by colour) scored {:.1}% over {} games{}",
        first.meta.name,
        100.0 * harness_share,
        harness_games.len(),
        if harness_share == 0.5 { "" } else { " — NOT 50%: the harness is broken, do not trust these ratings" }
    );
    println!(
        "clone test: two sampling copies of {} with independent seeds scored {:.1}% [{:.1}, {:.1}] over {} pairs{}",
        first.meta.name,
        100.0 * clone.score,
        100.0 * clone.score_low,
        100.0 * clone.score_high,
        clone.pairs,
        if clone.holds_even() { " (holds 50%)" } else { " — 50% is OUTSIDE the interval: do not trust these ratings" }
    );
    println!("pairings (first player's wins-draws-losses):");
    for p in ladder::pairing_results(&rows) {
        println!("  {:32} – {:32} {:>2}-{:>2}-{:>2}  {:5.1}%", p.first, p.second, p.wins, p.draws, p.losses, 100.0 * p.score);
    }
    println!(
        "ratings (95% intervals{}):",
        if options.games < 10 { "; with so few games a pairing they are too narrow to trust: run the full ladder" } else { "" }
    );
    for r in &ratings {
        let old = if current.contains(&r.id) { String::new() } else { format!("  (an earlier version, {})", &r.id[..8.min(r.id.len())]) };
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
    Ok(())
}

/// `flychess duel A B`: paired openings (each played with colours swapped, dice by seat), the
/// Elo difference with its 95 % interval from the pentanomial pair scores, optionally as a
/// sequential test (SPRT) that stops at Wald's bounds. Resumable (DATA/ladder/duel-…).
pub fn duel(data: &Path, args: &DuelArgs) -> Result<()> {
    let DuelArgs {
        ref first,
        ref second,
        games,
        game_seed: seed,
        sprt,
        elo0,
        elo1,
        alpha,
        beta,
        json,
        shards,
        ref engine,
        ref uci,
        ref which,
    } = *args;
    if sprt && (shards.shard.is_some() || shards.merge_shards.is_some()) {
        return Err(anyhow!("a sequential test (--sprt) decides after each round of games: it cannot run in shards"));
    }
    // Games come in pairs (each opening with colours swapped): an odd count is played as the next
    // pair up, and said; none at all is refused.
    if games == 0 {
        return Err(anyhow!("duel --games 0: nothing to play (games come in pairs, each opening with colours swapped)"));
    }
    if games % 2 == 1 && !json {
        eprintln!("duel --games {games}: games come in pairs (colours swapped), so {} are played", games + 1);
    }
    let (a, b, engine) = (first.as_str(), second.as_str(), engine.choice());
    let sprt = sprt.then_some(flychess_arena::duel::Sprt { elo0, elo1, alpha, beta });
    use flychess_arena::duel::Duel;
    use flychess_arena::ladder::{self, LadderOptions};
    use flychess_arena::players::{Entrant, Kit};
    // The user's UCI engines, by the names given them here.
    let engines = uci.entrants()?;
    let engine_named = |name: &str| engines.iter().find(|e| e.name() == name).cloned();
    let needs_no_brain = |name: &str| Entrant::names_rung(name) || engine_named(name).is_some();
    let prepared = if needs_no_brain(a) && needs_no_brain(b) {
        None
    } else {
        let spec = crate::cli::brain::spec(which, data)?;
        let (loaded, brain) = crate::cli::brain::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
        Some((loaded, std::sync::Arc::new(brain)))
    };
    let checksum = prepared.as_ref().map(|(l, _)| l.checksum.clone());
    let descending = prepared.as_ref().map(|(l, _)| l.connectome.groups.descending.clone()).unwrap_or_default();
    let ready = prepared.as_ref().map(|(_, brain)| (&**brain, &descending[..]));
    let named = |name: &str| match engine_named(name) {
        Some(e) => Ok((e, Named::Rung)),
        None => player_on_terminal(name, data, checksum.as_deref(), ready),
    };
    let (first, first_fly) = named(a)?;
    let (second, second_fly) = named(b)?;
    if first.id() == second.id() {
        return Err(anyhow!("{a} and {b} are the same player; `flychess rate` runs the clone test"));
    }
    let _in_force = match &prepared {
        Some((_, brain)) => {
            let sim = std::sync::Arc::new(Simulator::choose(engine, brain)?);
            eprintln!("the flies think on the {}", sim.describe());
            Some(simulator::install(brain, sim))
        }
        None => None,
    };
    let (kit_flies, dopamine, charles) = kit_parts([(first_fly, &first), (second_fly, &second)]);
    let bio = match (&prepared, dopamine.is_empty()) {
        (Some((loaded, brain)), false) => {
            dopamine_of_brain(&crate::cli::brain::spec(which, data)?, data, loaded, brain, Some(dopamine.clone()))?.1
        }
        _ => None,
    };
    let kit = match &prepared {
        Some((_, brain)) => {
            let kit = Kit::new(brain.clone(), descending.clone()).with_flies(&kit_flies).with_charles(&charles);
            Some(match bio {
                Some(bio) => kit.with_dopamine(bio, &dopamine)?,
                None => kit,
            })
        }
        None => None,
    };
    let options = LadderOptions { games: games.max(2), seed, dice_by_seat: true, ..Default::default() };
    let file = games_file(data, &format!("duel-{}-{}-", &first.id(), &second.id()), checksum.as_deref().unwrap_or("rungs-only"), &options);
    let bar = game_bar();
    let started = Instant::now();
    let seats = [first.clone(), second.clone()];
    if let Some(shard) = shards.shard {
        let (part, rows) = ladder::play_shard(&seats, &[(0, 1)], kit.as_ref(), &options, &file, shard, &on_game(&bar))?;
        bar.finish_and_clear();
        println!("shard {shard}: {} games in {} (join the parts with --merge-shards {})", rows.len(), part.display(), shard.count);
        return Ok(());
    }
    if let Some(count) = shards.merge_shards {
        let added = ladder::merge_shards(&seats, &[(0, 1)], &options, &file, count as usize)?;
        eprintln!("{added} games of {count} shards added to {}", file.display());
    }
    // A sequential test plays a round of pairs at a time and stops at a bound (or at `games`).
    let round = if sprt.is_some() { 2 * options.workers.max(1) } else { options.games };
    let mut played = round.min(options.games);
    let (rows, state) = loop {
        let now = LadderOptions { games: played, ..options.clone() };
        let rows = ladder::duel_games(&first, &second, kit.as_ref(), &now, &file, &on_game(&bar))?;
        let state = sprt.map(|t| t.state(&ladder::pair_scores(&rows)));
        let decided = state.as_ref().is_some_and(|s| s.verdict != "continue");
        if decided || played >= options.games {
            break (rows, state);
        }
        played = (played + round).min(options.games);
    };
    bar.finish_and_clear();
    let d = Duel::of(&ladder::pair_scores(&rows));
    let first_score = |g: &ladder::GameRow| if g.swapped { 1.0 - g.score() } else { g.score() };
    let wins = rows.iter().filter(|g| first_score(g) == 1.0).count();
    let losses = rows.iter().filter(|g| first_score(g) == 0.0).count();
    let report = serde_json::json!({
        "first": first.name(), "second": second.name(),
        "first_id": first.id(), "second_id": second.id(),
        "games": rows.len(), "pairs": d.pairs,
        "wins": wins, "draws": rows.len() - wins - losses, "losses": losses,
        "pentanomial": d.pentanomial,
        "score": d.score, "score_interval": [d.score_low, d.score_high],
        "elo": d.elo, "elo_interval": [d.elo_low, d.elo_high],
        "difference_shown": !d.holds_even(),
        "sprt": sprt.map(|t| serde_json::json!({"elo0": t.elo0, "elo1": t.elo1, "alpha": t.alpha, "beta": t.beta, "state": state})),
        "endings": ladder::endings(&rows),
        "options": options,
        "games_file": file.display().to_string(),
        "seconds": started.elapsed().as_secs_f64(),
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "{} against {}: +{wins} ={} -{losses} over {} games ({} pairs)",
        first.name(),
        second.name(),
        rows.len() - wins - losses,
        rows.len(),
        d.pairs
    );
    println!(
        "  score {:.1}% [{:.1}, {:.1}], Elo difference {:+.0} [{:+.0}, {:+.0}] (95% intervals, pentanomial {:?})",
        100.0 * d.score,
        100.0 * d.score_low,
        100.0 * d.score_high,
        d.elo,
        d.elo_low,
        d.elo_high,
        d.pentanomial
    );
    println!(
        "  {}",
        if d.holds_even() {
            "no difference shown: the interval holds 50%"
        } else if d.score > 0.5 {
            "the first is stronger"
        } else {
            "the second is stronger"
        }
    );
    if let (Some(t), Some(s)) = (sprt, &state) {
        println!("  SPRT [{:.0}, {:.0}] Elo: LLR {:.2} in [{:.2}, {:.2}] → {}", t.elo0, t.elo1, s.llr, s.lower, s.upper, s.verdict);
    }
    Ok(())
}

/// The imagination weights `imagine-tune` tries (SPEC §4); ∞ lets the value decide.
pub const IMAGINATION_WEIGHTS: [f32; 9] = [0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, f32::INFINITY];

/// Top-1 and good-move hits of the plain fly and of imagination at each weight, over `rows`.
struct ImaginationHits {
    plain: (usize, usize),
    weights: Vec<(usize, usize)>,
}

fn imagination_hits(
    brain: &flychess_brain::brain::Brain,
    f: &Fly,
    descending: &[u32],
    rows: &[Row],
    bar: &ProgressBar,
) -> Result<ImaginationHits> {
    use flychess_arena::play::think_and_look_ahead;
    use flychess_brain::chess::position_from_fen;
    let mut out = ImaginationHits { plain: (0, 0), weights: vec![(0, 0); IMAGINATION_WEIGHTS.len()] };
    for row in rows {
        let pos = position_from_fen(&row.fen)?;
        let target = Target::of(row)?;
        let (p, seen) = think_and_look_ahead(brain, &f.readout, descending, &pos, &[]);
        let favourite = (0..p.moves.len()).max_by(|&a, &b| p.probability[a].total_cmp(&p.probability[b])).unwrap_or(0);
        out.plain.0 += usize::from(favourite == target.best);
        out.plain.1 += usize::from(target.good.contains(&favourite));
        for (k, &w) in IMAGINATION_WEIGHTS.iter().enumerate() {
            let pick = seen.pick(w);
            out.weights[k].0 += usize::from(pick == target.best);
            out.weights[k].1 += usize::from(target.good.contains(&pick));
        }
        bar.inc(1);
    }
    Ok(out)
}

/// `flychess imagine-tune`: the fly's move with one-move imagination at each weight, scored
/// against Stockfish's labels on the first `positions` VAL positions, where the weight is chosen
/// (most good moves, then most top-1, then the smaller weight), and on as many HOLD positions,
/// where it is reported with 95 % intervals. Written to DATA/imagination.json under the fly's
/// player id (the app, `play`, `rate` and `duel` use it).
/// `flychess habituation-tune`: habituation's decay and weight for a fly, chosen on VAL games
/// (the games of the shipped VAL rows, never trained on; `flychess_arena::habituation::tune`),
/// kept in DATA/habituation.json under the fly's player id, with the whole grid.
pub fn habituation_tune(
    which: &WhichBrain,
    data: &Path,
    name: &str,
    games: usize,
    starts: usize,
    max_plies: usize,
    json: bool,
) -> Result<()> {
    use flychess_arena::habituation::{TuningGame, tune};
    let (f, loaded, brain) = fly_with_its_brain(which, data, name)?;
    let dataset = Dataset::load(&shipped_path())?;
    let mut wanted = std::collections::BTreeSet::new();
    for r in dataset.val() {
        if wanted.len() >= games {
            break;
        }
        wanted.insert(r.game);
    }
    let pgn = crate::cli::brain::book_pgn();
    eprintln!("reading {} VAL games from {}…", wanted.len(), pgn.display());
    let played = flychess::game_positions::games_numbered(&pgn, &wanted)?;
    let tuning_games: Vec<TuningGame> = played
        .into_values()
        .filter(|g| !g.broken && !g.moves.is_empty())
        .map(|g| TuningGame { positions: g.positions.into_iter().map(|(p, _)| p).collect(), moves: g.moves })
        .collect();
    let all: Vec<&shakmaty::Chess> = tuning_games.iter().flat_map(|g| &g.positions).collect();
    let bar = ProgressBar::new(all.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("thinking [{bar:40}] {pos}/{len} positions of VAL games, eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let started = Instant::now();
    let descending = &loaded.connectome.groups.descending;
    let mut policies = Vec::with_capacity(all.len());
    for chunk in all.chunks(256) {
        let planes: Vec<_> = chunk.iter().map(|p| flychess_brain::chess::planes(p)).collect();
        let features = flychess_fly::readout::think_features(&brain, &planes, descending, &f.readout.read_steps);
        for (p, x) in chunk.iter().zip(&features) {
            policies.push(flychess_fly::readout::policy(p, &f.readout.heads(x)));
        }
        bar.inc(chunk.len() as u64);
    }
    bar.finish_and_clear();
    let agreement = tune(&tuning_games, &policies)?;
    // By play: the won VAL positions, the fly on the winning side against the random mover.
    let starts: Vec<shakmaty::Chess> = dataset
        .val()
        .iter()
        .filter(|r| r.moves.first().is_some_and(|m| m.score.as_cp() >= 300.0))
        .filter_map(|r| flychess_brain::chess::position_from_fen(&r.fen).ok())
        .take(starts)
        .collect();
    let cells = flychess_arena::habituation::DECAYS.len() * flychess_arena::habituation::GAME_WEIGHTS.len();
    let bar = ProgressBar::new((cells * starts.len()) as u64);
    bar.set_style(
        ProgressStyle::with_template("playing [{bar:40}] {pos}/{len} games from won VAL positions, eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let games_grid =
        flychess_arena::habituation::tune_in_games(&brain, &f.readout, descending, &starts, max_plies, &|d, _| bar.set_position(d as u64))?;
    bar.finish_and_clear();
    let mut details = serde_json::json!({
        "chosen_by": "the mean score from won VAL positions against the random mover (ties: the smaller weight)",
        "games": games_grid,
        "agreement": agreement,
        "seconds": started.elapsed().as_secs_f64(),
    });
    let path = flychess_arena::tuned::keep_habituation(data, &f, games_grid.chosen, details.clone())?;
    if json {
        details["fly"] = serde_json::json!(name);
        details["chosen"] = serde_json::to_value(games_grid.chosen)?;
        println!("{}", serde_json::to_string_pretty(&details)?);
        return Ok(());
    }
    println!(
        "{name}: habituation by play, {} won VAL positions against the random mover (at most {max_plies} plies; mean score, 95 % intervals):",
        games_grid.starts
    );
    for c in &games_grid.grid {
        let chosen = if c.habituation == games_grid.chosen { "  <- chosen" } else { "" };
        let endings: Vec<String> = c.endings.iter().map(|(k, n)| format!("{k} {n}")).collect();
        println!(
            "  decay {:4}  weight {:4}  score {:.3} [{:.3}, {:.3}]  minus plain {:+.3} [{:+.3}, {:+.3}]  ({}){chosen}",
            c.habituation.decay,
            c.habituation.weight,
            c.score.value,
            c.score.low,
            c.score.high,
            c.minus_plain.value,
            c.minus_plain.low,
            c.minus_plain.high,
            endings.join(", ")
        );
    }
    println!(
        "and by agreement with the masters' moves on {} positions of {} VAL games (the favourite against the move played):",
        agreement.positions, agreement.games
    );
    for c in &agreement.grid {
        println!(
            "  decay {:4}  weight {:4}  top-1 {}  minus plain {}",
            c.habituation.decay,
            c.habituation.weight,
            c.top1.percent(),
            c.minus_plain.points()
        );
    }
    println!("kept in {}; play it as {name}+habituation", path.display());
    Ok(())
}

/// `flychess glances-tune`: two glances' gain and choice (the attended piece's moves, or all)
/// chosen on VAL positions by top-1 against Stockfish's move, then measured on HOLD beside the
/// plain fly with the paired difference; kept in DATA/glances.json under the fly's player id.
pub fn glances_tune(which: &WhichBrain, data: &Path, name: &str, positions: usize, json: bool) -> Result<()> {
    use flychess_arena::glances::{Among, Glances, second_looks};
    let (f, loaded, brain) = fly_with_its_brain(which, data, name)?;
    let descending = &loaded.connectome.groups.descending;
    let dataset = Dataset::load(&shipped_path())?;
    let n = positions.clamp(1, VAL);
    let started = Instant::now();
    // The plain fly's first looks and the targets of a set of rows.
    let first_looks = |rows: &[Row]| -> Result<(Vec<shakmaty::Chess>, Vec<flychess_fly::readout::Policy>, Vec<Target>)> {
        let positions: Vec<shakmaty::Chess> =
            rows.iter().map(|r| flychess_brain::chess::position_from_fen(&r.fen)).collect::<flychess_brain::Result<_>>()?;
        let planes: Vec<_> = positions.iter().map(flychess_brain::chess::planes).collect();
        let features = flychess_fly::readout::think_features(&brain, &planes, descending, &f.readout.read_steps);
        let firsts = positions.iter().zip(&features).map(|(p, x)| flychess_fly::readout::policy(p, &f.readout.heads(x))).collect();
        Ok((positions, firsts, targets(rows)?))
    };
    let favourite = |p: &flychess_fly::readout::Policy| (0..p.moves.len()).max_by(|&a, &b| p.probability[a].total_cmp(&p.probability[b]));
    let plain_hits = |firsts: &[flychess_fly::readout::Policy], t: &[Target]| -> Vec<(bool, bool)> {
        firsts.iter().zip(t).map(|(p, t)| favourite(p).map_or((false, false), |i| (i == t.best, t.good.contains(&i)))).collect()
    };
    let glance_hits =
        |positions: &[shakmaty::Chess], firsts: &[flychess_fly::readout::Policy], t: &[Target], g: Glances| -> Vec<(bool, bool)> {
            second_looks(&brain, &f.readout, descending, positions, firsts, g)
                .iter()
                .zip(t)
                .map(|(look, t)| (look.chosen == t.best, t.good.contains(&look.chosen)))
                .collect()
        };
    let rates = |hits: &[(bool, bool)], plain: &[(bool, bool)]| {
        let top1: Vec<bool> = hits.iter().map(|h| h.0).collect();
        let good: Vec<bool> = hits.iter().map(|h| h.1).collect();
        let plain_top1: Vec<bool> = plain.iter().map(|h| h.0).collect();
        let (t, g, d) = (stats::rate_of(&top1), stats::rate_of(&good), stats::paired_difference(&top1, &plain_top1));
        serde_json::json!({"top1": t.value, "top1_interval": [t.low, t.high], "good": g.value, "good_interval": [g.low, g.high],
            "minus_plain_top1": d.value, "minus_plain_top1_interval": [d.low, d.high]})
    };
    eprintln!("two glances on {n} VAL positions…");
    let (val_positions, val_firsts, val_t) = first_looks(&dataset.val()[..n])?;
    let val_plain = plain_hits(&val_firsts, &val_t);
    let mut grid = Vec::new();
    let mut best: Option<(Glances, f64)> = None;
    for among in [Among::ThePiece, Among::All] {
        for gain in [1.0f32, 1.5, 2.0, 3.0, 5.0] {
            let g = Glances::checked(gain, among)?;
            let hits = glance_hits(&val_positions, &val_firsts, &val_t, g);
            let top1 = hits.iter().filter(|h| h.0).count() as f64 / hits.len() as f64;
            if best.is_none_or(|(_, b)| top1 > b) {
                best = Some((g, top1));
            }
            grid.push(serde_json::json!({"gain": gain, "among": among, "val": rates(&hits, &val_plain)}));
        }
    }
    let (chosen, _) = best.expect("a grid");
    eprintln!("measuring {} on the {HOLD} HOLD positions…", chosen.label());
    let (hold_positions, hold_firsts, hold_t) = first_looks(dataset.hold())?;
    let hold_plain = plain_hits(&hold_firsts, &hold_t);
    let hold_glances = glance_hits(&hold_positions, &hold_firsts, &hold_t, chosen);
    let details = serde_json::json!({
        "chosen_on": "VAL: top-1 against Stockfish's move (ties: the first in the grid)",
        "val_positions": n,
        "val_plain": rates(&val_plain, &val_plain),
        "grid": grid,
        "hold_positions": HOLD,
        "hold_plain": rates(&hold_plain, &hold_plain),
        "hold_glances": rates(&hold_glances, &hold_plain),
        "seconds": started.elapsed().as_secs_f64(),
    });
    let path = flychess_arena::tuned::keep_glances(data, &f, chosen, details.clone())?;
    if json {
        let mut v = details;
        v["fly"] = serde_json::json!(name);
        v["chosen"] = serde_json::to_value(chosen)?;
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let line = |label: &str, v: &serde_json::Value| {
        println!(
            "  {label:28} top-1 {:5.1} %  good {:5.1} %  minus plain {:+.1} points [{:+.1}, {:+.1}]",
            100.0 * v["top1"].as_f64().unwrap_or(f64::NAN),
            100.0 * v["good"].as_f64().unwrap_or(f64::NAN),
            100.0 * v["minus_plain_top1"].as_f64().unwrap_or(f64::NAN),
            100.0 * v["minus_plain_top1_interval"][0].as_f64().unwrap_or(f64::NAN),
            100.0 * v["minus_plain_top1_interval"][1].as_f64().unwrap_or(f64::NAN),
        )
    };
    println!("{name}: two glances on {n} VAL positions (top-1 against Stockfish's move; 95 % intervals):");
    line("plain (one think)", &details["val_plain"]);
    for cell in details["grid"].as_array().into_iter().flatten() {
        line(&format!("gain {} among {}", cell["gain"], cell["among"].as_str().unwrap_or("")), &cell["val"]);
    }
    println!("chosen: {}; on HOLD ({HOLD} positions):", chosen.label());
    line("plain (one think)", &details["hold_plain"]);
    line(&format!("two glances ({})", chosen.label()), &details["hold_glances"]);
    println!("kept in {}; play it as {name}+glances", path.display());
    Ok(())
}

/// The fly `name` with its brain loaded (the brain asked for, which must be the fly's).
fn fly_with_its_brain(
    which: &WhichBrain,
    data: &Path,
    name: &str,
) -> Result<(Fly, flychess_brain::connectome::brain_file::Loaded, flychess_brain::brain::Brain)> {
    let f = Fly::load(&fly::find(name, data)?)?;
    let spec = crate::cli::brain::spec(which, data)?;
    let (loaded, brain) = crate::cli::brain::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    if loaded.checksum != f.meta.brain_checksum {
        return Err(anyhow!("fly {name} belongs to brain {}, not to {}", f.meta.brain, loaded.connectome.provenance.label()));
    }
    Ok((f, loaded, brain))
}

pub fn imagine_tune(which: &WhichBrain, data: &Path, name: &str, positions: usize, json: bool) -> Result<()> {
    let (f, loaded, brain) = fly_with_its_brain(which, data, name)?;
    let dataset = Dataset::load(&shipped_path())?;
    let n = positions.clamp(1, HOLD.min(VAL));
    let (val_rows, hold_rows) = (&dataset.val()[..n], &dataset.hold()[..n]);
    let descending = &loaded.connectome.groups.descending;
    let bar = ProgressBar::new(2 * n as u64);
    bar.set_style(
        ProgressStyle::with_template("imagining [{bar:40}] {pos}/{len} positions (VAL, then HOLD), eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let started = Instant::now();
    let val = imagination_hits(&brain, &f, descending, val_rows, &bar)?;
    let hold = imagination_hits(&brain, &f, descending, hold_rows, &bar)?;
    bar.finish_and_clear();
    // On VAL: most good moves, then most top-1, then the smaller weight.
    let best = (0..IMAGINATION_WEIGHTS.len())
        .max_by(|&a, &b| (val.weights[a].1, val.weights[a].0).cmp(&(val.weights[b].1, val.weights[b].0)).then(b.cmp(&a)))
        .expect("weights");
    let weight = |w: f32| if w.is_infinite() { serde_json::json!("inf") } else { serde_json::json!(w) };
    let figures = |h: (usize, usize), n: usize| {
        let (t, g) = (stats::rate(h.0, n), stats::rate(h.1, n));
        serde_json::json!({"top1": t.value, "top1_interval": [t.low, t.high], "good": g.value, "good_interval": [g.low, g.high]})
    };
    let table: Vec<serde_json::Value> = IMAGINATION_WEIGHTS
        .iter()
        .enumerate()
        .map(|(k, &w)| serde_json::json!({"w": weight(w), "val": figures(val.weights[k], n), "hold": figures(hold.weights[k], n)}))
        .collect();
    let report = serde_json::json!({
        "fly": name,
        "player_id": f.player_id(None),
        "positions": n,
        "seconds": started.elapsed().as_secs_f64(),
        "chosen_on": "VAL: most good moves, then most top-1",
        "plain": {"val": figures(val.plain, n), "hold": figures(hold.plain, n)},
        "weights": table,
        "chosen": weight(IMAGINATION_WEIGHTS[best]),
        "chosen_on_hold": figures(hold.weights[best], n),
    });
    // Kept in DATA/imagination.json under the fly's player id.
    let path = flychess_arena::tuned::keep_imagination(data, &f, weight(IMAGINATION_WEIGHTS[best]), report.clone())?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "{name}, one-move imagination: chosen on {n} VAL positions, reported on {n} HOLD positions ({:.0} s)",
        started.elapsed().as_secs_f64()
    );
    let line = |label: &str, v: (usize, usize), h: (usize, usize), mark: &str| {
        let (t, g) = (stats::rate(h.0, n), stats::rate(h.1, n));
        println!(
            "  {label:12} VAL good {:5.1}% top-1 {:5.1}% | HOLD good {} top-1 {}{mark}",
            100.0 * v.1 as f64 / n as f64,
            100.0 * v.0 as f64 / n as f64,
            g.percent(),
            t.percent()
        );
    };
    line("plain", val.plain, hold.plain, "");
    for (k, &w) in IMAGINATION_WEIGHTS.iter().enumerate() {
        let label = format!("w = {}", if w.is_infinite() { "inf".to_string() } else { format!("{w}") });
        line(&label, val.weights[k], hold.weights[k], if k == best { "  <- chosen on VAL" } else { "" });
    }
    println!("saved {}", path.display());
    Ok(())
}

/// `flychess lessons`: the finishing lessons. Won positions of the shipped TRAIN split (the mover
/// mates by force or leads by 3 pawns or more) relabelled by Stockfish with every legal move
/// scored, so mates can be ranked by distance and a stalemating move shows as the draw it is;
/// written to DATA/lessons/labels.jsonl (resumable) for `train --lessons SHARE`.
pub fn lessons(data: &Path, positions: usize, depth: u32, workers: Option<usize>) -> Result<()> {
    use flychess::label::{LabelOptions, Sample, label};
    use flychess_brain::chess::position_from_fen;
    use flychess_fly::grading::Score;
    use shakmaty::Position;
    let dataset = Dataset::load(&shipped_path())?;
    let won: Vec<&Row> = dataset.rows[HOLD + VAL..]
        .iter()
        .filter(|r| {
            r.moves.first().is_some_and(|m| match m.score {
                Score::Mate(n) => n > 0,
                Score::Cp(cp) => cp >= 300,
            })
        })
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
    let stockfish = flychess_fly::stockfish::find_stockfish(None)?;
    let workers = workers.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let total = positions.min(samples.len());
    println!(
        "{} won TRAIN positions; relabelling {total} with every legal move at depth {depth} ({traps} of them hold a stalemate trap)",
        samples.len()
    );
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template("lessons [{bar:40}] {pos}/{len}, {per_sec}, eta {eta}").expect("valid template").progress_chars("=> "),
    );
    let file = flychess::training::lessons_path(data);
    let options =
        LabelOptions { first_index: 0, depth, multipv: 255, workers, positions, seed: 0, stockfish, compact: false, every_move: false };
    let done = label(&samples, &file, &options, &|d, _| bar.set_position(d as u64))?;
    bar.finish_and_clear();
    println!("{done} lessons in {}; mix them into training with `flychess train --lessons 0.1`", file.display());
    Ok(())
}

/// `flychess profile`: how a player loses (`sim::profile`). Its games come from the ladder's
/// file for this brain (the same games `rate --games N` plays: each rung, openings 0, 1, … with
/// colours swapped), played where missing; the first `games` of them by opening are analysed,
/// two at a time, each by a fresh engine (the same figures on every run).
pub fn profile(data: &Path, args: &ProfileArgs) -> Result<()> {
    let ProfileArgs { ref player, games, depth, json, ref engine, ref which } = *args;
    let (player, engine) = (player.as_deref(), engine.choice());
    use flychess_arena::players::Kit;
    use flychess_fly::stockfish::find_stockfish;
    let stockfish = find_stockfish(None)?;
    let spec = crate::cli::brain::spec(which, data)?;
    let (loaded, brain) = crate::cli::brain::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    let brain = std::sync::Arc::new(brain);
    let player = match player {
        Some(p) => p.to_string(),
        None => fly::trained_for(&loaded.checksum, data)
            .map(|(n, _)| n)
            .ok_or_else(|| anyhow!("no trained fly for {}; name a player with --player", loaded.connectome.provenance.label()))?,
    };
    let descending = loaded.connectome.groups.descending.clone();
    let (entrant, named) = player_on_terminal(&player, data, Some(&loaded.checksum), Some((&brain, &descending)))?;
    let sim = std::sync::Arc::new(Simulator::choose(engine, &brain)?);
    eprintln!("the flies think on the {}", sim.describe());
    let _in_force = simulator::install(&brain, sim);
    let (kit_flies, dopamine, charles) = kit_parts([(named, &entrant)]);
    let bio = if dopamine.is_empty() { None } else { dopamine_of_brain(&spec, data, &loaded, &brain, Some(dopamine.clone()))?.1 };
    let kit = Kit::new(brain.clone(), descending.clone()).with_flies(&kit_flies).with_charles(&charles);
    let kit = match bio {
        Some(b) => kit.with_dopamine(b, &dopamine)?,
        None => kit,
    };
    let bar = game_bar();
    let analysis_bar = ProgressBar::new(0);
    analysis_bar.set_style(
        ProgressStyle::with_template("analysis [{bar:40}] {pos}/{len} games {elapsed}/{eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let job = flychess::profiling::ProfileJob {
        player: &entrant,
        kit: &kit,
        brain: loaded.connectome.provenance.label(),
        checksum: loaded.checksum.clone(),
        stockfish,
        games,
        depth,
    };
    let (p, report) = flychess::profiling::run(&job, data, &|stage, done, total| match stage {
        flychess::profiling::Stage::Playing => {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
        flychess::profiling::Stage::Analysing => {
            bar.finish_and_clear();
            analysis_bar.set_length(total as u64);
            analysis_bar.set_position(done as u64);
        }
    })?;
    bar.finish_and_clear();
    analysis_bar.finish_and_clear();
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "{} over {} games against the ladder's rungs (+{} ={} -{}), {} moves, Stockfish depth {depth}:",
        entrant.name(),
        p.games,
        p.won,
        p.drawn,
        p.lost,
        p.moves
    );
    println!("  mean loss per move {:.0} cp [{:.0}, {:.0}]", p.mean_loss.value, p.mean_loss.low, p.mean_loss.high);
    println!("  {:12} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10}", "phase", "moves", "all", "won", "drawn", "lost", "blunders");
    for (row, (_, b)) in p.phases.iter().zip(&p.blunders_per_100_moves) {
        let cp = |e: &stats::Estimate| if e.value.is_nan() { "—".to_string() } else { format!("{:.0}", e.value) };
        println!(
            "  {:12} {:>6} {:>10} {:>10} {:>10} {:>10} {:>9.1}%",
            row.phase,
            row.moves,
            cp(&row.all),
            cp(&row.won),
            cp(&row.drawn),
            cp(&row.lost),
            b
        );
    }
    println!("  how its {} losses went:", p.lost);
    for (shape, n) in &p.loss_shapes {
        println!("    {shape:18} {n}");
    }
    println!(
        "  decided by one blunder (> 400 cp): {}; games with such a move, all outcomes: {}",
        p.losses_by_one_blunder.percent(),
        p.games_with_a_blunder.percent()
    );
    Ok(())
}

/// `flychess ceiling`: the selection ceiling (`sim::ceiling`) of a fly or Charles on HOLD
/// middlegames, and with `duel_games` each aid's duel against the policy alone (the same games
/// file `flychess duel` keeps, so either reuses the other's games).
pub fn ceiling(data: &Path, args: &CeilingArgs) -> Result<()> {
    let CeilingArgs { ref player, positions, depth, simulations, duel_games, json, ref engine, ref which } = *args;
    let (player, engine) = (player.as_deref(), engine.choice());
    use flychess_arena::ceiling::{Selector, measure, middlegames, selectors};
    use flychess_arena::duel::Duel;
    use flychess_arena::ladder::{self, LadderOptions};
    use flychess_arena::players::{Entrant, Kit};
    use flychess_arena::search::{Aid, Evaluator};
    let stockfish = flychess_fly::stockfish::find_stockfish(None)?;
    let spec = crate::cli::brain::spec(which, data)?;
    let (loaded, brain) = crate::cli::brain::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    let brain = std::sync::Arc::new(brain);
    let descending = loaded.connectome.groups.descending.clone();
    let player = match player {
        Some(p) => p.to_string(),
        None => fly::trained_for(&loaded.checksum, data)
            .map(|(n, _)| n)
            .ok_or_else(|| anyhow!("no trained fly for {}; name one with --player", loaded.connectome.provenance.label()))?,
    };
    let (base, named) = player_on_terminal(&player, data, Some(&loaded.checksum), Some((&brain, &descending)))?;
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
    let sim = std::sync::Arc::new(Simulator::choose(engine, &brain)?);
    eprintln!("the flies think on the {}", sim.describe());
    let _in_force = simulator::install(&brain, sim);
    let evaluator = match &charles {
        None => Evaluator::fly(&brain, &value_fly.readout, &descending),
        Some(c) => Evaluator { prior: Some(c.as_ref()), ..Evaluator::fly(&brain, &value_fly.readout, &descending) },
    };
    // Charles has no value head of its own: no judge for it (its search borrows the fly's value).
    let judge_weight = if charles.is_none() { flychess::training::judge_weight(data, &value_fly, &brain, &descending)? } else { f32::NAN };
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
        let kit = Kit::new(brain.clone(), descending.clone())
            .with_flies(&[(value_fly.clone(), flies_entrants)])
            .with_charles(&charles.iter().cloned().collect::<Vec<_>>());
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
    for d in &duels {
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
    Ok(())
}

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
    pub shards: crate::cli::cluster::ShardArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub uci: UciEnginesArgs,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess duel` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct DuelArgs {
    pub first: String,
    pub second: String,
    /// Games (the most, with --sprt).
    #[arg(long, default_value_t = 40)]
    pub games: usize,
    #[arg(long, default_value_t = 1)]
    pub game_seed: u64,
    /// Stop as soon as the sequential test decides between --elo0 and --elo1.
    #[arg(long)]
    pub sprt: bool,
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    pub elo0: f64,
    #[arg(long, default_value_t = 50.0, allow_hyphen_values = true)]
    pub elo1: f64,
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    #[arg(long, default_value_t = 0.05)]
    pub beta: f64,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub shards: crate::cli::cluster::ShardArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub uci: UciEnginesArgs,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess profile` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct ProfileArgs {
    /// A fly by name, NAME+imagination, charles or charles:RUN, or a rung.
    #[arg(long)]
    pub player: Option<String>,
    /// Games analysed (taken from its ladder games, 20-ply openings shared with `rate`).
    #[arg(long, default_value_t = 40)]
    pub games: usize,
    /// Stockfish's search depth per position.
    #[arg(long, default_value_t = 10)]
    pub depth: u32,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub which: WhichBrain,
}

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

// The arguments of `flychess lessons` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct LessonsArgs {
    #[arg(long, default_value_t = 1_000)]
    pub positions: usize,
    #[arg(long, default_value_t = 10)]
    pub depth: u32,
    #[arg(long)]
    pub workers: Option<usize>,
}

// The arguments of `flychess imagine-tune` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct ImagineTuneArgs {
    #[arg(long)]
    pub fly: String,
    /// HOLD positions to try (each costs one think per legal move).
    #[arg(long, default_value_t = 256)]
    pub positions: usize,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess glances-tune` (its help text is the command's doc comment).
#[derive(Args)]
pub struct GlancesTuneArgs {
    #[arg(long)]
    pub fly: String,
    /// VAL positions the gain is chosen on (HOLD is measured whole).
    #[arg(long, default_value_t = 1024)]
    pub positions: usize,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess habituation-tune` (its help text is the command's doc comment).
#[derive(Args)]
pub struct HabituationTuneArgs {
    #[arg(long)]
    pub fly: String,
    /// VAL games whose every position is scored against the move played (reported beside).
    #[arg(long, default_value_t = 100)]
    pub games: usize,
    /// Won VAL positions (Stockfish: +3 or more for the mover) played out against the random
    /// mover with every cell of the grid (what chooses).
    #[arg(long, default_value_t = 40)]
    pub starts: usize,
    /// A game's cap in plies.
    #[arg(long, default_value_t = 300)]
    pub max_plies: usize,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess train` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct TrainArgs {
    #[arg(long)]
    pub name: String,
    /// Positions of the shipped dataset to use (HOLD and VAL first, the rest TRAIN).
    #[arg(long)]
    pub positions: Option<usize>,
    /// Steps the readout reads: 9,10,11,12 (their mean) or 12.
    #[arg(long, value_delimiter = ',', default_values_t = [9usize, 10, 11, 12])]
    pub read: Vec<usize>,
    /// Also write the fly into models/ (shipped with the app).
    #[arg(long)]
    pub ship: bool,
    /// Make an untrained (newborn) fly instead.
    #[arg(long)]
    pub newborn: bool,
    /// Share of TRAIN made of finishing lessons (`flychess lessons`), e.g. 0.1.
    #[arg(long, default_value_t = 0.0)]
    pub lessons: f64,
    /// The fit at scale: also the TRAIN rows of a games dataset (`flychess data games --out
    /// NAME`; a name or a path ending in .flyd), their DN readings cached and streamed off disk.
    #[arg(long)]
    pub games: Option<String>,
    /// With --games: how many of its TRAIN positions (default: all).
    #[arg(long, requires = "games")]
    pub games_positions: Option<usize>,
    /// With --games: the share of every batch drawn from the shipped Stockfish-labelled rows.
    #[arg(long, default_value_t = 0.25, requires = "games")]
    pub stockfish_share: f64,
    /// With --games: Stockfish's own moves for its TRAIN rows, a folder `data label --dataset`
    /// wrote (labels.json and labels.jsonl; a running job's folder is fine: the run uses the
    /// lines written when it starts).
    #[arg(long, requires = "games")]
    pub engine_labels: Option<PathBuf>,
    /// With --games: who teaches its rows: `master` (the game's move), `engine` (Stockfish's move;
    /// only labelled rows are used), `every-move` (Stockfish's whole opinion: every legal move's
    /// share exp((win % − best win %) / 2.5), from labels of `data label --every-move`) or weights
    /// `master=1,engine=3` / `master=1,every-move=3` (a row without a label takes the master's
    /// move). The value head learns Stockfish's best score where there is one, else the game's
    /// result. Default: engine where --engine-labels is given, else master.
    #[arg(long, requires = "games")]
    pub teacher: Option<String>,
    /// The share of every batch from the curriculum of finishing (`flychess data curriculum`:
    /// won positions taught the quickest win, stalemate lessons), e.g. 0.1; its held-out
    /// positions are never trained on.
    #[arg(long, default_value_t = 0.0)]
    pub curriculum: f64,
    /// The curriculum's dataset (default: DATA/curriculum/curriculum.flyd). Repeat it to mix
    /// several (their TRAIN rows together make the --curriculum share), e.g. the curriculum and
    /// the lessons of a fly's own games (`data curriculum --own-games`).
    #[arg(long)]
    pub curriculum_dataset: Vec<PathBuf>,
    /// Start the readout's fit from this fly's readout (same brain and steps) instead of a
    /// newborn one: a finished fly taught more (e.g. the curriculum) without refitting its
    /// millions of rows. Nothing worse on VAL than this fly is kept.
    #[arg(long, value_name = "FLY", conflicts_with_all = ["newborn", "train_brain"])]
    pub from: Option<String>,
    #[command(flatten)]
    pub brain_training: BrainTrainArgs,
    #[command(flatten)]
    pub fit: FitArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess eval` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct EvalArgs {
    /// The fly (default: the brain's own trained fly, the shipped one first).
    #[arg(long)]
    pub fly: Option<String>,
    /// Another player than a fly: `charles` (a transformer trained on the same positions,
    /// `flychess charles train`), measured on the same HOLD positions with the blind baseline.
    #[arg(long, conflicts_with = "fly")]
    pub player: Option<String>,
    /// With --player charles: the Charles run's name.
    #[arg(long, default_value = "charles")]
    pub charles: String,
    #[arg(long)]
    pub json: bool,
    /// Leave out the shuffled-wiring control (it caches a second brain the first time).
    #[arg(long)]
    pub no_controls: bool,
    /// Positions of the shipped dataset the controls train on (default: as many as the fly).
    #[arg(long)]
    pub positions: Option<usize>,
    /// Positions of the human test measured (default: all 4,096).
    #[arg(long)]
    pub human_positions: Option<usize>,
    /// Other flies of the same brain measured on the same HOLD and human-test positions, each
    /// with the paired difference "fly − this" and its 95 % interval (e.g. the fly it replaces).
    #[arg(long, value_name = "FLY")]
    pub against: Vec<String>,
    /// The curriculum whose held-out won positions give `fastest_win` and `stalemated`
    /// (default: DATA/curriculum/curriculum.flyd when it exists; else the HOLD positions with a
    /// forced mate).
    #[arg(long)]
    pub curriculum: Option<PathBuf>,
    /// Also fit the board-linear control, the blind baseline and the shuffled-wiring control on
    /// exactly the rows and teachers of this finished training run (the fly's own, DATA/runs/RUN),
    /// and measure them beside the fly with paired differences. Each is a resumable run of its
    /// own; shuffled wiring caches every row on the shuffled brain first (hours for 1.2 M rows).
    #[arg(long, value_name = "RUN")]
    pub controls_at_scale: Option<String>,
    /// With --controls-at-scale: only these of the three (board-linear, blind, shuffled-wiring;
    /// comma-separated; default all). `shuffled-wiring:N` is another shuffle (seed N; plain
    /// `shuffled-wiring` is seed 1), its own DN cache first (`flychess cache --shuffle-wiring N`).
    #[arg(long, value_delimiter = ',', requires = "controls_at_scale")]
    pub scale_controls: Vec<String>,
    #[command(flatten)]
    pub fit: FitArgs,
    #[command(flatten)]
    pub which: WhichBrain,
}

// The arguments of `flychess analyse` (its help text is the command's doc comment in `cli::Command`).
#[derive(Args)]
pub struct AnalyseArgs {
    #[arg(long)]
    pub fly: String,
    #[arg(long)]
    pub fen: Option<String>,
    /// A file with one FEN per line, streamed in batches of 32: one JSON line per position
    /// as it goes with --json; a bad line is reported with its number and the rest go on.
    #[arg(long)]
    pub fens: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
    /// Also the move one-move imagination plays, with weight W (default: the fly's tuned
    /// weight), and the value the fly sees after each move.
    #[arg(long, num_args = 0..=1, value_name = "W")]
    pub imagination: Option<Option<f32>>,
    #[command(flatten)]
    pub which: WhichBrain,
}

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
