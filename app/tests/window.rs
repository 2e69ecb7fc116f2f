//! The real window under Xvfb (on Mesa's lavapipe when there is no GPU): `flychess --screenshot`
//! opens it, plays the given moves, waits for the fly's answer, saves a PNG and exits.
// Tests may touch files, threads and processes; app/clippy.toml forbids them to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::path::Path;
use std::process::Command;

fn xvfb() -> bool {
    let found = Command::new("sh").arg("-c").arg("command -v xvfb-run").output().is_ok_and(|o| o.status.success());
    if !found && std::env::var("FLYCHESS_CI").is_ok_and(|v| v == "1") {
        panic!("CI installs xvfb");
    }
    found
}

fn screenshot(args: &[&str], png: &Path) -> image::RgbaImage {
    screenshot_with(args, png, "cpu").0
}

/// The window's screenshot and what it logged.
fn screenshot_with(args: &[&str], png: &Path, engine: &str) -> (image::RgbaImage, String) {
    let data = Path::new(env!("CARGO_TARGET_TMPDIR")).join("default-brain");
    let out = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1400x900x24"])
        .arg(env!("CARGO_BIN_EXE_flychess"))
        .arg("--data")
        .arg(&data)
        .arg("--screenshot")
        .arg(png)
        .args(args)
        .env("FLYCHESS_ENGINE", engine)
        .output()
        .expect("xvfb-run runs");
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{log}");
    (image::open(png).expect("a PNG was saved").to_rgba8(), log)
}

#[test]
fn the_window_plays_the_given_moves_and_saves_a_screenshot() {
    if !xvfb() {
        eprintln!("skipping: no xvfb-run");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = screenshot(&["--moves", "e2e4 e7e5 g1f3", "--tab", "play"], &dir.path().join("play.png"));
    assert_eq!(img.dimensions(), (1280, 800));
    // The board's light and dark squares (brown theme) are on screen.
    let light = img.pixels().filter(|p| p.0[..3] == [240, 217, 181]).count();
    let dark = img.pixels().filter(|p| p.0[..3] == [181, 136, 99]).count();
    assert!(light > 50_000 && dark > 50_000, "light {light}, dark {dark}");
}

/// Warm (inferno-coloured) pixels in the middle of the window: lit neurons of the cloud.
fn lit_neurons(img: &image::RgbaImage) -> usize {
    let (w, h) = img.dimensions();
    img.enumerate_pixels()
        .filter(|(x, y, _)| *x > w / 8 && *x < w * 3 / 4 && *y > h / 8 && *y < h * 7 / 8)
        .filter(|(_, _, p)| p.0[0] > 150 && p.0[0] as i32 > p.0[2] as i32 + 60)
        .count()
}

#[test]
fn the_brain_tab_shows_the_cloud_mid_think_on_either_engine() {
    if !xvfb() {
        eprintln!("skipping: no xvfb-run");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The CPU engine (what a software adapter picks), its rates uploaded once per think.
    let (cpu, log) = screenshot_with(&["--moves", "e2e4", "--tab", "brain"], &dir.path().join("cpu.png"), "cpu");
    assert!(log.contains("simulator: CPU engine"), "which engine thought: {log}");
    let lit_cpu = lit_neurons(&cpu);
    assert!(lit_cpu > 2_000, "{lit_cpu} lit pixels");
    // The GPU engine on the window's own device, its rates buffer bound by the view as it is.
    let (gpu, log) = screenshot_with(&["--moves", "e2e4", "--tab", "brain"], &dir.path().join("gpu.png"), "gpu");
    assert!(log.contains("simulator: GPU engine on the window's device"), "the GPU engine must think, not fall back: {log}");
    let lit_gpu = lit_neurons(&gpu);
    assert!(lit_gpu > 2_000, "{lit_gpu} lit pixels");
    // Both engines give the same rates: the same picture, give or take antialiasing.
    let diff = (lit_cpu as f64 - lit_gpu as f64).abs() / lit_cpu as f64;
    assert!(diff < 0.05, "cpu {lit_cpu}, gpu {lit_gpu}");
}

#[test]
fn without_a_display_the_app_says_what_failed_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_flychess"))
        .arg("--data")
        .arg(dir.path())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .output()
        .expect("the binary runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("could not open a window") && err.contains("WGPU_BACKEND") && err.contains("mesa-vulkan-drivers"), "{err}");
    assert!(!err.contains("panicked"), "a message, not a panic: {err}");
}

/// The race between the thinker's submissions and a resize (wgpu-core's `GpuWaitTimeout` inside
/// `Surface::configure`, seen in CI when the GPU engine thought during the window's first resize)
/// is logged, not fatal; every other wgpu error on the window's device still is.
#[test]
fn a_resize_that_loses_the_race_with_the_engine_is_not_fatal_and_other_wgpu_errors_are() {
    use eframe::wgpu::{self, wgc};
    let busy = || wgpu::Error::Validation {
        source: Box::new(wgc::error::ContextError {
            fn_ident: "Surface::configure",
            source: Box::new(wgc::present::ConfigureSurfaceError::GpuWaitTimeout),
            label: String::new(),
        }),
        description: "Validation Error".into(),
    };
    assert!(flychess_window::ui::is_surface_busy(&busy()));
    let ctx = eframe::egui::Context::default();
    flychess_window::ui::on_device_error(busy(), &ctx);
    // Another surface error, and the same error from another call, stay fatal.
    let other = wgpu::Error::Validation {
        source: Box::new(wgc::error::ContextError {
            fn_ident: "Surface::configure",
            source: Box::new(wgc::present::ConfigureSurfaceError::ZeroArea),
            label: String::new(),
        }),
        description: "Validation Error".into(),
    };
    assert!(!flychess_window::ui::is_surface_busy(&other));
    assert!(
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| flychess_window::ui::on_device_error(
            other,
            &eframe::egui::Context::default()
        )))
        .is_err()
    );
    // On a real device (lavapipe without a GPU) with the handler installed, a real validation
    // error still panics. A machine with no graphics adapter at all skips this part (CI has one).
    if flychess_brain::brain::gpu::best_adapter().is_err() {
        assert!(std::env::var_os("FLYCHESS_CI").is_none(), "CI installs Mesa's lavapipe");
        eprintln!("the real device's part skipped: no graphics adapter (apt-get install libvulkan1 mesa-vulkan-drivers)");
        return;
    }
    let rs =
        egui_kittest::wgpu::create_render_state(egui_kittest::wgpu::default_wgpu_setup(), eframe::egui_wgpu::RendererOptions::PREDICTABLE);
    flychess_window::ui::install_device_error_handler(&rs.device, ctx);
    let device = rs.device.clone();
    let bad = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        // A size that is not a multiple of 4 cannot be mapped at creation.
        device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 3,
            usage: wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: true,
        })
    }));
    assert!(bad.is_err(), "a validation error on the window's device must stay fatal");
}
