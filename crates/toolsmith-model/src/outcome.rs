//! The result contract: what a tool hands back ([`ToolReturn`]) and what the client receives
//! ([`CallOutcome`], an MCP `CallToolResult`). The contract is written once, in
//! docs/result-contract.md, which is the rustdoc of [`CallOutcome`].

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::definition::{JsonObject, TextFormat};
use crate::toon;

/// An MCP `CallToolResult`: what every call of every tool ends in.
///
#[doc = include_str!("../../../docs/result-contract.md")]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallOutcome {
    /// Content blocks, in order.
    pub content: Vec<Content>,
    /// Structured result (an object), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed; the model reads the content to repair.
    #[serde(default)]
    pub is_error: bool,
    /// The result's `_meta`, kept as an upstream gave it (results pass through
    /// unchanged).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl CallOutcome {
    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(text)],
            structured_content: None,
            is_error: false,
            meta: None,
        }
    }

    /// A failed result with one text block.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(message)],
            structured_content: None,
            is_error: true,
            meta: None,
        }
    }

    /// All text blocks joined by newlines (what `toolsmith call` prints).
    pub fn joined_text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|block| match block {
                Content::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }

    /// The outcome as MCP JSON.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self)
            .expect("a CallOutcome always serializes: it holds only JSON values and strings")
    }
}

/// One MCP content block.
///
/// `annotations` and `_meta` are carried as they came, so an upstream's result passes
/// through unchanged (docs/gateway.md); Toolsmith's own tools leave them out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
        /// The block's `annotations` (audience, priority, lastModified), kept as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Box<JsonObject>>,
        /// The block's `_meta`, kept as given.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Box<JsonObject>>,
    },
    /// A base64-encoded image.
    Image {
        /// Base64 data.
        data: String,
        /// `image/png`, …
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// The block's `annotations` (audience, priority, lastModified), kept as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Box<JsonObject>>,
        /// The block's `_meta`, kept as given.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Box<JsonObject>>,
    },
    /// Base64-encoded audio.
    Audio {
        /// Base64 data.
        data: String,
        /// `audio/wav`, …
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// The block's `annotations` (audience, priority, lastModified), kept as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Box<JsonObject>>,
        /// The block's `_meta`, kept as given.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Box<JsonObject>>,
    },
    /// A resource embedded in the result.
    Resource {
        /// The resource contents.
        resource: EmbeddedResource,
        /// The block's `annotations` (audience, priority, lastModified), kept as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Box<JsonObject>>,
        /// The block's `_meta`, kept as given.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Box<JsonObject>>,
    },
    /// A link to a resource the client may read.
    ResourceLink {
        /// Resource URI.
        uri: String,
        /// Resource name.
        name: String,
        /// What the resource is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// MIME type, when known.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// A title for people, when given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// Size in bytes, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
        /// Icons, kept as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        icons: Option<Vec<Value>>,
        /// The block's `annotations` (audience, priority, lastModified), kept as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Box<JsonObject>>,
        /// The block's `_meta`, kept as given.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Box<JsonObject>>,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An image block.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An audio block.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }

    /// An embedded resource block.
    pub fn resource(resource: EmbeddedResource) -> Self {
        Self::Resource {
            resource,
            annotations: None,
            meta: None,
        }
    }

    /// A resource link block.
    pub fn resource_link(
        uri: impl Into<String>,
        name: impl Into<String>,
        description: Option<String>,
        mime_type: Option<String>,
    ) -> Self {
        Self::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description,
            mime_type,
            title: None,
            size: None,
            icons: None,
            annotations: None,
            meta: None,
        }
    }

    /// The block's `annotations` and `_meta`, as they came.
    pub fn extras(&self) -> (Option<&JsonObject>, Option<&JsonObject>) {
        match self {
            Self::Text {
                annotations, meta, ..
            }
            | Self::Image {
                annotations, meta, ..
            }
            | Self::Audio {
                annotations, meta, ..
            }
            | Self::Resource {
                annotations, meta, ..
            }
            | Self::ResourceLink {
                annotations, meta, ..
            } => (annotations.as_deref(), meta.as_deref()),
        }
    }
}

/// The contents of an embedded resource: text or a base64 blob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// Resource URI.
    pub uri: String,
    /// MIME type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Text contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// The contents' `_meta`, kept as given.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Box<JsonObject>>,
}

/// What a tool hands back, before the result contract turns it into a [`CallOutcome`].
#[derive(Debug, Clone, PartialEq)]
pub enum ToolReturn {
    /// A string: one text block.
    Text(String),
    /// Any other value: a dict becomes structured content, anything else `{"result": …}`.
    Value(Value),
    /// An explicit result (`mcp.result(...)`, content helpers, `tool.return_object`).
    Outcome(CallOutcome),
    /// `mcp.error("msg", **details)`: an error the model can repair.
    Error {
        /// What went wrong.
        message: String,
        /// Details kept as structured content next to `error`.
        details: JsonObject,
    },
}

