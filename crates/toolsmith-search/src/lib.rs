//! Ranking for `tool_search` (docs/search.md): find the right tool among many from a few words
//! a user or model wrote, and the two built-in tools that put discoverable tools within a
//! model's reach.
//!
//! - [`SearchIndex`]: an index over tool definitions — name (split on snake, kebab and camel
//!   case), title, keywords, tags, description, parameter names and descriptions — scored
//!   BM25-style per field with field weights, light stemming, typo tolerance and multi-word
//!   queries, plus a meaning signal (static word-piece vectors distilled from
//!   all-MiniLM-L6-v2, `data/distill.py`), a bonus for a folder the query names and a
//!   penalty for a tool that changes things when the request asks to look (or the other way
//!   round). [`SearchIndex::search`] returns [`Hit`]s, best first.
//! - [`with_discovery`]: a catalog as its `[search]` settings publish it: the tools that go
//!   behind search marked `discoverable`, plus the `tool_search` and `execute_tool`
//!   built-ins when any tool is. [`Plan`] says what the settings decide, counting the
//!   listed tools' [`tokens`] for mode `auto`.
//!
//! ```
//! use serde_json::json;
//! use toolsmith_model::ToolDefinition;
//! use toolsmith_search::SearchIndex;
//!
//! let schema = json!({"type": "object"}).as_object().cloned().unwrap();
//! let index = SearchIndex::new([
//!     &ToolDefinition::new("get_weather", "Current weather for a city.", schema.clone()),
//!     &ToolDefinition::new("add", "Calculate the sum of two numbers.", schema),
//! ]);
//! let hits = index.search("wether in Paris", 5);
//! assert_eq!(hits[0].name, "get_weather");
//! ```

mod builtins;
mod discovery;
mod index;
mod intent;
mod kept;
mod meaning;
mod operation;
mod synonyms;
mod text;
pub mod tokens;

pub use builtins::{
    EXECUTE_TOOL, TOOL_SEARCH, execute, inner_arguments, is_builtin, out_of_scope, result, results,
};
pub use discovery::{Plan, apply, with_discovery};
pub use index::{Confidence, Hit, Judged, SearchIndex, Verdict, parameter_text};
pub use kept::{IndexSource, KeepIndex, KeptIndex, KeptTool, KeptTools};
