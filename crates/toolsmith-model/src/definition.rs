//! What a tool is, independent of the form it was written in: the MCP-facing definition
//! (name, description, schemas, annotations, icons) plus the Toolsmith-only properties
//! (keywords, discovery, timeout, permissions, …) that later stages act on.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::facts::SourceFacts;
use crate::held_schema::Schema;

pub use crate::json::JsonObject;

/// The timeout a tool gets when it declares none and its folder sets no `[defaults] timeout`
/// (docs/tools.md, "Tool properties").
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long an init may run when its tool sets no `init_timeout`.
pub const DEFAULT_INIT_TIMEOUT: Duration = Duration::from_mins(1);

/// Everything known about one tool, whatever form it was written in.
///
/// [`ToolDefinition::to_mcp`] renders the MCP `Tool` object exactly as `tools/list`
/// publishes it (MCP spec, server/tools).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// Unique tool name (the function name, or the manifest's file stem).
    pub name: String,
    /// Human-readable display name.
    pub title: Option<String>,
    /// What the model reads to pick the tool.
    pub description: String,
    /// JSON Schema (2020-12) of the arguments object, held as its text and shared, not
    /// copied, by every copy of the definition, its validator and its published rmcp
    /// `Tool` (a folder of thousands of tools held each schema four times, each as a tree
    /// of maps ten times the size of its text; docs/performance.md).
    pub input_schema: Schema,
    /// JSON Schema of `structuredContent` on success, when the tool publishes one (held
    /// like `input_schema`).
    pub output_schema: Option<Schema>,
    /// Behaviour hints published as MCP tool annotations.
    pub annotations: Annotations,
    /// Icons published on the tool.
    pub icons: Vec<Icon>,
    /// Extra `_meta` published on the tool (merged with what `ui` adds).
    pub meta: JsonObject,
    /// Search keywords (for `tool_search`).
    pub keywords: Vec<String>,
    /// Free-form tags.
    pub tags: Vec<String>,
    /// The subfolders of the tools folder its file is in, outermost first
    /// (`tools/github/issues.star` → `["github"]`): how the author grouped it, which
    /// `tool_search` reads like tags (a query naming the product finds its tools).
    pub folder: Vec<String>,
    /// Hidden from `tools/list`, found through `tool_search` instead.
    pub discoverable: bool,
    /// How long one call may run; `None` means [`DEFAULT_TIMEOUT`].
    pub timeout: Option<Duration>,
    /// How many calls of this tool may run at once (`max_concurrency`); `None` leaves it
    /// to the server, which keeps some of its call slots for other tools.
    pub max_concurrency: Option<usize>,
    /// How structured results are rendered as text.
    pub text_format: TextFormat,
    /// Whether a call may run as an MCP task (`task = "optional"`), must (`"required"`),
    /// or never does (docs/tasks.md).
    pub task: TaskSupport,
    /// Test cases (`{"args": {...}, "expect": {...}}`), kept verbatim.
    pub examples: Vec<Value>,
    /// Tool option defaults, read by the tool with `mcp.option(name)`.
    pub options: JsonObject,
    /// Per-transport property overrides (`{"http": {...}, "stdio": {...}}`).
    pub overrides: JsonObject,
    /// Environment the tool depends on.
    pub requires: Requires,
    /// What runs once before the first call of this tool (and of the others naming the
    /// same init), docs/tools.md, "Lazy initialization".
    pub init: Option<Init>,
    /// How long the init may run (`init_timeout`); `None` means
    /// [`DEFAULT_INIT_TIMEOUT`](crate::DEFAULT_INIT_TIMEOUT).
    pub init_timeout: Option<Duration>,
    /// What the tool may touch outside its sandbox.
    pub permissions: Permissions,
    /// The OAuth scopes a caller's token must hold to see and call the tool (`scopes =
    /// [...]`; docs/auth.md, "Tools by scope"); empty: every caller.
    pub scopes: Vec<String>,
    /// The MCP Apps UI resource linked to this tool.
    pub ui: Option<Ui>,
    /// Where the tool was defined.
    pub source: SourceLocation,
    /// What its loader saw in its source, for `toolsmith check` ([`ToolDefinition::facts`]);
    /// `None` when nothing was noted: a server's loads leave them out, and a folder of
    /// thousands of tools spares their room.
    pub facts: Option<Box<SourceFacts>>,
    /// The package it came from (`[packages.NAME]` in `toolsmith.toml`, docs/packages.md);
    /// `None` for the folder's own tools.
    pub package: Option<Box<PackageOrigin>>,
    /// What a package's tool asked for in `permissions` and does not hold, because the
    /// host's `[packages.NAME] allow` does not cover it (docs/packages.md); `None` when
    /// nothing was withheld.
    pub withheld: Option<Box<Withheld>>,
    /// Why a call of it cannot run now, for a tool listed all the same: an upstream's tool
    /// served from the tools it listed last, while it does not start (docs/gateway.md,
    /// "Faults"). `toolsmith list` marks it; `tools/list` publishes it as it is.
    pub unavailable: Option<String>,
}

