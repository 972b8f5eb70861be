//! The environment a command sees: cleared except PATH, HOME, LANG, what
//! `permissions.env` names, and the `TOOLSMITH_*` variables.

use std::collections::HashMap;

use serde_json::json;
use toolsmith_model::{CallContext, Tool};

use crate::support::{PATIENCE, call, definition, object, text, tool, tool_with};

/// Runs `env` and returns what it printed as a map.
fn environment(output: &str) -> HashMap<String, String> {
    output
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect()
}

/// A variable of the test process that commands do not inherit by default.
fn private_variable() -> (String, String) {
    std::env::vars()
        .find(|(name, _)| {
            !matches!(name.as_str(), "PATH" | "HOME" | "LANG") && !name.starts_with("TOOLSMITH_")
        })
        .expect("the test process has some environment (cargo sets CARGO_* variables)")
}

#[test]
fn environment_is_cleared_except_path_home_and_lang() {
    let dir = tempfile::tempdir().unwrap();
    let (name, _) = private_variable();
    let tool = tool(dir.path(), &json!({}), &["env"]);
    let seen = environment(&text(call(&tool, &json!({}))));
    assert!(!seen.contains_key(&name), "`{name}` leaked into {seen:?}");
    assert_eq!(seen.get("PATH"), std::env::var("PATH").ok().as_ref());
    for allowed in seen.keys() {
        assert!(
            matches!(
                allowed.as_str(),
                "PATH" | "HOME" | "LANG" | "PWD" | "SHLVL" | "_"
            ) || allowed.starts_with("TOOLSMITH_"),
            "unexpected variable `{allowed}`"
        );
    }
}

#[test]
fn variables_named_in_permissions_env_are_passed() {
    let dir = tempfile::tempdir().unwrap();
    let (name, value) = private_variable();
    let mut definition = definition("probe", &json!({}));
    definition.permissions.env = vec![
        name.clone(),
        "TOOLSMITH_SURELY_UNSET".into(),
        "BAD=NAME".into(),
    ];
    let tool = tool_with(definition, dir.path(), &["env"]);
    let seen = environment(&text(call(&tool, &json!({}))));
    assert_eq!(seen.get(&name), Some(&value));
    assert!(!seen.contains_key("TOOLSMITH_SURELY_UNSET"));
}

#[test]
fn toolsmith_variables_describe_the_tool_and_its_options() {
    let dir = tempfile::tempdir().unwrap();
    let tool = tool_with(definition("forecast", &json!({})), dir.path(), &["env"]);
    let mut context = CallContext::detached(PATIENCE);
    context.options = object(&json!({"units": "metric", "retries": 2}));
    let seen = environment(&text(tool.call(&object(&json!({})), &context)));
    assert_eq!(seen["TOOLSMITH_TOOL"], "forecast");
    assert_eq!(seen["TOOLSMITH_TOOL_DIR"], dir.path().to_string_lossy());
    assert_eq!(
        seen["TOOLSMITH_OPTIONS"],
        r#"{"units":"metric","retries":2}"#
    );
}
