//! OpenAPI schemas as the JSON Schema 2020-12 Toolsmith publishes (docs/gateway.md,
//! "OpenAPI"): local `$ref`s (`#/components/...`) replaced by what they point at, and
//! OpenAPI 3.0's dialect turned into 2020-12 (`nullable: true` into a `"null"` type, boolean
//! `exclusiveMinimum`/`exclusiveMaximum` into numbers). A 3.1 schema is 2020-12 already and
//! passes through.

use serde_json::{Map, Value};

/// How deep `$ref`s may nest before a schema is taken to refer to itself.
const MAX_DEPTH: usize = 32;

/// `value` with every local `$ref` resolved against `root` (siblings of a `$ref` override
/// what it points at, as 3.1 allows), schemas in 2020-12 form.
///
/// A `$ref` that leads back to itself is left as the empty schema (anything), so a
/// recursive `Tree` still validates its first levels.
///
/// # Errors
///
/// A `$ref` to another file or to nothing, named.
pub(crate) fn resolve(root: &Value, value: &Value) -> Result<Value, String> {
    resolve_in(root, value, &mut Vec::new())
}

fn resolve_in(root: &Value, value: &Value, trail: &mut Vec<String>) -> Result<Value, String> {
    match value {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get("$ref") {
                if trail.contains(reference) || trail.len() >= MAX_DEPTH {
                    return Ok(Value::Object(Map::new()));
                }
                let target = pointed(root, reference)?;
                trail.push(reference.clone());
                let mut resolved = resolve_in(root, target, trail)?;
                trail.pop();
                if let Value::Object(resolved) = &mut resolved {
                    for (key, sibling) in object {
                        if key != "$ref" {
                            resolved.insert(key.clone(), resolve_in(root, sibling, trail)?);
                        }
                    }
                }
                return Ok(resolved);
            }
            let mut out = Map::with_capacity(object.len());
            for (key, member) in object {
                out.insert(key.clone(), resolve_in(root, member, trail)?);
            }
            modernize(&mut out);
            Ok(Value::Object(out))
        }
        Value::Array(items) => items
            .iter()
            .map(|item| resolve_in(root, item, trail))
            .collect::<Result<_, _>>()
            .map(Value::Array),
        other => Ok(other.clone()),
    }
}

/// What the local reference `reference` (`#/components/schemas/Pet`) points at in `root`.
///
/// # Errors
///
/// The reference, when it is not local or points at nothing.
pub(crate) fn pointed<'a>(root: &'a Value, reference: &str) -> Result<&'a Value, String> {
    let Some(pointer) = reference.strip_prefix('#') else {
        return Err(format!(
            "`$ref: {reference}` points into another document, which Toolsmith does not read; bundle the spec into one file (e.g. `redocly bundle`)"
        ));
    };
    root.pointer(pointer)
        .ok_or_else(|| format!("`$ref: {reference}` points at nothing in the document"))
}

/// A 3.0 schema object's keywords in their 2020-12 form. Only boolean `nullable` and
/// boolean bounds change, so a property that happens to be called `nullable` is left alone.
fn modernize(schema: &mut Map<String, Value>) {
    if let Some(Value::Bool(nullable)) = schema.get("nullable").cloned() {
        schema.remove("nullable");
        if nullable {
            match schema.get_mut("type") {
                Some(Value::String(kind)) => {
                    let kind = std::mem::take(kind);
                    schema.insert(
                        "type".into(),
                        Value::Array(vec![kind.into(), "null".into()]),
                    );
                }
                Some(Value::Array(kinds)) if !kinds.iter().any(|k| k == "null") => {
                    kinds.push("null".into());
                }
                _ => {}
            }
            if let Some(Value::Array(values)) = schema.get_mut("enum")
                && !values.contains(&Value::Null)
            {
                values.push(Value::Null);
            }
        }
    }
    for (exclusive, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if let Some(Value::Bool(flag)) = schema.get(exclusive).cloned() {
            schema.remove(exclusive);
            if flag && let Some(limit) = schema.remove(bound) {
                schema.insert(exclusive.into(), limit);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn refs_resolve_and_nullable_becomes_a_null_type() {
        let root = json!({"components": {"schemas": {
            "Pet": {"type": "object", "properties": {
                "name": {"type": "string"},
                "tag": {"type": "string", "nullable": true},
                "owner": {"$ref": "#/components/schemas/Owner"},
            }},
            "Owner": {"type": "object", "properties": {"age": {
                "type": "integer", "minimum": 0, "exclusiveMinimum": true,
            }}},
        }}});
        let resolved = resolve(&root, &json!({"$ref": "#/components/schemas/Pet"})).unwrap();
        assert_eq!(
            resolved["properties"]["tag"],
            json!({"type": ["string", "null"]})
        );
        assert_eq!(
            resolved["properties"]["owner"]["properties"]["age"],
            json!({"type": "integer", "exclusiveMinimum": 0})
        );
    }

    #[test]
    fn a_recursive_ref_stops_at_itself() {
        let root = json!({"components": {"schemas": {"Node": {
            "type": "object",
            "properties": {"child": {"$ref": "#/components/schemas/Node"}},
        }}}});
        let resolved = resolve(&root, &json!({"$ref": "#/components/schemas/Node"})).unwrap();
        assert_eq!(resolved["properties"]["child"], json!({}));
    }

    #[test]
    fn external_and_dangling_refs_are_named() {
        let root = json!({});
        let error = resolve(&root, &json!({"$ref": "other.yaml#/Pet"})).unwrap_err();
        assert!(error.contains("another document"), "{error}");
        let error = resolve(&root, &json!({"$ref": "#/components/schemas/Nope"})).unwrap_err();
        assert!(error.contains("points at nothing"), "{error}");
    }
}
