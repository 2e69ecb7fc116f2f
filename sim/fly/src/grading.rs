//! Grading moves the way Lichess does (SPEC §5): a centipawn score becomes a win chance, the drop
//! in win chance a move causes becomes an accuracy, and the drop names a verdict. Used by the app's
//! move grades, the game report and the evaluation of flies.

/// Centipawns beyond ±1000 count as ±1000.
pub const CP_CLIP: f64 = 1000.0;

/// Win chance in percent for the side whose score this is: 50 + 50·(2/(1+e^(−0.00368208·cp)) − 1).
pub fn win_percent(cp: f64) -> f64 {
    let cp = cp.clamp(-CP_CLIP, CP_CLIP);
    50.0 + 50.0 * (2.0 / (1.0 + libm::exp(-0.00368208 * cp)) - 1.0)
}

/// A score as Stockfish gives it: centipawns, or a forced mate in `n` moves (positive: the side to
/// move mates; negative: it is mated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Score {
    Cp(i32),
    Mate(i32),
}

impl Score {
    /// Centipawns for the win-chance curve: a mate counts as the clip value.
    pub fn as_cp(self) -> f64 {
        match self {
            Score::Cp(cp) => cp as f64,
            Score::Mate(n) if n > 0 => CP_CLIP,
            Score::Mate(_) => -CP_CLIP,
        }
    }
    pub fn win_percent(self) -> f64 {
        win_percent(self.as_cp())
    }
    /// The same score from the other side.
    pub fn flip(self) -> Score {
        match self {
            Score::Cp(cp) => Score::Cp(-cp),
            Score::Mate(n) => Score::Mate(-n),
        }
    }
}

/// Accuracy of a move that dropped the mover's win chance by `drop` points:
/// 103.1668100711649·e^(−0.04354415386753951·drop) − 3.166924740191411 + 1, clipped to 0..100;
/// 100 when nothing was lost.
pub fn accuracy(drop: f64) -> f64 {
    if drop <= 0.0 {
        return 100.0;
    }
    (103.1668100711649 * libm::exp(-0.04354415386753951 * drop) - 3.166924740191411 + 1.0).clamp(0.0, 100.0)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Verdict {
    Best,
    Good,
    Inaccuracy,
    Mistake,
    Blunder,
}

impl Verdict {
    /// From the drop in win chance: the best move, then ≥ 5 inaccuracy, ≥ 10 mistake, ≥ 15 blunder.
    pub fn of(drop: f64, is_best: bool) -> Verdict {
        if is_best {
            Verdict::Best
        } else if drop >= 15.0 {
            Verdict::Blunder
        } else if drop >= 10.0 {
            Verdict::Mistake
        } else if drop >= 5.0 {
            Verdict::Inaccuracy
        } else {
            Verdict::Good
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Best => "best",
            Verdict::Good => "good",
            Verdict::Inaccuracy => "inaccuracy",
            Verdict::Mistake => "mistake",
            Verdict::Blunder => "blunder",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn win_percent_at_known_values() {
        assert!((win_percent(0.0) - 50.0).abs() < 1e-12);
        // 100 cp: 50 + 50·(2/(1+e^-0.368208) − 1) = 59.10...
        assert!((win_percent(100.0) - 59.102_59).abs() < 1e-4, "{}", win_percent(100.0));
        assert!((win_percent(-100.0) - (100.0 - 59.102_59)).abs() < 1e-4);
        assert_eq!(win_percent(5000.0), win_percent(1000.0), "clipped at ±1000");
        assert!(win_percent(1000.0) > 97.0 && win_percent(1000.0) < 100.0);
        assert_eq!(Score::Mate(3).win_percent(), win_percent(1000.0));
        assert_eq!(Score::Mate(-2).win_percent(), win_percent(-1000.0));
        assert_eq!(Score::Cp(35).flip(), Score::Cp(-35));
    }

    #[test]
    fn accuracy_at_known_values() {
        assert_eq!(accuracy(0.0), 100.0);
        assert_eq!(accuracy(-3.0), 100.0);
        // A tiny drop stays near 100 (the formula gives 101 at 0, clipped).
        assert_eq!(accuracy(1e-9), 100.0);
        // 10 points lost: 103.1668·e^-0.43544 − 2.16692 = 64.5798
        assert!((accuracy(10.0) - 64.579_83).abs() < 1e-4, "{}", accuracy(10.0));
        assert!(accuracy(100.0) < 1.0);
        assert!(accuracy(100.0) >= 0.0);
    }

    #[test]
    fn verdicts_by_drop() {
        assert_eq!(Verdict::of(20.0, true), Verdict::Best);
        assert_eq!(Verdict::of(4.99, false), Verdict::Good);
        assert_eq!(Verdict::of(5.0, false), Verdict::Inaccuracy);
        assert_eq!(Verdict::of(10.0, false), Verdict::Mistake);
        assert_eq!(Verdict::of(15.0, false), Verdict::Blunder);
    }
}
