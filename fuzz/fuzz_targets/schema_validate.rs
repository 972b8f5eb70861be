//! The schema builder and argument validation. The input is JSON:
//! `{"parameters": [...], "schema": {...}, "arguments": {...}}`, where each parameter is
//! `{"name", "annotation" (Starlark, `list[int] | None`) or "type" (manifest, `array:int`),
//! "required", "default", "description", "extra": {JSON Schema keywords}}`, and `schema`,
//! when given, is used as written instead of the one built from the parameters.
//!
//! Checks the validator's contract: arguments it accepts (after coercion) satisfy the
//! schema by the JSON Schema validator itself, and accepting is idempotent (validating its
//! output again gives the same arguments).

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolsmith_model::{ArgumentValidator, ParamType, Parameter, compile_schema, input_schema};

fuzz_target!(|data: &[u8]| {
    let Some(input) = toolsmith_fuzz::json(data) else {
        return;
    };
    let schema = match input.get("schema").and_then(Value::as_object) {
        Some(schema) => schema.clone(),
        None => {
            let parameters: Vec<Parameter> = input
                .get("parameters")
                .and_then(Value::as_array)
                .map(|entries| entries.iter().filter_map(parameter).collect())
                .unwrap_or_default();
            input_schema(&parameters)
        }
    };
    let schema = toolsmith_model::Schema::new(&schema);
    let Ok(validator) = ArgumentValidator::new(&schema) else {
        return;
    };
    // A schema the validator accepts compiles, though a plain one is compiled only by its
    // first validation (`is_plain` must not let an invalid schema through).
    let compiled =
        compile_schema(&schema.to_object()).expect("a schema the validator accepted compiles");
    let arguments = input
        .get("arguments")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let accepted = match validator.validate(arguments) {
        Ok(accepted) => accepted,
        Err(errors) => {
            assert!(
                !errors.violations.is_empty(),
                "a rejection names no violation"
            );
            let _ = errors.to_json();
            return;
        }
    };
    let instance = Value::Object(accepted.clone());
    assert!(
        compiled.is_valid(&instance),
        "accepted arguments {instance} break the schema {}: {:?}",
        schema,
        compiled
            .iter_errors(&instance)
            .map(|error| error.to_string())
            .collect::<Vec<_>>()
    );
    assert_eq!(
        validator.validate(accepted.clone()).ok().as_ref(),
        Some(&accepted),
        "validating accepted arguments again changed or rejected them"
    );
});

/// One parameter from its JSON description; `None` when its type does not parse.
fn parameter(entry: &Value) -> Option<Parameter> {
    let name = entry.get("name")?.as_str()?;
    let (ty, nullable) = match (entry.get("annotation"), entry.get("type")) {
        (Some(Value::String(annotation)), _) => ParamType::from_annotation(annotation)?,
        (_, Some(Value::String(name))) => (ParamType::from_manifest(name)?, false),
        _ => (ParamType::Any, false),
    };
    let _ = (
        ty.describe(),
        ty.accepts(entry.get("default").unwrap_or(&Value::Null)),
    );
    let mut parameter = Parameter::new(name, ty);
    parameter.required = !nullable
        && entry
            .get("required")
            .and_then(Value::as_bool)
            .unwrap_or(true);
    parameter.default = entry.get("default").cloned();
    parameter.description = entry
        .get("description")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(extra) = entry.get("extra").and_then(Value::as_object) {
        parameter.extra = extra.clone();
    }
    Some(parameter)
}
