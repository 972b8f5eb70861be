//! How an index's postings are stored (`toolsmith search` and `serve` keep an index between
//! runs, docs/search.md "The kept index"): each term's postings as one run of bytes, eight a
//! posting, instead of a sequence of structs. A folder of thousands of tools has hundreds
//! of thousands of postings, and reading them back one field at a time was the largest part
//! of reading a kept index.

use std::fmt;

use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeSeq as _;
use serde::{Deserializer, Serialize, Serializer};

use super::{FIELD_COUNT, Field, Posting};

/// The fields in the order of their numbers.
const FIELDS: [Field; FIELD_COUNT] = [
    Field::Name,
    Field::Title,
    Field::Keywords,
    Field::Tags,
    Field::Description,
    Field::Parameters,
];

const POSTING_BYTES: usize = 8;

/// Writes `postings`, each term's as one run of bytes, in term order.
pub(super) fn serialize<S: Serializer>(
    postings: &[Vec<Posting>],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut sequence = serializer.serialize_seq(Some(postings.len()))?;
    let mut bytes = Vec::new();
    for term in postings {
        bytes.clear();
        for posting in term {
            bytes.extend_from_slice(&posting.document.to_le_bytes());
            bytes.extend_from_slice(&posting.frequency.to_le_bytes());
            bytes.extend_from_slice(&[posting.field as u8, 0]);
        }
        sequence.serialize_element(&Run(&bytes))?;
    }
    sequence.end()
}

/// Reads what [`serialize`] wrote.
pub(super) fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<Vec<Posting>>, D::Error> {
    deserializer.deserialize_seq(Terms)
}

/// One term's postings as bytes.
struct Run<'a>(&'a [u8]);

impl Serialize for Run<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

struct Terms;

impl<'de> Visitor<'de> for Terms {
    type Value = Vec<Vec<Posting>>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a sequence of postings as bytes")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut terms: A) -> Result<Self::Value, A::Error> {
        let mut postings = Vec::with_capacity(terms.size_hint().unwrap_or(0).min(1 << 20));
        while let Some(term) = terms.next_element_seed(Postings)? {
            postings.push(term);
        }
        Ok(postings)
    }
}

/// One term's postings, read from its bytes.
struct Postings;

impl<'de> serde::de::DeserializeSeed<'de> for Postings {
    type Value = Vec<Posting>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_bytes(self)
    }
}

impl Visitor<'_> for Postings {
    type Value = Vec<Posting>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("postings as bytes, eight a posting")
    }

    fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
        if !bytes.len().is_multiple_of(POSTING_BYTES) {
            return Err(E::invalid_length(bytes.len(), &self));
        }
        // Sized up front: collected through `Result`, the vector grew by doubling, and a
        // kept index held up to twice its postings.
        let mut postings = Vec::with_capacity(bytes.len() / POSTING_BYTES);
        for b in bytes.chunks_exact(POSTING_BYTES) {
            let field = FIELDS
                .get(usize::from(b[6]))
                .copied()
                .ok_or_else(|| E::custom("unknown field number"))?;
            postings.push(Posting {
                document: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                frequency: u16::from_le_bytes([b[4], b[5]]),
                field,
            });
        }
        Ok(postings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize)]
    struct Held(#[serde(with = "super")] Vec<Vec<Posting>>);

    #[test]
    fn postings_read_back_as_written() {
        let postings = vec![
            vec![
                Posting {
                    document: 7,
                    frequency: 2,
                    field: Field::Description,
                },
                Posting {
                    document: 70_000,
                    frequency: 65_535,
                    field: Field::Parameters,
                },
            ],
            Vec::new(),
            vec![Posting {
                document: 0,
                frequency: 1,
                field: Field::Name,
            }],
        ];
        // postcard: the format the kept index is written in.
        let bytes = postcard::to_stdvec(&Held(postings.clone())).unwrap();
        let Held(read) = postcard::from_bytes(&bytes).unwrap();
        let flat = |p: &Vec<Vec<Posting>>| -> Vec<Vec<(u32, u16, u8)>> {
            p.iter()
                .map(|t| {
                    t.iter()
                        .map(|p| (p.document, p.frequency, p.field as u8))
                        .collect()
                })
                .collect()
        };
        assert_eq!(flat(&read), flat(&postings));
    }
}
