//! `[upstream.NAME]` of a folder's `toolsmith.toml` (docs/gateway.md): other MCP servers
//! whose tools the folder serves under the upstream's prefix. Each upstream is started when
//! the folder loads, all of them at once; one that does not start is a warning with its
//! stderr's tail, its tools are listed as unavailable from the last time it listed them,
//! and the folder's other tools still load. A reload keeps the upstreams whose
//! tables did not change running, and lists their tools again. Their prompts (under the
//! prefix), resources and resource templates (under their own URIs) join the folder's own.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use toolsmith_model::{Diagnostic, Prompt, Prompts, Resources, Severity, SourceLocation, Tool};
use toolsmith_upstream::{
    Listing, RemoteTool, Upstream, UpstreamContent, UpstreamError, UpstreamSpec, UpstreamTool,
    UpstreamTransport,
};

use crate::config::{CONFIG_FILE, FolderConfig};

/// What the upstreams of a folder loaded.
#[derive(Default)]
pub(crate) struct Loaded {
    pub(crate) tools: Vec<Arc<dyn Tool>>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Every upstream of the table, running or not, for the next reload to reuse.
    pub(crate) upstreams: Vec<Arc<Upstream>>,
    /// The tools of each upstream that listed them, by its index in `upstreams`.
    listed: Vec<(usize, Vec<RemoteTool>)>,
    /// Their prompts, resources and templates, in the order of the table.
    pub(crate) content: Vec<UpstreamContent>,
}

impl Loaded {
    /// The tools the wrapping manifests among `files` make of the upstreams' (`wraps.rs`).
    pub(crate) fn wrap(&self, files: &[crate::loading::LoadedFile]) -> crate::wraps::Bound {
        let listed: Vec<_> = self
            .listed
            .iter()
            .map(|(index, tools)| crate::wraps::Listed {
                upstream: &self.upstreams[*index],
                tools,
            })
            .collect();
        let known: Vec<&str> = self
            .upstreams
            .iter()
            .map(|upstream| upstream.spec().name.as_str())
            .collect();
        crate::wraps::bind(files, &listed, &known)
    }

    /// The folder's own resources and the upstreams' together. A URI (or URI template) that
    /// two of them list is listed once: the folder's own wins, then the upstream that comes
    /// first in `toolsmith.toml` (docs/gateway.md).
    pub(crate) fn join_resources(&self, own: Resources) -> Resources {
        if self.content.is_empty() {
            return own;
        }
        let mut resources = own.list().to_vec();
        let mut templates = own.templates().to_vec();
        for content in &self.content {
            resources.extend(content.resources.iter().cloned());
            templates.extend(content.templates.iter().cloned());
        }
        Resources::new(resources, templates)
    }

