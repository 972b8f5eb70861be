//! Tool properties shared by every form: the keywords of `mcp.tool(...)` and the keys of a
//! manifest are the same names with the same meaning, so both go through
//! [`apply_property`] and cannot drift apart.

use serde_json::Value;

use crate::definition::{
    Icon, Init, JsonObject, PermissionFamily, TaskSupport, TextFormat, ToolDefinition, Ui,
};

/// The property names [`apply_property`] understands (besides form-specific ones such as
/// `params` or `[[parameters]]`).
pub const TOOL_PROPERTIES: &[&str] = &[
    "name",
    "title",
    "description",
    "keywords",
    "tags",
    "discoverable",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "output",
    "input_schema",
    "timeout",
    "max_concurrency",
    "options",
    "overrides",
    "requires",
    "init",
    "init_timeout",
    "permissions",
    "scopes",
    "ui",
    "icons",
    "examples",
    "text_format",
    "task",
    "meta",
];

/// A property value of the wrong shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{key}`: {message}")]
pub struct PropertyError {
    /// The property.
    pub key: String,
    /// What is wrong and what is expected.
    pub message: String,
}

/// Sets one property on a definition from its JSON value.
///
/// Returns `Ok(false)` when `key` is not a tool property (the caller decides whether that
/// is an error), and an error naming the expected shape when the value does not fit.
pub fn apply_property(
    definition: &mut ToolDefinition,
    key: &str,
    value: &Value,
) -> Result<bool, PropertyError> {
    let error = |message: String| PropertyError {
        key: key.to_owned(),
        message,
    };
    match key {
        "name" => definition.name = string(value).map_err(error)?,
        "title" => definition.title = Some(string(value).map_err(error)?),
        "description" => definition.description = string(value).map_err(error)?,
        "keywords" => definition.keywords = strings(value).map_err(error)?,
        "tags" => definition.tags = strings(value).map_err(error)?,
        "discoverable" => definition.discoverable = boolean(value).map_err(error)?,
        "read_only" => definition.annotations.read_only = Some(boolean(value).map_err(error)?),
        "destructive" => definition.annotations.destructive = Some(boolean(value).map_err(error)?),
        "idempotent" => definition.annotations.idempotent = Some(boolean(value).map_err(error)?),
        "open_world" => definition.annotations.open_world = Some(boolean(value).map_err(error)?),
        "output" => {
            let schema = object(value).map_err(error)?;
            if schema.get("type").and_then(Value::as_str) != Some("object") {
                return Err(error(
                    "an output schema must describe an object (`{\"type\": \"object\", ...}`); \
                     MCP's structuredContent is always an object"
                        .into(),
                ));
            }
            definition.output_schema = Some(schema.into());
        }
        "input_schema" => {
            // The whole input schema, for what parameters cannot express (`$defs`, `$ref`,
            // `oneOf`, a `$schema` dialect); it replaces the one built from the signature.
            let schema = object(value).map_err(error)?;
            if schema.get("type").and_then(Value::as_str) != Some("object") {
                return Err(error(
                    "an input schema must describe an object (`{\"type\": \"object\", ...}`); \
                     MCP tool arguments are always an object"
                        .into(),
                ));
            }
            definition.input_schema = schema.into();
        }
        "timeout" => definition.timeout = Some(crate::duration::parse(value).map_err(error)?),
        "max_concurrency" => definition.max_concurrency = Some(positive(value).map_err(error)?),
        "options" => definition.options = object(value).map_err(error)?,
        "overrides" => definition.overrides = object(value).map_err(error)?,
        "meta" => definition.meta = object(value).map_err(error)?,
        "requires" => requires(definition, value).map_err(error)?,
        // A Starlark file names a function (`init = setup`), which its loader reads before
        // the keywords reach this parser; as a value, `init` is a command.
        "init" => definition.init = Some(init_command(value).map_err(error)?),
        "init_timeout" => {
            definition.init_timeout = Some(crate::duration::parse(value).map_err(error)?);
        }
        "permissions" => {
            let permissions = object(value).map_err(error)?;
            for (name, entry) in &permissions {
                let list = strings(entry).map_err(error)?;
                let Some(family) = PermissionFamily::parse(name) else {
                    return Err(error(format!(
                        "unknown permission `{name}`; expected `fs.read`, `fs.write`, `net` or `env`"
                    )));
                };
                *definition.permissions.family_mut(family) = list;
            }
        }
        "scopes" => definition.scopes = strings(value).map_err(error)?,
        "ui" => definition.ui = Some(ui(value).map_err(error)?),
        "icons" => {
            let Value::Array(items) = value else {
                return Err(error("expected a list of icons".into()));
            };
            definition.icons = items
                .iter()
                .map(icon)
                .collect::<Result<_, _>>()
                .map_err(error)?;
        }
        "examples" => {
            let Value::Array(items) = value else {
                return Err(error(
                    "expected a list of `{\"args\": {...}, \"expect\": {...}}` cases".into(),
                ));
            };
            definition.examples.clone_from(items);
        }
        "text_format" => {
            let text = string(value).map_err(error)?;
            definition.text_format = TextFormat::parse(&text)
                .ok_or_else(|| error(format!("expected \"json\" or \"toon\", got \"{text}\"")))?;
        }
        "task" => {
            let text = string(value).map_err(error)?;
            definition.task = TaskSupport::parse(&text).ok_or_else(|| {
                error(format!(
                    "expected \"never\", \"optional\" or \"required\", got \"{text}\""
                ))
            })?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn requires(definition: &mut ToolDefinition, value: &Value) -> Result<(), String> {
    for (name, entry) in &object(value)? {
        match name.as_str() {
            "env" => definition.requires.env = strings(entry)?,
            "commands" => definition.requires.commands = strings(entry)?,
            other => {
                return Err(format!(
                    "unknown requirement `{other}`; expected `env` or `commands`"
                ));
            }
        }
    }
    Ok(())
}

fn init_command(value: &Value) -> Result<Init, String> {
    let argv = strings(value).map_err(|_| {
        format!(
            "expected a command as a list of strings (`init = [\"python3\", \"download_model.py\"]`) or, in a `.star` file, a function (`init = setup`), got {}",
            kind(value)
        )
    })?;
    if argv.is_empty() {
        return Err("the command is empty; write the program and its arguments".into());
    }
    Ok(Init::Command(argv))
}

/// The error for an `init_timeout` without an `init`, which would have nothing to time.
pub fn check_init(definition: &ToolDefinition) -> Result<(), PropertyError> {
    if definition.init.is_none() && definition.init_timeout.is_some() {
        return Err(PropertyError {
            key: "init_timeout".into(),
            message: "the tool has no `init` to time; add one or remove `init_timeout`".into(),
        });
    }
    Ok(())
}

fn string(value: &Value) -> Result<String, String> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("expected a string, got {}", kind(value)))
}

fn positive(value: &Value) -> Result<usize, String> {
    value
        .as_u64()
        .filter(|&count| count > 0)
        .and_then(|count| usize::try_from(count).ok())
        .ok_or_else(|| match value {
            Value::Number(_) => format!("expected a whole number of at least 1, got {value}"),
            other => format!("expected a whole number of at least 1, got {}", kind(other)),
        })
}

fn boolean(value: &Value) -> Result<bool, String> {
    value
        .as_bool()
        .ok_or_else(|| format!("expected true or false, got {}", kind(value)))
}

fn strings(value: &Value) -> Result<Vec<String>, String> {
    match value {
        Value::Array(items) => items.iter().map(string).collect(),
        other => Err(format!("expected a list of strings, got {}", kind(other))),
    }
}

fn object(value: &Value) -> Result<JsonObject, String> {
    value
        .as_object()
        .cloned()
        .ok_or_else(|| format!("expected a dict/table, got {}", kind(value)))
}

fn ui(value: &Value) -> Result<Ui, String> {
    let table = object(value)?;
    let uri = table
        .get("resource_uri")
        .or_else(|| table.get("resourceUri"))
        .ok_or("expected `resource_uri` (a `ui://` URI)")?;
    let visibility = table
        .get("visibility")
        .map(strings)
        .transpose()?
        .unwrap_or_default();
    Ok(Ui {
        resource_uri: string(uri)?,
        visibility,
    })
}

fn icon(value: &Value) -> Result<Icon, String> {
    match value {
        Value::String(src) => Ok(Icon {
            src: src.clone(),
            mime_type: None,
            sizes: Vec::new(),
            theme: None,
        }),
        Value::Object(table) => {
            let src = table
                .get("src")
                .ok_or("an icon needs `src` (an https: or data: URI, or a file in icons/)")?;
            let optional = |key: &str| table.get(key).map(string).transpose();
            let sizes = match table.get("sizes") {
                None => Vec::new(),
                Some(Value::String(size)) => vec![size.clone()],
                Some(other) => strings(other)?,
            };
            Ok(Icon {
                src: string(src)?,
                mime_type: optional("mimeType")?.or(optional("mime_type")?),
                sizes,
                theme: optional("theme")?,
            })
        }
        other => Err(format!(
            "expected an icon (a string or a table with `src`), got {}",
            kind(other)
        )),
    }
}

/// A short name for a JSON value's kind, for messages.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "None",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a dict",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn definition() -> ToolDefinition {
        ToolDefinition::new("t", "A tool.", JsonObject::new())
    }

    #[test]
    fn every_property_is_documented_in_the_tools_guide_and_the_readme() {
        // The README's `mcp.tool` keyword list lacked `task`, `scopes` and
        // `max_concurrency`, and docs/tools.md's table lacked `scopes`: a user writing from
        // the docs could not find keywords the code accepts.
        let guide = include_str!("../../../docs/tools.md");
        let readme = include_str!("../../../README.md");
        let listed = readme
            .split("`mcp.tool` keywords: `")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            .expect("the README lists the `mcp.tool` keywords");
        let listed: Vec<&str> = listed.split(',').map(str::trim).collect();
        for key in TOOL_PROPERTIES {
            assert!(
                guide.contains(&format!("\n| `{key}` |")),
                "docs/tools.md has no row for `{key}` in its tool properties table"
            );
            assert!(
                listed.contains(key),
                "the README's `mcp.tool` keyword list lacks `{key}`"
            );
        }
    }

    #[test]
    fn every_listed_property_is_understood() {
        for key in TOOL_PROPERTIES {
            let mut tool = definition();
            let applied = apply_property(&mut tool, key, &json!(null));
            assert!(applied != Ok(false), "{key} is listed but not applied");
        }
    }

    #[test]
    fn annotations_ui_and_icons() {
        let mut tool = definition();
        apply_property(&mut tool, "read_only", &json!(true)).unwrap();
        apply_property(
            &mut tool,
            "ui",
            &json!({"resourceUri": "ui://a/b.html", "visibility": ["app"]}),
        )
        .unwrap();
        apply_property(
            &mut tool,
            "icons",
            &json!(["https://x/y.png", {"src": "data:image/png;base64,AA", "sizes": "48x48"}]),
        )
        .unwrap();
        apply_property(&mut tool, "timeout", &json!("500ms")).unwrap();
        apply_property(&mut tool, "max_concurrency", &json!(4)).unwrap();
        assert_eq!(tool.annotations.read_only, Some(true));
        assert_eq!(tool.max_concurrency, Some(4));
        assert_eq!(tool.ui.as_ref().unwrap().visibility, vec!["app"]);
        assert_eq!(tool.icons[1].sizes, vec!["48x48"]);
        assert_eq!(tool.timeout, Some(std::time::Duration::from_millis(500)));
    }

    #[test]
    fn init_is_a_command_and_requires_names_programs() {
        let mut tool = definition();
        apply_property(&mut tool, "init", &json!(["python3", "download_model.py"])).unwrap();
        apply_property(&mut tool, "init_timeout", &json!("2m")).unwrap();
        apply_property(&mut tool, "requires", &json!({"commands": ["ffmpeg"]})).unwrap();
        assert_eq!(
            tool.init,
            Some(Init::Command(vec![
                "python3".into(),
                "download_model.py".into()
            ]))
        );
        assert_eq!(
            tool.effective_init_timeout(),
            std::time::Duration::from_mins(2)
        );
        assert_eq!(tool.requires.commands, ["ffmpeg"]);
        let error = apply_property(&mut tool, "init", &json!([])).unwrap_err();
        assert!(error.message.contains("empty"), "{error}");
        let mut untimed = definition();
        untimed.init_timeout = Some(std::time::Duration::from_secs(1));
        assert!(check_init(&untimed).is_err());
    }

    #[test]
    fn task_takes_never_optional_or_required() {
        // A long call may run as an MCP task (docs/tasks.md).
        let mut tool = definition();
        assert_eq!(tool.task, TaskSupport::Never);
        apply_property(&mut tool, "task", &json!("required")).unwrap();
        assert_eq!(tool.task, TaskSupport::Required);
        let wrong = apply_property(&mut tool, "task", &json!("always")).unwrap_err();
        assert_eq!(
            wrong.to_string(),
            "`task`: expected \"never\", \"optional\" or \"required\", got \"always\""
        );
        assert_eq!(tool.task, TaskSupport::Required);
    }

    #[test]
    fn wrong_shapes_say_what_is_expected() {
        let mut tool = definition();
        let error = apply_property(&mut tool, "keywords", &json!("weather")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "`keywords`: expected a list of strings, got a string"
        );
        let error = apply_property(&mut tool, "max_concurrency", &json!(0)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "`max_concurrency`: expected a whole number of at least 1, got 0"
        );
        let error = apply_property(&mut tool, "output", &json!({"type": "array"})).unwrap_err();
        assert!(error.message.contains("must describe an object"));
        assert_eq!(
            apply_property(&mut tool, "colour", &json!("red")),
            Ok(false)
        );
    }
}
