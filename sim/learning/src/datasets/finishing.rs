//! `flychess data curriculum`: the positions of the curriculum of finishing
//! (`flychess_learning::curriculum`), their Stockfish labels and the dataset a fit and `eval` read.
//! Besides made endgames, stalemate lessons and won game positions, a curriculum can take the
//! positions a fly meets in its own games while far ahead (`--own-games`, `OwnGames`): the
//! lessons of imitation learning's DAgger, taught where the fly's own play goes. Those games are
//! the arena's, replayed by the caller (`OwnGame`), so learning needs no arena.
//!
//! A run plans its positions once (`plan`) and keeps them in DIR/positions.jsonl, with what they
//! were planned from in DIR/positions.json (the games dataset by content, the engine labels
//! searched, the seed and the counts): a rerun with the same plan reuses them, another plan
//! starts afresh. Stockfish then ranks each position's best moves (`stockfish_labels::label`, MultiPV,
//! fixed depth, resumable, sharded like `data label`) into DIR/labels.jsonl. `build` joins the
//! two: a position stays when Stockfish calls it won for the mover; the held-out ones come first
//! (the dataset's HOLD, never trained on), the rest are TRAIN; the dataset goes to
//! DIR/curriculum.flyd, keyed by its content like every dataset.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::{EnPassantMode, Position};

use flychess_fly::data::{Dataset, Labels, Meta, Row};
use flychess_fly::readout::position_key;
use flychess_fly::stats::Dice;

use super::stockfish_labels::Sample;
use crate::curriculum::{Endgame, endgame_position, held_out, is_won, kind_of, rank_score, stalemate_lesson};
use crate::teacher::EngineLabels;
use crate::{Error, Result};

/// What a curriculum's positions were planned from: a different plan is a different curriculum.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The games dataset its game positions come from, by content.
    pub games_sha256: String,
    /// Engine labels of that dataset's TRAIN rows searched for won positions.
    pub labels_searched: usize,
    /// Won TRAIN positions taken from them (at most).
    pub won: usize,
    /// Random positions made of each basic endgame.
    pub endgames: usize,
    pub stalemates: usize,
    pub seed: u64,
    /// Positions of a fly's own games (`OwnGames`); None in plans made before they existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own: Option<OwnGames>,
    /// Whether the games dataset's human-test positions are planned (held out) too.
    #[serde(default = "planned_by_default", skip_serializing_if = "is_true")]
    pub human_test: bool,
}

fn planned_by_default() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// Lessons from the positions a fly meets in its own games (what imitation learning calls
/// DAgger): where the fly, to move, is at least `lead` points of material ahead (pawn 1, knight
/// and bishop 3, rook 5, queen 9), the positions the plain fly stalemates or shuffles in
/// instead of mating. Stockfish labels them like every curriculum position. A whole game is held
/// out or trained on (one game in `HELD_OUT_ONE_IN`, by a hash of its moves), so that the
/// held-out positions are not neighbours of trained ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OwnGames {
    /// The games files (`duel`/`rate` games, one JSON game a line), by content: the sha256 of
    /// their texts in the order given.
    pub games_sha256: String,
    /// The player whose positions are taken, by what plays (`Entrant::id`), not by its name.
    pub player_id: String,
    pub lead: i32,
    /// Positions taken at most (a seeded sample when there are more).
    pub most: usize,
}

/// One game of the player's own as the curriculum reads it: who played White and Black (by
/// `Entrant::id`), its PGN (which decides whether the game is held out) and the position before
/// each of its moves. The games are the arena's (a `duel` or `rate` games file): the caller
/// replays them, by the rules it plays by, and says which does not replay.
#[derive(Clone, Debug)]
pub struct OwnGame {
    pub white_id: String,
    pub black_id: String,
    pub pgn: String,
    /// The position before each move, from the game's start.
    pub positions: Vec<shakmaty::Chess>,
}

/// What a curriculum's labels depend on: its plan and the search (a shard's sidecar key).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurriculumKey {
    pub plan: Plan,
    pub depth: u32,
    pub multipv: usize,
}

/// One planned position: where it comes from and whether it is held out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Planned {
    pub fen: String,
    /// The game (1-based) of a real game's position; 0 for a made one.
    pub game: u32,
    pub ply: u16,
    pub legal: u8,
    pub held: bool,
    /// "games" (TRAIN rows), "human test" (the dataset's HOLD rows: held out), an endgame's name,
    /// or "stalemate".
    pub origin: String,
}

