//! Token counts with a real tokenizer: the `o200k_base` encoding of tiktoken, whose vocabulary
//! is embedded in the `tiktoken-rs` crate, so counting works offline. Other models' tokenizers
//! differ by a few percent; budgets and limits are rules of thumb, not exact.

use toolsmith_model::{CatalogEntry, ToolDefinition};

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
/// start without the tokenizer; the real count is made only near the budget,
/// where it decides. Within the budget or far over it, no tool's text is written out.
#[must_use]
pub fn total_over<'a>(
    entries: impl IntoIterator<Item = &'a CatalogEntry>,
    budget: usize,
) -> Option<usize> {
    let entries: Vec<&CatalogEntry> = entries.into_iter().collect();
    let bytes = entries
        .iter()
        .map(|entry| entry.published_len())
        .sum::<usize>();
    if bytes <= budget {
        return None;
    }
    let at_least = bytes / MAX_BYTES_PER_TOKEN;
    if at_least > budget {
        return Some(at_least);
    }
    // Read once each: a deferred tool is not held for it.
    Some(
        entries
            .iter()
            .map(|entry| count(&entry.definition_once().to_mcp().to_string()))
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

    struct Named(ToolDefinition);

    impl toolsmith_model::Tool for Named {
        fn definition(&self) -> &ToolDefinition {
            &self.0
        }
        fn call(
            &self,
            _: &toolsmith_model::JsonObject,
            _: &toolsmith_model::CallContext,
        ) -> Result<toolsmith_model::ToolReturn, toolsmith_model::ToolFailure> {
            Ok(toolsmith_model::ToolReturn::Text(String::new()))
        }
    }

    /// `count` tools named `{name}_{i}`, with `description` and `schema`.
    fn catalog(
        name: &str,
        description: &str,
        schema: &serde_json::Value,
        count: usize,
    ) -> toolsmith_model::Catalog {
        let schema = schema.as_object().cloned().unwrap_or_default();
        let tools = (0..count)
            .map(|i| {
                let definition =
                    ToolDefinition::new(format!("{name}_{i}"), description, schema.clone());
                std::sync::Arc::new(Named(definition)) as std::sync::Arc<dyn toolsmith_model::Tool>
            })
            .collect();
        toolsmith_model::Catalog::new(tools, Vec::new())
    }

    fn bytes_of(catalog: &toolsmith_model::Catalog) -> usize {
        catalog
            .definitions()
            .map(|tool| tool.to_mcp().to_string().len())
            .sum()
    }

    #[test]
    fn counts_only_what_may_pass_the_budget() {
        let schema = serde_json::json!({"type": "object"});
        let one = catalog("get_weather", "Current weather for a city.", &schema, 1);
        assert_eq!(total_over(one.entries(), bytes_of(&one)), None);
        let two = catalog("get_weather", "Current weather for a city.", &schema, 2);
        let bytes = bytes_of(&two);
        let tokens = total_over(two.entries(), bytes - 1).unwrap();
        assert_eq!(tokens, two.definitions().map(cost).sum::<usize>());
        assert!(tokens < bytes, "{tokens} tokens for {bytes} bytes");
    }

    #[test]
    fn far_over_the_budget_is_a_lower_bound_without_counting() {
        let description = "Create a new issue in a repository, with a title and a body. ".repeat(8);
        let schema =
            serde_json::json!({"type": "object", "properties": {"title": {"type": "string"}}});
        let tools = catalog("create_issue", &description, &schema, 10);
        let bytes = bytes_of(&tools);
        let budget = bytes / MAX_BYTES_PER_TOKEN - 1;
        let at_least = total_over(tools.entries(), budget).unwrap();
        assert_eq!(at_least, bytes / MAX_BYTES_PER_TOKEN);
        // The bound is below the real count: what `auto` decides is the same.
        let real: usize = tools.definitions().map(cost).sum();
        assert!(at_least <= real, "{at_least} > {real}");
    }
}
