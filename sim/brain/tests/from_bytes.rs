//! The readers a page uses (issue 69), which fetches its files instead of opening them: a brain,
//! a homeostasis and a container read from bytes are exactly what the same files give read from
//! their paths, and damaged, truncated or foreign bytes, or a homeostasis of another brain, are
//! refused with an error naming what was read, never a panic and never a homeostasis measured
//! in their place.

mod common;

use std::path::Path;

use common::*;
use flychess_brain::brain::Brain;
use flychess_brain::calibrate::{self, CalibrationOptions};
use flychess_brain::connectome::build::{BuildOptions, build};
use flychess_brain::connectome::{Connectome, Control, Source, brain_file};
use flychess_brain::container;
use flychess_brain::store::{self, BRAIN_FROM_BYTES, HOMEOSTASIS_FROM_BYTES};

fn build_small(control: Control) -> Connectome {
    let dir = tempdir();
    let p = write_small(dir.path());
    let source = Source::MaleCns { release: "test".into(), weights_file: "w".into() };
    build(&p, source, "k".into(), &BuildOptions { control, ..Default::default() }, &|_, _| {}).unwrap()
}

/// A small brain's file and its homeostasis file in `dir`, as the store leaves them: their paths
/// and the brain's checksum.
fn brain_and_homeostasis(dir: &Path, control: Control) -> (std::path::PathBuf, std::path::PathBuf, String) {
    let c = build_small(control);
    let brain_path = dir.join("small.brain");
    let checksum = brain_file::save(&c, &brain_path).unwrap();
    let options = CalibrationOptions::default();
    let h = calibrate::calibrate(&Brain::new(&c), &calibrate::calibration_boards(), options, &|_| {});
    let homeostasis_path = calibrate::homeostasis_path(&brain_path, options);
    calibrate::save(&h, &homeostasis_path, &checksum, options).unwrap();
    (brain_path, homeostasis_path, checksum)
}

/// Two connectomes are the same, field by field, their neurons' positions bit for bit (a neuron
/// without a soma is NaN there, which equals nothing).
fn assert_same(a: &Connectome, b: &Connectome) {
    let bits = |c: &Connectome| c.neurons.soma_um.iter().flat_map(|p| p.map(f32::to_bits)).collect::<Vec<_>>();
    assert_eq!(bits(a), bits(b));
    let without_positions = |c: &Connectome| {
        let mut c = c.clone();
        c.neurons.soma_um.clear();
        c
    };
    assert_eq!(without_positions(a), without_positions(b));
}

#[test]
fn a_brain_and_its_homeostasis_from_bytes_are_those_of_their_files() {
    let dir = tempdir();
    let (brain_path, homeostasis_path, checksum) = brain_and_homeostasis(dir.path(), Control::None);
    let brain_bytes = std::fs::read(&brain_path).unwrap();
    let homeostasis_bytes = std::fs::read(&homeostasis_path).unwrap();

    let from_path = brain_file::load(&brain_path).unwrap();
    let from_bytes = brain_file::load_bytes(&brain_bytes, &brain_path).unwrap();
    assert_eq!(from_bytes.checksum, checksum);
    assert_eq!(from_bytes.checksum, from_path.checksum);
    assert_same(&from_bytes.connectome, &from_path.connectome);

    let neurons = from_path.connectome.neurons.len();
    let options = CalibrationOptions::default();
    let h_path = calibrate::read(&homeostasis_path, &checksum, neurons, options).unwrap().expect("this brain's homeostasis");
    let h_bytes = calibrate::read_bytes(&homeostasis_bytes, &homeostasis_path, &checksum, neurons, options).unwrap();
    assert_eq!(h_bytes.as_ref(), Some(&h_path));
    // Another brain's or other options' homeostasis is none of this brain's, from bytes as from the file.
    assert_eq!(calibrate::read_bytes(&homeostasis_bytes, &homeostasis_path, "another", neurons, options).unwrap(), None);
    let calm = CalibrationOptions { calm_unreached: true };
    assert_eq!(calibrate::read_bytes(&homeostasis_bytes, &homeostasis_path, &checksum, neurons, calm).unwrap(), None);

    let (loaded, brain) = store::ready_brain_from_bytes(&brain_bytes, &homeostasis_bytes).unwrap();
    assert_eq!(loaded.checksum, checksum);
    assert_same(&loaded.connectome, &from_path.connectome);
    let mut expected = Brain::new(&from_path.connectome);
    expected.set_homeostasis(h_path);
    assert_eq!(brain.homeostasis(), expected.homeostasis());
    assert_eq!((&brain.row_start, &brain.pre, &brain.weight), (&expected.row_start, &expected.pre, &expected.weight));
}

#[test]
fn a_homeostasis_of_another_brain_is_refused_never_measured_again() {
    let dir = tempdir();
    let (brain_path, _, _) = brain_and_homeostasis(dir.path(), Control::None);
    let other = tempdir();
    let (_, other_homeostasis, _) = brain_and_homeostasis(other.path(), Control::ShuffledWiring { seed: 5 });
    let brain_bytes = std::fs::read(&brain_path).unwrap();
    let e = store::ready_brain_from_bytes(&brain_bytes, &std::fs::read(&other_homeostasis).unwrap())
        .err()
        .expect("another brain's homeostasis is refused")
        .to_string();
    assert!(e.contains(HOMEOSTASIS_FROM_BYTES) && e.contains("another brain"), "{e}");
}