impl ToolReturn {
    /// Applies the result contract.
    ///
    /// A dict with a non-empty `error` (or legacy `Error`) field is an error result that keeps
    /// the dict as structured content, so the model can repair its call (Klea's convention).
    pub fn into_outcome(self, format: TextFormat) -> CallOutcome {
        match self {
            Self::Text(text) => CallOutcome::text(text),
            Self::Outcome(outcome) => outcome,
            Self::Error {
                message,
                mut details,
            } => {
                details.insert("error".into(), json!(message));
                CallOutcome {
                    content: vec![Content::text(message)],
                    structured_content: Some(Value::Object(details)),
                    is_error: true,
                    meta: None,
                }
            }
            Self::Value(Value::Null) => CallOutcome {
                content: Vec::new(),
                structured_content: None,
                is_error: false,
                meta: None,
            },
            Self::Value(Value::Object(object)) => {
                if let Some(message) = error_field(&object) {
                    return CallOutcome {
                        content: vec![Content::text(message)],
                        structured_content: Some(Value::Object(object)),
                        is_error: true,
                        meta: None,
                    };
                }
                let value = Value::Object(object);
                CallOutcome {
                    content: vec![Content::text(render(&value, format))],
                    structured_content: Some(value),
                    is_error: false,
                    meta: None,
                }
            }
            Self::Value(value) => CallOutcome {
                content: vec![Content::text(render(&value, format))],
                structured_content: Some(json!({ "result": value })),
                is_error: false,
                meta: None,
            },
        }
    }
}

/// The message of a non-empty `error`/`Error` field.
fn error_field(object: &JsonObject) -> Option<String> {
    let field = object.get("error").or_else(|| object.get("Error"))?;
    match field {
        Value::Null | Value::Bool(false) => None,
        Value::String(text) if text.trim().is_empty() => None,
        Value::String(text) => Some(text.clone()),
        Value::Array(items) if items.is_empty() => None,
        Value::Object(items) if items.is_empty() => None,
        other => Some(other.to_string()),
    }
}

/// Renders a value as the text block that accompanies structured content.
pub fn render(value: &Value, format: TextFormat) -> String {
    match format {
        TextFormat::Json => value.to_string(),
        TextFormat::Toon => toon::encode(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(value: Value) -> Value {
        ToolReturn::Value(value)
            .into_outcome(TextFormat::Json)
            .to_json()
    }

    #[test]
    fn string_becomes_one_text_block() {
        let result = ToolReturn::Text("hi".into())
            .into_outcome(TextFormat::Json)
            .to_json();
        assert_eq!(
            result,
            json!({"content": [{"type": "text", "text": "hi"}], "isError": false})
        );
    }

    #[test]
    fn dict_becomes_structured_content_plus_json_text() {
        assert_eq!(
            outcome(json!({"sum": 3})),
            json!({"content": [{"type": "text", "text": "{\"sum\":3}"}], "structuredContent": {"sum": 3}, "isError": false})
        );
    }

    #[test]
    fn dict_renders_as_toon_when_asked() {
        let result = ToolReturn::Value(json!({"sum": 3})).into_outcome(TextFormat::Toon);
        assert_eq!(result.joined_text(), "sum: 3");
    }

    #[test]
    fn list_and_number_are_wrapped_in_result() {
        assert_eq!(
            outcome(json!([1, 2]))["structuredContent"],
            json!({"result": [1, 2]})
        );
        assert_eq!(outcome(json!(7))["content"][0]["text"], "7");
        assert_eq!(outcome(json!(7))["structuredContent"], json!({"result": 7}));
    }

    #[test]
    fn non_empty_error_field_is_an_error_that_keeps_the_dict() {
        let result = outcome(json!({"error": "no such city", "known": ["Oslo"]}));
        assert_eq!(result["isError"], true);
        assert_eq!(result["content"][0]["text"], "no such city");
        assert_eq!(result["structuredContent"]["known"], json!(["Oslo"]));
        assert_eq!(outcome(json!({"error": "", "rows": 1}))["isError"], false);
        assert_eq!(outcome(json!({"Error": "legacy"}))["isError"], true);
    }

    #[test]
    fn mcp_error_keeps_details() {
        let mut details = JsonObject::new();
        details.insert("hint".into(), json!("try Oslo"));
        let result = ToolReturn::Error {
            message: "unknown city".into(),
            details,
        }
        .into_outcome(TextFormat::Json);
        assert!(result.is_error);
        assert_eq!(
            result.structured_content,
            Some(json!({"hint": "try Oslo", "error": "unknown city"}))
        );
    }

    #[test]
    fn none_gives_empty_content() {
        assert_eq!(
            outcome(Value::Null),
            json!({"content": [], "isError": false})
        );
    }
}
