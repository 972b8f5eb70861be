//! `tool_search` ranking on real tools: recall@1, recall@5 and MRR of Toolsmith's
//! `SearchIndex` against plain BM25 and Scriptling's heuristic, on the corpus of real MCP
//! tool definitions in `bench/discovery/` (gathered by `gather.py`) with the hand-written
//! queries of `queries.jsonl` and `queries-tune.jsonl`; then query latency (p50/p99) at 1k
//! and 10k tools and index build time.
//!
//! Run: `cargo bench -p toolsmith-bench --bench discovery [-- --misses train|dev|tune] [-- --quick]`
//!
//! The corpus becomes a real tools folder (`make_folder.py`, one manifest per tool) that
//! Toolsmith's own loader reads, so the definitions searched are the ones `serve` would
//! publish. Each query of `queries.jsonl` belongs to a split by a hash of its text: train
//! 40%, dev 20%, test 40%; the later `queries-tune.jsonl` is all tune. Tune on train, dev
//! and tune (`--misses` prints what they miss); the test split is only reported.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]
#![expect(clippy::print_stderr, reason = "progress and problems go to stderr")]

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolsmith_bench::baselines::{Heuristic, PlainBm25, Ranker};
use toolsmith_bench::discovery::{Layout, Ours, Query, Scores, all_queries, load_corpus, rank_all};
use toolsmith_model::ToolDefinition;
use toolsmith_search::SearchIndex;
const SPLITS: [&str; 4] = ["train", "dev", "tune", "test"];

type Build = fn(&[ToolDefinition]) -> Box<dyn Ranker>;

const RANKERS: [(&str, Build); 3] = [
    ("toolsmith", |d| Box::new(Ours::new(d))),
    ("plain BM25", |d| Box::new(PlainBm25::new(d))),
    ("Scriptling heuristic", |d| Box::new(Heuristic::new(d))),
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let misses = args
        .iter()
        .position(|a| a == "--misses")
        .and_then(|i| args.get(i + 1))
        .cloned();
    if misses.as_deref() == Some("test") {
        eprintln!("--misses test: the test split is for reporting only; tune on train or dev");
        std::process::exit(2);
    }

    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("discovery");
    let out = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
        .join("discovery");
    let (definitions, ids) = load_corpus(&here, &out, Layout::Grouped);
    let queries = all_queries(&here, &definitions, &ids);
    if args.iter().any(|a| a == "--build-only") {
        // For a profiler: only index building, 10k tools, five times.
        let tools = scaled(&definitions, 10_000);
        for _ in 0..5 {
            std::hint::black_box(SearchIndex::new(&tools));
        }
        return;
    }
    println!(
        "corpus: {} tools; queries: {} ({})\n",
        definitions.len(),
        queries.len(),
        SPLITS
            .map(|split| format!(
                "{split} {}",
                queries.iter().filter(|q| q.split == split).count()
            ))
            .join(", ")
    );

    let mut report = json!({"tools": definitions.len(), "queries": queries.len()});
    report["quality"] = quality(&definitions, &queries, misses.as_deref());
    // The same tools without the per-server folders: what the ranking makes of the tools'
    // own text alone.
    let (flat, ids) = load_corpus(&here, &out, Layout::Flat);
    let flat_queries = all_queries(&here, &flat, &ids);
    let ranked = rank_all(&Ours::new(&flat), &flat_queries);
    let rows = print_scores("toolsmith, flat folder", &flat_queries, &ranked);
    report["quality"]
        .as_array_mut()
        .expect("quality is an array")
        .extend(rows);
    if args.iter().any(|a| a == "--quality-only") {
        return;
    }
    report["latency"] = latency(&definitions, &queries, quick);
    let path = out.join("results.json");
    if let Err(error) = std::fs::write(&path, format!("{report:#}\n")) {
        eprintln!("cannot write {}: {error}", path.display());
    } else {
        eprintln!("\nraw results: {}", path.display());
    }
}

/// Recall@1, recall@5 and MRR of every ranking on every split, printed as a table.
fn quality(definitions: &[ToolDefinition], queries: &[Query], misses: Option<&str>) -> Value {
    println!("| ranking | split | queries | recall@1 | recall@5 | MRR |");
    println!("|---|---|---:|---:|---:|---:|");
    let mut quality = Vec::new();
    for (name, build) in RANKERS {
        let ranked = rank_all(build(definitions).as_ref(), queries);
        quality.extend(print_scores(name, queries, &ranked));
        if name == "toolsmith"
            && let Some(split) = misses
        {
            print_misses(queries, &ranked, split, definitions);
        }
    }
    Value::Array(quality)
}

