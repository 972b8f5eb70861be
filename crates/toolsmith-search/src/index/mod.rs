//! The search index: per-field term postings over tool definitions, scored BM25-style with
//! field weights, with prefix and typo-tolerant expansion of each query term.

mod build;
mod fit;
mod stored;

use fnv::FnvHashMap as HashMap;
use serde::{Deserialize, Serialize};

use crate::intent::{self, Intent};
use crate::meaning::MeaningIndex;
use crate::operation::{self, Operation};
use crate::synonyms::{spell_out, synonyms};
use crate::text::{bounded_distance, terms, words};

pub use build::parameter_text;
use build::{mask, whole_words};
use fit::Ranked;
pub use fit::{Confidence, Judged, Verdict};

/// The parts of a definition that are indexed, each with its own weight.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum Field {
    Name,
    Title,
    Keywords,
    Tags,
    Description,
    Parameters,
}

const FIELD_COUNT: usize = 6;

impl Field {
    /// How much a match in this field counts: a word of the name says more about what a
    /// tool does than a word of a parameter's description. (A name is a few words, and full
    /// length normalisation, `B`, already lifts each of them; at 3.0 it counted twice.)
    fn weight(self) -> f64 {
        match self {
            Self::Keywords => 2.5,
            Self::Title => 2.0,
            Self::Name | Self::Tags => 1.5,
            Self::Description => 1.0,
            Self::Parameters => 0.25,
        }
    }
}

/// BM25's term-frequency saturation. Higher than the textbook 1.2: a word a tool's text
/// repeats says more about the tool than one it mentions in passing. `K1`, `B`, the name's
/// weight and `MEANING_WEIGHT` were chosen together on the train, dev and tune queries of
/// `bench/discovery` and checked on 300 queries written after the choice (`queries-tune.jsonl`
/// has them now: recall@5 there 0.860 → 0.883).
const K1: f64 = 2.4;
/// BM25's length normalisation: full, so a word of a short field (a name, a title) counts
/// for more than a word of a long description.
const B: f64 = 1.0;

/// How much an expanded term counts against the query term itself.
const PREFIX_FACTOR: f64 = 0.7;
const SYNONYM_FACTOR: f64 = 0.7;
const ONE_TYPO_FACTOR: f64 = 0.6;
const TWO_TYPOS_FACTOR: f64 = 0.4;

/// How much the meaning signal counts against the best word match (which counts 1).
const MEANING_WEIGHT: f64 = 1.33;
/// How similar in meaning a tool that matches no query word must be to be a result.
const MEANING_ALONE_THRESHOLD: f64 = 0.35;
/// The tool closest in meaning to the query (when it is a result) ranks at least this
/// high.
const CLOSEST_IN_MEANING_BY: usize = 5;
/// Added to the score of a tool in a folder the query names ("asana" → `tools/asana/`).
const FOLDER_NAMED: f64 = 0.25;
/// Taken from the score of a tool that changes things when the query asks to look
/// ("which branches are protected?" → not `protect_branch`). A create or update tool's
/// description lists the fields it sets, and a request to see them names them too, so the
/// words alone favour it ("pull up task 1209: assignee, due date, notes"). It was 0.22 when
/// fitted before the operation rules; 0.4 on the train, dev and tune queries since (0.3 to 0.7
/// scored within a query of each other).
const CHANGES_BUT_ASKED_TO_LOOK: f64 = 0.4;
/// Taken from the score of a tool that only looks when the query asks for a change.
const LOOKS_BUT_ASKED_TO_CHANGE: f64 = 0.1;

/// One search result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The tool's name.
    pub name: String,
    /// Relevance, higher is better; only comparable within one search. Rounded to three
    /// decimals so renderings are stable.
    pub score: f64,
}

/// One term in one field of one tool: 8 bytes, as a folder of thousands of tools has
/// hundreds of thousands of them.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Posting {
    document: u32,
    /// How often the term occurs in the field (a field repeating a word more than 65,535
    /// times counts as that many).
    frequency: u16,
    field: Field,
}

const _: () = assert!(size_of::<Posting>() == 8);

