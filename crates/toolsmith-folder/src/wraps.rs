//! Manifests that wrap an upstream tool (docs/gateway.md, "Wrapping an upstream tool"):
//! `upstream = "NAME"` and `tool = "…"` publish that tool of `[upstream.NAME]` under the
//! manifest's own name, description and properties, its parameters renamed, redescribed,
//! defaulted or hidden by `[params.NAME]`. Loading a manifest only notes that it is one
//! (`manifest.rs`); it is bound here, once the upstreams have listed their tools, so its
//! schema is always the upstream's current one. One that cannot be bound is a diagnostic
//! naming the upstream or the tool, and the folder's other tools serve.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use toolsmith_model::{Diagnostic, JsonObject, Severity, SourceFacts, Tool, apply_property, kind};
use toolsmith_upstream::{ParameterChange, RemoteTool, TransformError, Upstream, UpstreamTool};

use crate::keys::{key_location, toml_keys};
use crate::loading::LoadedFile;

/// Keys of a wrapping manifest that are not tool properties.
const WRAP_KEYS: &[&str] = &["upstream", "tool", "replace", "params", "tests"];

/// Tool properties that describe running a tool of the folder's own, not forwarding a call.
const NOT_FOR_WRAPS: &[&str] = &[
    "command",
    "worker",
    "parameters",
    "input_schema",
    "init",
    "init_timeout",
    "permissions",
];

/// What the wrapping manifests of a folder made.
#[derive(Default)]
pub(crate) struct Bound {
    pub(crate) tools: Vec<Arc<dyn Tool>>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// The published names of the upstream tools a `replace = true` wrapping takes the
    /// place of.
    pub(crate) replaced: BTreeSet<String>,
}

/// An upstream that listed its tools.
pub(crate) struct Listed<'a> {
    pub(crate) upstream: &'a Arc<Upstream>,
    pub(crate) tools: &'a [RemoteTool],
}

/// Binds the wrapping manifests among `files` (the ones a load noted and left empty) to
/// the tools of `listed`; `known` names every `[upstream.NAME]` of the folder, running or not.
pub(crate) fn bind(files: &[LoadedFile], listed: &[Listed<'_>], known: &[&str]) -> Bound {
    let mut bound = Bound::default();
    for loaded in files {
        let Some(path) = loaded.wrapping_manifest() else {
            continue;
        };
        let source = match crate::read::read_definition(path) {
            Ok(source) => source,
            Err(error) => {
                bound
                    .diagnostics
                    .push(error.diagnostic(crate::file_location(path)));
                continue;
            }
        };
        let name = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        match parse(path, &source).and_then(|wrap| wrap.bind(listed, known).map_err(|d| vec![d])) {
            Ok((tool, replaced)) => {
                if let Some(replaced) = replaced {
                    bound.replaced.insert(replaced);
                }
                bound.tools.push(Arc::new(tool));
            }
            Err(diagnostics) => bound.diagnostics.extend(
                diagnostics
                    .into_iter()
                    .map(|diagnostic| diagnostic.for_tool(&name)),
            ),
        }
    }
    bound
}

impl LoadedFile {
    /// The path of this file when it is a wrapping manifest: a manifest whose load gave
    /// neither a tool nor a diagnostic, which only `upstream = "NAME"` does.
    fn wrapping_manifest(&self) -> Option<&Path> {
        match &self.file {
            crate::discover::ToolFile::Manifest(path)
                if self.module.tools.is_empty() && self.module.diagnostics.is_empty() =>
            {
                Some(path)
            }
            _ => None,
        }
    }
}

/// A wrapping manifest, read.
#[derive(Debug)]
struct Wrap<'a> {
    path: &'a Path,
    source: &'a str,
    keys: Vec<toolsmith_model::Key>,
    upstream: String,
    tool: String,
    replace: bool,
    /// The tool properties it gives, applied over the upstream's.
    properties: JsonObject,
    params: BTreeMap<String, ParameterChange>,
}

