//! `flychess eval`: a fly measured on HOLD and on the human test beside the controls fitted the
//! same way on the same rows (the blind baseline, the board-linear readout, shuffled wiring and,
//! with `--controls-at-scale RUN`, the controls at the fly's own data size), beside other flies of
//! its brain, with its value head against Stockfish's win chance and how it finishes won games.
//! Every player is a `PlayerRow`, printed as text or JSON from the same row. `--player charles`
//! measures Charles instead (`cli::charles`).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use clap::Args;
use rayon::prelude::*;

use flychess_brain::brain::simulator::EngineChoice;
use flychess_fly::cache::{Cache, Reading};
use flychess_fly::data::{Dataset, HOLD, Row, VAL, shipped_path};
use flychess_fly::fly::{self, Fly};
use flychess_fly::readout::Readout;
use flychess_fly::scoring::{PositionOutcome, Target, board_features, outcomes, summarise};
use flychess_fly::stats;
use flychess_learning::datasets::finishing::Finishing;
use flychess_learning::train::FitOptions;

use super::{fit_logged, targets};
use crate::cli::options::{FitArgs, WhichBrain};

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

/// Runs `flychess eval`: Charles with `--player charles`, else the fly (`--fly`, else the brain's
/// own) with the curriculum named (which must be there) or the default one where it exists.
pub fn run(args: &EvalArgs, data: &Path) -> Result<()> {
    if let Some(player) = &args.player {
        return match player.as_str() {
            "charles" => crate::cli::charles::eval(&args.which, data, &args.charles, &args.fit.options(), args.json),
            other => Err(anyhow!("unknown player {other:?}: a fly is named with --fly; --player takes charles")),
        };
    }
    // A curriculum named must be there (issue 68: a missing path measured something else
    // without a word); the default one is used where it exists.
    if let Some(named) = args.curriculum.as_ref().filter(|p| !p.exists()) {
        return Err(anyhow!(
            "--curriculum {}: no such file (make it with `flychess data curriculum`, or leave --curriculum out)",
            named.display()
        ));
    }
    let curriculum =
        args.curriculum.clone().unwrap_or_else(|| flychess_learning::datasets::finishing::default_dir(data).join("curriculum.flyd"));
    eval(args, data, &curriculum)
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

/// The rows every player is measured on, and the fly's readings of them and outcomes.
struct Measured<'a> {
    /// HOLD, VAL, and the TRAIN rows the controls are fitted on.
    hold_rows: &'a [Row],
    val_rows: &'a [Row],
    train_rows: &'a [Row],
    hold_t: Vec<Target>,
    val_t: Vec<Target>,
    train_t: Vec<Target>,
    /// The human test: does the fly's favourite match the move a master played?
    human_rows: Vec<Row>,
    human_t: Vec<Target>,
    /// The fly's readings of HOLD and of the human test, and its outcomes on them.
    fly_x: Vec<f32>,
    fly_hx: Vec<f32>,
    fly_o: Vec<PositionOutcome>,
    fly_h: Vec<PositionOutcome>,
}

