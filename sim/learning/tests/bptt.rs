//! Training the brain itself: the hand-written backward pass against finite differences and
//! burn's autodiff, the tuned brain on the engines, and a run that resumes exactly.

use std::sync::atomic::AtomicBool;

use flychess_brain::brain::cpu;
use flychess_brain::chess::{Planes, planes, position_from_fen};
use flychess_fly::data::{Dataset, Row, shipped_path};
use flychess_fly::scoring::Target;
use flychess_learning::bptt::check::{self, small_brain};
use flychess_learning::bptt::run::{self, BrainOptimizer, Leash, RunOptions, Setup};
use flychess_learning::bptt::{Base, Heads, LearnableF64};

fn rows() -> Vec<Row> {
    Dataset::load(&shipped_path()).unwrap().rows
}

fn positions(rows: &[Row]) -> (Vec<Planes>, Vec<Target>) {
    rows.iter().map(|r| (planes(&position_from_fen(&r.fen).unwrap()), Target::of(r).unwrap())).unzip()
}

#[test]
fn the_hand_written_gradient_matches_finite_differences_and_burn_for_every_kind() {
    let all = rows();
    let (boards, targets) = positions(&all[4096..4099]);
    let s = small_brain(7);
    let fd = check::against_finite_differences(&s, &boards, &targets, 1e-5);
    assert_eq!(fd.len(), 5);
    for k in &fd {
        assert!(k.largest_gradient > 1e-4, "{} has a gradient to check: {k:?}", k.kind);
        assert!(k.max_relative_error <= 1e-3, "{}: {k:?}", k.kind);
    }
    for window in [6, 12] {
        for k in check::against_burn(&s, &boards, &targets, window).unwrap() {
            assert!(k.max_error_over_largest <= 1e-3, "window {window}, {}: {k:?}", k.kind);
        }
    }
    // The window is real: through 6 steps the gradient differs from the whole one.
    let (p, heads) = (LearnableF64::from(&s.params), Heads::<f64>::of(&s.readout));
    let (six, all12) =
        (check::hand_gradient(&s, &boards, &targets, 6, &p, &heads), check::hand_gradient(&s, &boards, &targets, 12, &p, &heads));
    assert_ne!(six.theta, all12.theta);
    assert_eq!(six.readout_weights, all12.readout_weights);
}

#[test]
fn a_tuned_brain_runs_on_the_engine_as_the_backward_pass_sees_it_and_the_untuned_one_is_untouched() {
    let all = rows();
    let (boards, _) = positions(&all[4096..4100]);
    let mut s = small_brain(3);
    let before = (s.brain.weight.clone(), s.brain.homeostasis().clone(), s.brain.gains().to_vec());
    let base = Base::of(&s.brain);
    base.apply(&base.start(), &mut s.brain);
    assert_eq!(
        (s.brain.weight.clone(), s.brain.homeostasis().clone(), s.brain.gains().to_vec()),
        before,
        "the measured brain, bit for bit"
    );
    base.apply(&s.params, &mut s.brain);
    let model = base.model_of_brain(&s.brain, &s.params);
    let x: Vec<f32> = s.brain.eye_input(&boards);
    assert_eq!(model.forward(&x, boards.len()), cpu::think_walking(&s.brain, &boards, false).data, "the f32 model is the CPU engine");
    assert_eq!(cpu::think(&s.brain, &boards).data, cpu::think_walking(&s.brain, &boards, false).data);
    // The same numbers in f64 give the same rates to f32's precision.
    let m64 = base.model_f64(&s.brain, &LearnableF64::from(&s.params));
    let r64 = m64.forward(&x.iter().map(|&v| v as f64).collect::<Vec<_>>(), boards.len());
    let r32 = model.forward(&x, boards.len());
    let worst = r64.iter().zip(&r32).map(|(a, &b)| (a - b as f64).abs()).fold(0.0, f64::max);
    assert!(worst < 1e-4, "f32 against f64: {worst}");
}

fn options(brain_learns: bool) -> RunOptions {
    let leash = Leash {
        window: 6,
        calm_unreached: false,
        brain_optimizer: BrainOptimizer::Sgd,
        max_change: Some(0.2),
        lr_synapses: 0.05,
        lr_neurons: 0.05,
        lr_readout: 1e-2,
    };
    RunOptions { leash: if brain_learns { leash } else { leash.readout_only() }, positions: 48, batch: 8, val_every: 16, val: 24, seed: 5 }
}

