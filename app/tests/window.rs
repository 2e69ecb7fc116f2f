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
    let data = Path::new(env!("CARGO_TARGET_TMPDIR")).join("default-brain");
    let out = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1400x900x24"])
        .arg(env!("CARGO_BIN_EXE_flychess"))
        .arg("--data")
        .arg(&data)
        .arg("--screenshot")
        .arg(png)
        .args(args)
        .output()
        .expect("xvfb-run runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    image::open(png).expect("a PNG was saved").to_rgba8()
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
