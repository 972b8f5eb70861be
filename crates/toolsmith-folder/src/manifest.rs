//! Tool manifests (`hello.toml`): Scriptling-compatible metadata for a script with the same
//! stem, or a `command = [...]` for a program in any language (docs/tools.md, "Manifest +
//! script (Scriptling)" and "Command tools").

use std::num::{NonZeroU64, NonZeroUsize};
use std::ops::Range;
use std::path::Path;

use serde_json::Value;
use toolsmith_command::WorkerSettings;
use toolsmith_model::{
    Diagnostic, JsonObject, Key, MANIFEST_TYPES, ParamType, Parameter, SourceFacts, SourceLocation,
    ToolDefinition, apply_property, input_schema, kind, line_column,
};

use crate::keys::{key_location, toml_keys};

/// The key that makes a manifest a wrapping of an upstream tool (read by `wraps`).
pub(crate) const UPSTREAM_KEY: &str = "upstream";

/// JSON Schema keywords a `[[parameters]]` entry may carry besides its own keys.
const SCHEMA_KEYWORDS: &[&str] = &[
    "default",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "items",
    "properties",
    "additionalProperties",
    "examples",
    "title",
];

/// Keys of a manifest that are not tool properties.
const MANIFEST_KEYS: &[&str] = &["parameters", "params", "command", "worker", "tests"];

/// What a manifest describes.
#[derive(Debug)]
pub(crate) struct Manifest {
    pub(crate) definition: ToolDefinition,
    pub(crate) kind: ManifestKind,
    /// `worker = true` or a `[worker]` table: the command keeps running between calls.
    pub(crate) worker: Option<WorkerSettings>,
}

/// How the tool of a manifest runs.
#[derive(Debug)]
pub(crate) enum ManifestKind {
    /// A script with the same stem (`.star` or `.py`), run top to bottom per call.
    Script,
    /// A program, run per call with the arguments on stdin.
    Command(Vec<String>),
    /// `upstream = "NAME"`: a tool of an upstream, wrapped; bound once the upstreams have
    /// listed their tools (`wraps.rs`).
    Upstream,
}

/// Parses a manifest; every problem found is returned, located in the file. With
/// `source_facts`, the definition records where each key is written (for `toolsmith
/// check`); without, the keys are found only to locate a problem.
pub(crate) fn parse(
    path: &Path,
    source: &str,
    source_facts: bool,
) -> Result<Manifest, Vec<Diagnostic>> {
    let table = parse_toml(
        path,
        source,
        "invalid-manifest",
        "fix the TOML syntax; see https://toml.io for the format",
    )
    .map_err(|diagnostic| vec![diagnostic])?;
    if table.contains_key(UPSTREAM_KEY) {
        return Ok(Manifest {
            definition: ToolDefinition::new("", "", JsonObject::new()),
            kind: ManifestKind::Upstream,
            worker: None,
        });
    }
    parse_table(path, source, &table, source_facts)
}

