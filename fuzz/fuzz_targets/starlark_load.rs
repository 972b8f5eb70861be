//! Loading a Starlark tool file from arbitrary source: parse, evaluate the top level (under
//! a short load timeout), and introspect each `mcp.tool(...)` registration: signature,
//! annotations into a schema, docstring, properties. Each tool's schema is then compiled.

#![no_main]

use std::path::Path;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use toolsmith_model::ArgumentValidator;
use toolsmith_starlark::{LoadSettings, load_module};

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let settings = LoadSettings {
        load_timeout: Duration::from_secs(1),
        ..LoadSettings::new(toolsmith_fuzz::tools_dir())
    };
    let module = load_module(Path::new("fuzzed.star"), source, &settings);
    for tool in &module.tools {
        let _ = ArgumentValidator::new(&tool.definition().input_schema);
    }
});