#[test]
fn a_brain_run_learns_keeps_its_leash_and_resumes_exactly() {
    let all = rows();
    let (train, val) = (&all[6144..6400], &all[4096..4200]);
    let s = small_brain(11);
    let mut brain = s.brain.clone();
    let base = Base::of(&brain);
    let dir = tempfile::tempdir().unwrap();
    let go = |stem: &str, brain: &mut flychess_brain::brain::Brain, stop_after: Option<usize>, o: &RunOptions| {
        let stop = AtomicBool::new(false);
        let setup = s.run_setup(&base, brain, train, val);
        run::run(setup, o, &dir.path().join(stem), &stop, &|done, _, _| {
            if stop_after.is_some_and(|a| done >= a) {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        })
        .unwrap()
    };
    let o = options(true);
    let straight = go("straight", &mut brain, None, &o);
    assert!(straight.finished);
    assert_eq!(straight.curve.len(), 4, "VAL at 0, 16, 32, 48");
    // The brain moved, and every θ stayed within 20 % of its measured strength.
    let moved = straight.last.brain.theta.iter().zip(&base.theta0).filter(|(a, b)| a != b).count();
    assert!(moved > straight.last.brain.theta.len() / 2, "{moved} connections moved");
    for (t, w0) in straight.last.brain.theta.iter().zip(&base.weight0) {
        let s = flychess_learning::bptt::softplus(*t as f64);
        assert!(s <= 1.2 * w0.abs() as f64 * (1.0 + 1e-5) && s >= 0.8 * w0.abs() as f64 * (1.0 - 1e-5), "{s} against {w0}");
    }
    assert_ne!(straight.last.brain.alpha, base.start().alpha);
    // Stopped after the first checkpoint and run again: the same end, bit for bit.
    let partial = go("resumed", &mut brain, Some(16), &o);
    assert!(!partial.finished);
    // A kill between a point and its checkpoint (as earlier versions wrote them: the point first)
    // leaves a point in the curve file that the checkpoint does not hold: the resumed run must not
    // keep it beside its own.
    let curve_file = dir.path().join("resumed.jsonl");
    let mut text = std::fs::read_to_string(&curve_file).unwrap();
    let stray = text.lines().last().unwrap().replace("\"positions\":16", "\"positions\":32");
    text.push_str(&format!("{stray}\n"));
    std::fs::write(&curve_file, text).unwrap();
    let resumed = go("resumed", &mut brain, None, &o);
    let kept: Vec<usize> = run::read_curve(&dir.path().join("resumed")).iter().map(|p| p.positions).collect();
    assert_eq!(kept, [0, 16, 32, 48], "the curve file is the checkpoint's curve, each point once");
    assert_eq!(resumed.last, straight.last);
    // (the points before the stop come back from the checkpoint's JSON, to its precision)
    assert_eq!(resumed.curve.len(), straight.curve.len());
    for (a, b) in resumed.curve.iter().zip(&straight.curve) {
        assert!((a.val.loss - b.val.loss).abs() < 1e-12 && a.val.top1 == b.val.top1 && a.positions == b.positions, "{a:?} against {b:?}");
    }
    assert!(straight.curve[3].val.loss < straight.curve[0].val.loss, "the run learned: {:?}", straight.curve);
    // Another leash under the same name is refused, not mixed in.
    let other = RunOptions { seed: 6, ..o.clone() };
    let setup = s.run_setup(&base, &mut brain, train, val);
    assert!(run::run(setup, &other, &dir.path().join("straight"), &AtomicBool::new(false), &|_, _, _| {}).is_err());
    // The readout-only control leaves the brain as measured.
    let control = go("control", &mut brain, None, &options(false));
    assert_eq!(control.last.brain, base.start());
    assert_ne!(control.last.readout, s.readout);
}

#[test]
fn a_checkpoint_whose_arrays_are_not_this_runs_shape_is_refused_before_a_resumed_run_uses_it() {
    use flychess_brain::container;
    let all = rows();
    let s = small_brain(17);
    let mut brain = s.brain.clone();
    let base = Base::of(&brain);
    let dir = tempfile::tempdir().unwrap();
    let stem = dir.path().join("run");
    let o = RunOptions { leash: Leash { brain_optimizer: BrainOptimizer::Adam, ..options(true).leash }, positions: 16, ..options(true) };
    let setup = s.run_setup(&base, &mut brain, &all[6144..6400], &all[4096..4120]);
    run::run(setup, &o, &stem, &AtomicBool::new(false), &|_, _, _| {}).unwrap();
    let path = run::checkpoint_path(&stem);
    let (done, curve) = run::read_checkpoint(&path, &base, &s.readout).unwrap();
    assert_eq!((done, curve.len()), (16, 2));
    let (magic, version) = (b"FLYBPTT1", 1);
    let (header, body): (serde_json::Value, Vec<u8>) = container::read(&path, magic, version, "checkpoint").unwrap();
    let lengths: Vec<usize> = serde_json::from_value(header["lengths"].clone()).unwrap();
    // One number moved from the current state's β to the readout's first moment: the same sum and
    // the same body, but a β one short (a resumed run's update would copy into it and panic).
    let mut shifted = lengths.clone();
    shifted[4] -= 1;
    shifted[10] += 1;
    // A body that unpacks to far more than the arrays hold.
    let bomb = zstd::encode_all(&vec![0u8; 64 << 20][..], 19).unwrap();
    for (what, lengths, body) in [("shifted lengths", shifted, body.clone()), ("an oversized body", lengths, bomb)] {
        let mut h = header.clone();
        h["lengths"] = serde_json::to_value(&lengths).unwrap();
        container::write(&path, magic, version, &h, &body).unwrap();
        let e = run::read_checkpoint(&path, &base, &s.readout).expect_err(what).to_string();
        assert!(e.contains("run.ckpt"), "{what}: {e}");
    }
}

/// A GPU device (Mesa's lavapipe on a machine without a GPU, which CI installs); elsewhere a
/// machine without any adapter skips the GPU's comparison, saying so.
fn device_or_skip() -> Option<flychess_brain::brain::gpu::Device> {
    match flychess_brain::brain::gpu::headless_device() {
        Ok(d) => Some(d),
        Err(e) if std::env::var_os("FLYCHESS_CI").is_some() => panic!("CI installs Mesa's lavapipe: {e}"),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

#[test]
fn the_gpu_backward_pass_gives_the_cpu_mirror_s_gradient() {
    use flychess_learning::bptt::{Forward, Reader, gpu::GpuBackward, gradient};
    let all = rows();
    let s = small_brain(5);
    let mut brain = s.brain.clone();
    let base = Base::of(&brain);
    base.apply(&s.params, &mut brain);
    let Some(device) = device_or_skip() else { return };
    let gpu = GpuBackward::new(device, &brain, &base).unwrap();
    for (batch, window) in [(3usize, 6usize), (8, 12), (5, 1)] {
        let (boards, targets) = positions(&all[4096..4096 + batch]);
        let model = base.model_of_brain(&brain, &s.params);
        let x = brain.eye_input(&boards);
        let rates = cpu::think_walking(&brain, &boards, false).data;
        let heads = Heads::<f32>::of(&s.readout);
        let reader = Reader { descending: &s.descending, steps: &s.read_steps };
        let on_cpu = gradient(&model, &x, &rates, batch, &heads, &reader, &targets, window, false);
        let on_gpu = gpu.gradient(&model, Forward { x: &x, rates: &rates, batch }, &heads, &reader, &targets, window).unwrap();
        for (kind, a, b) in [("θ", &on_gpu.theta, &on_cpu.theta), ("α", &on_gpu.alpha, &on_cpu.alpha), ("β", &on_gpu.beta, &on_cpu.beta)]
        {
            let largest = b.iter().fold(0f32, |m, g| m.max(g.abs()));
            let worst = a.iter().zip(b.iter()).map(|(x, y)| (x - y).abs()).fold(0f32, f32::max);
            assert!(largest > 0.0, "batch {batch}, window {window}: {kind} has a gradient");
            assert!(worst <= 1e-4 * largest, "batch {batch}, window {window}, {kind}: {worst} against {largest}");
        }
        assert_eq!(on_gpu.readout_weights, on_cpu.readout_weights, "the readout's part is the CPU's");
    }
}

#[test]
fn a_brain_run_on_the_gpu_follows_the_cpu_run() {
    let all = rows();
    let (train, val) = (&all[6144..6400], &all[4096..4200]);
    let s = small_brain(13);
    let base = Base::of(&s.brain);
    let dir = tempfile::tempdir().unwrap();
    let o = RunOptions { positions: 24, ..options(true) };
    let Some(device) = device_or_skip() else { return };
    let mut trainer = flychess_learning::bptt::gpu::GpuTrainer::new(device, &s.brain, &base).unwrap();
    let mut outcomes = Vec::new();
    for (stem, gpu) in [("cpu", None), ("gpu", Some(&mut trainer))] {
        let mut brain = s.brain.clone();
        let setup = Setup { gpu, ..s.run_setup(&base, &mut brain, train, val) };
        outcomes.push(run::run(setup, &o, &dir.path().join(stem), &AtomicBool::new(false), &|_, _, _| {}).unwrap());
    }
    let moved = |o: &run::Outcome| o.last.brain.theta.iter().zip(&base.theta0).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    let apart = outcomes[0].last.brain.theta.iter().zip(&outcomes[1].last.brain.theta).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    assert!(moved(&outcomes[0]) > 0.0 && apart <= 1e-3 * moved(&outcomes[0]), "moved {} on the CPU, {apart} apart", moved(&outcomes[0]));
}