/// Reads a wrapping manifest; every problem found is returned, located in the file.
fn parse<'a>(path: &'a Path, source: &'a str) -> Result<Wrap<'a>, Vec<Diagnostic>> {
    let table = crate::manifest::parse_toml(
        path,
        source,
        "invalid-manifest",
        "fix the TOML syntax; see https://toml.io for the format",
    )
    .map_err(|diagnostic| vec![diagnostic])?;
    let keys = toml_keys(source);
    let locate = |key: &[&str]| key_location(path, source, &keys, key);
    let invalid = |key: &[&str], message: String, help: &str| {
        Diagnostic::error("invalid-manifest", locate(key), message).with_help(help)
    };
    let mut diagnostics = Vec::new();
    let mut wrap = Wrap {
        path,
        source,
        keys: Vec::new(),
        upstream: String::new(),
        tool: String::new(),
        replace: false,
        properties: JsonObject::new(),
        params: BTreeMap::new(),
    };
    for (key, value) in &table {
        match (key.as_str(), value) {
            ("upstream", Value::String(name)) => wrap.upstream.clone_from(name),
            ("tool", Value::String(name)) => wrap.tool.clone_from(name),
            ("upstream" | "tool", other) => diagnostics.push(invalid(
                &[key],
                format!("`{key}` must be a string, got {}", kind(other)),
                "write `upstream = \"github\"` and `tool = \"create_issue\"`",
            )),
            ("replace", Value::Bool(replace)) => wrap.replace = *replace,
            ("replace", other) => diagnostics.push(invalid(
                &[key],
                format!("`replace` must be true or false, got {}", kind(other)),
                "write `replace = true` to serve only this tool in place of the upstream's",
            )),
            ("params", value) => match parse_params(value, &invalid) {
                Ok(params) => wrap.params = params,
                Err(mut errors) => diagnostics.append(&mut errors),
            },
            (key, _) if NOT_FOR_WRAPS.contains(&key) => diagnostics.push(invalid(
                &[key],
                format!("`{key}` does not apply to a tool that wraps an upstream tool"),
                "the upstream runs the tool: remove it (rename, describe, default or hide \
                 parameters with `[params.NAME]`)",
            )),
            (key, value) if toolsmith_model::TOOL_PROPERTIES.contains(&key) => {
                wrap.properties.insert(key.to_owned(), value.clone());
            }
            (key, _) => {
                let known = toolsmith_model::TOOL_PROPERTIES
                    .iter()
                    .chain(WRAP_KEYS)
                    .copied()
                    .filter(|key| !NOT_FOR_WRAPS.contains(key));
                let help = toolsmith_model::names::suggestion(key, known).unwrap_or_else(|| {
                    "see \"Wrapping an upstream tool\" in docs/gateway.md".to_owned()
                });
                diagnostics.push(
                    Diagnostic::error(
                        "unknown-manifest-key",
                        locate(&[key]),
                        format!("unknown manifest key `{key}`"),
                    )
                    .with_help(help),
                );
            }
        }
    }
    if !table.contains_key("tool") {
        diagnostics.push(invalid(
            &["upstream"],
            format!(
                "`upstream = \"{}\"` needs `tool`, the upstream's tool to wrap",
                wrap.upstream
            ),
            "add `tool = \"NAME\"`, the tool's name as the upstream lists it",
        ));
    }
    // `[[tests]]` are the tool's examples, as in any manifest.
    if let Some(tests) = table.get("tests") {
        wrap.properties.insert("examples".to_owned(), tests.clone());
    }
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    wrap.keys = keys;
    Ok(wrap)
}

/// `[params.NAME]` tables: `name`, `hide`, and JSON Schema keywords.
fn parse_params(
    value: &Value,
    invalid: &dyn Fn(&[&str], String, &str) -> Diagnostic,
) -> Result<BTreeMap<String, ParameterChange>, Vec<Diagnostic>> {
    let help = "write `[params.NAME]` tables with `name`, `hide`, `default`, `description` \
                or other JSON Schema keywords";
    let Value::Object(tables) = value else {
        return Err(vec![invalid(
            &["params"],
            format!("`params` must be a table, got {}", kind(value)),
            help,
        )]);
    };
    let mut params = BTreeMap::new();
    let mut diagnostics = Vec::new();
    for (parameter, table) in tables {
        let Value::Object(table) = table else {
            diagnostics.push(invalid(
                &["params", parameter],
                format!("`params.{parameter}` must be a table, got {}", kind(table)),
                help,
            ));
            continue;
        };
        let mut change = ParameterChange::default();
        for (key, value) in table {
            match (key.as_str(), value) {
                ("name", Value::String(name)) => change.name = Some(name.clone()),
                ("hide", Value::Bool(hide)) => change.hide = *hide,
                ("name" | "hide", other) => diagnostics.push(invalid(
                    &["params", parameter, key],
                    format!(
                        "`params.{parameter}.{key}` must be {}, got {}",
                        if key == "name" {
                            "a string"
                        } else {
                            "true or false"
                        },
                        kind(other)
                    ),
                    help,
                )),
                _ => {
                    change.keywords.insert(key.clone(), value.clone());
                }
            }
        }
        params.insert(parameter.clone(), change);
    }
    if diagnostics.is_empty() {
        Ok(params)
    } else {
        Err(diagnostics)
    }
}

