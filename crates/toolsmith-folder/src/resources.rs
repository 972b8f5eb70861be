//! `resources/**` of a tools folder as MCP resources (docs/serve.md, "Prompts, resources
//! and completion").
//!
//! Every file under `resources/` is a resource, read once when the folder loads:
//!
//! - **URI**: `resource://<server>/<path>` by default, where `<server>` is `[server] name`
//!   of `toolsmith.toml` (else the folder's name) made URI-safe, and `<path>` the file's
//!   path under `resources/`, percent-encoded. Files under `resources/ui/` are MCP Apps
//!   documents: `ui://<server>/<path under ui/>`, and HTML there is served as
//!   `text/html;profile=mcp-app`.
//! - **Settings** come from a sidecar next to the file (`data.json` → `data.json.toml`) or
//!   from `[resources."<path>"]` in `toolsmith.toml` (the sidecar wins key by key): `uri`
//!   (or `uri_template`), `name` (default: the path under `resources/`), `title`,
//!   `description`, `mime_type` (default: by extension), `values` (completion values per
//!   template variable), `meta` (extra `_meta`) and `[ui]` (`csp`, `permissions`,
//!   `domain`, `prefers_border`, published as `_meta.ui`).
//! - **Text or blob**: text MIME types (and unknown extensions holding UTF-8) are served as
//!   text, everything else as a base64 blob.
//! - **Templates**: a resource whose URI contains `{variable}` (RFC 6570 level 1) — set in
//!   the sidecar, or from a path such as `resources/users/{id}.json` — is a resource
//!   template; its text may use `{{variable}}`, filled from the URI read (escaped for JSON
//!   or HTML when the MIME type is one of those).
//!
//! ```toml
//! # resources/static-text.txt.toml
//! uri = "test://static-text"
//! name = "static-text"
//! description = "A static text resource for testing"
//! ```

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

use base64::Engine as _;
use serde_json::{Value, json};
use toolsmith_model::template::{Token, scan};
use toolsmith_model::{
    Diagnostic, Escape, JsonObject, MCP_APP_MIME_TYPE, Resource, ResourceBody, ResourceInfo,
    ResourceTemplate, Resources, Severity, SourceLocation, UriTemplate, kind, line_column,
};

use crate::config::FolderConfig;
use crate::manifest::toml_to_json;
use crate::mime;

/// The folder of a tools folder that holds resources.
pub const RESOURCES_FOLDER: &str = "resources";

/// The subfolder of `resources/` that holds MCP Apps documents (`ui://` URIs).
pub const UI_FOLDER: &str = "ui";

/// Files larger than this are not served (they would sit in memory and in every read).
pub const MAX_RESOURCE_BYTES: u64 = 16 << 20;

const KEYS: &[&str] = &[
    "uri",
    "uri_template",
    "name",
    "title",
    "description",
    "mime_type",
    "values",
    "meta",
    "ui",
];
const UI_KEYS: &[&str] = &["csp", "permissions", "domain", "prefers_border"];
const CSP_KEYS: &[&str] = &[
    "connect_domains",
    "resource_domains",
    "frame_domains",
    "base_uri_domains",
];
const UI_PERMISSIONS: &[&str] = &["camera", "microphone", "geolocation", "clipboard_write"];

