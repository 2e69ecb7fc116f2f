//! One way to play: the window's think (`Seated::think`, which watches the player decide to show
//! its rates) and `Player::consider` (what the command line, UCI, the ladder, `--watch` and Python
//! play through) choose the same move with the same probabilities and value for every kind of
//! player the window shows: a fly, with imagination, with habituation over a game's history, with
//! two glances, with an aid, a dopamine fly and Charles. The think also keeps what the window
//! shows of each kind (every step's rates, the second glance, the brain at rest for Charles).

use std::path::Path;
use std::sync::Arc;

use shakmaty::{Chess, Position};

use flychess_arena::bio::learn::Rule;
use flychess_arena::bio::{BioBrain, Constants, MushroomBody, file::DopamineFly};
use flychess_arena::glances::{Among, Glances};
use flychess_arena::habituation::Habituation;
use flychess_arena::network::{Network, NoNetworks};
use flychess_arena::players::{Considered, Entrant, Kit, Lookup, Player, Seated, Seating, Venue};
use flychess_arena::search::Aid;
use flychess_arena::thinking::{Asked, Thought};
use flychess_brain::brain::{Brain, STEPS};
use flychess_brain::chess::position_from_fen;
use flychess_brain::eye::{EyeCell, EyeRole};
use flychess_fly::cache::Reading;
use flychess_fly::fly::{Fly, FlyMeta};
use flychess_fly::readout::{Policy, Readout, position_key};

/// A network that plays like Charles: a fixed preference by each move's place in the list.
#[derive(Debug)]
struct LikeCharles;

impl Network for LikeCharles {
    fn id(&self) -> &str {
        "like-charles"
    }
    fn player_name(&self) -> &str {
        "charles"
    }
    fn policy(&self, pos: &Chess) -> flychess_arena::Result<Policy> {
        let moves: Vec<shakmaty::Move> = pos.legal_moves().into_iter().collect();
        let weight: Vec<f32> = (0..moves.len()).map(|i| 1.0 + ((i * 7) % 5) as f32).collect();
        let total: f32 = weight.iter().sum();
        Ok(Policy { moves, probability: weight.iter().map(|w| w / total).collect(), value: 0.0 })
    }
}

fn fly(readout: Readout) -> Fly {
    let meta = FlyMeta {
        name: "small".into(),
        kind: "newborn".into(),
        brain: "small".into(),
        brain_checksum: "small".into(),
        homeostasis: "h".into(),
        reading: Reading::Mean9To12,
        data: "d".into(),
        train_positions: 0,
        val: None,
        hold: None,
        created: "2026-01-01".into(),
        teacher: None,
        positions_by_teacher: None,
    };
    Fly { meta, readout }
}

/// A mushroom body on 64 eye cells (an own piece on each square), each driving one Kenyon cell
/// onto an approach and an avoid MBON (`tests/bio.rs`'s tiny model, without its dopamine wiring).
fn tiny_mushroom_body() -> BioBrain {
    let (n, kc) = (131usize, 64usize);
    let eye: Vec<EyeCell> = (0..64).map(|s| EyeCell { neuron: s as u32, square: s as u8, role: EyeRole::Own }).collect();
    let mut rows: Vec<Vec<(u32, f32)>> = vec![Vec::new(); n];
    for k in 0..kc {
        rows[64 + k].push((k as u32, 1.0));
    }
    rows[130] = vec![(128, 0.5), (129, -0.5)];
    let mut row_start = vec![0u32];
    let (mut pre, mut w) = (Vec::new(), Vec::new());
    for r in &rows {
        for &(p, x) in r {
            pre.push(p);
            w.push(x);
        }
        row_start.push(pre.len() as u32);
    }
    let mut brain = Brain::from_parts(n, row_start, pre, w, eye);
    brain.set_params(flychess_brain::brain::Params { beta: 0.0, ..brain.params() });
    let m0 = |k: usize| 0.05 + 0.001 * ((k * 37) % 64) as f32;
    let body = MushroomBody {
        kenyon: (64..64 + kc as u32).collect(),
        mbon: vec![128, 129],
        valence: vec![1.0, -1.0],
        rho_pam: vec![0.0, 1.0],
        rho_ppl1: vec![1.0, 0.0],
        edge_start: vec![0, kc as u32, 2 * kc as u32],
        edge_kc: (0..kc as u32).chain(0..kc as u32).collect(),
        m0: (0..kc).map(m0).chain((0..kc).map(|k| m0(k + 11))).collect(),
        pass: 12,
        dopamine: Vec::new(),
        dopamine_inputs: Vec::new(),
    };
    BioBrain {
        brain,
        body,
        constants: Constants::default(),
        descending: vec![130],
        brain_checksum: "tiny".into(),
        homeostasis: "neutral".into(),
        gpu: None,
    }
}

