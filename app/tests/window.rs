//! The real window under Xvfb (on Mesa's lavapipe when there is no GPU): `flychess --screenshot`
//! opens it, plays the given moves, waits for the fly's answer, saves a PNG and exits.

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
