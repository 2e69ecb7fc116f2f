//! `flychess data curriculum`: the curriculum of finishing
//! (`flychess_learning::datasets::finishing`). Its positions are planned once (won TRAIN positions
//! of a games dataset found by its engine labels, the dataset's human-test positions, basic won
//! endgames, stalemate lessons, and the lessons of a fly's own games, replayed here by the rules
//! the window plays by), labelled by Stockfish into DIR/labels.jsonl (resumable, one shard at a
//! time or the shards' parts joined), then built into DIR/curriculum.flyd.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use flychess_arena::ladder::GameRow;
use flychess_fly::data::Dataset;
use flychess_fly::shard::{Part, Shard};
use flychess_lab::game::Game;
use flychess_learning::datasets::finishing::{
    CurriculumKey, OwnGame, OwnGames, Plan, Planned, build, plan, positions as planned_positions,
};
use flychess_learning::datasets::stockfish_labels::{LabelOptions, Sample, label};
use flychess_learning::teacher::EngineLabels;

use super::dataset_path;
use crate::cli::cluster::ShardArgs;

// The arguments of `flychess data curriculum` (its help text is the subcommand's doc comment in `DataCommand`).
#[derive(Args)]
pub struct CurriculumArgs {
    /// Where the curriculum goes (default: DATA/curriculum).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The games dataset its game positions come from (a name or a .flyd path).
    #[arg(long, default_value = "games-1200k")]
    pub games: String,
    /// Stockfish's moves for that dataset's TRAIN rows (`data label --dataset`), searched for
    /// won positions; without them only the held-out human-test positions come from games.
    #[arg(long)]
    pub engine_labels: Option<PathBuf>,
    /// Engine labels searched (the first ones; there must be this many).
    #[arg(long, default_value_t = 400_000)]
    pub labels_searched: usize,
    /// Won TRAIN positions taken (at most).
    #[arg(long, default_value_t = 12_000)]
    pub won: usize,
    /// Random positions of each basic endgame.
    #[arg(long, default_value_t = 5_000)]
    pub endgames: usize,
    #[arg(long, default_value_t = 10_000)]
    pub stalemates: usize,
    #[arg(long, default_value_t = 10)]
    pub depth: u32,
    /// Stockfish's best moves ranked per position.
    #[arg(long, default_value_t = 8)]
    pub multipv: usize,
    /// Engines run at once (default: one per core).
    #[arg(long)]
    pub workers: Option<usize>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Label at most this many of the planned positions (default: all); the dataset is
    /// built from what is labelled.
    #[arg(long)]
    pub positions: Option<usize>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// A fly's own games (a games file `duel` or `rate` wrote; repeat for more): the positions
    /// where the fly of --own-player, to move, is --own-lead points ahead become lessons,
    /// a tenth of the games held out whole (imitation learning's DAgger).
    #[arg(long = "own-games", value_name = "FILE")]
    pub own_games: Vec<PathBuf>,
    /// The player of --own-games by its name in those games (one player id must answer to it).
    #[arg(long, default_value = "flywire")]
    pub own_player: String,
    /// Material ahead (pawn 1, knight and bishop 3, rook 5, queen 9) for a position of the own
    /// games to be taken.
    #[arg(long, default_value_t = 5)]
    pub own_lead: i32,
    /// Positions of the own games taken at most (a seeded sample).
    #[arg(long, default_value_t = 8_000)]
    pub own_most: usize,
    /// Leave out the games dataset's human-test positions (held-out won positions of real games).
    #[arg(long)]
    pub no_human_test: bool,
    #[command(flatten)]
    pub shards: ShardArgs,
}

/// Runs `flychess data curriculum`: the parts joined where asked, the plan made or read back,
/// this run's share labelled, and (unless this run is one shard) the curriculum built.
pub fn run(args: &CurriculumArgs, data: &Path) -> Result<()> {
    let dir = args.out.clone().unwrap_or_else(|| flychess_learning::datasets::finishing::default_dir(data));
    let games_path = dataset_path(&args.games, data)?;
    CurriculumRun { args, dir, games_path }.run()
}

/// `data curriculum` with its folder and games dataset found: plan, label, build.
struct CurriculumRun<'a> {
    args: &'a CurriculumArgs,
    /// Where the curriculum goes (`--out`, else DATA/curriculum).
    dir: PathBuf,
    /// The games dataset its game positions come from.
    games_path: PathBuf,
}