/// Loads `root/resources/**`; never fails as a whole.
pub(crate) fn load(root: &Path, config: &FolderConfig) -> (Resources, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let base = root.join(RESOURCES_FOLDER);
    let mut found = Vec::new();
    if base.is_dir() {
        match crate::Walk::new(&base).files() {
            Ok(paths) => found = paths,
            Err(error) => diagnostics.push(Diagnostic::error(
                "unreadable-file",
                SourceLocation::file(&base),
                format!("cannot read the resources folder: {error}"),
            )),
        }
    }
    // `/`-separated paths relative to the resources folder, sorted as text.
    let mut files: Vec<String> = found
        .iter()
        .filter_map(|path| path.strip_prefix(&base).ok())
        .map(|relative| {
            relative
                .components()
                .map(|part| part.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/")
        })
        .collect();
    files.sort();
    let present: HashSet<&str> = files.iter().map(String::as_str).collect();
    let is_sidecar = |file: &str| {
        file.strip_suffix(".toml")
            .is_some_and(|target| present.contains(target))
    };
    let overrides = config_overrides(config, &present, &mut diagnostics);

    let loader = Loader {
        server: server_segment(root, config),
    };
    let mut resources = Vec::new();
    let mut templates = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for file in files.iter().filter(|file| !is_sidecar(file)) {
        let path = base.join(file);
        let sidecar = format!("{file}.toml");
        let mut settings = overrides.get(file.as_str()).cloned().unwrap_or_default();
        let mut location = SourceLocation::file(&path);
        if present.contains(sidecar.as_str()) {
            let sidecar_path = base.join(&sidecar);
            match read_sidecar(&sidecar_path) {
                Ok(table) => settings.extend(table),
                Err(diagnostic) => {
                    diagnostics.push(diagnostic);
                    continue;
                }
            }
            location = SourceLocation::file(sidecar_path);
        }
        match loader.load(file, &path, &settings, &location, &mut diagnostics) {
            Some(Loaded::Static(resource)) => {
                if seen.insert(resource.uri.clone()) {
                    resources.push(resource);
                } else {
                    diagnostics.push(duplicate(&location, &resource.uri));
                }
            }
            Some(Loaded::Template(template)) => {
                let uri = template.uri_template.as_str().to_owned();
                if seen.insert(uri.clone()) {
                    templates.push(template);
                } else {
                    diagnostics.push(duplicate(&location, &uri));
                }
            }
            None => {}
        }
    }
    (Resources::new(resources, templates), diagnostics)
}

fn duplicate(location: &SourceLocation, uri: &str) -> Diagnostic {
    Diagnostic::error(
        "duplicate-resource",
        location.clone(),
        format!("another resource already has the URI `{uri}`; this one is skipped"),
    )
    .with_help("give one of them a different `uri` in its sidecar")
}

/// `[resources."path"]` tables of `toolsmith.toml`, by path.
fn config_overrides(
    config: &FolderConfig,
    present: &HashSet<&str>,
    diagnostics: &mut Vec<Diagnostic>,
) -> BTreeMap<String, JsonObject> {
    let mut overrides = BTreeMap::new();
    let Some(section) = config.raw.get("resources") else {
        return overrides;
    };
    let Value::Object(section) = section else {
        return overrides;
    };
    for (file, table) in section {
        let location = config.locate(&["resources", file]);
        let Value::Object(table) = table else {
            diagnostics.push(
                Diagnostic::error(
                    "invalid-resource",
                    location,
                    format!(
                        "`[resources]` entry `{file}` must be a table, got {}",
                        kind(table)
                    ),
                )
                .with_help(format!(
                    "write `[resources.\"{file}\"]` with `uri`, `description`, …"
                )),
            );
            continue;
        };
        if !present.contains(file.as_str()) {
            let mut warning = Diagnostic::error(
                "unknown-resource",
                location.clone(),
                format!("`[resources.\"{file}\"]` names no file under `resources/`"),
            );
            if let Some(suggestion) =
                toolsmith_model::names::suggestion(file, present.iter().copied())
            {
                warning = warning.with_help(suggestion);
            }
            warning.severity = Severity::Warning;
            diagnostics.push(warning);
            continue;
        }
        overrides.insert(file.clone(), table.clone());
    }
    overrides
}

fn read_sidecar(path: &Path) -> Result<JsonObject, Diagnostic> {
    let source = crate::read::read_definition(path)
        .map_err(|error| error.diagnostic(SourceLocation::file(path)))?;
    let table: toml::Table = toml::from_str(&source).map_err(|error| {
        let (line, column) = error
            .span()
            .map_or((1, 1), |span| line_column(&source, span.start));
        let location = SourceLocation {
            path: path.to_owned(),
            line,
            column,
        };
        Diagnostic::error(
            "invalid-resource",
            location,
            format!("invalid TOML: {}", error.message()),
        )
        .with_help("fix the TOML syntax; the resource is skipped meanwhile")
    })?;
    match toml_to_json(toml::Value::Table(table)) {
        Value::Object(object) => Ok(object),
        _ => unreachable!("a TOML table converts to a JSON object"),
    }
}

/// The server part of default URIs: lowercase letters, digits, `-` and `.`.
fn server_segment(root: &Path, config: &FolderConfig) -> String {
    let name = config.name.clone().unwrap_or_else(|| {
        root.canonicalize()
            .ok()
            .and_then(|path| path.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "toolsmith".into())
    });
    let mut segment = String::new();
    for c in name.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() || c == '.' {
            segment.push(c);
        } else if !segment.ends_with('-') {
            segment.push('-');
        }
    }
    let segment = segment.trim_matches('-');
    if segment.is_empty() {
        "toolsmith".into()
    } else {
        segment.to_owned()
    }
}

/// Percent-encodes a path for a URI, keeping `/` and template braces.
pub(crate) fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/{}!$&'()*+,;=:@".contains(&byte) {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

