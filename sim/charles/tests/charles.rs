//! Charles on burn's CPU backend: padding never changes a position's answer, a few steps of
//! training lower the loss on what it trains on, a run stopped at a checkpoint and resumed ends
//! where the run without a stop ends, and a finished run plays (keyed by its weights' content).

use flychess_brain::chess::position_from_fen;
use flychess_charles::run::{self, RunFiles, TrainOptions};
use flychess_charles::{Charles, CharlesConfig, MoveBatch};
use flychess_fly::data::{Dataset, shipped_path};
use flychess_learning::burn_device::FitOn;
use shakmaty::{Chess, Move, Position};

fn tiny() -> CharlesConfig {
    CharlesConfig { d: 16, heads: 2, encoder_layers: 1, decider_layers: 1, ffn: 32 }
}

#[test]
fn padding_never_changes_a_positions_answer() {
    let device = FitOn::Cpu.device().unwrap();
    let model = Charles::new(&tiny(), &device);
    let a = Chess::default();
    let b = position_from_fen("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3").unwrap();
    let (ma, mb): (Vec<Move>, Vec<Move>) = (a.legal_moves().into_iter().collect(), b.legal_moves().into_iter().collect());
    assert!(mb.len() > ma.len(), "b has more moves, so a is padded in the batch");
    let (alone_moves, alone) = run::probabilities(&model, &a, &device).unwrap();
    assert_eq!(alone_moves, ma);
    let batch = MoveBatch::new(&[(&a, ma.as_slice(), &[]), (&b, mb.as_slice(), &[])], &device);
    let p = burn::tensor::activation::softmax(model.logits(&batch), 1).into_data().try_into_vec::<f32>().unwrap();
    let w = batch.width;
    for (k, q) in alone.iter().enumerate() {
        assert!((p[k] - q).abs() < 1e-5, "move {k}: {} alone, {} padded", q, p[k]);
    }
    assert!(p[ma.len()..w].iter().all(|&x| x == 0.0), "padding gets no probability");
    assert!((alone.iter().sum::<f32>() - 1.0).abs() < 1e-5);
}

