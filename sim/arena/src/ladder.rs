//! The rating ladder (`flychess rate`), an honest bench after Philidor: fixed rungs — the random
//! mover, the greedy mover, Stockfish at its lowest UCI_Elo playing a random legal move 75 %,
//! 50 % and 25 % of the time, and that Stockfish alone (the anchor, rated at its UCI_Elo) — where
//! every rung plays its neighbours and every fly plays every rung. Each opening (a few random
//! plies from the start, fixed by the seed) is played twice with colours swapped. On the ladder a
//! player's random choices are seeded by the game's seed and its colour, so a player against
//! itself comes out at exactly 50 % or the harness is broken (`harness_check`: colour-symmetric
//! and deterministic). The clone test that can fail (`clone_test`, Philidor's) and duels seed the
//! dice by seat instead: two copies of a fly that sample their moves from the policy with
//! independent seeds must score within the 95 % interval of 50 %. Stockfish is limited by nodes,
//! not time. Every game is appended to a JSONL file with its PGN and how it ended, keyed by what
//! plays (`Entrant::id`: a fly's content hash, never its name), so a killed run resumes, a fly
//! retrained under the same name plays its games again, and ratings can be refitted and audited;
//! ratings come from `rating`, duel statistics from `duel`. A ladder or a duel also runs in
//! shards (`play_shard`: shard I of N plays its range of the games in their fixed order, `scheduled`,
//! into a part file beside the games file) and `merge_shards` adds every part's games to the games
//! file: the same games as one run, so the same ratings (they are fitted from the games in key
//! order, whatever order they were played in).

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Position};

use crate::error::{Error, Result};
use crate::play::play_game;
use crate::players::{Entrant, Kit, Player};
use crate::rating::{Outcome, bootstrap, fit};
use flychess_fly::stats::Dice;
use flychess_fly::stockfish::find_stockfish;

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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// Seed each player's dice by its seat (first or second player of the pairing) rather than
    /// its colour: duels and the clone test, where two copies must not share their dice.
    #[serde(default)]
    pub dice_by_seat: bool,
}

impl Default for LadderOptions {
    fn default() -> Self {
        LadderOptions { games: 20, opening_plies: 4, max_plies: 300, seed: 1, stockfish_nodes: 20_000, workers: 16, dice_by_seat: false }
    }
}

/// One finished game, as stored (one JSON line each).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRow {
    pub white: String,
    pub black: String,
    /// What played (`Entrant::id`); empty in games stored before players had ids.
    #[serde(default)]
    pub white_id: String,
    #[serde(default)]
    pub black_id: String,
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
        key(&self.white_player(), &self.black_player(), self.opening, self.swapped)
    }
    /// White's id (its name in games stored before ids, which no current player matches).
    pub fn white_player(&self) -> String {
        if self.white_id.is_empty() { format!("name:{}", self.white) } else { self.white_id.clone() }
    }
    pub fn black_player(&self) -> String {
        if self.black_id.is_empty() { format!("name:{}", self.black) } else { self.black_id.clone() }
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
/// neighbouring rungs, and every player (flies, Charles) against every rung.
pub fn pairings(entrants: &[Entrant]) -> Vec<(usize, usize)> {
    let rungs: Vec<usize> = (0..entrants.len()).filter(|&i| entrants[i].is_rung()).collect();
    let mut out: Vec<(usize, usize)> = rungs.windows(2).map(|w| (w[0], w[1])).collect();
    for f in (0..entrants.len()).filter(|&i| !entrants[i].is_rung()) {
        out.extend(rungs.iter().map(|&r| (f, r)));
    }
    out
}

/// Plays one game of opening `k` between `white` and `black` (`swapped`: the second game of the
/// opening, the pairing's second player has White). The players' dice depend on the seed, the
/// opening and the colour only, or with `dice_by_seat` on the seat instead of the colour.
pub fn play_one(
    white: &Entrant,
    black: &Entrant,
    k: usize,
    swapped: bool,
    kit: Option<&Kit>,
    options: &LadderOptions,
    stockfish: &Option<PathBuf>,
) -> Result<GameRow> {
    let base = options.seed.wrapping_mul(0x1000_0000_01B3).wrapping_add(k as u64 * 2);
    let (white_dice, black_dice) = if options.dice_by_seat && swapped { (base + 1, base) } else { (base, base + 1) };
    let mut w = Player::new(white, kit, options.stockfish_nodes, white_dice, stockfish)?;
    let mut b = Player::new(black, kit, options.stockfish_nodes, black_dice, stockfish)?;
    let start = opening(options.seed, k, options.opening_plies);
    let mut rec = play_game(&mut w, &mut b, start.clone(), options.max_plies)?;
    rec.white = white.name();
    rec.black = black.name();
    let fen = shakmaty::fen::Fen::from_position(&start, shakmaty::EnPassantMode::Legal).to_string();
    let pgn = rec.pgn().replacen("[Result", &format!("[SetUp \"1\"]\n[FEN \"{fen}\"]\n[Result"), 1);
    Ok(GameRow {
        white: rec.white.clone(),
        black: rec.black.clone(),
        white_id: white.id(),
        black_id: black.id(),
        opening: k,
        swapped,
        result: rec.result,
        termination: rec.termination,
        plies: rec.san.len(),
        pgn,
    })
}

/// Reads the games recorded so far. A last line without its newline is a game torn by a kill
/// (never counted: a game is counted once its whole line is written) and is left out; any other
/// line that is not a game is an error naming the file and the line, never dropped in silence.
pub fn read_games(path: &Path) -> Result<Vec<GameRow>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(path, e)),
    };
    games_in_text(&text, path)
}

