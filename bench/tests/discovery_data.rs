//! The discovery benchmark's data stays usable: every query names a tool of the corpus,
//! the corpus is as big as a fair measure needs (≥ 1,000 tools, ≥ 300 queries), and the tune
//! queries are about other tools than the benchmark's.

use std::collections::HashSet;

use serde_json::Value;
use toolsmith_bench::split_of;

fn read(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("discovery")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_query_names_a_tool_of_the_corpus() {
    let corpus: Value = serde_json::from_str(&read("corpus.json")).expect("corpus.json is JSON");
    let tools = corpus["tools"].as_array().expect("a tools array");
    assert!(tools.len() >= 1_000, "{} tools", tools.len());
    let keys: HashSet<String> = tools
        .iter()
        .map(|t| {
            format!(
                "{}/{}",
                t["server"].as_str().unwrap_or_default(),
                t["name"].as_str().unwrap_or_default()
            )
        })
        .collect();
    let servers = corpus["servers"].as_array().expect("a servers array");
    assert!(
        servers
            .iter()
            .all(|s| s["version"].as_str().is_some_and(|v| !v.is_empty())),
        "every server records its package version"
    );

    let mut seen = HashSet::new();
    // The tools the test queries are about, and those the tune queries are about.
    let mut about = [HashSet::new(), HashSet::new()];
    for (file, tools) in ["queries.jsonl", "queries-tune.jsonl"]
        .into_iter()
        .zip(&mut about)
    {
        for (number, line) in read(file).lines().enumerate() {
            let record: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{file}:{}: {e}", number + 1));
            let query = record["query"].as_str().expect("a query");
            assert!(
                seen.insert(query.to_lowercase()),
                "duplicate query `{query}`"
            );
            let also = record["also"].as_array().into_iter().flatten();
            for key in std::iter::once(&record["tool"]).chain(also) {
                let key = key.as_str().expect("tool keys are strings");
                assert!(keys.contains(key), "{file}:{}: no tool `{key}`", number + 1);
                if file == "queries-tune.jsonl" || split_of(query) == "test" {
                    tools.insert(key.to_owned());
                }
            }
        }
    }
    // Tuning on the tune split cannot learn a test answer: no tune query is about a tool
    // a test query is about.
    let shared: Vec<&String> = about[0].intersection(&about[1]).collect();
    assert!(
        shared.is_empty(),
        "tune queries about test tools: {shared:?}"
    );
    let queries = read("queries.jsonl").lines().count();
    assert!(queries >= 300, "{queries} queries");
}
