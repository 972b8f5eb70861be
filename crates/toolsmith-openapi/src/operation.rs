//! The operations of an OpenAPI document as tools (docs/gateway.md, "OpenAPI"): for each
//! method of each path, its parameters (path, query, header; the path item's and the
//! operation's) and JSON request body become one input schema, its first 2xx JSON response
//! the output schema when that is an object, and its method the annotations.

use serde_json::{Map, Value, json};
use toolsmith_model::{Annotations, JsonObject};

use crate::document::Document;
use crate::schema::{Budget, Expansion, Unresolved, pointed};
use crate::spec::OpenApiSpec;

/// The methods a path item may hold, in the order their operations are listed.
const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// One operation, ready to become a tool.
#[derive(Debug, Clone)]
pub struct Operation {
    /// `GET`, `POST`, …
    pub method: String,
    /// The path template (`/pets/{petId}`).
    pub path: String,
    /// `operationId`.
    pub operation_id: Option<String>,
    /// `tags`.
    pub tags: Vec<String>,
    /// `summary` and `description`, joined.
    pub description: String,
    /// The parameters, each bound to the input property that carries it.
    pub parameters: Vec<Parameter>,
    /// The JSON request body, carried by the `body` property.
    pub body: Option<Body>,
    /// The input schema.
    pub input_schema: JsonObject,
    /// The first 2xx JSON response's schema, when it is an object.
    pub output_schema: Option<JsonObject>,
}

/// Where a parameter goes in the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// Substituted into the path.
    Path,
    /// Added to the query string.
    Query,
    /// Sent as a header.
    Header,
}

/// One parameter of an operation.
#[derive(Debug, Clone)]
pub struct Parameter {
    /// The input property that carries it.
    pub property: String,
    /// Its name in the request.
    pub name: String,
    /// Where it goes.
    pub location: Location,
}

/// The JSON request body of an operation.
#[derive(Debug, Clone)]
pub struct Body {
    /// The input property that carries it (`body`).
    pub property: String,
    /// The media type sent (`application/json`, or the `+json` type the spec names).
    pub content_type: String,
}

impl Operation {
    /// The tool's name without prefix: `operationId` in snake case, else the method and path
    /// (`GET /pets/{petId}` → `get_pets_pet_id`).
    pub fn tool_name(&self) -> String {
        match &self.operation_id {
            Some(id) => snake_case(id),
            None => snake_case(&format!("{} {}", self.method, self.path)),
        }
    }

    /// The MCP annotations its method implies: `GET`/`HEAD` read-only, `DELETE`
    /// destructive, `PUT` (and `DELETE`) idempotent, as RFC 9110 §9.2 defines them; every
    /// operation reaches an open world.
    pub fn annotations(&self) -> Annotations {
        let method = self.method.as_str();
        Annotations {
            read_only: matches!(method, "GET" | "HEAD" | "OPTIONS").then_some(true),
            destructive: (method == "DELETE").then_some(true),
            idempotent: matches!(method, "PUT" | "DELETE").then_some(true),
            open_world: Some(true),
        }
    }

