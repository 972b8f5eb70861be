//! The two rankings `tool_search` is measured against:
//!
//! - [`PlainBm25`]: textbook BM25 over each tool's text concatenated (name, title,
//!   keywords, tags, folders, description, parameter names and descriptions), lowercased words split
//!   on anything not alphanumeric; no field weights, stemming, stop words or typo tolerance.
//! - [`Heuristic`]: Scriptling's tool search, the ladder of match kinds it scores a query
//!   word with, averaged over the query's words.
//!
//! Both return tool indexes into the definitions they were built from, best first.

use std::collections::HashMap;

use toolsmith_model::ToolDefinition;
use toolsmith_search::parameter_text;

/// A ranking of tools for a query: indexes into the definitions, best first.
pub trait Ranker {
    /// At most `limit` tools for `query`, best first.
    fn rank(&self, query: &str, limit: usize) -> Vec<usize>;

    /// Whether the ranking answers "no tool fits" for `query`. A ranking without a floor
    /// says so only when it finds nothing at all.
    fn rejects(&self, query: &str) -> bool {
        self.rank(query, 1).is_empty()
    }
}

/// Lowercased runs of alphanumeric characters.
fn plain_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
}

/// Ranks `scores` (one per tool), dropping zeros, ties by index.
fn best(scores: &[f64], limit: usize) -> Vec<usize> {
    let mut hits: Vec<usize> = (0..scores.len()).filter(|&i| scores[i] > 0.0).collect();
    hits.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    hits.truncate(limit);
    hits
}

/// Plain BM25 (k1 = 1.2, b = 0.75) over the concatenated text of each tool.
pub struct PlainBm25 {
    postings: HashMap<String, Vec<(usize, u32)>>,
    lengths: Vec<f64>,
    average_length: f64,
}

impl PlainBm25 {
    /// Indexes `definitions`.
    pub fn new(definitions: &[ToolDefinition]) -> Self {
        let mut postings: HashMap<String, Vec<(usize, u32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(definitions.len());
        for (document, definition) in definitions.iter().enumerate() {
            let text = [
                definition.name.as_str(),
                definition.title.as_deref().unwrap_or_default(),
                &definition.keywords.join(" "),
                &definition.tags.join(" "),
                &definition.folder.join(" "),
                &definition.description,
                &parameter_text(definition),
            ]
            .join(" ");
            let mut frequencies: HashMap<String, u32> = HashMap::new();
            let mut length = 0_u32;
            for word in plain_words(&text) {
                *frequencies.entry(word).or_default() += 1;
                length += 1;
            }
            for (word, frequency) in frequencies {
                postings
                    .entry(word)
                    .or_default()
                    .push((document, frequency));
            }
            lengths.push(f64::from(length));
        }
        #[expect(clippy::cast_precision_loss, reason = "tool counts far below 2^52")]
        let average_length = lengths.iter().sum::<f64>() / lengths.len().max(1) as f64;
        Self {
            postings,
            lengths,
            average_length: average_length.max(1.0),
        }
    }
}

impl Ranker for PlainBm25 {
    fn rank(&self, query: &str, limit: usize) -> Vec<usize> {
        const K1: f64 = 1.2;
        const B: f64 = 0.75;
        let mut scores = vec![0.0; self.lengths.len()];
        #[expect(clippy::cast_precision_loss, reason = "tool counts far below 2^52")]
        let documents = self.lengths.len() as f64;
        let mut words: Vec<String> = plain_words(query).collect();
        words.sort_unstable();
        words.dedup();
        for word in words {
            let Some(postings) = self.postings.get(&word) else {
                continue;
            };
            #[expect(clippy::cast_precision_loss, reason = "tool counts far below 2^52")]
            let frequency = postings.len() as f64;
            let idf = (1.0 + (documents - frequency + 0.5) / (frequency + 0.5)).ln();
            for &(document, count) in postings {
                let tf = f64::from(count);
                let normalization = 1.0 - B + B * self.lengths[document] / self.average_length;
                scores[document] += idf * tf * (K1 + 1.0) / (tf + K1 * normalization);
            }
        }
        best(&scores, limit)
    }
}

/// One tool as Scriptling's search sees it.
struct Entry {
    name: String,
    /// The name split on `_`, `-`, `.` and spaces.
    name_tokens: Vec<String>,
    keywords: Vec<String>,
    description: String,
    description_words: Vec<String>,
}

/// Scriptling's heuristic: each query word gets the best of exact name 1.0, name prefix
/// .95, exact name token .92, name token prefix .90, keyword exact or word of a keyword
/// phrase .85, name substring .80, keyword substring .70, description whole word .60,
/// description substring .50; only when none of these matched, a fuzzy fallback (name
/// similarity × .7 when above .6, keyword similarity × .6). A multi-word query scores the
/// average over its words.
pub struct Heuristic {
    entries: Vec<Entry>,
}

impl Heuristic {
    /// Indexes `definitions`; keywords are the tool's keywords, tags and folders.
    pub fn new(definitions: &[ToolDefinition]) -> Self {
        let entries = definitions
            .iter()
            .map(|definition| {
                let name = definition.name.to_lowercase();
                let name_tokens = name
                    .split(['_', '-', '.', ' '])
                    .filter(|token| !token.is_empty())
                    .map(str::to_owned)
                    .collect();
                let keywords = definition
                    .keywords
                    .iter()
                    .chain(&definition.tags)
                    .chain(&definition.folder)
                    .map(|keyword| keyword.to_lowercase())
                    .collect();
                let description = definition.description.to_lowercase();
                let description_words = plain_words(&description).collect();
                Entry {
                    name,
                    name_tokens,
                    keywords,
                    description,
                    description_words,
                }
            })
            .collect();
        Self { entries }
    }

