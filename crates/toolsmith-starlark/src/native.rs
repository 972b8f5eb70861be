//! Native tool files (docs/tools.md, "Starlark tools"): evaluate the file once, then turn each
//! `mcp.tool(...)` registration into a [`ToolDefinition`] — name and parameters from the
//! function, types from its annotations, descriptions from its docstring, everything else
//! from the keywords through [`apply_property`] — and a [`StarlarkTool`] that calls the
//! frozen function.

use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use toolsmith_model::names::suggestion;
use toolsmith_model::{
    CallContext, Code, Diagnostic, Init, JsonObject, LazyInit, ParamType, Parameter, SourceFacts,
    SourceLocation, StopReason, Tool, ToolDefinition, ToolFailure, ToolReturn, apply_property,
    check_init, input_schema, wrapped_output_schema,
};

use crate::docstring;
use crate::engine::{
    self, Annotation, Form, Function, FunctionSyntax, Invocation, ParamKind, Program, Registered,
    Registration, RunError, RunErrorKind, SourceError,
};
use crate::init::FileInits;
use crate::{LoadSettings, LoadedModule};

/// A tool defined in a native `.star` file.
pub(crate) struct StarlarkTool {
    definition: ToolDefinition,
    function: Function,
    /// Parameter names the function declares.
    declared: Vec<String>,
    /// `T | None` parameters without a default: passed as `None` when omitted.
    fill_none: Vec<String>,
    /// The function takes `**kwargs`.
    accepts_extra: bool,
    /// `init = setup`, shared with the file's other tools naming `setup`.
    init: Option<Arc<LazyInit>>,
    /// The tools folder, which the tool's relative paths mean (shared by a file's tools).
    folder: Arc<Path>,
}

impl Tool for StarlarkTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn call(
        &self,
        arguments: &JsonObject,
        context: &CallContext,
    ) -> Result<ToolReturn, ToolFailure> {
        let init_value = self.init.as_ref().and_then(|init| init.value());
        let invocation = Invocation {
            arguments,
            fill_none: &self.fill_none,
            declared: &self.declared,
            accepts_extra: self.accepts_extra,
            context,
            definition: &self.definition,
            folder: &self.folder,
            init_value: init_value.as_deref(),
        };
        engine::call_function(&self.function, &invocation)
            .map_err(|error| failure(&error, &self.definition))
    }

    fn init(&self) -> Option<&Arc<LazyInit>> {
        self.init.as_ref()
    }
}

/// The [`ToolFailure`] for an evaluation that did not return.
pub(crate) fn failure(error: &RunError, definition: &ToolDefinition) -> ToolFailure {
    match error.kind {
        RunErrorKind::Stopped(StopReason::Timeout) => ToolFailure::TimedOut {
            after: definition.effective_timeout(),
        },
        RunErrorKind::Stopped(StopReason::Cancelled) => ToolFailure::Cancelled,
        RunErrorKind::Script => ToolFailure::failed(error.describe()),
    }
}

/// The diagnostic for a file that does not parse.
pub(crate) fn source_diagnostic(path: &Path, error: SourceError) -> Diagnostic {
    let mut diagnostic =
        located(path, error.rule, error.line, error.column, error.span).with_message(error.message);
    diagnostic.help = error.help;
    diagnostic
}

fn located(
    path: &Path,
    rule: &'static str,
    line: u32,
    column: u32,
    span: Option<Range<usize>>,
) -> Diagnostic {
    let location = SourceLocation {
        path: path.to_owned(),
        line,
        column,
    };
    let diagnostic = Diagnostic::error(rule, location, String::new());
    match span {
        Some(span) => diagnostic.with_span(span),
        None => diagnostic,
    }
}

trait WithMessage {
    fn with_message(self, message: impl Into<String>) -> Self;
}

impl WithMessage for Diagnostic {
    fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }
}

