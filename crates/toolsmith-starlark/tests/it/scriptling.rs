//! Manifest + script tools, starting with the three Scriptling examples exactly as
//! `seeds/002_*.txt` prints them.

use std::path::Path;

use serde_json::{Value, json};
use toolsmith_model::Catalog;
use toolsmith_starlark::load_script;

use crate::{call, manifest, settings, text};

const HELLO_PY: &str = r#"import scriptling.mcp.tool as tool

name = tool.get_string("name", "World")
times = tool.get_int("times", 1)

greetings = []
for i in range(times):
    greetings.append(f"Hello, {name}!")

tool.return_string("\n".join(greetings))
"#;

const ADD_PY: &str = r#"import scriptling.mcp.tool as tool

a = tool.get_int("a")
b = tool.get_int("b")

result = a + b
tool.return_string(f"{a} + {b} = {result}")
"#;

const PROCESS_LIST_PY: &str = r#"import scriptling.mcp.tool as tool

numbers = tool.get_list("numbers", [])
operation = tool.get_string("operation", "sum")

if not numbers:
    tool.return_error("Numbers list is empty")
else:
    if operation == "sum":
        result = sum(numbers)
    elif operation == "average":
        result = sum(numbers) / len(numbers)
    elif operation == "min":
        result = min(numbers)
    elif operation == "max":
        result = max(numbers)
    else:
        tool.return_error(f"Unknown operation: {operation}")
        result = None

    if result is not None:
        tool.return_object({
            "operation": operation,
            "result": result,
            "count": len(numbers)
        })
"#;

/// A catalog with one script tool.
fn script_catalog(name: &str, schema: Value, source: &str) -> Catalog {
    let path = format!("tools/{name}.py");
    let tool = load_script(
        manifest(name, "A script tool.", schema),
        Path::new(&path),
        source,
        &settings(),
    )
    .unwrap_or_else(|diagnostic| panic!("{diagnostic}"));
    Catalog::new(vec![tool], Vec::new())
}

fn hello() -> Catalog {
    script_catalog(
        "hello",
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Name of the person to greet"},
                "times": {"type": "integer", "description": "Number of times to repeat the greeting"}
            },
            "required": ["name"],
            "additionalProperties": false
        }),
        HELLO_PY,
    )
}

#[test]
fn hello_greets_times_times() {
    let outcome = call(&hello(), "hello", json!({"name": "Alice", "times": 2}));
    assert_eq!(
        outcome,
        json!({"content": [{"type": "text", "text": "Hello, Alice!\nHello, Alice!"}], "isError": false})
    );
    let once = call(&hello(), "hello", json!({"name": "Bob"}));
    assert_eq!(text(&once), "Hello, Bob!");
}

#[test]
fn add_sums_two_integers() {
    let catalog = script_catalog(
        "add",
        json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": false
        }),
        ADD_PY,
    );
    let outcome = call(&catalog, "add", json!({"a": 5, "b": 3}));
    assert_eq!(text(&outcome), "5 + 3 = 8");
    assert_eq!(outcome["isError"], false);
}

fn process_list() -> Catalog {
    script_catalog(
        "process_list",
        json!({
            "type": "object",
            "properties": {
                "numbers": {"type": "array", "items": {"type": "number"}},
                "operation": {"type": "string"}
            },
            "required": ["numbers", "operation"],
            "additionalProperties": false
        }),
        PROCESS_LIST_PY,
    )
}

#[test]
fn process_list_average_is_json_text_without_structured_content() {
    let outcome = call(
        &process_list(),
        "process_list",
        json!({"numbers": [1, 2, 3], "operation": "average"}),
    );
    assert_eq!(outcome["isError"], false);
    assert!(outcome.get("structuredContent").is_none(), "{outcome}");
    let object: Value = serde_json::from_str(text(&outcome)).unwrap();
    assert_eq!(
        object,
        json!({"operation": "average", "result": 2.0, "count": 3})
    );
    assert!(text(&outcome).contains("\"result\":2.0"), "{outcome}");
}

#[test]
fn process_list_errors() {
    let empty = call(
        &process_list(),
        "process_list",
        json!({"numbers": [], "operation": "sum"}),
    );
    assert_eq!(empty["isError"], true);
    assert_eq!(text(&empty), "Numbers list is empty");
    let unknown = call(
        &process_list(),
        "process_list",
        json!({"numbers": [1], "operation": "median"}),
    );
    assert_eq!(unknown["isError"], true);
    assert_eq!(text(&unknown), "Unknown operation: median");
    let sum = call(
        &process_list(),
        "process_list",
        json!({"numbers": [1, 2.5], "operation": "sum"}),
    );
    assert_eq!(
        serde_json::from_str::<Value>(text(&sum)).unwrap()["result"],
        3.5
    );
}

fn any_schema() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": true})
}

