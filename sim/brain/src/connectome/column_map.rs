//! Is the eye right? The real column map of the right optic lobe (FlyWire v783's column
//! assignment, Matsliah et al. 2024: every Mi1, L1, … of the right eye with its column's lattice
//! coordinates; `sim/brain/data/flywire783-columns/`) against the eye `retina` recovers from the
//! wiring alone. Each recovered column is anchored on one Mi1, so the two maps pair up by the
//! Mi1's root id. The recovered sheet is brought onto the real lattice by the best similarity
//! transform (rotation or mirror, scale and shift; least squares), and the comparison reports the
//! median distance left in column spacings, how many of each column's real lattice neighbours are
//! among its nearest columns on the recovered sheet, and both figures for the same transform fitted
//! to a shuffled pairing (what no map at all would score).

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use nalgebra::Matrix2;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::Neurons;
use super::retina::{ANCHOR, Sheet};
use super::rules::Side;

/// Largest unpacked table read (the real one is about 1 MB).
const MAX_TABLE_BYTES: u64 = 64 << 20;

/// One cell of the map.
#[derive(Clone, Debug, PartialEq)]
pub struct MappedCell {
    pub cell_type: String,
    pub column: u32,
    /// The lattice coordinates (p, q): neighbours differ by (±1, 0), (0, ±1) or ±(1, 1).
    pub p: i32,
    pub q: i32,
}

/// The real map: root id → its cell and column.
#[derive(Clone, Debug, Default)]
pub struct ColumnMap {
    pub cells: HashMap<i64, MappedCell>,
}

/// A column's place in the plane, one column spacing between neighbours.
pub fn lattice(p: i32, q: i32) -> [f64; 2] {
    [p as f64 - 0.5 * q as f64, q as f64 * 3f64.sqrt() / 2.0]
}

impl ColumnMap {
    /// Reads `column_assignment.csv.gz` (or the same table unpacked).
    pub fn read(path: &Path) -> Result<ColumnMap, String> {
        let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut text = String::new();
        let gz = path.extension().is_some_and(|e| e == "gz");
        let reader: Box<dyn Read> = if gz { Box::new(flate2::read::GzDecoder::new(file)) } else { Box::new(file) };
        reader.take(MAX_TABLE_BYTES + 1).read_to_string(&mut text).map_err(|e| format!("{}: {e}", path.display()))?;
        if text.len() as u64 > MAX_TABLE_BYTES {
            return Err(format!("{}: more than {} MB unpacked: not a column table", path.display(), MAX_TABLE_BYTES >> 20));
        }
        ColumnMap::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The table as CSV text: a header naming `root_id`, `type`, `column_id`, `p`, `q`.
    pub fn parse(text: &str) -> Result<ColumnMap, String> {
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().ok_or("empty table")?.split(',').map(str::trim).collect();
        let at = |name: &str| header.iter().position(|h| *h == name).ok_or_else(|| format!("no {name} column"));
        let (root, kind, column, p, q) = (at("root_id")?, at("type")?, at("column_id")?, at("p")?, at("q")?);
        let mut cells = HashMap::new();
        for (k, line) in lines.enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split(',').collect();
            let field = |i: usize| f.get(i).map(|s| s.trim()).ok_or_else(|| format!("line {}: too few fields", k + 2));
            let number = |i: usize| -> Result<i64, String> {
                let s = field(i)?;
                s.parse::<i64>().map_err(|_| format!("line {}: {:?} is not a whole number", k + 2, s.chars().take(40).collect::<String>()))
            };
            let small = |i: usize| -> Result<i32, String> {
                i32::try_from(number(i)?).map_err(|_| format!("line {}: a lattice coordinate out of range", k + 2))
            };
            let cell = MappedCell {
                cell_type: field(kind)?.to_string(),
                column: u32::try_from(number(column)?).map_err(|_| format!("line {}: a column id out of range", k + 2))?,
                p: small(p)?,
                q: small(q)?,
            };
            if cells.insert(number(root)?, cell).is_some() {
                return Err(format!("line {}: root id {} twice", k + 2, field(root)?));
            }
        }
        if cells.is_empty() {
            return Err("no cells".into());
        }
        Ok(ColumnMap { cells })
    }
}