    /// The folder's own prompts and the upstreams' together; a name that two of them have
    /// is a load error naming both, and the later one is skipped.
    pub(crate) fn join_prompts(
        &mut self,
        own: Prompts,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Prompts {
        if self.content.is_empty() {
            return own;
        }
        let mut prompts: Vec<Prompt> = own.list().to_vec();
        for content in &mut self.content {
            for prompt in std::mem::take(&mut content.prompts) {
                if let Some(first) = prompts.iter().find(|p| p.name == prompt.name) {
                    diagnostics.push(
                        Diagnostic::error(
                            "duplicate-prompt",
                            prompt.source.clone(),
                            format!(
                                "prompt `{}` of upstream `{}` is already defined in {}; this one is skipped",
                                prompt.name,
                                prompt.remote.as_ref().map_or("", |remote| remote.owner.as_str()),
                                first.source
                            ),
                        )
                        .with_help("give the upstream a `prefix` of its own, or rename the folder's prompt"),
                    );
                    continue;
                }
                prompts.push(prompt);
            }
        }
        Prompts::new(prompts)
    }
}

/// Starts (or reuses from `previous`) each upstream `config` names, and lists its tools.
pub(crate) fn load(root: &Path, config: &FolderConfig, previous: &[Arc<Upstream>]) -> Loaded {
    let mut loaded = Loaded::default();
    let Some(tables) = config.raw.get("upstream") else {
        return loaded;
    };
    let path = root.join(CONFIG_FILE);
    let source = crate::read::read_definition(&path).unwrap_or_default();
    let keys = crate::keys::toml_keys(&source);
    let Value::Object(tables) = tables else {
        loaded.diagnostics.push(warning(
            SourceLocation::file(&path),
            "`upstream` must be a table of `[upstream.NAME]` tables".to_owned(),
            "write `[upstream.github]` with `command = [...]` or `url = \"...\"`; see docs/gateway.md",
        ));
        return loaded;
    };
    let mut started = Vec::new();
    for (name, table) in tables {
        let location = crate::keys::key_location(&path, &source, &keys, &["upstream", name]);
        match UpstreamSpec::parse(name, table, root) {
            Ok(spec) => {
                let upstream = previous
                    .iter()
                    .find(|upstream| *upstream.spec() == spec)
                    .map_or_else(|| Arc::new(Upstream::new(spec)), Arc::clone);
                started.push((upstream, location));
            }
            Err(message) => loaded.diagnostics.push(warning(
                location,
                message,
                "see docs/gateway.md for the keys of `[upstream.NAME]`",
            )),
        }
    }
    // Every upstream starts at once: the folder waits for the slowest, not for their sum.
    let listed: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = started
            .iter()
            .map(|(upstream, _)| scope.spawn(|| list(root, upstream)))
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap_or_else(|_| Ok(Default::default())))
            .collect()
    });
    for ((upstream, location), listed) in started.into_iter().zip(listed) {
        match listed {
            Ok((tools, listing)) => {
                loaded.tools.extend(
                    UpstreamTool::all(&upstream, &tools, &location)
                        .into_iter()
                        .map(|tool| Arc::new(tool) as Arc<dyn Tool>),
                );
                loaded.listed.push((loaded.upstreams.len(), tools));
                let mut content = UpstreamContent::new(&upstream, &listing, &location);
                for problem in std::mem::take(&mut content.problems) {
                    loaded.diagnostics.push(warning(
                        location.clone(),
                        format!("upstream `{}` lists {problem}", upstream.spec().name),
                        "Toolsmith serves resource templates of RFC 6570 level 1 (`{name}` variables)",
                    ));
                }
                loaded.content.push(content);
            }
            Err(error) => {
                // Its tools as it listed them last, served as unavailable: a call of one
                // answers why and tries to start it again.
                let spec = upstream.spec();
                let cached = read_cache(&cache_path(root, spec), spec)
                    .map(|(tools, _)| tools)
                    .unwrap_or_default();
                let why = format!("upstream `{}` {}", spec.name, error.message);
                loaded.tools.extend(
                    UpstreamTool::all(&upstream, &cached, &location)
                        .into_iter()
                        .map(|tool| Arc::new(tool.unavailable(&why)) as Arc<dyn Tool>),
                );
                let served = if cached.is_empty() {
                    "its tools are not served until it starts".to_owned()
                } else {
                    format!(
                        "its {} tool{} are listed from the last time it ran, and calls to them fail until it starts",
                        cached.len(),
                        if cached.len() == 1 { "" } else { "s" }
                    )
                };
                let mut diagnostic =
                    Diagnostic::error("upstream-unavailable", location, format!("{error}"))
                        .with_help(format!(
                            "{served}; check `{}` by hand, or run `{}`",
                            spec.target(),
                            lint_command(spec)
                        ))
                        .for_tools_prefixed(&spec.prefix);
                diagnostic.severity = Severity::Warning;
                loaded.diagnostics.push(diagnostic);
            }
        }
        loaded.upstreams.push(upstream);
    }
    loaded
}

