//! The learning curve of the fit at scale (issue 36): what `flychess curve` measures at each
//! number of training positions and keeps in DATA/learning-curve.json, and what the Train tab and
//! the PNG in docs draw from it. A point is one fly, fitted like any other (`flychess_learning::pipeline::train`:
//! the shipped Stockfish-labelled TRAIN rows, then master-move rows of a games dataset streamed
//! beside them), measured on the shipped HOLD (top-1, good move, loss, each with its 95 %
//! interval) and on the human test. How fast the curve falls is a slope per doubling of the
//! positions (least squares over the points), its interval from resampling the same HOLD
//! positions at every point; the seed's figure is drawn beside it. The plot is an SVG drawn here
//! and rendered to PNG by resvg with egui's own font (no system font needed).

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};

/// The seed's held-out loss per doubling of its training positions (its write-up: about −0.026,
/// not flattening at 500,000): the reference line beside ours.
pub const SEED_LOSS_PER_DOUBLING: f64 = -0.026;

/// Resamples of the HOLD positions behind each slope's interval.
pub const RESAMPLES: usize = 2_000;

/// One fly of the curve and its figures.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CurvePoint {
    /// Positions trained on: the shipped TRAIN rows used plus the games rows.
    pub positions: usize,
    pub shipped_positions: usize,
    pub games_positions: usize,
    pub fly: String,
    pub passes: usize,
    /// The fit's wall time (its passes), seconds.
    pub seconds: f64,
    pub top1: f64,
    pub top1_interval: [f64; 2],
    pub good: f64,
    pub good_interval: [f64; 2],
    pub loss: f64,
    pub loss_interval: [f64; 2],
    pub policy_loss: f64,
    pub human_top1: f64,
    pub human_top1_interval: [f64; 2],
}

/// The same points taught by another teacher (`curve --engine-labels DIR`: the games rows taught by
/// Stockfish's own move instead of the master's), with their slopes. A point without games rows
/// (the shipped rows alone) is the master series' own fly.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TeacherSeries {
    /// Who taught the games rows, in words.
    pub teacher: String,
    /// The engine labels' folder.
    pub labels: String,
    pub points: Vec<CurvePoint>,
    /// Points asked for whose games rows are not all labelled yet (`flychess data label`).
    pub not_labelled: Vec<usize>,
    pub loss: Option<Slope>,
    pub top1: Option<Slope>,
    pub human_top1: Option<Slope>,
}

/// One of the seed's fits: positions, HOLD top-1 and HOLD loss where it gave them.
pub type SeedPoint = (usize, Option<f64>, Option<f64>);

/// The seed's own fits (its write-up, 002: "a day on a laptop" and "two days on a laptop"):
/// positions, HOLD top-1 and HOLD loss where it gave them. Its HOLD is 4,096 ChessBench positions,
/// not ours, and its fly reads 1,314 descending neurons of another brain: marked beside our
/// curves for scale, not paired with them.
pub const SEED_POINTS: [SeedPoint; 6] = [
    (200_000, None, Some(2.945)),
    (500_000, Some(0.222), None),
    (3_000_000, Some(0.230), Some(2.868)),
    (6_600_000, Some(0.231), Some(2.853)),
    (17_400_000, Some(0.229), Some(2.853)),
    (26_200_000, Some(0.235), Some(2.840)),
];

/// A slope per doubling of the positions with its 95 % interval.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct Slope {
    pub per_doubling: f64,
    pub interval: [f64; 2],
}

/// The whole curve (`flychess curve --json` prints it; DATA/learning-curve.json keeps it).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LearningCurve {
    pub brain: String,
    pub brain_checksum: String,
    /// The games dataset and its content hash.
    pub games: String,
    pub games_sha256: String,
    pub stockfish_share: f64,
    pub hold_positions: usize,
    pub human_positions: usize,
    pub points: Vec<CurvePoint>,
    /// Points asked for whose games rows are not cached yet (`flychess cache --dataset`).
    pub not_cached: Vec<usize>,
    pub loss: Option<Slope>,
    pub top1: Option<Slope>,
    pub human_top1: Option<Slope>,
    pub seed_loss_per_doubling: f64,
    pub made: String,
    /// The second series: the same points taught by Stockfish's move (absent: not asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<TeacherSeries>,
    /// The third series: the same points taught by Stockfish's every move, the seed's whole
    /// opinion (`curve --every-move-labels DIR`; absent: not asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_move: Option<TeacherSeries>,
}

