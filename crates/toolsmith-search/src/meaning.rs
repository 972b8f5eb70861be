//! The meaning signal of tool search: texts as vectors, so "altitude of a mountain" finds
//! `maps_elevation` ("Get the elevation data ...") though they share no word.
//!
//! A text's vector is the IDF-weighted sum of static vectors of its word pieces, normalised;
//! two texts are as close as the cosine of their vectors. The piece vectors come from the
//! sentence embedding model all-MiniLM-L6-v2 (Apache-2.0), distilled and fitted to its
//! sentence embeddings by `data/distill.py` into `data/wordpieces.bin` (27,622 pieces ×
//! 256 dimensions, int8): no model runs here, looking a vector up is all a search does.

use std::sync::OnceLock;

// FNV-1a: the keys are short words, hashed millions of times while a large index is built,
// and they come from tool definitions, not from an adversary.
use fnv::FnvHashMap as FnvMap;

use crate::text::{for_each_word, is_stop_word};

static TABLE_BYTES: &[u8] = include_bytes!("../data/wordpieces.bin");

/// Words longer than this are not split into pieces (the model's own limit).
const MAX_WORD_CHARS: usize = 100;

/// The word-piece vectors.
struct Table {
    dims: usize,
    /// Pieces that begin a word, by text.
    initial: FnvMap<&'static str, u32>,
    /// Pieces that continue a word (`##ing` as `ing`), by text.
    continuing: FnvMap<&'static str, u32>,
    scales: Vec<f32>,
    values: &'static [u8],
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| Table::parse(TABLE_BYTES).expect("data/wordpieces.bin is well formed"))
}

impl Table {
    fn parse(bytes: &'static [u8]) -> Option<Self> {
        let rest = bytes.strip_prefix(b"TSWP0001")?;
        let (count, rest) = read_u32(rest)?;
        let (dims, mut rest) = read_u32(rest)?;
        let (count, dims) = (count as usize, dims as usize);
        let mut initial = FnvMap::with_capacity_and_hasher(count, fnv::FnvBuildHasher::default());
        let mut continuing = FnvMap::default();
        for id in 0..count {
            let (&length, tail) = rest.split_first()?;
            let (piece, tail) = tail.split_at_checked(usize::from(length))?;
            let piece = std::str::from_utf8(piece).ok()?;
            let id = u32::try_from(id).ok()?;
            match piece.strip_prefix("##") {
                Some(continuation) => continuing.insert(continuation, id),
                None => initial.insert(piece, id),
            };
            rest = tail;
        }
        let (scales, values) = rest.split_at_checked(count * 4)?;
        let scales = scales
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        (values.len() == count * dims).then_some(Self {
            dims,
            initial,
            continuing,
            scales,
            values,
        })
    }

    /// Appends the ids of `word`'s pieces to `pieces`, splitting it greedily into the
    /// longest known pieces; a word with an unknown part gives none.
    fn pieces(&self, word: &str, pieces: &mut Vec<u32>) {
        if word.chars().count() > MAX_WORD_CHARS {
            return;
        }
        let start_len = pieces.len();
        let mut start = 0;
        while start < word.len() {
            let map = if start == 0 {
                &self.initial
            } else {
                &self.continuing
            };
            let found = word[start..]
                .char_indices()
                .map(|(offset, c)| start + offset + c.len_utf8())
                .rev()
                .find_map(|end| map.get(&word[start..end]).map(|&id| (id, end)));
            let Some((id, end)) = found else {
                pieces.truncate(start_len);
                return;
            };
            pieces.push(id);
            start = end;
        }
    }

    /// Adds `weight` × the vector of `piece` to `into`.
    fn add(&self, piece: u32, weight: f32, into: &mut [f32]) {
        let piece = piece as usize;
        let row = &self.values[piece * self.dims..(piece + 1) * self.dims];
        let scale = weight * self.scales[piece];
        for (sum, &value) in into.iter_mut().zip(row) {
            #[expect(clippy::cast_possible_wrap, reason = "the bytes are int8 values")]
            let value = value as i8;
            *sum += scale * f32::from(value);
        }
    }
}

