//! `tool_search` ranking on real tools: recall@1, recall@5 and MRR of Toolsmith's
//! `SearchIndex` against plain BM25 and Scriptling's heuristic, on the corpus of real MCP
//! tool definitions in `bench/discovery/` (gathered by `gather.py`) with the hand-written
//! queries of `queries.jsonl` and `queries-tune.jsonl`; then query latency (p50/p99) at 1k
//! and 10k tools and index build time.
//!
//! Run: `cargo bench -p toolsmith-bench --bench discovery [-- --misses train|dev|tune] [-- --quick]`
//! (`--no-heuristic` leaves out Scriptling's heuristic, which takes minutes unoptimised:
//! `cargo bench --profile dev ... -- --quality-only --no-heuristic` runs in seconds).
//!
//! Besides ranking, it reports the no-fit floor: the share of out-of-scope requests each
//! ranking answers "no tool fits" (`queries-oos-tune.jsonl`, written for tuning, and the two
//! held-out sets of `heldout/`), and the share of in-scope requests whose first result is
//! right that it turns away all the same. The held-out sets (`heldout/README.md`) are
//! reported beside the others and never tuned on.
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
use toolsmith_bench::discovery::{
    Layout, Ours, Query, Scores, all_queries, held_out_queries, load_corpus, out_of_scope_queries,
    rank_all,
};
use toolsmith_model::ToolDefinition;
use toolsmith_search::SearchIndex;
const SPLITS: [&str; 5] = ["train", "dev", "tune", "test", "held-out"];

/// The out-of-scope sets: requests no tool of the corpus answers, each reported on its own.
/// The first is for tuning the no-fit floor; the other two are held out (reporting only).
const OUT_OF_SCOPE: [(&str, &str); 3] = [
    ("oos-tune", "queries-oos-tune.jsonl"),
    ("held-out no-tool", "heldout/out-of-scope-jobs.jsonl"),
    ("held-out no-product", "heldout/out-of-scope-products.jsonl"),
];

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
    if matches!(misses.as_deref(), Some("test" | "held-out")) {
        eprintln!(
            "--misses: the test and held-out sets are for reporting only; tune on train, dev or tune"
        );
        std::process::exit(2);
    }

    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("discovery");
    let out = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
        .join("discovery");
    let (definitions, ids) = load_corpus(&here, &out, Layout::Grouped);
    // `--tuning-only`: the tuning splits and out-of-scope set only, nothing held out.
    let tuning = args.iter().any(|a| a == "--tuning-only");
    let mut queries = all_queries(&here, &definitions, &ids);
    if !tuning {
        queries.extend(held_out_queries(&here, &definitions, &ids));
    }
    if let Some(path) = args
        .iter()
        .position(|a| a == "--floor-features")
        .and_then(|i| args.get(i + 1))
    {
        floor_features(&here, &definitions, &queries, Path::new(path));
        return;
    }
    let heuristic = !args.iter().any(|a| a == "--no-heuristic");
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
    report["quality"] = quality(&definitions, &queries, misses.as_deref(), heuristic);
    report["no_fit"] = no_fit(&here, &definitions, &queries, tuning);
    if tuning {
        return;
    }
    // The same tools without the per-server folders: what the ranking makes of the tools'
    // own text alone.
    let (flat, ids) = load_corpus(&here, &out, Layout::Flat);
    let mut flat_queries = all_queries(&here, &flat, &ids);
    flat_queries.extend(held_out_queries(&here, &flat, &ids));
    let ranked = rank_all(&Ours::new(&flat), &flat_queries);
    let rows = print_scores("toolsmith, flat folder", &flat_queries, &ranked);
    report["quality"]
        .as_array_mut()
        .expect("quality is an array")
        .extend(rows);
    if args.iter().any(|a| a == "--quality-only") {
        return;
    }
    report["latency"] = latency(&definitions, &queries, quick, heuristic);
    let path = out.join("results.json");
    if let Err(error) = std::fs::write(&path, format!("{report:#}\n")) {
        eprintln!("cannot write {}: {error}", path.display());
    } else {
        eprintln!("\nraw results: {}", path.display());
    }
}