enum Loaded {
    Static(Resource),
    Template(ResourceTemplate),
}

struct Loader {
    server: String,
}

/// One resource file being loaded: its settings and the problems found so far.
struct Entry<'a> {
    file: &'a str,
    path: &'a Path,
    settings: &'a JsonObject,
    location: &'a SourceLocation,
    /// Errors: the resource is skipped when there is any.
    errors: Vec<Diagnostic>,
    /// Warnings: reported, the resource still loads.
    warnings: Vec<Diagnostic>,
}

/// What every resource has, template or not.
struct Common {
    uri: String,
    info: ResourceInfo,
    bytes: Vec<u8>,
    /// The contents as text, when they are served as text.
    text: Option<String>,
}

impl Loader {
    /// Builds one resource; problems are pushed to `diagnostics` (`None` when it is
    /// skipped).
    fn load(
        &self,
        file: &str,
        path: &Path,
        settings: &JsonObject,
        location: &SourceLocation,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Option<Loaded> {
        let mut entry = Entry {
            file,
            path,
            settings,
            location,
            errors: Vec::new(),
            warnings: Vec::new(),
        };
        entry.check_keys();
        let common = entry.common(&self.server);
        let loaded = if UriTemplate::is_template(&common.uri) {
            entry.template(common).map(Loaded::Template)
        } else {
            Some(Loaded::Static(entry.resource(common)))
        };
        diagnostics.append(&mut entry.warnings);
        diagnostics.append(&mut entry.errors);
        loaded.filter(|_| entry.errors.is_empty())
    }
}

impl Entry<'_> {
    fn error(&self, message: String) -> Diagnostic {
        Diagnostic::error("invalid-resource", self.location.clone(), message)
    }

    fn warn(&mut self, mut diagnostic: Diagnostic) {
        diagnostic.severity = Severity::Warning;
        self.warnings.push(diagnostic);
    }

    /// A string setting.
    fn text(&mut self, key: &str) -> Option<String> {
        match self.settings.get(key)? {
            Value::String(text) => Some(text.clone()),
            other => {
                let error = self.error(format!("`{key}` must be a string, got {}", kind(other)));
                self.errors.push(error);
                None
            }
        }
    }

    fn check_keys(&mut self) {
        for key in self.settings.keys() {
            if KEYS.contains(&key.as_str()) {
                continue;
            }
            let help = toolsmith_model::names::suggestion(key, KEYS.iter().copied())
                .unwrap_or_else(|| format!("resource settings: {}", KEYS.join(", ")));
            let warning = Diagnostic::error(
                "unknown-resource-key",
                self.location.clone(),
                format!("unknown resource setting `{key}`"),
            )
            .with_help(help);
            self.warn(warning);
        }
    }

    /// URI, names, MIME type, `_meta` and contents.
    fn common(&mut self, server: &str) -> Common {
        let ui_path = self
            .file
            .strip_prefix(UI_FOLDER)
            .and_then(|rest| rest.strip_prefix('/'));
        let uri = self.text("uri");
        let uri_template = self.text("uri_template");
        if uri.is_some() && uri_template.is_some() {
            let error = self.error("set `uri` or `uri_template`, not both".into());
            self.errors.push(error);
        }
        let uri = uri.or(uri_template).unwrap_or_else(|| match ui_path {
            Some(rest) => format!("ui://{server}/{}", encode_path(rest)),
            None => format!("resource://{server}/{}", encode_path(self.file)),
        });
        let mut meta = match self.settings.get("meta") {
            None => JsonObject::new(),
            Some(Value::Object(meta)) => meta.clone(),
            Some(other) => {
                let error = self.error(format!("`meta` must be a table, got {}", kind(other)));
                self.errors.push(error);
                JsonObject::new()
            }
        };
        if let Some(ui) = self.settings.get("ui") {
            match ui_meta(ui) {
                Ok(ui) => {
                    meta.insert("ui".into(), Value::Object(ui));
                }
                Err(message) => {
                    let error = self.error(message);
                    self.errors.push(error);
                }
            }
        }
        let bytes = read_limited(self.path).unwrap_or_else(|message| {
            let location = SourceLocation::file(self.path);
            self.errors
                .push(Diagnostic::error("unreadable-file", location, message));
            Vec::new()
        });
        let utf8 = std::str::from_utf8(&bytes)
            .ok()
            .filter(|text| !text.contains('\0'));
        let is_html = matches!(
            Path::new(self.file).extension().and_then(|e| e.to_str()),
            Some("html" | "htm")
        );
        let declared_mime = self.text("mime_type");
        let mime_type = declared_mime.unwrap_or_else(|| {
            match (
                ui_path.is_some() && is_html,
                mime::for_path(self.path),
                utf8,
            ) {
                (true, _, _) => MCP_APP_MIME_TYPE.to_owned(),
                (false, Some(known), _) => known.to_owned(),
                (false, None, Some(_)) => "text/plain".to_owned(),
                (false, None, None) => "application/octet-stream".to_owned(),
            }
        });
        let text = utf8
            .filter(|_| mime::is_text(&mime_type))
            .map(str::to_owned);
        let info = ResourceInfo {
            name: self.text("name").unwrap_or_else(|| self.file.to_owned()),
            title: self.text("title"),
            description: self.text("description"),
            mime_type: Some(mime_type),
            meta,
            annotations: None,
            icons: None,
            source: self.location.clone(),
            remote: None,
        };
        Common {
            uri,
            info,
            bytes,
            text,
        }
    }

