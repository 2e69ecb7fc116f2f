//! The fly's eye as a chessboard: where each photoreceptor sits (square) and what it reports
//! (one piece type, any own piece, any opponent piece). This module owns the "fair eye" cut of the
//! seed (SPEC §3.2, seed "The maths" 2): hex columns (h1, h2) are turned to u = h1 − h2,
//! v = h1 + h2, where the eye is a round oval; the columns are cut into 8 bands of equal weight
//! along v and every band into 8 squares of equal weight along u, weighing a column by its cells
//! (10 per R1–R6 cell, 1 per R7/R8: the seed's 1 and 0.1, kept in integers so the cut is exact on
//! every machine). Both eyes are laid on top of each other. Turning the board into the eye's input
//! vector also lives here, because it is the other half of the same map.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::connectome::rules::PhotoreceptorKind;

/// What a placed photoreceptor reports on its square.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EyeRole {
    /// R1–R6: piece type 0..=5 (pawn, knight, bishop, rook, queen, king), either colour.
    PieceType(u8),
    /// R7: any piece of the side to move.
    Own,
    /// R8: any piece of the opponent.
    Opponent,
}

impl EyeRole {
    pub fn to_u8(self) -> u8 {
        match self {
            EyeRole::PieceType(k) => k,
            EyeRole::Own => 6,
            EyeRole::Opponent => 7,
        }
    }
    pub fn from_u8(v: u8) -> Option<EyeRole> {
        match v {
            0..=5 => Some(EyeRole::PieceType(v)),
            6 => Some(EyeRole::Own),
            7 => Some(EyeRole::Opponent),
            _ => None,
        }
    }
    /// The planes (0–5 own pawn..king, 6–11 opponent's) this cell reports.
    pub fn planes(self) -> [bool; 12] {
        let mut p = [false; 12];
        match self {
            EyeRole::PieceType(k) => {
                p[k as usize] = true;
                p[k as usize + 6] = true;
            }
            EyeRole::Own => p[..6].fill(true),
            EyeRole::Opponent => p[6..].fill(true),
        }
        p
    }
}

/// One photoreceptor placed on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EyeCell {
    /// Index of the neuron in the connectome.
    pub neuron: u32,
    /// Square 0..64 = 8·rank + file, in the frame of the side to move.
    pub square: u8,
    pub role: EyeRole,
}

/// A photoreceptor before placement: its neuron, its kind and the hex column of its strongest
/// hex-annotated partner (None when it has none: it stays off the board).
#[derive(Clone, Copy, Debug)]
pub struct Photoreceptor {
    pub neuron: u32,
    pub kind: PhotoreceptorKind,
    pub column: Option<(i32, i32)>,
}

/// A photoreceptor before placement on a sheet whose coordinates are integers (u, v): the
/// hex lattice turned by 45° (MaleCNS), or a retinotopic sheet recovered from the wiring and
/// scaled to integers (FlyWire). None: it stays off the board.
#[derive(Clone, Copy, Debug)]
pub struct SheetPhotoreceptor {
    pub neuron: u32,
    pub kind: PhotoreceptorKind,
    pub at: Option<(i64, i64)>,
}

/// The placed eye.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Eye {
    /// Placed cells, sorted by neuron index.
    pub cells: Vec<EyeCell>,
    /// All photoreceptors, placed or not.
    pub photoreceptors: u32,
    /// How the sheet was recovered from the wiring (FlyWire); None where the release annotates
    /// the columns (MaleCNS, the stand-in). Not written when None, so those brains' files stay
    /// as they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered: Option<crate::connectome::retina::Recovered>,
}

impl Eye {
    /// The fair-eye cut of hex-annotated columns (MaleCNS): (h1, h2) turned to u = h1 − h2,
    /// v = h1 + h2, then `place_on_sheet`.
    pub fn place(photoreceptors: &[Photoreceptor]) -> Eye {
        let on_sheet: Vec<SheetPhotoreceptor> = photoreceptors
            .iter()
            .map(|p| SheetPhotoreceptor {
                neuron: p.neuron,
                kind: p.kind,
                at: p.column.map(|(h1, h2)| ((h1 - h2) as i64, (h1 + h2) as i64)),
            })
            .collect();
        Eye::place_on_sheet(&on_sheet)
    }

