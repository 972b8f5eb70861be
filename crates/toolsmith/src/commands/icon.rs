//! `toolsmith icon`: an image checked and printed as an MCP icon (docs/tools.md, "Icons"),
//! Scriptling's `make_icon`: a `data:` URI with its `mimeType` and `sizes`.
//!
//! The type is told by the file's first bytes (PNG, JPEG, WebP) or by an `<svg` root
//! element, never by its name; the size comes from the header (PNG `IHDR`, JPEG's start of
//! frame, WebP's `VP8`/`VP8L`/`VP8X` chunk, SVG's `width`/`height` or `viewBox`), so
//! nothing is decoded to read it. `--size N` scales a PNG (8-bit, not interlaced; the
//! common case) by averaging the pixels each new one covers, and writes it again as RGBA;
//! other images are printed as they are. An icon past 100 KB is refused: a `data:` URI
//! that large would travel in every `tools/list`.

use std::io::Read as _;
use std::path::Path;

use anyhow::Context as _;
use base64::Engine as _;
use serde_json::json;

use crate::ExitStatus;
use crate::args::IconArgs;
use crate::error::Hinted;
use crate::printer::Printer;

/// The largest image `toolsmith icon` turns into a `data:` URI.
const MAX_ICON_BYTES: usize = 100 * 1024;

/// The image types an icon may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Png,
    Jpeg,
    Webp,
    Svg,
}

impl Kind {
    fn mime_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Webp => "image/webp",
            Self::Svg => "image/svg+xml",
        }
    }
}

pub(crate) fn run(args: &IconArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let IconArgs { file, size, json } = args;
    let bytes = read(file)?;
    let kind = kind_of(&bytes).ok_or_else(|| {
        Hinted::new(format!(
            "`{}` is not a PNG, JPEG, WebP or SVG image",
            file.display()
        ))
        .hint("convert it to PNG (or SVG), e.g. `convert logo.bmp logo.png`")
    })?;
    let (bytes, dimensions) = match (size, kind) {
        (Some(size), Kind::Png) => {
            let scaled = png::scale(&bytes, *size).map_err(|message| {
                Hinted::new(format!("cannot scale `{}`: {message}", file.display()))
                    .hint("scale it with an image editor, or leave out --size")
            })?;
            let dimensions = dimensions(&scaled, Kind::Png);
            (scaled, dimensions)
        }
        (Some(_), _) => {
            return Err(Hinted::new(format!(
                "--size scales PNG images only; `{}` is {}",
                file.display(),
                kind.mime_type()
            ))
            .hint("convert it to PNG first, or leave out --size")
            .into());
        }
        (None, _) => {
            let dimensions = dimensions(&bytes, kind);
            (bytes, dimensions)
        }
    };
    if bytes.len() > MAX_ICON_BYTES {
        return Err(Hinted::new(format!(
            "`{}` is {} KB; an icon's data: URI holds at most {} KB",
            file.display(),
            bytes.len().div_ceil(1024),
            MAX_ICON_BYTES / 1024
        ))
        .hint(if kind == Kind::Png {
            "scale it down with --size 64 (or 128)"
        } else {
            "make it smaller (an icon is shown at 16 to 128 pixels), or serve it from a URL"
        })
        .into());
    }
    let src = format!(
        "data:{};base64,{}",
        kind.mime_type(),
        base64::engine::general_purpose::STANDARD.encode(&bytes)
    );
    let sizes = match dimensions {
        _ if kind == Kind::Svg => vec!["any".to_owned()],
        Some((width, height)) => vec![format!("{width}x{height}")],
        None => Vec::new(),
    };
    let mut icon = json!({"src": src, "mimeType": kind.mime_type()});
    if !sizes.is_empty() {
        icon["sizes"] = json!(sizes);
    }
    if *json {
        printer.data(&serde_json::to_string_pretty(&icon)?)?;
    } else {
        printer.data(&format!("icons = [{}]", toml_inline(&icon)))?;
        let what = sizes.first().map_or("size unknown", String::as_str);
        printer.message(&format!(
            "{}: {}, {what}, {} bytes",
            file.display(),
            kind.mime_type(),
            bytes.len()
        ));
    }
    Ok(ExitStatus::Success)
}

