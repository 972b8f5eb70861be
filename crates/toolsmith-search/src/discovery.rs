//! Which tools `tools/list` shows and which are found through `tool_search`: the `[search]`
//! settings applied to a catalog (docs/search.md, "Search modes and the token budget").

use std::sync::Arc;

use toolsmith_model::{Catalog, CatalogEntry, SearchMode, SearchSettings};

use crate::builtins;
use crate::kept::IndexSource;
use crate::tokens;

/// What the `[search]` settings decide for one catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// The settings decided on.
    pub settings: SearchSettings,
    /// Every tool goes behind `tool_search` (mode `always`, or `auto` over the budget).
    pub all_behind_search: bool,
    /// For `auto`: the tokens of the tools it would list (those not marked
    /// `discoverable`), when counting was needed to decide: only when their size in bytes
    /// passes the budget, since every token is at least one byte; far over the budget, a
    /// lower bound from their size ([`tokens::total_over`]).
    pub listed_tokens: Option<usize>,
}

impl Plan {
    /// What `settings` decide for `catalog`.
    pub fn new(catalog: &Catalog, settings: SearchSettings) -> Self {
        let listed_tokens = match settings.mode {
            SearchMode::Auto => tokens::total_over(
                catalog
                    .entries()
                    .iter()
                    .filter(|entry| !entry.discoverable()),
                settings.budget_tokens,
            ),
            SearchMode::Always | SearchMode::Never => None,
        };
        Self::decide(settings, listed_tokens)
    }

    /// What `settings` decide when the tools `auto` would list cost `listed_tokens` (`None`:
    /// known to be within the budget).
    pub fn decide(settings: SearchSettings, listed_tokens: Option<usize>) -> Self {
        let all_behind_search = match settings.mode {
            SearchMode::Always => true,
            SearchMode::Never => false,
            SearchMode::Auto => listed_tokens.is_some_and(|t| t > settings.budget_tokens),
        };
        Self {
            settings,
            all_behind_search,
            listed_tokens,
        }
    }

    /// One line for the log that says why every tool went behind search.
    pub fn explain(&self) -> Option<String> {
        if !self.all_behind_search {
            return None;
        }
        Some(match self.listed_tokens {
            Some(tokens) => format!(
                "the listed tools' definitions are at least {tokens} tokens, over the search budget of {} \
                 ([search] budget_tokens): tools/list shows only tool_search and execute_tool; \
                 set [search] mode = \"never\" (or serve --search never) to list every tool",
                self.settings.budget_tokens
            ),
            None => "[search] mode = \"always\": tools/list shows only tool_search and \
                     execute_tool"
                .to_owned(),
        })
    }
}

/// `catalog` as `settings` publish it: with `discoverable` set on the tools that go behind
/// search (every tool, when the plan says so; none with mode `never`) and the `tool_search`
/// and `execute_tool` built-ins when any tool is discoverable.
///
/// `tool_search` takes its index from `source` ([`IndexSource`]). Compiled schemas are
/// reused; nothing is compiled twice.
pub fn with_discovery(
    catalog: Arc<Catalog>,
    settings: SearchSettings,
    source: IndexSource,
) -> Arc<Catalog> {
    let plan = Plan::new(&catalog, settings);
    if let Some(why) = plan.explain() {
        tracing::info!("{why}");
    }
    apply(catalog, &plan, source)
}

