//! The rating ladder (`flychess rate`), an honest bench after Philidor: fixed rungs — the random
//! mover, the greedy mover, Stockfish at its lowest UCI_Elo playing a random legal move 75 %,
//! 50 % and 25 % of the time, and that Stockfish alone (the anchor, rated at its UCI_Elo) — where
//! every rung plays its neighbours and every fly plays every rung. Each opening (a few random
//! plies from the start, fixed by the seed) is played twice with colours swapped; a player's
//! random choices are seeded by the game's seed and its colour, so a clone match (a fly against
//! itself) comes out at exactly 50 % or the bench is broken. Stockfish is limited by nodes, not
//! time. Every game is appended to a JSONL file with its PGN and how it ended, so a killed run
//! resumes and ratings can be refitted and audited; ratings come from `rating`.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Position};

use crate::brain::Brain;
use crate::engine::{find_stockfish, EngineOptions, Limit, Supervised};
use crate::error::{Error, Result};
use crate::play::{play_game, Dice, Player};
use crate::rating::{bootstrap, fit, Outcome};
use crate::readout::Readout;

/// Who plays on the ladder.
#[derive(Clone, Debug, PartialEq)]
pub enum Entrant {
    Random,
    Greedy,
    /// Stockfish at its lowest UCI_Elo, playing a random legal move with this probability.
    Stockfish { random_share: f64 },
    Fly { name: String, imagination: Option<f32> },
}

impl Entrant {
    pub fn name(&self) -> String {
        match self {
            Entrant::Random => "random".into(),
            Entrant::Greedy => "greedy".into(),
            Entrant::Stockfish { random_share } if *random_share > 0.0 => format!("stockfish-min {:.0}% random", 100.0 * random_share),
            Entrant::Stockfish { .. } => "stockfish-min (anchor)".into(),
            Entrant::Fly { name, imagination: Some(_) } => format!("{name} +imagination"),
            Entrant::Fly { name, .. } => name.clone(),
        }
    }

    pub fn is_fly(&self) -> bool {
        matches!(self, Entrant::Fly { .. })
    }
}

/// The fixed rungs, weakest first; the last is the anchor.
pub fn rungs() -> Vec<Entrant> {
    vec![
        Entrant::Random,
        Entrant::Greedy,
        Entrant::Stockfish { random_share: 0.75 },
        Entrant::Stockfish { random_share: 0.5 },
        Entrant::Stockfish { random_share: 0.25 },
        Entrant::Stockfish { random_share: 0.0 },
    ]
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LadderOptions {
    /// Games per pairing (rounded up to even: each opening twice).
    pub games: usize,
    pub opening_plies: usize,
    /// Safeguard: a game this long is scored a draw ("move cap").
    pub max_plies: usize,
    pub seed: u64,
    pub stockfish_nodes: u64,
    /// Games played at once. Many: the fly moves of games in flight think as one batch
    /// (`together`), which measured 2.6× faster with 16 than 2 on fly games, the same games.
    pub workers: usize,
}

impl Default for LadderOptions {
    fn default() -> Self {
        LadderOptions { games: 20, opening_plies: 4, max_plies: 300, seed: 1, stockfish_nodes: 20_000, workers: 16 }
    }
}

/// One finished game, as stored (one JSON line each).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRow {
    pub white: String,
    pub black: String,
    pub opening: usize,
    /// The second game of the opening (colours swapped).
    pub swapped: bool,
    pub result: String,
    pub termination: String,
    pub plies: usize,
    pub pgn: String,
}

impl GameRow {
    pub fn key(&self) -> String {
        key(&self.white, &self.black, self.opening, self.swapped)
    }
    /// White's score.
    pub fn score(&self) -> f64 {
        match self.result.as_str() {
            "1-0" => 1.0,
            "0-1" => 0.0,
            _ => 0.5,
        }
    }
}

fn key(white: &str, black: &str, opening: usize, swapped: bool) -> String {
    format!("{white}|{black}|{opening}|{swapped}")
}