/// The comparison `brain info --json` reports as `eye_map_vs_columns`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EyeMapVsColumns {
    pub eye: String,
    /// Columns of the real map (its Mi1 cells) and recovered columns whose Mi1 it places.
    pub columns_real: usize,
    pub columns_compared: usize,
    /// Distance from each recovered column (after the best similarity transform) to its real
    /// place, in column spacings.
    pub median_error_columns: f64,
    pub p90_error_columns: f64,
    /// The transform needed a mirror (the recovered sheet's orientation is its own choice).
    pub mirrored: bool,
    /// Share of each column's real lattice neighbours that are among its as-many nearest columns on
    /// the recovered sheet (1: the sheet keeps every neighbour).
    pub neighbours_kept: f64,
    /// The same two figures with the pairing shuffled (chance).
    pub shuffled_median_error_columns: f64,
    pub shuffled_neighbours_kept: f64,
    pub method: String,
}

/// Fits `y ≈ s·R·x + t` (R orthogonal: a rotation or a mirror) by least squares; returns the
/// residual distances and whether R mirrors.
pub fn similarity_residuals(x: &[[f64; 2]], y: &[[f64; 2]]) -> (Vec<f64>, bool) {
    let n = x.len().min(y.len()) as f64;
    let mean = |v: &[[f64; 2]]| {
        let s = v.iter().fold([0.0, 0.0], |a, p| [a[0] + p[0], a[1] + p[1]]);
        [s[0] / n, s[1] / n]
    };
    let (mx, my) = (mean(x), mean(y));
    let mut m = Matrix2::zeros();
    let mut xx = 0.0;
    for (a, b) in x.iter().zip(y) {
        let (a, b) = ([a[0] - mx[0], a[1] - mx[1]], [b[0] - my[0], b[1] - my[1]]);
        m += Matrix2::new(b[0] * a[0], b[0] * a[1], b[1] * a[0], b[1] * a[1]);
        xx += a[0] * a[0] + a[1] * a[1];
    }
    let svd = m.svd(true, true);
    let (Some(u), Some(v_t)) = (svd.u, svd.v_t) else { return (vec![f64::NAN; x.len()], false) };
    let r = u * v_t;
    let scale = svd.singular_values.sum() / xx.max(1e-300);
    let residuals = x
        .iter()
        .zip(y)
        .map(|(a, b)| {
            let q = r * nalgebra::Vector2::new(a[0] - mx[0], a[1] - mx[1]) * scale;
            ((q[0] + my[0] - b[0]).powi(2) + (q[1] + my[1] - b[1]).powi(2)).sqrt()
        })
        .collect();
    (residuals, r.determinant() < 0.0)
}

/// Of each point's real lattice neighbours (real places one spacing apart), the share found among
/// its as-many nearest points on the recovered sheet.
pub fn neighbours_kept(recovered: &[[f64; 2]], real: &[[f64; 2]]) -> f64 {
    let d2 = |a: &[f64; 2], b: &[f64; 2]| (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2);
    let (mut kept, mut total) = (0usize, 0usize);
    for i in 0..real.len() {
        let truth: Vec<usize> = (0..real.len()).filter(|&j| j != i && d2(&real[i], &real[j]) < 1.1).collect();
        if truth.is_empty() {
            continue;
        }
        let mut order: Vec<usize> = (0..recovered.len()).filter(|&j| j != i).collect();
        order.sort_by(|&a, &b| d2(&recovered[i], &recovered[a]).total_cmp(&d2(&recovered[i], &recovered[b])));
        kept += order[..truth.len().min(order.len())].iter().filter(|j| truth.contains(j)).count();
        total += truth.len();
    }
    kept as f64 / total.max(1) as f64
}

fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(f64::total_cmp);
    s[((q * (s.len() - 1) as f64).round() as usize).min(s.len() - 1)]
}

/// The right eye's recovered columns against the real map (None when no recovered column's Mi1
/// is in the map).
pub fn compare(neurons: &Neurons, sheet: &Sheet, map: &ColumnMap) -> Option<EyeMapVsColumns> {
    let columns_real = map.cells.values().filter(|c| c.cell_type == ANCHOR).count();
    let (mut recovered, mut real) = (Vec::new(), Vec::new());
    for (i, column) in sheet.column_of.iter().enumerate() {
        let Some(c) = column else { continue };
        if neurons.side[i] != Side::Right || neurons.type_name(i) != ANCHOR {
            continue;
        }
        if let Some(cell) = map.cells.get(&neurons.body_id[i]).filter(|m| m.cell_type == ANCHOR) {
            recovered.push(sheet.columns[*c as usize].at);
            real.push(lattice(cell.p, cell.q));
        }
    }
    if recovered.len() < 3 {
        return None;
    }
    let (errors, mirrored) = similarity_residuals(&recovered, &real);
    // Chance: the same fit to a shuffled pairing (a seeded random permutation).
    let mut shuffled = recovered.clone();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    let n = recovered.len();
    let (shuffled_errors, _) = similarity_residuals(&shuffled, &real);
    Some(EyeMapVsColumns {
        eye: "right".into(),
        columns_real,
        columns_compared: n,
        median_error_columns: quantile(&errors, 0.5),
        p90_error_columns: quantile(&errors, 0.9),
        mirrored,
        neighbours_kept: neighbours_kept(&recovered, &real),
        shuffled_median_error_columns: quantile(&shuffled_errors, 0.5),
        shuffled_neighbours_kept: neighbours_kept(&shuffled, &real),
        method: "recovered columns paired with the real map by their Mi1's root id; best similarity transform (rotation or mirror, scale, shift; least squares) onto the real lattice, one column spacing = 1".into(),
    })
}