/// Loads a native tool file: what loaded, plus what did not.
pub(crate) fn load(path: &Path, source: &str, settings: &LoadSettings) -> LoadedModule {
    let mut loaded = LoadedModule::default();
    let program = match engine::parse(path, source, Form::Native) {
        Ok(program) => program,
        Err(error) => {
            // Which tools the file defines is not known: a call of any name that is not
            // served may be one of them, and says so.
            let diagnostic = source_diagnostic(path, error).for_tools_prefixed("");
            loaded.diagnostics.push(diagnostic);
            return loaded;
        }
    };
    // An undefined name in an annotation (`w: Widget`) fails the whole evaluation. Each
    // time it does, that annotation is blanked and the file evaluated again, so only the
    // tool it belongs to is lost (reported when it is built below, from the untouched
    // `program`). Each round blanks one more annotation, so this ends.
    let deadline = Instant::now() + settings.load_timeout;
    let mut evaluated: Option<(String, Program)> = None;
    let registrations = loop {
        let (text, run) = evaluated
            .as_ref()
            .map_or((source, &program), |(text, run)| (text.as_str(), run));
        let left = deadline.saturating_duration_since(Instant::now());
        match engine::load_native(run, left) {
            Ok(registrations) => break registrations,
            Err(error) => {
                let retry = blank_failed_annotation(&program, &error, text).and_then(|blanked| {
                    let reparsed = engine::parse(path, &blanked, Form::Native).ok()?;
                    Some((blanked, reparsed))
                });
                if retry.is_some() {
                    evaluated = retry;
                    continue;
                }
                let diagnostic = annotation_failure(path, &program, &error)
                    .unwrap_or_else(|| load_failure(path, &error, settings));
                let diagnostic = for_registered(diagnostic, &program, source);
                loaded.diagnostics.push(diagnostic);
                return loaded;
            }
        }
    };
    let mut names = HashSet::new();
    let mut inits = FileInits::new(&settings.base_dir);
    for Registered {
        registration,
        function,
        init,
    } in registrations
    {
        let at = |rule| {
            located(
                path,
                rule,
                registration.line,
                registration.column,
                registration.span.clone(),
            )
        };
        if let Some(problem) = &registration.problem {
            loaded.diagnostics.push(
                at("invalid-tool")
                    .with_message(problem.clone())
                    .with_help("define the tool with `def name(...):` at the top level, then `mcp.tool(name, ...)`"),
            );
            continue;
        }
        let Some(function) = function else {
            continue;
        };
        match build(path, &program, &registration, function, init, &mut inits) {
            Ok(mut tool) => {
                tool.definition = settings.restricted(tool.definition);
                // As the folder's builder would set it, without copying the definition.
                tool.definition.folder = toolsmith_model::subfolders(&settings.base_dir, path);
                if names.insert(tool.definition.name.clone()) {
                    loaded.tools.push(Arc::new(tool));
                } else {
                    loaded.diagnostics.push(
                        at("duplicate-tool-name")
                            .with_message(format!(
                                "tool `{}` is registered twice in this file",
                                tool.definition.name
                            ))
                            .with_help(
                                "register each function once, or give one of them `name=\"...\"`",
                            ),
                    );
                }
            }
            Err(diagnostics) => {
                // A call of the tool's name says why it is missing.
                let name = registration
                    .keywords
                    .iter()
                    .find_map(|(key, value)| match (key.as_str(), value) {
                        ("name", Ok(Value::String(name))) => Some(name.clone()),
                        _ => None,
                    })
                    .unwrap_or_else(|| registration.function_name.clone());
                loaded.diagnostics.extend(
                    diagnostics
                        .into_iter()
                        .map(|diagnostic| diagnostic.for_tool(name.clone())),
                );
            }
        }
    }
    loaded
}

/// An error inside an annotation (`w: Widget` where `Widget` is not defined) is reported
/// as the unknown annotation it is, not as a generic load error.
fn annotation_failure(path: &Path, program: &Program, error: &RunError) -> Option<Diagnostic> {
    let at = error.location.as_ref()?;
    program.functions().iter().find_map(|function| {
        let params = function
            .params
            .iter()
            .filter_map(|(name, annotation)| Some((Some(name), annotation.as_ref()?)));
        let returns = function.returns.iter().map(|annotation| (None, annotation));
        params.chain(returns).find_map(|(name, annotation)| {
            annotation.span.contains(&at.span.start).then(|| {
                let message = match name {
                    Some(name) => format!(
                        "unknown type annotation `{}` on parameter `{name}`",
                        annotation.text
                    ),
                    None => format!("unknown return annotation `{}`", annotation.text),
                };
                located(
                    path,
                    "unknown-annotation",
                    annotation.line,
                    annotation.column,
                    Some(annotation.span.clone()),
                )
                .with_message(message)
                .with_help(ANNOTATION_HELP)
            })
        })
    })
}