/// Where `flychess curve` keeps the latest curve.
pub fn path(data: &Path) -> PathBuf {
    data.join("learning-curve.json")
}

/// The latest curve in `data` (None before `flychess curve` has made one).
pub fn read(data: &Path) -> Option<LearningCurve> {
    std::fs::read(path(data)).ok().and_then(|b| serde_json::from_slice(&b).ok())
}

/// The least-squares slope of `values` against log2 of `positions`.
pub fn slope(positions: &[usize], values: &[f64]) -> f64 {
    let n = positions.len() as f64;
    let x: Vec<f64> = positions.iter().map(|&p| (p.max(1) as f64).log2()).collect();
    let (mx, my) = (x.iter().sum::<f64>() / n, values.iter().sum::<f64>() / n);
    let sxy: f64 = x.iter().zip(values).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    sxy / sxx
}

/// The slope per doubling of a per-position figure measured at each point on the same positions
/// (`per_point[k][i]`: point k, position i), with a 95 % interval from resampling the positions
/// (the same draw at every point, so what the points share cancels). None with fewer than two
/// points.
pub fn per_doubling(positions: &[usize], per_point: &[Vec<f64>], resamples: usize, seed: u64) -> Option<Slope> {
    if positions.len() < 2 || per_point.len() != positions.len() {
        return None;
    }
    let n = per_point[0].len();
    if n == 0 || per_point.iter().any(|p| p.len() != n) {
        return None;
    }
    let mean = |v: &Vec<f64>| v.iter().sum::<f64>() / n as f64;
    let value = slope(positions, &per_point.iter().map(mean).collect::<Vec<_>>());
    // splitmix64: a fixed, seeded stream of indices.
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut slopes: Vec<f64> = (0..resamples)
        .map(|_| {
            let mut sums = vec![0f64; per_point.len()];
            for _ in 0..n {
                let i = (next() % n as u64) as usize;
                for (s, p) in sums.iter_mut().zip(per_point) {
                    *s += p[i];
                }
            }
            slope(positions, &sums.iter().map(|s| s / n as f64).collect::<Vec<_>>())
        })
        .collect();
    slopes.sort_by(f64::total_cmp);
    let at = |q: f64| slopes[((q * (resamples - 1) as f64).round() as usize).min(resamples - 1)];
    Some(Slope { per_doubling: value, interval: [at(0.025), at(0.975)] })
}

/// "75k", "1.2M".
pub fn short(positions: usize) -> String {
    if positions >= 1_000_000 { format!("{:.1}M", positions as f64 / 1e6) } else { format!("{}k", (positions as f64 / 1e3).round()) }
}

/// Ticks for an axis over [lo, hi]: about five round numbers.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let raw = span / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * magnitude).find(|s| *s >= raw).unwrap_or(10.0 * magnitude);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + 1e-9 {
        out.push(t);
        t += step;
    }
    out
}

/// One panel of the plot: series of (log2 positions, value, low, high) with a colour and a name.
struct Series<'a> {
    name: &'a str,
    colour: &'a str,
    points: Vec<(f64, f64, f64, f64)>,
    dashed: bool,
    /// Marks only (the seed's points), no line between them.
    marks: bool,
}

/// Where a panel's legend goes: its top right, or its bottom right.
#[derive(Clone, Copy, PartialEq)]
enum Legend {
    Top,
    Bottom,
}

/// One panel's frame: where it sits in the plot (its top left corner and its size), its title,
/// the label of its y axis and where its legend goes.
struct Panel<'a> {
    origin: (f64, f64),
    size: (f64, f64),
    title: &'a str,
    y_label: &'a str,
    legend: Legend,
}

