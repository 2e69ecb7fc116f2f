//! The Play tab driven through the real UI with egui_kittest: the real default brain (calibrated,
//! shared with the other test binaries), the shipped fly or a fly written to disk here, the real
//! thinker thread, and the pointer events a user makes (press, move, release on squares).
// Tests may touch files, threads and processes; app/clippy.toml forbids them to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use std::path::Path;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use shakmaty::{Color, Position, Square};

use common::*;
use flychess_fly::fly::{Fly, FlyMeta};
use flychess_fly::readout::{FROM, Readout};
use flychess_lab::game::Game;

/// A fly whose readout only likes moving from e7 to e5 (black's frame is mirrored: e2 → e4).
fn write_e5_fly(data: &Path, checksum: &str, descending: usize, name: &str) {
    let mut readout = Readout::new_zero(descending);
    readout.bias[usize::from(Square::E2)] = 10.0;
    readout.bias[FROM + usize::from(Square::E4)] = 10.0;
    let meta = FlyMeta {
        name: name.into(),
        kind: "test".into(),
        brain: "default".into(),
        brain_checksum: checksum.into(),
        homeostasis: String::new(),
        reading: flychess_fly::cache::Reading::Mean9To12,
        data: "none".into(),
        train_positions: 0,
        val: None,
        hold: None,
        created: "2026-11-30".into(),
        teacher: None,
        positions_by_teacher: None,
    };
    std::fs::create_dir_all(flychess_brain::files::DataFolder::at(data).flies()).unwrap();
    Fly { meta, readout }.save(&flychess_brain::files::DataFolder::at(data).flies().join(format!("{name}.fly"))).unwrap();
}

fn use_fly(h: &mut Harness<'static, App>, name: &str) {
    let data = data();
    let checksum = app(h).ready().unwrap().checksum.clone();
    let descending = app(h).ready().unwrap().connectome.groups.descending.len();
    write_e5_fly(&data, &checksum, descending, name);
    app_mut(h).lab.command(flychess_lab::lab::Command::UseFly(name.into()));
    wait(h, "the fly", |a| a.lab.play().fly.is_some() || !a.lab.play().preparing_fly());
    assert!(app(h).lab.play().fly.is_some(), "{}", app(h).lab.play().status());
}