/// [`parse`] of a manifest of the folder's own tool, read into `table`.
fn parse_table(
    path: &Path,
    source: &str,
    table: &JsonObject,
    source_facts: bool,
) -> Result<Manifest, Vec<Diagnostic>> {
    // A second parse of the file, with spans: paid only where needed.
    let keys = std::cell::OnceCell::new();
    let keys = || keys.get_or_init(|| toml_keys(source));
    let locate = |key: &str| key_location(path, source, keys(), &[key]);
    let locate_nth =
        |key: &str, index: usize| key_location(path, source, keys(), &[key, &index.to_string()]);
    let stem = path
        .file_stem()
        .and_then(|stem| stem.to_str())
        .unwrap_or_default();

    let mut diagnostics = Vec::new();
    let mut definition = ToolDefinition::new(stem, "", JsonObject::new());
    definition.source = SourceLocation::file(path);
    let mut parameters = Vec::new();
    let mut command = None;
    let mut worker = None;
    let mut overlays = JsonObject::new();
    let mut tests = Vec::new();
    for (key, value) in table {
        match key.as_str() {
            "parameters" => match parse_parameters(value, &locate_nth) {
                Ok(parsed) => parameters = parsed,
                Err(mut errors) => diagnostics.append(&mut errors),
            },
            "params" => match value {
                Value::Object(map) => overlays.clone_from(map),
                other => diagnostics.push(
                    Diagnostic::error(
                        "invalid-manifest",
                        locate(key),
                        format!("`params` must be a table, got {}", kind(other)),
                    )
                    .with_help("write `[params.NAME]` tables of JSON Schema keywords"),
                ),
            },
            "command" => match parse_command(value) {
                Ok(argv) => command = Some(argv),
                Err(message) => diagnostics.push(
                    Diagnostic::error("invalid-manifest", locate(key), message).with_help(
                        "write the program and its arguments as a list: command = [\"python3\", \"tool.py\"]",
                    ),
                ),
            },
            "worker" => match parse_worker(value) {
                Ok(settings) => worker = settings,
                Err(message) => diagnostics.push(
                    Diagnostic::error("invalid-manifest", locate(key), message).with_help(
                        "write `worker = true`, or a `[worker]` table with `processes`, `max_calls` and `idle_timeout`",
                    ),
                ),
            },
            "tests" => match value {
                Value::Array(cases) => tests.clone_from(cases),
                other => diagnostics.push(Diagnostic::error(
                    "invalid-manifest",
                    locate(key),
                    format!(
                        "`tests` must be an array of tables ([[tests]]), got {}",
                        kind(other)
                    ),
                )),
            },
            _ => match apply_property(&mut definition, key, value) {
                Ok(true) => {}
                Ok(false) => diagnostics.push(unknown_key(key, locate(key))),
                Err(error) => diagnostics.push(
                    Diagnostic::error("invalid-manifest", locate(key), error.to_string())
                        .with_help(format!("see the `{key}` property in docs/tools.md")),
                ),
            },
        }
    }
    // `[[tests]]` and `examples` are the same cases under two names; keep both.
    definition.examples.extend(tests);
    apply_overlays(&overlays, &mut parameters, &mut diagnostics, &locate);
    diagnostics.extend(conflicts(table, &definition, &locate));
    let explicit_schema = table.contains_key("input_schema");
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    if !explicit_schema {
        definition.input_schema = input_schema(&parameters).into();
    }
    if source_facts {
        definition.facts = Some(Box::new(manifest_facts(keys(), &parameters)));
    }
    let kind = command.map_or(ManifestKind::Script, ManifestKind::Command);
    Ok(Manifest {
        definition,
        kind,
        worker,
    })
}

/// Keys that cannot go together: `input_schema` with `parameters`/`params`, `worker`
/// without `command`, and `init_timeout` without `init`.
fn conflicts(
    table: &JsonObject,
    definition: &ToolDefinition,
    locate: &dyn Fn(&str) -> SourceLocation,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    if table.contains_key("input_schema")
        && (table.contains_key("parameters") || table.contains_key("params"))
    {
        diagnostics.push(
            Diagnostic::error(
                "invalid-manifest",
                locate("input_schema"),
                "`input_schema` and `parameters`/`params` both describe the arguments",
            )
            .with_help("keep one: `input_schema` (a whole JSON Schema) or `[[parameters]]`"),
        );
    }
    let worker = table
        .get("worker")
        .is_some_and(|value| value != &Value::Bool(false));
    if worker && !table.contains_key("command") {
        diagnostics.push(
            Diagnostic::error(
                "invalid-manifest",
                locate("worker"),
                "`worker` keeps a `command` running, and this manifest has none",
            )
            .with_help("add `command = [\"python3\", \"worker.py\"]`, or remove `worker`"),
        );
    }
    if let Err(error) = toolsmith_model::check_init(definition) {
        diagnostics.push(
            Diagnostic::error(
                "invalid-manifest",
                locate("init_timeout"),
                error.to_string(),
            )
            .with_help("write `init = [\"python3\", \"download_model.py\"]` next to it"),
        );
    }
    diagnostics
}