/// The folders between `root` and `file`, outermost first: `root/github/issues.star` →
/// `["github"]`; empty for a file directly in `root` (or outside it). What
/// [`ToolDefinition::folder`] holds for a tool defined in `file` of the tools folder `root`;
/// the loaders set it, so the folder's builder need not copy a definition to set it (issue
/// 21).
pub fn subfolders(root: &std::path::Path, file: &std::path::Path) -> Vec<String> {
    let Ok(relative) = file.strip_prefix(root) else {
        return Vec::new();
    };
    let Some(parent) = relative.parent() else {
        return Vec::new();
    };
    parent
        .components()
        .filter_map(|component| match component {
            std::path::Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect()
}

/// Permissions a package's tool asked for and was not given (docs/packages.md).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Withheld {
    /// The `NAME` of the host's `[packages.NAME]`, whose `allow` would grant them.
    pub package: String,
    /// What was asked for and withheld, by family, as the tool wrote it.
    pub permissions: Permissions,
    /// The same as `allow` would have to grant it: paths relative to the host folder.
    pub allow: Permissions,
}

/// Where a package's tool came from: what its qualified name `publisher/package/tool` is
/// made of (docs/packages.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageOrigin {
    /// `[package] publisher` of the package folder's `toolsmith.toml` (else the key of
    /// `[packages.NAME]`).
    pub publisher: String,
    /// `[package] name` (else the key of `[packages.NAME]`).
    pub name: String,
    /// The tool's name inside its package, before the prefix was added.
    pub tool: String,
}

impl PackageOrigin {
    /// `publisher/package/tool`.
    pub fn qualified_name(&self) -> String {
        format!("{}/{}/{}", self.publisher, self.name, self.tool)
    }
}