impl Planned {
    pub fn sample(&self) -> Sample {
        Sample { fen: self.fen.clone(), game: self.game, ply: self.ply, legal: self.legal }
    }
}

fn planned(pos: &shakmaty::Chess, game: u32, ply: u16, held: bool, origin: &str) -> Planned {
    Planned {
        fen: Fen::from_position(pos, EnPassantMode::Legal).to_string(),
        game,
        ply,
        legal: pos.legal_moves().len().min(255) as u8,
        held,
        origin: origin.to_string(),
    }
}

/// The curriculum's positions, shuffled with the plan's seed (so any prefix is a fair mix): the
/// won TRAIN rows of `games` by their engine labels (trained on), every human-test row of
/// `games` (held out; those Stockfish calls won stay), `plan.endgames` of each basic endgame and
/// `plan.stalemates` stalemate lessons (a tenth of the made ones held out, `curriculum::held_out`),
/// and with `plan.own` the positions of the fly's own games in `own` (`own_positions`).
/// A position planned twice is kept once.
pub fn plan(games: &Dataset, labels: Option<&EngineLabels>, plan: &Plan, own: &[OwnGame]) -> Result<Vec<Planned>> {
    use flychess_brain::chess::position_from_fen;
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut keep = |p: Planned, pos: &shakmaty::Chess, out: &mut Vec<Planned>| {
        if seen.insert(position_key(pos)) {
            out.push(p);
        }
    };
    for row in games.hold().iter().filter(|_| plan.human_test) {
        let pos = position_from_fen(&row.fen)?;
        if pos.legal_moves().is_empty() {
            continue;
        }
        keep(planned(&pos, row.game, row.ply, true, "human test"), &pos, &mut out);
    }
    if let Some(labels) = labels {
        let first = games.meta.hold + games.meta.val;
        let mut taken = 0;
        for (k, label) in labels.labels.iter().take(plan.labels_searched).enumerate() {
            if taken >= plan.won {
                break;
            }
            let row =
                games.rows.get(labels.first_row + k).ok_or_else(|| Error::Invalid("an engine label past the dataset's end".to_string()))?;
            if labels.first_row + k < first || (label.game, label.ply) != (row.game, row.ply) {
                return Err(Error::Invalid(format!("engine label {} does not belong to TRAIN row {}", k, labels.first_row + k)));
            }
            if rank_score(label.score) < crate::curriculum::WON_SCORE {
                continue;
            }
            let pos = position_from_fen(&row.fen)?;
            keep(planned(&pos, row.game, row.ply, false, "games"), &pos, &mut out);
            taken += 1;
        }
    }
    let mut dice = Dice::new(plan.seed ^ 0xC0_22_1C_07);
    for endgame in Endgame::ALL {
        let mut made = 0;
        let mut tries = 0;
        while made < plan.endgames && tries < plan.endgames * 200 {
            tries += 1;
            if let Some(pos) = endgame_position(endgame, &mut dice) {
                keep(planned(&pos, 0, 0, held_out(&pos), endgame.name()), &pos, &mut out);
                made += 1;
            }
        }
    }
    let (mut made, mut tries) = (0, 0);
    while made < plan.stalemates && tries < plan.stalemates * 1000 {
        tries += 1;
        if let Some(pos) = stalemate_lesson(&mut dice) {
            keep(planned(&pos, 0, 0, held_out(&pos), "stalemate"), &pos, &mut out);
            made += 1;
        }
    }
    if let Some(o) = &plan.own {
        for (pos, ply, held) in own_positions(own, o, plan.seed) {
            keep(planned(&pos, 0, ply, held, "own games"), &pos, &mut out);
        }
    }
    let mut dice = Dice::new(plan.seed.wrapping_add(0x5EED));
    for i in (1..out.len()).rev() {
        out.swap(i, dice.below(i + 1));
    }
    Ok(out)
}

/// Material in points (pawn 1, knight and bishop 3, rook 5, queen 9) of `side` on `pos`.
pub fn material(pos: &shakmaty::Chess, side: shakmaty::Color) -> i32 {
    use shakmaty::Role;
    let board = pos.board();
    [(Role::Pawn, 1), (Role::Knight, 3), (Role::Bishop, 3), (Role::Rook, 5), (Role::Queen, 9)]
        .iter()
        .map(|&(r, v)| v * (board.by_color(side) & board.by_role(r)).count() as i32)
        .sum()
}