    fn resource(&mut self, common: Common) -> Resource {
        if self.settings.contains_key("values") {
            let warning = self
                .error(format!(
                    "`values` completes template variables, and `{}` has none",
                    common.uri
                ))
                .with_help(
                    "remove `values`, or give the resource a URI template such as `data://items/{id}`",
                );
            self.warn(warning);
        }
        let size = u64::try_from(common.bytes.len()).ok();
        let body = match common.text {
            Some(text) => ResourceBody::Text(text),
            None => {
                ResourceBody::Blob(base64::engine::general_purpose::STANDARD.encode(&common.bytes))
            }
        };
        Resource {
            uri: common.uri,
            info: common.info,
            body,
            size,
        }
    }

    fn template(&mut self, common: Common) -> Option<ResourceTemplate> {
        let uri = &common.uri;
        let uri_template = match UriTemplate::parse(uri) {
            Ok(template) => template,
            Err(problem) => {
                let error = self.error(problem.to_string()).with_help(
                    "use `{name}` variables separated by literal text, e.g. `test://template/{id}/data`",
                );
                self.errors.push(error);
                return None;
            }
        };
        let Some(text) = common.text else {
            let error = self.error(format!(
                "resource template `{uri}` must be a text file (its `{{{{variable}}}}` placeholders are filled per read), and `{}` is {}",
                self.file,
                common.info.mime_type.as_deref().unwrap_or("binary"),
            ));
            self.errors.push(error);
            return None;
        };
        let variables: Vec<String> = uri_template.variables().map(str::to_owned).collect();
        let tokens = match scan(&text) {
            Ok(tokens) => tokens,
            Err(problem) => {
                let error = at_text(self.path, &text, problem.span.start, problem.message);
                self.errors.push(error);
                return None;
            }
        };
        for token in &tokens {
            if let Token::Placeholder { name, span } = token
                && !variables.contains(name)
            {
                let error = at_text(
                    self.path,
                    &text,
                    span.start,
                    format!("`{{{{{name}}}}}` names no variable of the URI template `{uri}`"),
                )
                .with_help(format!("variables: {}", variables.join(", ")));
                self.errors.push(error);
            }
        }
        let values = self.completion_values(&variables);
        Some(ResourceTemplate {
            uri_template,
            escape: Escape::for_mime_type(common.info.mime_type.as_deref()),
            info: common.info,
            text: toolsmith_model::template::TextTemplate::from_tokens(tokens),
            values,
        })
    }