/// The games of a games file's `text` read from `path` (named in errors), as `read_games` reads
/// them: a torn last line left out, any other line that is not a game an error.
pub fn games_in_text(text: &str, path: &Path) -> Result<Vec<GameRow>> {
    let whole = if text.ends_with('\n') { text } else { &text[..text.rfind('\n').map_or(0, |i| i + 1)] };
    whole
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            // A game glued to a torn fragment by an earlier version (which appended after a kill
            // without cutting the fragment): the whole game after the fragment is recovered.
            let glued = || l.rfind("{\"white\"").filter(|&at| at > 0).and_then(|at| serde_json::from_str(&l[at..]).ok());
            serde_json::from_str(l).or_else(|e| glued().ok_or(e)).map_err(|e| {
                let start: String = l.chars().take(60).collect();
                Error::Invalid(format!("{}: line {} is not a game ({e}): {start}…", path.display(), i + 1))
            })
        })
        .collect()
}

/// Cuts a game torn by a kill (a last line without its newline) off the end of `path`, so the
/// next game appended starts on a line of its own.
fn cut_torn_tail(path: &Path) -> Result<()> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(path, e)),
    };
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(());
    }
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    tracing::warn!("{}: cutting {} bytes of a game torn by a kill", path.display(), bytes.len() - keep);
    let file = std::fs::OpenOptions::new().write(true).open(path).map_err(|e| Error::io(path, e))?;
    file.set_len(keep as u64).and_then(|_| file.sync_all()).map_err(|e| Error::io(path, e))
}

/// Plays every game of every ladder pairing not yet in `games_file`, `options.workers` at a
/// time, appending each as it ends; `progress(done, total)` after each. Returns every game in the
/// file, those of players no longer entered too.
pub fn run(
    entrants: &[Entrant],
    kit: Option<&Kit>,
    options: &LadderOptions,
    games_file: &Path,
    progress: &(dyn Fn(usize, usize, &GameRow) + Sync),
) -> Result<Vec<GameRow>> {
    run_pairings(entrants, &pairings(entrants), kit, options, games_file, progress)
}

/// One game of a run: white and black (indices into the entrants), the opening, swapped or not.
pub type Scheduled = (usize, usize, usize, bool);

/// Every game of `pairings` in a fixed order (pairing, then opening, then the swapped game): the
/// order shards cut.
pub fn scheduled(pairings: &[(usize, usize)], options: &LadderOptions) -> Vec<Scheduled> {
    let openings = options.games.div_ceil(2);
    let mut games = Vec::new();
    for &(a, b) in pairings {
        for k in 0..openings {
            for swapped in [false, true] {
                let (w, bl) = if swapped { (b, a) } else { (a, b) };
                games.push((w, bl, k, swapped));
            }
        }
    }
    games
}

