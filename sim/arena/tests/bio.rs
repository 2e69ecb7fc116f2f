//! The dopamine fly on a mushroom body small enough to reason about: 64 eye cells (own piece on
//! a square), each driving one Kenyon cell, every Kenyon cell onto an approach MBON (reached by
//! PPL1) and an avoid MBON (reached by PAM). Good boards put pieces on the first half of the board,
//! bad boards on the second: the three-factor rule must teach the fly to prefer the good ones on
//! pairs it never saw; the model must be the plain brain when every Kenyon cell passes; scoring must
//! not depend on the batch; a game in games mode keeps every synapse within [0, M⁰].

use flychess_arena::bio::learn::{self, Lesson, Rule};
use flychess_arena::bio::measure;
use flychess_arena::bio::{BioBrain, Constants, MushroomBody};
use flychess_arena::players::Player;
use flychess_brain::brain::{Brain, cpu};
use flychess_brain::chess::Planes;
use flychess_brain::eye::{EyeCell, EyeRole};
use flychess_fly::stats::Dice;

const KC: usize = 64;

/// Neurons: 0–63 eye cells, 64–127 Kenyon cells, 128 approach MBON, 129 avoid MBON, 130 a neuron
/// the MBONs drive (the rest of the brain). The Kenyon cell → MBON synapses are in `plain` only.
fn tiny() -> (Brain, BioBrain) {
    tiny_with(|_| 1.0)
}

/// `tiny` with Kenyon cell k driven from its eye cell with weight `drive(k)` (all 1 in `tiny`:
/// every lit cell then has the same rate).
fn tiny_with(drive: impl Fn(usize) -> f32) -> (Brain, BioBrain) {
    let n = 131;
    let eye: Vec<EyeCell> = (0..64).map(|s| EyeCell { neuron: s as u32, square: s as u8, role: EyeRole::Own }).collect();
    type Rows = Vec<Vec<(u32, f32)>>;
    let (mut rows_plain, mut rows_rest): (Rows, Rows) = (vec![Vec::new(); n], vec![Vec::new(); n]);
    for k in 0..KC {
        rows_plain[64 + k].push((k as u32, drive(k)));
        rows_rest[64 + k].push((k as u32, drive(k)));
    }
    let m0 = |k: usize| 0.05 + 0.001 * k as f32;
    for mbon in [128, 129] {
        for k in 0..KC {
            rows_plain[mbon].push(((64 + k) as u32, m0(k)));
        }
    }
    for r in [&mut rows_plain, &mut rows_rest] {
        r[130] = vec![(128, 0.5), (129, -0.5)];
    }
    let csr = |rows: &[Vec<(u32, f32)>]| {
        let mut row_start = vec![0u32];
        let (mut pre, mut w) = (Vec::new(), Vec::new());
        for r in rows {
            for &(p, x) in r {
                pre.push(p);
                w.push(x);
            }
            row_start.push(pre.len() as u32);
        }
        let mut b = Brain::from_parts(n, row_start, pre, w, eye.clone());
        // No drive without input: a Kenyon cell whose square is empty stays silent.
        b.set_params(flychess_brain::brain::Params { beta: 0.0, ..b.params() });
        b
    };
    let plain = csr(&rows_plain);
    let body = MushroomBody {
        kenyon: (64..64 + KC as u32).collect(),
        mbon: vec![128, 129],
        valence: vec![1.0, -1.0],
        rho_pam: vec![0.0, 1.0],
        rho_ppl1: vec![1.0, 0.0],
        edge_start: vec![0, KC as u32, 2 * KC as u32],
        edge_kc: (0..KC as u32).chain(0..KC as u32).collect(),
        m0: (0..KC).map(m0).chain((0..KC).map(m0)).collect(),
        pass: 12,
        // The dopamine-neuron pilot's wiring: eye cell 0 stands in for a PAM neuron onto the avoid
        // MBON, eye cell 63 for a PPL1 neuron onto the approach MBON (their rates follow the board).
        dopamine: vec![0, 63],
        dopamine_inputs: vec![vec![(1, 1.0, false)], vec![(0, 1.0, true)]],
    };
    let constants = Constants { eta: 0.5, ..Constants::default() };
    let bio = BioBrain {
        brain: csr(&rows_rest),
        body,
        constants,
        descending: vec![130],
        brain_checksum: "tiny".into(),
        homeostasis: "neutral".into(),
        gpu: None,
    };
    (plain, bio)
}

