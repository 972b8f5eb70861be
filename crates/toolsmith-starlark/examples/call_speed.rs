//! Measures the cost of one call of a trivial native tool, the number the README's
//! "Performance" section tracks:
//! `cargo run --release -p toolsmith-starlark --example call_speed [calls]`.

#![expect(clippy::print_stdout, reason = "an example reports its measurement")]

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use toolsmith_model::{CallContext, Catalog, ToolDefinition, input_schema};
use toolsmith_starlark::{LoadSettings, load_module, load_script};

fn main() {
    let calls: u32 = std::env::args()
        .nth(1)
        .and_then(|text| text.parse().ok())
        .unwrap_or(200_000);
    let source =
        "def echo(text: str) -> str:\n    \"\"\"Echo.\"\"\"\n    return text\n\nmcp.tool(echo)\n";
    let loaded = load_module(Path::new("echo.star"), source, &LoadSettings::new("."));
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let tool = loaded.tools[0].clone();
    let catalog = Catalog::new(loaded.tools, Vec::new());
    let context = CallContext::detached(Duration::from_mins(1));
    let arguments = json!({"text": "hello"})
        .as_object()
        .cloned()
        .expect("an object");

    let started = Instant::now();
    for _ in 0..calls {
        let returned = tool.call(&arguments, &context).expect("echo works");
        std::hint::black_box(returned);
    }
    let direct = started.elapsed();

    let started = Instant::now();
    for _ in 0..calls {
        let outcome = catalog
            .call("echo", arguments.clone(), &context)
            .expect("echo exists");
        std::hint::black_box(outcome);
    }
    let through_catalog = started.elapsed();

    // A manifest script is parsed once but compiled and run top to bottom on every call.
    let hello = "import scriptling.mcp.tool as tool\n\nname = tool.get_string(\"name\", \"World\")\n\
                 tool.return_string(f\"Hello, {name}!\")\n";
    let definition = ToolDefinition::new("hello", "Greet.", input_schema(&[]));
    let script = load_script(
        definition,
        Path::new("hello.py"),
        hello,
        &LoadSettings::new("."),
    )
    .expect("the script parses");
    let arguments = json!({"name": "Ada"})
        .as_object()
        .cloned()
        .expect("an object");
    let started = Instant::now();
    for _ in 0..calls {
        let returned = script.call(&arguments, &context).expect("hello works");
        std::hint::black_box(returned);
    }
    let scripted = started.elapsed();

    let per_call = |total: Duration| total.as_secs_f64() * 1e6 / f64::from(calls);
    println!("{calls} calls each");
    println!(
        "  echo, Tool::call:         {:.2} µs/call",
        per_call(direct)
    );
    println!(
        "  echo, Catalog::call:      {:.2} µs/call (validation + result contract)",
        per_call(through_catalog)
    );
    println!(
        "  hello script, Tool::call: {:.2} µs/call",
        per_call(scripted)
    );
}