    /// The fair-eye cut of columns at integer sheet coordinates (u, v): 8 bands of equal weight
    /// along v, each band cut into 8 squares of equal weight along u. Deterministic: columns are
    /// ordered by (v, u) and (u, v) with integer keys, and the R1–R6 cells of a square take the
    /// piece types in turn in neuron order. Cells of one column land on one square.
    pub fn place_on_sheet(photoreceptors: &[SheetPhotoreceptor]) -> Eye {
        let weight = |k: PhotoreceptorKind| if k == PhotoreceptorKind::R1R6 { 10u64 } else { 1 };
        // Column (u, v) -> weight.
        let mut columns: BTreeMap<(i64, i64), u64> = BTreeMap::new();
        for p in photoreceptors {
            if let Some(at) = p.at {
                *columns.entry(at).or_default() += weight(p.kind);
            }
        }
        // Bands along v (then u).
        let mut by_v: Vec<((i64, i64), u64)> = columns.iter().map(|(&c, &w)| (c, w)).collect();
        by_v.sort_by_key(|&((u, v), _)| (v, u));
        let total: u64 = by_v.iter().map(|c| c.1).sum();
        let mut band_of: BTreeMap<(i64, i64), usize> = BTreeMap::new();
        let mut before = 0u64;
        for &(c, w) in &by_v {
            band_of.insert(c, ((8 * before / total.max(1)) as usize).min(7));
            before += w;
        }
        // Squares along u (then v) inside each band.
        let mut square_of: BTreeMap<(i64, i64), u8> = BTreeMap::new();
        for band in 0..8 {
            let mut members: Vec<((i64, i64), u64)> = by_v.iter().copied().filter(|(c, _)| band_of[c] == band).collect();
            members.sort_by_key(|&((u, v), _)| (u, v));
            let band_total: u64 = members.iter().map(|c| c.1).sum();
            let mut before = 0u64;
            for (c, w) in members {
                let file = ((8 * before / band_total.max(1)) as usize).min(7);
                square_of.insert(c, (8 * band + file) as u8);
                before += w;
            }
        }
        let mut sorted: Vec<&SheetPhotoreceptor> = photoreceptors.iter().collect();
        sorted.sort_by_key(|p| p.neuron);
        let mut typed_on_square = [0u32; 64];
        let mut cells = Vec::new();
        for p in sorted {
            let Some(at) = p.at else { continue };
            let square = square_of[&at];
            let role = match p.kind {
                PhotoreceptorKind::R1R6 => {
                    let k = typed_on_square[square as usize] % 6;
                    typed_on_square[square as usize] += 1;
                    EyeRole::PieceType(k as u8)
                }
                PhotoreceptorKind::R7 => EyeRole::Own,
                PhotoreceptorKind::R8 => EyeRole::Opponent,
            };
            cells.push(EyeCell { neuron: p.neuron, square, role });
        }
        Eye { cells, photoreceptors: photoreceptors.len() as u32, recovered: None }
    }

    /// Cells on each square.
    pub fn cells_per_square(&self) -> [u32; 64] {
        let mut n = [0u32; 64];
        for c in &self.cells {
            n[c.square as usize] += 1;
        }
        n
    }

    /// R1–R6 (piece-type) cells on each square.
    pub fn typed_cells_per_square(&self) -> [u32; 64] {
        let mut n = [0u32; 64];
        for c in self.cells.iter().filter(|c| matches!(c.role, EyeRole::PieceType(_))) {
            n[c.square as usize] += 1;
        }
        n
    }

    /// The fewest piece-type cells on any square (the seed asks for ≥ 8 everywhere).
    pub fn min_typed_cells_per_square(&self) -> u32 {
        self.typed_cells_per_square().into_iter().min().unwrap_or(0)
    }
}

/// What the eye sees of one square of the real board (a1 = 0): its placed cells by what they
/// report (`[0..6]` R1–R6 for pawn … king, `[6]` R7 own pieces, `[7]` R8 the opponent's, "own"
/// meaning the side to move) and how many of each get input from this board before step 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SquareSight {
    pub square: u8,
    pub cells: [u32; 8],
    pub firing: [u32; 8],
}

impl SquareSight {
    pub fn total(&self) -> u32 {
        self.cells.iter().sum()
    }
    pub fn total_firing(&self) -> u32 {
        self.firing.iter().sum()
    }
}

/// How a position lands on the photoreceptors: 64 squares of the real board, a1 first. The eye
/// reads the board from the side to move, so when Black moves its cells of square q sit on the
/// real square q flipped vertically.
pub fn sight(cells: &[EyeCell], pos: &shakmaty::Chess) -> Vec<SquareSight> {
    use shakmaty::Position;
    let board = crate::chess::planes(pos);
    let x = batch_input(cells, &[board]);
    let flip = pos.turn() == shakmaty::Color::Black;
    let mut out: Vec<SquareSight> = (0..64u8).map(|square| SquareSight { square, ..Default::default() }).collect();
    for (cell, v) in cells.iter().zip(&x) {
        let real = if flip { cell.square ^ 56 } else { cell.square } as usize;
        let k = cell.role.to_u8() as usize;
        out[real].cells[k] += 1;
        if *v > 0.0 {
            out[real].firing[k] += 1;
        }
    }
    out
}