/// A board with own pawns on `squares`.
fn board(squares: &[usize]) -> Planes {
    let mut p = [[false; 64]; 12];
    for &s in squares {
        p[0][s] = true;
    }
    p
}

/// Good: 6 squares of the first half; bad: 6 of the second.
fn lessons(seed: u64, n: usize) -> Vec<Lesson> {
    let mut d = Dice::new(seed);
    let mut pick = |from: usize| -> Vec<usize> { (0..6).map(|_| from + d.below(32)).collect() };
    (0..n).map(|_| Lesson { good: board(&pick(0)), bad: board(&pick(32)) }).collect()
}

#[test]
fn the_rule_teaches_the_tiny_fly_to_prefer_the_good_boards_it_never_saw() {
    let (_, bio) = tiny();
    let held_out = lessons(99, 200);
    let mut m = bio.body.m0.clone();
    let before = measure::pairs_right(&measure::score(&bio, &m, &held_out, 64, &|_| {}));
    for (i, batch) in lessons(1, 64 * 20).chunks(64).enumerate() {
        let r = learn::tutor(&bio, &mut m, batch, Rule::default());
        assert!(r.mean_dose > 0.0 && r.mean_dose < 1.0, "batch {i}: {r:?}");
    }
    let scores = measure::score(&bio, &m, &held_out, 64, &|_| {});
    let after = measure::pairs_right(&scores);
    assert!(before.value < 0.75, "before training the boards are about equal: {before:?}");
    assert!(after.value > 0.9 && after.low > before.high, "before {before:?}, after {after:?}");
    // Weaken-only with drift back: every synapse within [0, M⁰]; sugar weakened the avoid MBON's
    // synapses of the good half, shock the approach MBON's synapses of the bad half.
    assert!(m.iter().zip(&bio.body.m0).all(|(v, m0)| *v >= 0.0 && v <= m0));
    let avoid_good: f32 = (0..32).map(|k| m[KC + k] / bio.body.m0[KC + k]).sum::<f32>() / 32.0;
    let avoid_bad: f32 = (32..64).map(|k| m[KC + k] / bio.body.m0[KC + k]).sum::<f32>() / 32.0;
    let approach_bad: f32 = (32..64).map(|k| m[k] / bio.body.m0[k]).sum::<f32>() / 32.0;
    assert!(avoid_good < avoid_bad && approach_bad < 1.0, "avoid good {avoid_good}, avoid bad {avoid_bad}, approach bad {approach_bad}");
    // Scored again in reverse order and other batch sizes: the same comparisons, every one.
    assert_eq!(measure::rescore_flips(&bio, &m, &held_out, &scores, 7), 0);
}

#[test]
fn with_every_kenyon_cell_passing_the_model_is_the_plain_brain() {
    let (plain, mut bio) = tiny();
    bio.body.pass = KC;
    bio.constants.cut_width = 1e-6;
    // Boards that light some Kenyon cells and leave the rest at 0 (which pass nothing either way):
    // with every cell passing, the cut is the lowest rate (0), so every lit cell passes whole.
    let boards = [board(&[0, 5, 40]), board(&[63]), board(&(10..30).collect::<Vec<_>>())];
    let g = bio.glance(&bio.body.m0, &boards, true);
    let model = g.rates.unwrap();
    let brain = cpu::think_walking(&plain, &boards, false);
    let worst = model.data.iter().zip(&brain.data).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    assert!(worst < 1e-6, "the split model differs from the brain by {worst}");
    assert!(model.at(11, 128, 0) > 0.0 && model.at(11, 128, 2) != model.at(11, 128, 1), "the MBONs are reached, each board its own way");
    // Only the most active pass otherwise: with 3 of 64 passing, the MBONs get less.
    bio.body.pass = 3;
    bio.constants.cut_width = 0.01;
    let sparse = bio.glance(&bio.body.m0, &boards, false);
    assert!(sparse.mbon[2] < g.mbon[2], "board 2 lights 20 cells, only 3 pass: {} vs {}", sparse.mbon[2], g.mbon[2]);
}

