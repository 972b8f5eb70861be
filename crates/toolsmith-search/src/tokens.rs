//! Token counts with a real tokenizer: the `o200k_base` encoding of tiktoken, whose vocabulary
//! is embedded in the `tiktoken-rs` crate, so counting works offline. Other models' tokenizers
//! differ by a few percent; budgets and limits are rules of thumb, not exact.

use toolsmith_model::ToolDefinition;

/// The name of the encoding the counts use, for messages and docs.
pub const ENCODING: &str = "o200k_base";

/// How many tokens `text` is.
#[must_use]
pub fn count(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton().count_ordinary(text)
}

/// What a tool costs a model's context: the tokens of its definition as `tools/list`
/// sends it (name, title, description, schemas, annotations, icons).
#[must_use]
pub fn cost(definition: &ToolDefinition) -> usize {
    count(&definition.to_mcp().to_string())
}

/// On average, one token of a tool definition's JSON stands for fewer bytes than this (no
/// server of the discovery corpus, `bench/discovery/corpus.json`, reaches it; the bench
/// crate's `token_bound` test checks), so a catalog whose bytes over this still pass a
/// budget is over it without counting (docs/performance.md).
pub const MAX_BYTES_PER_TOKEN: usize = 8;

/// The tokens of `definitions` as `tools/list` sends them, each given with its length in
/// bytes of compact JSON (a catalog entry's [`toolsmith_model::CatalogEntry::published_len`], measured once),
/// counted only when they may pass `budget`: `None` when their size in bytes is within it
/// (every token is at least one byte), which spares loading the vocabulary for small
/// servers. Far over the budget (their bytes over [`MAX_BYTES_PER_TOKEN`] still pass it) the
/// vocabulary is not loaded either and the answer is that lower bound, so thousands of tools
/// start without the tokenizer (issue 21); the real count is made only near the budget,
/// where it decides. Within the budget or far over it, no tool's text is written out.
#[must_use]
pub fn total_over<'a>(
    definitions: impl IntoIterator<Item = (&'a ToolDefinition, usize)>,
    budget: usize,
) -> Option<usize> {
    let definitions: Vec<(&ToolDefinition, usize)> = definitions.into_iter().collect();
    let bytes = definitions.iter().map(|(_, len)| len).sum::<usize>();
    if bytes <= budget {
        return None;
    }
    let at_least = bytes / MAX_BYTES_PER_TOKEN;
    if at_least > budget {
        return Some(at_least);
    }
    Some(
        definitions
            .iter()
            .map(|(definition, _)| count(&definition.to_mcp().to_string()))
            .sum(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_with_the_real_vocabulary() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        assert!(count("Get the weather forecast for a city.") < 12);
    }

    #[test]
    fn counts_only_what_may_pass_the_budget() {
        let schema = serde_json::json!({"type": "object"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let tool = ToolDefinition::new("get_weather", "Current weather for a city.", schema);
        let bytes = tool.to_mcp().to_string().len();
        let measured = (&tool, tool.mcp_json_len());
        assert_eq!(total_over([measured], bytes), None);
        let tokens = total_over([measured, measured], bytes).unwrap();
        assert_eq!(tokens, 2 * cost(&tool));
        assert!(tokens < bytes, "{tokens} tokens for {bytes} bytes");
    }

    #[test]
    fn far_over_the_budget_is_a_lower_bound_without_counting() {
        let description = "Create a new issue in a repository, with a title and a body. ".repeat(8);
        let schema =
            serde_json::json!({"type": "object", "properties": {"title": {"type": "string"}}})
                .as_object()
                .cloned()
                .unwrap_or_default();
        let tool = ToolDefinition::new("create_issue", &description, schema);
        let bytes = tool.to_mcp().to_string().len();
        let tools = vec![tool; 10];
        let budget = 10 * bytes / MAX_BYTES_PER_TOKEN - 1;
        let measured = tools.iter().map(|tool| (tool, tool.mcp_json_len()));
        let at_least = total_over(measured, budget).unwrap();
        assert_eq!(at_least, 10 * bytes / MAX_BYTES_PER_TOKEN);
        // The bound is below the real count: what `auto` decides is the same.
        let real: usize = tools.iter().map(cost).sum();
        assert!(at_least <= real, "{at_least} > {real}");
    }
}