#[test]
fn training_lowers_the_loss_and_a_resumed_run_ends_where_an_unbroken_one_does() {
    let dataset = Dataset::load(&shipped_path()).unwrap();
    let options = TrainOptions {
        config: tiny(),
        positions: 64,
        epochs: 2,
        batch: 16,
        learning_rate: 3e-3,
        warmup: 2,
        val: 32,
        val_every: 4,
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    // Unbroken.
    let whole = RunFiles::of(dir.path(), "whole");
    let s = run::train(&whole, &dataset, &options, FitOn::Cpu, &|_, _| {}, &|| false).unwrap();
    assert!(s.finished && s.step == 8 && s.curve.len() == 2);
    assert!(s.curve[1].train_loss < s.curve[0].train_loss, "{:?}", s.curve);
    // Stopped after the first checkpoint, then resumed by a second call.
    let broken = RunFiles::of(dir.path(), "broken");
    let calls = std::cell::Cell::new(0);
    let first = run::train(&broken, &dataset, &options, FitOn::Cpu, &|_, _| {}, &|| {
        calls.set(calls.get() + 1);
        calls.get() >= 4
    })
    .unwrap();
    assert!(!first.finished && first.step == 4);
    let resumed = run::train(&broken, &dataset, &options, FitOn::Cpu, &|_, _| {}, &|| false).unwrap();
    assert!(resumed.finished && resumed.step == 8);
    let (a, b) = (s.curve.last().unwrap(), resumed.curve.last().unwrap());
    assert!((a.val_loss - b.val_loss).abs() < 1e-6 && (a.train_loss - b.train_loss).abs() < 1e-6, "{a:?} vs {b:?}");
    // The weights load back and measure the same on VAL.
    let device = FitOn::Cpu.device().unwrap();
    let (model, state) = run::load(&whole, &device).unwrap();
    assert_eq!(state.parameters, model.parameters());
    let val: Vec<run::Prepared> = dataset.val()[..32].iter().map(run::prepare).collect::<Result<_, _>>().unwrap();
    let m = flychess_fly::scoring::summarise(&run::evaluate(&model, &val, 8, &device).unwrap());
    assert!((m.loss - a.val_loss).abs() < 1e-5, "{} vs {}", m.loss, a.val_loss);
}

/// A kill inside a checkpoint, at each place it can land: the run goes on from the record's step
/// with the record's weights, and a record paired with another step's weights is refused, never
/// trained on.
#[test]
fn a_checkpoint_killed_between_its_files_resumes_from_its_record_and_never_pairs_a_record_with_other_weights() {
    let dataset = Dataset::load(&shipped_path()).unwrap();
    let options = TrainOptions {
        config: tiny(),
        positions: 64,
        epochs: 1,
        batch: 16,
        learning_rate: 3e-3,
        warmup: 1,
        val: 16,
        val_every: 2,
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let whole = RunFiles::of(dir.path(), "whole");
    let reference = run::train(&whole, &dataset, &options, FitOn::Cpu, &|_, _| {}, &|| false).unwrap();
    let stopped_at_first_checkpoint = |name: &str| {
        let files = RunFiles::of(dir.path(), name);
        let calls = std::cell::Cell::new(0);
        let s = run::train(&files, &dataset, &options, FitOn::Cpu, &|_, _| {}, &|| {
            calls.set(calls.get() + 1);
            calls.get() >= 2
        })
        .unwrap();
        assert_eq!(s.step, 2);
        files
    };
    let ends_as_the_reference = |files: &RunFiles| {
        let s = run::train(files, &dataset, &options, FitOn::Cpu, &|_, _| {}, &|| false).unwrap();
        let strip = |c: &[run::Point]| c.iter().map(|p| (p.step, p.train_loss.to_bits(), p.val_loss.to_bits())).collect::<Vec<_>>();
        assert_eq!(strip(&s.curve), strip(&reference.curve), "{}", files.dir.display());
    };
    let later_weights = |files: &RunFiles, to: &str| {
        std::fs::copy(whole.model(), files.dir.join(to)).unwrap();
    };
    // Killed after the next checkpoint's weights were written, before its record: they wait
    // unnamed and are dropped.
    let a = stopped_at_first_checkpoint("a");
    later_weights(&a, "model.next.bpk");
    later_weights(&a, "optimiser.next.bpk");
    ends_as_the_reference(&a);
    assert!(!a.dir.join("model.next.bpk").exists());
    // Killed after the record, before the files took their places: the move is finished.
    let b = stopped_at_first_checkpoint("b");
    std::fs::rename(b.model(), b.dir.join("model.next.bpk")).unwrap();
    ends_as_the_reference(&b);
    // A record beside another step's weights (what writing the weights in place before the record
    // left after a kill): refused, naming the file.
    let c = stopped_at_first_checkpoint("c");
    later_weights(&c, "model.bpk");
    let e = run::train(&c, &dataset, &options, FitOn::Cpu, &|_, _| {}, &|| false).unwrap_err().to_string();
    assert!(e.contains("model.bpk") && e.contains("not the weights"), "{e}");
    let device = FitOn::Cpu.device().unwrap();
    assert!(run::load(&c, &device).is_err(), "loaded to play with another step's weights");
}

#[test]
fn the_seeds_size_is_its_parameter_count() {
    // 32,537,088 in the seed; ours differs by the attention biases burn's layers carry.
    let device = FitOn::Cpu.device().unwrap();
    let n = Charles::new(&CharlesConfig::seed(), &device).parameters();
    assert!((32_000_000..33_500_000).contains(&n), "{n}");
}

#[test]
fn a_finished_run_plays_under_an_id_of_its_weights_and_an_unfinished_one_does_not() {
    use flychess_arena::network::{Network, NoNetworks, run_name};
    use flychess_arena::play::play_game;
    use flychess_arena::players::Player;
    use flychess_arena::players::{Lookup, named};
    use flychess_charles::player::{self, Runs, Trained};
    use flychess_fly::stats::Dice;
    let dataset = Dataset::load(&shipped_path()).unwrap();
    let options =
        TrainOptions { config: tiny(), positions: 32, epochs: 1, batch: 16, warmup: 1, val: 16, val_every: 1, ..Default::default() };
    let data = tempfile::tempdir().unwrap();
    // Stopped after its first checkpoint: it cannot play yet, and is not listed.
    let c = run::train(&RunFiles::of(data.path(), "mine"), &dataset, &options, FitOn::Cpu, &|_, _| {}, &|| true).unwrap();
    assert!(!c.finished);
    let unfinished = Trained::load("mine", data.path()).unwrap_err().to_string();
    assert!(unfinished.contains("not finished"), "{unfinished}");
    assert!(!player::list(data.path()).contains(&"mine".to_string()), "an unfinished run is not listed");
    run::train(&RunFiles::of(data.path(), "mine"), &dataset, &options, FitOn::Cpu, &|_, _| {}, &|| false).unwrap();
    let other = TrainOptions { seed: 2, ..options.clone() };
    run::train(&RunFiles::of(data.path(), "other"), &dataset, &other, FitOn::Cpu, &|_, _| {}, &|| false).unwrap();
    let listed = player::list(data.path());
    assert!(listed.contains(&"mine".to_string()) && listed.contains(&"other".to_string()), "{listed:?}");
    assert_eq!((run_name("charles"), run_name("charles:other"), run_name("charlie")), (Some("charles"), Some("other"), None));
    let charles = Trained::load("mine", data.path()).unwrap();
    // Keyed by content: the same weights under another name are the same player, other weights
    // are not.
    let copy = data.path().join("charles").join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    for f in ["model.bpk", "state.json"] {
        std::fs::copy(data.path().join("charles/mine").join(f), copy.join(f)).unwrap();
    }
    assert_eq!(Trained::load("copy", data.path()).unwrap().id, charles.id);
    assert_ne!(Trained::load("other", data.path()).unwrap().id, charles.id);
    assert_eq!(charles.player_name(), "charles:mine");
    // Seated by name in the arena through the runs' `Networks`, as every front door seats it;
    // without them (an arena built without burn) the name is refused, saying why.
    let (entrant, _) = named("charles:mine", &Lookup::in_folder(data.path(), &Runs)).unwrap();
    assert_eq!((entrant.name(), entrant.id()), ("charles:mine".to_string(), charles.id.clone()));
    let refused = named("charles:mine", &Lookup::in_folder(data.path(), &NoNetworks)).err().expect("refused").to_string();
    assert!(refused.contains("without network players"), "{refused}");
    // It plays what its weights say (the same numbers as the training side's evaluation).
    let pos = Chess::default();
    let p = charles.policy(&pos).unwrap();
    let device = FitOn::Cpu.device().unwrap();
    let (model, _) = run::load(&RunFiles::of(data.path(), "mine"), &device).unwrap();
    let (moves, q) = run::probabilities(&model, &pos, &device).unwrap();
    assert_eq!(p.moves, moves);
    assert!(p.probability.iter().zip(&q).all(|(a, b)| (a - b).abs() < 1e-6));
    // Its favourite, unless that brings back an earlier position.
    let favourite = (0..p.moves.len()).max_by(|&a, &b| p.probability[a].total_cmp(&p.probability[b])).unwrap();
    assert_eq!(charles.choose(&pos, &[]).unwrap().1, favourite);
    let mut after = pos.clone();
    after.play_unchecked(p.moves[favourite]);
    let (_, avoided) = charles.choose(&pos, &[flychess_fly::readout::position_key(&after)]).unwrap();
    assert_ne!(avoided, favourite);
    // A whole game against the random mover, by the rules.
    let mut c = Player::Charles(&charles);
    let mut r = Player::Random(Dice::new(1));
    let game = play_game(&mut c, &mut r, Chess::default(), 60).unwrap();
    assert!(!game.san.is_empty() && game.san.len() <= 60, "{}", game.san.len());
}

/// A run's name is gone on or left alone: asked to train with other settings, or with its record
/// damaged, training refuses, naming why and the file, and leaves the earlier run's files as they
/// were (it used to start over silently and write its first checkpoint over them).
#[test]
fn a_run_with_other_settings_or_a_damaged_record_is_refused_and_left_as_it_was() {
    let dataset = Dataset::load(&shipped_path()).unwrap();
    let options =
        TrainOptions { config: tiny(), positions: 32, epochs: 1, batch: 16, warmup: 1, val: 16, val_every: 1, ..Default::default() };
    let data = tempfile::tempdir().unwrap();
    let files = RunFiles::of(data.path(), "mine");
    run::train(&files, &dataset, &options, FitOn::Cpu, &|_, _| {}, &|| false).unwrap();
    let snapshot = || ["model.bpk", "state.json"].map(|f| std::fs::read(files.dir.join(f)).unwrap());
    let before = snapshot();
    let other = TrainOptions { seed: 2, ..options.clone() };
    let e = run::train(&files, &dataset, &other, FitOn::Cpu, &|_, _| {}, &|| false).unwrap_err().to_string();
    assert!(e.contains("other settings") && e.contains("mine"), "{e}");
    assert_eq!(snapshot(), before, "the earlier run's files are as they were");
    let mut damaged = before[1].clone();
    damaged.truncate(damaged.len() / 2);
    std::fs::write(files.state(), &damaged).unwrap();
    let e = run::train(&files, &dataset, &options, FitOn::Cpu, &|_, _| {}, &|| false).unwrap_err().to_string();
    assert!(e.contains("state.json") && e.contains("not a Charles run's record"), "{e}");
    assert_eq!(std::fs::read(files.model()).unwrap(), before[0], "the weights are as they were");
    assert_eq!(std::fs::read(files.state()).unwrap(), damaged, "the damaged record is left for the user to look at");
}
