//! The one Starlark value type Toolsmith adds: what `mcp.error`, `mcp.result` and the
//! content helpers (`mcp.text`, `mcp.image`, …) return. It carries plain Rust data, so a
//! tool's return value is recognised with a downcast and turned into a [`ToolReturn`]
//! without guessing from dict shapes.

use std::fmt;

use allocative::Allocative;
use starlark::starlark_simple_value;
use starlark::values::{
    NoSerialize, ProvidesStaticType, StarlarkPagablePanic, StarlarkValue, starlark_value,
};
use toolsmith_model::{CallOutcome, Content, JsonObject, ToolReturn};

/// A result-contract value built in Starlark.
#[derive(Debug, Clone, ProvidesStaticType, NoSerialize, Allocative, StarlarkPagablePanic)]
pub(crate) struct McpValue(#[allocative(skip)] pub(crate) McpPayload);

/// What an [`McpValue`] holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum McpPayload {
    /// `mcp.error(message, **details)`.
    Error {
        message: String,
        details: JsonObject,
    },
    /// `mcp.result(content=[...], structured=..., is_error=...)`.
    Result(CallOutcome),
    /// One content block (`mcp.text(...)`, `mcp.image(...)`, …).
    Content(Content),
}

starlark_simple_value!(McpValue);

impl McpValue {
    /// The value as the result of a call.
    pub(crate) fn to_return(&self) -> ToolReturn {
        match &self.0 {
            McpPayload::Error { message, details } => ToolReturn::Error {
                message: message.clone(),
                details: details.clone(),
            },
            McpPayload::Result(outcome) => ToolReturn::Outcome(outcome.clone()),
            McpPayload::Content(content) => ToolReturn::Outcome(CallOutcome {
                content: vec![content.clone()],
                structured_content: None,
                is_error: false,
                meta: None,
            }),
        }
    }
}

impl fmt::Display for McpValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            McpPayload::Error { message, .. } => write!(f, "mcp.error({message:?})"),
            McpPayload::Result(outcome) => {
                write!(f, "mcp.result({} blocks)", outcome.content.len())
            }
            McpPayload::Content(content) => match content {
                Content::Text { text, .. } => write!(f, "mcp.text({text:?})"),
                Content::Image { mime_type, .. } => write!(f, "mcp.image({mime_type:?})"),
                Content::Audio { mime_type, .. } => write!(f, "mcp.audio({mime_type:?})"),
                Content::Resource { resource, .. } => write!(f, "mcp.resource({:?})", resource.uri),
                Content::ResourceLink { uri, .. } => write!(f, "mcp.resource_link({uri:?})"),
            },
        }
    }
}

#[starlark_value(type = "mcp_result")]
#[expect(
    clippy::elidable_lifetime_names,
    reason = "`#[starlark_value]` needs the lifetime named"
)]
impl<'v> StarlarkValue<'v> for McpValue {}