#[test]
fn drag_e2_e4_the_fly_answers_legally_and_a_takeback_restores_the_start() {
    let mut h = harness(&data());
    assert_eq!(app(&h).lab.play().user, Color::White);
    drag(&mut h, Square::E2, Square::E4);
    assert_eq!(app(&h).lab.play().game.san().first().map(String::as_str), Some("e4"));
    wait(&mut h, "the fly's answer", |a| a.lab.play().game.plies() == 2);
    // The fly's move was played through the same legality check as the user's.
    let game = &app(&h).lab.play().game;
    let mut replay = Game::default();
    for m in game.moves() {
        replay.play(*m).expect("every move is legal");
    }
    let thought = app(&h).lab.play().thoughts.get(&1).expect("its thought is kept");
    assert!((thought.policy.probability.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    assert_eq!(thought.rates.len(), 12 * thought.neurons, "every step of every neuron, for the brain view");
    h.get_by_label("Take back").click();
    h.step();
    h.step();
    assert_eq!(app(&h).lab.play().game.plies(), 0);
    assert!(!app(&h).lab.play().fly_to_move());
}

#[test]
fn a_pawn_promotes_through_the_picker() {
    let mut h = harness(&data());
    let game = Game::from_fen("8/4P3/8/8/8/8/k7/4K3 w - - 0 1").unwrap();
    app_mut(&mut h).new_game(game, Color::White, None);
    h.step();
    drag(&mut h, Square::E7, Square::E8);
    assert!(app(&h).play.board.promotion.is_some(), "the picker opens");
    assert_eq!(app(&h).lab.play().game.plies(), 0);
    // The picker stacks queen, knight, rook, bishop down from the promotion square.
    click(&mut h, Square::E7);
    assert_eq!(app(&h).lab.play().game.san().first().map(String::as_str), Some("e8=N"));
}

#[test]
fn a_premove_is_played_when_legal_and_dropped_when_not() {
    let mut h = harness(&data());
    use_fly(&mut h, "e5-lover-premove");
    {
        let a = app_mut(&mut h);
        a.settings.animate = true;
        a.lab.command(flychess_lab::lab::Command::Replay(true));
    }
    // 1. e4, and while the fly's 1... e5 is being replayed, premove e4-e5: blocked, dropped.
    drag(&mut h, Square::E2, Square::E4);
    wait(&mut h, "the fly's think to arrive", |a| a.lab.play().replaying());
    drag(&mut h, Square::E4, Square::E5);
    assert!(app(&h).play.board.premove.is_some(), "premove set while the fly is to move");
    wait(&mut h, "the fly's move", |a| a.lab.play().game.plies() == 2);
    assert_eq!(app(&h).lab.play().game.san()[1], "e5");
    assert_eq!(app(&h).lab.play().game.plies(), 2, "the premove was dropped");
    assert!(app(&h).play.board.premove.is_none());
    assert!(app(&h).lab.play().status().contains("Premove dropped"), "{}", app(&h).lab.play().status());
    // 2. d4, premove Nf3 while the fly thinks: legal, played the moment it is our turn.
    drag(&mut h, Square::D2, Square::D4);
    wait(&mut h, "the fly's think to arrive", |a| a.lab.play().replaying());
    drag(&mut h, Square::G1, Square::F3);
    wait(&mut h, "the premove", |a| a.lab.play().game.plies() >= 5);
    assert_eq!(app(&h).lab.play().game.san()[4], "Nf3");
}

#[test]
fn a_game_saved_as_pgn_from_the_ui_reads_back_with_pgn_reader() {
    let mut h = harness(&data());
    drag(&mut h, Square::E2, Square::E4);
    wait(&mut h, "the fly's answer", |a| a.lab.play().game.plies() == 2);
    drag(&mut h, Square::G1, Square::F3);
    wait(&mut h, "the fly's answer", |a| a.lab.play().game.plies() == 4);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("game.pgn");
    app_mut(&mut h).play.pgn_path = path.display().to_string();
    h.step();
    h.get_by_label("Save PGN").click();
    wait(&mut h, "the PGN saved", |a| a.lab.play().status().starts_with("Saved"));
    let text = std::fs::read_to_string(&path).expect("saved");
    assert!(text.contains("[White \"You\"]") && text.contains("[Black \"Fly flywire\"]"), "{text}");
    let back = Game::from_pgn(&text).unwrap();
    assert_eq!(back.san(), app(&h).lab.play().game.san());
    // Loading it through the UI gives the same game.
    app_mut(&mut h).new_game(Game::default(), Color::White, None);
    h.step();
    h.get_by_label("Load PGN").click();
    wait(&mut h, "the PGN loaded", |a| a.lab.play().status().starts_with("Loaded"));
    assert_eq!(app(&h).lab.play().game.san(), back.san());
    // A file far larger than a game is refused before it is read, and the game stays.
    let big = dir.path().join("big.pgn");
    std::fs::write(&big, vec![b' '; (flychess_lab::lab::PGN_LIMIT + 1) as usize]).unwrap();
    app_mut(&mut h).play.pgn_path = big.display().to_string();
    h.step();
    h.get_by_label("Load PGN").click();
    wait(&mut h, "the refusal", |a| a.lab.play().status().starts_with("Could not load"));
    assert!(app(&h).lab.play().status().contains("not one game"), "{}", app(&h).lab.play().status());
    assert_eq!(app(&h).lab.play().game.san(), back.san());
}

#[test]
fn threefold_repetition_is_called_on_the_third_occurrence_only() {
    let mut h = harness(&data());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shuffle.pgn");
    std::fs::write(&path, "[White \"A\"]\n[Black \"B\"]\n\n1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. Ng1 *\n").unwrap();
    {
        let a = app_mut(&mut h);
        a.lab.set_user_for_test(Color::Black);
        a.play.pgn_path = path.display().to_string();
    }
    h.step();
    h.get_by_label("Load PGN").click();
    wait(&mut h, "the PGN loaded", |a| a.lab.play().status().starts_with("Loaded"));
    h.step();
    assert_eq!(app(&h).lab.play().game.plies(), 7);
    assert_eq!(app(&h).play.orientation, Color::Black);
    // The start position has occurred twice (plies 0 and 4): no draw yet.
    assert!(app(&h).lab.play().game.ending().is_none());
    drag(&mut h, Square::F6, Square::G8);
    let end = app(&h).lab.play().game.ending().expect("the third occurrence ends the game");
    assert_eq!((end.result.as_str(), end.reason.as_str()), ("1/2-1/2", "threefold repetition"));
    assert!(!app(&h).lab.play().fly_to_move());
}

#[test]
fn without_stockfish_the_game_goes_on_and_a_fixed_path_brings_the_grades_back() {
    let mut h = harness(&data());
    app_mut(&mut h).tab = flychess_window::ui::Tab::About;
    h.step();
    app_mut(&mut h).stockfish_edit = "/nonexistent/stockfish".into();
    h.step();
    h.get_by_label("Use").click();
    h.step();
    wait(&mut h, "the broken path to be reported", |a| a.lab.grader_status().contains("/nonexistent/stockfish"));
    assert!(
        app(&h).lab.grader_status().contains("not there") && app(&h).lab.grader_status().contains("install"),
        "{}",
        app(&h).lab.grader_status()
    );
    // Playing does not need Stockfish.
    app_mut(&mut h).tab = flychess_window::ui::Tab::Play;
    h.step();
    drag(&mut h, Square::E2, Square::E4);
    wait(&mut h, "the fly's answer", |a| a.lab.play().game.plies() == 2);
    assert!(app(&h).lab.play().grades.is_empty());
    let Ok(real) = flychess_fly::stockfish::find_stockfish(None) else {
        assert!(std::env::var("FLYCHESS_CI").is_err(), "CI installs Stockfish");
        return;
    };
    app_mut(&mut h).tab = flychess_window::ui::Tab::About;
    h.step();
    app_mut(&mut h).stockfish_edit = real.display().to_string();
    h.step();
    h.get_by_label("Use").click();
    h.step();
    wait(&mut h, "Stockfish to be ready", |a| a.lab.grader_status().starts_with("Grades: Stockfish"));
    // New moves are graded again.
    app_mut(&mut h).tab = flychess_window::ui::Tab::Play;
    h.step();
    drag(&mut h, Square::G1, Square::F3);
    // The moves played while there was no Stockfish are graded too, and so is the new one.
    wait(&mut h, "every move's grade", |a| (0..3).all(|ply| a.lab.play().grade_of(ply, &a.lab.play().game.moves()[ply]).is_some()));
    let grade = app(&h).lab.play().grade_of(2, &app(&h).lab.play().game.moves()[2]).expect("Nf3 is graded");
    assert!((0.0..=100.0).contains(&grade.accuracy));
}

#[test]
fn the_brain_tab_finds_steps_undoes_exports_and_picks_neurons() {
    use flychess_render::cloud::project;
    use flychess_window::ui::Tab;
    let mut h = harness(&data());
    // A think to inspect: 1. e4 and the fly's answer.
    drag(&mut h, Square::E2, Square::E4);
    wait(&mut h, "the fly's answer", |a| a.lab.play().game.plies() == 2);
    app_mut(&mut h).tab = Tab::Brain;
    h.step();
    h.step();
    let ready = app(&h).ready().unwrap().clone();
    let kenyon = ready.connectome.groups.kenyon.len();
    app_mut(&mut h).brain_view.as_mut().unwrap().search = "Kenyon_cell".into();
    h.step();
    h.get_by_label("Find").click();
    h.step();
    h.step();
    let view = app(&h).brain_view.as_ref().unwrap();
    assert_eq!(view.selection.len(), kenyon, "every Kenyon cell, nothing else");
    let first = view.selected.unwrap();
    assert_eq!(ready.connectome.neurons.region[first as usize], flychess_brain::connectome::rules::Region::KenyonCells);
    // N steps through the selection; the inspector shows the neuron.
    h.key_press(eframe::egui::Key::N);
    h.step();
    let second = app(&h).brain_view.as_ref().unwrap().selected.unwrap();
    assert_ne!(first, second);
    let body = ready.connectome.neurons.body_id[second as usize];
    assert!(h.query_by_label(&format!("Neuron {body}")).is_some(), "the inspector names the neuron");
    // The partner list: one row per connection of each selected neuron, with the header.
    let csv = app_mut(&mut h).brain_view.as_mut().unwrap().partners_csv(&ready.connectome, &ready.brain);
    // Every connection of a Kenyon cell, counted straight from the brain's wiring.
    let selected: std::collections::HashSet<u32> = app(&h).brain_view.as_ref().unwrap().selection.iter().copied().collect();
    let b = &ready.brain;
    let inputs: usize = selected.iter().map(|&k| (b.row_start[k as usize + 1] - b.row_start[k as usize]) as usize).sum();
    let outputs = b.pre.iter().filter(|p| selected.contains(p)).count();
    assert_eq!(csv.lines().count(), inputs + outputs + 1);
    assert!(csv.starts_with("neuron_body_id,"));
    // Without a file dialog the list goes into DATA/exports.
    let before = std::fs::read_dir(flychess_brain::files::DataFolder::at(data()).exports()).map(|d| d.count()).unwrap_or(0);
    h.get_by_label("CSV into the data folder").click();
    h.step();
    // Written on a lab thread, not in the frame: the status says so until it is done.
    let started = std::time::Instant::now();
    while app(&h).brain_view.as_ref().unwrap().exporting() {
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "the CSV was never written");
        std::thread::sleep(std::time::Duration::from_millis(10));
        h.step();
    }
    let after: Vec<_> = std::fs::read_dir(flychess_brain::files::DataFolder::at(data()).exports()).unwrap().flatten().collect();
    assert_eq!(after.len(), before + 1);
    // Undo returns to the state before the search.
    h.get_by_label("Undo (Ctrl+Z)").click();
    h.step();
    assert!(app(&h).brain_view.as_ref().unwrap().selection.is_empty());
    // Clicking the cloud where a neuron is drawn selects that neuron.
    let target = ready.connectome.groups.descending[0];
    let view = app(&h).brain_view.as_ref().unwrap();
    let rect = h.get_by_label("brain view").rect();
    let ppp = h.ctx.pixels_per_point();
    let vp = view.camera.view_projection(rect.width() / rect.height());
    let p = ready.connectome.neurons.soma_um[target as usize];
    let at = project(vp, [rect.width() * ppp, rect.height() * ppp], p).unwrap();
    let screen = rect.min + eframe::egui::vec2(at[0] / ppp, at[1] / ppp);
    h.hover_at(screen);
    h.step();
    h.drag_at(screen);
    h.step();
    h.drop_at(screen);
    h.step();
    let picked = app(&h).brain_view.as_ref().unwrap().selected.expect("a neuron is picked");
    let q = ready.connectome.neurons.soma_um[picked as usize];
    let there = project(vp, [rect.width() * ppp, rect.height() * ppp], q).unwrap();
    assert!((there[0] - at[0]).abs() <= 6.0 * ppp && (there[1] - at[1]).abs() <= 6.0 * ppp, "the picked neuron is drawn under the pointer");
}

#[test]
fn a_lesioned_brain_thinks_again_on_the_same_board_from_the_brain_tab() {
    use flychess_brain::connectome::rules::Region;
    use flychess_window::ui::Tab;
    let mut h = harness(&data());
    drag(&mut h, Square::D2, Square::D4);
    wait(&mut h, "the fly's answer", |a| a.lab.play().game.plies() == 2);
    app_mut(&mut h).tab = Tab::Brain;
    h.step();
    // Index 1 of the controls (after shuffled wiring): no optic lobe.
    app_mut(&mut h).brain_view.as_mut().unwrap().control_choice = 1;
    h.step();
    h.get_by_label("Think again").click();
    h.step();
    wait(&mut h, "the lesioned brain's think", |a| a.brain_view.as_ref().unwrap().control.is_some());
    let view = app(&h).brain_view.as_ref().unwrap();
    let c = view.control.as_ref().unwrap();
    assert_eq!(c.label, "lesion: optic lobe");
    assert!(view.show_control, "the control's think is shown");
    let t = app(&h).lab.play().shown_thought().unwrap();
    assert_eq!(c.of, t.id, "the same board");
    let ready = app(&h).ready().unwrap().clone();
    let intact = flychess_window::ui::brain_view::region_means(&t.rates, &ready.connectome);
    // Cutting the optic lobe's outputs changes what the visual projection neurons do.
    let vp = Region::VisualProjection as usize;
    assert!((c.mean[11][vp] - intact[11][vp]).abs() > 1e-3, "{} vs {}", c.mean[11][vp], intact[11][vp]);
    assert!(h.query_by_label("Show lesion: optic lobe").is_some());
}

#[test]
fn the_hint_is_stockfishs_best_move_and_a_mate_opens_the_graded_report() {
    if flychess_fly::stockfish::find_stockfish(None).is_err() {
        assert!(std::env::var("FLYCHESS_CI").is_err(), "CI installs Stockfish");
        return;
    }
    let mut h = harness(&data());
    wait(&mut h, "Stockfish", |a| a.lab.grader_status().starts_with("Grades: Stockfish"));
    // Scholar's mate threat: after 1. e4 e5 2. Qh5 Nc6 3. Bc4 the user (White) has a mate in one.
    let game = Game::from_pgn("1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 *").unwrap();
    app_mut(&mut h).new_game(game, Color::White, None);
    h.step();
    h.get_by_label("Hint").click();
    h.step();
    wait(&mut h, "the hint", |a| a.lab.play().hint.is_some());
    let (_, m) = app(&h).lab.play().hint.clone().unwrap();
    assert_eq!(flychess_brain::chess::uci(&m), "h5f7", "Qxf7# is the best move");
    // Play it: the game ends by mate, the report opens with a graded accuracy for White.
    drag(&mut h, Square::H5, Square::F7);
    let end = app(&h).lab.play().game.ending().expect("mate");
    assert_eq!(end.reason, "checkmate");
    assert!(app(&h).play.report_open);
    wait(&mut h, "White's last move graded", |a| a.lab.play().grade_of(6, &a.lab.play().game.moves()[6]).is_some());
    assert_eq!(app(&h).lab.play().grade_of(6, &app(&h).lab.play().game.moves()[6]).unwrap().verdict, flychess_fly::grading::Verdict::Best);
    assert!(h.query_by_label("Game report").is_some());
}

#[test]
fn the_brain_picker_loads_the_stand_in_and_its_own_fly_takes_over() {
    use flychess_window::ui::Tab;
    let mut h = harness(&data());
    assert!(app(&h).ready().unwrap().info.source.starts_with("FlyWire v783"), "the default brain");
    assert_eq!(app(&h).lab.play().fly_name, "flywire", "and its shipped fly");
    app_mut(&mut h).tab = Tab::About;
    h.step();
    // The picker: the combo box labelled "Brain" (the tab button of that name is not one).
    h.get_by_role_and_label(eframe::egui::accesskit::Role::ComboBox, "Brain").click();
    h.step();
    h.step();
    h.get_by_label("Synthetic stand-in: random wiring within populations").click();
    h.step();
    wait(&mut h, "the stand-in", |a| a.ready().is_some_and(|r| r.info.synthetic));
    // The FlyWire fly cannot play on the stand-in: the stand-in's own fly takes over.
    wait(&mut h, "the stand-in's own fly", |a| a.lab.play().fly_name == "backprop" && a.lab.play().fly.is_some());
    let a = app(&h);
    assert_eq!(
        a.lab.play().fly_name,
        "backprop",
        "the FlyWire fly cannot play on the stand-in: its own fly does ({})",
        a.lab.play().status()
    );
    assert!(a.lab.play().fly.is_some() && a.lab.play().status().contains("this brain's fly"), "{}", a.lab.play().status());
}

#[test]
fn a_takeback_and_the_move_cursor_show_that_positions_think_everywhere() {
    let mut h = harness(&data());
    drag(&mut h, Square::E2, Square::E4);
    wait(&mut h, "the fly's first answer", |a| a.lab.play().game.plies() == 2);
    drag(&mut h, Square::D2, Square::D4);
    wait(&mut h, "the fly's second answer", |a| a.lab.play().game.plies() == 4);
    let first = app(&h).lab.play().thoughts[&1].id;
    let second = app(&h).lab.play().thoughts[&3].id;
    assert_eq!(app(&h).lab.play().shown_thought().map(|t| t.id), Some(second));
    // The cursor on the position after the fly's first reply: its first think, in the card and
    // in the sentence alike.
    app_mut(&mut h).lab.command(flychess_lab::lab::Command::Show(Some(2)));
    h.step();
    assert_eq!(app(&h).lab.play().shown_thought().map(|t| t.id), Some(first));
    let reply = app(&h).lab.play().game.san()[1].to_string();
    assert!(h.query_by_label_contains(&format!("\u{201c}{reply}.")).is_some(), "the sentence speaks of {reply}");
    // Before any think: silence.
    app_mut(&mut h).lab.command(flychess_lab::lab::Command::Show(Some(0)));
    h.step();
    assert!(app(&h).lab.play().shown_thought().is_none());
    // Taken back to the user's turn: the earlier think is the one shown, not the one taken back.
    app_mut(&mut h).lab.command(flychess_lab::lab::Command::Show(None));
    h.step();
    h.get_by_label("Take back").click();
    h.step();
    h.step();
    assert_eq!(app(&h).lab.play().game.plies(), 2);
    assert_eq!(app(&h).lab.play().shown_thought().map(|t| t.id), Some(first));
    assert!(h.query_by_label_contains(&format!("\u{201c}{reply}.")).is_some());
    // A new game: silence, not the last game's rates.
    app_mut(&mut h).new_game(Game::default(), Color::White, None);
    h.step();
    assert!(app(&h).lab.play().shown_thought().is_none());
}

#[test]
fn a_watched_game_keeps_rates_only_for_the_thinks_it_can_show_and_recalls_the_others_exactly() {
    use flychess_brain::brain::cpu;
    use flychess_brain::chess::planes;
    use flychess_lab::lab::Watch;
    use flychess_window::ui::{FlyChessApp, Launch};
    let mut h = harness(&data());
    // The same window, playing by itself against the greedy mover for 14 plies.
    let launch =
        Launch { data: data(), quiet: true, watch: Some(Watch { opponent: "greedy".into(), plies: Some(14) }), ..Default::default() };
    *h.state_mut() = Some(FlyChessApp::new(&h.ctx, "test".into(), launch, None, None));
    wait(&mut h, "14 plies of fly against greedy", |a| a.lab.play().game.plies() >= 14 || a.lab.play().game.is_over());
    wait(&mut h, "the last think shown", |a| !a.lab.play().fly_to_move() && a.lab.play().thinking.is_none());
    let a = app(&h);
    let fly_moves = a.lab.play().thoughts.len();
    assert!(fly_moves >= flychess_lab::lab::KEEP_RATES + 2, "{fly_moves} fly moves ({})", a.lab.play().status());
    let with_rates = a.lab.play().thoughts.values().filter(|t| !t.rates.is_empty()).count();
    assert_eq!(with_rates, flychess_lab::lab::KEEP_RATES, "only the newest thinks keep their rates");
    assert_eq!(a.lab.play().game.plies(), 14, "the fly stops at --plies");
    // Stepping back to the fly's first think (it plays White: ply 0) recalls its rates: the same
    // numbers, bit for bit.
    assert!(a.lab.play().thoughts[&0].rates.is_empty(), "the first think's rates were let go");
    app_mut(&mut h).lab.command(flychess_lab::lab::Command::Show(Some(1)));
    wait(&mut h, "the first think's rates", |a| a.lab.play().thoughts.get(&0).is_some_and(|t| !t.rates.is_empty()));
    let a = app(&h);
    let t = &a.lab.play().thoughts[&0];
    let fresh = cpu::think(&a.ready().unwrap().brain, &[planes(&t.position)]);
    assert!(*t.rates == fresh.data, "the recalled rates are the think's own");
    assert_eq!(a.lab.play().shown_thought().map(|s| s.id), Some(t.id));
    assert!(a.lab.play().thoughts.values().filter(|t| !t.rates.is_empty()).count() <= flychess_lab::lab::KEEP_RATES + 1);
}

#[test]
fn a_thinker_that_dies_is_replaced_and_the_fly_still_answers() {
    let mut h = harness(&data());
    app_mut(&mut h).lab.replace_thinker_for_test(flychess_lab::thinker::Thinker::dead());
    drag(&mut h, Square::E2, Square::E4);
    wait(&mut h, "the fly's answer from a new thinker", |a| a.lab.play().game.plies() == 2);
    let a = app(&h);
    assert!(a.lab.thinker().as_ref().is_some_and(|t| t.alive()));
    assert!(a.lab.workers_status().contains("a new one was started"), "{}", a.lab.workers_status());
}

/// Stockfish's grader dies mid-game (its worker ends without its last word, as a panic would
/// leave it): the lab says so, starts a new one, and the new one grades the moves the dead one
/// never answered.
#[test]
fn a_grader_that_dies_is_replaced_and_grades_what_the_dead_one_owed() {
    let mut h = harness(&data());
    if flychess_fly::stockfish::find_stockfish(None).is_err() {
        assert!(std::env::var("FLYCHESS_CI").is_err(), "CI installs Stockfish");
        return;
    }
    // The grader takes the user's move and dies without grading it.
    app_mut(&mut h).lab.replace_grader_for_test(flychess_lab::grader::Grader::dies_in(std::time::Duration::from_secs(2)), "about to die");
    drag(&mut h, Square::E2, Square::E4);
    assert!(app(&h).lab.grader().as_ref().is_some_and(|g| !g.died()), "e4 went to the grader that dies");
    wait(&mut h, "the fly's answer", |a| a.lab.play().game.plies() == 2);
    wait(&mut h, "a new grader's grades of both moves", |a| {
        (0..2).all(|ply| a.lab.play().grade_of(ply, &a.lab.play().game.moves()[ply]).is_some())
    });
    let a = app(&h);
    assert!(a.lab.grader().as_ref().is_some_and(|g| !g.died()));
    assert!(a.lab.workers_status().contains("grader stopped unexpectedly"), "{}", a.lab.workers_status());
    assert!(a.lab.grader_status().starts_with("Grades: Stockfish"), "{}", a.lab.grader_status());
}

#[test]
fn a_brain_that_fails_to_build_leaves_the_game_and_the_brain_it_is_played_on() {
    use flychess_brain::connectome::Control;
    use flychess_brain::store::{BrainSpec, Tables};
    let mut h = harness(&data());
    drag(&mut h, Square::E2, Square::E4);
    wait(&mut h, "the fly's answer", |a| a.lab.play().game.plies() == 2);
    let before = app(&h).ready().unwrap().checksum.clone();
    let moves = app(&h).lab.play().game.san().to_vec();
    let nowhere = tempfile::tempdir().unwrap();
    let spec = BrainSpec { tables: Tables::Release { dir: nowhere.path().join("no tables here") }, control: Control::None };
    app_mut(&mut h).switch_brain(spec);
    wait(&mut h, "the failure", |a| a.lab.brain_job_error().is_some());
    let a = app(&h);
    assert!(a.lab.brain_job_error().as_ref().unwrap().contains("missing"), "{:?}", a.lab.brain_job_error());
    assert_eq!(a.ready().map(|r| r.checksum.clone()), Some(before), "the brain it was played on is still there");
    assert_eq!(a.lab.play().game.san(), moves, "and so is the game");
    // And the game goes on.
    drag(&mut h, Square::D2, Square::D4);
    wait(&mut h, "the fly's next answer", |a| a.lab.play().game.plies() == 4);
}

#[test]
fn a_click_on_a_window_over_the_board_never_reaches_the_board() {
    let mut h = harness(&data());
    click(&mut h, Square::E2);
    assert_eq!(app(&h).play.board.selected, Some(Square::E2));
    h.get_by_label("New game").click();
    h.step();
    h.step();
    // The dialog sits over the board: the point clicked inside it is over a square.
    let inside = h.get_by_label("You play:").rect().center();
    let board = app(&h).play.board.rect;
    assert!(board.contains(inside), "the dialog is over the board ({inside:?} in {board:?})");
    h.get_by_label("You play:").click();
    h.step();
    h.step();
    let a = app(&h);
    assert_eq!(a.play.board.selected, Some(Square::E2), "the click went to the dialog, not the square under it");
    assert_eq!(a.lab.play().game.plies(), 0);
}

#[test]
fn a_watch_opponent_of_another_brain_is_refused_once_and_said() {
    use flychess_lab::lab::Watch;
    use flychess_window::ui::{FlyChessApp, Launch};
    let mut h = harness(&data());
    // `backprop` is the stand-in's fly: it cannot play on the default brain.
    let launch =
        Launch { data: data(), quiet: true, watch: Some(Watch { opponent: "backprop".into(), plies: Some(4) }), ..Default::default() };
    *h.state_mut() = Some(FlyChessApp::new(&h.ctx, "test".into(), launch, None, None));
    wait(&mut h, "the refusal", |a| a.lab.opponent_failed().is_some());
    let a = app(&h);
    assert!(a.lab.opponent_failed().as_ref().unwrap().contains("another brain"), "{:?}", a.lab.opponent_failed());
    assert!(a.lab.play().status().contains("--watch backprop"), "{}", a.lab.play().status());
    assert!(
        a.launch.failed.lock().unwrap().as_ref().is_some_and(|e| e.contains("another brain")),
        "run() returns it: the exit status says so"
    );
}

#[test]
fn a_brain_without_a_fly_offers_to_train_one() {
    use flychess_window::ui::Tab;
    let mut h = harness(&data());
    // As on a newly built brain with no fly of its own.
    app_mut(&mut h).lab.forget_fly_for_test();
    h.step();
    h.get_by_label("Train a fly for this brain…").click();
    h.step();
    h.step();
    assert_eq!(app(&h).tab, Tab::Train);
}

#[test]
fn the_views_what_it_looks_at_its_eye_every_move_and_the_classroom_are_driven_from_the_window() {
    let data = data();
    let mut h = harness(&data);
    drag(&mut h, Square::E2, Square::E4);
    wait(&mut h, "the fly's answer", |a| a.lab.play().game.plies() == 2 && a.lab.play().shown_thought().is_some());
    // What it looks at: each piece taken away in turn, worked out aside, drawn on the position the
    // fly thought in (the board can then only be looked at).
    h.get_by_label("what it looks at").click();
    h.step();
    let id = app(&h).lab.play().shown_thought().unwrap().id;
    wait(&mut h, "what it looks at", |a| a.looks.explanation(id).is_some());
    let e = app(&h).looks.explanation(id).unwrap();
    assert_eq!(e.pieces.len(), 32, "a figure for every piece of the position it thought in");
    let chosen = app(&h).lab.play().shown_thought().unwrap().chosen;
    assert_eq!(e.chosen, flychess_brain::chess::uci(&chosen), "the lesion is of the move it played");
    h.get_by_label_contains("It plays");
    h.step();
    assert_eq!(
        app(&h).play.board.shown_board(),
        Some(app(&h).lab.play().shown_thought().unwrap().position.board()),
        "the board shows the position it thought in"
    );
    // Its eye: the board's squares' photoreceptors, lit by the pieces there.
    h.get_by_label("its eye").click();
    h.step();
    let ready = app(&h).ready().unwrap().clone();
    let sight = flychess_brain::eye::sight(&ready.brain.eye, app(&h).lab.play().game.current());
    let lit_squares: Vec<u8> = sight.iter().filter(|s| s.total_firing() > 0).map(|s| s.square).collect();
    let occupied: Vec<u8> = app(&h).lab.play().game.current().board().occupied().into_iter().map(u8::from).collect();
    assert_eq!(lit_squares, occupied, "exactly the occupied squares light photoreceptors");
    // Every legal move on request, and the hovered one's arrow.
    h.get_by_label("pieces").click();
    h.step();
    let legal = app(&h).lab.play().candidates(1).len();
    assert!(legal > 8);
    h.get_by_label(&format!("All {legal} legal moves")).click();
    h.step();
    assert!(app(&h).play.all_moves);
    let list = app(&h).lab.play().candidates(1);
    let played = app(&h).lab.play().game.moves()[1];
    let (other, _) = *list.iter().find(|(m, _)| *m != played).unwrap();
    let san = shakmaty::san::San::from_move(app(&h).lab.play().game.position(1), other).to_string();
    h.get_by_label(&san).hover();
    h.step();
    h.step();
    assert_eq!(app(&h).play.hovered, Some(other), "the hovered candidate's arrow is drawn");
    // The classroom: slides on arrow keys, the steps in large type, Esc leaves.
    app_mut(&mut h).tab = flychess_window::ui::Tab::Brain;
    h.step();
    h.get_by_label("Classroom").click();
    h.step();
    assert!(app(&h).brain_view.as_ref().unwrap().classroom);
    h.step();
    h.get_by_label_contains("looks at the board");
    h.key_press(eframe::egui::Key::ArrowRight);
    h.step();
    h.get_by_label("Step 1 of 12");
    for _ in 0..12 {
        h.key_press(eframe::egui::Key::ArrowRight);
        h.step();
    }
    h.get_by_label("What it looks at");
    h.key_press(eframe::egui::Key::ArrowRight);
    h.step();
    h.get_by_label_contains("It plays");
    h.key_press(eframe::egui::Key::ArrowLeft);
    h.step();
    h.get_by_label("What it looks at");
    h.key_press(eframe::egui::Key::Escape);
    h.step();
    assert!(!app(&h).brain_view.as_ref().unwrap().classroom, "Esc leaves the classroom");
}

/// Issue 56: a fly with two glances in the window. Its think carries the second look (its own
/// rates and policy, the liked piece's patch of the eye driven harder, the move played chosen
/// from it), and the Brain tab steps between the two looks.
#[test]
fn a_fly_with_two_glances_shows_both_looks_and_the_brain_tab_steps_between_them() {
    let data = data();
    let fly = Fly::load(&flychess_fly::fly::find("flywire", &data).unwrap()).unwrap();
    let tuned = serde_json::json!({ fly.player_id(None): {"chosen": {"gain": 4.0, "among": "all"}} });
    std::fs::write(data.join("glances.json"), tuned.to_string()).unwrap();
    let mut h = harness(&data);
    // The user plays black: the fly (white) thinks at once.
    app_mut(&mut h).new_game(Game::default(), Color::Black, Some("flywire+glances".into()));
    wait(&mut h, "the fly's first think", |a| a.lab.play().first_glance().is_some_and(|t| t.second_glance.is_some()));
    let (first_rates, second_rates, first_policy, second_policy, chosen, second_chosen) = {
        let first = app(&h).lab.play().first_glance().unwrap();
        let second = first.second_glance.as_ref().unwrap();
        (
            first.rates.clone(),
            second.thought.rates.clone(),
            first.policy.probability.clone(),
            second.thought.policy.probability.clone(),
            first.chosen,
            second.thought.chosen,
        )
    };
    assert!(!second_rates.is_empty() && second_rates.len() == first_rates.len());
    assert!(first_rates.iter().zip(second_rates.iter()).any(|(a, b)| a != b), "the second look thought otherwise");
    assert_ne!(first_policy, second_policy);
    assert_eq!(chosen, second_chosen, "the move played is the second look's");
    // The Brain tab shows the first look, then the second, then the first again.
    app_mut(&mut h).tab = flychess_window::ui::Tab::Brain;
    h.step();
    assert!(std::sync::Arc::ptr_eq(&app(&h).lab.play().shown_thought().unwrap().rates, &first_rates));
    h.get_by_label_contains("second look").click();
    h.step();
    h.step();
    assert!(app(&h).lab.play().showing_second_glance());
    assert!(std::sync::Arc::ptr_eq(&app(&h).lab.play().shown_thought().unwrap().rates, &second_rates));
    h.get_by_label("first look").click();
    h.step();
    h.step();
    assert!(std::sync::Arc::ptr_eq(&app(&h).lab.play().shown_thought().unwrap().rates, &first_rates));
}