/// Where each `[[parameters]]` entry's name is written: its `name = "…"` value.
/// What `toolsmith check` may know of a manifest's source: its keys and parameters as
/// written.
fn manifest_facts(keys: &[Key], parameters: &[Parameter]) -> SourceFacts {
    SourceFacts {
        parameters: manifest_parameters(keys, parameters),
        keys: keys.to_vec(),
        ..SourceFacts::default()
    }
}

fn manifest_parameters(keys: &[Key], parameters: &[Parameter]) -> Vec<(String, Range<usize>)> {
    parameters
        .iter()
        .enumerate()
        .filter_map(|(index, parameter)| {
            let key = keys
                .iter()
                .find(|key| key.is(&["parameters", &index.to_string(), "name"]))?;
            Some((parameter.name.clone(), key.value.clone()))
        })
        .collect()
}

/// Parses TOML text into a JSON object; a syntax error is one diagnostic under `rule`,
/// located at the error, with `help` saying what to do.
///
/// Manifests, `toolsmith.toml` and test files all read TOML this way.
pub fn parse_toml(
    path: &Path,
    source: &str,
    rule: &'static str,
    help: &str,
) -> Result<JsonObject, Diagnostic> {
    let table: toml::Table = toml::from_str(source).map_err(|error| {
        let (line, column) = error
            .span()
            .map_or((1, 1), |span| line_column(source, span.start));
        let location = SourceLocation {
            path: path.to_owned(),
            line,
            column,
        };
        let mut diagnostic =
            Diagnostic::error(rule, location, format!("invalid TOML: {}", error.message()))
                .with_help(help);
        if let Some(span) = error.span() {
            diagnostic = diagnostic.with_span(span);
        }
        diagnostic
    })?;
    let Value::Object(table) = toml_to_json(toml::Value::Table(table)) else {
        unreachable!("a TOML table converts to a JSON object")
    };
    Ok(table)
}

/// `[params.NAME]` tables: JSON Schema keywords merged into each named parameter.
fn apply_overlays(
    overlays: &JsonObject,
    parameters: &mut [Parameter],
    diagnostics: &mut Vec<Diagnostic>,
    locate: &dyn Fn(&str) -> SourceLocation,
) {
    for (name, overlay) in overlays {
        let Some(parameter) = parameters.iter_mut().find(|p| &p.name == name) else {
            diagnostics.push(Diagnostic::error(
                "unknown-parameter",
                locate("params"),
                format!("`params.{name}` names no parameter of this tool"),
            ));
            continue;
        };
        match overlay {
            Value::Object(keywords) => parameter
                .extra
                .extend(keywords.iter().map(|(k, v)| (k.clone(), v.clone()))),
            other => diagnostics.push(
                Diagnostic::error(
                    "invalid-manifest",
                    locate("params"),
                    format!(
                        "`params.{name}` must be a table of JSON Schema keywords, got {}",
                        kind(other)
                    ),
                )
                .with_help(format!(
                    "write `[params.{name}]` with keywords under it, e.g. `minimum = 1`"
                )),
            ),
        }
    }
}