/// The eye's input for a batch of boards (12 planes × 64 squares each, from the side to move):
/// x = Σ_{p ∈ F} b_{p, q} for every placed cell, `[cell · batch + position]`. Both engines use it.
pub fn batch_input(cells: &[EyeCell], boards: &[[[bool; 64]; 12]]) -> Vec<f32> {
    use rayon::prelude::*;
    let b = boards.len();
    let mut x = vec![0f32; cells.len() * b];
    if b == 0 {
        return x;
    }
    // Cells in parallel for large batches (a GPU slab of 128 boards is 0.5 M values).
    let fill = |(cell, row): (&EyeCell, &mut [f32])| {
        let reports = cell.role.planes();
        for (v, planes) in row.iter_mut().zip(boards) {
            *v = (0..12).filter(|&p| reports[p] && planes[p][cell.square as usize]).count() as f32;
        }
    };
    if b >= 16 {
        cells.par_iter().zip(x.par_chunks_mut(b)).for_each(fill);
    } else {
        cells.iter().zip(x.chunks_mut(b)).for_each(fill);
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use PhotoreceptorKind::*;

    fn pr(neuron: u32, kind: PhotoreceptorKind, column: Option<(i32, i32)>) -> Photoreceptor {
        Photoreceptor { neuron, kind, column }
    }

    #[test]
    fn fair_eye_cuts_a_round_eye_into_64_equal_squares() {
        // A round eye in (u, v): 6 R1–R6 cells and an R7 and an R8 per column.
        let mut cells = Vec::new();
        let mut n = 0;
        for h1 in -20..=20 {
            for h2 in -20..=20 {
                let (u, v) = (h1 - h2, h1 + h2);
                if u * u + v * v > 24 * 24 {
                    continue;
                }
                for kind in [R1R6, R1R6, R1R6, R1R6, R1R6, R1R6, R7, R8] {
                    cells.push(pr(n, kind, Some((h1, h2))));
                    n += 1;
                }
            }
        }
        let eye = Eye::place(&cells);
        assert_eq!(eye.cells.len(), cells.len());
        let typed = eye.typed_cells_per_square();
        let (lo, hi) = (typed.iter().min().unwrap(), typed.iter().max().unwrap());
        assert!(*lo >= 8, "every square tells piece types apart: {typed:?}");
        // Equal weight: no square has more than twice the cells of another on a round eye.
        assert!(*hi <= 2 * *lo, "{lo}..{hi}");
        // Columns stay whole: every cell of a column lands on one square.
        let mut square_of_column = BTreeMap::new();
        for (c, p) in eye.cells.iter().zip(&cells) {
            let prev = square_of_column.insert(p.column, c.square);
            assert!(prev.is_none() || prev == Some(c.square));
        }
        // Ranks grow along v, files along u.
        let at = |h1: i32, h2: i32| eye.cells.iter().zip(&cells).find(|(_, p)| p.column == Some((h1, h2))).unwrap().0.square;
        assert!(at(-10, -10) / 8 < at(10, 10) / 8, "rank follows v = h1 + h2");
        assert!(at(-10, 10) % 8 < at(10, -10) % 8, "file follows u = h1 − h2");
    }

    #[test]
    fn piece_types_go_round_within_a_square_and_r7_r8_report_colours() {
        let cells: Vec<_> = (0..8).map(|i| pr(i, R1R6, Some((0, 0)))).chain([pr(8, R7, Some((0, 0))), pr(9, R8, Some((0, 0)))]).collect();
        let eye = Eye::place(&cells);
        let roles: Vec<EyeRole> = eye.cells.iter().map(|c| c.role).collect();
        use EyeRole::*;
        assert_eq!(
            roles,
            vec![
                PieceType(0),
                PieceType(1),
                PieceType(2),
                PieceType(3),
                PieceType(4),
                PieceType(5),
                PieceType(0),
                PieceType(1),
                Own,
                Opponent
            ]
        );
    }

    #[test]
    fn unplaced_photoreceptors_stay_off_the_board() {
        let eye = Eye::place(&[pr(0, R1R6, Some((1, 2))), pr(1, R8, None)]);
        assert_eq!(eye.photoreceptors, 2);
        assert_eq!(eye.cells.len(), 1);
        assert_eq!(eye.cells[0].neuron, 0);
    }

    #[test]
    fn input_lights_cells_that_report_a_piece_on_their_square() {
        let cells = vec![
            EyeCell { neuron: 0, square: 12, role: EyeRole::PieceType(0) },
            EyeCell { neuron: 1, square: 12, role: EyeRole::Own },
            EyeCell { neuron: 2, square: 12, role: EyeRole::Opponent },
            EyeCell { neuron: 3, square: 12, role: EyeRole::PieceType(1) },
        ];
        let mut with_pawn = [[false; 64]; 12];
        with_pawn[6][12] = true; // an opponent pawn on e2
        let empty = [[false; 64]; 12];
        // Two boards: [cell · 2 + board].
        let x = batch_input(&cells, &[with_pawn, empty]);
        assert_eq!(x, vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    }
}
