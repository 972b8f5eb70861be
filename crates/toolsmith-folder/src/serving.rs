//! The sections of `toolsmith.toml` for serving a team over HTTP: `[auth]` (docs/auth.md),
//! `[state]` (docs/deploy.md) and `[limits]` (docs/limits.md), read into the same settings
//! the `serve` flags fill (which win). Secrets may be written as `${VAR}`, read from the
//! environment, so that the file can be committed.

use std::collections::BTreeMap;

use serde_json::Value;
use toolsmith_model::{Introspection, JsonObject, LimitSettings, OAuthSettings, kind};

/// `[state]`: the state replicas share (`--state`, `--state-key`, `--replica-name`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StateConfig {
    /// `url`: the Redis URL.
    pub url: Option<String>,
    /// `key`: the secret that signs `requestState` (best as `${VAR}`).
    pub key: Option<String>,
    /// `replica_name`: this replica's name.
    pub replica_name: Option<String>,
}

/// Reports a problem at a key: its path from the top of the file (`["auth", "issuer"]`), the
/// message and the help.
type Problem<'a> = &'a mut dyn FnMut(&[&str], String, String);

/// `[auth]`, `[state]` and `[limits]` of the whole file `raw` (each at its default when
/// absent or not a table).
pub(crate) fn sections(
    raw: &JsonObject,
    problem: Problem<'_>,
) -> (Option<OAuthSettings>, StateConfig, LimitSettings) {
    let table = |section: &str| raw.get(section).and_then(Value::as_object);
    (
        table("auth").and_then(|table| auth(table, problem)),
        table("state").map_or_else(StateConfig::default, |table| state(table, problem)),
        table("limits").map_or_else(LimitSettings::default, |table| limits(table, problem)),
    )
}

/// `[auth]`: `None` without an `issuer` (a warning says so when other keys are set).
fn auth(table: &JsonObject, problem: Problem<'_>) -> Option<OAuthSettings> {
    const KEYS: [&str; 9] = [
        "issuer",
        "audience",
        "resource",
        "jwks_uri",
        "required_scopes",
        "clock_skew",
        "introspection_url",
        "client_id",
        "client_secret",
    ];
    // Unknown keys first: `isuer` is a typo of `issuer`, which the warning below misses.
    unknown_keys(table, "auth", &KEYS, problem);
    let Some(issuer) = text(table, "auth", "issuer", problem) else {
        if !table.is_empty() {
            problem(
                &["auth"],
                "`[auth]` has no `issuer`: it is ignored".into(),
                "name the authorization server, e.g. issuer = \"https://auth.example.com\"".into(),
            );
        }
        return None;
    };
    let mut settings = OAuthSettings::new(issuer);
    settings.audience = text(table, "auth", "audience", problem);
    settings.resource = text(table, "auth", "resource", problem);
    settings.jwks_uri = text(table, "auth", "jwks_uri", problem);
    match table.get("required_scopes") {
        None => {}
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            settings.required_scopes = items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect();
        }
        Some(other) => problem(
            &["auth", "required_scopes"],
            format!(
                "`[auth] required_scopes` must be a list of strings, got {}",
                kind(other)
            ),
            "e.g. required_scopes = [\"tools:read\"]".into(),
        ),
    }
    if let Some(skew) = table.get("clock_skew") {
        match toolsmith_model::duration::parse(skew) {
            Ok(skew) => settings.clock_skew = skew,
            Err(message) => problem(
                &["auth", "clock_skew"],
                format!("`[auth] clock_skew`: {message}"),
                "e.g. clock_skew = \"30s\"".into(),
            ),
        }
    }
    let url = text(table, "auth", "introspection_url", problem);
    let client_id = text(table, "auth", "client_id", problem);
    let client_secret = text(table, "auth", "client_secret", problem);
    match (url, client_id, client_secret) {
        (Some(url), Some(client_id), Some(client_secret)) => {
            settings.introspection = Some(Introspection {
                url,
                client_id,
                client_secret,
            });
        }
        (None, None, None) => {}
        (Some(_), ..) => problem(
            &["auth", "introspection_url"],
            "`[auth] introspection_url` needs `client_id` and `client_secret`: introspection is off".into(),
            "add client_id = \"...\" and client_secret = \"${TOOLSMITH_CLIENT_SECRET}\"".into(),
        ),
        _ => problem(
            &["auth"],
            "`[auth] client_id` and `client_secret` are for introspection, which needs `introspection_url`".into(),
            "add introspection_url = \"https://auth.example.com/introspect\"".into(),
        ),
    }
    Some(settings)
}

