//! Per-call cost through the whole call path — validate → run → result contract → result
//! JSON — for a trivial tool of each kind, against a native Rust tool through the same path
//! (the floor the path itself sets).
//!
//! Run: `cargo bench -p toolsmith-bench --bench call_path`

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolsmith_bench::{median_per_call, micros};
use toolsmith_folder::ToolFolder;
use toolsmith_model::{
    CallContext, Catalog, JsonObject, ParamType, Parameter, Tool, ToolDefinition, ToolFailure,
    ToolReturn, input_schema,
};

/// The floor: an echo tool written in Rust, called through the same catalog path.
struct NativeEcho(ToolDefinition);

impl Tool for NativeEcho {
    fn definition(&self) -> &ToolDefinition {
        &self.0
    }

    fn call(&self, arguments: &JsonObject, _: &CallContext) -> Result<ToolReturn, ToolFailure> {
        Ok(ToolReturn::Text(
            arguments["text"].as_str().unwrap_or_default().to_owned(),
        ))
    }
}

fn main() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(
        dir.path().join("echo.star"),
        "def echo(text: str) -> str:\n    \"\"\"Echo the text back.\"\"\"\n    return text\n\nmcp.tool(echo)\n\n\
         def add(a: int, b: int) -> dict:\n    \"\"\"Add two numbers.\"\"\"\n    return {\"sum\": a + b}\n\nmcp.tool(add)\n",
    )
    .expect("write echo.star");
    std::fs::write(
        dir.path().join("echo_command.toml"),
        "description = \"Echo the arguments back.\"\ncommand = [\"cat\"]\n[[parameters]]\nname = \"text\"\ntype = \"string\"\nrequired = true\n",
    )
    .expect("write echo_command.toml");
    let folder = ToolFolder::load(dir.path()).expect("the folder loads");
    assert!(
        folder.catalog().diagnostics().is_empty(),
        "{:?}",
        folder.catalog().diagnostics()
    );
    let catalog = folder.catalog();

    let native = Catalog::new(
        vec![Arc::new(NativeEcho(ToolDefinition::new(
            "echo",
            "Echo the text back.",
            input_schema(&[Parameter::new("text", ParamType::String)]),
        )))],
        Vec::new(),
    );
    let context = CallContext::detached(Duration::from_secs(30));
    let echo_args = json!({"text": "hello"})
        .as_object()
        .cloned()
        .expect("an object");
    let add_args = json!({"a": 2, "b": 40})
        .as_object()
        .cloned()
        .expect("an object");

    let run = |catalog: &Catalog, name: &str, arguments: &JsonObject| {
        let outcome = catalog
            .call(name, arguments.clone(), &context)
            .expect("the tool exists");
        assert!(!outcome.is_error, "{outcome:?}");
        black_box(serde_json::to_string(&outcome).expect("serializes"));
    };

    let native_echo = median_per_call(9, 50_000, || run(&native, "echo", &echo_args));
    let star_echo = median_per_call(9, 50_000, || run(catalog, "echo", &echo_args));
    let star_add = median_per_call(9, 50_000, || run(catalog, "add", &add_args));
    let command_echo = median_per_call(5, 200, || run(catalog, "echo_command", &echo_args));

    println!("call path: validate -> run -> result contract -> result JSON (median per call)");
    println!("| tool | per call | vs native Rust tool |");
    println!("|---|---:|---:|");
    let ratio = |d: Duration| d.as_secs_f64() / native_echo.as_secs_f64();
    println!(
        "| native Rust echo (floor) | {} | 1.0x |",
        micros(native_echo)
    );
    println!(
        "| Starlark echo(text) -> str | {} | {:.1}x |",
        micros(star_echo),
        ratio(star_echo)
    );
    println!(
        "| Starlark add(a, b) -> dict | {} | {:.1}x |",
        micros(star_add),
        ratio(star_add)
    );
    println!(
        "| command tool `cat` (process spawn) | {} | {:.0}x |",
        micros(command_echo),
        ratio(command_echo)
    );
}