fn unknown_key(key: &str, location: SourceLocation) -> Diagnostic {
    let known = toolsmith_model::TOOL_PROPERTIES
        .iter()
        .chain(MANIFEST_KEYS)
        .copied();
    let help = match toolsmith_model::names::suggestion(key, known) {
        Some(suggestion) => suggestion,
        None => format!(
            "valid keys: {}",
            toolsmith_model::TOOL_PROPERTIES
                .iter()
                .chain(MANIFEST_KEYS)
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Diagnostic::error(
        "unknown-manifest-key",
        location,
        format!("unknown manifest key `{key}`"),
    )
    .with_help(help)
}

fn parse_command(value: &Value) -> Result<Vec<String>, String> {
    let Value::Array(items) = value else {
        return Err(format!(
            "`command` must be a list of strings, got {}",
            kind(value)
        ));
    };
    let argv: Vec<String> = items
        .iter()
        .map(|item| {
            item.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("`command` items must be strings, got {}", kind(item)))
        })
        .collect::<Result<_, _>>()?;
    if argv.is_empty() {
        return Err("`command` is empty".into());
    }
    Ok(argv)
}

/// `worker = true` (default settings), `false` (none) or a `[worker]` table.
fn parse_worker(value: &Value) -> Result<Option<WorkerSettings>, String> {
    let table = match value {
        Value::Bool(false) => return Ok(None),
        Value::Bool(true) => return Ok(Some(WorkerSettings::default())),
        Value::Object(table) => table,
        other => {
            return Err(format!(
                "`worker` must be `true` or a table, got {}",
                kind(other)
            ));
        }
    };
    let mut settings = WorkerSettings::default();
    for (key, value) in table {
        let positive = || {
            value
                .as_u64()
                .filter(|&count| count > 0)
                .ok_or_else(|| format!("`worker.{key}` must be a positive integer, got {value}"))
        };
        match key.as_str() {
            "processes" => {
                let count = usize::try_from(positive()?).unwrap_or(usize::MAX);
                settings.processes = NonZeroUsize::new(count).unwrap_or(NonZeroUsize::MIN);
            }
            "max_calls" => settings.max_calls = NonZeroU64::new(positive()?),
            "idle_timeout" => {
                let timeout = toolsmith_model::duration::parse(value)
                    .map_err(|error| format!("`worker.idle_timeout`: {error}"))?;
                settings.idle_timeout = Some(timeout);
            }
            other => {
                return Err(format!(
                    "unknown key `worker.{other}`; valid keys: processes, max_calls, idle_timeout"
                ));
            }
        }
    }
    Ok(Some(settings))
}

fn parse_parameters(
    value: &Value,
    locate: &dyn Fn(&str, usize) -> SourceLocation,
) -> Result<Vec<Parameter>, Vec<Diagnostic>> {
    let Value::Array(entries) = value else {
        return Err(vec![Diagnostic::error(
            "invalid-manifest",
            locate("parameters", 0),
            "`parameters` must be an array of tables ([[parameters]])",
        )]);
    };
    let mut parameters = Vec::new();
    let mut diagnostics = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        match parse_parameter(entry) {
            Ok(parameter) => parameters.push(parameter),
            Err((message, help)) => {
                diagnostics.push(
                    Diagnostic::error("invalid-parameter", locate("parameters", index), message)
                        .with_help(help),
                );
            }
        }
    }
    if diagnostics.is_empty() {
        Ok(parameters)
    } else {
        Err(diagnostics)
    }
}

type ParameterError = (String, String);

