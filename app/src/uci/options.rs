//! What a UCI client sets: `position` (a start and its moves, each checked; a bad one said and
//! the last good position kept) and `setoption` (Player, Search, Imagination, Engine, MultiPV,
//! Threads, UCI_ShowWDL; a player that cannot play refused where it is chosen).

use std::io::Write;

use anyhow::Result;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position};

use flychess_brain::brain::simulator::EngineChoice;
use flychess_fly::readout::position_key;

use super::{MOST_LINES, MOST_SIMULATIONS, Session, shorten, with_search};

impl Session {
    /// `position startpos|fen FEN [moves M…]`; a malformed one or an illegal move is said and
    /// the last good position kept.
    pub(super) fn position(&mut self, words: &[&str], output: &mut dyn Write) -> Result<()> {
        let moves_at = words.iter().position(|w| *w == "moves").unwrap_or(words.len());
        let (setup, moves) = (&words[..moves_at], words.get(moves_at + 1..).unwrap_or(&[]));
        let start = match setup.first() {
            Some(&"startpos") if setup.len() == 1 => Chess::default(),
            Some(&"fen") if setup.len() > 1 => {
                let fen = setup[1..].join(" ");
                match fen
                    .parse::<Fen>()
                    .map_err(|e| e.to_string())
                    .and_then(|f| f.into_position::<Chess>(CastlingMode::Standard).map_err(|e| e.to_string()))
                {
                    Ok(p) => p,
                    Err(e) => return self.say(output, &format!("position refused, the last one kept: FEN {}: {e}", shorten(&fen))),
                }
            }
            _ => {
                return self.say(
                    output,
                    &format!("position refused, the last one kept: expected startpos or fen, got {}", shorten(&setup.join(" "))),
                );
            }
        };
        self.set_position(start, moves, output)
    }

    pub(super) fn set_position(&mut self, start: Chess, moves: &[&str], output: &mut dyn Write) -> Result<()> {
        let mut pos = start;
        let mut keys = vec![position_key(&pos)];
        for (k, m) in moves.iter().enumerate() {
            let legal = m.parse::<UciMove>().ok().and_then(|u| u.to_move(&pos).ok());
            let Some(legal) = legal else {
                return self
                    .say(output, &format!("position refused, the last one kept: move {} ({}) is not legal here", k + 1, shorten(m)));
            };
            pos.play_unchecked(legal);
            keys.push(position_key(&pos));
        }
        self.position = pos;
        self.keys = keys;
        Ok(())
    }

    pub(super) fn set_option(&mut self, words: &[&str], output: &mut dyn Write) -> Result<()> {
        // setoption name NAME [value VALUE]; names may hold spaces.
        let value_at = words.iter().position(|w| *w == "value");
        let name = words.get(1..value_at.unwrap_or(words.len())).unwrap_or(&[]).join(" ");
        let value = value_at.map(|i| words[i + 1..].join(" ")).unwrap_or_default();
        if words.first() != Some(&"name") || name.is_empty() {
            return self
                .say(output, &format!("setoption needs a name: setoption name NAME value VALUE (got {})", shorten(&words.join(" "))));
        }
        // A player that cannot play is refused where it is chosen: the option stays as it was.
        let refused = |session: &mut Session, output: &mut dyn Write, who: &str, e: anyhow::Error, option: &str| -> Result<()> {
            let kept = session.player_name().unwrap_or_default();
            // The whole reason goes to stderr; the GUI's line keeps to its start.
            eprintln!("{} cannot play: {e:#}", shorten(who));
            let whole = format!("{e:#}");
            let mut reason: String = whole.chars().take(240).collect();
            if reason.len() < whole.len() {
                reason.push('…');
            }
            session.say(output, &format!("{} cannot play ({reason}); {option} stays as it was (playing {kept})", shorten(who)))
        };
        match name.to_ascii_lowercase().as_str() {
            "player" => {
                let before = self.player.replace(value.clone());
                if let Err(e) = self.seat() {
                    self.player = before;
                    let e = if self.search > 0 { e.context(format!("Search is {}: 0 plays the player alone", self.search)) } else { e };
                    refused(self, output, &value, e, "Player")?;
                }
            }
            "search" => match value.trim().parse::<usize>() {
                Ok(n) if n <= MOST_SIMULATIONS => {
                    let before = std::mem::replace(&mut self.search, n);
                    // Checked now once the brain is loaded (else at `isready` or `go`).
                    if let Some(Err(e)) = self.ready.is_some().then(|| self.seat().map(|_| ())) {
                        self.search = before;
                        let who = self.player_option().map(|p| with_search(&p, n)).unwrap_or_default();
                        refused(self, output, &who, e, "Search")?;
                    }
                }
                _ => self.say(output, &format!("Search is 0 (off) to {MOST_SIMULATIONS} simulations, not {}", shorten(&value)))?,
            },
            "imagination" => match value.trim().parse::<f32>() {
                Ok(w) if w.is_finite() && w >= 0.0 => self.imagination = w,
                _ => self.say(output, &format!("Imagination takes a weight ≥ 0 (0: off), not {}", shorten(&value)))?,
            },
            "engine" => match value.trim() {
                "auto" => self.engine = EngineChoice::Auto,
                "cpu" => self.engine = EngineChoice::Cpu,
                "gpu" => self.engine = EngineChoice::Gpu,
                v => self.say(output, &format!("Engine is auto, cpu or gpu, not {}", shorten(v)))?,
            },
            "multipv" => match value.trim().parse::<usize>() {
                Ok(n) if (1..=MOST_LINES).contains(&n) => self.multipv = n,
                _ => self.say(output, &format!("MultiPV is 1 to {MOST_LINES}, not {}", shorten(&value)))?,
            },
            "threads" => match value.trim().parse::<usize>() {
                Ok(n) if (1..=256).contains(&n) => self.threads = n,
                _ => self.say(output, &format!("Threads is 1 to 256, not {}", shorten(&value)))?,
            },
            "uci_showwdl" => match value.trim() {
                "true" => self.show_wdl = true,
                "false" => self.show_wdl = false,
                v => self.say(output, &format!("UCI_ShowWDL is true or false, not {}", shorten(v)))?,
            },
            _ => eprintln!("uci: unknown option {}", shorten(&name)),
        }
        Ok(())
    }
}