fn read(file: &Path) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|opened| {
            // A little past what any icon may be: enough to scale a larger PNG down.
            opened.take(16 << 20).read_to_end(&mut bytes)
        })
        .with_context(|| format!("cannot read `{}`", file.display()))?;
    Ok(bytes)
}

/// The image type by its first bytes (an SVG by its root element).
fn kind_of(bytes: &[u8]) -> Option<Kind> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some(Kind::Png);
    }
    if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        return Some(Kind::Jpeg);
    }
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return Some(Kind::Webp);
    }
    let text = std::str::from_utf8(bytes).ok()?;
    svg_root(text).map(|_| Kind::Svg)
}

/// The `<svg ...>` start tag of an SVG document, after any XML declaration, comments and
/// doctype.
fn svg_root(text: &str) -> Option<&str> {
    let start = text.find("<svg")?;
    let before = &text[..start];
    let only_prologue = before
        .split('<')
        .skip(1)
        .all(|tag| tag.starts_with('?') || tag.starts_with('!'));
    if !only_prologue {
        return None;
    }
    let end = text[start..].find('>')?;
    Some(&text[start..start + end])
}

/// Width and height in pixels, from the header.
fn dimensions(bytes: &[u8], kind: Kind) -> Option<(u32, u32)> {
    let be32 = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let le16 = |at: usize| {
        Some(u32::from(u16::from_le_bytes(
            bytes.get(at..at + 2)?.try_into().ok()?,
        )))
    };
    match kind {
        Kind::Png => Some((be32(16)?, be32(20)?)),
        Kind::Jpeg => jpeg_dimensions(bytes),
        Kind::Webp => match bytes.get(12..16)? {
            b"VP8 " => Some((le16(26)? & 0x3fff, le16(28)? & 0x3fff)),
            b"VP8L" => {
                let bits = u32::from_le_bytes(bytes.get(21..25)?.try_into().ok()?);
                Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
            }
            b"VP8X" => {
                let le24 = |at: usize| {
                    let b = bytes.get(at..at + 3)?;
                    Some(u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16)
                };
                Some((le24(24)? + 1, le24(27)? + 1))
            }
            _ => None,
        },
        Kind::Svg => None,
    }
}

/// A JPEG's size from its first start-of-frame marker.
fn jpeg_dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    while at + 9 < bytes.len() {
        if bytes[at] != 0xff {
            return None;
        }
        let marker = bytes[at + 1];
        let length = usize::from(u16::from_be_bytes([bytes[at + 2], bytes[at + 3]]));
        let is_frame = matches!(marker, 0xc0..=0xcf) && !matches!(marker, 0xc4 | 0xc8 | 0xcc);
        if is_frame {
            let height = u16::from_be_bytes([bytes[at + 5], bytes[at + 6]]);
            let width = u16::from_be_bytes([bytes[at + 7], bytes[at + 8]]);
            return Some((u32::from(width), u32::from(height)));
        }
        at += 2 + length;
    }
    None
}

/// `{ src = "...", mimeType = "...", sizes = [...] }`: the entry as a TOML inline table,
/// for a manifest's `icons` or `[server]`.
fn toml_inline(icon: &serde_json::Value) -> String {
    let Some(object) = icon.as_object() else {
        return String::new();
    };
    let fields: Vec<String> = object
        .iter()
        .map(|(key, value)| format!("{key} = {value}"))
        .collect();
    format!("{{ {} }}", fields.join(", "))
}

/// Reading, scaling and writing 8-bit, non-interlaced PNGs.
mod png {
    use std::io::{Read as _, Write as _};

    /// `bytes`, a PNG, scaled so its longer side is `size` pixels, as an RGBA PNG.
    pub(super) fn scale(bytes: &[u8], size: u32) -> Result<Vec<u8>, String> {
        let image = decode(bytes)?;
        let longer = image.width.max(image.height);
        let scale = |side: u32| {
            u32::try_from((u64::from(side) * u64::from(size)).div_ceil(u64::from(longer)))
                .unwrap_or(size)
                .max(1)
        };
        let (width, height) = (scale(image.width), scale(image.height));
        Ok(encode(&resample(&image, width, height), width, height))
    }

