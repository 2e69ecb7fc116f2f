//! The Train and Flies tabs driven through the real UI: a run started from the tab trains for
//! real (the DN-rate cache of the shared default brain, the fit) and its curve fills in; a run
//! written by someone else (the CLI) appears by its metrics file alone; flies are renamed and
//! deleted from the Flies tab, and a lab fly is built with one click.
// Tests may touch files, threads and processes; app/clippy.toml forbids them to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use egui_kittest::kittest::Queryable;

use common::*;
use flychess_fly::scoring::Metrics;
use flychess_lab::lab::{Command, FlyAction};
use flychess_learning::train::PassRecord;
use flychess_window::ui::Tab;

#[test]
fn a_metrics_file_written_outside_the_app_shows_up_as_a_curve() {
    let data = data();
    let name = format!("outside-{}", std::process::id());
    let dir = flychess_brain::files::DataFolder::at(&data).runs().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    let lines: Vec<String> = (1..=3)
        .map(|pass| {
            let val =
                Metrics { loss: 3.5 - 0.1 * pass as f64, policy_loss: 3.0, top1: 0.1 + 0.01 * pass as f64, good: 0.2, positions: 2048 };
            serde_json::to_string(&PassRecord { pass, train_loss: 3.4, val, learning_rate: 2e-3, improved: true, seconds: 1.0 }).unwrap()
        })
        .collect();
    std::fs::write(dir.join("metrics.jsonl"), lines.join("\n") + "\n").unwrap();
    let mut h = harness(&data);
    app_mut(&mut h).tab = Tab::Train;
    // The runs are read aside: the curve appears within a few frames.
    wait(&mut h, "the run's curve", |a| a.train.runs.iter().any(|r| r.name == name));
    h.step();
    let run = app(&h).train.runs.iter().find(|r| r.name == name).expect("the run is listed");
    assert_eq!(run.passes.len(), 3);
    assert!((run.passes[2].val.loss - 3.2).abs() < 1e-9);
    assert!(h.query_by_label(&format!("{name} (3 passes)")).is_some(), "its toggle is on screen");
    // A pass appended later appears on the next scan.
    let mut more = std::fs::OpenOptions::new().append(true).open(dir.join("metrics.jsonl")).unwrap();
    use std::io::Write;
    let val = Metrics { loss: 3.1, policy_loss: 3.0, top1: 0.14, good: 0.2, positions: 2048 };
    writeln!(
        more,
        "{}",
        serde_json::to_string(&PassRecord { pass: 4, train_loss: 3.3, val, learning_rate: 1e-3, improved: true, seconds: 1.0 }).unwrap()
    )
    .unwrap();
    wait(&mut h, "the fourth pass", |a| a.train.runs.iter().any(|r| r.name == name && r.passes.len() == 4));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_short_run_started_from_the_train_tab_trains_a_fly_with_a_curve() {
    let data = data();
    let mut h = harness(&data);
    app_mut(&mut h).tab = Tab::Train;
    h.step();
    {
        let t = &mut app_mut(&mut h).train;
        t.name = "ui-short-run".into();
        t.positions = 6_144 + 512;
        t.max_passes = 2;
    }
    h.step();
    h.get_by_label("Start training").click();
    h.step();
    assert!(app(&h).train.job.as_ref().is_some_and(|j| j.running()), "the run started");
    // The tab can be left while it runs.
    app_mut(&mut h).tab = Tab::Play;
    h.step();
    wait(&mut h, "the run to finish", |a| a.train.job.as_ref().is_some_and(|j| !j.running()));
    let job = app(&h).train.job.as_ref().unwrap();
    assert!(matches!(job.talk.outcome(), Some(Ok(Some(f))) if f == "ui-short-run"), "{:?}", job.talk.outcome());
    assert!(!job.passes.is_empty() && job.passes.len() <= 2);
    app_mut(&mut h).tab = Tab::Train;
    h.step();
    wait(&mut h, "the curve", |a| a.train.runs.iter().any(|r| r.name == "ui-short-run" && !r.passes.is_empty()));
    // The frame times during the run (reported, never asserted: timing varies with the machine).
    eprintln!("{}", app(&h).frames.summary());
    assert!(app(&h).frames.worst.contains_key("a training run"));
    let run = app(&h).train.runs.iter().find(|r| r.name == "ui-short-run").unwrap();
    let info = run.info.as_ref().expect("run.json");
    assert!(info.finished && info.hold.is_some() && info.blind.is_some());
    let fly = flychess_fly::fly::Fly::load(&flychess_brain::files::DataFolder::at(&data).flies().join("ui-short-run.fly")).unwrap();
    assert_eq!(fly.meta.train_positions, 512);
    wait(&mut h, "the new fly listed", |a| a.lab.flies().iter().any(|f| f == "ui-short-run"));
    assert!(app(&h).lab.playable().iter().any(|f| f == "ui-short-run"), "and offered in the picker (it belongs to the loaded brain)");
    // Watching it learn: the newborn readout, the best after passes 1 and 2 (the fly at the end).
    let snaps: Vec<usize> = flychess_learning::pipeline::snapshots(&data, "ui-short-run").into_iter().map(|(p, _)| p).collect();
    assert_eq!(snaps, vec![0, 1, 2]);
    app_mut(&mut h).train.learn.run = "ui-short-run".into();
    h.step();
    wait(&mut h, "the snapshots' answers", |a| a.train.learn.settled());
    let ready = app(&h).ready().unwrap().clone();
    let answers = flychess_lab::training::answers(&ready, &data, "ui-short-run", flychess_window::ui::learn::AFTER_E4).unwrap();
    assert_eq!(answers.len(), 3);
    assert!(answers[0].val.is_none() && answers[2].val.is_some());
    // A snapshot is the best readout so far: it answers differently from the newborn exactly when
    // a pass improved on VAL.
    let improved = app(&h).train.job.as_ref().unwrap().passes.iter().any(|p| p.improved);
    assert_eq!(answers[0].moves != answers[2].moves, improved, "{:?} / {:?}", &answers[0].moves[..3], &answers[2].moves[..3]);
    assert_eq!(answers[2].moves.len(), 20, "every legal reply to 1.e4 has its probability");
}

#[test]
fn flies_are_renamed_and_deleted_and_a_newborn_lab_fly_is_built_with_a_click() {
    let data = data();
    let mut h = harness(&data);
    let pid = std::process::id();
    let (a, b) = (format!("to-rename-{pid}"), format!("renamed-{pid}"));
    let _ = std::fs::remove_file(flychess_brain::files::DataFolder::at(&data).flies().join("lab-newborn.fly"));
    // A fly on disk to manage: a copy of the shipped one.
    let mut f = flychess_fly::fly::Fly::load(&flychess_fly::fly::shipped_dir().join("backprop.fly")).unwrap();
    f.meta.name = a.clone();
    f.save(&flychess_brain::files::DataFolder::at(&data).flies().join(format!("{a}.fly"))).unwrap();
    {
        let app = app_mut(&mut h);
        // The lab reads the flies on disk on its own thread: ask, and wait for the listing.
        app.lab.command(Command::ReadFlies);
        app.tab = Tab::Flies;
    }
    wait(&mut h, "the fly to manage listed", |app| app.lab.flies().contains(&a));
    // Renaming, deleting and building are lab commands done off the UI thread; the lab says how
    // each went and lists the flies again.
    app_mut(&mut h).lab.command(Command::Fly(FlyAction::Rename { from: a.clone(), to: b.clone() }));
    wait(&mut h, "the renamed fly listed", |app| app.lab.flies().contains(&b) && !app.lab.flies().contains(&a));
    assert_eq!(app(&h).lab.flies_said(), format!("Renamed {a} to {b}."));
    assert_eq!(
        flychess_fly::fly::Fly::load(&flychess_brain::files::DataFolder::at(&data).flies().join(format!("{b}.fly"))).unwrap().meta.name,
        b
    );
    app_mut(&mut h).lab.command(Command::Fly(FlyAction::Rename { from: b.clone(), to: "bad/name".into() }));
    wait(&mut h, "the bad name refused", |app| app.lab.flies_said().starts_with("Could not rename"));
    assert!(app(&h).lab.flies().contains(&b), "a refused rename keeps the fly");
    h.step();
    // Delete asks twice.
    let row_buttons = h.get_all_by_label("Delete").count();
    assert!(row_buttons >= 1);
    app_mut(&mut h).delete_asked = Some(b.clone());
    h.step();
    h.get_by_label("Really delete?").click();
    h.step();
    wait(&mut h, "the deleted fly gone from the list", |app| !app.lab.flies().contains(&b));
    assert_eq!(app(&h).lab.flies_said(), format!("Deleted {b}."));
    assert!(!flychess_brain::files::DataFolder::at(&data).flies().join(format!("{b}.fly")).exists());
    // The newborn lab fly: one click.
    let build = h.get_all_by_label("Build").next().expect("a Build button");
    build.click();
    h.step();
    wait(&mut h, "the newborn listed", |a| a.lab.flies().iter().any(|f| f == "lab-newborn"));
    assert_eq!(app(&h).lab.flies_said(), "Built lab-newborn.");
    let newborn = flychess_fly::fly::Fly::load(&flychess_brain::files::DataFolder::at(&data).flies().join("lab-newborn.fly")).unwrap();
    assert!(newborn.meta.kind.contains("newborn"));
}

#[test]
fn a_dopamine_run_from_the_train_tab_learns_and_the_brain_tab_shows_a_lesson() {
    use flychess_window::ui::train::RunKind;
    let data = data();
    let name = format!("ui-dopamine-{}", std::process::id());
    let mut h = harness(&data);
    app_mut(&mut h).tab = Tab::Train;
    h.step();
    app_mut(&mut h).train.kind = RunKind::Dopamine;
    h.step();
    {
        let d = &mut app_mut(&mut h).train.dopamine;
        d.name = name.clone();
        d.lessons = 128;
    }
    h.step();
    // The name is looked up aside (is it a readout fly's?); the button waits for the answer.
    wait(&mut h, "the name looked up", |a| a.train.dopamine.read.name_taken.as_ref().is_some_and(|(n, taken)| *n == name && !taken));
    h.step();
    h.get_by_label("Start lessons").click();
    h.step();
    assert!(app(&h).train.dopamine.running(), "the run started");
    wait(&mut h, "the dopamine run to finish", |a| !a.train.dopamine.running());
    let job = app(&h).train.dopamine.job.as_ref().unwrap();
    assert!(matches!(job.talk.outcome(), Some(Ok(t)) if t.contains("after 128 lessons")), "{:?}", job.talk.outcome());
    assert!(job.points.len() >= 2, "a point at the start and one at the end: {}", job.points.len());
    wait(&mut h, "its curve", |a| a.train.dopamine.curves().iter().any(|c| c.name == name && c.lessons == 128 && c.points.len() >= 2));
    let path = flychess_brain::files::DataFolder::at(&data).flies().join(format!("{name}.fly"));
    let fly = flychess_arena::bio::file::DopamineFly::load(&path).unwrap();
    assert_eq!((fly.meta.lessons, fly.meta.kind.as_str()), (128, "dopamine"));
    // Renamed from the Flies tab like any fly: the same strengths under the new name.
    let renamed = format!("{name}-renamed");
    flychess_lab::lab::flies::rename_fly(&data, &name, &renamed).unwrap();
    let moved =
        flychess_arena::bio::file::DopamineFly::load(&flychess_brain::files::DataFolder::at(&data).flies().join(format!("{renamed}.fly")))
            .unwrap();
    assert_eq!((moved.meta.name.as_str(), &moved.m), (renamed.as_str(), &fly.m));
    flychess_lab::lab::flies::rename_fly(&data, &renamed, &name).unwrap();
    // The renames went straight to disk, past the lab: tell it, as the Flies tab does after its
    // own rename (a listing begun when the run finished may have seen the fly under its other
    // name; CI once timed out waiting for a list that nothing asked to be read again).
    app_mut(&mut h).lab.command(Command::ReadFlies);
    // The Brain tab: the position after the fly's reply as a lesson, from inside the mushroom body.
    e4_then_the_brain_tab(&mut h);
    h.get_by_label("Show the lesson").click();
    h.step();
    wait(&mut h, "the lesson", |a| a.brain_view.as_ref().is_some_and(|v| v.lesson.shown.is_some() || !v.lesson.busy()));
    let v = app(&h).brain_view.as_ref().unwrap();
    let shown = v.lesson.shown.as_ref().unwrap_or_else(|| panic!("no lesson: {}", v.lesson.status));
    let c = &shown.comic;
    assert!(c.fire_good > 0 && c.fire_bad > 0 && c.fire_both <= c.fire_good.min(c.fire_bad), "{c:?}");
    assert_eq!(c.mbons.len(), 96, "every MBON of the default brain");
    assert!(c.mbons.iter().all(|m| m.change <= 0.0), "a lesson only weakens");
    assert!(h.query_by_label_contains("Kenyon cells firing").is_some(), "the counts are on screen");
    // Picked as the opponent, it plays: its model is made off the UI thread, then each of its
    // moves is the MBONs' vote over the boards after its legal moves.
    app_mut(&mut h).tab = Tab::Play;
    wait(&mut h, "the listing of the new fly", |a| a.lab.playable().contains(&name));
    {
        let a = app_mut(&mut h);
        a.new_game(flychess_lab::game::Game::default(), shakmaty::Color::White, Some(name.clone()));
    }
    h.step();
    wait(&mut h, "the dopamine fly's model", |a| !a.lab.play().preparing_fly());
    assert!(
        matches!(app(&h).lab.play().fly.as_ref().map(|m| &m.entrant), Some(flychess_arena::players::Entrant::Dopamine { .. })),
        "{}",
        app(&h).lab.play().status()
    );
    drag(&mut h, shakmaty::Square::D2, shakmaty::Square::D4);
    wait(&mut h, "the dopamine fly's answer", |a| a.lab.play().game.plies() == 2);
    let t = app(&h).lab.play().thoughts.get(&1).expect("its think is kept");
    assert_eq!(t.policy.moves.len(), 20);
    assert!((t.policy.probability.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    assert_eq!(t.rates.len(), 12 * t.neurons, "every step of the board it chose, for the viewer");
    std::fs::remove_file(&path).unwrap();
}

/// 1.e4 played in the Play tab, the fly's answer waited for, then the Brain tab showing its think.
fn e4_then_the_brain_tab(h: &mut egui_kittest::Harness<'static, App>) {
    app_mut(h).tab = Tab::Play;
    h.step();
    drag(h, shakmaty::Square::E2, shakmaty::Square::E4);
    wait(h, "the fly's answer", |a| a.lab.play().game.plies() == 2 && a.lab.play().shown_thought().is_some());
    app_mut(h).tab = Tab::Brain;
    h.step();
}

#[test]
fn the_brain_tab_sends_the_error_back_through_the_twelve_steps() {
    // The error is Stockfish's judgement of the position (and a profile's games are scored by it).
    if !stockfish_or_skip() {
        return;
    }
    let data = data();
    let mut h = harness(&data);
    e4_then_the_brain_tab(&mut h);
    h.get_by_label("Send the error back").click();
    h.step();
    wait(&mut h, "the error going back", |a| a.brain_view.as_ref().is_some_and(|v| v.blame.shown.is_some() || !v.blame.busy()));
    let v = app(&h).brain_view.as_ref().unwrap();
    let shown = v.blame.shown.as_ref().unwrap_or_else(|| panic!("no blame: {}", v.blame.status));
    let b = &shown.blame;
    assert!(b.loss.is_finite() && b.loss > 0.0, "{}", b.loss);
    assert_eq!(b.per_step.len(), 12 * b.neurons);
    // At step 12 only the descending neurons the readout reads carry blame; it spreads and grows
    // on its way back.
    let descending = &app(&h).ready().unwrap().connectome.groups.descending;
    let at12: Vec<usize> = (0..b.neurons).filter(|&j| b.per_step[11 * b.neurons + j] != 0.0).collect();
    assert!(!at12.is_empty() && at12.iter().all(|j| descending.contains(&(*j as u32))), "{} neurons blamed at step 12", at12.len());
    let blamed = |t: usize| (0..b.neurons).filter(|&j| b.per_step[t * b.neurons + j] != 0.0).count();
    assert!(blamed(0) > 10 * blamed(11), "step 1: {}, step 12: {}", blamed(0), blamed(11));
    assert!(b.largest[0] > b.largest[11]);
    // Drawn in the cloud instead of the rates, each step scaled to [−1, 1].
    let id = app(&h).lab.play().shown_thought().unwrap().id;
    let drawn = v.blame.drawn_for(id).expect("shown in the cloud");
    assert!(drawn.view.iter().all(|x| x.abs() <= 1.0 + 1e-6) && drawn.view.iter().any(|x| (x.abs() - 1.0).abs() < 1e-6));
    assert!(h.query_by_label_contains("the error going back").is_some(), "the step title says so");
}

#[test]
fn a_brain_run_from_the_train_tab_pauses_resumes_and_draws_beside_its_control() {
    let data = data();
    let mut h = harness(&data);
    let name = format!("ui-brain-{}", std::process::id());
    app_mut(&mut h).tab = Tab::Train;
    app_mut(&mut h).train.kind = flychess_window::ui::train::RunKind::Brain;
    h.step();
    {
        let b = &mut app_mut(&mut h).train.brain_runs;
        b.name = name.clone();
        b.positions = 128;
    }
    h.step();
    h.get_by_label("Train the brain").click();
    h.step();
    assert!(app(&h).train.brain_runs.running(), "the run started");
    h.get_by_label("Pause").click();
    h.step();
    wait(&mut h, "the run to reach its first pause", |a| a.train.brain_runs.job.as_ref().is_some_and(|j| j.stage.contains("positions")));
    let held = app(&h).train.brain_runs.job.as_ref().unwrap().done;
    std::thread::sleep(std::time::Duration::from_millis(4000));
    h.step();
    let job = app(&h).train.brain_runs.job.as_ref().unwrap();
    assert!(job.running() && job.done == held && held < job.target, "paused at {held} of {}: {} now", job.target, job.done);
    assert!(h.query_by_label_contains("(paused)").is_some());
    h.get_by_label("Resume").click();
    h.step();
    wait(&mut h, "the brain run and its control to finish", |a| !a.train.brain_runs.running());
    let job = app(&h).train.brain_runs.job.as_ref().unwrap();
    assert!(
        matches!(job.talk.outcome(), Some(Ok(t)) if t.contains("brain: VAL loss") && t.contains("readout only: VAL loss")),
        "{:?}",
        job.talk.outcome()
    );
    wait(&mut h, "its curves", |a| {
        a.train.brain_runs.curves.iter().any(|c| c.name == name && c.brain.len() == 5 && c.readout_only.len() == 5)
    });
    assert!(h.query_by_label_contains("VAL loss (lower is better)").is_some(), "the plots are on screen");
    std::fs::remove_dir_all(flychess_brain::files::DataFolder::at(&data).runs().join(&name)).unwrap();
}

/// Charles trains from the Train tab as a run kind of its own (its curve read from its record as
/// it goes), then plays from the New game picker: the window's thinker answers with Charles's
/// policy and the brain stays at rest.
#[test]
fn charles_trains_from_the_train_tab_and_then_plays_from_new_game() {
    let data = data();
    // Runs this test left in the shared folder earlier are dropped (a test's leftovers are not a
    // user's runs); the long roster they once made is made on purpose below.
    let runs = flychess_brain::files::DataFolder::at(&data).charles();
    for e in std::fs::read_dir(&runs).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().starts_with("ui-charles-") {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    let name = format!("ui-charles-{}", std::process::id());
    let player = format!("charles:{name}");
    let mut h = harness(&data);
    wait(&mut h, "the brain and the fly", |a| a.ready().is_some() && a.lab.play().fly.is_some());
    app_mut(&mut h).tab = Tab::Train;
    h.step();
    h.get_by_label("Charles (not a fly)").click();
    h.step();
    h.step();
    {
        let c = &mut app_mut(&mut h).train.charles;
        (c.name, c.positions, c.batch, c.val, c.val_every) = (name.clone(), 64, 32, 32, 1);
    }
    // Start waits until the lab has looked for an earlier run of this name (read aside).
    wait(&mut h, "the earlier record looked for", |a| a.train.charles.read.name == name);
    h.get_by_label("Start training Charles").click();
    h.step();
    wait(&mut h, "Charles's run", |a| a.train.charles.job.as_ref().is_some_and(|j| !j.running()));
    let outcome = app(&h).train.charles.job.as_ref().unwrap().talk.outcome().cloned().unwrap();
    assert!(outcome.as_ref().is_ok_and(|t| t.contains("finished after 2 steps")), "{outcome:?}");
    wait(&mut h, "its curve", |a| a.train.charles.read.curves.iter().any(|c| c.name == name && c.points.len() == 2 && c.finished));
    // A researcher's many runs: sixteen copies of this one make the New game roster taller than
    // the window (with a dozen such runs the dialog once grew past the screen, Start could not be
    // clicked and the game never began).
    let copies: Vec<String> = (0..16).map(|i| format!("{name}-copy{i:02}")).collect();
    for copy in &copies {
        copy_dir(&runs.join(&name), &runs.join(copy));
    }
    app_mut(&mut h).lab.command(Command::ReadFlies);
    wait(&mut h, "it joins the players", |a| {
        a.lab.playable().contains(&player) && copies.iter().all(|c| a.lab.playable().contains(&format!("charles:{c}")))
    });
    // New game against it.
    app_mut(&mut h).tab = Tab::Play;
    h.step();
    h.get_by_label("New game").click();
    h.step();
    h.step();
    let entry = format!("Charles — a network that never was a fly ({player}, unrated)");
    h.get_by_label(&entry).scroll_to_me();
    // egui animates the scroll: clicked before it settles, the click lands where the entry was
    // and picks a neighbour (one of the copies; seen in a clean clone, where the game then never
    // loaded this run and the test waited out its limit).
    for _ in 0..60 {
        h.step();
    }
    h.get_by_label(&entry).click();
    h.step();
    let chosen = app(&h).play.new_game.as_ref().map(|g| g.fly.clone());
    assert_eq!(chosen.as_deref(), Some(player.as_str()), "the opponent chosen in New game");
    let screen = h.ctx.content_rect();
    let start = h.get_by_label("Start").rect();
    assert!(screen.contains_rect(start), "Start {start:?} lies on the screen {screen:?} with {} opponents", app(&h).lab.playable().len());
    h.get_by_label("Start").click();
    wait(&mut h, "Charles loaded", |a| a.lab.play().fly.as_ref().is_some_and(|m| m.own_name() == player));
    assert!(app(&h).lab.play().status().contains("never was a fly"), "{}", app(&h).lab.play().status());
    let white = app(&h).lab.play().user == shakmaty::Color::White;
    if white {
        drag(&mut h, shakmaty::Square::E2, shakmaty::Square::E4);
    }
    wait(&mut h, "Charles's move", |a| a.lab.play().game.plies() == if white { 2 } else { 1 });
    let t = &app(&h).lab.play().thoughts[&(if white { 1 } else { 0 })];
    assert!((t.policy.probability.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    assert!(t.policy.moves.contains(&t.chosen));
    assert_eq!(t.rates.as_ptr(), t.baseline.as_ptr(), "no neuron thinks for Charles: the rates shown are the brain at rest");
    let _ = std::fs::remove_dir_all(runs.join(&name));
    for copy in &copies {
        let _ = std::fs::remove_dir_all(runs.join(copy));
    }
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn how_a_fly_loses_is_measured_from_the_flies_tab_and_kept_where_the_cli_finds_it() {
    // The error is Stockfish's judgement of the position (and a profile's games are scored by it).
    if !stockfish_or_skip() {
        return;
    }
    let data = data();
    let mut h = harness(&data);
    let fly = flychess_fly::fly::Fly::load(&flychess_fly::fly::find("flywire", &data).unwrap()).unwrap();
    let kept = flychess_lab::profiling::kept_path(&data, &fly.player_id(None), 2, 4);
    let _ = std::fs::remove_file(&kept);
    {
        let app = app_mut(&mut h);
        app.tab = Tab::Flies;
        app.loses.games = 2;
        app.loses.depth = 4;
    }
    h.step();
    // The row's button asks about the fly; the panel offers to measure it.
    app_mut(&mut h).loses.ask("flywire", &data);
    h.step();
    h.get_by_label("Measure flywire over 2 games (Stockfish depth 4)").click();
    h.step();
    assert!(app(&h).loses.running(), "the measurement runs on a thread");
    wait(&mut h, "the profile", |a| !a.loses.running());
    assert!(app(&h).loses.status.is_empty(), "{}", app(&h).loses.status);
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&kept).unwrap()).unwrap();
    assert_eq!(report["profile"]["games"], 2);
    assert_eq!(report["player_id"], fly.player_id(None));
    h.step();
    assert!(h.query_by_label_contains("against the ladder's rungs").is_some(), "the kept profile is shown");
    assert!(h.query_by_label_contains("Decided by one blunder").is_some());
}

/// The Flies tab's rename writes the fly under its new name, then removes the old file: killed
/// between the two it leaves the same fly under both names (each file whole), and renaming it
/// again finishes the job instead of refusing ("a fly called … exists"). A different fly under
/// the new name is never removed or overwritten.
#[test]
fn a_rename_stopped_halfway_is_finished_by_renaming_again() {
    use flychess_fly::fly::Fly;
    use flychess_lab::lab::flies::rename_fly;
    let t = tempfile::tempdir().unwrap();
    let flies = flychess_brain::files::DataFolder::at(t.path()).flies();
    std::fs::create_dir_all(&flies).unwrap();
    let mut f = Fly::load(&flychess_fly::fly::shipped_dir().join("backprop.fly")).unwrap();
    f.meta.name = "old".into();
    f.save(&flies.join("old.fly")).unwrap();
    // What a kill between the two writes leaves.
    let mut renamed = f.clone();
    renamed.meta.name = "new".into();
    renamed.save(&flies.join("new.fly")).unwrap();
    rename_fly(t.path(), "old", "new").unwrap();
    assert!(!flies.join("old.fly").exists(), "the rename is finished");
    assert_eq!(Fly::load(&flies.join("new.fly")).unwrap(), renamed);
    // Another fly already under the name: refused, both kept as they were.
    f.meta.name = "a".into();
    f.save(&flies.join("a.fly")).unwrap();
    let mut other = f.clone();
    other.meta.name = "other".into();
    other.meta.train_positions += 1;
    other.save(&flies.join("other.fly")).unwrap();
    assert!(rename_fly(t.path(), "a", "other").is_err());
    assert_eq!(Fly::load(&flies.join("a.fly")).unwrap(), f);
    assert_eq!(Fly::load(&flies.join("other.fly")).unwrap(), other);
    // A shipped fly's name is not taken (issue 71), and a name is never a path: both refused
    // with the fly left where it was.
    let e = rename_fly(t.path(), "a", "flywire").unwrap_err().to_string();
    assert!(e.contains("shipped") && e.contains("flywire"), "{e}");
    assert!(rename_fly(t.path(), "a", "../a2").is_err() && rename_fly(t.path(), "../flies/a", "a3").is_err());
    assert_eq!(Fly::load(&flies.join("a.fly")).unwrap(), f);
    assert!(!flies.join("flywire.fly").exists());
}

/// A Charles run whose record cannot be read is said so in the Train tab, naming the file, and
/// Start stays off: training would refuse it (the run is the user's to look at, never started
/// over on top of).
#[test]
fn a_charles_run_with_a_damaged_record_is_said_and_not_started_over() {
    use egui_kittest::kittest::NodeT;
    let data = data();
    let name = format!("ui-damaged-{}", std::process::id());
    let dir = flychess_brain::files::DataFolder::at(&data).charles().join(&name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("state.json"), b"{\"options\": {\"config\"").unwrap();
    let mut h = harness(&data);
    app_mut(&mut h).tab = Tab::Train;
    h.step();
    h.get_by_label("Charles (not a fly)").click();
    h.step();
    h.step();
    app_mut(&mut h).train.charles.name = name.clone();
    h.step();
    // Until the record under the new name is read (aside), Start waits.
    assert!(
        app(&h).train.charles.read.name == name || h.get_by_label("Start training Charles").accesskit_node().is_disabled(),
        "Start waits for the record to be read"
    );
    wait(&mut h, "the record read", |a| a.train.charles.read.name == name);
    h.step();
    h.step();
    assert!(h.query_by_label_contains("cannot be read").is_some(), "the damaged run is said");
    assert!(h.query_by_label_contains(&format!("{name}/state.json")).is_some(), "naming its record");
    assert!(h.get_by_label("Start training Charles").accesskit_node().is_disabled(), "Start is off");
    let _ = std::fs::remove_dir_all(&dir);
}