#[test]
fn damaged_or_truncated_bytes_are_refused_with_their_name() {
    let dir = tempdir();
    let (brain_path, homeostasis_path, _) = brain_and_homeostasis(dir.path(), Control::None);
    let brain_bytes = std::fs::read(&brain_path).unwrap();
    let homeostasis_bytes = std::fs::read(&homeostasis_path).unwrap();
    let refused = |brain: &[u8], homeostasis: &[u8], name: &str| {
        let e = store::ready_brain_from_bytes(brain, homeostasis).err().expect("damage is refused").to_string();
        assert!(e.contains(name), "{e}");
        e
    };
    // Every truncation of either file, down to nothing. The brain file's last part, its build note
    // (`{"build_seconds":…}` after its length), is no part of the brain: without it, the brain is
    // whole.
    let marker = b"{\"build_seconds\"";
    let note = brain_bytes.windows(marker.len()).rposition(|w| w == marker).expect("the build note");
    let checksum_end = note - 4;
    for end in 0..checksum_end {
        refused(&brain_bytes[..end], &homeostasis_bytes, BRAIN_FROM_BYTES);
    }
    for end in checksum_end..brain_bytes.len() {
        let (loaded, _) = store::ready_brain_from_bytes(&brain_bytes[..end], &homeostasis_bytes).unwrap();
        assert_eq!(loaded.connectome.build_seconds, 0.0, "no note, no build time");
    }
    for end in 0..homeostasis_bytes.len() {
        refused(&brain_bytes, &homeostasis_bytes[..end], HOMEOSTASIS_FROM_BYTES);
    }
    // A flipped byte in the body of either.
    let mut flipped = brain_bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x55;
    assert!(refused(&flipped, &homeostasis_bytes, BRAIN_FROM_BYTES).contains("checksum mismatch"));
    let mut flipped = homeostasis_bytes.clone();
    let last_value = flipped.len() - 33;
    flipped[last_value] ^= 0x55;
    assert!(refused(&brain_bytes, &flipped, HOMEOSTASIS_FROM_BYTES).contains("checksum mismatch"));
    // Each file where the other belongs.
    refused(&homeostasis_bytes, &brain_bytes, BRAIN_FROM_BYTES);
    refused(&brain_bytes, &brain_bytes, HOMEOSTASIS_FROM_BYTES);
}

#[test]
fn lengths_a_damaged_header_claims_are_refused_before_anything_is_set_aside() {
    // A brain file claiming a header of 4 GiB, and one claiming 2^40 neurons: refused, not held.
    let mut huge_header = b"FLYBRAIN".to_vec();
    huge_header.extend_from_slice(&brain_file::FORMAT_VERSION.to_le_bytes());
    huge_header.extend_from_slice(&u32::MAX.to_le_bytes());
    huge_header.extend_from_slice(&[0; 64]);
    let e = brain_file::load_bytes(&huge_header, Path::new("huge.brain")).err().expect("refused").to_string();
    assert!(e.contains("huge.brain") && e.contains("truncated"), "{e}");

    let dir = tempdir();
    let (brain_path, _, _) = brain_and_homeostasis(dir.path(), Control::None);
    let bytes = std::fs::read(&brain_path).unwrap();
    let header_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let header = String::from_utf8(bytes[16..16 + header_len].to_vec()).unwrap();
    let neurons = format!("\"neurons\":{}", build_small(Control::None).neurons.len());
    assert!(header.contains(&neurons), "{header}");
    let claimed = header.replacen(&neurons, &format!("\"neurons\":{}", 1u64 << 40), 1);
    let mut lying = bytes[..12].to_vec();
    lying.extend_from_slice(&(claimed.len() as u32).to_le_bytes());
    lying.extend_from_slice(claimed.as_bytes());
    lying.extend_from_slice(&bytes[16 + header_len..]);
    let e = brain_file::load_bytes(&lying, Path::new("lying.brain")).err().expect("refused").to_string();
    assert!(e.contains("lying.brain") && e.contains("values of"), "{e}");

    // A container whose header length runs past its end, and one over its kind's limit.
    let file = dir.path().join("c.bin");
    container::write(&file, b"TESTTEST", 1, &"header", &[7u8; 100]).unwrap();
    let good = std::fs::read(&file).unwrap();
    let (h, body): (String, &[u8]) = container::read_bytes(&good, &file, b"TESTTEST", 1, "test file", u64::MAX).unwrap();
    assert_eq!((h, body.to_vec()), container::read::<String>(&file, b"TESTTEST", 1, "test file").unwrap());
    let mut past = good.clone();
    past[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = container::read_bytes::<String>(&past, Path::new("past.bin"), b"TESTTEST", 1, "test file", u64::MAX).err().unwrap().to_string();
    assert!(e.contains("past.bin") && e.contains("damaged header"), "{e}");
    let e = container::read_bytes::<String>(&good, Path::new("big.bin"), b"TESTTEST", 1, "test file", 64).err().unwrap().to_string();
    assert!(e.contains("big.bin") && e.contains("more than a test file can be"), "{e}");
    let e =
        container::read_bytes::<String>(&good, Path::new("other.bin"), b"OTHEROTH", 1, "test file", u64::MAX).err().unwrap().to_string();
    assert!(e.contains("other.bin") && e.contains("not a Fly Chess test file"), "{e}");
}