/// The sha256 of games files' texts, in order (what `OwnGames::games_sha256` keys).
pub fn games_files_sha256(texts: &[Vec<u8>]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for t in texts {
        h.update((t.len() as u64).to_le_bytes());
        h.update(t);
    }
    flychess_brain::files::hex(&h.finalize())
}

/// The positions of `own`'s games where the player `o.player_id` is to move, the game not over,
/// and it is at least `o.lead` points of material ahead: each with its ply and whether its game
/// is held out. At most `o.most`, a sample seeded by `seed` (kept in the games' order).
pub fn own_positions(own: &[OwnGame], o: &OwnGames, seed: u64) -> Vec<(shakmaty::Chess, u16, bool)> {
    let mut found = Vec::new();
    for g in own {
        let side = if g.white_id == o.player_id {
            shakmaty::Color::White
        } else if g.black_id == o.player_id {
            shakmaty::Color::Black
        } else {
            continue;
        };
        let held = game_held_out(&g.pgn);
        for (ply, pos) in g.positions.iter().enumerate() {
            if pos.turn() == side && material(pos, side) - material(pos, !side) >= o.lead {
                found.push((pos.clone(), ply.min(u16::MAX as usize) as u16, held));
            }
        }
    }
    if found.len() > o.most {
        // A seeded sample, kept in order: the first `most` of a shuffled list of indices.
        let mut dice = Dice::new(seed ^ 0x0_0A_11_6A_3E);
        let mut index: Vec<usize> = (0..found.len()).collect();
        for i in (1..index.len()).rev() {
            index.swap(i, dice.below(i + 1));
        }
        let mut chosen = index[..o.most].to_vec();
        chosen.sort_unstable();
        found = chosen.into_iter().map(|i| found[i].clone()).collect();
    }
    found
}

/// Whether a whole own game is held out: one in `HELD_OUT_ONE_IN`, by a hash of its PGN.
fn game_held_out(pgn: &str) -> bool {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in pgn.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    crate::curriculum::held_out_by_hash(h)
}

/// The positions of the curriculum in `dir` for `the_plan`: read back when the plan is the one
/// kept there, else planned now (`make`, whose error is the caller's own: replaying its own games
/// may fail in its words) and kept (atomically). Returns them and whether they were planned now.
pub fn positions<E: From<Error>>(
    dir: &Path,
    the_plan: &Plan,
    make: impl FnOnce() -> std::result::Result<Vec<Planned>, E>,
) -> std::result::Result<(Vec<Planned>, bool), E> {
    let (list, key) = (dir.join("positions.jsonl"), dir.join("positions.json"));
    let kept: Option<Plan> = std::fs::read(&key).ok().and_then(|b| serde_json::from_slice(&b).ok());
    if kept.as_ref() == Some(the_plan)
        && let Ok(f) = std::fs::File::open(&list)
    {
        let read: Vec<Planned> = BufReader::new(f)
            .lines()
            .enumerate()
            .map(|(n, l)| {
                let l = l.map_err(|e| Error::io(&list, e))?;
                serde_json::from_str(&l).map_err(|e| Error::Invalid(format!("{} line {}: {e}", list.display(), n + 1)))
            })
            .collect::<Result<_>>()?;
        return Ok((read, false));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let made = make()?;
    let mut text = String::new();
    for p in &made {
        text.push_str(&serde_json::to_string(p).expect("plain data"));
        text.push('\n');
    }
    flychess_brain::files::write_atomically(&list, text.as_bytes()).map_err(Error::from)?;
    flychess_brain::files::write_atomically(&key, &serde_json::to_vec_pretty(the_plan).expect("plain data")).map_err(Error::from)?;
    Ok((made, true))
}

/// What `build` made: how many positions were labelled, kept as won, held out, by kind.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Built {
    pub path: PathBuf,
    pub labelled: usize,
    pub won: usize,
    pub held_out: usize,
    pub train: usize,
    /// Kind → (held out, train), of the won positions kept.
    pub by_kind: std::collections::BTreeMap<String, (usize, usize)>,
    /// Where they were planned from (`Planned::origin`) → (held out, train).
    pub by_origin: std::collections::BTreeMap<String, (usize, usize)>,
}