/// Draws `series` into `svg` in `frame`, the x axis labelled at the positions `xs`.
fn panel(svg: &mut String, frame: &Panel, xs: &[usize], series: &[Series]) {
    use std::fmt::Write;
    let Panel { origin: (ox, oy), size: (w, h), title, y_label, legend } = *frame;
    let all: Vec<f64> = series.iter().flat_map(|s| s.points.iter().flat_map(|p| [p.2, p.3])).filter(|v| v.is_finite()).collect();
    let (mut lo, mut hi) = all.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.12).max(1e-3);
    let (lo, hi) = (lo - pad, hi + pad);
    let lx: Vec<f64> = xs.iter().map(|&p| (p.max(1) as f64).log2()).collect();
    // The axis holds every point drawn, labelled or not.
    let drawn = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (x0, x1) = lx.iter().copied().chain(drawn).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
    let (x0, x1) = (x0 - 0.3, x1 + 0.3);
    // The legend's first line: below the title, or far enough up from the bottom for every line.
    let legend_top = match legend {
        Legend::Top => oy + 58.0,
        Legend::Bottom => oy + h - 70.0 - 20.0 * series.len() as f64,
    };
    let sx = |x: f64| ox + 70.0 + (x - x0) / (x1 - x0).max(1e-9) * (w - 90.0);
    let sy = |y: f64| oy + 40.0 + (hi - y) / (hi - lo) * (h - 90.0);
    let _ = write!(svg, r##"<text x="{}" y="{}" font-size="18" text-anchor="middle" fill="#222">{title}</text>"##, ox + w / 2.0, oy + 24.0);
    let _ = write!(
        svg,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
        ox + 70.0,
        oy + 40.0,
        w - 90.0,
        h - 90.0
    );
    for t in ticks(lo, hi) {
        let y = sy(t);
        let _ = write!(
            svg,
            r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#e4e4e4"/><text x="{}" y="{}" font-size="13" text-anchor="end" fill="#444">{}</text>"##,
            ox + 70.0,
            ox + w - 20.0,
            ox + 64.0,
            y + 4.0,
            if hi - lo < 0.2 { format!("{t:.3}") } else { format!("{t:.2}") }
        );
    }
    for (&p, &x) in xs.iter().zip(&lx) {
        let _ = write!(
            svg,
            r##"<text x="{}" y="{}" font-size="13" text-anchor="middle" fill="#444">{}</text>"##,
            sx(x),
            oy + h - 32.0,
            short(p)
        );
    }
    let _ = write!(
        svg,
        r##"<text x="{}" y="{}" font-size="14" text-anchor="middle" fill="#222">positions trained on (doubling to the right)</text>"##,
        ox + 70.0 + (w - 90.0) / 2.0,
        oy + h - 10.0
    );
    let _ = write!(
        svg,
        r##"<text transform="translate({},{}) rotate(-90)" font-size="14" text-anchor="middle" fill="#222">{y_label}</text>"##,
        ox + 18.0,
        oy + 40.0 + (h - 90.0) / 2.0
    );
    for (k, s) in series.iter().enumerate() {
        let path: Vec<String> = s.points.iter().map(|p| format!("{:.1},{:.1}", sx(p.0), sy(p.1))).collect();
        let dash = if s.dashed { r#" stroke-dasharray="8 6""# } else { "" };
        if s.marks {
            for p in &s.points {
                let (x, y) = (sx(p.0), sy(p.1));
                let _ = write!(
                    svg,
                    r##"<rect x="{}" y="{}" width="10" height="10" fill="none" stroke="{}" stroke-width="2"/>"##,
                    x - 5.0,
                    y - 5.0,
                    s.colour
                );
            }
            let ly = legend_top + 20.0 * k as f64;
            let _ = write!(
                svg,
                r##"<rect x="{}" y="{}" width="10" height="10" fill="none" stroke="{}" stroke-width="2"/><text x="{}" y="{}" font-size="13" fill="#222">{}</text>"##,
                ox + w - 293.0,
                ly - 5.0,
                s.colour,
                ox + w - 270.0,
                ly + 4.0,
                s.name
            );
            continue;
        }
        let _ = write!(svg, r##"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"{dash}/>"##, path.join(" "), s.colour);
        for p in &s.points {
            if p.2 < p.3 {
                let _ = write!(
                    svg,
                    r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="{}" stroke-width="2"/>"##,
                    sy(p.2),
                    sy(p.3),
                    s.colour,
                    x = sx(p.0)
                );
            }
            if !s.dashed {
                let _ = write!(svg, r##"<circle cx="{}" cy="{}" r="4" fill="{}"/>"##, sx(p.0), sy(p.1), s.colour);
            }
        }
        let ly = legend_top + 20.0 * k as f64;
        let _ = write!(
            svg,
            r##"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{}" stroke-width="2"{dash}/><text x="{}" y="{}" font-size="13" fill="#222">{}</text>"##,
            ox + w - 300.0,
            ox + w - 276.0,
            s.colour,
            ox + w - 270.0,
            ly + 4.0,
            s.name
        );
    }
}

/// The plot as SVG: HOLD loss (with the seed's slope from our first point) and top-1 (HOLD and
/// the human test), each point with its 95 % interval.
pub fn svg(curve: &LearningCurve) -> String {
    let engine = curve.engine.as_ref().filter(|e| !e.points.is_empty());
    let every = curve.every_move.as_ref().filter(|e| !e.points.is_empty());
    let mut xs: Vec<usize> = curve.points.iter().map(|p| p.positions).collect();
    xs.extend(engine.iter().chain(&every).flat_map(|e| e.points.iter().map(|p| p.positions)));
    // The seed's positions widen the axis; each is labelled unless one of ours is close by.
    let ours = xs.clone();
    let near = |a: usize, b: usize| ((a.max(1) as f64).log2() - (b.max(1) as f64).log2()).abs() < 0.7;
    xs.extend(SEED_POINTS.iter().map(|p| p.0).filter(|&p| !ours.iter().any(|&o| near(o, p))));
    xs.sort_unstable();
    xs.dedup();
    let lx = |p: &CurvePoint| (p.positions.max(1) as f64).log2();
    let log = |n: usize| (n.max(1) as f64).log2();
    let line = |name, colour, points: Vec<(f64, f64, f64, f64)>| Series { name, colour, points, dashed: false, marks: false };
    let loss_of = |points: &[CurvePoint]| points.iter().map(|p| (lx(p), p.loss, p.loss_interval[0], p.loss_interval[1])).collect();
    let mut left = vec![line("HOLD loss, master's move", "#1f6fb4", loss_of(&curve.points))];
    if let Some(e) = engine {
        left.push(line("HOLD loss, Stockfish's move", "#2a9d3a", loss_of(&e.points)));
    }
    if let Some(e) = every {
        left.push(line("HOLD loss, Stockfish's every move", "#7b2cbf", loss_of(&e.points)));
    }
    if let Some(first) = curve.points.first() {
        let at = |p: &CurvePoint| first.loss + curve.seed_loss_per_doubling * (lx(p) - lx(first));
        left.push(Series {
            name: "the seed's slope (−0.026 a doubling)",
            colour: "#999999",
            points: curve.points.iter().map(|p| (lx(p), at(p), at(p), at(p))).collect(),
            dashed: true,
            marks: false,
        });
    }
    let seed_marks = |pick: fn(&SeedPoint) -> Option<f64>, scale: f64| Series {
        name: "the seed's fits (its own HOLD)",
        colour: "#b5179e",
        points: SEED_POINTS.iter().filter_map(|p| pick(p).map(|v| (log(p.0), scale * v, scale * v, scale * v))).collect(),
        dashed: false,
        marks: true,
    };
    left.push(seed_marks(|p| p.2, 1.0));
    let pct = |v: f64| 100.0 * v;
    let top1_of =
        |points: &[CurvePoint]| points.iter().map(|p| (lx(p), pct(p.top1), pct(p.top1_interval[0]), pct(p.top1_interval[1]))).collect();
    let human_of = |points: &[CurvePoint]| {
        points.iter().map(|p| (lx(p), pct(p.human_top1), pct(p.human_top1_interval[0]), pct(p.human_top1_interval[1]))).collect()
    };
    let mut right = vec![line("HOLD top-1, master's move", "#1f6fb4", top1_of(&curve.points))];
    if let Some(e) = engine {
        right.push(line("HOLD top-1, Stockfish's move", "#2a9d3a", top1_of(&e.points)));
    }
    if let Some(e) = every {
        right.push(line("HOLD top-1, Stockfish's every move", "#7b2cbf", top1_of(&e.points)));
    }
    right.push(line("human test top-1, master's move", "#d9822b", human_of(&curve.points)));
    if let Some(e) = engine {
        right.push(Series { dashed: true, ..line("human test top-1, Stockfish's move", "#d9822b", human_of(&e.points)) });
    }
    right.push(seed_marks(|p| p.1, 100.0));
    let mut svg = String::from(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="1400" height="580" viewBox="0 0 1400 580" font-family="Ubuntu"><rect width="1400" height="580" fill="white"/>"##,
    );
    let loss =
        Panel { origin: (0.0, 0.0), size: (700.0, 520.0), title: "Loss on HOLD (lower is better)", y_label: "loss", legend: Legend::Top };
    panel(&mut svg, &loss, &xs, &left);
    let top1 = Panel { origin: (700.0, 0.0), size: (700.0, 520.0), title: "Top-1 (%)", y_label: "top-1 (%)", legend: Legend::Bottom };
    panel(&mut svg, &top1, &xs, &right);
    // Two lines that fit the width: the slope, then what was fitted on what (shortened).
    let per = |s: Option<Slope>| {
        s.map(|s| format!("{:+.2} [{:+.2}, {:+.2}]", 100.0 * s.per_doubling, 100.0 * s.interval[0], 100.0 * s.interval[1]))
    };
    let slope_text = match curve.loss {
        Some(s) => format!(
            "loss per doubling {:+.4} [{:+.4}, {:+.4}] (seed {:+.3}); top-1 points per doubling: master {}{}; {}",
            s.per_doubling,
            s.interval[0],
            s.interval[1],
            curve.seed_loss_per_doubling,
            per(curve.top1).unwrap_or_else(|| "—".into()),
            [(engine, "Stockfish"), (every, "every move")]
                .iter()
                .filter_map(|(e, who)| e.map(|e| format!(", {who} {}", per(e.top1).unwrap_or_else(|| "—".into()))))
                .collect::<String>(),
            curve.brain
        ),
        None => format!("{} (one point: no slope yet)", curve.brain),
    };
    let games_text = flychess_brain::files::quote(&curve.games, 170);
    use std::fmt::Write;
    for (y, text) in [(540, &slope_text), (562, &games_text)] {
        let _ = write!(svg, r##"<text x="700" y="{y}" font-size="14" text-anchor="middle" fill="#444">{}</text>"##, escape(text));
    }
    svg.push_str("</svg>");
    svg
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The plot as PNG bytes (resvg, egui's Ubuntu font).
pub fn png(curve: &LearningCurve) -> Result<Vec<u8>> {
    let mut options = resvg::usvg::Options::default();
    options.fontdb_mut().load_font_data(epaint_default_fonts::UBUNTU_LIGHT.to_vec());
    options.font_family = "Ubuntu".into();
    let tree = resvg::usvg::Tree::from_str(&svg(curve), &options).map_err(|e| anyhow!("the curve's SVG: {e}"))?;
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| anyhow!("an empty plot"))?;
    resvg::render(&tree, resvg::tiny_skia::Transform::identity(), &mut pixmap.as_mut());
    let image = image::RgbaImage::from_raw(size.width(), size.height(), pixmap.take()).ok_or_else(|| anyhow!("the plot's pixels"))?;
    crate::figure_job::png_bytes(&image)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(positions: usize, loss: f64, top1: f64) -> CurvePoint {
        CurvePoint {
            positions,
            shipped_positions: positions.min(75_329),
            games_positions: positions.saturating_sub(75_329),
            fly: format!("curve-{positions}"),
            passes: 10,
            seconds: 1.0,
            top1,
            top1_interval: [top1 - 0.01, top1 + 0.01],
            good: 0.3,
            good_interval: [0.29, 0.31],
            loss,
            loss_interval: [loss - 0.02, loss + 0.02],
            policy_loss: loss - 0.1,
            human_top1: top1 + 0.01,
            human_top1_interval: [top1, top1 + 0.02],
        }
    }

    #[test]
    fn a_slope_per_doubling_is_found_with_an_interval_that_holds_it() {
        // Per-position losses falling exactly 0.03 a doubling plus noise shared by every point.
        let positions = [75_000, 150_000, 300_000, 600_000];
        let noise: Vec<f64> = (0..500).map(|i| ((i * 7919) % 1000) as f64 / 1000.0).collect();
        let per_point: Vec<Vec<f64>> = (0..4).map(|k| noise.iter().map(|n| 3.0 + n - 0.03 * k as f64).collect()).collect();
        let s = per_doubling(&positions, &per_point, 400, 1).unwrap();
        assert!((s.per_doubling + 0.03).abs() < 1e-9, "{s:?}");
        // The shared noise cancels: the interval is tight around the slope.
        assert!(s.interval[0] <= -0.03 + 1e-9 && s.interval[1] >= -0.03 - 1e-9 && s.interval[1] - s.interval[0] < 1e-6, "{s:?}");
        // Noise that differs point to point widens it and it still holds the truth.
        let per_point: Vec<Vec<f64>> =
            (0..4).map(|k| noise.iter().enumerate().map(|(i, n)| 3.0 + n * ((i + k) % 3) as f64 - 0.03 * k as f64).collect()).collect();
        let s = per_doubling(&positions, &per_point, 400, 1).unwrap();
        assert!(s.interval[1] - s.interval[0] > 1e-3 && s.interval[0] < -0.03 && s.interval[1] > -0.03, "{s:?}");
        assert!(per_doubling(&positions[..1], &per_point[..1], 400, 1).is_none(), "one point has no slope");
    }

    #[test]
    fn the_plot_is_drawn_with_its_text() {
        let curve = LearningCurve {
            brain: "FlyWire v783".into(),
            brain_checksum: "x".into(),
            // As long as a real games dataset's description: the caption must still fit the image.
            games: "book_1.02.pgn.zst: every position before a move (a sample of 1200000), seed 1; HOLD: the human test (4096 games no shipped row came from, one position each), VAL 2048 more; and more words, as many as a long name of a dataset made by hand can have, and then some more of them".into(),
            games_sha256: "y".into(),
            stockfish_share: 0.25,
            hold_positions: 4096,
            human_positions: 4096,
            points: vec![point(75_329, 3.0, 0.166), point(150_000, 2.97, 0.18), point(300_000, 2.95, 0.19)],
            not_cached: vec![600_000],
            loss: Some(Slope { per_doubling: -0.025, interval: [-0.03, -0.02] }),
            top1: None,
            human_top1: None,
            seed_loss_per_doubling: SEED_LOSS_PER_DOUBLING,
            made: "2026-12-03".into(),
            engine: Some(TeacherSeries {
                teacher: "Stockfish's move".into(),
                labels: "labels".into(),
                points: vec![point(75_329, 3.0, 0.166), point(150_000, 2.96, 0.185)],
                not_labelled: vec![300_000],
                loss: None,
                top1: None,
                human_top1: None,
            }),
            every_move: Some(TeacherSeries {
                teacher: "Stockfish's every move".into(),
                labels: "labels-every".into(),
                points: vec![point(75_329, 3.0, 0.166), point(150_000, 2.95, 0.19)],
                not_labelled: vec![300_000],
                loss: None,
                top1: Some(Slope { per_doubling: 0.012, interval: [0.004, 0.02] }),
                human_top1: None,
            }),
        };
        let svg = svg(&curve);
        assert!(svg.contains("75k") && svg.contains("300k") && svg.contains("the seed"), "{svg}");
        // The third series is drawn, named in the legend, and its slope is in the caption.
        assert!(svg.contains("HOLD top-1, Stockfish's every move"), "{svg}");
        assert!(svg.contains("every move +1.20 [+0.40, +2.00]"), "{svg}");
        let bytes = png(&curve).unwrap();
        let img = image::load_from_memory(&bytes).unwrap().to_rgba8();
        assert_eq!(img.dimensions(), (1400, 580));
        // The caption lies inside the image: nothing drawn in the outer 12 pixels of its band.
        let cut =
            (525..580).flat_map(|y| (0..12).chain(1388..1400).map(move |x| (x, y))).filter(|&(x, y)| img.get_pixel(x, y)[0] < 200).count();
        assert_eq!(cut, 0, "the caption runs off the image");
        // Text and lines were drawn: dark pixels in the title band and blue ones in the plot.
        let dark_in_title = (300..400).flat_map(|x| (8..30).map(move |y| (x, y))).filter(|&(x, y)| img.get_pixel(x, y)[0] < 100).count();
        assert!(dark_in_title > 20, "the title's glyphs are drawn ({dark_in_title} dark pixels)");
        let blue = img.pixels().filter(|p| p[2] > 150 && p[0] < 80).count();
        assert!(blue > 200, "the curve is drawn ({blue} blue pixels)");
        // The second teacher's series (green) and the seed's marks (magenta) are drawn too, and
        // the axis reaches the seed's 26.2 M.
        let green = img.pixels().filter(|p| p[1] > 140 && p[0] < 80 && p[2] < 90).count();
        assert!(green > 100, "the Stockfish series is drawn ({green} green pixels)");
        let magenta = img.pixels().filter(|p| p[0] > 150 && p[2] > 130 && p[1] < 60).count();
        assert!(magenta > 40, "the seed's points are marked ({magenta} magenta pixels)");
        assert!(svg.contains("26.2M") && svg.contains("Stockfish's move"), "{svg}");
    }
}
