//! The window on a real wgpu device (Mesa lavapipe where there is no GPU), in a test binary of its
//! own because it asks for the GPU engine through FLYCHESS_ENGINE, which is process-wide: the
//! kittest harness renders through eframe's wgpu path, the fly thinks on the GPU engine sharing
//! the window's device, the brain card draws that engine's rates buffer, and the 4K export runs
//! off the UI thread. It fails when the GPU path silently falls back to the CPU.
// Tests may touch files, threads and processes; app/clippy.toml forbids them to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod common;

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use shakmaty::Square;

use common::*;
use flychess_window::ui::{FlyChessApp, Launch, Tab};

/// The thinker's GPU path on its own, on the window's device: the move is read from the
/// descending neurons' read steps alone (no rates come back with the answer), and its policy is
/// exactly the one read from a whole read-back of the same buffer.
fn the_gpu_think_reads_back_only_the_readout(
    h: &Harness<'static, App>,
    render_state: &eframe::egui_wgpu::RenderState,
    position: &shakmaty::Chess,
) {
    use flychess_fly::readout::{descending_features, policy};
    use flychess_lab::thinker::{ThinkRequest, think};
    let a = app(h);
    let ready = a.ready().unwrap().clone();
    let Some(seat) = a.lab.play().fly.clone() else { panic!("no fly plays") };
    let fly = seat.readout().cloned().expect("the default fly is a readout fly");
    let descending = ready.connectome.groups.descending.clone();
    let engine = flychess_brain::brain::engine::Fallback::new(
        flychess_brain::brain::gpu::GpuEngine::new(render_state.device.clone(), render_state.queue.clone(), &ready.brain).unwrap(),
        "the test's device",
        "the fly",
    );
    let request = ThinkRequest {
        id: 7,
        fly: seat.clone(),
        position: position.clone(),
        earlier: Vec::new(),
        imagination: None,
        history: Vec::new(),
        recall: false,
    };
    let baseline = std::sync::Arc::new(Vec::new());
    let t = think(&baseline, &request, Some(&engine)).unwrap();
    assert!(engine.alive(), "the GPU engine did not fail");
    assert!(t.gpu_rates.is_some() && t.rates.is_empty() && t.rates_follow, "only the readout's readings came back");
    let whole = engine.attempt(|g| g.read_rates()).expect("the whole buffer read back");
    let heads = fly.readout.heads(&descending_features(&whole, 0, &descending, &fly.readout.read_steps));
    assert_eq!(policy(position, &heads).probability, t.policy.probability, "the readout's readings are the whole buffer's at those places");
}