/// An index over tool definitions, built once per catalog and searched many times; it
/// can be stored (serde) and read back, as `toolsmith search` keeps it between runs.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct SearchIndex {
    names: Vec<String>,
    /// Tools by their name's words joined by `_`, for the exact-name match
    /// (`getWeather` = `get_weather`).
    normalized_names: HashMap<String, Vec<usize>>,
    /// Each term's id, while indexing; a built index finds a term in `sorted` instead,
    /// which spares a second copy of the vocabulary (a folder of thousands of
    /// tools has tens of thousands of terms).
    #[serde(skip)]
    term_ids: HashMap<String, usize>,
    vocabulary: Vec<String>,
    /// Which letters and digits each term has: a term one edit away from another differs
    /// in at most two of them, which rules out most of the vocabulary before any distance
    /// is computed.
    masks: Vec<u64>,
    /// Term ids sorted by their text, for prefix matches; filled by [`SearchIndex::new`].
    sorted: Vec<u32>,
    /// Term ids by length in bytes, for typo matches; filled by [`SearchIndex::new`].
    by_length: Vec<Vec<u32>>,
    #[serde(with = "stored")]
    postings: Vec<Vec<Posting>>,
    /// How many documents contain each term, in any field.
    document_frequency: Vec<u32>,
    /// The last document counted in `document_frequency`, per term (while indexing).
    #[serde(skip)]
    last_document: Vec<Option<u32>>,
    field_lengths: Vec<[u32; FIELD_COUNT]>,
    average_lengths: [f64; FIELD_COUNT],
    meaning: MeaningIndex,
    /// Whether each tool reads or changes, by its name.
    intents: Vec<Option<Intent>>,
    /// Which operation each tool does, by its name (`operation.rs`).
    operations: Vec<Option<Operation>>,
    /// Whether each tool works in batches, by its name.
    batches: Vec<bool>,
    /// The tools in a folder with this word in its name (`aws-iam` → aws, iam).
    folder_words: HashMap<String, Vec<u32>>,
}