/// `text` with the annotation `error` points into replaced by blanks, together with its
/// `:` or `->` (newlines kept, so every position stays where it was); `None` when the
/// error is not in an annotation, or the annotation is already blank or cannot be blanked
/// (a return annotation over several lines).
fn blank_failed_annotation(program: &Program, error: &RunError, text: &str) -> Option<String> {
    let at = error.location.as_ref()?.span.start;
    let (annotation, returns) = program.functions().iter().find_map(|function| {
        let params = function
            .params
            .iter()
            .filter_map(|(_, annotation)| Some((annotation.as_ref()?, false)));
        let returns = function.returns.iter().map(|annotation| (annotation, true));
        params
            .chain(returns)
            .find(|(annotation, _)| annotation.span.contains(&at))
    })?;
    let before = text.get(..annotation.span.start)?.trim_end();
    let marker = if returns { "->" } else { ":" };
    let start = before.strip_suffix(marker)?.len();
    let blanked = text.get(start..annotation.span.end)?;
    if returns && blanked.contains('\n') {
        return None;
    }
    let spaces: String = blanked
        .chars()
        .map(|c| if matches!(c, '\n' | '\r') { c } else { ' ' })
        .collect();
    let mut result = text.to_owned();
    result.replace_range(start..annotation.span.end, &spaces);
    Some(result)
}

fn load_failure(path: &Path, error: &RunError, settings: &LoadSettings) -> Diagnostic {
    let (line, column, span) = error.location.as_ref().map_or((1, 1, None), |at| {
        (at.line, at.column, Some(at.span.clone()))
    });
    match error.kind {
        RunErrorKind::Stopped(_) => located(path, "load-timeout", line, column, span)
            .with_message(format!(
                "evaluating the file took longer than {}",
                toolsmith_model::duration::format(settings.load_timeout)
            ))
            .with_help("the top level runs once at load; move long work into the tool functions"),
        RunErrorKind::Script => {
            let mut message = error.message.clone();
            if let Some(frame) = &error.frame {
                message = format!("{message} ({frame})");
            }
            located(path, "load-error", line, column, span)
                .with_message(message)
                .with_help("the top level runs once at load and must not fail; fix the error above")
        }
    }
}

/// `diagnostic`, for a file that failed as it ran, naming the tools its `mcp.tool(...)`
/// calls register (the function's name, or a `name="..."` literal): a call of one of them
/// says the tool failed to load instead of suggesting another tool, which steered a model
/// from `weather_get` to `weather_set`. When the calls name no tool
/// the file can be seen to define, any name may be one of its tools.
fn for_registered(diagnostic: Diagnostic, program: &Program, source: &str) -> Diagnostic {
    let names: Vec<String> = program
        .facts()
        .registrations
        .iter()
        .filter_map(|registration| {
            let named = registration
                .keys
                .iter()
                .find(|key| key.path.len() == 1 && key.path[0] == "name")
                .map(|key| source.get(key.value.clone()).and_then(string_literal));
            match named {
                // A name computed at run time: not known.
                Some(named) => named,
                None => registration.function.clone(),
            }
        })
        .collect();
    if names.is_empty() {
        diagnostic.for_tools_prefixed("")
    } else {
        diagnostic.for_tools(names)
    }
}

/// The text of a plain string literal (`"name"`, `'name'`, no escapes).
fn string_literal(written: &str) -> Option<String> {
    let written = written.trim();
    let quote = written
        .chars()
        .next()
        .filter(|quote| matches!(quote, '"' | '\''))?;
    let inner = written.strip_prefix(quote)?.strip_suffix(quote)?;
    (!inner.is_empty() && !inner.contains(['\\', '"', '\''])).then(|| inner.to_owned())
}

