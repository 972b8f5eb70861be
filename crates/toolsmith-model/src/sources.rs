//! What the tool sources of `toolsmith.toml` that reach other services share
//! (docs/gateway.md): `[upstream.NAME]` and `[openapi.NAME]` both publish their tools under
//! a `prefix` (by default `NAME_`) and both send `headers` whose values may name
//! environment variables (`Authorization = "Bearer ${GITHUB_TOKEN}"`), so no secret sits
//! in the file.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// `[SECTION.NAME]` (`value`, as JSON) as a table whose keys are all in `known`.
///
/// # Errors
///
/// A message saying it is not a table, or naming the unknown key and listing the known ones.
pub fn source_table<'a>(
    section: &str,
    name: &str,
    value: &'a Value,
    known: &[&str],
) -> Result<&'a Map<String, Value>, String> {
    let Value::Object(table) = value else {
        return Err(format!("`[{section}.{name}]` must be a table"));
    };
    if let Some(key) = table.keys().find(|key| !known.contains(&key.as_str())) {
        let hint = crate::names::suggestion(key, known.iter().copied())
            .map(|hint| format!("; {hint}"))
            .unwrap_or_default();
        return Err(format!(
            "`[{section}.{name}]` has unknown key `{key}`{hint} (known: {})",
            known.join(", ")
        ));
    }
    Ok(table)
}

/// `[SECTION.NAME] KEY` (`value`), a table of strings such as `env` or `headers`; empty
/// when absent.
///
/// # Errors
///
/// A message naming the key, or the entry, that is not a string.
pub fn string_table(
    section: &str,
    name: &str,
    key: &str,
    value: Option<&Value>,
) -> Result<BTreeMap<String, String>, String> {
    match value {
        None => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(entry, value)| match value {
                Value::String(value) => Ok((entry.clone(), value.clone())),
                _ => Err(format!(
                    "`[{section}.{name}] {key}.{entry}` must be a string"
                )),
            })
            .collect(),
        Some(_) => Err(format!(
            "`[{section}.{name}] {key}` must be a table of strings"
        )),
    }
}

/// The prefix `[SECTION.NAME] prefix` gives the source's tools, `_` included: `value` (a
/// trailing `_` added unless it is empty), else `NAME_`; empty for none.
///
/// # Errors
///
/// A message naming the key when `value` is not a string.
pub fn tool_prefix(section: &str, name: &str, value: Option<&Value>) -> Result<String, String> {
    match value {
        None => Ok(format!("{name}_")),
        Some(Value::String(prefix)) if prefix.is_empty() || prefix.ends_with('_') => {
            Ok(prefix.clone())
        }
        Some(Value::String(prefix)) => Ok(format!("{prefix}_")),
        Some(_) => Err(format!("`[{section}.{name}] prefix` must be a string")),
    }
}

/// `value` with each `${VAR}` replaced by the variable's value from `lookup`.
///
/// # Errors
///
/// The name of a variable that is not set, or an unclosed `${`.
pub fn expand(value: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("`${{` without a closing `}}` in `{value}`"));
        };
        let variable = &after[..end];
        let Some(found) = lookup(variable) else {
            return Err(format!("environment variable `{variable}` is not set"));
        };
        out.push_str(&found);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn expand_replaces_variables_and_names_missing_ones() {
        let lookup = |name: &str| (name == "TOKEN").then(|| "abc".to_owned());
        assert_eq!(expand("Bearer ${TOKEN}", lookup).unwrap(), "Bearer abc");
        assert_eq!(
            expand("${NOPE}", lookup).unwrap_err(),
            "environment variable `NOPE` is not set"
        );
    }

    #[test]
    fn prefix_defaults_to_the_name_and_ends_with_an_underscore() {
        assert_eq!(tool_prefix("openapi", "pets", None).unwrap(), "pets_");
        assert_eq!(
            tool_prefix("openapi", "pets", Some(&json!("p"))).unwrap(),
            "p_"
        );
        assert_eq!(
            tool_prefix("openapi", "pets", Some(&json!(""))).unwrap(),
            ""
        );
        assert!(tool_prefix("openapi", "pets", Some(&json!(1))).is_err());
    }
}