impl<'a> Measured<'a> {
    /// `rows` (HOLD, VAL, then TRAIN) and the human test, with the fly's readings from `cache`
    /// (HOLD) and the human test's own cache.
    fn of(args: &EvalArgs, data: &Path, f: &Fly, cache: &Cache, rows: &'a [Row]) -> Result<Measured<'a>> {
        let (hold_rows, val_rows, train_rows) = (&rows[..HOLD], &rows[HOLD..HOLD + VAL], &rows[HOLD + VAL..]);
        let (hold_t, val_t, train_t) = (targets(hold_rows)?, targets(val_rows)?, targets(train_rows)?);
        let human_rows = human_test(args.human_positions)?;
        let human_t = targets(&human_rows)?;
        let fly_hx = human_features(&args.which, data, human_rows.len(), f.meta.reading)?;
        let fly_h = outcomes(&f.readout, &fly_hx, &human_t);
        let fly_x = cache.read(0..HOLD, f.meta.reading)?;
        let fly_o = outcomes(&f.readout, &fly_x, &hold_t);
        Ok(Measured { hold_rows, val_rows, train_rows, hold_t, val_t, train_t, human_rows, human_t, fly_x, fly_hx, fly_o, fly_h })
    }
}

/// The controls fitted beside the fly on the same rows, and their outcomes on HOLD (`_o`) and on
/// the human test (`_h`); shuffled wiring only where it was fitted.
struct ControlOutcomes {
    blind_o: Vec<PositionOutcome>,
    blind_h: Vec<PositionOutcome>,
    board_o: Vec<PositionOutcome>,
    board_h: Vec<PositionOutcome>,
    shuffled: Option<(Vec<PositionOutcome>, Vec<PositionOutcome>)>,
}

impl ControlOutcomes {
    /// The blind baseline (no input, only the biases: from/to/promotion popularity), the
    /// board-linear readout (the same heads on the 768 board planes, no brain), and, unless
    /// `no_controls`, shuffled wiring for a fly of an unaltered brain (a control's fly is its
    /// own control).
    fn fit(args: &EvalArgs, data: &Path, reading: Reading, n: usize, m: &Measured, plain_brain: bool) -> Result<Self> {
        let options = &args.fit.options();
        let blind_start = Readout::newborn(0, vec![], 1);
        let (blind, _) = fit_logged("blind", options, &blind_start, (&[], &m.train_t), (&[], &m.val_t))?;
        let blind_o = outcomes(&blind, &[], &m.hold_t);
        let board_start = Readout::newborn(768, vec![], 1);
        let (board, _) =
            fit_logged("board-linear", options, &board_start, (&planes(m.train_rows)?, &m.train_t), (&planes(m.val_rows)?, &m.val_t))?;
        let board_o = outcomes(&board, &planes(m.hold_rows)?, &m.hold_t);
        let shuffled =
            if !args.no_controls && plain_brain { Some(shuffled_control(&args.which, data, n, reading, options, m)?) } else { None };
        let blind_h = outcomes(&blind, &[], &m.human_t);
        let board_h = outcomes(&board, &planes(&m.human_rows)?, &m.human_t);
        Ok(ControlOutcomes { blind_o, blind_h, board_o, board_h, shuffled })
    }
}

/// The board's 768 planes of each row, one after another.
fn planes(rows: &[Row]) -> Result<Vec<f32>> {
    Ok(rows.par_iter().map(board_features).collect::<flychess_fly::Result<Vec<_>>>()?.concat())
}

/// The fly named with --fly, else the brain's own (the default brain's shipped fly).
fn the_fly(args: &EvalArgs, data: &Path) -> Result<(String, Fly)> {
    match &args.fly {
        Some(name) => Ok((name.to_string(), Fly::load(&fly::find(name, data)?)?)),
        None => {
            let spec = args.which.spec(data)?;
            // Only the brain's id is needed here (the cache below loads it with its homeostasis).
            let loaded = flychess_brain::store::ensure(&spec, data, &|_, _| {})?;
            let (name, path) = fly::trained_for(&loaded.checksum, data).ok_or_else(|| {
                anyhow!(
                    "no trained fly for {} ({}); train one with `flychess train --name NAME`, or name one with --fly",
                    loaded.connectome.provenance.label(),
                    fly::short_checksum(&loaded.checksum)
                )
            })?;
            Ok((name, Fly::load(&path)?))
        }
    }
}

/// The curriculum's held-out won positions and a reader of their readings on this brain, where
/// there is a curriculum.
fn curriculum_held(which: &WhichBrain, data: &Path, curriculum: &Path) -> Result<Option<(Vec<Row>, Cache)>> {
    if !curriculum.exists() {
        return Ok(None);
    }
    let c = flychess_learning::datasets::finishing::load(curriculum)?;
    let held = c.hold().to_vec();
    let (cc, _) = crate::cli::cache::cache_of(which, data, curriculum, Some(held.len()), None, EngineChoice::Auto)?;
    Ok(Some((held, cc)))
}

/// The tables of players on HOLD and on the human test, the fly's row first in each.
struct Tables {
    hold: Vec<PlayerRow>,
    human: Vec<PlayerRow>,
}

impl Tables {
    fn of(m: &Measured, c: &ControlOutcomes) -> Tables {
        let (fly_o, fly_h) = (&m.fly_o, &m.fly_h);
        let mut hold = vec![
            PlayerRow::of("fly", fly_o, fly_o),
            PlayerRow::of("blind", &c.blind_o, fly_o),
            PlayerRow::of("board-linear", &c.board_o, fly_o),
        ];
        let mut human = vec![
            PlayerRow::of("fly", fly_h, fly_h),
            PlayerRow::of("blind", &c.blind_h, fly_h),
            PlayerRow::of("board-linear", &c.board_h, fly_h),
        ];
        if let Some((o, h)) = &c.shuffled {
            hold.push(PlayerRow::of("shuffled wiring", o, fly_o));
            human.push(PlayerRow::of("shuffled wiring", h, fly_h));
        }
        Tables { hold, human }
    }
}

/// How the fly finishes won games (issue 56): on the curriculum's held-out won positions where
/// there is a curriculum, else on the HOLD positions with a forced mate (`won`, `fastest`).
struct FinishingFigures {
    held: Option<(Vec<Row>, Cache)>,
    finishing: Option<Finishing>,
    won: usize,
    fastest: usize,
    against: Vec<serde_json::Value>,
}

/// `flychess eval` of a fly: everything measured in order, then the report as JSON or text.
fn eval(args: &EvalArgs, data: &Path, curriculum: &Path) -> Result<()> {
    let dataset = Dataset::load(&shipped_path())?;
    let (name, f) = the_fly(args, data)?;
    let name = name.as_str();
    let n = args.positions.unwrap_or(HOLD + VAL + f.meta.train_positions).min(dataset.rows.len());
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
    let (cache, loaded) = crate::cli::cache::cache(&args.which, data, Some(HOLD), None, EngineChoice::Auto)?;
    if cache.meta.brain_checksum != f.meta.brain_checksum {
        return Err(anyhow!(
            "fly {name} belongs to brain {} ({}), not to the brain asked for ({})",
            f.meta.brain,
            fly::short_checksum(&f.meta.brain_checksum),
            fly::short_checksum(&cache.meta.brain_checksum)
        ));
    }
    let m = Measured::of(args, data, &f, &cache, &dataset.rows[..n])?;
    let value_ranks = value_ranks(&f, &m)?;
    let plain_brain = matches!(loaded.connectome.provenance.control, flychess_brain::connectome::Control::None);
    let controls = ControlOutcomes::fit(args, data, f.meta.reading, n, &m, plain_brain)?;
    let mut tables = Tables::of(&m, &controls);
    let (won, fastest) = fastest_wins(&f.readout, &m.fly_x, m.hold_rows)?;
    // The curriculum's held-out won positions, where there is a curriculum: the fly's finishing,
    // and a reader of its readings for the flies it is compared with.
    let held = curriculum_held(&args.which, data, curriculum)?;
    let finishing = match &held {
        Some((held, cc)) => {
            Some(flychess_learning::datasets::finishing::judge(&f.readout, &cc.read(0..held.len(), f.meta.reading)?, held)?)
        }
        None => None,
    };
    let mut finishing = FinishingFigures { held, finishing, won, fastest, against: Vec::new() };
    // The controls fitted on the fly's own rows and teachers (`--controls-at-scale`).
    let at_scale = match &args.controls_at_scale {
        Some(run) => {
            let at = super::controls::controls_at_scale(
                &args.which,
                data,
                (run.as_str(), args.scale_controls.as_slice()),
                &f.meta,
                &m.hold_t,
                &m.human_rows,
                &m.human_t,
            )?;
            for c in &at {
                tables.hold.push(PlayerRow::of(&c.player, &c.hold, &m.fly_o));
                tables.human.push(PlayerRow::of(&c.player, &c.human, &m.fly_h));
            }
            Some(super::controls::report(run, &m.fly_o, &m.fly_h, &at))
        }
        None => None,
    };
    against_other_flies(args, data, (name, &f), &m, &cache, &mut tables, &mut finishing)?;
    let mut report = report(name, &f, &m, &controls, &tables, value_ranks, at_scale);
    if let (Some(report), serde_json::Value::Object(more)) = (report.as_object_mut(), finishing_report(&finishing)) {
        report.extend(more);
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(name, &f, &m, &tables, value_ranks, &finishing);
    }
    Ok(())
}

/// How the fly's value head ranks HOLD positions against Stockfish's win chance (Spearman's ρ;
/// the target value is a monotone map of the best move's win %), beside what a plain material
/// count ranks.
fn value_ranks(f: &Fly, m: &Measured) -> Result<(Option<stats::Estimate>, Option<stats::Estimate>)> {
    let d = f.readout.inputs;
    let fly_values: Vec<f64> = (0..m.hold_rows.len()).map(|i| f.readout.heads(&m.fly_x[i * d..(i + 1) * d]).value as f64).collect();
    let stockfish_values: Vec<f64> = m.hold_t.iter().map(|t| t.value as f64).collect();
    let material: Vec<f64> = m.hold_rows.iter().map(material_balance).collect::<Result<_>>()?;
    Ok((stats::spearman(&fly_values, &stockfish_values), stats::spearman(&material, &stockfish_values)))
}

/// Other flies of this brain (`--against`), on the same rows (their features from the same
/// caches), each a row of both tables, and its finishing beside the fly's where there is a
/// curriculum.
fn against_other_flies(
    args: &EvalArgs,
    data: &Path,
    (name, f): (&str, &Fly),
    m: &Measured,
    cache: &Cache,
    tables: &mut Tables,
    finishing: &mut FinishingFigures,
) -> Result<()> {
    for other in &args.against {
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
            (Cow::Borrowed(&m.fly_x[..]), Cow::Borrowed(&m.fly_hx[..]))
        } else {
            let hx = human_features(&args.which, data, m.human_rows.len(), o.meta.reading)?;
            (Cow::Owned(cache.read(0..HOLD, o.meta.reading)?), Cow::Owned(hx))
        };
        tables.hold.push(PlayerRow::of(format!("fly {other}"), &outcomes(&o.readout, &x, &m.hold_t), &m.fly_o));
        tables.human.push(PlayerRow::of(format!("fly {other}"), &outcomes(&o.readout, &hx, &m.human_t), &m.fly_h));
        if let (Some((held, cc)), Some(mine)) = (&finishing.held, &finishing.finishing) {
            let theirs = flychess_learning::datasets::finishing::judge(&o.readout, &cc.read(0..held.len(), o.meta.reading)?, held)?;
            let d = stats::paired_difference(&mine.fastest, &theirs.fastest);
            finishing.against.push(serde_json::json!({
                "fly": other,
                "fastest_win": theirs.fastest_win.value,
                "fastest_win_interval": [theirs.fastest_win.low, theirs.fastest_win.high],
                "stalemated": theirs.stalemated.value,
                "fly_minus_this_fastest_win": d.value,
                "fly_minus_this_fastest_win_interval": [d.low, d.high],
            }));
        }
    }
    Ok(())
}