fn read_u32(bytes: &[u8]) -> Option<(u32, &[u8])> {
    let (head, rest) = bytes.split_first_chunk::<4>()?;
    Some((u32::from_le_bytes(*head), rest))
}

/// The word pieces of `text`'s words, stop words left out, into `pieces`. `known`, when
/// given, remembers the pieces of words already split (while indexing: tool texts share
/// most of their words; a query splits its few words directly).
fn text_pieces(
    table: &Table,
    text: &str,
    mut known: Option<&mut FnvMap<String, Vec<u32>>>,
    pieces: &mut Vec<u32>,
) {
    pieces.clear();
    for_each_word(text, |word| {
        if is_stop_word(word) {
            return;
        }
        let Some(known) = known.as_deref_mut() else {
            table.pieces(word, pieces);
            return;
        };
        if let Some(split) = known.get(word) {
            pieces.extend_from_slice(split);
            return;
        }
        let start = pieces.len();
        table.pieces(word, pieces);
        known.insert(word.to_owned(), pieces[start..].to_vec());
    });
}

/// Tool texts as vectors, for [`MeaningIndex::similarities`] to a query.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct MeaningIndex {
    dims: usize,
    /// One normalised vector per tool, `dims` wide, in indexing order, as int8 with a
    /// scale per tool: a quarter of the memory of `f32`, which is what a search over 10k
    /// tools waits for. Kept as bytes, read back at their size.
    #[serde(with = "int8_bytes")]
    vectors: Vec<i8>,
    scales: Vec<f32>,
    /// Inverse document frequency of each piece of the table among the tools.
    idf: Vec<f32>,
}

impl MeaningIndex {
    /// Vectors for `texts`, one per tool.
    pub(crate) fn new(texts: &[String]) -> Self {
        let table = table();
        let mut documents: Vec<Vec<u32>> = Vec::with_capacity(texts.len());
        let mut frequency = vec![0_u32; table.scales.len()];
        let mut known = FnvMap::default();
        for text in texts {
            let mut pieces = Vec::new();
            text_pieces(table, text, Some(&mut known), &mut pieces);
            let mut distinct = pieces.clone();
            distinct.sort_unstable();
            distinct.dedup();
            for &piece in &distinct {
                frequency[piece as usize] += 1;
            }
            documents.push(pieces);
        }
        #[expect(clippy::cast_precision_loss, reason = "counts far below 2^24")]
        let count = texts.len() as f32 + 1.0;
        #[expect(clippy::cast_precision_loss, reason = "counts far below 2^24")]
        let idf: Vec<f32> = frequency
            .iter()
            .map(|&f| (count / (f as f32 + 0.5)).ln())
            .collect();
        let mut index = Self {
            dims: table.dims,
            vectors: Vec::with_capacity(texts.len() * table.dims),
            scales: Vec::with_capacity(texts.len()),
            idf,
        };
        let mut vector = vec![0.0; table.dims];
        for pieces in &documents {
            index.embed(table, pieces, &mut vector);
            index.scales.push(quantize(&vector, &mut index.vectors));
        }
        index
    }

    /// The weighted, normalised vector of `pieces` into `vector` (all zeros when none).
    fn embed(&self, table: &Table, pieces: &[u32], vector: &mut [f32]) {
        vector.fill(0.0);
        for &piece in pieces {
            table.add(piece, self.idf[piece as usize], vector);
        }
        let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
        if norm > 0.0 {
            for value in vector.iter_mut() {
                *value /= norm;
            }
        }
    }

    /// The cosine similarity of `query` to every tool's text, in indexing order (all zero
    /// when the query has no known word piece).
    pub(crate) fn similarities(&self, query: &str) -> Vec<f32> {
        let tools = self.scales.len();
        if tools == 0 {
            return Vec::new();
        }
        let table = table();
        let mut pieces = Vec::new();
        text_pieces(table, query, None, &mut pieces);
        if pieces.is_empty() {
            return vec![0.0; tools];
        }
        let mut vector = vec![0.0; self.dims];
        self.embed(table, &pieces, &mut vector);
        let mut query = Vec::with_capacity(self.dims);
        let query_scale = quantize(&vector, &mut query);
        self.vectors
            .chunks_exact(self.dims)
            .zip(&self.scales)
            .map(|(tool, scale)| {
                #[expect(
                    clippy::cast_precision_loss,
                    reason = "|dot| ≤ 256 × 127², exact in f32"
                )]
                let dot = dot(tool, &query) as f32;
                dot * scale * query_scale
            })
            .collect()
    }
}

