//! The stand-in written as the release's three feather tables (annotations, transmitters,
//! weights), in the release's schema, each row in a shuffled order and every table tagged with
//! the seed and the generator's version (`SEED_KEY`, `GENERATOR_KEY`).

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int64Builder, ListBuilder, StringBuilder, StringDictionaryBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, Int32Array, Int64Array};

use super::{Body, GENERATOR_KEY, GENERATOR_VERSION, Generated, NT_NAMES, Rng64, SEED_KEY};
use crate::connectome::build::Progress;
use crate::connectome::feather;
use crate::connectome::release::{ANNOTATIONS, TRANSMITTERS, TablePaths, VOXEL_UM, WEIGHTS_FULL};
use crate::error::{Error, Result};

/// The three tables into `dir`, their rows in a shuffled order (a release would not be sorted
/// the way the build needs).
pub(super) fn write_tables(
    dir: &Path,
    seed: u64,
    rng: &mut Rng64,
    bodies: &[Body],
    rows: &[(i64, i64, i32)],
    progress: Progress,
) -> Result<Generated> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let paths = TablePaths {
        annotations: dir.join(ANNOTATIONS.file),
        transmitters: dir.join(TRANSMITTERS.file),
        weights: dir.join(WEIGHTS_FULL.file),
    };
    let mut order: Vec<usize> = (0..bodies.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    write_annotations(&paths.annotations, bodies, &order, seed)?;
    write_transmitters(&paths.transmitters, bodies, &order, rng, seed)?;
    write_weights(&paths.weights, rows, progress, seed)?;
    Ok(Generated { paths, annotation_rows: bodies.len(), weight_rows: rows.len() })
}

fn tag(seed: u64) -> [(&'static str, String); 2] {
    [(SEED_KEY, seed.to_string()), (GENERATOR_KEY, GENERATOR_VERSION.to_string())]
}

fn voxels(p: [f64; 3]) -> [i64; 3] {
    // Release coordinates are positive voxels; the cloud is centred near (500, 300, 200) µm.
    let offset = [500.0, 300.0, 200.0];
    [0, 1, 2].map(|i| libm::round((p[i] + offset[i]) / VOXEL_UM) as i64)
}

fn write_annotations(path: &Path, bodies: &[Body], order: &[usize], seed: u64) -> Result<()> {
    let mut id = Int64Builder::new();
    let mut ty = StringDictionaryBuilder::<Int32Type>::new();
    let mut instance = StringBuilder::new();
    let mut superclass = StringDictionaryBuilder::<Int32Type>::new();
    let mut class = StringDictionaryBuilder::<Int32Type>::new();
    let mut soma_side = StringDictionaryBuilder::<Int32Type>::new();
    let mut root_side = StringDictionaryBuilder::<Int32Type>::new();
    let mut status = StringDictionaryBuilder::<Int32Type>::new();
    let mut soma = ListBuilder::new(Int64Builder::new());
    let mut tosoma = ListBuilder::new(Int64Builder::new());
    let mut hex1 = Float64Builder::new();
    let mut hex2 = Float64Builder::new();
    for &i in order {
        let b = &bodies[i];
        id.append_value(b.id);
        if b.cell_type.is_empty() {
            ty.append_null()
        } else {
            ty.append_value(&b.cell_type)
        }
        instance.append_value(format!("{}_{}", b.cell_type, b.side));
        match b.superclass {
            Some(s) => superclass.append_value(s),
            None => superclass.append_null(),
        }
        if b.class.is_empty() {
            class.append_null()
        } else {
            class.append_value(b.class)
        }
        // Soma side where a soma is known, root side always.
        if b.soma.is_some() {
            soma_side.append_value(b.side)
        } else {
            soma_side.append_null()
        }
        if b.side.is_empty() {
            root_side.append_null()
        } else {
            root_side.append_value(b.side)
        }
        status.append_value(b.status);
        for (builder, p) in [(&mut soma, b.soma), (&mut tosoma, b.tosoma)] {
            match p {
                Some(p) => {
                    builder.values().append_slice(&voxels(p));
                    builder.append(true);
                }
                None => builder.append_null(),
            }
        }
        match b.hex {
            Some((a, c)) => {
                hex1.append_value(a as f64);
                hex2.append_value(c as f64);
            }
            None => {
                hex1.append_value(f64::NAN);
                hex2.append_null();
            }
        }
    }
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("bodyId", Arc::new(id.finish())),
        ("type", Arc::new(ty.finish())),
        ("instance", Arc::new(instance.finish())),
        ("superclass", Arc::new(superclass.finish())),
        ("class", Arc::new(class.finish())),
        ("somaSide", Arc::new(soma_side.finish())),
        ("rootSide", Arc::new(root_side.finish())),
        ("status", Arc::new(status.finish())),
        ("somaLocation", Arc::new(soma.finish())),
        ("tosomaLocation", Arc::new(tosoma.finish())),
        ("assignedOlHex1", Arc::new(hex1.finish())),
        ("assignedOlHex2", Arc::new(hex2.finish())),
    ];
    feather::write(path, &[feather::batch(columns)?], &tag(seed))
}

fn write_transmitters(path: &Path, bodies: &[Body], order: &[usize], rng: &mut Rng64, seed: u64) -> Result<()> {
    let mut body = Int64Builder::new();
    let mut consensus = StringBuilder::new();
    let mut celltype = StringBuilder::new();
    let mut own = StringBuilder::new();
    let mut confidence = Float64Builder::new();
    for &i in order {
        let b = &bodies[i];
        if rng.chance(5) {
            continue; // a few bodies have no row at all: they default to acetylcholine
        }
        body.append_value(b.id);
        if rng.chance(800) {
            consensus.append_value(b.nt)
        } else {
            consensus.append_value("unclear")
        }
        if rng.chance(900) {
            celltype.append_value(b.nt)
        } else {
            celltype.append_null()
        }
        if rng.chance(900) {
            own.append_value(b.nt)
        } else {
            own.append_value(NT_NAMES[rng.below(3)])
        }
        confidence.append_value(0.5 + rng.unit() * 0.5);
    }
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("body", Arc::new(body.finish())),
        ("consensus_nt", Arc::new(consensus.finish())),
        ("celltype_predicted_nt", Arc::new(celltype.finish())),
        ("predicted_nt", Arc::new(own.finish())),
        ("predicted_nt_confidence", Arc::new(confidence.finish())),
    ];
    feather::write(path, &[feather::batch(columns)?], &tag(seed))
}

fn write_weights(path: &Path, rows: &[(i64, i64, i32)], progress: Progress, seed: u64) -> Result<()> {
    const BATCH: usize = 1 << 20;
    let mut batches = Vec::new();
    for (k, chunk) in rows.chunks(BATCH).enumerate() {
        let pre: Int64Array = chunk.iter().map(|r| r.0).collect::<Vec<_>>().into();
        let post: Int64Array = chunk.iter().map(|r| r.1).collect::<Vec<_>>().into();
        let weight: Int32Array = chunk.iter().map(|r| r.2).collect::<Vec<_>>().into();
        batches.push(feather::batch(vec![
            ("body_pre", Arc::new(pre) as ArrayRef),
            ("body_post", Arc::new(post)),
            ("weight", Arc::new(weight)),
        ])?);
        progress("writing tables", (k + 1) as f64 * BATCH as f64 / rows.len().max(1) as f64);
    }
    feather::write(path, &batches, &tag(seed))
}