/// Every player the test seats, on one kit of the small brain.
struct Field {
    kit: Arc<Kit>,
    fly: Fly,
    dopamine: DopamineFly,
    baseline: Arc<Vec<f32>>,
}

fn field(data: &Path) -> Field {
    let small = flychess_learning::bptt::check::small_brain(5);
    let brain = Arc::new(small.brain);
    let baseline = Arc::new(flychess_brain::brain::cpu::think(&brain, &[[[false; 64]; 12]]).data);
    let fly = fly(Readout::newborn(small.descending.len(), small.read_steps.clone(), 11));
    let bio = Arc::new(tiny_mushroom_body());
    let dopamine = DopamineFly::newborn("smell", &bio, "tiny", Rule::default(), "tutor", 3);
    let no_body = |_: Constants| -> flychess_arena::Result<Arc<BioBrain>> { unreachable!("the kit is given its mushroom body") };
    let venue = Venue { brain: &brain, descending: &small.descending, mushroom_body: &no_body };
    let at = Lookup::in_folder(data, &NoNetworks).of_brain("small", Some(venue));
    let entrants = vec![
        Entrant::fly(&fly, None),
        Entrant::fly(&fly, Some(0.5)),
        Entrant::fly_with(&fly, None, Some(habituation())),
        Entrant::fly_with(&fly, Some(0.5), Some(habituation())),
        Entrant::glancing(&fly, glances()),
        Entrant::aided(Entrant::fly(&fly, None), Aid::Judge { weight: 1.0 }, None).unwrap(),
        Entrant::aided(Entrant::fly(&fly, None), Aid::Search { simulations: 12 }, None).unwrap(),
    ];
    let kit = Seating::new(&at)
        .with_flies(&[(fly.clone(), entrants)])
        .with_charles(&[Arc::new(LikeCharles) as Arc<dyn Network>])
        .with_dopamine(bio, std::slice::from_ref(&dopamine))
        .unwrap()
        .kit();
    Field { kit: Arc::new(kit), fly, dopamine, baseline }
}

fn habituation() -> Habituation {
    Habituation { decay: 0.95, weight: 40.0 }
}

fn glances() -> Glances {
    Glances { gain: 3.0, among: Among::All }
}

fn positions() -> Vec<Chess> {
    [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 b - - 0 7",
        "8/5k2/3p4/1p1Pp2p/pP2Pp1P/P4P1K/8/8 b - - 99 50",
        // A queen on a square the small brain's eye sees (d4; d5 in black's flipped view): two
        // glances look at it again with more drive, and the second look differs.
        "k7/8/8/8/3Q4/8/8/K7 w - - 0 1",
        "k7/8/8/3q4/8/8/8/K7 b - - 0 1",
    ]
    .iter()
    .map(|f| position_from_fen(f).unwrap())
    .collect()
}

/// The window's think of `seat` in `pos` (with `imagination` asked for, and the game's `history`).
fn window(f: &Field, seat: &Seated, pos: &Chess, earlier: &[u64], imagination: Option<f32>, history: &[Chess]) -> Thought {
    let asked = Asked { id: 1, position: pos, earlier, imagination, history };
    seat.think(&f.baseline, &asked, None).expect("the window shows this player's think")
}

/// The same move, probabilities and value from both ways; two glances show their first look and
/// consider the second.
fn same(kind: &str, thought: &Thought, considered: &Considered) {
    assert_eq!(thought.chosen, considered.chosen, "{kind}: the window's move is the one it plays everywhere");
    let decided = thought.second_glance.as_ref().map_or(thought, |s| &s.thought);
    assert_eq!(decided.policy.moves, considered.moves, "{kind}");
    assert_eq!(decided.policy.probability, considered.probability, "{kind}: the same probabilities");
    assert_eq!(decided.value, considered.value.unwrap_or(0.0), "{kind}: the same value");
}