/// The start position of opening `k`: `plies` random legal moves from the initial position
/// (re-drawn if they end the game), the same for every pairing.
pub fn opening(seed: u64, k: usize, plies: usize) -> Chess {
    for attempt in 0..100u64 {
        let mut dice = Dice::new(seed.wrapping_mul(1_000_003).wrapping_add(k as u64 * 7919 + attempt));
        let mut pos = Chess::default();
        let mut ok = true;
        for _ in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                ok = false;
                break;
            }
            pos.play_unchecked(moves[dice.below(moves.len())]);
        }
        if ok && !pos.legal_moves().is_empty() {
            return pos;
        }
    }
    Chess::default()
}

/// Pairings (indices into `entrants`, first plays White in the first game of each opening):
/// neighbouring rungs, and every fly against every rung.
pub fn pairings(entrants: &[Entrant]) -> Vec<(usize, usize)> {
    let rungs: Vec<usize> = (0..entrants.len()).filter(|&i| !entrants[i].is_fly()).collect();
    let mut out: Vec<(usize, usize)> = rungs.windows(2).map(|w| (w[0], w[1])).collect();
    for f in (0..entrants.len()).filter(|&i| entrants[i].is_fly()) {
        out.extend(rungs.iter().map(|&r| (f, r)));
    }
    out
}

/// What a fly needs to play.
pub struct FlyKit<'a> {
    pub brain: &'a Brain,
    pub descending: &'a [u32],
    /// Readouts by fly name.
    pub readouts: BTreeMap<String, Readout>,
}

fn player<'a>(e: &Entrant, kit: Option<&'a FlyKit<'a>>, options: &LadderOptions, dice: u64, stockfish: &Option<PathBuf>) -> Result<Player<'a>> {
    Ok(match e {
        Entrant::Random => Player::Random(Dice::new(dice)),
        Entrant::Greedy => Player::Greedy(Dice::new(dice)),
        Entrant::Stockfish { random_share } => {
            let path = stockfish.clone().ok_or_else(|| Error::Invalid(crate::engine::INSTALL_HINT.into()))?;
            let engine = Supervised::new(path, EngineOptions { threads: 1, hash_mb: 16, elo: Some(0) });
            Player::Stockfish { engine, limit: Limit::Nodes(options.stockfish_nodes), random_share: *random_share, dice: Dice::new(dice) }
        }
        Entrant::Fly { name, imagination } => {
            let kit = kit.ok_or_else(|| Error::Invalid("a fly needs its brain".into()))?;
            let readout = kit.readouts.get(name).ok_or_else(|| Error::Invalid(format!("no readout for fly {name}")))?;
            Player::Fly { brain: kit.brain, readout, descending: kit.descending, imagination: *imagination }
        }
    })
}

/// Plays one game of opening `k` between `white` and `black`. The players' dice depend on the
/// seed, the opening and the colour only.
pub fn play_one(white: &Entrant, black: &Entrant, k: usize, swapped: bool, kit: Option<&FlyKit>, options: &LadderOptions, stockfish: &Option<PathBuf>) -> Result<GameRow> {
    let base = options.seed.wrapping_mul(0x1000_0000_01B3).wrapping_add(k as u64 * 2);
    let mut w = player(white, kit, options, base, stockfish)?;
    let mut b = player(black, kit, options, base + 1, stockfish)?;
    let start = opening(options.seed, k, options.opening_plies);
    let mut rec = play_game(&mut w, &mut b, start.clone(), options.max_plies)?;
    rec.white = white.name();
    rec.black = black.name();
    let fen = shakmaty::fen::Fen::from_position(&start, shakmaty::EnPassantMode::Legal).to_string();
    let pgn = rec.pgn().replacen("[Result", &format!("[SetUp \"1\"]\n[FEN \"{fen}\"]\n[Result"), 1);
    Ok(GameRow { white: rec.white.clone(), black: rec.black.clone(), opening: k, swapped, result: rec.result, termination: rec.termination, plies: rec.san.len(), pgn })
}

/// Reads the games recorded so far (a torn last line from a kill is ignored).
pub fn read_games(path: &Path) -> Result<Vec<GameRow>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(path, e)),
    };
    Ok(text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect())
}

