//! Small hand-made MaleCNS-schema tables for the build tests, written with the same feather writer
//! the stand-in uses, and read by the same build the real release goes through.

#![allow(dead_code)]

pub mod default_brain;
pub mod small_brain;

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int64Builder, ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, Int64Array};
use flychess_brain::connectome::feather;
use flychess_brain::connectome::release::{ANNOTATIONS, TRANSMITTERS, TablePaths, WEIGHTS_FULL};

pub struct Ann {
    pub body: i64,
    pub ty: &'static str,
    pub superclass: Option<&'static str>,
    pub class: &'static str,
    pub status: &'static str,
    pub hex: Option<(i32, i32)>,
    pub soma: Option<[i64; 3]>,
    pub tosoma: Option<[i64; 3]>,
}

pub fn neuron(body: i64, ty: &'static str, superclass: &'static str) -> Ann {
    Ann { body, ty, superclass: Some(superclass), class: "", status: "Traced", hex: None, soma: Some([body * 100, 0, 0]), tosoma: None }
}

pub fn paths(dir: &Path) -> TablePaths {
    TablePaths { annotations: dir.join(ANNOTATIONS.file), transmitters: dir.join(TRANSMITTERS.file), weights: dir.join(WEIGHTS_FULL.file) }
}

pub fn write_annotations(path: &Path, rows: &[Ann]) {
    let mut id = Int64Builder::new();
    let mut ty = StringBuilder::new();
    let mut sc = StringBuilder::new();
    let mut class = StringBuilder::new();
    let mut status = StringBuilder::new();
    let mut side = StringBuilder::new();
    let mut soma = ListBuilder::new(Int64Builder::new());
    let mut tosoma = ListBuilder::new(Int64Builder::new());
    let mut h1 = Float64Builder::new();
    let mut h2 = Float64Builder::new();
    for r in rows {
        id.append_value(r.body);
        ty.append_value(r.ty);
        sc.append_option(r.superclass);
        class.append_value(r.class);
        status.append_value(r.status);
        side.append_value("R");
        for (b, p) in [(&mut soma, r.soma), (&mut tosoma, r.tosoma)] {
            match p {
                Some(p) => {
                    b.values().append_slice(&p);
                    b.append(true);
                }
                None => b.append_null(),
            }
        }
        match r.hex {
            Some((a, b)) => {
                h1.append_value(a as f64);
                h2.append_value(b as f64);
            }
            None => {
                h1.append_value(f64::NAN);
                h2.append_null();
            }
        }
    }
    let cols: Vec<(&str, ArrayRef)> = vec![
        ("bodyId", Arc::new(id.finish())),
        ("type", Arc::new(ty.finish())),
        ("superclass", Arc::new(sc.finish())),
        ("class", Arc::new(class.finish())),
        ("status", Arc::new(status.finish())),
        ("somaSide", Arc::new(side.finish())),
        ("somaLocation", Arc::new(soma.finish())),
        ("tosomaLocation", Arc::new(tosoma.finish())),
        ("assignedOlHex1", Arc::new(h1.finish())),
        ("assignedOlHex2", Arc::new(h2.finish())),
    ];
    feather::write(path, &[feather::batch(cols).unwrap()], &[]).unwrap();
}