    /// `values = { id = ["1", "2"] }`: completion values per template variable.
    fn completion_values(&mut self, variables: &[String]) -> BTreeMap<String, Vec<String>> {
        let mut values = BTreeMap::new();
        let Some(value) = self.settings.get("values") else {
            return values;
        };
        let Value::Object(table) = value else {
            let error = self.error(format!(
                "`values` must be a table from variable to a list of values, got {}",
                kind(value)
            ));
            self.errors.push(error);
            return values;
        };
        for (variable, list) in table {
            if !variables.contains(variable) {
                let error = self
                    .error(format!(
                        "`values.{variable}` names no variable of the URI template"
                    ))
                    .with_help(format!("variables: {}", variables.join(", ")));
                self.errors.push(error);
                continue;
            }
            let Value::Array(items) = list else {
                let error = self.error(format!(
                    "`values.{variable}` must be a list, got {}",
                    kind(list)
                ));
                self.errors.push(error);
                continue;
            };
            let strings = items
                .iter()
                .map(|item| match item {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
                .collect();
            values.insert(variable.clone(), strings);
        }
        values
    }
}

fn at_text(path: &Path, text: &str, offset: usize, message: String) -> Diagnostic {
    let (line, column) = line_column(text, offset);
    Diagnostic::error(
        "invalid-resource",
        SourceLocation {
            path: path.to_owned(),
            line,
            column,
        },
        message,
    )
}

/// The `[ui]` table of a sidecar as MCP Apps `_meta.ui`: `csp` (`connect_domains`,
/// `resource_domains`, `frame_domains`, `base_uri_domains`), `permissions` (a list of
/// `camera`, `microphone`, `geolocation`, `clipboard_write`), `domain` and
/// `prefers_border`, with keys in camelCase as hosts read them.
fn ui_meta(value: &Value) -> Result<JsonObject, String> {
    let Value::Object(table) = value else {
        return Err(format!("`ui` must be a table, got {}", kind(value)));
    };
    let mut ui = JsonObject::new();
    for (key, value) in table {
        match key.as_str() {
            "csp" => {
                let Value::Object(csp) = value else {
                    return Err(format!("`ui.csp` must be a table, got {}", kind(value)));
                };
                let mut out = JsonObject::new();
                for (directive, domains) in csp {
                    let snake = snake_case(directive);
                    if !CSP_KEYS.contains(&snake.as_str()) {
                        return Err(format!(
                            "unknown `ui.csp` key `{directive}`; expected one of {}",
                            CSP_KEYS.join(", ")
                        ));
                    }
                    if !domains
                        .as_array()
                        .is_some_and(|items| items.iter().all(Value::is_string))
                    {
                        return Err(format!("`ui.csp.{directive}` must be a list of origins"));
                    }
                    out.insert(camel_case(&snake), domains.clone());
                }
                ui.insert("csp".into(), Value::Object(out));
            }
            "permissions" => {
                let names: Vec<String> = match value {
                    Value::Array(items) => items
                        .iter()
                        .map(|item| item.as_str().map(snake_case))
                        .collect::<Option<_>>()
                        .ok_or("`ui.permissions` must be a list of names")?,
                    Value::Object(table) => table.keys().map(|name| snake_case(name)).collect(),
                    other => {
                        return Err(format!(
                            "`ui.permissions` must be a list such as [\"camera\"], got {}",
                            kind(other)
                        ));
                    }
                };
                let mut out = JsonObject::new();
                for name in names {
                    if !UI_PERMISSIONS.contains(&name.as_str()) {
                        return Err(format!(
                            "unknown `ui.permissions` entry `{name}`; expected one of {}",
                            UI_PERMISSIONS.join(", ")
                        ));
                    }
                    out.insert(camel_case(&name), json!({}));
                }
                ui.insert("permissions".into(), Value::Object(out));
            }
            "domain" => {
                let domain = value.as_str().ok_or("`ui.domain` must be a string")?;
                ui.insert("domain".into(), json!(domain));
            }
            "prefers_border" | "prefersBorder" => {
                let flag = value
                    .as_bool()
                    .ok_or("`ui.prefers_border` must be true or false")?;
                ui.insert("prefersBorder".into(), json!(flag));
            }
            other => {
                return Err(format!(
                    "unknown `ui` key `{other}`; expected one of {}",
                    UI_KEYS.join(", ")
                ));
            }
        }
    }
    Ok(ui)
}

fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn camel_case(name: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn read_limited(path: &Path) -> Result<Vec<u8>, String> {
    crate::read::read_bytes(path, MAX_RESOURCE_BYTES).map_err(|error| match error {
        crate::read::ReadError::TooLarge { size, .. } => format!(
            "the file is {} MiB; resources are limited to {} MiB",
            size >> 20,
            MAX_RESOURCE_BYTES >> 20
        ),
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_uris_are_portable() {
        let config = FolderConfig {
            name: Some("My Server_2".into()),
            ..FolderConfig::default()
        };
        assert_eq!(server_segment(Path::new("."), &config), "my-server-2");
        assert_eq!(encode_path("docs/a b/{id}.json"), "docs/a%20b/{id}.json");
    }

    #[test]
    fn ui_table_becomes_camel_case_meta() {
        let ui = ui_meta(&json!({
            "csp": {"connect_domains": ["https://api.example.com"], "resourceDomains": ["https://cdn.example.com"]},
            "permissions": ["camera", "clipboard_write"],
            "prefers_border": true
        }))
        .unwrap();
        assert_eq!(
            Value::Object(ui),
            json!({
                "csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://cdn.example.com"]},
                "permissions": {"camera": {}, "clipboardWrite": {}},
                "prefersBorder": true
            })
        );
        let error = ui_meta(&json!({"csp": {"script_domains": []}})).unwrap_err();
        assert!(error.contains("connect_domains"), "{error}");
    }
}
