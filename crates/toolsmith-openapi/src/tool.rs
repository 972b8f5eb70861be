//! An OpenAPI operation as a tool (docs/gateway.md, "OpenAPI"): a call turns the validated
//! arguments into a request (path parameters substituted and percent-encoded, the query,
//! headers, a JSON body), sends it through the guarded HTTP client of Starlark's `http.*`
//! with the base URL's host as the `net` grant, and returns the JSON answer as structured
//! content; a 4xx or 5xx answer is an `isError` result with its status and body.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use toolsmith_model::{
    CallContext, JsonObject, SourceLocation, Tool, ToolDefinition, ToolFailure, ToolReturn,
    percent_encode,
};
use toolsmith_starlark::net::{self, HttpRequest, HttpResponse};

use crate::operation::{Location, Operation};

/// How much of an error answer's body its message quotes.
const QUOTED_BODY: usize = 2000;

/// What the tools of one `[openapi.NAME]` share: where requests go and what they carry.
#[derive(Debug)]
pub struct Api {
    /// `NAME`.
    pub name: String,
    /// Where requests go, without a trailing `/`.
    pub base_url: String,
    /// `headers` (values may hold `${VAR}`, resolved at each call).
    pub headers: Vec<(String, String)>,
    /// The host (and port) of `base_url`: the tools' `net` grant.
    pub grant: String,
}

/// One operation of an OpenAPI service, served as a tool.
pub struct OpenApiTool {
    definition: ToolDefinition,
    operation: Operation,
    api: Arc<Api>,
}

impl OpenApiTool {
    /// `operation` of `api` as a tool named `prefix` + its name, defined at `source` (the
    /// `[openapi.NAME]` table).
    pub fn new(api: &Arc<Api>, prefix: &str, operation: Operation, source: SourceLocation) -> Self {
        let mut definition = ToolDefinition::new(
            format!("{prefix}{}", operation.tool_name()),
            if operation.description.is_empty() {
                format!("`{}` of the `{}` API.", operation.label(), api.name)
            } else {
                operation.description.clone()
            },
            operation.input_schema.clone(),
        );
        definition.output_schema = operation.output_schema.clone().map(Into::into);
        definition.annotations = operation.annotations();
        // `tag:NAME` in a profile selects the API's tools, and `tag:pets` an OpenAPI tag's.
        definition.tags = std::iter::once(api.name.clone())
            .chain(operation.tags.iter().cloned())
            .collect();
        definition.folder = vec![api.name.clone()];
        definition.permissions.net = vec![api.grant.clone()];
        definition.source = source;
        Self {
            definition,
            operation,
            api: Arc::clone(api),
        }
    }

    /// The request a call with `arguments` sends.
    fn request(&self, arguments: &JsonObject) -> Result<HttpRequest, String> {
        let mut path = self.operation.path.clone();
        let mut query = Vec::new();
        let mut headers = vec![("accept".to_owned(), "application/json".to_owned())];
        for parameter in &self.operation.parameters {
            let Some(value) = arguments.get(&parameter.property).filter(|v| !v.is_null()) else {
                continue;
            };
            match parameter.location {
                Location::Path => {
                    let text = joined(value);
                    path = path.replace(&format!("{{{}}}", parameter.name), &percent_encode(&text));
                }
                Location::Query => match value {
                    // `style: form, explode: true`, the default: `?tag=a&tag=b`.
                    Value::Array(items) => query.extend(
                        items
                            .iter()
                            .map(|item| (parameter.name.clone(), scalar_text(item))),
                    ),
                    _ => query.push((parameter.name.clone(), scalar_text(value))),
                },
                Location::Header => headers.push((parameter.name.clone(), joined(value))),
            }
        }
        for (name, value) in &self.api.headers {
            let value =
                toolsmith_model::sources::expand(value, |variable| std::env::var(variable).ok())
                    .map_err(|message| {
                        format!("`[openapi.{}] headers.{name}`: {message}", self.api.name)
                    })?;
            headers.push((name.clone(), value));
        }
        let path = without_dot_segments(&self.operation.path, &path);
        let mut url = format!("{}{path}", self.api.base_url);
        for (index, (name, value)) in query.iter().enumerate() {
            url.push(if index == 0 { '?' } else { '&' });
            url.push_str(&percent_encode(name));
            url.push('=');
            url.push_str(&percent_encode(value));
        }
        let body = self.operation.body.as_ref().and_then(|body| {
            let value = arguments.get(&body.property)?;
            let content_type = if body.content_type == "application/json" {
                "application/json"
            } else {
                headers.push(("content-type".to_owned(), body.content_type.clone()));
                "application/json"
            };
            Some((value.to_string().into_bytes(), Some(content_type)))
        });
        Ok(HttpRequest {
            method: self.operation.method.clone(),
            url,
            headers,
            body,
        })
    }
}

