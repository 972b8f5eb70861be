//! Argv templates: a command tool's `command = [...]` with `{name}` placeholders, parsed
//! against its parameters and rendered with arguments. The input is JSON:
//! `{"command": [...], "parameters": [...], "arguments": {...}}`.
//!
//! Checks that with no arguments exactly the literal elements remain, and that an argument
//! never adds argv elements beyond the items of an array it spreads.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use toolsmith_command::ArgvTemplate;

fuzz_target!(|data: &[u8]| {
    let Some(input) = toolsmith_fuzz::json(data) else {
        return;
    };
    let strings = |key: &str| -> Vec<String> {
        input
            .get(key)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| item.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let command = strings("command");
    let parameters = strings("parameters");
    let names: Vec<&str> = parameters.iter().map(String::as_str).collect();
    let Ok(template) = ArgvTemplate::parse(&command, &names) else {
        return;
    };
    let _ = template.placeholders().count();

    let literal_elements = command
        .iter()
        .filter(|element| !has_placeholder(element))
        .count();
    assert_eq!(
        template.render(&Map::new()).len(),
        literal_elements,
        "with no arguments only the literal elements remain: {command:?}"
    );

    let arguments = input
        .get("arguments")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let spread: usize = arguments
        .values()
        .filter_map(Value::as_array)
        .map(Vec::len)
        .sum();
    let uses = template.placeholders().count();
    let argv = template.render(&arguments);
    assert!(
        argv.len() <= command.len() + spread * uses,
        "rendering {command:?} with {arguments:?} gave {argv:?}"
    );
});

/// Whether an argv element has a `{name}` placeholder (not just `{{`/`}}` escapes).
fn has_placeholder(element: &str) -> bool {
    element.replace("{{", "").replace("}}", "").contains('{')
}