    struct Image {
        width: u32,
        height: u32,
        /// RGBA, row by row.
        pixels: Vec<[u8; 4]>,
    }

    fn decode(bytes: &[u8]) -> Result<Image, String> {
        let mut at = 8;
        let (mut width, mut height, mut color, mut depth, mut interlace) = (0, 0, 0, 0, 0);
        let mut palette: Vec<[u8; 4]> = Vec::new();
        let mut data = Vec::new();
        while at + 8 <= bytes.len() {
            let length = u32::from_be_bytes(bytes[at..at + 4].try_into().map_err(|_| "truncated")?);
            let length = usize::try_from(length).map_err(|_| "a chunk is too long")?;
            let kind = &bytes[at + 4..at + 8];
            let body = bytes
                .get(at + 8..at + 8 + length)
                .ok_or("the file is truncated")?;
            match kind {
                b"IHDR" if body.len() >= 13 => {
                    width = u32::from_be_bytes(body[0..4].try_into().map_err(|_| "bad IHDR")?);
                    height = u32::from_be_bytes(body[4..8].try_into().map_err(|_| "bad IHDR")?);
                    (depth, color, interlace) = (body[8], body[9], body[12]);
                }
                b"PLTE" => {
                    palette = body
                        .chunks_exact(3)
                        .map(|c| [c[0], c[1], c[2], 255])
                        .collect();
                }
                b"tRNS" if color == 3 => {
                    for (entry, alpha) in palette.iter_mut().zip(body) {
                        entry[3] = *alpha;
                    }
                }
                b"IDAT" => data.extend_from_slice(body),
                b"IEND" => break,
                _ => {}
            }
            at += 12 + length;
        }
        if depth != 8 || interlace != 0 {
            return Err(format!(
                "only 8-bit, non-interlaced PNGs are scaled (this one is {depth}-bit{})",
                if interlace == 0 { "" } else { ", interlaced" }
            ));
        }
        let channels: usize = match color {
            0 | 3 => 1,
            4 => 2,
            2 => 3,
            6 => 4,
            other => return Err(format!("unknown PNG color type {other}")),
        };
        if width == 0 || height == 0 || u64::from(width) * u64::from(height) > 16 << 20 {
            return Err(format!("{width}x{height} pixels is not an icon's size"));
        }
        let (w, h) = (width as usize, height as usize);
        let stride = w * channels;
        let mut raw = Vec::with_capacity((stride + 1) * h);
        flate2::read::ZlibDecoder::new(data.as_slice())
            .take(((stride + 1) * h) as u64)
            .read_to_end(&mut raw)
            .map_err(|error| format!("the image data is corrupt: {error}"))?;
        if raw.len() < (stride + 1) * h {
            return Err("the image data is truncated".to_owned());
        }
        let rows = unfilter(&raw, stride, channels, h)?;
        let pixels = rows
            .chunks_exact(channels)
            .map(|p| match color {
                0 => [p[0], p[0], p[0], 255],
                3 => palette
                    .get(usize::from(p[0]))
                    .copied()
                    .unwrap_or([0, 0, 0, 0]),
                4 => [p[0], p[0], p[0], p[1]],
                2 => [p[0], p[1], p[2], 255],
                _ => [p[0], p[1], p[2], p[3]],
            })
            .collect();
        Ok(Image {
            width,
            height,
            pixels,
        })
    }

    /// The bytes of each row with the PNG filter of its first byte undone.
    fn unfilter(raw: &[u8], stride: usize, channels: usize, h: usize) -> Result<Vec<u8>, String> {
        let mut rows = vec![0u8; stride * h];
        for y in 0..h {
            let filter = raw[y * (stride + 1)];
            let line = &raw[y * (stride + 1) + 1..(y + 1) * (stride + 1)];
            for x in 0..stride {
                let left = if x >= channels {
                    rows[y * stride + x - channels]
                } else {
                    0
                };
                let up = if y > 0 { rows[(y - 1) * stride + x] } else { 0 };
                let corner = if y > 0 && x >= channels {
                    rows[(y - 1) * stride + x - channels]
                } else {
                    0
                };
                let predicted = match filter {
                    0 => 0,
                    1 => left,
                    2 => up,
                    3 => left.midpoint(up),
                    4 => paeth(left, up, corner),
                    other => return Err(format!("unknown PNG filter {other}")),
                };
                rows[y * stride + x] = line[x].wrapping_add(predicted);
            }
        }
        Ok(rows)
    }