pub type Nt = (i64, Option<&'static str>, Option<&'static str>, Option<&'static str>);

pub fn write_transmitters(path: &Path, rows: &[Nt]) {
    let mut body = Int64Builder::new();
    let (mut a, mut b, mut c) = (StringBuilder::new(), StringBuilder::new(), StringBuilder::new());
    for r in rows {
        body.append_value(r.0);
        a.append_option(r.1);
        b.append_option(r.2);
        c.append_option(r.3);
    }
    let cols: Vec<(&str, ArrayRef)> = vec![
        ("body", Arc::new(body.finish())),
        ("consensus_nt", Arc::new(a.finish())),
        ("celltype_predicted_nt", Arc::new(b.finish())),
        ("predicted_nt", Arc::new(c.finish())),
    ];
    feather::write(path, &[feather::batch(cols).unwrap()], &[]).unwrap();
}

pub fn write_weights(path: &Path, rows: &[(i64, i64, i64)]) {
    let pre: Int64Array = rows.iter().map(|r| r.0).collect::<Vec<_>>().into();
    let post: Int64Array = rows.iter().map(|r| r.1).collect::<Vec<_>>().into();
    let w: Int64Array = rows.iter().map(|r| r.2).collect::<Vec<_>>().into();
    let cols: Vec<(&str, ArrayRef)> = vec![("body_pre", Arc::new(pre)), ("body_post", Arc::new(post)), ("weight", Arc::new(w))];
    feather::write(path, &[feather::batch(cols).unwrap()], &[]).unwrap();
}

/// A tiny brain with one of every case the rules handle (see the comments).
pub fn small_annotations() -> Vec<Ann> {
    let with_hex = |body, ty, hex| Ann { hex: Some(hex), ..neuron(body, ty, "ol_intrinsic") };
    let mut v = vec![
        Ann { soma: None, ..neuron(1, "R1-R6", "ol_sensory") }, // strongest partner L1 (5,5)
        Ann { soma: None, ..neuron(2, "R7p", "ol_sensory") },   // → Mi1 (9,9)
        Ann { soma: None, ..neuron(3, "R8y", "ol_sensory") },   // → Mi1 (9,9)
        Ann { soma: None, ..neuron(4, "R1-R6", "ol_sensory") }, // no hex partner: stays off the eye
        with_hex(10, "L1", (5, 5)),
        with_hex(11, "L2", (6, 4)),
        with_hex(12, "Mi1", (9, 9)),
        neuron(20, "LC01", "visual_projection"),
        neuron(30, "DNa01", "descending_neuron"),
        Ann { class: "glia", ..neuron(40, "astro", "glia") },
        Ann { status: "Orphan", ..neuron(41, "", "cb_intrinsic") },
        Ann { superclass: None, ..neuron(42, "x", "cb_intrinsic") },
        Ann { class: "Kenyon_cell", ..neuron(50, "KCab", "cb_intrinsic") },
        neuron(51, "MBON01", "cb_intrinsic"),
        neuron(52, "PAM01", "cb_intrinsic"),
        neuron(53, "PPL101", "cb_intrinsic"),
        neuron(54, "MBON02", "cb_intrinsic"),
        neuron(60, "CB01", "cb_intrinsic"),
        Ann { soma: None, tosoma: Some([1000, 2000, 3000]), ..neuron(61, "CB02", "cb_intrinsic") },
        neuron(62, "CB03", "cb_intrinsic"),
    ];
    v.reverse(); // the build must not depend on row order
    v
}

pub fn small_transmitters() -> Vec<Nt> {
    vec![
        (1, Some("histamine"), None, None),
        (2, Some("histamine"), None, None),
        (3, Some("histamine"), None, None),
        (4, Some("histamine"), None, None),
        (10, Some("glutamate"), None, None),
        (11, Some("acetylcholine"), None, None),
        (12, Some("acetylcholine"), None, None),
        (20, Some("acetylcholine"), None, None),
        (30, Some("acetylcholine"), None, None),
        (50, Some("acetylcholine"), None, None),
        (51, Some("acetylcholine"), None, None),
        (52, Some("dopamine"), None, None),
        (53, Some("dopamine"), None, None),
        (54, Some("gaba"), None, None),
        (60, Some("unclear"), Some("gaba"), Some("acetylcholine")), // falls back to the type's call
        (61, None, None, Some("glutamate")),                        // falls back to its own call
                                                                    // 62 has no row: acetylcholine assumed
    ]
}

pub fn small_weights() -> Vec<(i64, i64, i64)> {
    vec![
        (1, 10, 30),
        (1, 11, 20),
        (2, 12, 15),
        (3, 12, 6),
        (4, 20, 10),
        (1, 20, 4), // below the cut
        (2, 20, 3), // a duplicate pair that sums to 6: kept
        (2, 20, 3),
        (10, 20, 8),
        (11, 20, 7),
        (20, 30, 10),
        (40, 30, 10),  // from glia: dropped
        (41, 30, 10),  // from an untraced body: dropped
        (999, 30, 10), // from a body not in the annotations: dropped
        (52, 51, 20),
        (53, 51, 5),
        (53, 54, 30),
        (50, 51, 8),
        (50, 54, 8),
        (60, 30, 9),
        (61, 30, 9),
        (62, 30, 9),
        (30, 60, 5),
    ]
}

/// Writes the small tables into `dir` under the release's file names.
pub fn write_small(dir: &Path) -> TablePaths {
    let p = paths(dir);
    write_annotations(&p.annotations, &small_annotations());
    write_transmitters(&p.transmitters, &small_transmitters());
    write_weights(&p.weights, &small_weights());
    p
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

pub fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

pub fn as_path(p: &Path) -> &Path {
    p
}