/// Turns one registration into a tool, or the diagnostics that prevent it.
fn build(
    path: &Path,
    program: &Program,
    registration: &Registration,
    function: Function,
    init_function: Option<Function>,
    inits: &mut FileInits,
) -> Result<StarlarkTool, Vec<Diagnostic>> {
    let mut diagnostics = Vec::new();
    let at_call = |rule| {
        located(
            path,
            rule,
            registration.line,
            registration.column,
            registration.span.clone(),
        )
    };
    let syntax = program
        .functions()
        .iter()
        .rev()
        .find(|function| function.name == registration.function_name);
    let doc = docstring::parse(
        syntax
            .and_then(|function| function.docstring.as_deref())
            .unwrap_or_default(),
    );

    let mut signature = signature(path, registration, syntax, &doc, &mut diagnostics);
    let overlay = registration
        .keywords
        .iter()
        .find(|(key, _)| key == "params");
    if let Some((_, overlay)) = overlay {
        apply_params_overlay(
            overlay,
            &mut signature.parameters,
            &mut diagnostics,
            &at_call,
        );
    }

    let mut schema = input_schema(&signature.parameters);
    if signature.accepts_extra {
        schema.insert("additionalProperties".into(), Value::Bool(true));
    }
    let mut definition = ToolDefinition::new(
        registration.function_name.clone(),
        doc.description.clone(),
        schema,
    );
    let (line, column) = syntax.map_or((registration.line, registration.column), |function| {
        (function.line, function.column)
    });
    definition.source = SourceLocation {
        path: path.to_owned(),
        line,
        column,
    };
    definition.facts = Some(Box::new(source_facts(path, program, registration, syntax)));
    if let Some(returns) = syntax.and_then(|function| function.returns.as_ref()) {
        match output_schema(&returns.text) {
            Ok(schema) => definition.output_schema = schema.map(Into::into),
            Err(()) => diagnostics.push(
                at_annotation(path, returns)
                    .with_message(format!("unknown return annotation `{}`", returns.text))
                    .with_help(ANNOTATION_HELP),
            ),
        }
    }
    apply_keywords(&mut definition, registration, &mut diagnostics, &at_call);
    let mut init = None;
    if let Some(registered) = &registration.init {
        match (&registered.problem, init_function) {
            (Some(problem), _) => diagnostics.push(
                at_call("invalid-tool-property")
                    .with_message(problem.clone())
                    .with_help("define `def setup():` at the top level of the file, then `mcp.tool(f, init = setup)`"),
            ),
            (None, Some(function)) => {
                definition.init = Some(Init::Function(registered.function_name.clone()));
                init = Some(inits.named(&registered.function_name, function));
            }
            (None, None) => {}
        }
    }
    if let Err(error) = check_init(&definition) {
        diagnostics.push(
            at_call("invalid-tool-property")
                .with_message(error.to_string())
                .with_help("for example `mcp.tool(f, init = setup, init_timeout = \"2m\")`"),
        );
    }

    if diagnostics.is_empty() {
        Ok(StarlarkTool {
            definition,
            function,
            declared: signature.declared,
            fill_none: signature.fill_none,
            accepts_extra: signature.accepts_extra,
            init,
            folder: Arc::clone(inits.folder()),
        })
    } else {
        Err(diagnostics)
    }
}

/// What `toolsmith check` may know of the tool's source: where its `def`, parameters,
/// docstring and `mcp.tool` keywords are written, and the calls it makes.
fn source_facts(
    path: &Path,
    program: &Program,
    registration: &Registration,
    syntax: Option<&FunctionSyntax>,
) -> SourceFacts {
    let file = program.facts();
    let on_line = || {
        file.registrations
            .iter()
            .filter(|written| written.line == registration.line)
    };
    let written = on_line()
        .find(|written| written.function.as_ref() == Some(&registration.function_name))
        .or_else(|| on_line().next());
    let function = syntax.map(|function| &function.facts);
    SourceFacts {
        name: function.map(|function| function.name.clone()),
        docstring: function.and_then(|function| function.docstring.clone()),
        parameters: function
            .map(|function| function.parameters.clone())
            .unwrap_or_default(),
        keys: written
            .map(|written| written.keys.clone())
            .unwrap_or_default(),
        code: Some(Code {
            path: path.to_owned(),
            calls: function
                .map(|function| function.calls.clone())
                .unwrap_or_default(),
            file_calls: file.calls.clone(),
            strings: file.strings.clone(),
        }),
    }
}

/// What a function's parameters publish and how a call fills them.
struct Signature {
    parameters: Vec<Parameter>,
    declared: Vec<String>,
    fill_none: Vec<String>,
    accepts_extra: bool,
}

