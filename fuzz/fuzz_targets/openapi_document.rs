//! OpenAPI documents as `[openapi.NAME]` reads them: JSON or YAML, then every operation
//! into a tool, its `$ref`s resolved by the bounded expander (in place, or shared in
//! `$defs`), and each tool's input and output schemas compiled, as the server does before
//! validating a call's arguments. Checked besides "no panic": the tools of one document
//! hold no more JSON values than the document bound allows.

#![no_main]

use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolsmith_model::{ArgumentValidator, SourceLocation, Tool as _};
use toolsmith_openapi::{DOCUMENT_LIMIT, Document, OpenApiSpec, tools};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(document) = Document::parse(text, PathBuf::from("fuzzed.yaml")) else {
        return;
    };
    let table = json!({"spec": "fuzzed.yaml", "base_url": "http://127.0.0.1:9/"});
    let spec = OpenApiSpec::parse("api", &table, Path::new(".")).expect("a valid table");
    let Ok((found, _problems)) = tools(&spec, &document, &SourceLocation::default()) else {
        return;
    };
    let mut values = 0;
    for tool in &found {
        let definition = tool.definition();
        values += size(&definition.input_schema.to_value());
        if let Ok(validator) = ArgumentValidator::new(&definition.input_schema) {
            let _ = validator.validate(serde_json::Map::new());
        }
        if let Some(output) = &definition.output_schema {
            values += size(&output.to_value());
            let _ = toolsmith_model::compile_schema(&output.to_object());
        }
    }
    assert!(
        values <= DOCUMENT_LIMIT,
        "the tools hold {values} values, past the bound of {DOCUMENT_LIMIT}"
    );
});

/// How many JSON values `value` holds, itself included.
fn size(value: &Value) -> usize {
    let mut count = 0;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        count += 1;
        match value {
            Value::Object(members) => stack.extend(members.values()),
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    count
}
