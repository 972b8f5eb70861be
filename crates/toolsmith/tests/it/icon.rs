//! `toolsmith icon`: a PNG, a JPEG and an SVG become `icons` entries
//! with their size; a text file is refused with the fix.

use std::path::Path;

use base64::Engine as _;
use serde_json::Value;

use crate::toolsmith;

/// A `width`×`height` RGB PNG of one colour.
fn png(width: u32, height: u32) -> Vec<u8> {
    use std::io::Write as _;
    let mut raw = Vec::new();
    for _ in 0..height {
        raw.push(0);
        raw.extend([10, 120, 200].repeat(width as usize));
    }
    let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    zlib.write_all(&raw).unwrap();
    let data = zlib.finish().unwrap();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut chunk = |kind: &[u8], body: &[u8]| {
        png.extend_from_slice(&u32::try_from(body.len()).unwrap().to_be_bytes());
        png.extend_from_slice(kind);
        png.extend_from_slice(body);
        let mut crc = crc32fast::Hasher::new();
        crc.update(kind);
        crc.update(body);
        png.extend_from_slice(&crc.finalize().to_be_bytes());
    };
    let mut header = width.to_be_bytes().to_vec();
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(b"IHDR", &header);
    chunk(b"IDAT", &data);
    chunk(b"IEND", &[]);
    png
}

/// The smallest JPEG header that names its size (64×32): SOI, APP0, SOF0, EOI.
const JPEG: &[u8] = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xc0\x00\x11\x08\x00\x20\x00\x40\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01\xff\xd9";

const SVG: &str = "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 24 24\"><circle r=\"8\"/></svg>\n";

fn icon(file: &Path, more: &[&str]) -> Value {
    crate::json_output(toolsmith().arg("icon").arg(file).arg("--json").args(more))
}

#[test]
fn images_become_icon_entries_with_their_size() {
    let dir = tempfile::tempdir().unwrap();
    let (logo, photo, vector) = (
        dir.path().join("logo.png"),
        dir.path().join("photo.jpg"),
        dir.path().join("logo.svg"),
    );
    std::fs::write(&logo, png(100, 50)).unwrap();
    std::fs::write(&photo, JPEG).unwrap();
    std::fs::write(&vector, SVG).unwrap();

    let entry = icon(&logo, &[]);
    assert_eq!(entry["mimeType"], "image/png");
    assert_eq!(entry["sizes"], serde_json::json!(["100x50"]));
    assert!(
        entry["src"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
    assert_eq!(icon(&photo, &[])["sizes"], serde_json::json!(["64x32"]));
    let svg = icon(&vector, &[]);
    assert_eq!(svg["mimeType"], "image/svg+xml");
    assert_eq!(svg["sizes"], serde_json::json!(["any"]));

    // Scaled: the longer side to 16, the data a PNG of that size.
    let scaled = icon(&logo, &["--size", "16"]);
    assert_eq!(scaled["sizes"], serde_json::json!(["16x8"]));
    let src = scaled["src"].as_str().unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(src.strip_prefix("data:image/png;base64,").unwrap())
        .unwrap();
    assert_eq!(&bytes[16..24], &[0, 0, 0, 16, 0, 0, 0, 8]);
}

#[test]
fn a_file_that_is_no_image_or_too_big_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not an image\n").unwrap();
    let refused = toolsmith().arg("icon").arg(&text).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("is not a PNG, JPEG, WebP or SVG image"),
        "{said}"
    );
    assert!(said.contains("hint:"), "{said}");

    // A PNG past 100 KB (noise does not compress) is refused, with --size as the fix.
    let big = dir.path().join("big.png");
    let mut noisy = png(300, 300);
    let mut state = 1u32;
    let at = noisy.len() - 12;
    let mut extra = Vec::new();
    for _ in 0..120_000 {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        extra.push(state.to_be_bytes()[1]);
    }
    // An ancillary chunk of noise before IEND: still a valid PNG, just large.
    let mut chunk = u32::try_from(extra.len()).unwrap().to_be_bytes().to_vec();
    chunk.extend_from_slice(b"zNse");
    chunk.extend_from_slice(&extra);
    let mut crc = crc32fast::Hasher::new();
    crc.update(b"zNse");
    crc.update(&extra);
    chunk.extend_from_slice(&crc.finalize().to_be_bytes());
    noisy.splice(at..at, chunk);
    std::fs::write(&big, &noisy).unwrap();
    let refused = toolsmith().arg("icon").arg(&big).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("at most 100 KB"), "{said}");
    assert!(said.contains("--size"), "{said}");
    // Scaled down, it fits.
    let scaled = icon(&big, &["--size", "32"]);
    assert_eq!(scaled["sizes"], serde_json::json!(["32x32"]));
}