/// The curriculum's dataset from the labelled positions in `dir` (a prefix of the plan when the
/// labelling is unfinished): won positions only, the held-out ones first (the dataset's HOLD).
/// Written to DIR/curriculum.flyd.
pub fn build(dir: &Path, planned: &[Planned], labeller: &str) -> Result<Built> {
    use flychess_brain::chess::position_from_fen;
    let labels = dir.join("labels.jsonl");
    if !labels.exists() {
        return Err(Error::Invalid(format!("{}: not there (label the curriculum first)", labels.display())));
    }
    // Whole lines only: a running job's last line may be unfinished; damage before it is an error.
    let text: String = super::stockfish_labels::whole_lines(&labels, true)?.0.into_iter().map(|l| l + "\n").collect();
    let labelled = Dataset::from_jsonl(text.as_bytes(), "curriculum", labeller)?;
    if labelled.rows.len() > planned.len() {
        return Err(Error::Invalid(format!(
            "{}: {} labelled lines for {} planned positions",
            labels.display(),
            labelled.rows.len(),
            planned.len()
        )));
    }
    let (mut held, mut train) = (Vec::new(), Vec::new());
    let mut by_kind = std::collections::BTreeMap::<String, (usize, usize)>::new();
    let mut by_origin = std::collections::BTreeMap::<String, (usize, usize)>::new();
    for (k, (row, p)) in labelled.rows.into_iter().zip(planned).enumerate() {
        if row.fen != p.fen {
            return Err(Error::Invalid(format!(
                "{} line {}: a label for {} where {} was planned",
                labels.display(),
                k + 1,
                row.fen,
                p.fen
            )));
        }
        if !is_won(&row) {
            continue;
        }
        let pos = position_from_fen(&row.fen)?;
        let kind = kind_of(&row, &pos).to_string();
        let counts = by_kind.entry(kind).or_default();
        let from = by_origin.entry(p.origin.clone()).or_default();
        if p.held {
            counts.0 += 1;
            from.0 += 1;
            held.push(row);
        } else {
            counts.1 += 1;
            from.1 += 1;
            train.push(row);
        }
    }
    let done = by_kind.values().map(|c| c.0 + c.1).sum::<usize>();
    let built = Built {
        path: dir.join("curriculum.flyd"),
        labelled: planned.len().min(text.lines().count()),
        won: done,
        held_out: held.len(),
        train: train.len(),
        by_kind,
        by_origin,
    };
    let meta = Meta {
        source: format!("the curriculum of finishing: {} won positions ({} held out)", done, held.len()),
        labeller: labeller.to_string(),
        rows: done,
        hold: held.len(),
        val: 0,
        labels: Labels::Stockfish,
    };
    held.extend(train);
    Dataset { meta, rows: held }.save(&built.path)?;
    Ok(built)
}

/// Where `train --curriculum` and `eval` look for the curriculum by default.
pub fn default_dir(data: &Path) -> PathBuf {
    data.join("curriculum")
}

/// The curriculum's rows as the fit reads them: the dataset at `path` with its HOLD (held out)
/// and TRAIN rows.
pub fn load(path: &Path) -> Result<Dataset> {
    crate::pipeline::load_curriculum(path)
}

/// A row's kind in the curriculum (`curriculum::kind_of`).
pub fn kind(row: &Row) -> Result<&'static str> {
    Ok(kind_of(row, &flychess_brain::chess::position_from_fen(&row.fen)?))
}

/// How a fly finishes the curriculum's held-out won positions (`eval --json`): how often its
/// favourite is the quickest win, and in the stalemate lessons how often it stalemates; each
/// rate with its 95 % interval, and by kind.
#[derive(Clone, Debug, Serialize)]
pub struct Finishing {
    pub won_positions: usize,
    pub fastest_win: flychess_fly::stats::Estimate,
    pub stalemate_lessons: usize,
    pub stalemated: flychess_fly::stats::Estimate,
    /// Kind → (positions, quickest wins found).
    pub by_kind: std::collections::BTreeMap<String, (usize, usize)>,
    /// Per position: the favourite is the quickest win (for paired differences).
    #[serde(skip)]
    pub fastest: Vec<bool>,
}