/// `catalog` as `plan` publishes it (see [`with_discovery`]).
pub fn apply(catalog: Arc<Catalog>, plan: &Plan, source: IndexSource) -> Arc<Catalog> {
    let any_discoverable = catalog.entries().iter().any(CatalogEntry::discoverable);
    let hide_all = plan.all_behind_search;
    if !hide_all && !any_discoverable {
        return catalog;
    }
    if !hide_all && plan.settings.mode == SearchMode::Never {
        return Arc::new(catalog.derive(|_| false, Vec::new(), Vec::new()));
    }
    let (tools, diagnostics) = builtins::builtins(&catalog, source);
    let discoverable = |entry: &CatalogEntry| entry.discoverable() || hide_all;
    Arc::new(catalog.derive(discoverable, tools, diagnostics))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolsmith_model::{CallContext, JsonObject, Tool, ToolDefinition, ToolFailure, ToolReturn};

    use super::*;

    struct Named(ToolDefinition);

    impl Tool for Named {
        fn definition(&self) -> &ToolDefinition {
            &self.0
        }
        fn call(&self, _: &JsonObject, _: &CallContext) -> Result<ToolReturn, ToolFailure> {
            Ok(ToolReturn::Text(self.0.name.clone()))
        }
    }

    /// Three tools; `hidden` is marked discoverable.
    fn catalog() -> Arc<Catalog> {
        let schema = json!({"type": "object", "properties": {"city": {"type": "string"}}});
        let schema = schema.as_object().cloned().unwrap_or_default();
        let tools = ["forecast", "hidden", "stats"].map(|name| {
            let mut definition =
                ToolDefinition::new(name, "A tool that does one thing well.", schema.clone());
            definition.discoverable = name == "hidden";
            Arc::new(Named(definition)) as Arc<dyn Tool>
        });
        Arc::new(Catalog::new(tools.into(), Vec::new()))
    }

    fn listed(catalog: &Catalog) -> Vec<&str> {
        catalog
            .entries()
            .iter()
            .filter(|d| !d.discoverable())
            .map(|d| d.definition().name.as_str())
            .collect()
    }

    fn settings(mode: SearchMode, budget_tokens: usize) -> SearchSettings {
        SearchSettings {
            mode,
            budget_tokens,
        }
    }

    #[test]
    fn auto_within_budget_hides_only_discoverable_tools() {
        let served = with_discovery(catalog(), SearchSettings::default(), IndexSource::default());
        assert_eq!(
            listed(&served),
            ["execute_tool", "forecast", "stats", "tool_search"]
        );
        assert!(served.get("hidden").is_some(), "still callable by name");
    }

    #[test]
    fn auto_over_budget_puts_every_tool_behind_search() {
        let plan = Plan::new(&catalog(), settings(SearchMode::Auto, 20));
        assert!(plan.all_behind_search);
        let tokens = plan.listed_tokens.unwrap();
        assert!(tokens > 20, "{tokens}");
        assert!(
            plan.explain()
                .unwrap()
                .contains("over the search budget of 20")
        );
        let served = apply(catalog(), &plan, IndexSource::default());
        assert_eq!(listed(&served), ["execute_tool", "tool_search"]);
        let search = served.get(crate::TOOL_SEARCH).unwrap();
        let context = CallContext::detached(std::time::Duration::from_secs(5));
        let query = json!({"query": "stats"}).as_object().cloned().unwrap();
        let found = search.call(query, &context);
        assert_eq!(
            found.structured_content.unwrap()["results"][0]["name"],
            "stats"
        );
    }

    #[test]
    fn small_definitions_are_not_tokenized() {
        let plan = Plan::new(&catalog(), SearchSettings::default());
        assert_eq!(plan.listed_tokens, None);
        assert!(!plan.all_behind_search);
    }

    #[test]
    fn always_lists_only_the_builtins() {
        let served = with_discovery(
            catalog(),
            settings(SearchMode::Always, 1_000_000),
            IndexSource::default(),
        );
        assert_eq!(listed(&served), ["execute_tool", "tool_search"]);
        assert_eq!(served.entries().len(), 5);
    }

    #[test]
    fn never_lists_every_tool_without_builtins() {
        let served = with_discovery(
            catalog(),
            settings(SearchMode::Never, 1),
            IndexSource::default(),
        );
        assert_eq!(listed(&served), ["forecast", "hidden", "stats"]);
    }
}