/// The share of legal moves a random mover's favourite is: its expected top-1.
fn random_top1(t: &[Target]) -> f64 {
    t.iter().map(|t| 1.0 / t.legal.len() as f64).sum::<f64>() / t.len().max(1) as f64
}

/// `eval --json`'s report, less how the fly finishes (`finishing_report`).
fn report(
    name: &str,
    f: &Fly,
    m: &Measured,
    c: &ControlOutcomes,
    tables: &Tables,
    (value_rho, material_rho): (Option<stats::Estimate>, Option<stats::Estimate>),
    at_scale: Option<serde_json::Value>,
) -> serde_json::Value {
    let (table, human_table) = (&tables.hold, &tables.human);
    let (fly_m, blind_m, board_m) = (summarise(&m.fly_o), summarise(&c.blind_o), summarise(&c.board_o));
    let taught = taught_by(&f.meta);
    serde_json::json!({
        "fly": name,
        "brain": f.meta.brain,
        "brain_checksum": f.meta.brain_checksum,
        "hold_positions": HOLD,
        "train_positions": m.train_rows.len(),
        "positions_trained": f.meta.train_positions,
        "teacher": taught.0,
        "positions_by_teacher": taught.1,
        "top1": fly_m.top1, "good": fly_m.good, "loss": fly_m.loss, "policy_loss": fly_m.policy_loss,
        "top1_interval": [table[0].top1.low, table[0].top1.high],
        "blind_top1": blind_m.top1, "blind_good": blind_m.good, "blind_loss": blind_m.loss,
        "board_top1": board_m.top1, "board_good": board_m.good, "board_loss": board_m.loss,
        "shuffled_top1": c.shuffled.as_ref().map(|(o, _)| summarise(o).top1),
        "fly_minus_blind_top1": table[1].fly_minus_top1,
        "random_top1": random_top1(&m.hold_t),
        "players": table.iter().map(PlayerRow::json).collect::<Vec<_>>(),
        "human_positions": m.human_t.len(),
        "human_top1": human_table[0].top1.value,
        "human_top1_interval": [human_table[0].top1.low, human_table[0].top1.high],
        "human_random_top1": random_top1(&m.human_t),
        "human_players": human_table.iter().map(PlayerRow::json).collect::<Vec<_>>(),
        "value_rho": value_rho.map(|e| e.value),
        "value_rho_interval": value_rho.map(|e| [e.low, e.high]),
        "material_rho": material_rho.map(|e| e.value),
        "material_rho_interval": material_rho.map(|e| [e.low, e.high]),
        "controls_at_scale": at_scale,
    })
}