/// Appends `vector` as int8 to `into` and returns the scale that turns them back.
fn quantize(vector: &[f32], into: &mut Vec<i8>) -> f32 {
    let largest = vector.iter().fold(0.0_f32, |m, v| m.max(v.abs()));
    let scale = if largest > 0.0 { largest / 127.0 } else { 1.0 };
    #[expect(
        clippy::cast_possible_truncation,
        reason = "rounded values within ±127"
    )]
    into.extend(vector.iter().map(|v| (v / scale).round() as i8));
    scale
}

/// The dot product of two int8 vectors, in fixed blocks of 32 so it vectorises.
fn dot(a: &[i8], b: &[i8]) -> i32 {
    let ((a_blocks, a_tail), (b_blocks, b_tail)) = (a.as_chunks::<32>(), b.as_chunks::<32>());
    let mut lanes = [0_i32; 32];
    for (x, y) in a_blocks.iter().zip(b_blocks) {
        for lane in 0..32 {
            lanes[lane] += i32::from(x[lane]) * i32::from(y[lane]);
        }
    }
    let tail: i32 = a_tail
        .iter()
        .zip(b_tail)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum();
    lanes.iter().sum::<i32>() + tail
}

/// `Vec<i8>` kept as one run of bytes: read back as a sequence, the vectors of thousands
/// of tools grew by doubling past serde's cautious first allocation (1 MiB), and a kept
/// index held up to half as much again.
mod int8_bytes {
    use std::fmt;

    use serde::{Deserializer, Serializer};

    #[expect(clippy::ptr_arg, reason = "serde's `with` passes the field as it is")]
    pub(super) fn serialize<S: Serializer>(
        values: &Vec<i8>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let bytes: Vec<u8> = values.iter().map(|&value| value.to_ne_bytes()[0]).collect();
        serializer.serialize_bytes(&bytes)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<i8>, D::Error> {
        deserializer.deserialize_bytes(Bytes)
    }

    struct Bytes;

    impl serde::de::Visitor<'_> for Bytes {
        type Value = Vec<i8>;

        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("int8 values as bytes")
        }

        fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
            Ok(bytes
                .iter()
                .map(|&byte| i8::from_ne_bytes([byte]))
                .collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_loads() {
        let table = table();
        assert_eq!(table.dims, 256);
        assert!(table.initial.len() > 20_000, "{}", table.initial.len());
        assert!(table.continuing.len() > 4_000, "{}", table.continuing.len());
    }

    #[test]
    fn words_split_into_known_pieces() {
        let table = table();
        let mut pieces = Vec::new();
        table.pieces("elevation", &mut pieces);
        assert_eq!(pieces.len(), 1);
        pieces.clear();
        table.pieces("geocoding", &mut pieces);
        assert!(pieces.len() >= 2, "{pieces:?}");
        pieces.clear();
        table.pieces("日本", &mut pieces);
        assert!(pieces.is_empty());
    }

    #[test]
    fn related_texts_are_closer_than_unrelated_ones() {
        let texts = [
            "maps_elevation: Get the elevation data for locations on the earth".to_owned(),
            "send_email: Send an email message to a recipient".to_owned(),
            "create_issue: Open a new issue in a GitHub repository".to_owned(),
        ];
        let index = MeaningIndex::new(&texts);
        let similar = index.similarities("how high above sea level is this mountain");
        assert!(
            similar[0] > similar[1] && similar[0] > similar[2],
            "{similar:?}"
        );
        let similar = index.similarities("write to my colleague by mail");
        assert!(
            similar[1] > similar[0] && similar[1] > similar[2],
            "{similar:?}"
        );
    }

    #[test]
    fn a_query_without_known_pieces_is_close_to_nothing() {
        let index = MeaningIndex::new(&["add: Add two numbers".to_owned()]);
        assert_eq!(index.similarities("日本語"), [0.0]);
    }
}