#[test]
fn a_game_in_games_mode_doses_and_keeps_every_synapse_in_range() {
    let (_, bio) = tiny();
    let mut m = bio.body.m0.clone();
    let mut opponent = Player::Random(Dice::new(3));
    let g = learn::game(&bio, &mut m, &mut opponent, true, &mut Dice::new(4), 60).unwrap();
    assert!(g.plies > 0 && g.plies <= 60 && g.doses >= 1, "{g:?}");
    assert!(m.iter().zip(&bio.body.m0).all(|(v, m0)| *v >= 0.0 && v <= m0));
    assert_ne!(m, bio.body.m0, "the game's dopamine changed something");
    // A move chosen by the vote from a real position, never repeating when it need not.
    let pos = shakmaty::Chess::default();
    let (moves, votes, i) = bio.choose(&m, &pos, &[]).unwrap();
    assert_eq!((moves.len(), votes.len()), (20, 20));
    assert!(votes.iter().all(|v| *v <= votes[i]));
}

#[test]
fn the_lesson_comic_counts_the_cells_of_each_board_and_the_synapses_each_dopamine_weakens() {
    let (_, bio) = tiny();
    let l = Lesson { good: board(&[1, 2, 3]), bad: board(&[3, 40, 41, 42]) };
    let c = flychess_arena::bio::comic::comic(&bio, &bio.body.m0, &l);
    assert_eq!((c.fire_good, c.fire_bad, c.fire_both), (3, 4, 1), "{c:?}");
    assert!((c.dose - 0.5).abs() < 1e-6, "equal votes: the dose is one half ({})", c.dose);
    // Sugar (PAM) reaches only the avoid MBON, the shock (PPL1) only the approach MBON.
    let approach = c.mbons.iter().find(|m| m.neuron == 128).unwrap();
    let avoid = c.mbons.iter().find(|m| m.neuron == 129).unwrap();
    let m0 = |k: usize| bio.body.m0[k];
    let expect = |cells: &[usize], board: usize| -> f32 {
        let g = bio.glance(&bio.body.m0, &[l.good, l.bad], false);
        cells.iter().map(|&k| -bio.constants.eta * m0(k) * 0.5 * g.kc(k, board)).sum()
    };
    assert!((avoid.change - expect(&[1, 2, 3], 0)).abs() < 1e-6, "{} vs {}", avoid.change, expect(&[1, 2, 3], 0));
    assert!((approach.change - expect(&[3, 40, 41, 42], 1)).abs() < 1e-6);
    assert!(c.kenyon_share > 0.99, "the MBONs hear only Kenyon cells here: {}", c.kenyon_share);
}

#[test]
fn the_silent_cells_pilot_strengthens_only_the_cells_no_lesson_lit() {
    let (_, mut bio) = tiny();
    // A little drive everywhere: unlit cells idle at a small rate, as on the real brain, where the
    // sigmoid cut leaves no r̂ exactly 0 (silent means never above `comic::FIRING`).
    bio.brain.set_params(flychess_brain::brain::Params { beta: 0.01, ..bio.brain.params() });
    let half: Vec<f32> = bio.body.m0.iter().map(|v| v * 0.5).collect();
    // Lessons on squares 0–7 (good) and 56–63 (bad): cells 8–55 stay silent.
    let lessons: Vec<Lesson> = (0..8).map(|i| Lesson { good: board(&[i]), bad: board(&[56 + i]) }).collect();
    let (mut plain, mut berry) = (half.clone(), half.clone());
    learn::tutor(&bio, &mut plain, &lessons, Rule::default());
    learn::tutor(&bio, &mut berry, &lessons, Rule { strengthen_silent: true, ..Rule::default() });
    for e in [KC + 20, KC + 30, 20, 30] {
        assert!(berry[e] > plain[e] && berry[e] <= bio.body.m0[e], "silent cell's synapse {e}: {} vs {}", berry[e], plain[e]);
    }
    for e in [KC + 3, 60] {
        assert_eq!(berry[e], plain[e], "a lit cell's synapse {e} follows the rule as it is");
    }
}