    fn paeth(left: u8, up: u8, corner: u8) -> u8 {
        let estimate = i16::from(left) + i16::from(up) - i16::from(corner);
        let (a, b, c) = (
            (estimate - i16::from(left)).abs(),
            (estimate - i16::from(up)).abs(),
            (estimate - i16::from(corner)).abs(),
        );
        if a <= b && a <= c {
            left
        } else if b <= c {
            up
        } else {
            corner
        }
    }

    /// Each new pixel the average of the old ones it covers (alpha-weighted colour).
    fn resample(image: &Image, width: u32, height: u32) -> Vec<[u8; 4]> {
        let (ow, oh) = (image.width as usize, image.height as usize);
        let (w, h) = (width as usize, height as usize);
        let mut out = Vec::with_capacity(w * h);
        for y in 0..h {
            let (y0, y1) = (y * oh / h, ((y + 1) * oh).div_ceil(h).max(y * oh / h + 1));
            for x in 0..w {
                let (x0, x1) = (x * ow / w, ((x + 1) * ow).div_ceil(w).max(x * ow / w + 1));
                let mut sum = [0u64; 4];
                let mut count = 0u64;
                for row in y0..y1.min(oh) {
                    for pixel in &image.pixels[row * ow + x0..row * ow + x1.min(ow)] {
                        let alpha = u64::from(pixel[3]);
                        for channel in 0..3 {
                            sum[channel] += u64::from(pixel[channel]) * alpha;
                        }
                        sum[3] += alpha;
                        count += 1;
                    }
                }
                let channel = |index: usize| {
                    sum[index]
                        .checked_div(sum[3])
                        .map_or(0, |value| u8::try_from(value).unwrap_or(u8::MAX))
                };
                let alpha = u8::try_from(sum[3] / count.max(1)).unwrap_or(u8::MAX);
                out.push([channel(0), channel(1), channel(2), alpha]);
            }
        }
        out
    }

    fn encode(pixels: &[[u8; 4]], width: u32, height: u32) -> Vec<u8> {
        let mut raw = Vec::with_capacity(pixels.len() * 4 + height as usize);
        for row in pixels.chunks_exact(width as usize) {
            raw.push(0);
            for pixel in row {
                raw.extend_from_slice(pixel);
            }
        }
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        let _ = zlib.write_all(&raw);
        let data = zlib.finish().unwrap_or_default();
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        let mut header = Vec::with_capacity(13);
        header.extend_from_slice(&width.to_be_bytes());
        header.extend_from_slice(&height.to_be_bytes());
        header.extend_from_slice(&[8, 6, 0, 0, 0]);
        chunk(&mut png, *b"IHDR", &header);
        chunk(&mut png, *b"IDAT", &data);
        chunk(&mut png, *b"IEND", &[]);
        png
    }

    fn chunk(png: &mut Vec<u8>, kind: [u8; 4], body: &[u8]) {
        png.extend_from_slice(&u32::try_from(body.len()).unwrap_or(u32::MAX).to_be_bytes());
        png.extend_from_slice(&kind);
        png.extend_from_slice(body);
        let mut crc = crc32fast::Hasher::new();
        crc.update(&kind);
        crc.update(body);
        png.extend_from_slice(&crc.finalize().to_be_bytes());
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_scaled_png_decodes_again_at_its_new_size() {
            let pixels = vec![[200, 10, 10, 255]; 8 * 4];
            let png = encode(&pixels, 8, 4);
            let scaled = scale(&png, 4).unwrap();
            let image = decode(&scaled).unwrap();
            assert_eq!((image.width, image.height), (4, 2));
            assert_eq!(image.pixels[0], [200, 10, 10, 255]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_is_told_by_its_root_element() {
        assert_eq!(
            kind_of(b"<?xml version=\"1.0\"?>\n<!-- logo -->\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>"),
            Some(Kind::Svg)
        );
        assert_eq!(kind_of(b"<html><svg></svg></html>"), None);
        assert_eq!(kind_of(b"just text"), None);
    }
}