impl SearchIndex {
    /// The tools that best match `query`, best first, at most `limit`.
    ///
    /// Each query term matches index terms exactly, by prefix (terms of three letters or
    /// more) or with one typo (four letters or more; two typos from eight), the expansions
    /// counting less. A tool's word score is the sum over query terms of the best-matching
    /// expansion's weighted BM25 score, scaled by the share of query terms it matched (each
    /// term weighing its rarest match's idf), so tools matching every word come first. Its
    /// final score adds the meaning signal:
    /// `sqrt(word score / best word score) + MEANING_WEIGHT × cosine` of the query's and
    /// the tool's vectors (`meaning.rs`), plus `FOLDER_NAMED` for a tool in a folder the
    /// query names, less a penalty for a tool that changes things when the query asks to
    /// look or the other way round (`intent.rs`); a tool no query word matched needs a cosine
    /// of `MEANING_ALONE_THRESHOLD`. Results are ordered by that score, ties by name, with two
    /// exceptions: a query that is exactly a tool's name (in any case style) puts that tool
    /// first, and the tool closest in meaning (one of the results) is never below fifth
    /// place, so its score can be lower than the one above it.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        self.ranked(query, limit).hits
    }

    /// [`SearchIndex::search`], with how sure it is that the best tool does what `query`
    /// asks ([`Judged::verdict`]): the no-fit floor of `tool_search` (`fit.rs`).
    pub fn search_judged(&self, query: &str, limit: usize) -> Judged {
        let ranked = self.ranked(query, limit.max(1));
        let (verdict, confidence) = self.judge(query, &ranked);
        let mut hits = ranked.hits;
        hits.truncate(limit);
        Judged {
            hits,
            verdict,
            confidence,
        }
    }

    /// The ranking of [`SearchIndex::search`], with what the verdict reads of it.
    fn ranked(&self, query: &str, limit: usize) -> Ranked {
        // The exact-name match reads the query as written; everything else, with its
        // abbreviations spelled out.
        let normalized_query = words(query).join("_");
        let spelled = spell_out(query);
        let query: &str = &spelled;
        let (scores, coverage) = self.word_scores(query);
        // Words and meaning, combined: the word score relative to the best tool's (square
        // root, so a partial word match still counts), plus the cosine similarity of the
        // query's meaning to the tool's. A tool no query word matched needs a clear
        // meaning match to show up at all.
        let best_words = scores.iter().copied().fold(0.0, f64::max);
        let similarities = self.meaning.similarities(query);
        let context = self.context(query);
        let mut hits: Vec<(usize, f64)> = scores
            .iter()
            .zip(&similarities)
            .zip(&context)
            .enumerate()
            .filter(|(_, ((words, meaning), _))| {
                **words > 0.0 || f64::from(**meaning) >= MEANING_ALONE_THRESHOLD
            })
            .map(|(document, ((words, meaning), context))| {
                let words = if best_words > 0.0 {
                    (words / best_words).sqrt()
                } else {
                    0.0
                };
                (
                    document,
                    words + MEANING_WEIGHT * f64::from(*meaning) + context,
                )
            })
            .collect();
        let named = self.normalized_names.get(&normalized_query);
        if let Some(documents) = named {
            let top = hits.iter().map(|(_, score)| *score).fold(0.0, f64::max);
            hits.retain(|(other, _)| !documents.contains(other));
            hits.extend(documents.iter().map(|&document| (document, top + 1.0)));
        }
        let order = |a: &(usize, f64), b: &(usize, f64)| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.names[a.0].cmp(&self.names[b.0]))
        };
        if limit == 0 {
            return Ranked::default();
        }
        // The tool closest in meaning, kept to be placed among the first five below.
        let closest = hits
            .iter()
            .filter(|(document, _)| f64::from(similarities[*document]) >= MEANING_ALONE_THRESHOLD)
            .max_by(|a, b| {
                similarities[a.0]
                    .total_cmp(&similarities[b.0])
                    .then_with(|| self.names[b.0].cmp(&self.names[a.0]))
            })
            .copied();
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, order);
            hits.truncate(limit);
        }
        hits.sort_by(order);
        // Tools that share words with the query can crowd out the one described in other
        // words ("how high above sea level" → `maps_elevation`): the closest in meaning
        // takes the fifth place (or the last, when fewer are asked for) if it ranked lower.
        if let Some(closest) = closest {
            let slot = limit.min(CLOSEST_IN_MEANING_BY) - 1;
            let position = hits.iter().position(|(document, _)| *document == closest.0);
            if position.is_none_or(|position| position > slot) {
                if let Some(position) = position {
                    hits.remove(position);
                }
                hits.insert(slot.min(hits.len()), closest);
                hits.truncate(limit);
            }
        }
        let first = hits.first().map(|&(document, _)| document);
        Ranked {
            hits: hits
                .into_iter()
                .map(|(document, score)| Hit {
                    name: self.names[document].clone(),
                    score: (score * 1000.0).round() / 1000.0,
                })
                .collect(),
            named_exactly: named.is_some(),
            first: first.map(|document| fit::First {
                coverage: coverage[document],
                closeness: f64::from(similarities[document]),
                closest: f64::from(similarities.iter().copied().fold(0.0, f32::max)),
                known: self.known_share(query),
            }),
        }
    }

    /// What each tool's folder and kind add to its score for `query`: a bonus for a tool in
    /// a folder the query names (by a word of the folder's name), and a penalty for a tool
    /// that changes things when the query asks to look, or looks when it asks for a change
    /// (`intent.rs`). Both were fitted on the train, dev and tune queries of
    /// `bench/discovery`, held out in turn.
    fn context(&self, query: &str) -> Vec<f64> {
        let asked = intent::of_query(query);
        let operation = operation::of_query(query);
        let many = operation::asks_for_many(query);
        let mut context: Vec<f64> = self
            .intents
            .iter()
            .zip(&self.operations)
            .zip(&self.batches)
            .map(|((tool, does), batch)| {
                let looking = match (asked, *tool) {
                    (Some(Intent::Read), Some(Intent::Change)) => -CHANGES_BUT_ASKED_TO_LOOK,
                    (Some(Intent::Change), Some(Intent::Read)) => -LOOKS_BUT_ASKED_TO_CHANGE,
                    _ => 0.0,
                };
                let batch = if many && *batch {
                    operation::BATCH_BONUS
                } else {
                    0.0
                };
                looking + operation::adjustment(operation, *does) + batch
            })
            .collect();
        // Once per tool, however many words of the query name its folder.
        let mut named = vec![false; self.names.len()];
        for folder in self.folders_named(query) {
            for &document in &self.folder_words[&folder] {
                let document = document as usize;
                if !std::mem::replace(&mut named[document], true) {
                    context[document] += FOLDER_NAMED;
                }
            }
        }
        context
    }

    /// The words of folder names `query` names: a word of the query itself; else, when no
    /// folder has it, a folder word it is a typo of (five letters or more, a word no tool
    /// has: `obsidain`, `supabse`), one it begins (five letters or more, at most three
    /// letters short: `mongo` for `mongodb`), or the word it makes with the next one
    /// (`browser mcp` for `browsermcp`).
    fn folders_named(&self, query: &str) -> Vec<String> {
        let words: Vec<String> = whole_words(query).collect();
        let mut named = Vec::new();
        let mut scratch = Vec::new();
        for (at, word) in words.iter().enumerate() {
            if self.folder_words.contains_key(word) {
                named.push(word.clone());
                continue;
            }
            if let Some(next) = words.get(at + 1) {
                let joined = format!("{word}{next}");
                if self.folder_words.contains_key(&joined) {
                    named.push(joined);
                    continue;
                }
            }
            if word.len() < 5 || word.bytes().any(|b| b.is_ascii_digit()) {
                continue;
            }
            let unknown =
                self.term_id(&crate::text::stem(word)).is_none() && self.term_id(word).is_none();
            for folder in self.folder_words.keys() {
                let begins = folder.starts_with(word.as_str()) && folder.len() <= word.len() + 3;
                let typo = unknown
                    && bounded_distance(word.as_bytes(), folder.as_bytes(), 1, &mut scratch)
                        .is_some();
                if begins || typo {
                    named.push(folder.clone());
                }
            }
        }
        named
    }

    /// Each tool's word score for `query` (see [`SearchIndex::search`]), in indexing order,
    /// and how much of the query each tool explains (`fit.rs`): the idf-weighted share of
    /// the query's terms it matched, each match discounted as its expansion is, and a term
    /// the folder does not know at all counting as the rarest term would.
    fn word_scores(&self, query: &str) -> (Vec<f64>, Vec<f64>) {
        let mut query_terms = terms(query);
        query_terms.sort_unstable();
        query_terms.dedup();
        let mut scores = vec![0.0_f64; self.names.len()];
        // The weight of the query terms each tool matched, and of all of them.
        let mut matched = vec![0.0_f64; self.names.len()];
        let mut total_weight = 0.0_f64;
        // Scratch rows reused across terms: a term's best expansion per tool, and one
        // expansion's sum over fields (with the tools it touched, to reset cheaply).
        let mut best = vec![0.0_f64; self.names.len()];
        let mut current = vec![0.0_f64; self.names.len()];
        let mut touched: Vec<usize> = Vec::new();
        let mut reached: Vec<usize> = Vec::new();
        // For the verdict: each tool's explained weight, and the query's whole weight.
        let mut explained = vec![0.0_f64; self.names.len()];
        let mut explained_here = vec![0.0_f64; self.names.len()];
        let mut whole = 0.0_f64;
        for term in &query_terms {
            // A term weighs as much as its rarest match: `migration` more than `table`.
            let mut weight = 0.0_f64;
            let expansions = self.expansions(term);
            for &(id, factor) in &expansions {
                let idf = self.idf(id);
                weight = weight.max(factor * idf);
                for posting in &self.postings[id] {
                    let document = posting.document as usize;
                    if current[document] == 0.0 {
                        touched.push(document);
                    }
                    current[document] += factor * idf * self.field_score(*posting);
                }
                for document in touched.drain(..) {
                    if best[document] == 0.0 {
                        reached.push(document);
                    }
                    best[document] = best[document].max(current[document]);
                    explained_here[document] = explained_here[document].max(factor * idf);
                    current[document] = 0.0;
                }
            }
            total_weight += weight;
            whole += if expansions.is_empty() {
                fit::unknown_term_weight(term, self.idf_of_unseen())
            } else {
                weight
            };
            for document in reached.drain(..) {
                scores[document] += best[document];
                matched[document] += weight;
                explained[document] += explained_here[document];
                best[document] = 0.0;
                explained_here[document] = 0.0;
            }
        }
        if total_weight > 0.0 {
            for (score, matched) in scores.iter_mut().zip(&matched) {
                *score *= matched / total_weight;
            }
        }
        if whole > 0.0 {
            for explained in &mut explained {
                *explained /= whole;
            }
        }
        (scores, explained)
    }

    /// The id of the index term `term`, found in `sorted`.
    fn term_id(&self, term: &str) -> Option<usize> {
        let at = self
            .sorted
            .binary_search_by(|&id| self.vocabulary[id as usize].as_str().cmp(term))
            .ok()?;
        Some(self.sorted[at] as usize)
    }

    /// The index terms `term` matches, each with how much the match counts: itself, longer
    /// terms it begins (three letters or more), and terms one typo away (four letters or
    /// more; two typos from eight).
    fn expansions(&self, term: &str) -> Vec<(usize, f64)> {
        let length = term.len();
        let mut expansions: Vec<(usize, f64)> = Vec::new();
        if let Some(id) = self.term_id(term) {
            expansions.push((id, 1.0));
        }
        for other in synonyms(term) {
            if let Some(id) = self.term_id(other) {
                expansions.push((id, SYNONYM_FACTOR));
            }
        }
        // A word the index knows is taken as meant: widening it to longer words and
        // look-alikes adds more noise than it finds.
        if !expansions.is_empty() {
            return expansions;
        }
        if length >= 3 {
            let start = self
                .sorted
                .partition_point(|&id| self.vocabulary[id as usize].as_str() <= term);
            for &id in &self.sorted[start..] {
                if !self.vocabulary[id as usize].starts_with(term) {
                    break;
                }
                expansions.push((id as usize, PREFIX_FACTOR));
            }
        }
        if length >= 4 {
            let limit = if length >= 8 { 2 } else { 1 };
            let wanted = mask(term);
            let mut scratch = Vec::new();
            let lengths =
                length - limit..=(length + limit).min(self.by_length.len().saturating_sub(1));
            for id in lengths.flat_map(|l| &self.by_length[l]) {
                let id = *id as usize;
                if (self.masks[id] ^ wanted).count_ones() > 2 * u32::try_from(limit).unwrap_or(2) {
                    continue;
                }
                let candidate = &self.vocabulary[id];
                if candidate.starts_with(term) {
                    continue; // already a prefix match
                }
                let factor = match bounded_distance(
                    term.as_bytes(),
                    candidate.as_bytes(),
                    limit,
                    &mut scratch,
                ) {
                    Some(1) => ONE_TYPO_FACTOR,
                    Some(2) => TWO_TYPOS_FACTOR,
                    _ => continue,
                };
                expansions.push((id, factor));
            }
        }
        expansions
    }

    /// The share of `query`'s terms (numbers and one- or two-letter words aside) that some
    /// tool has, exactly or by stem.
    fn known_share(&self, query: &str) -> f64 {
        let (mut known, mut all) = (0_u32, 0_u32);
        for term in terms(query) {
            if fit::unknown_term_weight(&term, 1.0) == 0.0 {
                continue;
            }
            all += 1;
            known += u32::from(self.term_id(&term).is_some());
        }
        if all == 0 {
            1.0
        } else {
            f64::from(known) / f64::from(all)
        }
    }

    /// The idf of a term no tool has: the most any term can weigh.
    fn idf_of_unseen(&self) -> f64 {
        let documents = f64::from(u32::try_from(self.names.len()).unwrap_or(u32::MAX));
        (1.0 + (documents + 0.5) / 0.5).ln()
    }

    fn idf(&self, id: usize) -> f64 {
        let documents = f64::from(u32::try_from(self.names.len()).unwrap_or(u32::MAX));
        let frequency = f64::from(self.document_frequency[id]);
        (1.0 + (documents - frequency + 0.5) / (frequency + 0.5)).ln()
    }

    fn field_score(&self, posting: Posting) -> f64 {
        let field = posting.field as usize;
        let frequency = f64::from(posting.frequency);
        let length = f64::from(self.field_lengths[posting.document as usize][field]);
        let normalization = 1.0 - B + B * length / self.average_lengths[field];
        posting.field.weight() * frequency * (K1 + 1.0) / (frequency + K1 * normalization)
    }
}

#[cfg(test)]
mod tests;