impl Tool for OpenApiTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure> {
        let request = self.request(arguments).map_err(ToolFailure::failed)?;
        let label = format!("{} {}", request.method, request.url);
        let response = net::send(
            request,
            std::slice::from_ref(&self.api.grant),
            &self.definition.name,
            context.deadline,
        )
        .map_err(|error| {
            if Instant::now() >= context.deadline {
                ToolFailure::TimedOut {
                    after: self
                        .definition
                        .timeout
                        .unwrap_or(toolsmith_model::DEFAULT_TIMEOUT),
                }
            } else {
                ToolFailure::failed(format!("`{label}`: {error}"))
            }
        })?;
        Ok(answer(&label, &response))
    }
}

/// The result contract for an answer: a 2xx JSON body is the value (an object becomes
/// structured content), other text is text; any other status is an error carrying
/// `status` and `body`.
fn answer(label: &str, response: &HttpResponse) -> ToolReturn {
    let text = String::from_utf8_lossy(&response.body);
    let json = serde_json::from_slice::<Value>(&response.body).ok();
    if (200..300).contains(&response.status) {
        return match json {
            Some(value) => ToolReturn::Value(value),
            None if text.trim().is_empty() => ToolReturn::Text(format!(
                "HTTP {}{}",
                response.status,
                reason(response.status)
            )),
            None => ToolReturn::Text(text.into_owned()),
        };
    }
    let mut quoted: String = text.chars().take(QUOTED_BODY).collect();
    if quoted.len() < text.len() {
        quoted.push('…');
    }
    let mut details = JsonObject::new();
    details.insert("status".into(), json!(response.status));
    details.insert(
        "body".into(),
        json.unwrap_or_else(|| Value::String(text.into_owned())),
    );
    ToolReturn::Error {
        message: format!(
            "`{label}` answered HTTP {}{}: {}",
            response.status,
            reason(response.status),
            if quoted.is_empty() {
                "(no body)"
            } else {
                &quoted
            }
        ),
        details,
    }
}

/// ` Not Found` for 404: the standard reason phrase, with its space.
fn reason(status: u16) -> String {
    http::StatusCode::from_u16(status)
        .ok()
        .and_then(|code| code.canonical_reason())
        .map(|reason| format!(" {reason}"))
        .unwrap_or_default()
}

