//! The discovery benchmark's data stays usable: every query names a tool of the corpus,
//! and the corpus is as big as issue 4 asks (≥ 1,000 tools, ≥ 300 queries).

use std::collections::HashSet;

use serde_json::Value;

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

    let mut queries = 0;
    let mut seen = HashSet::new();
    for (number, line) in read("queries.jsonl").lines().enumerate() {
        let record: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("queries.jsonl:{}: {e}", number + 1));
        let query = record["query"].as_str().expect("a query");
        assert!(
            seen.insert(query.to_lowercase()),
            "duplicate query `{query}`"
        );
        let also = record["also"].as_array().into_iter().flatten();
        for key in std::iter::once(&record["tool"]).chain(also) {
            let key = key.as_str().expect("tool keys are strings");
            assert!(
                keys.contains(key),
                "queries.jsonl:{}: no tool `{key}`",
                number + 1
            );
        }
        queries += 1;
    }
    assert!(queries >= 300, "{queries} queries");
}