/// `[state]`.
fn state(table: &JsonObject, problem: Problem<'_>) -> StateConfig {
    const KEYS: [&str; 3] = ["url", "key", "replica_name"];
    let config = StateConfig {
        url: text(table, "state", "url", problem),
        key: text(table, "state", "key", problem),
        replica_name: text(table, "state", "replica_name", problem),
    };
    unknown_keys(table, "state", &KEYS, problem);
    config
}

/// `[limits]`, with `[limits.tools]`.
fn limits(table: &JsonObject, problem: Problem<'_>) -> LimitSettings {
    const KEYS: [&str; 3] = ["calls_per_minute", "concurrent_calls", "tools"];
    let mut settings = LimitSettings::default();
    let count = |path: &[&str], value: &Value, problem: Problem<'_>| match value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
    {
        Some(count) if count > 0 => Some(count),
        _ => {
            let key = path.join(".");
            let mut at = vec!["limits"];
            at.extend_from_slice(path);
            problem(
                &at,
                format!("`[limits] {key}` must be a positive whole number, got {value}"),
                format!("e.g. {key} = 60; leave it out for no limit"),
            );
            None
        }
    };
    if let Some(value) = table.get("calls_per_minute") {
        settings.calls_per_minute = count(&["calls_per_minute"], value, problem);
    }
    if let Some(value) = table.get("concurrent_calls") {
        settings.concurrent_calls = count(&["concurrent_calls"], value, problem);
    }
    match table.get("tools") {
        None => {}
        Some(Value::Object(tools)) => {
            let mut limits = BTreeMap::new();
            for (tool, value) in tools {
                if let Some(limit) = count(&["tools", tool], value, problem) {
                    limits.insert(tool.clone(), limit);
                }
            }
            settings.tools = limits;
        }
        Some(other) => problem(
            &["limits", "tools"],
            format!("`[limits] tools` must be a table, got {}", kind(other)),
            "write `[limits.tools]` with one `TOOL = CALLS_PER_MINUTE` line per tool".into(),
        ),
    }
    unknown_keys(table, "limits", &KEYS, problem);
    settings
}

/// The string at `section.key`, with a `${VAR}` reference read from the environment.
fn text(table: &JsonObject, section: &str, key: &str, problem: Problem<'_>) -> Option<String> {
    match table.get(key)? {
        Value::String(text) => match expand(text) {
            Ok(text) => Some(text),
            Err(variable) => {
                problem(
                    &[section, key],
                    format!("`[{section}] {key}` names `${{{variable}}}`, which is not set"),
                    format!("set {variable} in the server's environment"),
                );
                None
            }
        },
        other => {
            problem(
                &[section, key],
                format!("`[{section}] {key}` must be a string, got {}", kind(other)),
                format!("e.g. {key} = \"...\""),
            );
            None
        }
    }
}

/// `text` with every `${VAR}` replaced by the variable's value; the name of the first one
/// not set as the error.
fn expand(text: &str) -> Result<String, String> {
    let mut expanded = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        let name = &rest[start + 2..start + end];
        expanded.push_str(&rest[..start]);
        expanded.push_str(&std::env::var(name).map_err(|_| name.to_owned())?);
        rest = &rest[start + end + 1..];
    }
    expanded.push_str(rest);
    Ok(expanded)
}

fn unknown_keys(table: &JsonObject, section: &str, known: &[&str], problem: Problem<'_>) {
    for key in table.keys() {
        if !known.contains(&key.as_str()) {
            let hint = toolsmith_model::names::suggestion(key, known.iter().copied())
                .unwrap_or_else(|| format!("known keys: {}", known.join(", ")));
            problem(
                &[section, key],
                format!("unknown key `{key}` in `[{section}]`"),
                hint,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_is_read_from_the_environment() {
        assert_eq!(expand("plain").unwrap(), "plain");
        assert_eq!(
            expand("${TOOLSMITH_SURELY_UNSET_VARIABLE}").unwrap_err(),
            "TOOLSMITH_SURELY_UNSET_VARIABLE"
        );
        let home = std::env::var("HOME").unwrap();
        assert_eq!(expand("at ${HOME}/x").unwrap(), format!("at {home}/x"));
    }
}
