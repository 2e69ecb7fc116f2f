//! The tunings a fly's play takes, chosen on VAL and kept in DATA under the fly's player id:
//! `flychess imagine-tune` (the weight of one-move imagination, reported on HOLD),
//! `flychess habituation-tune` (habituation's decay and weight against repetition, by play from
//! won VAL positions and by agreement with the masters' moves) and `flychess glances-tune` (two
//! glances' gain and choice, measured on HOLD beside the plain fly).

use std::path::Path;
use std::time::Instant;

use anyhow::{Result, anyhow};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use flychess_arena::glances::{Among, Glances, second_looks};
use flychess_arena::habituation::{GameTuning, Tuning, TuningGame, tune};
use flychess_fly::data::{Dataset, HOLD, Row, VAL, shipped_path};
use flychess_fly::fly::{self, Fly};
use flychess_fly::scoring::Target;
use flychess_fly::stats;

use super::targets;
use crate::cli::options::WhichBrain;

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

/// The fly `name` with its brain loaded (the brain asked for, which must be the fly's).
fn fly_with_its_brain(
    which: &WhichBrain,
    data: &Path,
    name: &str,
) -> Result<(Fly, flychess_brain::connectome::brain_file::Loaded, flychess_brain::brain::Brain)> {
    let f = Fly::load(&fly::find(name, data)?)?;
    let spec = which.spec(data)?;
    let (loaded, brain) = crate::cli::options::ready(&spec, data, flychess_brain::calibrate::CalibrationOptions::default())?;
    if loaded.checksum != f.meta.brain_checksum {
        return Err(anyhow!("fly {name} belongs to brain {}, not to {}", f.meta.brain, loaded.connectome.provenance.label()));
    }
    Ok((f, loaded, brain))
}

/// The imagination weights `imagine-tune` tries (SPEC §4); ∞ lets the value decide.
const IMAGINATION_WEIGHTS: [f32; 9] = [0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, f32::INFINITY];

/// Top-1 and good-move hits of the plain fly and of imagination at each weight, over `rows`.
struct ImaginationHits {
    plain: (usize, usize),
    weights: Vec<(usize, usize)>,
}

/// The plain fly's favourite and imagination's pick at each weight, against Stockfish's labels on `rows`.
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
        let (p, seen) = think_and_look_ahead(brain, &f.readout, descending, None, &pos, &[]);
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
pub fn imagination(args: &ImagineTuneArgs, data: &Path) -> Result<()> {
    let (name, positions) = (args.fly.as_str(), args.positions);
    let (f, loaded, brain) = fly_with_its_brain(&args.which, data, name)?;
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
    if args.json {
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

/// `flychess habituation-tune`: habituation's decay and weight for a fly, chosen on VAL games
/// (the games of the shipped VAL rows, never trained on; `flychess_arena::habituation::tune`),
/// kept in DATA/habituation.json under the fly's player id, with the whole grid.
pub fn habituation(args: &HabituationTuneArgs, data: &Path) -> Result<()> {
    let HabituationTuneArgs { ref fly, games, starts, max_plies, json, ref which } = *args;
    let name = fly.as_str();
    let (f, loaded, brain) = fly_with_its_brain(which, data, name)?;
    let dataset = Dataset::load(&shipped_path())?;
    let mut wanted = std::collections::BTreeSet::new();
    for r in dataset.val() {
        if wanted.len() >= games {
            break;
        }
        wanted.insert(r.game);
    }
    let pgn = crate::cli::datasets::book_pgn();
    eprintln!("reading {} VAL games from {}…", wanted.len(), pgn.display());
    let played = flychess_learning::datasets::game_positions::games_numbered(&pgn, &wanted)?;
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
    print_habituation(name, max_plies, &games_grid, &agreement);
    println!("kept in {}; play it as {name}+habituation", path.display());
    Ok(())
}

/// `habituation-tune` as text: the grid by play (what chooses) and by agreement with the masters.
fn print_habituation(name: &str, max_plies: usize, games_grid: &GameTuning, agreement: &Tuning) {
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
}

/// `flychess glances-tune`: two glances' gain and choice (the attended piece's moves, or all)
/// chosen on VAL positions by top-1 against Stockfish's move, then measured on HOLD beside the
/// plain fly with the paired difference; kept in DATA/glances.json under the fly's player id.
pub fn glances(args: &GlancesTuneArgs, data: &Path) -> Result<()> {
    let (name, positions) = (args.fly.as_str(), args.positions);
    let (f, loaded, brain) = fly_with_its_brain(&args.which, data, name)?;
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
    if args.json {
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