impl ToolDefinition {
    /// A definition with only the required parts set; everything else empty or default.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: impl Into<Schema>,
    ) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: description.into(),
            input_schema: input_schema.into(),
            output_schema: None,
            annotations: Annotations::default(),
            icons: Vec::new(),
            meta: JsonObject::new(),
            keywords: Vec::new(),
            tags: Vec::new(),
            folder: Vec::new(),
            discoverable: false,
            timeout: None,
            max_concurrency: None,
            text_format: TextFormat::Json,
            task: TaskSupport::Never,
            examples: Vec::new(),
            options: JsonObject::new(),
            overrides: JsonObject::new(),
            requires: Requires::default(),
            init: None,
            init_timeout: None,
            permissions: Permissions::default(),
            scopes: Vec::new(),
            ui: None,
            source: SourceLocation::default(),
            facts: None,
            package: None,
            withheld: None,
            unavailable: None,
        }
    }

    /// `publisher/package/tool` for a package's tool; `None` for the folder's own.
    pub fn qualified_name(&self) -> Option<String> {
        self.package.as_deref().map(PackageOrigin::qualified_name)
    }

    /// What its loader saw in its source ([`ToolDefinition::facts`]; nothing when none
    /// were noted).
    #[must_use]
    pub fn source_facts(&self) -> &SourceFacts {
        static NONE: SourceFacts = SourceFacts::NONE;
        self.facts.as_deref().unwrap_or(&NONE)
    }

    /// The timeout that applies to a call of this tool.
    pub fn effective_timeout(&self) -> Duration {
        self.timeout.unwrap_or(DEFAULT_TIMEOUT)
    }

    /// How long the tool's init may run.
    pub fn effective_init_timeout(&self) -> Duration {
        self.init_timeout.unwrap_or(DEFAULT_INIT_TIMEOUT)
    }

    /// The MCP `Tool` object, exactly as `tools/list` publishes it.
    pub fn to_mcp(&self) -> Value {
        let mut tool = self.to_mcp_skeleton();
        tool.insert("inputSchema".into(), self.input_schema.to_value());
        if let Some(output) = &self.output_schema {
            tool.insert("outputSchema".into(), output.to_value());
        }
        Value::Object(tool)
    }

    /// The length in bytes of [`ToolDefinition::to_mcp`] as compact JSON, without building
    /// it: the schemas are measured by their texts (`[search] mode = "auto"`
    /// weighs every tool on each load).
    pub fn mcp_json_len(&self) -> usize {
        let skeleton = Value::Object(self.to_mcp_skeleton());
        // Each schema stands in the skeleton as `{}`.
        let schemas = std::iter::once(&self.input_schema).chain(self.output_schema.as_ref());
        schemas.fold(json_len(&skeleton), |total, schema| {
            total + schema.text().len() - "{}".len()
        })
    }

    /// [`ToolDefinition::to_mcp`] with empty schemas (`{}`, in their places): for a
    /// converter that shares the schemas instead of copying them.
    pub fn to_mcp_skeleton(&self) -> JsonObject {
        let mut tool = JsonObject::new();
        tool.insert("name".into(), json!(self.name));
        if let Some(title) = &self.title {
            tool.insert("title".into(), json!(title));
        }
        tool.insert("description".into(), json!(self.description));
        tool.insert("inputSchema".into(), Value::Object(JsonObject::new()));
        if self.output_schema.is_some() {
            tool.insert("outputSchema".into(), Value::Object(JsonObject::new()));
        }
        let annotations = self.annotations.to_mcp();
        if !annotations.is_empty() {
            tool.insert("annotations".into(), Value::Object(annotations));
        }
        if !self.icons.is_empty() {
            let icons = self.icons.iter().map(Icon::to_mcp).collect();
            tool.insert("icons".into(), Value::Array(icons));
        }
        let meta = self.published_meta();
        if !meta.is_empty() {
            tool.insert("_meta".into(), Value::Object(meta));
        }
        tool
    }

    /// Whether `other` publishes the same MCP `Tool` object ([`ToolDefinition::to_mcp`]),
    /// without building either: what a reload compares to decide whether clients hear
    /// `tools/list_changed`. Schemas shared by both are not walked.
    pub fn publishes_as(&self, other: &Self) -> bool {
        self.name == other.name
            && self.title == other.title
            && self.description == other.description
            && self.input_schema == other.input_schema
            && self.output_schema == other.output_schema
            && self.annotations == other.annotations
            && self.icons == other.icons
            && self.meta == other.meta
            && self.ui == other.ui
    }

    /// `_meta` as published: the tool's own `meta` plus the MCP Apps `ui` link.
    fn published_meta(&self) -> JsonObject {
        let mut meta = self.meta.clone();
        if let Some(ui) = &self.ui {
            let mut link = JsonObject::new();
            link.insert("resourceUri".into(), json!(ui.resource_uri));
            if !ui.visibility.is_empty() {
                link.insert("visibility".into(), json!(ui.visibility));
            }
            meta.insert("ui".into(), Value::Object(link));
            // Hosts written against the first MCP Apps draft read this flat key.
            meta.insert("ui/resourceUri".into(), json!(ui.resource_uri));
        }
        meta
    }
}