/// `path` (the template `template` with its parameters substituted) with every segment that
/// a substitution made `.` or `..` written `%2E` or `%2E%2E`: as dot-segments, a client, a
/// proxy or the server would resolve them (RFC 3986 §5.2.4), so `{id}` = `..` in
/// `/users/{id}/profile` would reach `/profile`. Encoded, they are an ordinary segment.
/// Substituted values are percent-encoded, so they hold no `/` and the segments of `path`
/// are those of `template`, one for one.
fn without_dot_segments(template: &str, path: &str) -> String {
    if !path.contains("/.") {
        return path.to_owned();
    }
    path.split('/')
        .zip(template.split('/'))
        .map(|(segment, written)| match segment {
            "." if written != "." => "%2E",
            ".." if written != ".." => "%2E%2E",
            segment => segment,
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// A scalar as request text: a string as it is, anything else as JSON.
fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A value as one path segment or header: an array's items joined by `,` (`style: simple`).
fn joined(value: &Value) -> String {
    match value {
        Value::Array(items) => items.iter().map(scalar_text).collect::<Vec<_>>().join(","),
        other => scalar_text(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Document;
    use crate::operation::operations;

    fn tool(spec: Value) -> OpenApiTool {
        let document = Document {
            root: spec,
            path: "spec.json".into(),
        };
        let (mut found, problems) =
            operations(&document, &crate::operation::tests::every()).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        let api = Arc::new(Api {
            name: "pets".into(),
            base_url: "http://127.0.0.1:9/v1".into(),
            headers: vec![("x-api-key".into(), "k".into())],
            grant: "127.0.0.1:9".into(),
        });
        OpenApiTool::new(&api, "pets_", found.remove(0), SourceLocation::default())
    }

    #[test]
    fn a_request_substitutes_encodes_and_repeats() {
        let tool = tool(
            json!({"openapi": "3.0.0", "paths": {"/pets/{petId}/photos": {"get": {
                "operationId": "listPhotos",
                "parameters": [
                    {"name": "petId", "in": "path", "required": true, "schema": {"type": "string"}},
                    {"name": "size", "in": "query", "schema": {"type": "array"}},
                    {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                ],
            }}}}),
        );
        assert_eq!(tool.definition().name, "pets_list_photos");
        let arguments = json!({"petId": "a b/c", "size": ["s", "m"], "X-Trace": "t1"});
        let request = tool.request(arguments.as_object().unwrap()).unwrap();
        assert_eq!(
            request.url,
            "http://127.0.0.1:9/v1/pets/a%20b%2Fc/photos?size=s&size=m"
        );
        assert!(request.headers.contains(&("X-Trace".into(), "t1".into())));
        assert!(request.headers.contains(&("x-api-key".into(), "k".into())));
        assert_eq!(request.body, None);
    }

    // A path parameter of `..` was sent as `GET /v1/users/../profile`, with the API's
    // headers, to a path the operation does not name.
    #[test]
    fn a_dot_segment_argument_is_encoded() {
        let users = tool(
            json!({"openapi": "3.0.0", "paths": {"/users/{id}/x{suffix}": {"get": {
                "parameters": [
                    {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}},
                    {"name": "suffix", "in": "path", "required": true, "schema": {"type": "string"}},
                ],
            }}}}),
        );
        let url = |id: &str, suffix: &str| {
            let arguments = json!({"id": id, "suffix": suffix});
            users.request(arguments.as_object().unwrap()).unwrap().url
        };
        let base = "http://127.0.0.1:9/v1/users";
        assert_eq!(url("..", "y"), format!("{base}/%2E%2E/xy"));
        assert_eq!(url(".", "y"), format!("{base}/%2E/xy"));
        assert_eq!(url("...", "."), format!("{base}/.../x."));
        assert_eq!(url("a.b", ""), format!("{base}/a.b/x"));
        assert_eq!(url("../..", "/?#"), format!("{base}/..%2F../x%2F%3F%23"));
        let dotted = tool(
            json!({"openapi": "3.0.0", "paths": {"/a/.{x}/./b": {"get": {
                "parameters": [{"name": "x", "in": "path", "required": true}],
            }}}}),
        );
        let arguments = json!({"x": "."});
        let request = dotted.request(arguments.as_object().unwrap()).unwrap();
        assert_eq!(request.url, "http://127.0.0.1:9/v1/a/%2E%2E/./b");
    }

    #[test]
    fn an_error_answer_carries_status_and_body() {
        let response = HttpResponse {
            status: 404,
            headers: Vec::new(),
            body: br#"{"message": "no pet 7"}"#.to_vec(),
            url: "http://h/pets/7".into(),
        };
        let ToolReturn::Error { message, details } = answer("GET http://h/pets/7", &response)
        else {
            panic!("an error")
        };
        assert!(message.contains("HTTP 404 Not Found"), "{message}");
        assert_eq!(details["status"], 404);
        assert_eq!(details["body"]["message"], "no pet 7");
    }
}