fn signature(
    path: &Path,
    registration: &Registration,
    syntax: Option<&FunctionSyntax>,
    doc: &docstring::Docstring,
    diagnostics: &mut Vec<Diagnostic>,
) -> Signature {
    let mut signature = Signature {
        parameters: Vec::new(),
        declared: Vec::new(),
        fill_none: Vec::new(),
        accepts_extra: false,
    };
    for param in &registration.params {
        match param.kind {
            ParamKind::Args => continue,
            ParamKind::Kwargs => {
                signature.accepts_extra = true;
                continue;
            }
            ParamKind::Named => {}
        }
        let annotation = syntax.and_then(|function| annotation_of(function, &param.name));
        let parsed = annotation.map_or(Some((ParamType::Any, false)), |annotation| {
            ParamType::from_annotation(&annotation.text)
        });
        let Some((ty, nullable)) = parsed else {
            let annotation = annotation.expect("only a present annotation can fail to parse");
            diagnostics.push(
                at_annotation(path, annotation)
                    .with_message(format!(
                        "unknown type annotation `{}` on parameter `{}`",
                        annotation.text, param.name
                    ))
                    .with_help(ANNOTATION_HELP),
            );
            continue;
        };
        let mut parameter = Parameter::new(param.name.clone(), ty);
        parameter.description = doc.args.get(&param.name).cloned();
        match &param.default {
            Some(Ok(default)) => {
                parameter.required = false;
                // `= None` means "optional"; publishing `"default": null` next to a
                // `"type"` would contradict it.
                if !default.is_null() {
                    parameter.default = Some(default.clone());
                }
            }
            Some(Err(_)) => parameter.required = false,
            None if nullable => {
                parameter.required = false;
                signature.fill_none.push(param.name.clone());
            }
            None => {}
        }
        signature.declared.push(param.name.clone());
        signature.parameters.push(parameter);
    }
    signature
}

/// Applies every `mcp.tool` keyword but `params` through the shared property parser.
fn apply_keywords(
    definition: &mut ToolDefinition,
    registration: &Registration,
    diagnostics: &mut Vec<Diagnostic>,
    at_call: &dyn Fn(&'static str) -> Diagnostic,
) {
    for (key, value) in &registration.keywords {
        if key == "params" {
            continue;
        }
        let value = match value {
            Ok(value) => value,
            Err(error) => {
                diagnostics.push(
                    at_call("invalid-tool-property")
                        .with_message(format!("`{key}` cannot be converted to JSON: {error}"))
                        .with_help(format!("for example `{}`", example(key))),
                );
                continue;
            }
        };
        match apply_property(definition, key, value) {
            Ok(true) => {}
            Ok(false) => {
                let known = toolsmith_model::TOOL_PROPERTIES
                    .iter()
                    .copied()
                    .chain(["params"]);
                let help = suggestion(key, known).unwrap_or_else(|| {
                    format!(
                        "`mcp.tool` takes: params, {}",
                        toolsmith_model::TOOL_PROPERTIES.join(", ")
                    )
                });
                diagnostics.push(
                    at_call("unknown-tool-property")
                        .with_message(format!("unknown keyword `{key}` in `mcp.tool`"))
                        .with_help(help),
                );
            }
            Err(error) => diagnostics.push(
                at_call("invalid-tool-property")
                    .with_message(error.to_string())
                    .with_help(format!("for example `{}`", example(key))),
            ),
        }
    }
}

fn at_annotation(path: &Path, annotation: &Annotation) -> Diagnostic {
    located(
        path,
        "unknown-annotation",
        annotation.line,
        annotation.column,
        Some(annotation.span.clone()),
    )
}

const ANNOTATION_HELP: &str =
    "use str, int, float, bool, list[T], dict, T | None or typing.Any (or no annotation)";

fn annotation_of<'a>(function: &'a FunctionSyntax, name: &str) -> Option<&'a Annotation> {
    function
        .params
        .iter()
        .find(|(param, _)| param == name)
        .and_then(|(_, annotation)| annotation.as_ref())
}

/// The output schema a return annotation publishes; `Err` for an unknown annotation.
fn output_schema(annotation: &str) -> Result<Option<JsonObject>, ()> {
    if annotation.trim() == "None" {
        return Ok(None);
    }
    let (ty, nullable) = ParamType::from_annotation(annotation).ok_or(())?;
    // A result that may be `None` has no structured content to promise.
    if nullable {
        return Ok(None);
    }
    Ok(match ty {
        ParamType::String | ParamType::Any => None,
        ParamType::Object => Some(ty.to_schema()),
        other => Some(wrapped_output_schema(&other)),
    })
}