fn parse_parameter(entry: &Value) -> Result<Parameter, ParameterError> {
    let Value::Object(table) = entry else {
        return Err((
            "a parameter must be a table".into(),
            "write each one as a [[parameters]] table".into(),
        ));
    };
    let name = table.get("name").and_then(Value::as_str).ok_or_else(|| {
        (
            "a parameter has no `name`".to_owned(),
            "add `name = \"...\"`".to_owned(),
        )
    })?;
    let type_name = table
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("string");
    let ty = ParamType::from_manifest(type_name).ok_or_else(|| {
        let valid = format!("valid types: {}", MANIFEST_TYPES.join(", "));
        let help =
            match toolsmith_model::names::suggestion(type_name, MANIFEST_TYPES.iter().copied()) {
                Some(suggestion) => format!("{suggestion} {valid}"),
                None => valid,
            };
        (
            format!("parameter `{name}` has unknown type `{type_name}`"),
            help,
        )
    })?;
    let mut parameter = Parameter::new(name, ty);
    parameter.required = false;
    for (key, value) in table {
        match key.as_str() {
            "name" | "type" => {}
            "description" => {
                parameter.description = Some(
                    value
                        .as_str()
                        .ok_or_else(|| {
                            (
                                format!("parameter `{name}`: `description` must be a string"),
                                String::new(),
                            )
                        })?
                        .to_owned(),
                );
            }
            "required" => {
                parameter.required = value.as_bool().ok_or_else(|| {
                    (
                        format!("parameter `{name}`: `required` must be true or false"),
                        String::new(),
                    )
                })?;
            }
            "default" => parameter.default = Some(value.clone()),
            keyword if SCHEMA_KEYWORDS.contains(&keyword) => {
                parameter.extra.insert(key.clone(), value.clone());
            }
            other => {
                let help = toolsmith_model::names::suggestion(
                    other,
                    ["name", "type", "description", "required"]
                        .into_iter()
                        .chain(SCHEMA_KEYWORDS.iter().copied()),
                )
                .unwrap_or_else(|| format!("parameter keys: name, type, description, required, or a JSON Schema keyword ({})", SCHEMA_KEYWORDS.join(", ")));
                return Err((
                    format!("parameter `{name}` has unknown key `{other}`"),
                    help,
                ));
            }
        }
    }
    Ok(parameter)
}