impl Wrap<'_> {
    fn locate(&self, key: &[&str]) -> toolsmith_model::SourceLocation {
        key_location(self.path, self.source, &self.keys, key)
    }

    /// The wrapped tool, and the published name of the upstream tool it replaces.
    fn bind(
        self,
        listed: &[Listed<'_>],
        known: &[&str],
    ) -> Result<(UpstreamTool, Option<String>), Diagnostic> {
        let Some(found) = listed
            .iter()
            .find(|listed| listed.upstream.spec().name == self.upstream)
        else {
            if known.contains(&self.upstream.as_str()) {
                // Its own `upstream-unavailable` warning says why; this one says what waits.
                let mut diagnostic = Diagnostic::error(
                    "upstream-unavailable",
                    self.locate(&["upstream"]),
                    format!(
                        "wraps `{}` of upstream `{}`, which is not available",
                        self.tool, self.upstream
                    ),
                )
                .with_help("the tool is served once the upstream starts; see its own warning");
                diagnostic.severity = Severity::Warning;
                return Err(diagnostic);
            }
            let help = toolsmith_model::names::suggestion(&self.upstream, known.iter().copied())
                .unwrap_or_else(|| {
                    format!(
                        "add an `[upstream.{}]` table to toolsmith.toml (docs/gateway.md)",
                        self.upstream
                    )
                });
            return Err(Diagnostic::error(
                "invalid-manifest",
                self.locate(&["upstream"]),
                format!("no upstream `{}` in toolsmith.toml", self.upstream),
            )
            .with_help(help));
        };
        let prefix = &found.upstream.spec().prefix;
        let remote = found
            .tools
            .iter()
            .find(|tool| tool.name == self.tool)
            .or_else(|| {
                // The name it is published under works too.
                let name = self.tool.strip_prefix(prefix.as_str())?;
                found.tools.iter().find(|tool| tool.name == name)
            });
        let Some(remote) = remote else {
            let names = found.tools.iter().map(|tool| tool.name.as_ref());
            let help = toolsmith_model::names::suggestion(&self.tool, names).unwrap_or_else(|| {
                format!(
                    "`toolsmith list` shows the tools of `{}` under the prefix `{prefix}`",
                    self.upstream
                )
            });
            return Err(Diagnostic::error(
                "invalid-manifest",
                self.locate(&["tool"]),
                format!("upstream `{}` lists no tool `{}`", self.upstream, self.tool),
            )
            .with_help(help));
        };
        let location = crate::file_location(self.path);
        let tool = UpstreamTool::new(found.upstream, remote, location.clone());
        let original = tool.definition().name.clone();
        let mut definition = tool.definition().clone();
        definition.name = self
            .path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        for (key, value) in &self.properties {
            if let Err(error) = apply_property(&mut definition, key, value) {
                return Err(Diagnostic::error(
                    "invalid-manifest",
                    self.locate(&[key]),
                    error.to_string(),
                )
                .with_help(format!("see the `{key}` property in docs/tools.md")));
            }
        }
        let (schema, arguments) = toolsmith_upstream::transform(
            &original,
            &definition.input_schema.to_object(),
            &self.params,
        )
        .map_err(|error| self.transform_error(&error))?;
        definition.input_schema = schema.into();
        definition.source = location;
        definition.facts = Some(Box::new(SourceFacts {
            keys: self.keys.clone(),
            ..SourceFacts::default()
        }));
        let replaced = self.replace.then_some(original);
        Ok((tool.wrapped(definition, arguments), replaced))
    }

    fn transform_error(&self, error: &TransformError) -> Diagnostic {
        let (key, help) = match error {
            TransformError::UnknownParameter {
                parameter, known, ..
            } => (
                parameter,
                toolsmith_model::names::suggestion(parameter, known.iter().map(String::as_str))
                    .unwrap_or_else(|| format!("its parameters: {}", known.join(", "))),
            ),
            TransformError::HiddenWithoutDefault { parameter, .. } => (
                parameter,
                format!("add `default = …` to `[params.{parameter}]`, the value always sent"),
            ),
            TransformError::NameTaken { parameter, .. } => {
                (parameter, "pick a name no other parameter has".to_owned())
            }
        };
        Diagnostic::error(
            "invalid-manifest",
            self.locate(&["params", key]),
            error.to_string(),
        )
        .with_help(help)
    }
}