#[test]
fn the_windows_think_and_consider_choose_the_same_move_and_probabilities_for_every_kind_of_player() {
    let data = tempfile::tempdir().unwrap();
    let f = field(data.path());
    let seat = |entrant: Entrant| Seated { entrant, kit: f.kit.clone() };
    let neurons = f.kit.brain().unwrap().neurons;
    let plain = seat(Entrant::fly(&f.fly, None));
    let kinds = [
        ("fly", plain.clone()),
        ("two glances", seat(Entrant::glancing(&f.fly, glances()))),
        ("a judge", seat(Entrant::aided(Entrant::fly(&f.fly, None), Aid::Judge { weight: 1.0 }, None).unwrap())),
        ("a search", seat(Entrant::aided(Entrant::fly(&f.fly, None), Aid::Search { simulations: 12 }, None).unwrap())),
        ("dopamine", seat(Entrant::dopamine(&f.dopamine))),
        ("charles", seat(Entrant::charles(&LikeCharles))),
    ];
    let mut glanced_differently = false;
    for pos in positions() {
        // The game came here through the board after the fly's favourite: the repetition rule applies.
        let favourite = plain.player(0, 1, &None).unwrap().consider(&pos, &[]).unwrap().chosen;
        let mut after = pos.clone();
        after.play_unchecked(favourite);
        for earlier in [vec![position_key(&pos)], vec![position_key(&after), position_key(&pos)]] {
            for (kind, seated) in &kinds {
                let thought = window(&f, seated, &pos, &earlier, None, &[]);
                let considered = seated.player(0, 1, &None).unwrap().consider(&pos, &earlier).unwrap();
                same(kind, &thought, &considered);
                assert!(thought.expects.is_some() == !matches!(*kind, "dopamine"), "{kind}: what it expects next");
                match *kind {
                    "charles" => assert!(Arc::ptr_eq(&thought.rates, &f.baseline), "Charles shows the brain at rest"),
                    "dopamine" => assert_eq!(thought.rates.len(), STEPS * thought.neurons, "its smell's rates"),
                    _ => assert_eq!(thought.rates.len(), STEPS * neurons, "{kind}: every step's rates of the first look"),
                }
                let second = thought.second_glance.as_ref().map(|s| s.thought.rates.len());
                assert_eq!(second, (*kind == "two glances").then_some(STEPS * neurons), "{kind}: the second glance's rates");
                glanced_differently |=
                    thought.second_glance.as_ref().is_some_and(|s| s.thought.policy.probability != thought.policy.probability);
            }
            // Imagination: the window's switch on the plain fly plays as the fly seated with it does.
            let thought = window(&f, &plain, &pos, &earlier, Some(0.5), &[]);
            let considered = seat(Entrant::fly(&f.fly, Some(0.5))).player(0, 1, &None).unwrap().consider(&pos, &earlier).unwrap();
            same("imagination", &thought, &considered);
        }
    }
    assert!(glanced_differently, "the second glance never saw more than the first: the test would not tell them apart");
}

/// Habituation follows the game's history in the window (a game there can be taken back) and
/// the moves the player made itself everywhere else: over a game the two choose alike, and the
/// memory changes the fly's moves.
#[test]
fn a_fly_with_habituation_chooses_alike_from_the_games_history_and_from_its_own_memory() {
    let data = tempfile::tempdir().unwrap();
    let f = field(data.path());
    for imagination in [None, Some(0.5)] {
        let habituated = Seated { entrant: Entrant::fly_with(&f.fly, imagination, Some(habituation())), kit: f.kit.clone() };
        let plain = Seated { entrant: Entrant::fly(&f.fly, imagination), kit: f.kit.clone() };
        let mut player = habituated.player(0, 1, &None).unwrap();
        let mut opponent = Player::new(&Entrant::Random, None, 0, 7, &None).unwrap();
        let mut history = vec![Chess::default()];
        let mut keys = vec![position_key(&history[0])];
        let mut differs = 0;
        for ply in 0..24 {
            let pos = history.last().unwrap().clone();
            if pos.legal_moves().is_empty() {
                break;
            }
            let chosen = if ply % 2 == 0 {
                // The window seats the fly without imagination and asks for it by its weight.
                let window_seat = Seated { entrant: Entrant::fly_with(&f.fly, None, Some(habituation())), kit: f.kit.clone() };
                let thought = window(&f, &window_seat, &pos, &keys, imagination, &history);
                let considered = player.consider(&pos, &keys).unwrap();
                same("habituation", &thought, &considered);
                let unhabituated = plain.player(0, 1, &None).unwrap().consider(&pos, &keys).unwrap().chosen;
                differs += usize::from(unhabituated != considered.chosen);
                considered.chosen
            } else {
                opponent.choose(&pos, &keys).unwrap()
            };
            let mut next = pos;
            next.play_unchecked(chosen);
            keys.push(position_key(&next));
            history.push(next);
        }
        assert!(differs > 0, "habituation never changed a move ({imagination:?}): the test would not see it");
    }
}