/// Converts TOML to JSON (dates become strings), as manifests, `toolsmith.toml` and test
/// files are read.
pub fn toml_to_json(value: toml::Value) -> Value {
    match value {
        toml::Value::String(text) => Value::String(text),
        toml::Value::Integer(number) => Value::from(number),
        toml::Value::Float(number) => {
            serde_json::Number::from_f64(number).map_or(Value::Null, Value::Number)
        }
        toml::Value::Boolean(flag) => Value::Bool(flag),
        toml::Value::Datetime(date) => Value::String(date.to_string()),
        toml::Value::Array(items) => Value::Array(items.into_iter().map(toml_to_json).collect()),
        toml::Value::Table(table) => Value::Object(
            table
                .into_iter()
                .map(|(k, v)| (k, toml_to_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse_text(source: &str) -> Result<Manifest, Vec<Diagnostic>> {
        parse(Path::new("tools/hello.toml"), source, true)
    }

    // `worker = true` or a `[worker]` table on a command manifest.
    #[test]
    fn worker_is_true_or_a_table_and_needs_a_command() {
        let manifest =
            parse_text("description = \"x\"\ncommand = [\"python3\", \"w.py\"]\nworker = true\n")
                .unwrap();
        assert_eq!(manifest.worker, Some(WorkerSettings::default()));
        let manifest = parse_text(
            "description = \"x\"\ncommand = [\"node\", \"w.js\"]\n[worker]\nprocesses = 4\nmax_calls = 100\nidle_timeout = \"5m\"\n",
        )
        .unwrap();
        let settings = manifest.worker.unwrap();
        assert_eq!(settings.processes.get(), 4);
        assert_eq!(settings.max_calls.map(std::num::NonZeroU64::get), Some(100));
        assert_eq!(
            settings.idle_timeout,
            Some(std::time::Duration::from_mins(5))
        );
        let errors = parse_text("description = \"x\"\nworker = true\n").unwrap_err();
        assert!(
            errors[0].message.contains("has none"),
            "{}",
            errors[0].message
        );
        let errors = parse_text("description = \"x\"\ncommand = [\"w\"]\n[worker]\nprocess = 2\n")
            .unwrap_err();
        assert!(
            errors[0].message.contains("valid keys: processes"),
            "{}",
            errors[0].message
        );
        let errors =
            parse_text("description = \"x\"\ncommand = [\"w\"]\n[worker]\nprocesses = 0\n")
                .unwrap_err();
        assert!(
            errors[0].message.contains("positive integer"),
            "{}",
            errors[0].message
        );
    }

    #[test]
    fn scriptling_manifest_builds_schema() {
        let manifest = parse_text(
            "description = \"Greet a person by name\"\nkeywords = [\"hello\"]\n\n[[parameters]]\nname = \"name\"\ntype = \"string\"\ndescription = \"Name\"\nrequired = true\n\n[[parameters]]\nname = \"times\"\ntype = \"int\"\ndescription = \"Times\"\n",
        )
        .unwrap();
        assert!(matches!(manifest.kind, ManifestKind::Script));
        let tool = manifest.definition.to_mcp();
        assert_eq!(tool["name"], "hello");
        assert_eq!(
            tool["inputSchema"],
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Name"},
                    "times": {"type": "integer", "description": "Times"}
                },
                "required": ["name"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn explicit_input_schema_is_published_as_written() {
        let manifest = parse_text(
            "description = \"x\"\ncommand = [\"true\"]\n[input_schema]\ntype = \"object\"\nproperties = { when = { type = \"string\", format = \"date\" } }\n",
        )
        .unwrap();
        assert_eq!(
            manifest.definition.input_schema.object()["properties"]["when"]["format"],
            "date"
        );

        let errors = parse_text(
            "description = \"x\"\n[[parameters]]\nname = \"a\"\ntype = \"string\"\n[input_schema]\ntype = \"object\"\n",
        )
        .unwrap_err();
        assert_eq!(
            errors[0].message,
            "`input_schema` and `parameters`/`params` both describe the arguments"
        );
    }

    #[test]
    fn unknown_type_lists_valid_types() {
        let errors =
            parse_text("description = \"x\"\n[[parameters]]\nname = \"when\"\ntype = \"date\"\n")
                .unwrap_err();
        assert_eq!(
            errors[0].message,
            "parameter `when` has unknown type `date`"
        );
        assert!(errors[0].help.as_deref().unwrap().contains("array:number"));
        assert_eq!(errors[0].rule, "invalid-parameter");
    }

    #[test]
    fn unknown_key_is_located_with_a_suggestion() {
        let errors = parse_text("description = \"x\"\nkeywrods = [\"a\"]\n").unwrap_err();
        assert_eq!(errors[0].message, "unknown manifest key `keywrods`");
        assert_eq!((errors[0].location.line, errors[0].location.column), (2, 1));
        assert_eq!(errors[0].help.as_deref(), Some("did you mean `keywords`?"));
    }

    #[test]
    fn a_params_entry_that_is_not_a_table_is_an_error() {
        let errors = parse_text(
            "description = \"x\"\nparams = { count = \"positive\" }\n[[parameters]]\nname = \"count\"\ntype = \"integer\"\n",
        )
        .unwrap_err();
        assert_eq!(
            errors[0].message,
            "`params.count` must be a table of JSON Schema keywords, got a string"
        );
        assert_eq!(errors[0].rule, "invalid-manifest");
    }

    #[test]
    fn toml_syntax_error_has_position() {
        let errors = parse_text("description = \"x\"\nkeywords = [\n").unwrap_err();
        assert_eq!(errors[0].rule, "invalid-manifest");
        assert!(errors[0].location.line >= 2, "{:?}", errors[0].location);
    }

    #[test]
    fn command_and_extras() {
        let manifest = parse_text(
            "description = \"Log\"\ncommand = [\"git\", \"log\", \"-n\", \"{count}\"]\ntimeout = \"2s\"\n[[parameters]]\nname = \"count\"\ntype = \"integer\"\ndefault = 5\nminimum = 1\n",
        )
        .unwrap();
        let ManifestKind::Command(argv) = manifest.kind else {
            panic!("expected a command")
        };
        assert_eq!(argv, ["git", "log", "-n", "{count}"]);
        assert_eq!(
            manifest.definition.input_schema.object()["properties"]["count"],
            json!({"type": "integer", "default": 5, "minimum": 1})
        );
        assert_eq!(
            manifest.definition.timeout,
            Some(std::time::Duration::from_secs(2))
        );
    }
}
