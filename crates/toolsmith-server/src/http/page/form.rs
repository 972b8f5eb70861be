//! A tool's parameters, read from its input schema: the table that describes them and the
//! try-it form that fills them in. Each schema type gets its control: text and number
//! fields, a select for an enum or a boolean, and a JSON text area for arrays, objects and
//! anything the other controls cannot hold. The page's script (`assets/page.js`) reads each
//! control by its `data-kind`.

use std::fmt::Write as _;

use serde_json::Value;

use super::html::{escape, strings, text};

/// What a parameter's control holds, and how the script reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    String,
    Number,
    Integer,
    Boolean,
    /// One of the schema's `enum` values, each option's value being the value as JSON.
    Enum,
    /// JSON text: arrays, objects, unions.
    Json,
}

impl Kind {
    fn of(schema: &Value) -> Self {
        if schema["enum"].is_array() {
            return Self::Enum;
        }
        match type_name(schema).as_deref() {
            Some("string") => Self::String,
            Some("number") => Self::Number,
            Some("integer") => Self::Integer,
            Some("boolean") => Self::Boolean,
            _ => Self::Json,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Number => "number",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
            Self::Enum => "enum",
            Self::Json => "json",
        }
    }
}

/// The schema's one type, leaving `null` out of a union (`["string", "null"]` is a string
/// that may be left out); `None` for no type or a union of several.
fn type_name(schema: &Value) -> Option<String> {
    match &schema["type"] {
        Value::String(name) => Some(name.clone()),
        Value::Array(names) => {
            let mut names = names
                .iter()
                .filter_map(Value::as_str)
                .filter(|name| *name != "null");
            let first = names.next()?;
            names.next().is_none().then(|| first.to_owned())
        }
        _ => None,
    }
}

/// How the table names a parameter's type: `integer`, `array of number`, `string | null`.
fn type_label(schema: &Value) -> String {
    let label = match &schema["type"] {
        Value::String(name) => name.clone(),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" | "),
        _ if schema["anyOf"].is_array() || schema["oneOf"].is_array() => "one of several".into(),
        _ => "any".into(),
    };
    match schema["items"]["type"].as_str() {
        Some(item) if label == "array" => format!("array of {item}"),
        _ => label,
    }
}

/// The parameters of `schema` in order, each with whether it is required.
fn parameters_of(schema: &Value) -> Vec<(&str, &Value, bool)> {
    let required = strings(&schema["required"]);
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, property)| (name.as_str(), property, required.contains(&name.as_str())))
        .collect()
}

/// The table of the parameters: name, type, required, description, default and choices.
pub(super) fn parameters(out: &mut String, schema: &Value) {
    let parameters = parameters_of(schema);
    if parameters.is_empty() {
        out.push_str("<p class=\"note\">No parameters.</p>\n");
        return;
    }
    out.push_str(
        "<table class=\"parameters\">\n<thead><tr><th>Parameter</th><th>Type</th>\
         <th>Required</th><th>Description</th><th>Default</th><th>Choices</th></tr></thead>\n<tbody>\n",
    );
    for (name, property, required) in parameters {
        let choices: Vec<String> = property["enum"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|choice| format!("<code>{}</code>", escape(&choice.to_string())))
            .collect();
        let default = property
            .get("default")
            .map(|default| format!("<code>{}</code>", escape(&default.to_string())))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"prose\">{}</td><td>{}</td><td>{}</td></tr>",
            escape(name),
            escape(&type_label(property)),
            if required { "yes" } else { "no" },
            escape(text(property, "description")),
            default,
            choices.join(" "),
        );
    }
    out.push_str("</tbody>\n</table>\n");
}

/// The try-it form of tool number `index`, called `name`.
pub(super) fn try_it(out: &mut String, index: usize, name: &str, schema: &Value) {
    let _ = writeln!(
        out,
        "<details class=\"try\">\n<summary>Try it</summary>\n<form class=\"try-form\" data-tool=\"{}\" novalidate>",
        escape(name)
    );
    for (number, (parameter, property, required)) in parameters_of(schema).into_iter().enumerate() {
        let id = format!("try-{index}-{number}");
        let kind = Kind::of(property);
        let _ = write!(
            out,
            "<div class=\"field\">\n<label for=\"{id}\"><code>{}</code>{}</label>\n",
            escape(parameter),
            if required {
                " <span class=\"required\">required</span>"
            } else {
                ""
            },
        );
        let attributes = format!(
            "id=\"{id}\" data-param=\"{}\" data-kind=\"{}\"{}",
            escape(parameter),
            kind.word(),
            if required { " data-required" } else { "" }
        );
        control(out, kind, &attributes, property, required);
        let _ = writeln!(
            out,
            "<small>{}</small>\n</div>",
            escape(&type_label(property))
        );
    }
    let _ = writeln!(
        out,
        "<button type=\"submit\">Call <code>{}</code></button>\n<div class=\"result\" \
         aria-live=\"polite\"></div>\n</form>\n</details>",
        escape(name)
    );
}

fn control(out: &mut String, kind: Kind, attributes: &str, property: &Value, required: bool) {
    let default = property.get("default");
    match kind {
        Kind::String | Kind::Number | Kind::Integer => {
            let (input_type, step) = match kind {
                Kind::Number => ("number", " step=\"any\""),
                Kind::Integer => ("number", " step=\"1\""),
                _ => ("text", ""),
            };
            let mut extra = String::new();
            for (key, attribute) in [("minimum", "min"), ("maximum", "max")] {
                if let Some(bound) = property[key].as_f64() {
                    let _ = write!(extra, " {attribute}=\"{bound}\"");
                }
            }
            let value = match default {
                Some(Value::String(text)) => text.clone(),
                Some(Value::Number(number)) => number.to_string(),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "<input type=\"{input_type}\"{step}{extra} {attributes} value=\"{}\">",
                escape(&value)
            );
        }
        Kind::Boolean | Kind::Enum => {
            let choices: Vec<Value> = if kind == Kind::Boolean {
                vec![Value::Bool(true), Value::Bool(false)]
            } else {
                property["enum"].as_array().cloned().unwrap_or_default()
            };
            let _ = writeln!(out, "<select {attributes}>");
            if !required || default.is_none() {
                let _ = writeln!(
                    out,
                    "<option value=\"\">{}</option>",
                    if required { "(choose)" } else { "(not set)" }
                );
            }
            for choice in &choices {
                let json = choice.to_string();
                let label = choice.as_str().map_or_else(|| json.clone(), str::to_owned);
                let selected = if default == Some(choice) {
                    " selected"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "<option value=\"{}\"{selected}>{}</option>",
                    escape(&json),
                    escape(&label)
                );
            }
            out.push_str("</select>\n");
        }
        Kind::Json => {
            let value = default
                .map(|default| serde_json::to_string(default).unwrap_or_default())
                .unwrap_or_default();
            let placeholder = match type_name(property).as_deref() {
                Some("array") => "JSON array, e.g. [1, 2]",
                Some("object") => "JSON object, e.g. {\"key\": \"value\"}",
                _ => "JSON value",
            };
            let _ = writeln!(
                out,
                "<textarea rows=\"2\" {attributes} placeholder=\"{}\">{}</textarea>",
                escape(placeholder),
                escape(&value)
            );
        }
    }
}