/// MCP tool annotations: hints about a tool's behaviour (MCP spec, `ToolAnnotations`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Annotations {
    /// The tool does not modify its environment.
    pub read_only: Option<bool>,
    /// The tool may perform destructive updates.
    pub destructive: Option<bool>,
    /// Calling it twice with the same arguments has no additional effect.
    pub idempotent: Option<bool>,
    /// The tool interacts with an open world of external entities.
    pub open_world: Option<bool>,
}

impl Annotations {
    fn to_mcp(&self) -> JsonObject {
        let mut out = JsonObject::new();
        let hints = [
            ("readOnlyHint", self.read_only),
            ("destructiveHint", self.destructive),
            ("idempotentHint", self.idempotent),
            ("openWorldHint", self.open_world),
        ];
        for (key, value) in hints {
            if let Some(value) = value {
                out.insert(key.into(), Value::Bool(value));
            }
        }
        out
    }
}

/// An icon shown by clients next to the tool (MCP spec, `Icon`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Icon {
    /// An `https:` or `data:` URI.
    pub src: String,
    /// MIME type of the image, when known.
    pub mime_type: Option<String>,
    /// Sizes such as `48x48` or `any`.
    pub sizes: Vec<String>,
    /// `light` or `dark`, when the icon is meant for one theme.
    pub theme: Option<String>,
}

impl Icon {
    fn to_mcp(&self) -> Value {
        let mut icon = JsonObject::new();
        icon.insert("src".into(), json!(self.src));
        if let Some(mime) = &self.mime_type {
            icon.insert("mimeType".into(), json!(mime));
        }
        if !self.sizes.is_empty() {
            icon.insert("sizes".into(), json!(self.sizes));
        }
        if let Some(theme) = &self.theme {
            icon.insert("theme".into(), json!(theme));
        }
        Value::Object(icon)
    }
}

/// The MCP Apps resource a tool renders in (`ui://…`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ui {
    /// The `ui://` resource URI.
    pub resource_uri: String,
    /// Who may call the tool: `model`, `app`.
    pub visibility: Vec<String>,
}

/// How a structured result is rendered into its text content block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TextFormat {
    /// Compact JSON (the default).
    #[default]
    Json,
    /// TOON, a compact, token-lean rendering of JSON.
    Toon,
}

impl TextFormat {
    /// Parses `json` or `toon`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "json" => Some(Self::Json),
            "toon" => Some(Self::Toon),
            _ => None,
        }
    }
}

/// Whether a tool's calls run as MCP tasks (the `io.modelcontextprotocol/tasks` extension,
/// docs/tasks.md). Not part of the published `Tool`: under SEP-2663 the server decides per
/// call whether to answer with a task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TaskSupport {
    /// Calls are always answered in the request (the default).
    #[default]
    Never,
    /// A call from a client that negotiated tasks becomes a task when it runs long or
    /// needs input; other clients get the result in the request.
    Optional,
    /// A call always becomes a task; a client that did not negotiate tasks is refused.
    Required,
}

impl TaskSupport {
    /// Parses `never`, `optional` or `required`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "never" => Some(Self::Never),
            "optional" => Some(Self::Optional),
            "required" => Some(Self::Required),
            _ => None,
        }
    }

    /// The property's value: `never`, `optional` or `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Never => "never",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }
}

/// What runs once before a tool's first call (`init`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Init {
    /// A function of the tool's Starlark file, called with no arguments (`init = setup`).
    Function(String),
    /// A program with its arguments, run in the tools folder (`init = ["python3",
    /// "download_model.py"]`).
    Command(Vec<String>),
}

