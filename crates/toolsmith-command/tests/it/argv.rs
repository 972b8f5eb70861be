//! `{name}` placeholders in the command line, and where the program and its files are found.

use serde_json::{Value, json};
use toolsmith_command::{CommandTool, TemplateError};
use toolsmith_model::{CallContext, Tool, ToolReturn};

use crate::support::{PATIENCE, call, definition, object, script, text, tool};

/// A script that prints its arguments (after the program name) as a JSON array.
const PRINT_ARGV: &str =
    "#!/usr/bin/env python3\nimport json, sys\nprint(json.dumps(sys.argv[1:]))\n";

fn argv_of(returned: Result<ToolReturn, toolsmith_model::ToolFailure>) -> Value {
    match returned {
        Ok(ToolReturn::Value(value)) => value,
        other => panic!("expected the argv as JSON, got {other:?}"),
    }
}

#[test]
fn scalars_are_substituted_as_text() {
    let dir = tempfile::tempdir().unwrap();
    script(dir.path(), "argv.py", PRINT_ARGV);
    let properties = json!({
        "name": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "verbose": {"type": "boolean"},
        "filter": {"type": "object"},
    });
    let tool = tool(
        dir.path(),
        &properties,
        &[
            "python3",
            "argv.py",
            "{name}",
            "-n",
            "{count}",
            "--ratio={ratio}",
            "{verbose}",
            "{filter}",
        ],
    );
    let arguments = json!({"name": "a b; rm -rf /", "count": 5, "ratio": 0.25, "verbose": false, "filter": {"k": [1]}});
    assert_eq!(
        argv_of(call(&tool, &arguments)),
        json!([
            "a b; rm -rf /",
            "-n",
            "5",
            "--ratio=0.25",
            "false",
            "{\"k\":[1]}"
        ])
    );
}

#[test]
fn array_spreads_as_its_own_elements_or_joins_with_commas() {
    let dir = tempfile::tempdir().unwrap();
    script(dir.path(), "argv.py", PRINT_ARGV);
    let properties = json!({"paths": {"type": "array"}, "tags": {"type": "array"}});
    let tool = tool(
        dir.path(),
        &properties,
        &["./argv.py", "{paths}", "--tags={tags}"],
    );
    let arguments = json!({"paths": ["a", "b c", 3], "tags": ["x", "y"]});
    assert_eq!(
        argv_of(call(&tool, &arguments)),
        json!(["a", "b c", "3", "--tags=x,y"])
    );
}

#[test]
fn absent_optional_argument_is_dropped_and_defaults_are_applied() {
    let dir = tempfile::tempdir().unwrap();
    script(dir.path(), "argv.py", PRINT_ARGV);
    let properties = json!({
        "path": {"type": "string"},
        "since": {"type": "string"},
        "count": {"type": "integer", "default": 10},
    });
    let tool = tool(
        dir.path(),
        &properties,
        &["./argv.py", "{path}", "--since={since}", "-n", "{count}"],
    );
    assert_eq!(argv_of(call(&tool, &json!({}))), json!(["-n", "10"]));
    assert_eq!(
        argv_of(call(&tool, &json!({"path": "src", "count": 2}))),
        json!(["src", "-n", "2"])
    );
}

#[test]
fn doubled_braces_are_literal_braces() {
    let dir = tempfile::tempdir().unwrap();
    let properties = json!({"column": {"type": "integer"}});
    let tool = tool(
        dir.path(),
        &properties,
        &["awk", "BEGIN {{ print \"col\" {column} }}"],
    );
    assert_eq!(text(call(&tool, &json!({"column": 2}))), "col2");
}

#[test]
fn unknown_placeholder_is_rejected_at_construction_with_the_valid_names() {
    let command = vec!["git".into(), "log".into(), "-n".into(), "{cuont}".into()];
    let properties = json!({"count": {"type": "integer"}, "path": {"type": "string"}});
    let error = CommandTool::new(definition("git_log", &properties), command, ".").unwrap_err();
    assert!(
        matches!(&error, TemplateError::UnknownParameter { name, valid, .. } if name == "cuont" && valid == &["count", "path"]),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("valid names: `count`, `path`"),
        "{error}"
    );
}

#[test]
fn script_next_to_the_manifest_is_found_from_another_working_directory() {
    let tools = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        tools.path().join("where.py"),
        "import os\nprint(os.getcwd())\n",
    )
    .unwrap();
    let tool = tool(tools.path(), &json!({}), &["python3", "where.py"]);
    let mut context = CallContext::detached(PATIENCE);
    context.working_dir = Some(root.path().to_owned());
    let returned = tool.call(&object(&json!({})), &context);
    let root = root.path().canonicalize().unwrap();
    assert_eq!(text(returned), root.to_string_lossy());
}

#[test]
fn working_directory_defaults_to_the_tools_folder() {
    let tools = tempfile::tempdir().unwrap();
    let tool = tool(tools.path(), &json!({}), &["pwd", "-P"]);
    let folder = tools.path().canonicalize().unwrap();
    assert_eq!(text(call(&tool, &json!({}))), folder.to_string_lossy());
}

#[test]
fn argument_naming_a_file_in_the_folder_is_not_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    script(dir.path(), "argv.py", PRINT_ARGV);
    std::fs::write(dir.path().join("secret.txt"), "").unwrap();
    let tool = tool(
        dir.path(),
        &json!({"file": {"type": "string"}}),
        &["./argv.py", "{file}"],
    );
    assert_eq!(
        argv_of(call(&tool, &json!({"file": "secret.txt"}))),
        json!(["secret.txt"])
    );
}