#[test]
fn getters_coerce_sensibly_and_default_to_zero_values() {
    let catalog = script_catalog(
        "getters",
        any_schema(),
        r#"
tool.return_object({
    "int_from_float": tool.get_int("f"),
    "int_from_text": tool.get_int("s"),
    "float_from_int": tool.get_float("i"),
    "bool_from_text": tool.get_bool("yes"),
    "list_from_csv": tool.get_list("csv"),
    "string_from_number": tool.get_string("i"),
    "missing_int": tool.get_int("nope"),
    "missing_string": tool.get_string("nope"),
    "missing_with_default": tool.get_float("nope", 1.5),
    "missing_list": tool.get_list("nope"),
})
"#,
    );
    let outcome = call(
        &catalog,
        "getters",
        json!({"f": 7.9, "s": " 12 ", "i": 4, "yes": "true", "csv": "a, b"}),
    );
    assert_eq!(
        serde_json::from_str::<Value>(text(&outcome)).unwrap(),
        json!({
            "int_from_float": 7,
            "int_from_text": 12,
            "float_from_int": 4.0,
            "bool_from_text": true,
            "list_from_csv": ["a", "b"],
            "string_from_number": "4",
            "missing_int": 0,
            "missing_string": "",
            "missing_with_default": 1.5,
            "missing_list": []
        })
    );
}

#[test]
fn return_functions_and_first_return_wins() {
    let structured = script_catalog(
        "structured",
        any_schema(),
        "tool.return_structured({\"a\": 1})\ntool.return_string(\"ignored\")\n",
    );
    let outcome = call(&structured, "structured", json!({}));
    assert_eq!(outcome["structuredContent"], json!({"a": 1}));

    let toon = script_catalog(
        "toon",
        any_schema(),
        "tool.return_toon({\"name\": \"Ada\", \"age\": 36})\n",
    );
    let outcome = call(&toon, "toon", json!({}));
    assert_eq!(text(&outcome), "name: Ada\nage: 36");

    let not_dict = script_catalog("not_dict", any_schema(), "tool.return_structured([1])\n");
    let outcome = call(&not_dict, "not_dict", json!({}));
    assert_eq!(outcome["isError"], true);
    assert!(text(&outcome).contains("needs a dict"), "{outcome}");

    let silent = script_catalog("silent", any_schema(), "x = 1\n");
    assert_eq!(
        call(&silent, "silent", json!({})),
        json!({"content": [{"type": "text", "text": ""}], "isError": false})
    );
}

#[test]
fn is_rewrites_leave_strings_and_comments_alone() {
    let catalog = script_catalog(
        "is_test",
        any_schema(),
        r#"import scriptling.mcp.tool
x = tool.get_string("x", "")  # this is a comment
y = None
tool.return_object({
    "a": x is not None,
    "b": y is None,
    "text": "it is what it is not",
})
"#,
    );
    let outcome = call(&catalog, "is_test", json!({"x": "v"}));
    assert_eq!(
        serde_json::from_str::<Value>(text(&outcome)).unwrap(),
        json!({"a": true, "b": true, "text": "it is what it is not"})
    );
}

#[test]
fn the_full_module_path_works_too() {
    let catalog = script_catalog(
        "full_path",
        any_schema(),
        "import scriptling.mcp.tool\n\nscriptling.mcp.tool.return_string(scriptling.mcp.tool.get_string(\"who\"))\n",
    );
    assert_eq!(
        text(&call(&catalog, "full_path", json!({"who": "me"}))),
        "me"
    );
}

#[test]
fn non_starlark_syntax_is_a_load_diagnostic() {
    let error = load_script(
        manifest("bad", "Bad.", any_schema()),
        Path::new("tools/bad.py"),
        "import scriptling.mcp.tool as tool\n\ntry:\n    x = 1\nexcept:\n    pass\n",
        &settings(),
    )
    .err()
    .expect("a diagnostic");
    assert_eq!(error.location.path, Path::new("tools/bad.py"));
    assert_eq!(error.location.line, 3);
    assert_eq!(error.message, "`try` is not Starlark");
    assert!(error.help.unwrap().contains("no exceptions"));

    let other_import = load_script(
        manifest("imp", "Imp.", any_schema()),
        Path::new("tools/imp.py"),
        "import requests\n",
        &settings(),
    )
    .err()
    .expect("a diagnostic");
    assert_eq!(other_import.message, "`import` is not Starlark");
}

#[test]
fn script_runtime_error_names_the_script_line() {
    let catalog = script_catalog(
        "crash",
        any_schema(),
        "import scriptling.mcp.tool as tool\n\nx = tool.get_int(\"n\", 1)\ny = x // 0\n",
    );
    let outcome = call(&catalog, "crash", json!({}));
    assert_eq!(outcome["isError"], true);
    assert!(
        text(&outcome).starts_with("tools/crash.py:4:5: "),
        "{outcome}"
    );
}

#[test]
fn script_runaway_times_out() {
    let mut definition = manifest("slow", "Slow.", any_schema());
    definition.timeout = Some(std::time::Duration::from_millis(300));
    let tool = load_script(
        definition,
        Path::new("tools/slow.star"),
        "for i in range(10000000):\n    for j in range(10000000):\n        pass\n",
        &settings(),
    )
    .unwrap();
    let catalog = Catalog::new(vec![tool], Vec::new());
    let started = std::time::Instant::now();
    let context = toolsmith_model::CallContext::detached(std::time::Duration::from_millis(300));
    let outcome = crate::call_with(&catalog, "slow", json!({}), &context);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(text(&outcome), "tool `slow` timed out after 300ms");
}