/// `params={"days": {"minimum": 1}}`: JSON Schema keywords merged into each property.
fn apply_params_overlay(
    overlay: &Result<Value, String>,
    parameters: &mut [Parameter],
    diagnostics: &mut Vec<Diagnostic>,
    at_call: &dyn Fn(&'static str) -> Diagnostic,
) {
    let help = "for example `params={\"days\": {\"minimum\": 1, \"maximum\": 7}}`";
    let Ok(Value::Object(overlay)) = overlay else {
        diagnostics.push(
            at_call("invalid-tool-property")
                .with_message("`params` must be a dict from parameter name to JSON Schema keywords")
                .with_help(help),
        );
        return;
    };
    for (name, keywords) in overlay {
        let Some(parameter) = parameters.iter_mut().find(|p| &p.name == name) else {
            let names: Vec<&str> = parameters.iter().map(|p| p.name.as_str()).collect();
            let help = suggestion(name, names.iter().copied())
                .unwrap_or_else(|| format!("the parameters are: {}", names.join(", ")));
            diagnostics.push(
                at_call("unknown-parameter")
                    .with_message(format!("`params` names unknown parameter `{name}`"))
                    .with_help(help),
            );
            continue;
        };
        let Value::Object(keywords) = keywords else {
            diagnostics.push(
                at_call("invalid-tool-property")
                    .with_message(format!(
                        "`params[\"{name}\"]` must be a dict of JSON Schema keywords"
                    ))
                    .with_help(help),
            );
            continue;
        };
        for (key, value) in keywords {
            parameter.extra.insert(key.clone(), value.clone());
        }
    }
}

/// An example of each `mcp.tool` keyword, for help lines.
fn example(key: &str) -> &'static str {
    match key {
        "name" => "name=\"forecast_get\"",
        "title" => "title=\"Weather forecast\"",
        "description" => "description=\"Get the weather forecast for a city.\"",
        "keywords" => "keywords=[\"weather\", \"rain\"]",
        "tags" => "tags=[\"weather\"]",
        "discoverable" => "discoverable=True",
        "read_only" => "read_only=True",
        "destructive" => "destructive=False",
        "idempotent" => "idempotent=True",
        "open_world" => "open_world=True",
        "output" => {
            "output={\"type\": \"object\", \"properties\": {\"summary\": {\"type\": \"string\"}}}"
        }
        "timeout" => "timeout=2 or timeout=\"500ms\"",
        "max_concurrency" => "max_concurrency=4",
        "options" => "options={\"units\": \"metric\"}",
        "overrides" => "overrides={\"http\": {\"timeout\": 5}}",
        "requires" => "requires={\"env\": [\"API_KEY\"], \"commands\": [\"ffmpeg\"]}",
        "init" => "init=setup",
        "init_timeout" => "init_timeout=\"2m\"",
        "permissions" => "permissions={\"net\": [\"api.example.com\"]}",
        "ui" => "ui={\"resource_uri\": \"ui://forecast/index.html\"}",
        "icons" => "icons=[\"https://example.com/icon.png\"]",
        "examples" => "examples=[{\"args\": {\"city\": \"Oslo\"}, \"expect\": {}}]",
        "text_format" => "text_format=\"toon\"",
        "task" => "task=\"optional\"",
        "meta" => "meta={\"vendor/key\": \"value\"}",
        _ => "mcp.tool(my_function, title=\"...\")",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn return_annotations_publish_output_schemas() {
        assert_eq!(
            output_schema("dict").unwrap(),
            Some(json!({"type": "object"}).as_object().cloned().unwrap())
        );
        assert_eq!(output_schema("str").unwrap(), None);
        assert_eq!(output_schema("None").unwrap(), None);
        assert_eq!(output_schema("dict | None").unwrap(), None);
        assert_eq!(output_schema("typing.Any").unwrap(), None);
        let wrapped = output_schema("list[int]").unwrap().unwrap();
        assert_eq!(
            wrapped["properties"]["result"],
            json!({"type": "array", "items": {"type": "integer"}})
        );
        assert!(output_schema("Widget").is_err());
    }
}