#[test]
fn with_its_own_dopamine_neurons_a_compartment_learns_only_when_they_fire() {
    let (_, bio) = tiny();
    let own = Rule { own_dopamine: true, ..Rule::default() };
    // Good boards on squares 1–7 (the "PAM" cell 0 dark), bad boards on 40–47 (the "PPL1" cell 63
    // dark): no dopamine arrives, so only the slow drift moves anything (nothing: M = M⁰).
    let dark: Vec<Lesson> = (1..8).map(|i| Lesson { good: board(&[i]), bad: board(&[40 + i]) }).collect();
    let mut m = bio.body.m0.clone();
    learn::tutor(&bio, &mut m, &dark, own);
    assert_eq!(m, bio.body.m0, "no dopamine, no change");
    // The same lessons with square 0 lit on the good boards: PAM fires, the avoid MBON's synapses
    // of the good boards' cells weaken, the approach MBON's stay (PPL1 still dark).
    let lit: Vec<Lesson> = (1..8).map(|i| Lesson { good: board(&[0, i]), bad: board(&[40 + i]) }).collect();
    learn::tutor(&bio, &mut m, &lit, own);
    assert!(m[KC + 3] < bio.body.m0[KC + 3] && m[KC] < bio.body.m0[KC], "avoid synapses of lit cells weaken");
    assert_eq!(m[KC + 20], bio.body.m0[KC + 20], "a cell no board lit keeps its synapse");
    assert!((0..KC).all(|e| m[e] == bio.body.m0[e]), "the approach MBON got no PPL1");
    // The connectome's shares alone (the rule as it is) weaken both on the dark lessons.
    let mut plain = bio.body.m0.clone();
    learn::tutor(&bio, &mut plain, &dark, Rule::default());
    assert!(plain[KC + 3] < bio.body.m0[KC + 3] && plain[43] < bio.body.m0[43]);
}

#[test]
fn a_homeostasis_stored_by_an_earlier_arithmetic_is_measured_again() {
    use flychess_brain::calibrate::{self, calibration_boards, fingerprint};
    let (_, bio) = tiny();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.dopamine.homeostasis");
    let boards = calibration_boards();
    let measured = bio.calibrate(&boards, &|_| {});
    // What an earlier version stored for the same brain and constants, under the key it used, its
    // exp a last bit off here and there: the numbers it measured, not this program's.
    let mut earlier = measured.clone();
    for v in earlier.mu.iter_mut().step_by(7) {
        *v = f32::from_bits(v.to_bits() ^ 1);
    }
    let c = &bio.constants;
    let old_key = format!("{} dopamine fly: pass {} width {}", bio.brain_checksum, c.pass_share, c.cut_width);
    calibrate::save(&earlier, &path, &old_key, Default::default()).unwrap();
    let ready = bio.clone().ready(&path, &|_| {}).unwrap();
    assert_ne!(ready.homeostasis, fingerprint(&earlier), "the earlier version's homeostasis was used");
    assert_eq!(ready.homeostasis, fingerprint(&measured));
    // Stored again, under this arithmetic: the next start reads it back.
    let again = bio.clone().ready(&path, &|_| {}).unwrap();
    assert_eq!(again.homeostasis, fingerprint(&measured));
}

