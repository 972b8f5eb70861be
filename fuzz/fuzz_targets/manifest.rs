//! Tool manifests (`name.toml`) as loading reads them: TOML, the tool's properties, its
//! `[[parameters]]` and `[params.*]` overlays into an input schema, and for a command tool
//! the argv template checked against those parameters. The schema is then compiled, as
//! the server does before validating a call's arguments.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use toolsmith_command::CommandTool;
use toolsmith_folder::fuzzing::parse_manifest;
use toolsmith_model::ArgumentValidator;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let Ok((definition, command)) = parse_manifest(Path::new("tools/fuzzed.toml"), source) else {
        return;
    };
    if let Ok(validator) = ArgumentValidator::new(&definition.input_schema) {
        let _ = validator.validate(serde_json::Map::new());
    }
    if let Some(argv) = command {
        let _ = CommandTool::new(definition, argv, toolsmith_fuzz::tools_dir());
    }
});
