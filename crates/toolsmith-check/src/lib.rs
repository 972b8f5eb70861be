//! The lint rules of `toolsmith check`: what a good tool looks like, enforced and taught.
//!
//! The tool description is what a model picks tools by, and the guides Toolsmith grew from
//! agree on what a good one is: a `snake_case` name of at most 64 characters, a description
//! of 100–250 tokens that opens with a one-sentence summary and says when (not) to use the
//! tool, every parameter documented, and schemas whose `pattern`s work in JavaScript. Each
//! rule checks one such thing.
//!
//! - [`Rule`]: one rule — id, summary, default severity and its documentation, which is the
//!   doc comment of its file in `src/rules/` (`--explain` and `docs/rules/` print it).
//! - [`check`]: runs the enabled rules over tool definitions and a [`CheckContext`] (the
//!   folder's files and sources, gathered by the caller: this crate does no I/O).
//! - [`Finding`]: a model [`Diagnostic`](toolsmith_model::Diagnostic) plus the tool it is
//!   about and, for some rules, a [`Fix`]; [`render`] prints findings as text, JSON,
//!   GitHub annotations or SARIF.
//!
//! ```
//! use serde_json::json;
//! use toolsmith_check::{CheckContext, Settings, check};
//! use toolsmith_model::ToolDefinition;
//!
//! let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
//! let tool = ToolDefinition::new("Search", "", schema.as_object().unwrap().clone());
//! let findings = check([&tool], &CheckContext::new("tools"), &Settings::default());
//! let rules: Vec<&str> = findings.iter().map(|f| f.diagnostic.rule).collect();
//! assert!(rules.contains(&"missing-description"));
//! assert!(rules.contains(&"non-snake-case-name"));
//! assert!(rules.contains(&"undocumented-parameter"));
//! ```

mod checker;
mod context;
mod ecma;
mod literal;
mod locate;
mod prose;
pub mod registry;
pub mod render;
mod rule;
mod rules;
mod schema;
mod settings;

pub use checker::{
    Edit, Finding, Fix, apply_edits, check, counts, load_findings, sort, tools_with_findings,
};
pub use context::CheckContext;
pub use render::Format;
pub use rule::{DOC_SECTIONS, Rule};
pub use settings::{Settings, UnknownRule, resolve};
use toolsmith_search::tokens;
