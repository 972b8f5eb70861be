//! The bound `[search] mode = "auto"` decides by far over its budget holds on real tool
//! definitions: no server of the discovery corpus averages as many bytes a token as
//! `toolsmith_search::tokens::MAX_BYTES_PER_TOKEN` (count tokens without
//! the tokenizer's start on every run).

use std::collections::BTreeMap;

use serde_json::{Value, json};
use toolsmith_search::tokens::{MAX_BYTES_PER_TOKEN, count};

#[test]
fn no_server_of_the_corpus_passes_the_bytes_per_token_bound() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("discovery/corpus.json");
    let corpus: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    // server -> (bytes, tokens) of its tools as `tools/list` would send them.
    let mut per_server: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for tool in corpus["tools"].as_array().unwrap() {
        let listed = json!({
            "name": tool["name"],
            "description": tool["description"],
            "inputSchema": tool["inputSchema"],
        })
        .to_string();
        let entry = per_server
            .entry(tool["server"].as_str().unwrap().to_owned())
            .or_default();
        entry.0 += listed.len();
        entry.1 += count(&listed);
    }
    let (bytes, tokens) = per_server
        .values()
        .fold((0, 0), |(b, t), (bytes, tokens)| (b + bytes, t + tokens));
    #[expect(clippy::cast_precision_loss, reason = "a ratio for the message")]
    let average = bytes as f64 / tokens as f64;
    for (server, (bytes, tokens)) in &per_server {
        assert!(
            bytes / tokens < MAX_BYTES_PER_TOKEN,
            "`{server}`: {bytes} bytes in {tokens} tokens (corpus average {average:.2})"
        );
    }
    let most = per_server
        .values()
        .map(|&(bytes, tokens)| bytes / tokens)
        .max()
        .unwrap_or_default();
    eprintln!(
        "corpus: {bytes} bytes, {tokens} tokens, {average:.2} bytes a token, a server at most {most}"
    );
}