/// `Finishing` of the readout `readout` on won `rows` whose readings are `x` (`readout.inputs`
/// per row, in order).
pub fn judge(readout: &flychess_fly::readout::Readout, x: &[f32], rows: &[Row]) -> Result<Finishing> {
    use crate::curriculum::finish;
    use flychess_brain::chess::position_from_fen;
    let d = readout.inputs;
    if x.len() != rows.len() * d {
        return Err(Error::Invalid(format!("{} readings for {} positions of {d} inputs", x.len(), rows.len())));
    }
    let (mut fastest, mut traps, mut stalemated) = (Vec::<bool>::new(), Vec::new(), Vec::new());
    let mut by_kind = std::collections::BTreeMap::<String, (usize, usize)>::new();
    for (i, row) in rows.iter().enumerate() {
        let pos = position_from_fen(&row.fen)?;
        let p = flychess_fly::readout::policy(&pos, &readout.heads(&x[i * d..(i + 1) * d]));
        let Some(fav) = (0..p.moves.len()).max_by(|&a, &b| p.probability[a].total_cmp(&p.probability[b])) else { continue };
        let f = finish(row, &pos, &p.moves[fav]);
        fastest.push(f.fastest);
        if f.trap {
            traps.push(());
            stalemated.push(f.stalemated);
        }
        let k = by_kind.entry(kind_of(row, &pos).to_string()).or_default();
        k.0 += 1;
        k.1 += f.fastest as usize;
    }
    Ok(Finishing {
        won_positions: fastest.len(),
        fastest_win: flychess_fly::stats::rate_of(&fastest),
        stalemate_lessons: traps.len(),
        stalemated: flychess_fly::stats::rate_of(&stalemated),
        by_kind,
        fastest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use flychess_fly::data::{MoveCode, Result3, master_label};

    fn games() -> Dataset {
        let row = |fen: &str, game: u32| Row {
            fen: fen.into(),
            game,
            ply: 3,
            legal: 20,
            moves: vec![master_label(MoveCode::parse_uci("a1a2").unwrap(), Result3::Won)],
        };
        let rows = vec![
            row("k7/8/1K6/8/8/8/8/2Q5 w - - 0 1", 1),
            row("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 2),
            row("8/8/8/4k3/8/8/3QK3/8 w - - 0 1", 3),
        ];
        Dataset { meta: Meta { source: "t".into(), labeller: "t".into(), rows: 3, hold: 1, val: 0, labels: Labels::MasterMove }, rows }
    }

    #[test]
    fn the_plan_is_the_same_each_time_has_every_kind_holds_out_the_human_test_and_keeps_no_position_twice() {
        let g = games();
        let p = Plan {
            games_sha256: "x".into(),
            labels_searched: 0,
            won: 0,
            endgames: 30,
            stalemates: 20,
            seed: 5,
            own: None,
            human_test: true,
        };
        let a = plan(&g, None, &p, &[]).unwrap();
        assert_eq!(a, plan(&g, None, &p, &[]).unwrap());
        let without = plan(&g, None, &Plan { human_test: false, ..p.clone() }, &[]).unwrap();
        assert!(without.iter().all(|x| x.origin != "human test") && !without.is_empty());
        let origins: std::collections::BTreeSet<&str> = a.iter().map(|x| x.origin.as_str()).collect();
        for o in ["human test", "KQ-K", "KR-K", "KRR-K", "KBB-K", "KQ-Kminor", "KP-K", "stalemate"] {
            assert!(origins.contains(o), "{o} missing from {origins:?}");
        }
        assert!(a.iter().filter(|x| x.origin == "human test").all(|x| x.held && x.game == 1));
        let keys: std::collections::HashSet<String> = a.iter().map(|x| x.fen.split(' ').take(2).collect::<String>()).collect();
        assert_eq!(keys.len(), a.len());
        assert!(a.iter().any(|x| x.held) && a.iter().any(|x| !x.held));
    }

    #[test]
    fn build_keeps_won_positions_only_puts_the_held_out_first_and_refuses_labels_of_other_positions() {
        let dir = tempfile::tempdir().unwrap();
        let planned = vec![
            Planned { fen: "k7/8/1K6/8/8/8/8/2Q5 w - - 0 1".into(), game: 0, ply: 0, legal: 20, held: false, origin: "stalemate".into() },
            Planned { fen: "8/8/8/4k3/8/8/3QK3/8 w - - 0 1".into(), game: 0, ply: 0, legal: 20, held: true, origin: "KQ-K".into() },
            Planned {
                fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
                game: 4,
                ply: 0,
                legal: 20,
                held: false,
                origin: "games".into(),
            },
        ];
        let line = |p: &Planned, uci: &str, cp: Option<i32>, mate: Option<i32>| {
            serde_json::json!({"fen": p.fen, "game": p.game, "ply": p.ply, "legal": p.legal, "moves": [{"uci": uci, "cp": cp, "mate": mate}]})
                .to_string()
        };
        let text = [
            line(&planned[0], "c1c8", None, Some(1)),
            line(&planned[1], "d2d1", Some(719), None),
            line(&planned[2], "e2e4", Some(30), None),
        ]
        .join("\n")
            + "\n";
        std::fs::write(dir.path().join("labels.jsonl"), &text).unwrap();
        let built = build(dir.path(), &planned, "test").unwrap();
        assert_eq!((built.won, built.held_out, built.train), (2, 1, 1));
        let d = Dataset::load(&built.path).unwrap();
        assert_eq!(d.meta.hold, 1);
        assert_eq!(d.rows[0].fen, planned[1].fen);
        assert_eq!(d.rows[1].fen, planned[0].fen);
        assert_eq!(built.by_kind["stalemate"], (0, 1));
        assert_eq!(built.by_origin["KQ-K"], (1, 0));
        assert_eq!(built.by_kind["KQ-K"], (1, 0));
        // Labels in another order than the plan are refused, naming the line.
        let mut swapped = planned.clone();
        swapped.swap(0, 1);
        let e = build(dir.path(), &swapped, "test").unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
    }

    /// A game of `white_id` against `black_id` from `fen`, its moves in SAN, replayed.
    fn own_game(white_id: &str, black_id: &str, fen: &str, moves: &str) -> OwnGame {
        let mut pos = flychess_brain::chess::position_from_fen(fen).unwrap();
        let mut positions = Vec::new();
        for san in moves.split_whitespace().filter(|t| !t.ends_with('.')) {
            let mv = san.parse::<shakmaty::san::San>().unwrap().to_move(&pos).unwrap();
            positions.push(pos.clone());
            pos.play_unchecked(mv);
        }
        OwnGame {
            white_id: white_id.into(),
            black_id: black_id.into(),
            pgn: format!("[White \"{white_id}\"]\n[Black \"{black_id}\"]\n[SetUp \"1\"]\n[FEN \"{fen}\"]\n[Result \"*\"]\n\n{moves} *\n"),
            positions,
        }
    }

    #[test]
    fn own_positions_are_the_players_turns_a_rook_ahead_keyed_by_its_id_and_capped() {
        // White (the fly, id "fly-1") has a queen against a lone king: every White turn is 9 ahead.
        let fen = "7k/8/8/8/8/8/8/K2Q4 w - - 0 1";
        let fly_white = own_game("fly-1", "random", fen, "1. Qd2 Kg8 2. Qd3 Kh8 3. Qd4 Kg8");
        // The same board with the fly Black and a rook down: never ahead, nothing taken.
        let fly_black = own_game("random", "fly-1", fen, "1. Qd2 Kg8 2. Qd3 Kh8");
        // Another fly under the same name but another id: not the player's positions.
        let other = own_game("fly-2", "random", fen, "1. Qd2 Kg8");
        let o = OwnGames { games_sha256: "x".into(), player_id: "fly-1".into(), lead: 5, most: 100 };
        let found = own_positions(&[fly_white.clone(), fly_black, other], &o, 1);
        assert_eq!(found.iter().map(|f| f.1).collect::<Vec<_>>(), vec![0, 2, 4]);
        assert!(found.iter().all(|(p, _, _)| p.turn() == shakmaty::Color::White));
        // A lead of 10 is more than the queen: none.
        assert!(own_positions(std::slice::from_ref(&fly_white), &OwnGames { lead: 10, ..o.clone() }, 1).is_empty());
        // Capped: two of the three, in the games' order, the same two for the same seed.
        let capped = own_positions(std::slice::from_ref(&fly_white), &OwnGames { most: 2, ..o.clone() }, 1);
        assert_eq!(capped.len(), 2);
        assert!(capped[0].1 < capped[1].1);
        assert_eq!(capped, own_positions(std::slice::from_ref(&fly_white), &OwnGames { most: 2, ..o.clone() }, 1));
        // In a plan: origin "own games", held out game by game.
        let p = Plan {
            games_sha256: "x".into(),
            labels_searched: 0,
            won: 0,
            endgames: 0,
            stalemates: 0,
            seed: 5,
            own: Some(o.clone()),
            human_test: false,
        };
        let planned = plan(&games(), None, &p, std::slice::from_ref(&fly_white)).unwrap();
        assert_eq!(planned.len(), 3);
        assert!(planned.iter().all(|x| x.origin == "own games"));
        let held: std::collections::BTreeSet<bool> = planned.iter().map(|x| x.held).collect();
        assert_eq!(held.len(), 1, "one game's positions are all held out or all trained on");
    }
}
