//! Building the search index: each tool's fields split into terms and counted, its text
//! turned into a meaning vector, and the lookups a search needs (sorted terms, terms by
//! length, average field lengths).

use std::borrow::Borrow;

use toolsmith_model::ToolDefinition;

use super::{FIELD_COUNT, Field, Posting, SearchIndex};
use crate::intent;
use crate::meaning::MeaningIndex;
use crate::operation;
use crate::text::{for_each_indexed_term, words};

impl SearchIndex {
    /// Indexes `definitions`.
    pub fn new(definitions: impl IntoIterator<Item = impl Borrow<ToolDefinition>>) -> Self {
        let mut index = Self::default();
        let mut meaning_texts = Vec::new();
        for definition in definitions {
            let definition = definition.borrow();
            // Read once from the schema's text for both texts.
            let parameters = definition.input_schema.parameters();
            index.add(definition, &parameters);
            meaning_texts.push(meaning_text(definition, &parameters));
        }
        let ids = 0..u32::try_from(index.vocabulary.len()).unwrap_or(u32::MAX);
        index.sorted = ids.clone().collect();
        index.sorted.sort_unstable_by(|&a, &b| {
            index.vocabulary[a as usize].cmp(&index.vocabulary[b as usize])
        });
        for id in ids {
            let length = index.vocabulary[id as usize].len();
            if index.by_length.len() <= length {
                index.by_length.resize_with(length + 1, Vec::new);
            }
            index.by_length[length].push(id);
        }
        let count = index.names.len().max(1);
        for field in 0..FIELD_COUNT {
            let total: u64 = index
                .field_lengths
                .iter()
                .map(|l| u64::from(l[field]))
                .sum();
            #[expect(clippy::cast_precision_loss, reason = "counts far below 2^52")]
            let average = total as f64 / count as f64;
            index.average_lengths[field] = average.max(1.0);
        }
        index.meaning = MeaningIndex::new(&meaning_texts);
        // What indexing grew by doubling is kept at its size, and what only indexing used
        // is let go (a few MB of a folder of thousands of tools).
        for postings in &mut index.postings {
            postings.shrink_to_fit();
        }
        index.postings.shrink_to_fit();
        index.last_document = Vec::new();
        index.term_ids = fnv::FnvHashMap::default();
        index
    }

    /// How many tools are indexed.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Whether the index holds exactly the tools named `names`, in their order.
    pub fn indexes<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> bool {
        let mut names = names.into_iter();
        self.names
            .iter()
            .all(|name| names.next() == Some(name.as_str()))
            && names.next().is_none()
    }

    fn add(&mut self, definition: &ToolDefinition, parameters: &[(String, Option<String>)]) {
        let document = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.push(definition.name.clone());
        self.normalized_names
            .entry(words(&definition.name).join("_"))
            .or_default()
            .push(document as usize);
        let parameters = parameters_text(parameters);
        let fields = [
            (Field::Name, definition.name.clone()),
            (Field::Title, definition.title.clone().unwrap_or_default()),
            (Field::Keywords, definition.keywords.join(" ")),
            // The folders a tool is in say what it belongs to, as tags do.
            (
                Field::Tags,
                [&definition.tags[..], &definition.folder[..]]
                    .concat()
                    .join(" "),
            ),
            (Field::Description, definition.description.clone()),
            (Field::Parameters, parameters),
        ];
        let mut lengths = [0; FIELD_COUNT];
        let mut ids: Vec<usize> = Vec::new();
        for (field, text) in fields {
            ids.clear();
            for_each_indexed_term(&text, |term| ids.push(self.add_term(term)));
            lengths[field as usize] = u32::try_from(ids.len()).unwrap_or(u32::MAX);
            ids.sort_unstable();
            for run in ids.chunk_by(|a, b| a == b) {
                let id = run[0];
                self.postings[id].push(Posting {
                    document,
                    field,
                    frequency: u16::try_from(run.len()).unwrap_or(u16::MAX),
                });
                // Counted once per tool, however many of its fields have the term.
                if self.last_document[id] != Some(document) {
                    self.last_document[id] = Some(document);
                    self.document_frequency[id] += 1;
                }
            }
        }
        self.field_lengths.push(lengths);
        self.intents.push(intent::of_tool(&definition.name));
        self.operations.push(operation::of_tool(&definition.name));
        self.batches
            .push(operation::is_batch_tool(&definition.name));
        for folder in &definition.folder {
            for word in whole_words(folder) {
                let tools = self.folder_words.entry(word).or_default();
                if tools.last() != Some(&document) {
                    tools.push(document);
                }
            }
        }
    }

    fn add_term(&mut self, term: &str) -> usize {
        if let Some(&id) = self.term_ids.get(term) {
            return id;
        }
        let term = term.to_owned();
        let id = self.vocabulary.len();
        self.term_ids.insert(term.clone(), id);
        self.masks.push(mask(&term));
        self.vocabulary.push(term);
        self.postings.push(Vec::new());
        self.document_frequency.push(0);
        self.last_document.push(None);
        id
    }
}

/// The words of `text` split only at what is not a letter or digit, lowercased: how a
/// query names a folder (`GitHub` and `github` are the folder `github/`, not `git/`).
pub(super) fn whole_words(text: &str) -> impl Iterator<Item = String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
}

/// The text a tool's meaning is taken from: name, title, description, keywords, tags,
/// folders and parameter names.
fn meaning_text(definition: &ToolDefinition, parameters: &[(String, Option<String>)]) -> String {
    let mut text = definition.name.clone();
    for part in [
        definition.title.as_deref().unwrap_or_default(),
        &definition.description,
    ] {
        text.push(' ');
        text.push_str(part);
    }
    for word in definition
        .keywords
        .iter()
        .chain(&definition.tags)
        .chain(&definition.folder)
    {
        text.push(' ');
        text.push_str(word);
    }
    for (name, _) in parameters {
        text.push(' ');
        text.push_str(name);
    }
    text
}

/// A tool's parameter names and descriptions, space separated: the text of its
/// parameters field.
pub fn parameter_text(definition: &ToolDefinition) -> String {
    parameters_text(&definition.input_schema.parameters())
}

/// [`parameter_text`] of parameters already read from the schema.
fn parameters_text(parameters: &[(String, Option<String>)]) -> String {
    let mut text = String::new();
    for (name, description) in parameters {
        text.push_str(name);
        text.push(' ');
        if let Some(description) = description {
            text.push_str(description);
            text.push(' ');
        }
    }
    text
}

/// The letters and digits `term` has, one bit each (other characters share one bit).
pub(super) fn mask(term: &str) -> u64 {
    term.bytes().fold(0, |mask, byte| {
        let bit = match byte {
            b'a'..=b'z' => byte - b'a',
            b'0'..=b'9' => 26 + byte - b'0',
            _ => 36,
        };
        mask | 1 << bit
    })
}