/// Plays every game of every pairing not yet in `games_file`, `options.workers` at a time,
/// appending each as it ends; `progress(done, total)` after each.
pub fn run(entrants: &[Entrant], kit: Option<&FlyKit>, options: &LadderOptions, games_file: &Path, progress: &(dyn Fn(usize, usize, &GameRow) + Sync)) -> Result<Vec<GameRow>> {
    let mut rows = read_games(games_file)?;
    let done: HashSet<String> = rows.iter().map(GameRow::key).collect();
    let openings = options.games.div_ceil(2);
    let mut jobs = Vec::new();
    for &(a, b) in &pairings(entrants) {
        for k in 0..openings {
            for swapped in [false, true] {
                let (w, bl) = if swapped { (b, a) } else { (a, b) };
                if !done.contains(&key(&entrants[w].name(), &entrants[bl].name(), k, swapped)) {
                    jobs.push((w, bl, k, swapped));
                }
            }
        }
    }
    let total = jobs.len();
    let needs_engine = entrants.iter().any(|e| matches!(e, Entrant::Stockfish { .. }));
    let stockfish = if needs_engine { Some(find_stockfish(None)?) } else { None };
    if let Some(dir) = games_file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let file = Mutex::new(std::fs::OpenOptions::new().create(true).append(true).open(games_file).map_err(|e| Error::io(games_file, e))?);
    let queue = Mutex::new(jobs.into_iter());
    let finished = Mutex::new(Vec::new());
    let failure = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..options.workers.max(1) {
            s.spawn(|| loop {
                let Some((w, b, k, swapped)) = queue.lock().ok().and_then(|mut q| q.next()) else { break };
                if failure.lock().map(|f| f.is_some()).unwrap_or(true) {
                    break;
                }
                match play_one(&entrants[w], &entrants[b], k, swapped, kit, options, &stockfish) {
                    Ok(row) => {
                        let line = serde_json::to_string(&row).expect("a game serialises");
                        if let Ok(mut f) = file.lock() {
                            // One line per game, flushed: a kill loses at most the game in hand.
                            if let Err(e) = writeln!(f, "{line}").and_then(|_| f.flush()) {
                                *failure.lock().expect("lock") = Some(Error::io(games_file, e));
                            }
                        }
                        let mut fin = finished.lock().expect("lock");
                        fin.push(row.clone());
                        progress(fin.len(), total, &row);
                    }
                    Err(e) => {
                        if let Ok(mut f) = failure.lock() {
                            *f = Some(e);
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    rows.extend(finished.into_inner().unwrap_or_default());
    Ok(rows)
}

/// A rating with its 95 % interval.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Rating {
    pub name: String,
    pub elo: f64,
    pub low: f64,
    pub high: f64,
    pub games: usize,
    /// Points scored, as a share of games.
    pub score: f64,
}

/// Ratings of everyone in `rows`, the anchor fixed at `anchor_elo`.
pub fn ratings(rows: &[GameRow], anchor: &str, anchor_elo: f64, refits: usize, seed: u64) -> Vec<Rating> {
    let mut names: Vec<String> = Vec::new();
    let id = |n: &str, names: &mut Vec<String>| match names.iter().position(|x| x == n) {
        Some(i) => i,
        None => {
            names.push(n.to_string());
            names.len() - 1
        }
    };
    let anchor_id = id(anchor, &mut names);
    let outcomes: Vec<Outcome> = rows
        .iter()
        .map(|r| {
            let w = id(&r.white, &mut names);
            let b = id(&r.black, &mut names);
            Outcome { white: w, black: b, score: r.score() }
        })
        .collect();
    let elo = fit(names.len(), &outcomes, anchor_id, anchor_elo);
    let ci = bootstrap(names.len(), &outcomes, anchor_id, anchor_elo, refits, seed);
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mine: Vec<f64> = outcomes
                .iter()
                .filter_map(|o| if o.white == i { Some(o.score) } else if o.black == i { Some(1.0 - o.score) } else { None })
                .collect();
            Rating {
                name: n.clone(),
                elo: elo[i],
                low: ci[i].0,
                high: ci[i].1,
                games: mine.len(),
                score: if mine.is_empty() { 0.0 } else { mine.iter().sum::<f64>() / mine.len() as f64 },
            }
        })
        .collect()
}

/// How games ended, counted.
pub fn endings(rows: &[GameRow]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for r in rows {
        *out.entry(r.termination.clone()).or_insert(0) += 1;
    }
    out
}

/// The clone control: `entrant` against itself over `openings` openings, both colours. Returns
/// the first copy's share of the points (exactly 0.5 on an honest bench) and the games.
pub fn clone_match(entrant: &Entrant, kit: Option<&FlyKit>, options: &LadderOptions, openings: usize) -> Result<(f64, Vec<GameRow>)> {
    let mut points = 0.0;
    let mut games = Vec::new();
    for k in 0..openings {
        for swapped in [false, true] {
            let row = play_one(entrant, entrant, k, swapped, kit, options, &None)?;
            // The first copy plays White in the first game of the opening, Black in the second.
            points += if swapped { 1.0 - row.score() } else { row.score() };
            games.push(row);
        }
    }
    Ok((points / games.len().max(1) as f64, games))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> LadderOptions {
        LadderOptions { games: 4, opening_plies: 4, max_plies: 120, seed: 5, stockfish_nodes: 1_000, workers: 2 }
    }

    #[test]
    fn openings_are_fixed_by_the_seed_and_differ_between_openings() {
        let a = opening(3, 0, 4);
        assert_eq!(a, opening(3, 0, 4));
        assert_ne!(a, opening(3, 1, 4));
        assert_eq!(a.fullmoves().get(), 3, "four plies played");
    }

    #[test]
    fn the_clone_match_of_a_greedy_mover_is_exactly_even() {
        // Different games every opening, yet the two copies split the points exactly.
        let long = LadderOptions { max_plies: 400, ..options() };
        let (share, games) = clone_match(&Entrant::Greedy, None, &long, 6).unwrap();
        assert_eq!(share, 0.5);
        assert_eq!(games.len(), 12);
        // Each opening's two games are the same game (the dice follow the colour, not the copy)…
        for pair in games.chunks(2) {
            assert_eq!(pair[0].pgn, pair[1].pgn);
        }
        // …and different openings give different games, so the check is not vacuous.
        let distinct: HashSet<&str> = games.iter().map(|g| g.pgn.as_str()).collect();
        assert_eq!(distinct.len(), 6);
    }

    #[test]
    fn pairings_join_neighbouring_rungs_and_every_fly_to_every_rung() {
        let mut e = rungs();
        e.push(Entrant::Fly { name: "f".into(), imagination: None });
        let p = pairings(&e);
        assert_eq!(p.len(), 5 + 6);
        assert!(p.contains(&(0, 1)) && p.contains(&(4, 5)) && !p.contains(&(0, 2)));
        assert!((0..6).all(|r| p.contains(&(6, r))));
    }

    #[test]
    fn games_are_recorded_resumed_and_ended_by_the_rules() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("games.jsonl");
        let entrants = vec![Entrant::Random, Entrant::Greedy];
        let first = run(&entrants, None, &options(), &file, &|_, _, _| {}).unwrap();
        assert_eq!(first.len(), 4, "2 openings × 2 colours");
        // A torn line (a kill mid-write) is ignored; nothing already played is played again.
        std::fs::OpenOptions::new().append(true).open(&file).unwrap().write_all(b"{\"white\": \"rand").unwrap();
        let again = run(&entrants, None, &options(), &file, &|_, _, _| panic!("nothing left to play")).unwrap();
        assert_eq!(again.len(), 4);
        let known = ["checkmate", "stalemate", "insufficient material", "threefold repetition", "fifty-move rule", "move cap"];
        for g in &again {
            assert!(known.contains(&g.termination.as_str()), "{}", g.termination);
            assert!(g.pgn.contains("[FEN "), "the opening is in the PGN");
        }
        let colours: HashSet<(String, bool)> = again.iter().map(|g| (g.white.clone(), g.swapped)).collect();
        assert!(colours.contains(&("random".into(), false)) && colours.contains(&("greedy".into(), true)));
        let r = ratings(&again, "random", 0.0, 50, 1);
        assert_eq!(r.iter().find(|x| x.name == "random").unwrap().elo, 0.0);
        assert_eq!(endings(&again).values().sum::<usize>(), 4);
    }
}
