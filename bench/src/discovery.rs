//! The tool-discovery benchmark's data as Toolsmith and the baselines see it: the corpus of
//! `discovery/corpus.json` as a real tools folder, the queries with their splits, and
//! recall@1, recall@5 and MRR of a ranking (`benches/discovery.rs` reports them;
//! `tests/discovery_quality.rs` holds the ranking to its target, bench/discovery/README.md).

#![expect(
    clippy::print_stderr,
    reason = "a corpus file that does not load, or a query naming no tool, is reported and skipped"
)]

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use toolsmith_folder::ToolFolder;
use toolsmith_model::ToolDefinition;
use toolsmith_search::{Judged, SearchIndex};

use crate::baselines::Ranker;
use crate::split_of;

/// Results looked at per query: recall@5 and MRR need no more.
pub const DEPTH: usize = 50;

/// Toolsmith's ranking, as `tool_search` runs it.
pub struct Ours {
    index: SearchIndex,
    positions: HashMap<String, usize>,
}

impl Ours {
    /// The index over `definitions`.
    #[must_use]
    pub fn new(definitions: &[ToolDefinition]) -> Self {
        Self {
            index: SearchIndex::new(definitions),
            positions: definitions
                .iter()
                .enumerate()
                .map(|(position, d)| (d.name.clone(), position))
                .collect(),
        }
    }
}

impl Ours {
    /// The results for `query` with the verdict of the no-fit floor.
    #[must_use]
    pub fn judged(&self, query: &str, limit: usize) -> Judged {
        self.index.search_judged(query, limit)
    }
}

impl Ranker for Ours {
    /// As `tool_search` ranks, verdict included (so the latency measured is its cost too).
    fn rank(&self, query: &str, limit: usize) -> Vec<usize> {
        self.index
            .search_judged(query, limit)
            .hits
            .iter()
            .filter_map(|hit| self.positions.get(&hit.name).copied())
            .collect()
    }

    fn rejects(&self, query: &str) -> bool {
        !self.index.search_judged(query, 1).verdict.fits()
    }
}

/// The held-out task queries (`discovery/heldout/task.jsonl`), in the `held-out` split:
/// for reporting only, never for tuning (`discovery/heldout/README.md`).
#[must_use]
#[expect(clippy::implicit_hasher, reason = "the map `load_corpus` returns")]
pub fn held_out_queries(
    here: &Path,
    definitions: &[ToolDefinition],
    ids: &HashMap<String, String>,
) -> Vec<Query> {
    load_queries(
        &here.join("heldout").join("task.jsonl"),
        definitions,
        ids,
        Some("held-out"),
    )
}

/// The texts of a file of out-of-scope queries (`{"query", "tool": null, ...}` per
/// line): requests no tool of the corpus answers.
///
/// # Panics
/// When the file cannot be read or has a line that is not JSON.
#[must_use]
pub fn out_of_scope_queries(path: &Path) -> Vec<String> {
    let file = path.display();
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{file}: {e}"));
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(number, line)| {
            let record: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{file}:{}: {e}", number + 1));
            record["query"].as_str().unwrap_or_default().to_owned()
        })
        .collect()
}

/// One query of the benchmark.
pub struct Query {
    /// What the user asked.
    pub text: String,
    /// The corpus key, `slug/name`.
    pub key: String,
    /// Indexes of the right tools among the definitions: the one written down, plus any
    /// listed under `also` (the same tool published by two servers).
    pub targets: Vec<usize>,
    /// `train`, `dev`, `tune`, `test` or `held-out`.
    pub split: &'static str,
}

/// Each query's first `DEPTH` results by `ranking`.
#[must_use]
pub fn rank_all(ranking: &dyn Ranker, queries: &[Query]) -> Vec<Vec<usize>> {
    queries
        .iter()
        .map(|q| ranking.rank(&q.text, DEPTH))
        .collect()
}

/// How `make_folder.py` lays the corpus out.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Each server's tools in a subfolder named by its slug.
    Grouped,
    /// Every tool directly in the folder.
    Flat,
}

