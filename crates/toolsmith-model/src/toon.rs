//! TOON (Token-Oriented Object Notation): a compact rendering of JSON for models, used by
//! `tool.return_toon(...)` and `text_format = "toon"`.
//!
//! Objects are `key: value` lines indented by two spaces per level; arrays declare their
//! length (`tags[2]: a,b`); arrays of flat objects with the same keys become tables
//! (`users[2]{id,name}:` followed by one comma-separated row per object). Strings are quoted
//! only when they would otherwise be read as something else.

use std::fmt::Write as _;

use serde_json::{Map, Value};

const INDENT: &str = "  ";

/// Encodes a JSON value as TOON.
pub fn encode(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(object) => write_object(&mut out, object, 0),
        Value::Array(items) => write_array(&mut out, None, items, 0),
        primitive => out.push_str(&primitive_text(primitive)),
    }
    out
}

fn write_object(out: &mut String, object: &Map<String, Value>, depth: usize) {
    for (key, value) in object {
        write_field(out, key, value, depth);
    }
}

fn write_field(out: &mut String, key: &str, value: &Value, depth: usize) {
    match value {
        Value::Object(child) => {
            line(out, depth, &format!("{}:", key_text(key)));
            write_object(out, child, depth + 1);
        }
        Value::Array(items) => write_array(out, Some(key), items, depth),
        primitive => line(
            out,
            depth,
            &format!("{}: {}", key_text(key), primitive_text(primitive)),
        ),
    }
}

fn write_array(out: &mut String, key: Option<&str>, items: &[Value], depth: usize) {
    let name = key.map(key_text).unwrap_or_default();
    let count = items.len();
    if items.iter().all(is_primitive) {
        let values: Vec<String> = items.iter().map(primitive_text).collect();
        let header = format!("{name}[{count}]:");
        if values.is_empty() {
            line(out, depth, &header);
        } else {
            line(out, depth, &format!("{header} {}", values.join(",")));
        }
        return;
    }
    if let Some(fields) = table_fields(items) {
        let header: Vec<String> = fields.iter().map(|field| key_text(field)).collect();
        line(
            out,
            depth,
            &format!("{name}[{count}]{{{}}}:", header.join(",")),
        );
        for item in items {
            let Value::Object(object) = item else {
                continue;
            };
            let row: Vec<String> = fields
                .iter()
                .map(|field| primitive_text(&object[*field]))
                .collect();
            line(out, depth + 1, &row.join(","));
        }
        return;
    }
    line(out, depth, &format!("{name}[{count}]:"));
    for item in items {
        write_list_item(out, item, depth + 1);
    }
}

fn write_list_item(out: &mut String, item: &Value, depth: usize) {
    match item {
        Value::Object(object) if object.is_empty() => line(out, depth, "-"),
        Value::Object(object) => {
            // The first field shares the hyphen's line; the rest align under it.
            let mut fields = object.iter();
            if let Some((key, value)) = fields.next() {
                let mut first = String::new();
                write_field(&mut first, key, value, 0);
                let mut lines = first.lines();
                if let Some(head) = lines.next() {
                    line(out, depth, &format!("- {head}"));
                }
                for rest in lines {
                    line(out, depth + 1, rest);
                }
            }
            for (key, value) in fields {
                write_field(out, key, value, depth + 1);
            }
        }
        Value::Array(items) => {
            let mut nested = String::new();
            write_array(&mut nested, None, items, 0);
            let mut lines = nested.lines();
            if let Some(head) = lines.next() {
                line(out, depth, &format!("- {head}"));
            }
            for rest in lines {
                line(out, depth + 1, rest);
            }
        }
        primitive => line(out, depth, &format!("- {}", primitive_text(primitive))),
    }
}