impl Init {
    /// How messages and `toolsmith list` name it: `setup`, `python3 download_model.py`.
    pub fn label(&self) -> String {
        match self {
            Self::Function(name) => name.clone(),
            Self::Command(argv) => argv.join(" "),
        }
    }
}

/// What must be present for a tool to be offered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requires {
    /// Environment variables that must be set.
    pub env: Vec<String>,
    /// Programs that must be on `PATH`.
    pub commands: Vec<String>,
}

impl Requires {
    /// What is missing, given which variables are set and which programs are found; `None`
    /// when everything is there.
    pub fn unmet(
        &self,
        is_set: impl Fn(&str) -> bool,
        is_found: impl Fn(&str) -> bool,
    ) -> Option<Unmet> {
        let unmet = Unmet {
            env: self
                .env
                .iter()
                .filter(|name| !is_set(name))
                .cloned()
                .collect(),
            commands: self
                .commands
                .iter()
                .filter(|program| !is_found(program))
                .cloned()
                .collect(),
        };
        (!unmet.env.is_empty() || !unmet.commands.is_empty()).then_some(unmet)
    }
}

/// The parts of a tool's `requires` that are missing: why it is hidden.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmet {
    /// Environment variables that are not set.
    pub env: Vec<String>,
    /// Programs not found on `PATH`.
    pub commands: Vec<String>,
}

impl Unmet {
    /// Why tool `name` is hidden: "tool `x` is hidden: environment variable `A` is not
    /// set; program `ffmpeg` is not on `PATH`". A call of the hidden tool answers with it.
    pub fn message(&self, name: &str) -> String {
        let quoted = |names: &[String]| {
            names
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut reasons = Vec::new();
        if !self.env.is_empty() {
            reasons.push(format!(
                "environment variable {} is not set",
                quoted(&self.env)
            ));
        }
        match self.commands.as_slice() {
            [] => {}
            [_] => reasons.push(format!(
                "program {} is not on `PATH`",
                quoted(&self.commands)
            )),
            _ => reasons.push(format!(
                "programs {} are not on `PATH`",
                quoted(&self.commands)
            )),
        }
        format!("tool `{name}` is hidden: {}", reasons.join("; "))
    }

    /// What to do about it.
    pub fn help(&self) -> String {
        let mut fixes = Vec::new();
        if !self.env.is_empty() {
            fixes.push("set the variable");
        }
        if !self.commands.is_empty() {
            fixes.push("install the program (or add its folder to `PATH`)");
        }
        format!(
            "{} before starting the server, or remove it from `requires`",
            fixes.join(" and ")
        )
    }
}

/// What a tool may touch outside its sandbox (docs/tools.md, "The language and the sandbox").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Permissions {
    /// Paths (or globs) the tool may read.
    pub fs_read: Vec<String>,
    /// Paths (or globs) the tool may write.
    pub fs_write: Vec<String>,
    /// Hosts the tool may reach.
    pub net: Vec<String>,
    /// Environment variables the tool may read (and that command tools inherit).
    pub env: Vec<String>,
}

impl Permissions {
    /// Whether no family grants anything.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        PermissionFamily::ALL
            .iter()
            .all(|family| self.family(*family).is_empty())
    }

    /// The grants of one family.
    #[must_use]
    pub fn family(&self, family: PermissionFamily) -> &[String] {
        match family {
            PermissionFamily::FsRead => &self.fs_read,
            PermissionFamily::FsWrite => &self.fs_write,
            PermissionFamily::Net => &self.net,
            PermissionFamily::Env => &self.env,
        }
    }

    /// The grants of one family, to set.
    pub fn family_mut(&mut self, family: PermissionFamily) -> &mut Vec<String> {
        match family {
            PermissionFamily::FsRead => &mut self.fs_read,
            PermissionFamily::FsWrite => &mut self.fs_write,
            PermissionFamily::Net => &mut self.net,
            PermissionFamily::Env => &mut self.env,
        }
    }
}