impl CurriculumRun<'_> {
    fn run(&self) -> Result<()> {
        let args = self.args;
        let file = self.dir.join("labels.jsonl");
        let labeller = format!("Stockfish, 1 thread, MultiPV {}, depth {}", args.multipv, args.depth);
        if let Some(count) = args.shards.merge_shards {
            let (whole, lines, bytes) = flychess_learning::datasets::stockfish_labels::merge_shards::<CurriculumKey>(
                &file,
                count as usize,
                "flychess data curriculum",
            )?;
            eprintln!("{}: {lines} labelled positions joined from {count} parts ({bytes} bytes)", whole.display());
        }
        let (planned, the_plan) = self.planned()?;
        let key = CurriculumKey { plan: the_plan, depth: args.depth, multipv: args.multipv };
        if args.shards.merge_shards.is_none() && self.label(&planned, &file, &key)? {
            return Ok(());
        }
        self.build(&planned, &labeller)
    }

    /// The curriculum's positions, planned from the games dataset (with its engine labels and a
    /// fly's own games where given) or read back from an earlier run of the same plan, and the plan.
    fn planned(&self) -> Result<(Vec<Planned>, Plan)> {
        let args = self.args;
        eprintln!("reading {}…", self.games_path.display());
        let games = Dataset::load(&self.games_path)?;
        let sha = games.content_hash();
        let labels = self.engine_labels(&sha)?;
        let (own_rows, own) = match own_games(args)? {
            Some((rows, key)) => (rows, Some(key)),
            None => (Vec::new(), None),
        };
        let the_plan = Plan {
            games_sha256: sha,
            labels_searched: if labels.is_some() { args.labels_searched } else { 0 },
            won: if labels.is_some() { args.won } else { 0 },
            endgames: args.endgames,
            stalemates: args.stalemates,
            seed: args.seed,
            own,
            human_test: !args.no_human_test,
        };
        let (planned, fresh) = planned_positions(&self.dir, &the_plan, || -> Result<Vec<Planned>> {
            let own = replayed(&own_rows, the_plan.own.as_ref())?;
            Ok(plan(&games, labels.as_ref(), &the_plan, &own)?)
        })?;
        drop(games);
        let mut origins = std::collections::BTreeMap::<&str, (usize, usize)>::new();
        for p in &planned {
            let c = origins.entry(p.origin.as_str()).or_default();
            if p.held { c.0 += 1 } else { c.1 += 1 }
        }
        eprintln!(
            "{} {} positions in {} (held out / trained on): {}",
            if fresh { "planned" } else { "read back" },
            planned.len(),
            self.dir.display(),
            origins.iter().map(|(o, (h, t))| format!("{o} {h}/{t}")).collect::<Vec<_>>().join(", ")
        );
        Ok((planned, the_plan))
    }

    /// Stockfish's moves for the games dataset's TRAIN rows (`--engine-labels`), where given:
    /// there must be as many whole lines as `--labels-searched` says.
    fn engine_labels(&self, sha: &str) -> Result<Option<EngineLabels>> {
        let args = self.args;
        let Some(dir) = &args.engine_labels else { return Ok(None) };
        let l = EngineLabels::read(dir, sha, args.labels_searched)?;
        if l.labels.len() < args.labels_searched {
            return Err(anyhow!(
                "{} holds {} whole lines of labels; search that many with --labels-searched {} (the plan must not change as labels arrive)",
                dir.display(),
                l.labels.len(),
                l.labels.len()
            ));
        }
        Ok(Some(l))
    }

    /// Labels this run's share of the planned positions (one shard's into its part file, else up
    /// to `--positions` into the labels); true when it was one shard (the build waits for the merge).
    fn label(&self, planned: &[Planned], file: &Path, key: &CurriculumKey) -> Result<bool> {
        let args = self.args;
        // The labels' sidecar names the whole plan; --positions only says how far this run goes.
        let total = planned.len();
        let stop = args.positions.unwrap_or(total).min(total);
        let samples: Vec<Sample> = planned.iter().map(|p| p.sample()).collect();
        let shard = args.shards.shard;
        let (label_file, range) = match shard {
            Some(shard) => {
                let part_file = flychess_fly::shard::part_path(file, shard);
                flychess_fly::shard::start_part(&part_file, key, Part { shard, total })?;
                (part_file, shard.range(total))
            }
            None => {
                flychess_fly::shard::start_part(file, key, Part { shard: Shard { index: 1, count: 1 }, total })?;
                (file.to_path_buf(), 0..stop)
            }
        };
        let stockfish = flychess_fly::stockfish::find_stockfish(None)?;
        let workers = args.workers.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
        let bar = ProgressBar::new(range.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("curriculum [{bar:40}] {pos}/{len} positions, {per_sec}, eta {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        let options = LabelOptions {
            first_index: range.start,
            depth: args.depth,
            multipv: args.multipv,
            workers,
            positions: range.len(),
            seed: args.seed,
            stockfish,
            compact: false,
            every_move: false,
        };
        let done = label(&samples[range.clone()], &label_file, &options, &|d, _| bar.set_position(d as u64))?;
        bar.finish_and_clear();
        if let Some(shard) = shard {
            eprintln!("{done} positions labelled in {} (shard {shard}; join with --merge-shards {})", label_file.display(), shard.count);
            return Ok(true);
        }
        Ok(false)
    }

    /// Builds DIR/curriculum.flyd from the labelled positions and says what it holds.
    fn build(&self, planned: &[Planned], labeller: &str) -> Result<()> {
        let built = build(&self.dir, planned, labeller)?;
        if self.args.json {
            println!("{}", serde_json::to_string_pretty(&built)?);
        } else {
            println!(
                "{}: {} of {} labelled positions are won for the mover; {} held out, {} to train on. By kind (held out / train): {}. By origin: {}",
                built.path.display(),
                built.won,
                built.labelled,
                built.held_out,
                built.train,
                built.by_kind.iter().map(|(k, (h, t))| format!("{k} {h}/{t}")).collect::<Vec<_>>().join(", "),
                built.by_origin.iter().map(|(k, (h, t))| format!("{k} {h}/{t}")).collect::<Vec<_>>().join(", ")
            );
        }
        Ok(())
    }
}