/// Prints one ranking's recall@1, recall@5 and MRR per split as table rows, and returns them.
fn print_scores(name: &str, queries: &[Query], ranked: &[Vec<usize>]) -> Vec<Value> {
    let mut rows = Vec::new();
    for split in SPLITS.iter().copied().chain(["all"]) {
        // "all" is the queries of `queries.jsonl`, as reported before the tune split.
        let picked: Vec<(&Query, &Vec<usize>)> = queries
            .iter()
            .zip(ranked)
            .filter(|(q, _)| q.split == split || (split == "all" && q.split != "tune"))
            .collect();
        let scores = Scores::of(&picked);
        println!(
            "| {name} | {split} | {} | {:.3} | {:.3} | {:.3} |",
            picked.len(),
            scores.recall_1,
            scores.recall_5,
            scores.mrr
        );
        rows.push(
            json!({"ranking": name, "split": split, "queries": picked.len(),
            "recall@1": scores.recall_1, "recall@5": scores.recall_5, "mrr": scores.mrr}),
        );
    }
    rows
}

/// Index build time and query latency of every ranking at 1k and 10k tools.
fn latency(definitions: &[ToolDefinition], queries: &[Query], quick: bool) -> Value {
    println!("\n| tools | ranking | index build | query p50 | query p99 |");
    println!("|---:|---|---:|---:|---:|");
    let mut latency = Vec::new();
    for size in [1_000, 10_000] {
        let tools = scaled(definitions, size);
        for (name, build) in RANKERS {
            let built = time_median(if quick { 1 } else { 3 }, || {
                drop(build(&tools));
            });
            let ranker = build(&tools);
            let samples = query_times(ranker.as_ref(), queries, quick);
            let (p50, p99) = (percentile(&samples, 50), percentile(&samples, 99));
            println!(
                "| {} | {name} | {:.1} ms | {} | {} |",
                tools.len(),
                built.as_secs_f64() * 1e3,
                show(p50),
                show(p99)
            );
            latency.push(json!({"tools": tools.len(), "ranking": name,
                "build_ms": built.as_secs_f64() * 1e3,
                "p50_us": p50.as_secs_f64() * 1e6, "p99_us": p99.as_secs_f64() * 1e6}));
        }
    }
    Value::Array(latency)
}

fn print_misses(queries: &[Query], ranked: &[Vec<usize>], split: &str, tools: &[ToolDefinition]) {
    println!("\nmisses of toolsmith on {split} (not in the top 5):");
    for (query, ranked) in queries.iter().zip(ranked) {
        if query.split != split || ranked.iter().take(5).any(|t| query.targets.contains(t)) {
            continue;
        }
        let got: Vec<&str> = ranked
            .iter()
            .take(3)
            .map(|&t| tools[t].name.as_str())
            .collect();
        let rank = ranked
            .iter()
            .position(|t| query.targets.contains(t))
            .map_or("-".to_owned(), |r| (r + 1).to_string());
        println!(
            "  `{}` -> want {} ({}, rank {rank}), got {got:?}",
            query.text, tools[query.targets[0]].name, query.key
        );
    }
    println!();
}

/// `size` tools: the corpus, then copies of it under new names (`NAME_copy2`, …), for
/// latency only (the copies make postings longer, as a bigger server's would be).
fn scaled(definitions: &[ToolDefinition], size: usize) -> Vec<ToolDefinition> {
    let mut tools: Vec<ToolDefinition> = definitions.iter().take(size).cloned().collect();
    let mut copy = 2;
    while tools.len() < size {
        for definition in definitions {
            if tools.len() == size {
                break;
            }
            let mut renamed = definition.clone();
            renamed.name = format!("{}_copy{copy}", definition.name);
            tools.push(renamed);
        }
        copy += 1;
    }
    tools
}

/// Every query timed once per round, rounds repeated for 2 s (0.3 s with `--quick`).
fn query_times(ranker: &dyn Ranker, queries: &[Query], quick: bool) -> Vec<Duration> {
    let budget = Duration::from_millis(if quick { 300 } else { 2_000 });
    let started = Instant::now();
    let mut samples = Vec::new();
    let mut rounds = 0;
    while rounds == 0 || started.elapsed() < budget {
        for query in queries {
            let began = Instant::now();
            std::hint::black_box(ranker.rank(&query.text, 5));
            samples.push(began.elapsed());
        }
        rounds += 1;
    }
    samples.sort_unstable();
    samples
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    sorted[(sorted.len() * p / 100).min(sorted.len() - 1)]
}

fn time_median(runs: usize, mut work: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let began = Instant::now();
            work();
            began.elapsed()
        })
        .collect();
    times.sort_unstable();
    times[times.len() / 2]
}

fn show(duration: Duration) -> String {
    let micros = duration.as_secs_f64() * 1e6;
    if micros >= 1_000.0 {
        format!("{:.2} ms", micros / 1e3)
    } else {
        format!("{micros:.0} µs")
    }
}