/// The tools, prompts and resources `upstream` lists, each time written to
/// `.toolsmith/upstreams/NAME.json` in the folder (docs/gateway.md): what a `lazy` one that
/// does not run yet is listed from, without starting it (without that file it is started
/// now, once, to make it), and what the tools of one that does not start are listed from,
/// as unavailable.
fn list(root: &Path, upstream: &Upstream) -> Result<(Vec<RemoteTool>, Listing), UpstreamError> {
    let spec = upstream.spec();
    let cache = cache_path(root, spec);
    if spec.lazy
        && !upstream.is_running()
        && let Some(listed) = read_cache(&cache, spec)
    {
        return Ok(listed);
    }
    let tools = upstream.tools()?;
    let listing = upstream.listing()?;
    let mut record = serde_json::json!({ "target": spec.target(), "tools": tools });
    // Only what there is, so the file of an upstream with tools alone stays as it was.
    if listing != Listing::default() {
        record["listing"] = serde_json::to_value(&listing).unwrap_or_default();
    }
    let record = record.to_string();
    // Written only when it changed, and at best effort: without the file a lazy
    // upstream is started at the next load instead, and one that does not start then
    // has no tools listed.
    if std::fs::read_to_string(&cache).ok().as_deref() != Some(record.as_str())
        && let Some(parent) = cache.parent()
    {
        let _ = std::fs::create_dir_all(parent).and_then(|()| std::fs::write(&cache, record));
    }
    Ok((tools, listing))
}

/// Where the tools `spec`'s upstream listed last are kept.
fn cache_path(root: &Path, spec: &UpstreamSpec) -> std::path::PathBuf {
    root.join(".toolsmith")
        .join("upstreams")
        .join(format!("{}.json", spec.name))
}

/// What `cache` recorded for `spec`, if it was written for the same command or URL.
fn read_cache(cache: &Path, spec: &UpstreamSpec) -> Option<(Vec<RemoteTool>, Listing)> {
    let mut record: Value = serde_json::from_str(&std::fs::read_to_string(cache).ok()?).ok()?;
    if record["target"].as_str() != Some(spec.target().as_str()) {
        return None;
    }
    let tools = serde_json::from_value(record["tools"].take()).ok()?;
    let listing = serde_json::from_value(record["listing"].take()).unwrap_or_default();
    Some((tools, listing))
}

/// The upstreams of `config` (the folder `root`'s) whose table says `forward_caller_token =
/// true`, each with where that key is written: what `toolsmith check` warns about
/// (`token-passthrough`, docs/gateway.md).
pub fn token_passthrough(root: &Path, config: &FolderConfig) -> Vec<(String, SourceLocation)> {
    let Some(Value::Object(tables)) = config.raw.get("upstream") else {
        return Vec::new();
    };
    let path = root.join(CONFIG_FILE);
    let source = crate::read::read_definition(&path).unwrap_or_default();
    let keys = crate::keys::toml_keys(&source);
    tables
        .iter()
        .filter(|(_, table)| table.get("forward_caller_token") == Some(&Value::Bool(true)))
        .map(|(name, _)| {
            let key = ["upstream", name.as_str(), "forward_caller_token"];
            (
                name.clone(),
                crate::keys::key_location(&path, &source, &keys, &key),
            )
        })
        .collect()
}

fn warning(location: SourceLocation, message: String, help: &str) -> Diagnostic {
    let mut diagnostic = Diagnostic::error("invalid-config", location, message).with_help(help);
    diagnostic.severity = Severity::Warning;
    diagnostic
}

/// The `toolsmith check` that lints `spec`'s server on its own (docs/gateway.md).
fn lint_command(spec: &UpstreamSpec) -> String {
    match &spec.transport {
        UpstreamTransport::Stdio { command, .. } => {
            format!("toolsmith check --upstream -- {}", command.join(" "))
        }
        UpstreamTransport::Http { url, .. } => format!("toolsmith check --url {url}"),
    }
}
