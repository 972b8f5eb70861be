//! The two tables of `toolsmith.toml` a profile may set again, `[evaluator]` (docs/code-mode.md)
//! and `[search]` (docs/search.md): one parse each, so the folder's settings and its
//! profiles read them alike.

use serde_json::Value;
use toolsmith_model::{
    EvaluatorMode, EvaluatorSettings, JsonObject, RUN_CODE, SearchMode, SearchSettings, kind, names,
};

/// `[evaluator]` (or a profile's `evaluator`): `true`/`false`, or a table of `enabled`,
/// `mode` and `name` set on `base`; a table turns the evaluator on unless it says
/// `enabled = false`. A bad value keeps the base's with a warning.
pub(crate) fn evaluator_settings(
    value: &Value,
    base: EvaluatorSettings,
    section: &str,
    problem: &mut dyn FnMut(Option<&str>, String, String),
) -> EvaluatorSettings {
    const KEYS: [&str; 3] = ["enabled", "mode", "name"];
    let mut settings = base;
    let table = match value {
        Value::Bool(enabled) => {
            settings.enabled = *enabled;
            return settings;
        }
        Value::Object(table) => table,
        other => {
            problem(
                None,
                format!(
                    "`{section}` must be a table or true/false, got {}",
                    kind(other)
                ),
                format!(
                    "write `[{section}]` with `mode = \"only\"` or `alongside`, or `evaluator = true`"
                ),
            );
            return settings;
        }
    };
    settings.enabled = true;
    for (key, value) in table {
        match key.as_str() {
            "enabled" => match value {
                Value::Bool(enabled) => settings.enabled = *enabled,
                other => problem(
                    Some(key),
                    format!("`[{section}] enabled` must be true or false, got {}", kind(other)),
                    "e.g. enabled = true".into(),
                ),
            },
            "mode" => match value.as_str().map(str::parse::<EvaluatorMode>) {
                Some(Ok(mode)) => settings.mode = mode,
                _ => problem(
                    Some(key),
                    format!("`[{section}] mode` must be \"alongside\" or \"only\", got {value}"),
                    "alongside (the default) lists the tools next to run_code; only lists run_code and tool_search".into(),
                ),
            },
            "name" => match value.as_str() {
                Some(name)
                    if !name.is_empty()
                        && name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) =>
                {
                    name.clone_into(&mut settings.name);
                }
                _ => problem(
                    Some(key),
                    format!("`[{section}] name` must be a tool name, got {value}"),
                    format!("e.g. name = \"{RUN_CODE}\""),
                ),
            },
            _ => {
                let hint = names::suggestion(key, KEYS)
                    .unwrap_or_else(|| "known keys: enabled, mode, name".to_owned());
                problem(
                    Some(key),
                    format!("unknown key `{key}` in `[{section}]`"),
                    hint,
                );
            }
        }
    }
    settings
}

/// `[search]` (or another `section`, such as `profiles.NAME.search`): `mode` and
/// `budget_tokens` set on `base`; a bad value keeps the base's with a warning.
pub(crate) fn search_settings(
    search: &JsonObject,
    base: SearchSettings,
    section: &str,
    problem: &mut dyn FnMut(Option<&str>, String, String),
) -> SearchSettings {
    const KEYS: [&str; 2] = ["mode", "budget_tokens"];
    let mut settings = base;
    for (key, value) in search {
        match key.as_str() {
            "mode" => match value.as_str().map(str::parse::<SearchMode>) {
                Some(Ok(mode)) => settings.mode = mode,
                _ => problem(
                    Some(key),
                    format!("`[{section}] mode` must be \"auto\", \"always\" or \"never\", got {value}"),
                    "auto (the default) lists the tools while they fit `budget_tokens`, always puts them all behind tool_search, never lists them all".into(),
                ),
            },
            "budget_tokens" => match value.as_u64().and_then(|n| usize::try_from(n).ok()) {
                Some(budget) if budget > 0 => settings.budget_tokens = budget,
                _ => problem(
                    Some(key),
                    format!("`[{section}] budget_tokens` must be a positive whole number, got {value}"),
                    format!("e.g. budget_tokens = {}", toolsmith_model::DEFAULT_BUDGET_TOKENS),
                ),
            },
            _ => {
                let hint = names::suggestion(key, KEYS)
                    .unwrap_or_else(|| "known keys: mode, budget_tokens".to_owned());
                problem(
                    Some(key),
                    format!("unknown key `{key}` in `[{section}]`"),
                    hint,
                );
            }
        }
    }
    settings
}