/// Two models made from brains that carry the same checksum (hand-made ones can) but are wired
/// differently measure different homeostases, and neither is handed the other's: the arithmetic's
/// fingerprint is kept per model content, not per checksum.
#[test]
fn models_sharing_a_checksum_but_not_their_wiring_keep_their_own_homeostasis() {
    use flychess_brain::calibrate::{calibration_boards, fingerprint};
    let (_, a) = tiny();
    let (_, b) = tiny_with(|k| 0.5 + 0.1 * (k % 5) as f32);
    assert_eq!(a.brain_checksum, b.brain_checksum);
    let boards = calibration_boards();
    let (measured_a, measured_b) = (a.calibrate(&boards, &|_| {}), b.calibrate(&boards, &|_| {}));
    assert_ne!(fingerprint(&measured_a), fingerprint(&measured_b), "the two wirings measure alike: no test");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.dopamine.homeostasis");
    assert_eq!(a.ready(&path, &|_| {}).unwrap().homeostasis, fingerprint(&measured_a));
    // The same file: b must measure its own instead of reading a's back.
    assert_eq!(b.ready(&path, &|_| {}).unwrap().homeostasis, fingerprint(&measured_b), "b was handed a's homeostasis");
}

/// The mushroom body in WGSL (`shaders/mushroom_body.wgsl`, lavapipe in CI): a look on the GPU
/// engine gives the CPU model's votes, MBON rates, sparse Kenyon cells and reading within 1e-4,
/// with the measured strengths and with trained ones, for a batch thought one position an
/// invocation and one cut into two slabs of four-position invocations; and the strengths reach
/// the GPU (trained ones move its votes as they move the CPU's). Every Kenyon cell is driven
/// with its own weight and the boards light 12 to 40 squares, so the cut (the 12th highest rate)
/// falls among distinct rates: a cut one place off shows.
#[test]
fn the_mushroom_body_thinks_on_the_gpu_as_the_cpu_model_does() {
    use flychess_brain::brain::simulator::EngineChoice;
    let (_, on_cpu) = tiny_with(|k| 0.6 + 0.9 * k as f32 / KC as f32);
    let mut on_gpu = on_cpu.clone();
    match on_gpu.think_on(EngineChoice::Gpu) {
        Ok(engine) => eprintln!("{engine}"),
        Err(e) if std::env::var("FLYCHESS_CI").is_ok_and(|v| v == "1") => panic!("{e}"),
        Err(e) => {
            eprintln!("skipping the GPU mushroom body: {e}");
            return;
        }
    }
    assert!(on_gpu.on_gpu() && !on_cpu.on_gpu());
    let mut trained = on_cpu.body.m0.clone();
    for batch in lessons(1, 64 * 5).chunks(64) {
        learn::tutor(&on_cpu, &mut trained, batch, Rule::default());
    }
    let mut dice = Dice::new(7);
    let boards: Vec<Planes> = (0..300)
        .map(|_| {
            let lit = 12 + dice.below(29);
            board(&(0..lit).map(|_| dice.below(64)).collect::<Vec<_>>())
        })
        .collect();
    let worst = |a: &[f32], b: &[f32]| {
        assert_eq!(a.len(), b.len());
        a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0f32, f32::max)
    };
    let mut votes = Vec::new();
    for (what, m) in [("measured", &on_cpu.body.m0), ("trained", &trained)] {
        for batch in [5, 300] {
            let (a, b) =
                (on_cpu.glance_reading(m, &boards[..batch], false, &[130]), on_gpu.glance_reading(m, &boards[..batch], false, &[130]));
            for (part, x, y) in [
                ("votes", &a.vote, &b.vote),
                ("MBONs", &a.mbon, &b.mbon),
                ("Kenyon cells", &a.kenyon, &b.kenyon),
                ("reading", &a.reading, &b.reading),
            ] {
                let d = worst(x, y);
                eprintln!("{what} strengths, batch {batch}: {part} within {d:e}");
                assert!(d <= 1e-4, "{what} strengths, batch {batch}: the GPU's {part} are {d} from the CPU model's");
            }
            assert!(b.kenyon.iter().any(|&h| h > 0.01) && b.mbon.iter().any(|&r| r > 0.01), "the mushroom body is active");
        }
        votes.push(on_gpu.look(m, &boards).vote);
    }
    let moved = worst(&votes[0], &votes[1]);
    assert!(moved > 1e-3, "training moved the GPU's votes by only {moved}: the strengths never reached it");
}