/// The corpus as a tools folder, loaded by Toolsmith: definitions (in folder order) and
/// the corpus key → tool name map.
///
/// # Panics
/// When `python3 make_folder.py` fails or the folder does not load.
#[must_use]
pub fn load_corpus(
    here: &Path,
    out: &Path,
    layout: Layout,
) -> (Vec<ToolDefinition>, HashMap<String, String>) {
    let folder = out.join(match layout {
        Layout::Grouped => "tools",
        Layout::Flat => "tools-flat",
    });
    let _ = std::fs::remove_dir_all(&folder);
    let mut command = Command::new("python3");
    command
        .arg(here.join("make_folder.py"))
        .arg(here.join("corpus.json"))
        .arg(&folder);
    if layout == Layout::Flat {
        command.arg("--flat");
    }
    let status = command.status().expect("python3 runs make_folder.py");
    assert!(status.success(), "make_folder.py failed");
    let loaded = ToolFolder::load(&folder).expect("the corpus folder loads");
    let problems = loaded.catalog().diagnostics();
    if !problems.is_empty() {
        eprintln!(
            "{} corpus files did not load, e.g. {}",
            problems.len(),
            problems[0]
        );
    }
    let definitions: Vec<ToolDefinition> = loaded.catalog().definitions().cloned().collect();
    let ids: HashMap<String, String> = serde_json::from_str(
        &std::fs::read_to_string(folder.join("_ids.json")).expect("_ids.json"),
    )
    .expect("_ids.json is a JSON object of strings");
    (definitions, ids)
}

/// The queries of `queries.jsonl`, split by a hash of their text, then those of
/// `queries-tune.jsonl`, all in the tune split.
///
/// # Panics
/// When a query file cannot be read or has a line that is not JSON.
#[must_use]
#[expect(clippy::implicit_hasher, reason = "the map `load_corpus` returns")]
pub fn all_queries(
    here: &Path,
    definitions: &[ToolDefinition],
    ids: &HashMap<String, String>,
) -> Vec<Query> {
    let mut queries = load_queries(&here.join("queries.jsonl"), definitions, ids, None);
    queries.extend(load_queries(
        &here.join("queries-tune.jsonl"),
        definitions,
        ids,
        Some("tune"),
    ));
    queries
}

fn load_queries(
    path: &Path,
    definitions: &[ToolDefinition],
    ids: &HashMap<String, String>,
    split: Option<&'static str>,
) -> Vec<Query> {
    let positions: HashMap<&str, usize> = definitions
        .iter()
        .enumerate()
        .map(|(i, d)| (d.name.as_str(), i))
        .collect();
    let file = path.display();
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut queries = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{file}:{}: {e}", number + 1));
        let query = record["query"].as_str().unwrap_or_default().to_owned();
        let key = record["tool"].as_str().unwrap_or_default().to_owned();
        let also = record["also"].as_array().into_iter().flatten();
        let keys: Vec<&str> = std::iter::once(key.as_str())
            .chain(also.filter_map(Value::as_str))
            .collect();
        let targets: Option<Vec<usize>> = keys
            .iter()
            .map(|key| {
                ids.get(*key)
                    .and_then(|name| positions.get(name.as_str()).copied())
            })
            .collect();
        let Some(targets) = targets else {
            eprintln!(
                "{file}:{}: a tool of {keys:?} is not in the corpus; skipped",
                number + 1
            );
            continue;
        };
        queries.push(Query {
            split: split.unwrap_or_else(|| split_of(&query)),
            text: query,
            key,
            targets,
        });
    }
    queries
}

/// Recall@1, recall@5 and MRR of a ranking over some queries.
pub struct Scores {
    /// The share of queries whose tool is first.
    pub recall_1: f64,
    /// The share of queries whose tool is among the first five.
    pub recall_5: f64,
    /// The mean reciprocal rank of the right tool (0 below the first 50).
    pub mrr: f64,
}

impl Scores {
    /// The scores of `picked`: each query with its ranked results.
    #[must_use]
    pub fn of(picked: &[(&Query, &Vec<usize>)]) -> Self {
        let mut scores = Self {
            recall_1: 0.0,
            recall_5: 0.0,
            mrr: 0.0,
        };
        for (query, ranked) in picked {
            if let Some(rank) = ranked.iter().position(|t| query.targets.contains(t)) {
                scores.recall_1 += f64::from(u8::from(rank == 0));
                scores.recall_5 += f64::from(u8::from(rank < 5));
                #[expect(clippy::cast_precision_loss, reason = "ranks below 50")]
                let reciprocal = 1.0 / (rank + 1) as f64;
                scores.mrr += reciprocal;
            }
        }
        #[expect(clippy::cast_precision_loss, reason = "a few hundred queries")]
        let count = picked.len().max(1) as f64;
        scores.recall_1 /= count;
        scores.recall_5 /= count;
        scores.mrr /= count;
        scores
    }
}