/// How the fly finishes won games (issue 56), the part of the report beside the rest.
fn finishing_report(figures: &FinishingFigures) -> serde_json::Value {
    let FinishingFigures { finishing, won, fastest, against, .. } = figures;
    let (won, fastest) = (*won, *fastest);
    let finishing_by_kind = finishing.as_ref().map(|c| {
        c.by_kind
            .iter()
            .map(|(k, (n, hit))| (k.clone(), serde_json::json!({"positions": n, "fastest": hit})))
            .collect::<serde_json::Map<_, _>>()
    });
    serde_json::json!({
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
        "finishing_against": against,
    })
}

/// `eval`'s report as text: both tables with the random mover, the value head, and finishing.
fn print_text(
    name: &str,
    f: &Fly,
    m: &Measured,
    tables: &Tables,
    (value_rho, material_rho): (Option<stats::Estimate>, Option<stats::Estimate>),
    figures: &FinishingFigures,
) {
    println!(
        "{name} ({}) on HOLD ({HOLD} positions), controls fitted on the same {} TRAIN positions; 95 % intervals:",
        f.meta.brain,
        m.train_rows.len()
    );
    for row in &tables.hold {
        println!("{}", row.line());
    }
    println!("  {:16} top-1 {:5.1}%", "random move", 100.0 * random_top1(&m.hold_t));
    println!(
        "the human test ({} positions from master games no training row came from): top-1 = the master's move is the favourite",
        m.human_t.len()
    );
    for row in &tables.human {
        println!("{}", row.line());
    }
    println!("  {:16} top-1 {:5.1}%", "random move", 100.0 * random_top1(&m.human_t));
    if let (Some(v), Some(material)) = (value_rho, material_rho) {
        println!(
            "  the value head ranks HOLD positions as Stockfish's win chance does: Spearman ρ {:.3} [{:.3}, {:.3}]; a plain material count: {:.3} [{:.3}, {:.3}]",
            v.value, v.low, v.high, material.value, material.low, material.high
        );
    }
    if let Some(c) = &figures.finishing {
        println!(
            "  finishing: on {} held-out won positions of the curriculum the favourite is the quickest win in {}; in {} stalemate lessons it stalemates in {}",
            c.won_positions,
            c.fastest_win.percent(),
            c.stalemate_lessons,
            c.stalemated.percent()
        );
        for a in &figures.against {
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
    let (won, fastest) = (figures.won, figures.fastest);
    if won > 0 {
        println!(
            "  fastest win: on {won} HOLD positions Stockfish sees a forced mate in; the fly's favourite is the quickest mate in {fastest} ({:.1}%)",
            100.0 * fastest as f64 / won as f64
        );
    }
}

/// The control with the brain's wiring shuffled (seed 1): its DN-rate cache (made once, kept in
/// DATA/cache) and a readout fitted on it exactly as the fly's, measured on HOLD and on the human
/// test.
fn shuffled_control(
    which: &WhichBrain,
    data: &Path,
    n: usize,
    reading: Reading,
    options: &FitOptions,
    m: &Measured,
) -> Result<(Vec<PositionOutcome>, Vec<PositionOutcome>)> {
    let mut shuffled = which.clone();
    shuffled.shuffle_wiring = Some(1);
    eprintln!("shuffled wiring: caching the DN rates of the same brain with its connections handed out again (seed 1)");
    let (cache, _) = crate::cli::cache::cache(&shuffled, data, Some(n), None, EngineChoice::Auto)?;
    let x = |r: std::ops::Range<usize>| cache.read(r, reading);
    let start = Readout::newborn(cache.meta.descending, reading.steps(), 1);
    let (readout, _) = fit_logged("shuffled", options, &start, (&x(HOLD + VAL..n)?, &m.train_t), (&x(HOLD..HOLD + VAL)?, &m.val_t))?;
    let human = human_features(&shuffled, data, m.human_t.len(), reading)?;
    Ok((outcomes(&readout, &x(0..HOLD)?, &m.hold_t), outcomes(&readout, &human, &m.human_t)))
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
    let (cache, _) = crate::cli::cache::cache_of(which, data, &flychess_fly::data::human_test_path(), Some(n), None, EngineChoice::Auto)?;
    Ok(cache.read(0..n, reading)?)
}

/// Who taught a fly and how many positions each source taught: the fly's own words where it
/// keeps them (issue 55 on); for a fly made before, what its data line says: the shipped rows'
/// scored moves and, at scale, "…; and N positions of SOURCE" master moves with the games' results.
fn taught_by(meta: &flychess_fly::fly::FlyMeta) -> (String, std::collections::BTreeMap<String, usize>) {
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