/// The shared keys of an array of flat objects with identical key sets, in order.
fn table_fields(items: &[Value]) -> Option<Vec<&str>> {
    let Value::Object(first) = items.first()? else {
        return None;
    };
    if first.is_empty() {
        return None;
    }
    let fields: Vec<&str> = first.keys().map(String::as_str).collect();
    let uniform = items.iter().all(|item| {
        item.as_object().is_some_and(|object| {
            object.len() == fields.len()
                && fields
                    .iter()
                    .all(|field| object.get(*field).is_some_and(is_primitive))
        })
    });
    uniform.then_some(fields)
}

fn line(out: &mut String, depth: usize, text: &str) {
    if !out.is_empty() {
        out.push('\n');
    }
    for _ in 0..depth {
        out.push_str(INDENT);
    }
    out.push_str(text);
}

fn is_primitive(value: &Value) -> bool {
    !matches!(value, Value::Object(_) | Value::Array(_))
}

fn primitive_text(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number_text(number),
        Value::String(text) => string_text(text),
        Value::Array(_) | Value::Object(_) => value.to_string(),
    }
}

fn number_text(number: &serde_json::Number) -> String {
    if let Some(float) = number.as_f64().filter(|_| number.is_f64()) {
        if float == 0.0 {
            return "0".into();
        }
        if float.fract() == 0.0 && float.abs() < 1e16 {
            return format!("{float:.0}");
        }
        return float.to_string();
    }
    number.to_string()
}

fn key_text(key: &str) -> String {
    let mut chars = key.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if plain { key.to_owned() } else { quoted(key) }
}

fn string_text(text: &str) -> String {
    let needs_quotes = text.is_empty()
        || text.trim() != text
        || matches!(text, "true" | "false" | "null")
        || text.starts_with('-')
        || looks_numeric(text)
        || text.chars().any(|c| {
            matches!(c, ':' | '"' | '\\' | '[' | ']' | '{' | '}' | ',' | '#') || c.is_control()
        });
    if needs_quotes {
        quoted(text)
    } else {
        text.to_owned()
    }
}

fn looks_numeric(text: &str) -> bool {
    text.parse::<f64>().is_ok()
        || (text.len() > 1 && text.starts_with('0') && text.chars().all(|c| c.is_ascii_digit()))
}

fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flat_object() {
        assert_eq!(
            encode(&json!({"id": 1, "name": "Ada", "active": true})),
            "id: 1\nname: Ada\nactive: true"
        );
    }

    #[test]
    fn nested_object_and_primitive_array() {
        let value = json!({"user": {"name": "Ada", "tags": ["a", "b"]}, "empty": []});
        assert_eq!(
            encode(&value),
            "user:\n  name: Ada\n  tags[2]: a,b\nempty[0]:"
        );
    }

    #[test]
    fn uniform_objects_become_a_table() {
        let value = json!({"users": [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bo"}]});
        assert_eq!(encode(&value), "users[2]{id,name}:\n  1,Ada\n  2,Bo");
    }

    #[test]
    fn mixed_arrays_use_list_items() {
        let value = json!({"items": [1, {"a": 1, "b": [1, 2]}, [3]]});
        assert_eq!(
            encode(&value),
            "items[3]:\n  - 1\n  - a: 1\n    b[2]: 1,2\n  - [1]: 3"
        );
    }

    #[test]
    fn ambiguous_strings_are_quoted() {
        let value = json!({"a": "", "b": "true", "c": "42", "d": "x, y", "e": " pad", "f": "-x", "g": "line\nbreak"});
        assert_eq!(
            encode(&value),
            "a: \"\"\nb: \"true\"\nc: \"42\"\nd: \"x, y\"\ne: \" pad\"\nf: \"-x\"\ng: \"line\\nbreak\""
        );
    }

    #[test]
    fn root_array_and_primitive() {
        assert_eq!(encode(&json!([1, 2.5, null])), "[3]: 1,2.5,null");
        assert_eq!(encode(&json!("hi")), "hi");
        assert_eq!(encode(&json!({"n": 3.0})), "n: 3");
    }
}