/// `--own-games`: the games and the plan's key for them (the files' content hash and the one
/// player id that answers to `--own-player`; refused when none or several do). None without them.
fn own_games(args: &CurriculumArgs) -> Result<Option<(Vec<GameRow>, OwnGames)>> {
    if args.own_games.is_empty() {
        return Ok(None);
    }
    let mut texts = Vec::new();
    let mut games = Vec::new();
    for f in &args.own_games {
        let text = std::fs::read_to_string(f).with_context(|| format!("reading the own games {}", f.display()))?;
        games.extend(flychess_arena::ladder::games_in_text(&text, f)?);
        texts.push(text.into_bytes());
    }
    let player = &args.own_player;
    let ids: std::collections::BTreeSet<&str> = games
        .iter()
        .flat_map(|g| [(&g.white, &g.white_id), (&g.black, &g.black_id)])
        .filter(|(name, id)| *name == player && !id.is_empty())
        .map(|(_, id)| id.as_str())
        .collect();
    let player_id = match ids.len() {
        1 => ids.into_iter().next().expect("one").to_string(),
        0 => return Err(anyhow!("no game of the own games is played by a player named {player:?}")),
        _ => {
            return Err(anyhow!(
                "{} different players are named {player:?} in the own games ({}); give files of one of them",
                ids.len(),
                ids.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
    };
    let key = OwnGames {
        games_sha256: flychess_learning::datasets::finishing::games_files_sha256(&texts),
        player_id,
        lead: args.own_lead,
        most: args.own_most,
    };
    Ok(Some((games, key)))
}

/// The own games the player of `key` played, replayed by the rules the window plays by (the lab's
/// `Game`) for the curriculum to read. A game that does not replay is an error naming the game
/// (its number among all the own games), never skipped in silence. None without `--own-games`.
fn replayed(rows: &[GameRow], key: Option<&OwnGames>) -> Result<Vec<OwnGame>> {
    let Some(key) = key else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for (k, g) in rows.iter().enumerate() {
        if g.white_id != key.player_id && g.black_id != key.player_id {
            continue;
        }
        let game = Game::from_pgn(&g.pgn).map_err(|e| anyhow!("own game {} ({} – {}): {e}", k + 1, g.white, g.black))?;
        out.push(OwnGame {
            white_id: g.white_id.clone(),
            black_id: g.black_id.clone(),
            pgn: g.pgn.clone(),
            positions: game.positions()[..game.plies()].to_vec(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game of `white_id` against `black_id` from `fen`, its moves in SAN, as a games file holds it.
    fn own_game(white_id: &str, black_id: &str, fen: &str, moves: &str) -> GameRow {
        GameRow {
            white: white_id.into(),
            black: black_id.into(),
            white_id: white_id.into(),
            black_id: black_id.into(),
            opening: 0,
            swapped: false,
            result: "*".into(),
            termination: "move cap".into(),
            plies: moves.split_whitespace().filter(|t| !t.ends_with('.')).count(),
            pgn: format!("[White \"{white_id}\"]\n[Black \"{black_id}\"]\n[SetUp \"1\"]\n[FEN \"{fen}\"]\n[Result \"*\"]\n\n{moves} *\n"),
        }
    }

    /// The player's games are replayed (the position before each move, from the game's FEN), the
    /// others' left alone even when they would not replay; a game of the player's that does not
    /// replay is refused, naming it by its number among all the own games.
    #[test]
    fn the_players_own_games_are_replayed_and_one_that_does_not_replay_is_refused_by_its_number() {
        let fen = "7k/8/8/8/8/8/8/K2Q4 w - - 0 1";
        let key = OwnGames { games_sha256: "x".into(), player_id: "fly-1".into(), lead: 5, most: 100 };
        let fly = own_game("fly-1", "random", fen, "1. Qd2 Kg8 2. Qd3 Kh8 3. Qd4 Kg8");
        let others_broken = own_game("fly-2", "random", fen, "1. Qd2 Kg8 2. Ke4");
        let games = replayed(&[others_broken.clone(), fly.clone()], Some(&key)).unwrap();
        assert_eq!(games.len(), 1);
        assert_eq!(games[0].positions.len(), 6);
        assert_eq!(games[0].positions[0], flychess_brain::chess::position_from_fen(fen).unwrap());
        assert!(replayed(std::slice::from_ref(&fly), None).unwrap().is_empty());
        let broken = own_game("fly-1", "random", fen, "1. Qd2 Kg8 2. Ke4");
        let e = replayed(&[fly, others_broken, broken], Some(&key)).unwrap_err().to_string();
        assert!(e.starts_with("own game 3 (fly-1 – random): "), "{e}");
    }
}