/// A kind of access a tool's `permissions` grant: its keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PermissionFamily {
    /// `fs.read`: paths the tool may read.
    FsRead,
    /// `fs.write`: paths the tool may write.
    FsWrite,
    /// `net`: hosts the tool may reach.
    Net,
    /// `env`: environment variables the tool may read.
    Env,
}

impl PermissionFamily {
    /// Every family, in the order messages list them.
    pub const ALL: [Self; 4] = [Self::FsRead, Self::FsWrite, Self::Net, Self::Env];

    /// The family's key in `permissions`: `fs.read`, `fs.write`, `net` or `env`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::FsRead => "fs.read",
            Self::FsWrite => "fs.write",
            Self::Net => "net",
            Self::Env => "env",
        }
    }

    /// The family a `permissions` key names; `fs_read` and `fs_write` are accepted too.
    #[must_use]
    pub fn parse(key: &str) -> Option<Self> {
        match key {
            "fs.read" | "fs_read" => Some(Self::FsRead),
            "fs.write" | "fs_write" => Some(Self::FsWrite),
            "net" => Some(Self::Net),
            "env" => Some(Self::Env),
            _ => None,
        }
    }
}

impl std::fmt::Display for PermissionFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where something was defined: a file and a 1-based line and column.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceLocation {
    /// The file, as the loader was given it.
    pub path: PathBuf,
    /// 1-based line; 0 when unknown.
    pub line: u32,
    /// 1-based column; 0 when unknown.
    pub column: u32,
}

impl SourceLocation {
    /// A location at the start of `path`.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            line: 1,
            column: 1,
        }
    }
}

impl std::fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.path.display())?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
            if self.column > 0 {
                write!(f, ":{}", self.column)?;
            }
        }
        Ok(())
    }
}

/// The length of `value` as compact JSON (what `to_string` gives), counted as it is
/// written, not kept.
fn json_len(value: &impl serde::Serialize) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Serializing JSON values into a writer that cannot fail does not fail.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_tool_omits_empty_optional_fields() {
        let mut schema = JsonObject::new();
        schema.insert("type".into(), json!("object"));
        let tool = ToolDefinition::new("echo", "Echo text back.", schema).to_mcp();
        assert_eq!(
            tool,
            json!({"name": "echo", "description": "Echo text back.", "inputSchema": {"type": "object"}})
        );
    }

    #[test]
    fn ui_link_is_published_in_meta() {
        let mut tool = ToolDefinition::new("dash", "Show a dashboard.", JsonObject::new());
        tool.ui = Some(Ui {
            resource_uri: "ui://dash/index.html".into(),
            visibility: vec!["model".into()],
        });
        tool.annotations.read_only = Some(true);
        let published = tool.to_mcp();
        assert_eq!(
            published["_meta"]["ui"]["resourceUri"],
            "ui://dash/index.html"
        );
        assert_eq!(published["annotations"], json!({"readOnlyHint": true}));
    }

    #[test]
    fn mcp_json_len_is_the_length_of_the_published_text() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string",
            "description": "What to find, \"quoted\" and ünïcode"}}, "required": ["q"]});
        let mut tool = ToolDefinition::new(
            "find",
            "Find things.\nTabs\tand quotes \" too.",
            schema.as_object().cloned().unwrap(),
        );
        assert_eq!(tool.mcp_json_len(), tool.to_mcp().to_string().len());
        tool.output_schema = Some(Schema::new(
            json!({"type": "object", "properties": {"found": {"type": "array"}}})
                .as_object()
                .unwrap(),
        ));
        tool.title = Some("Find".into());
        tool.annotations.read_only = Some(true);
        assert_eq!(tool.mcp_json_len(), tool.to_mcp().to_string().len());
    }
}