/// `run` for the given pairings (indices into `entrants`; the first of each has White in the
/// first game of every opening).
pub fn run_pairings(
    entrants: &[Entrant],
    pairings: &[(usize, usize)],
    kit: Option<&Kit>,
    options: &LadderOptions,
    games_file: &Path,
    progress: &(dyn Fn(usize, usize, &GameRow) + Sync),
) -> Result<Vec<GameRow>> {
    let all = scheduled(pairings, options);
    play_scheduled(entrants, &all, kit, options, games_file, progress)
}

/// Plays the games of `games` not yet in `games_file`, appending each as it ends.
fn play_scheduled(
    entrants: &[Entrant],
    games: &[Scheduled],
    kit: Option<&Kit>,
    options: &LadderOptions,
    games_file: &Path,
    progress: &(dyn Fn(usize, usize, &GameRow) + Sync),
) -> Result<Vec<GameRow>> {
    let mut rows = read_games(games_file)?;
    let done: HashSet<String> = rows.iter().map(GameRow::key).collect();
    let jobs: Vec<Scheduled> = games
        .iter()
        .copied()
        .filter(|&(w, bl, k, swapped)| !done.contains(&key(&entrants[w].id(), &entrants[bl].id(), k, swapped)))
        .collect();
    let total = jobs.len();
    let needs_engine = entrants.iter().any(Entrant::needs_stockfish);
    let stockfish = if needs_engine { Some(find_stockfish(None)?) } else { None };
    if let Some(dir) = games_file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    cut_torn_tail(games_file)?;
    let file = Mutex::new(std::fs::OpenOptions::new().create(true).append(true).open(games_file).map_err(|e| Error::io(games_file, e))?);
    let queue = Mutex::new(jobs.into_iter());
    let finished = Mutex::new(Vec::new());
    let failure = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..options.workers.max(1) {
            s.spawn(|| {
                while let Some((w, b, k, swapped)) = queue.lock().ok().and_then(|mut q| q.next()) {
                    if failure.lock().map(|f| f.is_some()).unwrap_or(true) {
                        break;
                    }
                    match play_one(&entrants[w], &entrants[b], k, swapped, kit, options, &stockfish) {
                        Ok(row) => {
                            let line = serde_json::to_string(&row).expect("a game serialises");
                            if let Ok(mut f) = file.lock() {
                                // One line per game, flushed: a kill loses at most the game in hand.
                                if let Err(e) = f.write_all(format!("{line}\n").as_bytes()).and_then(|_| f.flush()) {
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

/// Each game's players named as they are called now: a current entrant's games carry its present
/// name (a fly renamed after its games, such as the first shipped fly, now `flywire-75k`, keeps its
/// games by id but was stored under its old name). Players no longer current keep the name of
/// their games.
pub fn name_as_now(rows: &mut [GameRow], entrants: &[Entrant]) {
    let now: BTreeMap<String, String> = entrants.iter().map(|e| (e.id(), e.name())).collect();
    for r in rows {
        if let Some(n) = now.get(&r.white_player()) {
            r.white = n.clone();
        }
        if let Some(n) = now.get(&r.black_player()) {
            r.black = n.clone();
        }
    }
}

/// A rating with its 95 % interval.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Rating {
    pub name: String,
    /// What played (`Entrant::id`).
    #[serde(default)]
    pub id: String,
    pub elo: f64,
    pub low: f64,
    pub high: f64,
    pub games: usize,
    /// Points scored, as a share of games.
    pub score: f64,
}

/// The players of `rows` by id, each with the name of its latest game.
fn players_of(rows: &[GameRow]) -> (Vec<String>, BTreeMap<String, String>) {
    let mut ids: Vec<String> = Vec::new();
    let mut names = BTreeMap::new();
    for r in rows {
        for (id, name) in [(r.white_player(), &r.white), (r.black_player(), &r.black)] {
            if !ids.contains(&id) {
                ids.push(id.clone());
            }
            names.insert(id, name.clone());
        }
    }
    (ids, names)
}

/// Ratings of every player in `rows` (by id), the anchor (an id) fixed at `anchor_elo`; the
/// bootstrap redraws each pairing's games within the pairing.
pub fn ratings(rows: &[GameRow], anchor: &str, anchor_elo: f64, refits: usize, seed: u64) -> Vec<Rating> {
    // In key order: the same games give the same ratings whatever order they were played in
    // (threads, shards), the bootstrap's draws included.
    let mut rows = rows.to_vec();
    rows.sort_by_cached_key(GameRow::key);
    let rows = &rows[..];
    let (mut ids, names) = players_of(rows);
    if !ids.iter().any(|i| i == anchor) {
        ids.push(anchor.to_string());
    }
    let index = |id: &str| ids.iter().position(|x| x == id).expect("every player listed");
    let anchor_id = index(anchor);
    let outcomes: Vec<Outcome> =
        rows.iter().map(|r| Outcome { white: index(&r.white_player()), black: index(&r.black_player()), score: r.score() }).collect();
    let elo = fit(ids.len(), &outcomes, anchor_id, anchor_elo);
    let ci = bootstrap(ids.len(), &outcomes, anchor_id, anchor_elo, refits, seed);
    ids.iter()
        .enumerate()
        .map(|(i, id)| {
            let mine: Vec<f64> = outcomes
                .iter()
                .filter_map(|o| {
                    if o.white == i {
                        Some(o.score)
                    } else if o.black == i {
                        Some(1.0 - o.score)
                    } else {
                        None
                    }
                })
                .collect();
            Rating {
                name: names.get(id).cloned().unwrap_or_else(|| id.clone()),
                id: id.clone(),
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

/// How each player's games ended (by id): checkmates split into "mated the opponent" and "was
/// mated", every other ending (stalemate, repetition, 50-move, material, move cap) as it is.
pub fn endings_by_player(rows: &[GameRow]) -> BTreeMap<String, BTreeMap<String, usize>> {
    let mut out: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for r in rows {
        for (id, score) in [(r.white_player(), r.score()), (r.black_player(), 1.0 - r.score())] {
            let how = match r.termination.as_str() {
                "checkmate" if score == 1.0 => "mated the opponent".to_string(),
                "checkmate" => "was mated".to_string(),
                other => other.to_string(),
            };
            *out.entry(id).or_default().entry(how).or_insert(0) += 1;
        }
    }
    out
}

/// One pairing's games from its first player's side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairingResult {
    pub first: String,
    pub second: String,
    pub first_id: String,
    pub second_id: String,
    pub wins: usize,
    pub draws: usize,
    pub losses: usize,
    /// The first player's share of the points.
    pub score: f64,
}

/// W-D-L of every pairing in `rows` (players by id; the first is the one with White in the
/// pairing's first stored game), in the order the pairings first appear.
pub fn pairing_results(rows: &[GameRow]) -> Vec<PairingResult> {
    let (_, names) = players_of(rows);
    let mut out: Vec<PairingResult> = Vec::new();
    for r in rows {
        let (w, b) = (r.white_player(), r.black_player());
        let at = out.iter().position(|p| (p.first_id == w && p.second_id == b) || (p.first_id == b && p.second_id == w));
        let i = at.unwrap_or_else(|| {
            out.push(PairingResult {
                first: names[&w].clone(),
                second: names[&b].clone(),
                first_id: w.clone(),
                second_id: b.clone(),
                wins: 0,
                draws: 0,
                losses: 0,
                score: 0.0,
            });
            out.len() - 1
        });
        let p = &mut out[i];
        let first_score = if p.first_id == w { r.score() } else { 1.0 - r.score() };
        if first_score == 1.0 {
            p.wins += 1;
        } else if first_score == 0.0 {
            p.losses += 1;
        } else {
            p.draws += 1;
        }
    }
    for p in &mut out {
        p.score = (p.wins as f64 + 0.5 * p.draws as f64) / (p.wins + p.draws + p.losses).max(1) as f64;
    }
    out
}

/// The harness check (was "the clone control"): `entrant` against itself over `openings`
/// openings, both colours, dice seeded by colour. A deterministic harness that treats the colours
/// alike gives the first copy exactly half the points; anything else means the bench is broken.
/// It cannot tell a fair player from an unfair one: `clone_test` does that.
pub fn harness_check(entrant: &Entrant, kit: Option<&Kit>, options: &LadderOptions, openings: usize) -> Result<(f64, Vec<GameRow>)> {
    let by_colour = LadderOptions { dice_by_seat: false, ..options.clone() };
    let mut points = 0.0;
    let mut games = Vec::new();
    for k in 0..openings {
        for swapped in [false, true] {
            let row = play_one(entrant, entrant, k, swapped, kit, &by_colour, &None)?;
            // The first copy plays White in the first game of the opening, Black in the second.
            points += if swapped { 1.0 - row.score() } else { row.score() };
            games.push(row);
        }
    }
    Ok((points / games.len().max(1) as f64, games))
}

/// A duel's games: `first` against `second` over `options.games` games (paired openings, each
/// played with colours swapped), dice seeded by seat, appended to and resumed from `games_file`.
/// Returns the duel's games only, in opening order.
pub fn duel_games(
    first: &Entrant,
    second: &Entrant,
    kit: Option<&Kit>,
    options: &LadderOptions,
    games_file: &Path,
    progress: &(dyn Fn(usize, usize, &GameRow) + Sync),
) -> Result<Vec<GameRow>> {
    let by_seat = LadderOptions { dice_by_seat: true, ..options.clone() };
    let entrants = [first.clone(), second.clone()];
    let rows = run_pairings(&entrants, &[(0, 1)], kit, &by_seat, games_file, progress)?;
    let (a, b) = (first.id(), second.id());
    let openings = by_seat.games.div_ceil(2);
    let mut mine: Vec<GameRow> = rows
        .into_iter()
        .filter(|r| {
            r.opening < openings
                && ((r.white_player() == a && r.black_player() == b && !r.swapped)
                    || (r.white_player() == b && r.black_player() == a && r.swapped))
        })
        .collect();
    mine.sort_by_key(|r| (r.opening, r.swapped));
    Ok(mine)
}

/// The first player's pair scores (0, ½, 1, 1½ or 2 points over an opening's two games, as a
/// share: 0 … 1) of the openings both of whose games are in `games` (from `duel_games`).
/// The first player has White in each opening's first game (`swapped` false), so a player
/// against a copy of itself is scored by seat.
pub fn pair_scores(games: &[GameRow]) -> Vec<f64> {
    let mut by_opening: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for g in games {
        let s = if g.swapped { 1.0 - g.score() } else { g.score() };
        by_opening.entry(g.opening).or_default().push(s);
    }
    by_opening.into_values().filter(|v| v.len() == 2).map(|v| (v[0] + v[1]) / 2.0).collect()
}

/// Philidor's clone test: two copies of a fly that sample their moves from the policy, with
/// independent dice (seeded by seat), over `options.games` paired games. Their score must fall
/// inside the 95 % interval of 50 %; `duel::Duel::of` says whether it does.
pub fn clone_test(sampling: &Entrant, kit: Option<&Kit>, options: &LadderOptions, games_file: &Path) -> Result<crate::duel::Duel> {
    let games = duel_games(sampling, sampling, kit, options, games_file, &|_, _, _| {})?;
    Ok(crate::duel::Duel::of(&pair_scores(&games)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flychess_brain::brain::Brain;
    use flychess_fly::readout::Readout;

    fn options() -> LadderOptions {
        LadderOptions { games: 4, opening_plies: 4, max_plies: 120, seed: 5, stockfish_nodes: 1_000, workers: 2, dice_by_seat: false }
    }

    /// A fly on a brain of four unconnected neurons: its policy is the readout's biases alone.
    fn tiny_fly(name: &str, bias_seed: u64) -> (Brain, flychess_fly::fly::Fly) {
        let brain = Brain::from_parts(4, vec![0; 5], vec![], vec![], vec![]);
        let mut readout = Readout::new_zero(4);
        let mut d = Dice::new(bias_seed);
        for b in readout.bias.iter_mut() {
            *b = d.below(1000) as f32 / 1000.0;
        }
        // The fly thinks the opponent is lost after any move: imagination keeps to moves that do
        // not draw or repeat, and plays a mate in one when there is one.
        readout.bias[flychess_fly::readout::OUTPUTS - 1] = -5.0;
        let meta = flychess_fly::fly::FlyMeta {
            name: name.into(),
            kind: "trained".into(),
            brain: "tiny".into(),
            brain_checksum: "tiny".into(),
            homeostasis: "none".into(),
            reading: flychess_fly::cache::Reading::Mean9To12,
            data: "none".into(),
            train_positions: 0,
            val: None,
            hold: None,
            created: flychess_fly::fly::today(),
            teacher: None,
            positions_by_teacher: None,
        };
        (brain, flychess_fly::fly::Fly { meta, readout })
    }

    #[test]
    fn a_game_torn_by_a_kill_is_cut_a_glued_one_recovered_and_garbage_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("games.jsonl");
        let rungs = [Entrant::Random, Entrant::Greedy];
        assert_eq!(run(&rungs, None, &options(), &file, &|_, _, _| {}).unwrap().len(), 4);
        // Killed in the middle of writing a fifth game: its torn line is no game.
        let mut f = std::fs::OpenOptions::new().append(true).open(&file).unwrap();
        f.write_all(br#"{"white":"random","black":"gre"#).unwrap();
        drop(f);
        assert_eq!(read_games(&file).unwrap().len(), 4);
        // The next run cuts it off: the games it adds are on lines of their own, all readable.
        let more = LadderOptions { games: 6, ..options() };
        assert_eq!(run(&rungs, None, &more, &file, &|_, _, _| {}).unwrap().len(), 6);
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text.lines().count(), 6);
        assert!(text.lines().all(|l| serde_json::from_str::<GameRow>(l).is_ok()), "{text}");
        // A file from before this fix, a game glued to a torn fragment: the game is recovered.
        let rows = read_games(&file).unwrap();
        let glued = text.replacen(r#"{"white""#, r#"{"white":"rand{"white""#, 1);
        std::fs::write(&file, &glued).unwrap();
        assert_eq!(read_games(&file).unwrap(), rows);
        // Anything else that is not a game is said, with its line.
        std::fs::write(&file, format!("{}not a game\n{}", text.lines().next().unwrap().to_owned() + "\n", text)).unwrap();
        let e = read_games(&file).unwrap_err().to_string();
        assert!(e.contains("line 2 is not a game") && e.contains("games.jsonl"), "{e}");
    }

    #[test]
    fn a_fly_retrained_under_the_same_name_plays_its_games_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("games.jsonl");
        let (brain, old) = tiny_fly("f", 1);
        let (_, new) = tiny_fly("f", 2);
        assert_eq!(old.meta.name, new.meta.name);
        let descending = [0u32, 1, 2, 3];
        let played = std::sync::atomic::AtomicUsize::new(0);
        let count = |_: usize, _: usize, _: &GameRow| {
            played.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        };
        let entrants = |f: &flychess_fly::fly::Fly| vec![Entrant::Random, Entrant::fly(f, None)];
        let first = entrants(&old);
        let kit = Kit::new(std::sync::Arc::new(brain.clone()), descending.to_vec()).with_flies(&[(old.clone(), first.clone())]);
        run(&first, Some(&kit), &options(), &file, &count).unwrap();
        assert_eq!(played.swap(0, std::sync::atomic::Ordering::SeqCst), 4);
        // The same fly again: nothing to play.
        run(&first, Some(&kit), &options(), &file, &count).unwrap();
        assert_eq!(played.load(std::sync::atomic::Ordering::SeqCst), 0);
        // Retrained under the same name: its games are played again, the old ones stay on disk
        // and are rated as the old player's.
        let second = entrants(&new);
        let kit = Kit::new(std::sync::Arc::new(brain.clone()), descending.to_vec()).with_flies(&[(new.clone(), second.clone())]);
        let rows = run(&second, Some(&kit), &options(), &file, &count).unwrap();
        assert_eq!(played.load(std::sync::atomic::Ordering::SeqCst), 4, "the retrained fly inherited the old one's games");
        assert_eq!(rows.len(), 8);
        let r = ratings(&rows, "random", 0.0, 20, 1);
        let ids: HashSet<&str> = r.iter().filter(|x| x.name == "f").map(|x| x.id.as_str()).collect();
        assert_eq!(ids, HashSet::from([old.player_id(None).as_str(), new.player_id(None).as_str()]));
        assert!(r.iter().all(|x| x.games == if x.name == "random" { 8 } else { 4 }));
        let table = pairing_results(&rows);
        assert_eq!(table.len(), 2);
        assert!(table.iter().all(|p| p.wins + p.draws + p.losses == 4));
        let ends = endings_by_player(&rows);
        assert_eq!(ends["random"].values().sum::<usize>(), 8);
        // The old fly renamed since its games: rated under its name of now, not the games'.
        let mut renamed_old = old.clone();
        renamed_old.meta.name = "f-old".into();
        let mut rows = rows;
        name_as_now(&mut rows, &[Entrant::Random, Entrant::fly(&new, None), Entrant::fly(&renamed_old, None)]);
        let r = ratings(&rows, "random", 0.0, 20, 1);
        let name_of = |id: String| r.iter().find(|x| x.id == id).unwrap().name.clone();
        assert_eq!(name_of(old.player_id(None)), "f-old");
        assert_eq!(name_of(new.player_id(None)), "f");
        assert_eq!(pairing_results(&rows).iter().filter(|p| p.first == "f-old" || p.second == "f-old").count(), 1);
    }

    #[test]
    fn the_clone_test_holds_even_and_the_same_harness_sees_a_real_edge() {
        let dir = tempfile::tempdir().unwrap();
        let (brain, fly) = tiny_fly("f", 3);
        let descending = [0u32, 1, 2, 3];
        let sampling = Entrant::sampling(&fly);
        let kit = Kit::new(std::sync::Arc::new(brain.clone()), descending.to_vec()).with_flies(&[(fly.clone(), vec![sampling.clone()])]);
        let duel = LadderOptions { games: 60, max_plies: 200, dice_by_seat: true, ..options() };
        let clone = clone_test(&sampling, Some(&kit), &duel, &dir.path().join("clone.jsonl")).unwrap();
        assert_eq!(clone.pairs, 30);
        assert!(clone.holds_even(), "two sampling copies: {clone:?}");
        // The copies' dice differ: the two games of an opening are not the same game.
        let mut games = read_games(&dir.path().join("clone.jsonl")).unwrap();
        games.sort_by_key(|g| (g.opening, g.swapped));
        assert!(games.chunks(2).filter(|p| p[0].pgn != p[1].pgn).count() > 25);
        // A real edge, through the same harness: the greedy mover against the sampling fly (60.8 %
        // [55.5, 66.1] here, pentanomial 0-0-18-11-1). The fly with imagination on this brain (no
        // board reaches its four neurons, so its values are flat: it only takes mates in one)
        // scored 51.7 % [44.3, 59.0] (0-7-15-7-1): too small an edge for 30 pairs, not asserted.
        let edge = duel_games(&Entrant::Greedy, &sampling, Some(&kit), &duel, &dir.path().join("greedy.jsonl"), &|_, _, _| {}).unwrap();
        let d = crate::duel::Duel::of(&pair_scores(&edge));
        assert_eq!(d.pairs, 30);
        assert!(!d.holds_even() && d.elo_low > 0.0, "the harness missed the greedy mover's edge: {d:?}");
    }

    #[test]
    fn rung_names_parse_and_a_fly_name_is_not_one() {
        assert_eq!(Entrant::rung("random").unwrap().unwrap(), Entrant::Random);
        assert_eq!(Entrant::rung("stockfish").unwrap().unwrap(), Entrant::Stockfish { random_share: 0.0 });
        assert_eq!(Entrant::rung("stockfish:0.25").unwrap().unwrap(), Entrant::Stockfish { random_share: 0.25 });
        assert!(Entrant::rung("stockfish:lots").unwrap().unwrap_err().to_string().contains("stockfish:0.25"));
        assert!(Entrant::rung("flywire").is_none() && !Entrant::names_rung("flywire") && Entrant::names_rung("greedy"));
    }

    #[test]
    fn openings_are_fixed_by_the_seed_and_differ_between_openings() {
        let a = opening(3, 0, 4);
        assert_eq!(a, opening(3, 0, 4));
        assert_ne!(a, opening(3, 1, 4));
        assert_eq!(a.fullmoves().get(), 3, "four plies played");
    }

    #[test]
    fn the_harness_check_of_a_greedy_mover_is_exactly_even() {
        // Different games every opening, yet the two copies split the points exactly.
        let long = LadderOptions { max_plies: 400, ..options() };
        let (share, games) = harness_check(&Entrant::Greedy, None, &long, 6).unwrap();
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
        e.push(Entrant::Fly { name: "f".into(), id: "f1".into(), imagination: None, sample: false, habituation: None, glances: None });
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

/// What a sharded run's games depend on: the players (by content id), the pairings and the
/// options (the number of games played at once aside). A part's sidecar carries it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardKey {
    pub players: Vec<String>,
    pub pairings: Vec<(usize, usize)>,
    pub options: LadderOptions,
}

impl ShardKey {
    pub fn of(entrants: &[Entrant], pairings: &[(usize, usize)], options: &LadderOptions) -> ShardKey {
        ShardKey {
            players: entrants.iter().map(Entrant::id).collect(),
            pairings: pairings.to_vec(),
            options: LadderOptions { workers: 0, ..options.clone() },
        }
    }
}

/// Plays shard `shard`'s range of the games of `pairings` (`scheduled` order) into its part file
/// beside `games_file` (`….part-I-of-N.jsonl`, a sidecar of its key), resumable on its own; a
/// part left by another run (other players, pairings or options) is set aside first. Returns the
/// part file and its games.
pub fn play_shard(
    entrants: &[Entrant],
    pairings: &[(usize, usize)],
    kit: Option<&Kit>,
    options: &LadderOptions,
    games_file: &Path,
    shard: flychess_fly::shard::Shard,
    progress: &(dyn Fn(usize, usize, &GameRow) + Sync),
) -> Result<(PathBuf, Vec<GameRow>)> {
    let all = scheduled(pairings, options);
    let part = flychess_fly::shard::Part { shard, total: all.len() };
    let file = flychess_fly::shard::part_path(games_file, shard);
    flychess_fly::shard::start_part(&file, &ShardKey::of(entrants, pairings, options), part)?;
    let rows = play_scheduled(entrants, &all[part.range()], kit, options, &file, progress)?;
    Ok((file, rows))
}

/// Adds the games of the `count` shards' part files of this run to `games_file` (those not in it
/// yet, in `scheduled` order, the file rewritten atomically). Refused, naming the file, when a
/// part is missing, unfinished or of another run. Returns how many games were added.
pub fn merge_shards(
    entrants: &[Entrant],
    pairings: &[(usize, usize)],
    options: &LadderOptions,
    games_file: &Path,
    count: usize,
) -> Result<usize> {
    let all = scheduled(pairings, options);
    let ids: Vec<String> = entrants.iter().map(Entrant::id).collect();
    let key_of = |&(w, b, k, swapped): &Scheduled| key(&ids[w], &ids[b], k, swapped);
    let mut found = Vec::new();
    let mut games: BTreeMap<String, GameRow> = BTreeMap::new();
    for shard in flychess_fly::shard::Shard::all(count) {
        let file = flychess_fly::shard::part_path(games_file, shard);
        if !file.exists() {
            continue;
        }
        let (part_key, part) = flychess_fly::shard::read_sidecar::<ShardKey>(&file, "a games part")?;
        let wanted: HashSet<String> = if part.total == all.len() && part.shard.count == count {
            all[part.range()].iter().map(key_of).collect()
        } else {
            HashSet::new()
        };
        let mut records = 0;
        for row in read_games(&file)? {
            if wanted.contains(&row.key()) && !games.contains_key(&row.key()) {
                records += 1;
                games.insert(row.key(), row);
            }
        }
        found.push(flychess_fly::shard::PartFile { path: file, key: part_key, part, records });
    }
    if found.is_empty() {
        return Err(Error::Invalid(format!(
            "no part of these games cut {count} ways beside {} (run the job with --shard I/{count} first)",
            games_file.display()
        )));
    }
    let expected = ShardKey::of(entrants, pairings, options);
    if let Some(other) = found.iter().find(|p| p.key != expected) {
        let differs: Vec<&str> = [
            ("players", other.key.players != expected.players),
            ("pairings", other.key.pairings != expected.pairings),
            ("options", other.key.options != expected.options),
        ]
        .into_iter()
        .filter_map(|(what, differ)| differ.then_some(what))
        .collect();
        return Err(Error::Invalid(format!(
            "{}: the games of another run: its {} differ from this run's",
            other.path.display(),
            differs.join(" and ")
        )));
    }
    flychess_fly::shard::check_parts(found, "games")?;
    let existing = read_games(games_file)?;
    let have: HashSet<String> = existing.iter().map(GameRow::key).collect();
    let added: Vec<&GameRow> = all.iter().map(key_of).filter(|k| !have.contains(k)).filter_map(|k| games.get(&k)).collect();
    let mut text = String::new();
    for row in existing.iter().chain(added.iter().copied()) {
        text.push_str(&serde_json::to_string(row).expect("a game serialises"));
        text.push('\n');
    }
    flychess_brain::files::write_atomically(games_file, text.as_bytes())?;
    Ok(added.len())
}