/// Recall@1, recall@5 and MRR of every ranking on every split, printed as a table.
fn quality(
    definitions: &[ToolDefinition],
    queries: &[Query],
    misses: Option<&str>,
    heuristic: bool,
) -> Value {
    println!("| ranking | split | queries | recall@1 | recall@5 | MRR |");
    println!("|---|---|---:|---:|---:|---:|");
    let mut quality = Vec::new();
    for (name, build) in rankers(heuristic) {
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
            .filter(|(q, _)| {
                q.split == split || (split == "all" && !matches!(q.split, "tune" | "held-out"))
            })
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

/// The rankings measured: Scriptling's heuristic only when `heuristic`.
fn rankers(heuristic: bool) -> impl Iterator<Item = (&'static str, Build)> {
    RANKERS
        .into_iter()
        .filter(move |(name, _)| heuristic || *name != "Scriptling heuristic")
}

/// The no-fit floor of Toolsmith and plain BM25: the share of each out-of-scope set answered
/// "no tool fits", and per in-scope split the share of the queries whose first result is
/// right that are turned away all the same.
fn no_fit(here: &Path, definitions: &[ToolDefinition], queries: &[Query], tuning: bool) -> Value {
    println!("\n| ranking | set | queries | answered \"no tool fits\" |");
    println!("|---|---|---:|---:|");
    let mut rows = Vec::new();
    for (name, build) in rankers(false) {
        let ranker = build(definitions);
        for (set, file) in OUT_OF_SCOPE.iter().take(if tuning { 1 } else { 3 }) {
            let texts = out_of_scope_queries(&here.join(file));
            let rejected = texts.iter().filter(|text| ranker.rejects(text)).count();
            println!(
                "| {name} | {set} (out of scope) | {} | {} |",
                texts.len(),
                share(rejected, texts.len())
            );
            rows.push(json!({"ranking": name, "set": set, "queries": texts.len(),
                "rejected": rejected}));
        }
        for split in SPLITS.iter().take(if tuning { 3 } else { 5 }) {
            let right: Vec<&Query> = queries
                .iter()
                .filter(|q| q.split == *split)
                .filter(|q| {
                    ranker
                        .rank(&q.text, 1)
                        .first()
                        .is_some_and(|t| q.targets.contains(t))
                })
                .collect();
            let rejected = right.iter().filter(|q| ranker.rejects(&q.text)).count();
            println!(
                "| {name} | {split} (in scope, first result right) | {} | {} |",
                right.len(),
                share(rejected, right.len())
            );
            rows.push(
                json!({"ranking": name, "set": split, "queries": right.len(),
                "rejected": rejected, "in_scope": true}),
            );
        }
    }
    Value::Array(rows)
}

/// What the no-fit floor reads of each tuning query, one line each into `path` (TSV: set,
/// whether the first result is right, coverage, closeness, unknown product, query), to fit
/// the floor's constants. Only the tuning sets: nothing held out.
fn floor_features(here: &Path, definitions: &[ToolDefinition], queries: &[Query], path: &Path) {
    use std::fmt::Write as _;
    use toolsmith_search::Verdict;
    let ours = Ours::new(definitions);
    let mut out = String::new();
    let mut line = |set: &str, right: bool, text: &str| {
        let judged = ours.judged(text, 1);
        let c = judged.confidence;
        let product = match &judged.verdict {
            Verdict::UnknownProduct(p) => p.clone(),
            Verdict::Fits | Verdict::NothingFits => String::new(),
        };
        let _ = writeln!(
            out,
            "{set}\t{right}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{product}\t{text}",
            c.coverage, c.closeness, c.closest, c.known
        );
    };
    for query in queries
        .iter()
        .filter(|q| matches!(q.split, "train" | "dev" | "tune"))
    {
        let right = ours
            .rank(&query.text, 1)
            .first()
            .is_some_and(|t| query.targets.contains(t));
        line(query.split, right, &query.text);
    }
    for text in out_of_scope_queries(&here.join(OUT_OF_SCOPE[0].1)) {
        line("oos", false, &text);
    }
    std::fs::write(path, out).expect("the features file is written");
}

/// `part` of `whole` as a share with the counts: `0.850 (68/80)`.
fn share(part: usize, whole: usize) -> String {
    #[expect(clippy::cast_precision_loss, reason = "a few hundred queries")]
    let ratio = part as f64 / whole.max(1) as f64;
    format!("{ratio:.3} ({part}/{whole})")
}

/// Index build time and query latency of every ranking at 1k, 5k and 10k tools.
fn latency(
    definitions: &[ToolDefinition],
    queries: &[Query],
    quick: bool,
    heuristic: bool,
) -> Value {
    println!("\n| tools | ranking | index build | query p50 | query p99 |");
    println!("|---:|---|---:|---:|---:|");
    let mut latency = Vec::new();
    for size in [1_000, 5_000, 10_000] {
        let tools = scaled(definitions, size);
        for (name, build) in rankers(heuristic) {
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
        // `--misses-first`: every query whose first result is wrong, not only those outside
        // the first five.
        let depth = if std::env::args().any(|a| a == "--misses-first") {
            1
        } else {
            5
        };
        if query.split != split || ranked.iter().take(depth).any(|t| query.targets.contains(t)) {
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