    fn word_score(entry: &Entry, word: &str) -> f64 {
        let ladder = [
            (entry.name == word, 1.0),
            (entry.name.starts_with(word), 0.95),
            (entry.name_tokens.iter().any(|t| t == word), 0.92),
            (entry.name_tokens.iter().any(|t| t.starts_with(word)), 0.90),
            (
                entry
                    .keywords
                    .iter()
                    .any(|k| k == word || k.split_whitespace().any(|w| w == word)),
                0.85,
            ),
            (entry.name.contains(word), 0.80),
            (entry.keywords.iter().any(|k| k.contains(word)), 0.70),
            (entry.description_words.iter().any(|w| w == word), 0.60),
            (entry.description.contains(word), 0.50),
        ];
        if let Some((_, score)) = ladder.iter().find(|(hit, _)| *hit) {
            return *score;
        }
        let name = similarity(&entry.name, word);
        let mut fuzzy = if name > 0.6 { name * 0.7 } else { 0.0 };
        for keyword in &entry.keywords {
            let keyword = similarity(keyword, word);
            if keyword > 0.6 {
                fuzzy = fuzzy.max(keyword * 0.6);
            }
        }
        fuzzy
    }
}

impl Ranker for Heuristic {
    fn rank(&self, query: &str, limit: usize) -> Vec<usize> {
        let words: Vec<String> = query
            .split_whitespace()
            .map(str::to_lowercase)
            .filter(|word| !word.is_empty())
            .collect();
        if words.is_empty() {
            return Vec::new();
        }
        #[expect(clippy::cast_precision_loss, reason = "a handful of words")]
        let count = words.len() as f64;
        let scores: Vec<f64> = self
            .entries
            .iter()
            .map(|entry| {
                words
                    .iter()
                    .map(|word| Self::word_score(entry, word))
                    .sum::<f64>()
                    / count
            })
            .collect();
        best(&scores, limit)
    }
}

/// Levenshtein similarity: 1 − distance / longer length.
fn similarity(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let longer = a.len().max(b.len());
    if longer == 0 {
        return 1.0;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    #[expect(clippy::cast_precision_loss, reason = "short words")]
    let ratio = previous[b.len()] as f64 / longer as f64;
    1.0 - ratio
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools() -> Vec<ToolDefinition> {
        let schema = json!({"type": "object"}).as_object().cloned().unwrap();
        vec![
            ToolDefinition::new("get_weather", "Current weather for a city.", schema.clone()),
            ToolDefinition::new("list_issues", "List the issues of a repository.", schema),
        ]
    }

    #[test]
    fn bm25_ranks_by_shared_words() {
        let index = PlainBm25::new(&tools());
        assert_eq!(index.rank("weather in paris", 5), [0]);
        assert_eq!(index.rank("repository issues", 5), [1]);
        assert!(index.rank("wether", 5).is_empty(), "no typo tolerance");
    }

    #[test]
    fn heuristic_follows_the_ladder() {
        let index = Heuristic::new(&tools());
        let score = |entry: usize, word: &str| Heuristic::word_score(&index.entries[entry], word);
        assert!((score(0, "get_weather") - 1.0).abs() < 1e-9);
        assert!((score(0, "weather") - 0.92).abs() < 1e-9);
        assert!((score(1, "repository") - 0.60).abs() < 1e-9);
        assert_eq!(
            index.rank("get_wether", 5),
            [0],
            "fuzzy fallback on the name"
        );
        assert!((similarity("kitten", "sitting") - (1.0 - 3.0 / 7.0)).abs() < 1e-9);
    }
}