#[test]
fn on_a_wgpu_device_the_fly_thinks_on_the_gpu_engine_the_card_draws_its_buffer_and_the_export_runs_aside() {
    if flychess_brain::brain::gpu::best_adapter().is_err() {
        assert!(std::env::var_os("FLYCHESS_CI").is_none(), "CI installs Mesa's lavapipe");
        eprintln!("skipped: no graphics adapter (apt-get install libvulkan1 mesa-vulkan-drivers)");
        return;
    }
    // SAFETY: set before any thread of this binary reads it (this is its only test).
    unsafe { std::env::set_var("FLYCHESS_ENGINE", "gpu") };
    let render_state =
        egui_kittest::wgpu::create_render_state(egui_kittest::wgpu::default_wgpu_setup(), eframe::egui_wgpu::RendererOptions::PREDICTABLE);
    let adapter = render_state.adapter.get_info().name;
    let mut h: Harness<'static, App> = Harness::builder()
        .with_size([1280.0, 800.0])
        .with_step_dt(1.0 / 30.0)
        .with_accessibility_check(false)
        .renderer(egui_kittest::wgpu::WgpuTestRenderer::from_render_state(render_state.clone()))
        .build_ui_state(
            |ui, app: &mut App| {
                if let Some(a) = app {
                    a.show(ui)
                }
            },
            None,
        );
    let launch = Launch { data: data(), quiet: true, ..Default::default() };
    *h.state_mut() = Some(FlyChessApp::new(&h.ctx, adapter.clone(), launch, None, Some(render_state.clone())));
    wait(&mut h, "the brain, its view and the fly", |a| a.ready().is_some() && a.brain_view.is_some() && a.lab.play().fly.is_some());
    wait(&mut h, "the thinker's engine", |a| !a.lab.engine().contains("starting"));
    assert!(
        app(&h).lab.engine().starts_with("GPU engine on"),
        "the fly should think on the GPU engine on {adapter}: {}",
        app(&h).lab.engine()
    );
    drag(&mut h, Square::E2, Square::E4);
    wait(&mut h, "the fly's answer", |a| a.lab.play().game.plies() == 2);
    let t = &app(&h).lab.play().thoughts[&1];
    assert!(t.gpu_rates.is_some(), "the think came from the GPU engine's buffer");
    wait(&mut h, "the panels' copy of the GPU think", |a| !a.lab.play().thoughts[&1].rates_follow);
    let t = app(&h).lab.play().thoughts[&1].clone();
    assert_eq!(t.rates.len(), 12 * t.neurons, "with its CPU copy for the panels, worked out on the CPU");
    assert!(t.gpu_rates.is_some(), "the copy did not take the buffer away");
    the_gpu_think_reads_back_only_the_readout(&h, &render_state, &t.position);
    // A frame through wgpu: the card binds the engine's buffer (the shared-buffer path).
    let frame = h.render().expect("a frame renders on the wgpu device");
    let card = app(&h).play.board.rect;
    assert!(frame.width() >= 1280 && card.width() > 100.0);
    // The export: 3840×2160 on a thread of its own; the window keeps drawing meanwhile.
    app_mut(&mut h).tab = Tab::Brain;
    h.step();
    let exports = flychess_brain::files::DataFolder::at(data()).exports();
    let before: Vec<_> = std::fs::read_dir(&exports).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    h.get_by_label("PNG into the data folder").click();
    h.step();
    assert!(app(&h).brain_view.as_ref().unwrap().exporting(), "the export runs aside");
    let started = Instant::now();
    let mut frames = 0;
    while app(&h).brain_view.as_ref().unwrap().exporting() {
        assert!(started.elapsed() < Duration::from_secs(300), "the export never ended");
        h.step();
        frames += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("{frames} frames drawn while the 4K export ran ({:.1} s)", started.elapsed().as_secs_f64());
    let after: Vec<_> = std::fs::read_dir(&exports)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| !before.contains(p) && p.extension().is_some_and(|x| x == "png"))
        .collect();
    assert_eq!(after.len(), 1, "one PNG written: {after:?}");
    let img = image::open(&after[0]).unwrap();
    assert_eq!((img.width(), img.height()), (3840, 2160));
    std::fs::remove_file(&after[0]).unwrap();
    // A neuron picked: its partners (the outgoing index was built aside when the brain loaded).
    app_mut(&mut h).brain_view.as_mut().unwrap().select(Some(1000));
    h.step();
    h.step();
    // The error going back, drawn by the cloud's blame mode on this device: red and blue points.
    app_mut(&mut h).brain_view.as_mut().unwrap().select(None);
    h.step();
    h.get_by_label("Send the error back").click();
    h.step();
    wait(&mut h, "the error going back", |a| a.brain_view.as_ref().is_some_and(|v| v.blame.shown.is_some() || !v.blame.busy()));
    assert!(app(&h).brain_view.as_ref().unwrap().blame.shown.is_some(), "{}", app(&h).brain_view.as_ref().unwrap().blame.status);
    app_mut(&mut h).brain_view.as_mut().unwrap().step = 7;
    h.step();
    let frame = h.render().expect("a frame renders on the wgpu device");
    let (red, blue) = frame.pixels().fold((0, 0), |(r, b), p| {
        let [pr, pg, pb, _] = p.0;
        (r + usize::from(pr as i32 > pb as i32 + 60 && pr as i32 > pg as i32 + 30), b + usize::from(pb as i32 > pr as i32 + 60))
    });
    assert!(red > 50 && blue > 50, "the blame view draws red and blue points: {red} red, {blue} blue pixels");
    if let Some(dir) = std::env::var_os("FLYCHESS_DOCS") {
        frame.save(std::path::Path::new(&dir).join("brain-blame.png")).unwrap();
    }
    // The 12 steps at once: drawn offscreen on this device into a picture in the pane, and the
    // replay exported as a GIF of 12 frames.
    app_mut(&mut h).brain_view.as_mut().unwrap().blame.showing = false;
    h.get_by_label("12 steps").click();
    h.step();
    let id = app(&h).lab.play().shown_thought().unwrap().id;
    wait(&mut h, "the 12 steps drawn", |a| a.brain_view.as_ref().unwrap().figures.settled(a.lab.play().shown_thought()));
    assert_eq!(app(&h).lab.play().shown_thought().unwrap().id, id);
    let before: Vec<_> = std::fs::read_dir(&exports).unwrap().flatten().map(|e| e.path()).collect();
    h.get_by_label("Export replay GIF").click();
    h.step();
    wait(&mut h, "the GIF", |a| !a.brain_view.as_ref().unwrap().figures.busy());
    let gifs: Vec<_> = std::fs::read_dir(&exports)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| !before.contains(p) && p.extension().is_some_and(|x| x == "gif"))
        .collect();
    assert_eq!(gifs.len(), 1, "one GIF written: {gifs:?} ({})", app(&h).brain_view.as_ref().unwrap().figures.status);
    use image::AnimationDecoder;
    let frames_in =
        image::codecs::gif::GifDecoder::new(std::io::BufReader::new(std::fs::File::open(&gifs[0]).unwrap())).unwrap().into_frames().count();
    assert_eq!(frames_in, 12, "one frame per step");
    std::fs::remove_file(&gifs[0]).unwrap();
    // The frame times, for the note (measured, never asserted).
    eprintln!("{}", app(&h).frames.summary());
    assert!(app(&h).frames.worst.contains_key("an export") && app(&h).frames.worst.contains_key("a neuron click"));
}