/// The eye of a brain built from FlyWire's tables recovered again from its wiring (the brain
/// file keeps the squares, not the sheet), checked to give the brain file's eye, and compared
/// with the real map. None for a brain whose eye was not recovered from wiring, and for a control
/// brain (its wiring was changed after its eye was placed).
pub fn eye_map_vs_columns(connectome: &super::Connectome, map: &ColumnMap) -> Result<Option<EyeMapVsColumns>, String> {
    if connectome.eye.recovered.is_none() || !matches!(connectome.provenance.control, super::Control::None) {
        return Ok(None);
    }
    let csr = &connectome.inputs;
    let edges: Vec<(u32, u32, u32)> =
        (0..connectome.neurons.len()).flat_map(|post| csr.row(post).map(move |k| (post as u32, csr.pre[k], csr.synapses[k]))).collect();
    let sheet = super::retina::recover(&connectome.neurons, &edges)?;
    if sheet.eye.cells != connectome.eye.cells {
        return Err("the eye recovered again from the brain's wiring differs from the one in its file (built by another version?): rebuild the brain".into());
    }
    Ok(compare(&connectome.neurons, &sheet, map))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turned_mirrored_scaled_lattice_is_matched_exactly_and_a_shuffled_one_is_not() {
        let real: Vec<[f64; 2]> = (-6..=6).flat_map(|p| (-6..=6).map(move |q| lattice(p, q))).collect();
        let (c, s) = (0.6f64.cos(), 0.6f64.sin());
        // Turned, mirrored (y → −y), scaled by 0.02 and shifted: what an eigenmap might give.
        let recovered: Vec<[f64; 2]> =
            real.iter().map(|p| [0.02 * (c * p[0] - s * p[1]) + 3.0, -0.02 * (s * p[0] + c * p[1]) - 1.0]).collect();
        let (errors, mirrored) = similarity_residuals(&recovered, &real);
        assert!(mirrored);
        assert!(errors.iter().all(|e| *e < 1e-9), "{:?}", quantile(&errors, 1.0));
        assert!((neighbours_kept(&recovered, &real) - 1.0).abs() < 1e-12);
        // Neighbours in the lattice: six for an inner column.
        let centre = real.iter().position(|p| p[0].abs() < 1e-9 && p[1].abs() < 1e-9).unwrap();
        assert_eq!(real.iter().filter(|p| ((p[0] - real[centre][0]).powi(2) + (p[1] - real[centre][1]).powi(2)).sqrt() - 1.0 < 1e-9 && **p != real[centre]).count(), 6);
        let n = real.len();
        let shuffled: Vec<[f64; 2]> = (0..n).map(|i| recovered[(i * 85) % n]).collect();
        let (errors, _) = similarity_residuals(&shuffled, &real);
        assert!(quantile(&errors, 0.5) > 2.0, "a shuffled map is far off ({})", quantile(&errors, 0.5));
        assert!(neighbours_kept(&shuffled, &real) < 0.2);
    }

    #[test]
    fn the_real_table_reads_and_a_bad_one_says_what_is_wrong() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/flywire783-columns/column_assignment.csv.gz");
        let map = ColumnMap::read(&path).unwrap();
        assert_eq!(map.cells.len(), 22_684);
        assert_eq!(map.cells.values().filter(|c| c.cell_type == "Mi1").count(), 796);
        let err = ColumnMap::parse("root_id,type,column_id,p,q\n1,Mi1,1,2,x\n").unwrap_err();
        assert!(err.contains("line 2") && err.contains("\"x\""), "{err}");
        assert!(ColumnMap::parse("root_id,type,p,q\n").unwrap_err().contains("column_id"));
        assert!(ColumnMap::parse("root_id,type,column_id,p,q\n1,Mi1,1,2,3\n1,L1,1,2,3\n").unwrap_err().contains("twice"));
    }
}