    /// `METHOD /path`, as messages show it.
    pub fn label(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

/// The operations of `document` that `spec` selects (by `include` and `exclude`), and a
/// message for each one that cannot be a tool.
///
/// # Errors
///
/// [`Oversized`] when their schemas expand past what Toolsmith reads from one document.
pub fn operations(
    document: &Document,
    spec: &OpenApiSpec,
) -> Result<(Vec<Operation>, Vec<String>), Oversized> {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    let Some(Value::Object(paths)) = document.root.get("paths") else {
        return Ok((found, problems));
    };
    let mut budget = Budget::new();
    for (path, item) in paths {
        let item = match item.get("$ref").and_then(Value::as_str) {
            Some(reference) => match pointed(&document.root, reference) {
                Ok(item) => item,
                Err(message) => {
                    problems.push(format!("path `{path}`: {message}"));
                    continue;
                }
            },
            None => item,
        };
        for method in METHODS {
            let Some(operation) = item.get(*method) else {
                continue;
            };
            if !spec.selects(operation_id(operation), path, &tags(operation)) {
                continue;
            }
            let label = format!("{} {path}", method.to_ascii_uppercase());
            match read(document, &mut budget, path, method, item, operation) {
                Ok(operation) => found.push(operation),
                Err(Unresolved::Problem(message)) => {
                    problems.push(format!("operation `{label}`: {message}"));
                }
                Err(Unresolved::Oversized) => return Err(Oversized),
            }
        }
    }
    Ok((found, problems))
}

/// A document whose schemas expand past what Toolsmith reads from one document: `$ref`s
/// that repeat and nest, or many operations that each refer to large schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Oversized;

fn operation_id(operation: &Value) -> Option<&str> {
    operation
        .get("operationId")
        .and_then(Value::as_str)
        .map(str::trim)
}

fn tags(operation: &Value) -> Vec<String> {
    operation
        .get("tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|tag| tag.as_str().map(str::to_owned))
        .collect()
}

fn read(
    document: &Document,
    budget: &mut Budget,
    path: &str,
    method: &str,
    item: &Value,
    operation: &Value,
) -> Result<Operation, Unresolved> {
    let root = &document.root;
    let text = |key: &str| operation.get(key).and_then(Value::as_str).map(str::trim);
    let description = match (text("summary"), text("description")) {
        (Some(summary), Some(description)) if !description.starts_with(summary) => {
            format!("{summary}\n\n{description}")
        }
        (_, Some(description)) if !description.is_empty() => description.to_owned(),
        (Some(summary), _) => summary.to_owned(),
        _ => String::new(),
    };
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut input = Expansion::new(root, budget);
    let parameters = parameters(&mut input, item, operation, &mut properties, &mut required)?;
    let body = request_body(&mut input, operation, &mut properties, &mut required)?;
    let defs = input.defs(&properties)?;
    let mut input_schema = JsonObject::new();
    input_schema.insert("type".into(), "object".into());
    input_schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        input_schema.insert("required".into(), Value::Array(required));
    }
    input_schema.insert("additionalProperties".into(), false.into());
    if let Some(defs) = defs {
        input_schema.insert("$defs".into(), Value::Object(defs));
    }
    let output_schema = output_schema(&mut Expansion::new(root, budget), operation)?;
    for schema in std::iter::once(&input_schema).chain(&output_schema) {
        budget.keep_object(schema)?;
    }
    Ok(Operation {
        method: method.to_ascii_uppercase(),
        path: path.to_owned(),
        operation_id: operation_id(operation).map(str::to_owned),
        tags: tags(operation),
        description,
        parameters,
        body,
        input_schema,
        output_schema,
    })
}

/// The parameters of `operation` and its path `item` as input properties (added to
/// `properties` and `required`), each bound to the property that carries it.
fn parameters<'a>(
    expansion: &mut Expansion<'a, '_>,
    item: &'a Value,
    operation: &'a Value,
    properties: &mut Map<String, Value>,
    required: &mut Vec<Value>,
) -> Result<Vec<Parameter>, Unresolved> {
    // The operation's parameters override the path item's of the same name and location.
    let mut declared: Vec<Value> = Vec::new();
    for list in [item.get("parameters"), operation.get("parameters")] {
        for parameter in list.and_then(Value::as_array).into_iter().flatten() {
            let parameter = expansion.resolve(parameter)?;
            let key = |p: &Value| (p.get("name").cloned(), p.get("in").cloned());
            match declared
                .iter_mut()
                .find(|seen| key(seen) == key(&parameter))
            {
                Some(seen) => *seen = parameter,
                None => declared.push(parameter),
            }
        }
    }
    let mut parameters = Vec::new();
    for parameter in &declared {
        let name = parameter
            .get("name")
            .and_then(Value::as_str)
            .ok_or("a parameter has no `name`")?;
        let location = match parameter.get("in").and_then(Value::as_str) {
            Some("path") => Location::Path,
            Some("query") => Location::Query,
            Some("header") => Location::Header,
            Some("cookie") => {
                if parameter.get("required") == Some(&Value::Bool(true)) {
                    return Err(Unresolved::Problem(format!(
                        "its required cookie parameter `{name}` cannot be sent; exclude the operation or set the cookie in `headers`"
                    )));
                }
                continue;
            }
            other => {
                return Err(Unresolved::Problem(format!(
                    "parameter `{name}` has `in: {other:?}`"
                )));
            }
        };
        let schema = parameter
            .get("schema")
            .or_else(|| {
                parameter
                    .get("content")?
                    .as_object()?
                    .values()
                    .next()?
                    .get("schema")
            })
            .cloned()
            .unwrap_or_else(|| json!({"type": "string"}));
        let mut schema = expansion.unwrapped(schema)?;
        if let (Value::Object(schema), Some(Value::String(text))) =
            (&mut schema, parameter.get("description"))
        {
            schema
                .entry("description")
                .or_insert_with(|| Value::String(text.clone()));
        }
        let property = if properties.contains_key(name) {
            format!("{}_{name}", location_word(location))
        } else {
            name.to_owned()
        };
        if location == Location::Path || parameter.get("required") == Some(&Value::Bool(true)) {
            required.push(Value::String(property.clone()));
        }
        properties.insert(property.clone(), schema);
        parameters.push(Parameter {
            property,
            name: name.to_owned(),
            location,
        });
    }
    Ok(parameters)
}

/// The JSON request body of `operation` as the `body` input property, if it takes one.
fn request_body<'a>(
    expansion: &mut Expansion<'a, '_>,
    operation: &'a Value,
    properties: &mut Map<String, Value>,
    required: &mut Vec<Value>,
) -> Result<Option<Body>, Unresolved> {
    Ok(match operation.get("requestBody") {
        None => None,
        Some(request_body) => {
            let request_body = expansion.resolve(request_body)?;
            let body_required = request_body.get("required") == Some(&Value::Bool(true));
            match json_content(&request_body) {
                Some((content_type, schema)) => {
                    let property = if properties.contains_key("body") {
                        "request_body".to_owned()
                    } else {
                        "body".to_owned()
                    };
                    let mut schema = expansion.unwrapped(schema.clone())?;
                    if let Value::Object(schema) = &mut schema {
                        let text = request_body
                            .get("description")
                            .and_then(Value::as_str)
                            .unwrap_or("The JSON request body.");
                        schema
                            .entry("description")
                            .or_insert_with(|| Value::String(text.to_owned()));
                    }
                    if body_required {
                        required.push(Value::String(property.clone()));
                    }
                    properties.insert(property.clone(), schema);
                    Some(Body {
                        property,
                        content_type,
                    })
                }
                None if body_required => {
                    let kinds: Vec<&String> = request_body
                        .get("content")
                        .and_then(Value::as_object)
                        .map(|content| content.keys().collect())
                        .unwrap_or_default();
                    return Err(Unresolved::Problem(format!(
                        "its request body is not JSON ({}), which OpenAPI tools do not send; exclude the operation",
                        kinds
                            .iter()
                            .map(|kind| format!("`{kind}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
                None => None,
            }
        }
    })
}

fn location_word(location: Location) -> &'static str {
    match location {
        Location::Path => "path",
        Location::Query => "query",
        Location::Header => "header",
    }
}

/// The media type and schema of the JSON entry of a request body's or response's
/// `content`: `application/json`, else the first `…/…+json` or `…/json` one.
fn json_content(holder: &Value) -> Option<(String, &Value)> {
    let content = holder.get("content")?.as_object()?;
    let (kind, media) = content.get_key_value("application/json").or_else(|| {
        content.iter().find(|(kind, _)| {
            let kind = kind.split(';').next().unwrap_or_default();
            kind.ends_with("+json") || kind.ends_with("/json")
        })
    })?;
    Some((
        kind.split(';').next().unwrap_or_default().to_owned(),
        media.get("schema").unwrap_or(&Value::Bool(true)),
    ))
}

/// The schema of the first 2xx response with JSON content, when it describes an object.
fn output_schema<'a>(
    expansion: &mut Expansion<'a, '_>,
    operation: &'a Value,
) -> Result<Option<JsonObject>, Unresolved> {
    let Some(Value::Object(responses)) = operation.get("responses") else {
        return Ok(None);
    };
    let mut codes: Vec<&String> = responses
        .keys()
        .filter(|code| code.starts_with('2'))
        .collect();
    codes.sort();
    let Some(code) = codes.first() else {
        return Ok(None);
    };
    let response = expansion.resolve(&responses[code.as_str()])?;
    let Some((_, schema)) = json_content(&response) else {
        return Ok(None);
    };
    let schema = expansion.unwrapped(schema.clone())?;
    Ok(match schema {
        Value::Object(mut schema) if describes_object(&schema) => {
            // MCP wants `"type": "object"` at the top of an output schema (an `allOf` has none).
            schema
                .entry("type")
                .or_insert_with(|| Value::String("object".into()));
            if let Some(defs) = expansion.defs(&schema)? {
                match schema.get_mut("$defs") {
                    Some(Value::Object(own)) => own.extend(defs),
                    _ => {
                        schema.insert("$defs".into(), Value::Object(defs));
                    }
                }
            }
            Some(schema)
        }
        _ => None,
    })
}

/// Whether a schema's instances are objects (and only objects): `structuredContent` must be
/// one. An `allOf` is when one of its members is.
fn describes_object(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(_) => false,
        None => {
            schema.contains_key("properties")
                || schema
                    .get("allOf")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .any(|member| member.as_object().is_some_and(describes_object))
        }
    }
}

/// `text` in snake case: `getPetById` → `get_pet_by_id`, `HTTPServer` → `http_server`,
/// anything not a letter or digit a single `_`.
pub fn snake_case(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 4);
    for (index, &c) in chars.iter().enumerate() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && index > 0 {
                let previous = chars[index - 1];
                let next_is_lower = chars.get(index + 1).is_some_and(char::is_ascii_lowercase);
                let boundary = previous.is_ascii_lowercase()
                    || previous.is_ascii_digit()
                    || (previous.is_ascii_uppercase() && next_is_lower);
                if boundary && !out.is_empty() && !out.ends_with('_') {
                    out.push('_');
                }
            }
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn names_are_snake_case() {
        assert_eq!(snake_case("getPetById"), "get_pet_by_id");
        assert_eq!(snake_case("HTTPServer"), "http_server");
        assert_eq!(snake_case("pets.list"), "pets_list");
        assert_eq!(snake_case("GET /pets/{petId}"), "get_pets_pet_id");
        assert_eq!(snake_case("v2Pets"), "v2_pets");
    }

    /// An `[openapi.NAME]` that selects every operation.
    pub(crate) fn every() -> OpenApiSpec {
        OpenApiSpec::parse(
            "api",
            &json!({"spec": "spec.json"}),
            std::path::Path::new("."),
        )
        .unwrap()
    }

    fn all(document: &Document) -> (Vec<Operation>, Vec<String>) {
        operations(document, &every()).unwrap()
    }

    fn document(root: Value) -> Document {
        Document {
            root,
            path: "spec.json".into(),
        }
    }

    #[test]
    fn parameters_and_body_make_one_schema() {
        let (operations, problems) = all(&document(json!({
            "openapi": "3.0.3",
            "paths": {"/pets/{petId}": {
                "parameters": [{"name": "petId", "in": "path", "schema": {"type": "integer"}}],
                "put": {
                    "operationId": "updatePet",
                    "parameters": [{"name": "dryRun", "in": "query", "schema": {"type": "boolean"}}],
                    "requestBody": {"required": true, "content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Pet"}}}},
                    "responses": {"200": {"description": "ok", "content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Pet"}}}}},
                },
            }},
            "components": {"schemas": {"Pet": {"type": "object", "properties": {
                "name": {"type": "string", "nullable": true}}}}},
        })));
        assert!(problems.is_empty(), "{problems:?}");
        let [operation] = operations.as_slice() else {
            panic!("one operation")
        };
        assert_eq!(operation.tool_name(), "update_pet");
        assert_eq!(
            Value::Object(operation.input_schema.clone()),
            json!({
                "type": "object",
                "properties": {
                    "petId": {"type": "integer"},
                    "dryRun": {"type": "boolean"},
                    "body": {
                        "type": "object",
                        "properties": {"name": {"type": ["string", "null"]}},
                        "description": "The JSON request body.",
                    },
                },
                "required": ["petId", "body"],
                "additionalProperties": false,
            })
        );
        assert!(operation.output_schema.is_some());
        assert_eq!(operation.annotations().idempotent, Some(true));
        assert_eq!(operation.annotations().read_only, None);
    }

    #[test]
    fn a_required_form_body_is_a_problem_naming_its_type() {
        let (operations, problems) = all(&document(json!({
            "openapi": "3.1.0",
            "paths": {"/upload": {"post": {
                "requestBody": {"required": true, "content": {"multipart/form-data": {}}},
            }}},
        })));
        assert!(operations.is_empty());
        assert!(
            problems[0].contains("`multipart/form-data`"),
            "{problems:?}"
        );
        assert!(problems[0].contains("POST /upload"), "{problems:?}");
    }
}
