//! What the rules may know about the world besides the tool definitions: the folder's files,
//! the text of the tools' sources, which environment variables are set. The caller (the CLI)
//! gathers it, so this crate stays free of I/O and its rules are testable on plain values.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use toolsmith_model::{SearchSettings, SourceLocation, ToolDefinition};

/// The configuration file of a tools folder.
const CONFIG_FILE: &str = "toolsmith.toml";

/// Everything a check run may look at besides the tool definitions.
#[derive(Debug, Clone, Default)]
pub struct CheckContext {
    /// The tools folder.
    pub root: PathBuf,
    /// Files in the folder, relative to [`CheckContext::root`] (`icons/logo.png`).
    pub files: BTreeSet<PathBuf>,
    /// Source texts by path, as the tools' [`toolsmith_model::SourceLocation`]s name them
    /// (`.star` files and manifests), for snippets and fixes.
    pub sources: BTreeMap<PathBuf, String>,
    /// Environment variables that are set (only the names matter).
    pub env: BTreeSet<String>,
    /// Programs of the tools' `requires.commands`, and the programs command tools run, that
    /// are found (on `PATH`, or in the folder for a path like `./run.sh`).
    pub programs: BTreeSet<String>,
    /// Tools that have test cases outside their definition (`tests/*.toml`), as `toolsmith
    /// test` collects them; the caller fills it in.
    pub tested_tools: BTreeSet<String>,
    /// The URIs of the resources the folder serves (`ui://…` MCP Apps documents among
    /// them); `None` when the caller does not know them.
    pub resource_uris: Option<BTreeSet<String>>,
    /// `[search]` of `toolsmith.toml`.
    pub search: SearchSettings,
    /// The file whole-server findings point at (`toolsmith.toml`, or the folder itself).
    pub config_path: Option<PathBuf>,
    /// The upstreams whose table says `forward_caller_token = true`, by name, with where
    /// that key is written (docs/gateway.md).
    pub token_passthrough: Vec<(String, SourceLocation)>,
}

impl CheckContext {
    /// A context for the folder `root` with nothing else known.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            ..Self::default()
        }
    }

    /// Gathers a context for the tools of the folder `root`: their sources and which
    /// required environment variables are set; `search` is the folder's `[search]`
    /// settings.
    ///
    /// `files` lists the folder's files relative to `root`; `read` reads a file (`None`
    /// when it cannot), `is_set` tells whether an environment variable is set and
    /// `is_found` whether a program is on `PATH`. The caller does the I/O, so tests can
    /// hand in whatever they like.
    pub fn gather<'a>(
        root: &Path,
        files: BTreeSet<PathBuf>,
        definitions: impl IntoIterator<Item = &'a ToolDefinition>,
        search: SearchSettings,
        read: &mut dyn FnMut(&Path) -> Option<String>,
        is_set: &dyn Fn(&str) -> bool,
        is_found: &dyn Fn(&str) -> bool,
    ) -> Self {
        let mut context = Self::new(root);
        for definition in definitions {
            let path = &definition.source.path;
            if !context.sources.contains_key(path)
                && let Some(text) = read(path)
            {
                context.sources.insert(path.clone(), text);
            }
            for name in &definition.requires.env {
                if is_set(name) {
                    context.env.insert(name.clone());
                }
            }
            for program in &definition.requires.commands {
                if is_found(program) {
                    context.programs.insert(program.clone());
                }
            }
            let program = context
                .sources
                .get(path)
                .and_then(|source| command_program(definition, source));
            if let Some((program, _)) = program
                && is_found(&program)
            {
                context.programs.insert(program);
            }
        }
        if files.contains(Path::new(CONFIG_FILE)) {
            context.config_path = Some(root.join(CONFIG_FILE));
        }
        context.search = search;
        context.files = files;
        context
    }

    /// The source text of `path`, when the caller provided it.
    pub fn source(&self, path: &Path) -> Option<&str> {
        self.sources.get(path).map(String::as_str)
    }

    /// Whether the folder has the file `relative` (a path inside the folder).
    #[must_use]
    pub fn has_file(&self, relative: &str) -> bool {
        let relative = relative.trim_start_matches("./");
        self.files.contains(Path::new(relative))
    }
}

/// The program a command tool's manifest runs (`command = ["python3", ...]`: `python3`) and
/// where its value is written in `source`, the manifest's text; `None` for any other tool,
/// for a tool of a package (run in the package's folder), and for a program written as a
/// template (`"{tool}"`) or a TOML string with escapes, which only a call can resolve.
pub(crate) fn command_program(
    definition: &ToolDefinition,
    source: &str,
) -> Option<(String, std::ops::Range<usize>)> {
    if definition.package.is_some() {
        return None;
    }
    let key = definition.facts.as_ref()?.key(&["command", "0"])?;
    let written = source.get(key.value.clone())?;
    let program = written
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
        .filter(|text| !text.contains('\\'))
        .or_else(|| {
            written
                .strip_prefix('\'')
                .and_then(|rest| rest.strip_suffix('\''))
        })?;
    (!program.is_empty() && !program.contains(['{', '}']))
        .then(|| (program.to_owned(), key.value.clone()))
}
