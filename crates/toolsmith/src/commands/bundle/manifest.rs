//! The bundle's `manifest.json` (MCPB `manifest_version` 0.4): who made it and what it is,
//! from `toolsmith.toml`'s `[server]`; the served tools; the binary's platform; and what the
//! folder needs from its user, as `user_config` passed to the server's environment.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context as _;
use serde_json::{Map, Value, json};
use toolsmith_folder::ToolFolder;

use super::FOLDER_IN_BUNDLE;
use crate::error::Hinted;
use crate::printer::Printer;

/// The MCPB manifest version written.
const MANIFEST_VERSION: &str = "0.4";

/// Variables every served tool gets anyway: never asked of the user.
const ALWAYS_PASSED: &[&str] = &["PATH", "HOME", "LANG"];

/// The operating systems MCPB names, as Node.js's `process.platform` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Platform {
    Linux,
    Darwin,
    Win32,
}

impl Platform {
    fn name(self) -> &'static str {
        match self {
            Self::Linux => "linux",
            Self::Darwin => "darwin",
            Self::Win32 => "win32",
        }
    }

    /// The platform an executable is for, from its first bytes: ELF, Mach-O or PE.
    fn of_executable(head: &[u8]) -> Option<Self> {
        match head {
            [0x7f, b'E', b'L', b'F', ..] => Some(Self::Linux),
            [0xcf | 0xce, 0xfa, 0xed, 0xfe, ..] | [0xca, 0xfe, 0xba, 0xbe, ..] => {
                Some(Self::Darwin)
            }
            [b'M', b'Z', ..] => Some(Self::Win32),
            _ => None,
        }
    }
}

/// The `toolsmith` binary that goes under `server/`, and the platform it runs on.
#[derive(Debug)]
pub(crate) struct Binary {
    pub(super) path: PathBuf,
    platform: Platform,
}

impl Binary {
    /// `--binary PATH`, else the running `toolsmith`.
    pub(super) fn locate(given: Option<&Path>) -> anyhow::Result<Self> {
        let path = match given {
            Some(path) => path.to_owned(),
            None => std::env::current_exe().context("cannot find the running `toolsmith`")?,
        };
        let mut head = [0; 4];
        std::fs::File::open(&path)
            .and_then(|mut file| file.read_exact(&mut head))
            .with_context(|| format!("cannot read `{}`", path.display()))?;
        let Some(platform) = Platform::of_executable(&head) else {
            return Err(Hinted::new(format!(
                "`{}` is not an executable for Linux, macOS or Windows",
                path.display()
            ))
            .hint("pass the `toolsmith` binary of the platform to bundle for, e.g. `--binary target/x86_64-unknown-linux-gnu/dist/toolsmith`")
            .into());
        };
        Ok(Self { path, platform })
    }

    /// Its path in the bundle.
    pub(super) fn entry_point(&self) -> &'static str {
        match self.platform {
            Platform::Win32 => "server/toolsmith.exe",
            Platform::Linux | Platform::Darwin => "server/toolsmith",
        }
    }
}

/// One environment variable the folder needs from its user.
#[derive(Debug, Default)]
struct Need {
    /// Without it a tool is hidden or an upstream cannot start.
    required: bool,
    /// Who needs it, as messages name them: tool `x`, upstream `github`.
    users: BTreeSet<String>,
}

/// The manifest, and what the report and `server.json` read from it.
#[derive(Debug)]
pub(crate) struct Manifest {
    pub(super) json: Value,
    name: String,
    registry_name: Option<String>,
    version: String,
    description: String,
    tools: Vec<String>,
    /// `(name, sensitive, required, description)` of each `user_config` entry.
    user_config: Vec<UserConfig>,
}

/// One `user_config` entry: an environment variable the user is asked for.
#[derive(Debug, Clone)]
pub(crate) struct UserConfig {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) sensitive: bool,
    pub(crate) required: bool,
}

impl Manifest {
    /// The manifest of `folder` with `binary`; what `[server]` lacks is derived with a
    /// warning on `printer`.
    pub(super) fn build(
        folder: &ToolFolder,
        binary: &Binary,
        printer: Printer,
    ) -> anyhow::Result<Self> {
        let (mut manifest, identity) = identity(folder, printer)?;
        let (tools, hidden_needs) = tools_of(folder, printer);
        let user_config = user_config_of(&needs_of(folder, hidden_needs));
        let env: Map<String, Value> = user_config
            .iter()
            .map(|entry| {
                (
                    entry.name.clone(),
                    json!(format!("${{user_config.{}}}", entry.name)),
                )
            })
            .collect();
        manifest.insert(
            "server".into(),
            json!({
                "type": "binary",
                "entry_point": binary.entry_point(),
                "mcp_config": {
                    "command": format!("${{__dirname}}/{}", binary.entry_point()),
                    "args": ["serve", format!("${{__dirname}}/{FOLDER_IN_BUNDLE}")],
                    "env": env,
                },
            }),
        );
        manifest.insert(
            "tools".into(),
            Value::Array(tools.iter().map(|(_, tool)| tool.clone()).collect()),
        );
        let raw = &folder.config().raw;
        if raw.contains_key("upstream") || raw.contains_key("openapi") {
            // An upstream's tools are whatever that server lists when it starts.
            manifest.insert("tools_generated".into(), json!(true));
        }
        manifest.insert(
            "compatibility".into(),
            json!({"platforms": [binary.platform.name()]}),
        );
        if !user_config.is_empty() {
            let entries: Map<String, Value> = user_config
                .iter()
                .map(|entry| {
                    let mut option = json!({
                        "type": "string",
                        "title": entry.name,
                        "description": entry.description,
                        "required": entry.required,
                    });
                    if entry.sensitive {
                        option["sensitive"] = json!(true);
                    }
                    (entry.name.clone(), option)
                })
                .collect();
            manifest.insert("user_config".into(), Value::Object(entries));
        }
        Ok(Self {
            json: Value::Object(manifest),
            name: identity.name,
            registry_name: identity.registry_name,
            version: identity.version,
            description: identity.description,
            tools: tools.into_iter().map(|(name, _)| name).collect(),
            user_config,
        })
    }

    /// The name, made safe for a file name: the default bundle is `NAME-VERSION.mcpb`.
    pub(super) fn file_stem(&self) -> String {
        self.name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                    c
                } else {
                    '-'
                }
            })
            .collect()
    }

    /// `[server] registry_name`, when set.
    pub(super) fn registry_name(&self) -> Option<&str> {
        self.registry_name.as_deref()
    }

    pub(super) fn version(&self) -> &str {
        &self.version
    }

    pub(super) fn description(&self) -> &str {
        &self.description
    }

    pub(super) fn tool_names(&self) -> &[String] {
        &self.tools
    }

    pub(super) fn user_config(&self) -> &[UserConfig] {
        &self.user_config
    }

    pub(super) fn user_config_names(&self) -> Vec<&str> {
        self.user_config
            .iter()
            .map(|entry| entry.name.as_str())
            .collect()
    }
}

/// What the manifest says the bundle is, as the report and `server.json` need it again.
struct Identity {
    name: String,
    /// `[server] registry_name`, the default of `--name` for `server.json`.
    registry_name: Option<String>,
    version: String,
    description: String,
}

/// The manifest's first keys, from `[server]`: `name`, `version`, `description` and
/// `author` (derived with a warning when missing), then the optional `title` (as
/// `display_name`), `repository`, `website` (as `homepage`), `icon` and `license`.
fn identity(
    folder: &ToolFolder,
    printer: Printer,
) -> anyhow::Result<(Map<String, Value>, Identity)> {
    let server = folder
        .config()
        .raw
        .get("server")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let text = |key: &str| {
        server
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(str::to_owned)
    };
    let derived = |key: &str, value: &str, how: &str| {
        printer.warning(&format!(
            "`[server] {key}` is not set in toolsmith.toml; the bundle's {key} is `{value}`, {how}"
        ));
    };
    let root = folder.root();
    let name = text("name").unwrap_or_else(|| {
        let name = folder_name(root);
        derived("name", &name, "the folder's name");
        name
    });
    let version = text("version").unwrap_or_else(|| {
        let version = "0.1.0".to_owned();
        derived("version", &version, "a first version");
        version
    });
    let description = text("description").unwrap_or_else(|| {
        let description = text("instructions")
            .and_then(|text| text.lines().next().map(str::to_owned))
            .unwrap_or_else(|| format!("The tools of `{name}`, served by Toolsmith"));
        derived(
            "description",
            &description,
            "from `instructions` or the name",
        );
        description
    });
    let author = if let Some(value) = server.get("author") {
        author_of(value)?
    } else {
        let author = git_author(root)
            .or_else(|| std::env::var("USER").ok().map(|name| json!({"name": name})))
            .unwrap_or_else(|| json!({"name": "unknown"}));
        derived(
            "author",
            author["name"].as_str().unwrap_or("unknown"),
            "from git's `user.name` or the login name",
        );
        author
    };
    let mut manifest = Map::new();
    manifest.insert("manifest_version".into(), json!(MANIFEST_VERSION));
    manifest.insert("name".into(), json!(name));
    // `title` and `website` are the Server Card's names for them (docs/http.md).
    if let Some(title) = text("title") {
        manifest.insert("display_name".into(), json!(title));
    }
    manifest.insert("version".into(), json!(version));
    manifest.insert("description".into(), json!(description));
    manifest.insert("author".into(), author);
    if let Some(repository) = server.get("repository") {
        manifest.insert("repository".into(), repository_of(repository)?);
    }
    if let Some(website) = text("website") {
        manifest.insert("homepage".into(), json!(website));
    }
    if let Some(icon) = text("icon") {
        manifest.insert("icon".into(), json!(icon_of(root, &icon)?));
    }
    if let Some(license) = text("license") {
        manifest.insert("license".into(), json!(license));
    }
    let identity = Identity {
        name,
        registry_name: text("registry_name"),
        version,
        description,
    };
    Ok((manifest, identity))
}

/// One `user_config` entry per variable: sensitive when its name says secret.
fn user_config_of(needs: &BTreeMap<String, Need>) -> Vec<UserConfig> {
    needs
        .iter()
        .map(|(variable, need)| UserConfig {
            name: variable.clone(),
            description: format!(
                "The environment variable `{variable}`, for {}",
                need.users.iter().cloned().collect::<Vec<_>>().join(", ")
            ),
            sensitive: looks_secret(variable),
            required: need.required,
        })
        .collect()
}

/// The folder's file name, the bundle's name when `[server] name` is not set.
fn folder_name(root: &Path) -> String {
    root.canonicalize()
        .ok()
        .and_then(|path| {
            path.file_name()
                .map(|name| name.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "tools".to_owned())
}

/// `[server] author`: `"Ada Lovelace <ada@example.com>"` or `{name, email, url}`.
fn author_of(value: &Value) -> anyhow::Result<Value> {
    match value {
        Value::String(text) => {
            let text = text.trim();
            Ok(match text.split_once('<') {
                Some((name, rest)) if rest.ends_with('>') => json!({
                    "name": name.trim(),
                    "email": rest.trim_end_matches('>').trim(),
                }),
                _ => json!({"name": text}),
            })
        }
        Value::Object(table) if table.get("name").is_some_and(Value::is_string) => {
            let mut author = Map::new();
            for key in ["name", "email", "url"] {
                if let Some(value) = table.get(key).and_then(Value::as_str) {
                    author.insert(key.to_owned(), json!(value));
                }
            }
            Ok(Value::Object(author))
        }
        _ => Err(
            Hinted::new("`[server] author` must be a string or a table with a `name`")
                .hint("e.g. author = \"Ada Lovelace <ada@example.com>\"")
                .into(),
        ),
    }
}

/// `[server] repository`: a URL, or `{type, url}`.
fn repository_of(value: &Value) -> anyhow::Result<Value> {
    match value {
        Value::String(url) => Ok(json!({"type": "git", "url": url})),
        Value::Object(table) if table.get("url").is_some_and(Value::is_string) => Ok(json!({
            "type": table.get("type").and_then(Value::as_str).unwrap_or("git"),
            "url": table["url"],
        })),
        _ => Err(
            Hinted::new("`[server] repository` must be a URL or a table with a `url`")
                .hint("e.g. repository = \"https://github.com/acme/weather-tools\"")
                .into(),
        ),
    }
}

/// `[server] icon`: a PNG file of the folder (its path in the bundle), or an `https://` URL.
fn icon_of(root: &Path, icon: &str) -> anyhow::Result<String> {
    if icon.starts_with("https://") {
        return Ok(icon.to_owned());
    }
    let path = root.join(icon);
    if !path.is_file() {
        return Err(Hinted::new(format!(
            "`[server] icon` names `{icon}`, which is not a file of the folder"
        ))
        .hint("give a PNG file's path relative to the tools folder, e.g. icon = \"icon.png\"")
        .into());
    }
    let relative = Path::new(icon)
        .components()
        .filter(|part| !matches!(part, std::path::Component::CurDir))
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    Ok(format!("{FOLDER_IN_BUNDLE}/{relative}"))
}

/// Git's `user.name` (and `user.email`) where the folder is, as an author.
fn git_author(root: &Path) -> Option<Value> {
    let config = |key: &str| {
        let output = Command::new("git")
            .args(["config", key])
            .current_dir(root)
            .output()
            .ok()?;
        let value = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        (output.status.success() && !value.is_empty()).then_some(value)
    };
    let name = config("user.name")?;
    Some(match config("user.email") {
        Some(email) if email.contains('@') => json!({"name": name, "email": email}),
        _ => json!({"name": name}),
    })
}

/// The served tools as the manifest lists them, by name; a tool hidden because a variable
/// it `requires` is not set here is listed by name with a warning, and the variables it
/// needs are returned.
fn tools_of(
    folder: &ToolFolder,
    printer: Printer,
) -> (Vec<(String, Value)>, BTreeMap<String, Need>) {
    let mut tools: Vec<(String, Value)> = folder
        .catalog()
        .definitions_once()
        .map(|definition| {
            (
                definition.name.clone(),
                json!({"name": definition.name, "description": definition.description}),
            )
        })
        .collect();
    let mut needs: BTreeMap<String, Need> = BTreeMap::new();
    for diagnostic in folder.catalog().diagnostics() {
        if diagnostic.rule != "missing-requirement" {
            continue;
        }
        let Some((tool, variables)) = hidden_tool(&diagnostic.message) else {
            continue;
        };
        printer.warning(&format!(
            "{}; it is bundled, listed without its description",
            diagnostic.message
        ));
        for variable in variables {
            let need = needs.entry(variable).or_default();
            need.required = true;
            need.users.insert(format!("tool `{tool}`"));
        }
        tools.push((tool.clone(), json!({"name": tool})));
    }
    tools.sort_by(|a, b| a.0.cmp(&b.0));
    (tools, needs)
}

/// The tool and variables of a `missing-requirement` message: "tool `x` is hidden:
/// environment variable `A`, `B` is not set; program `p` is not on `PATH`".
fn hidden_tool(message: &str) -> Option<(String, Vec<String>)> {
    let rest = message.strip_prefix("tool `")?;
    let (tool, rest) = rest.split_once('`')?;
    let variables = rest
        .split(';')
        .find_map(|reason| {
            reason
                .trim_start_matches(" is hidden:")
                .trim()
                .strip_prefix("environment variable ")
        })
        .map(|names| {
            names
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Some((tool.to_owned(), variables))
}

/// Every environment variable the folder's tools, upstreams and OpenAPI services read, with
/// who reads it: `requires.env` and `[upstream]`/`[openapi]` references are required,
/// `permissions.env` alone is optional.
fn needs_of(folder: &ToolFolder, mut needs: BTreeMap<String, Need>) -> BTreeMap<String, Need> {
    for definition in folder.catalog().definitions_once() {
        let user = format!("tool `{}`", definition.name);
        for (variable, required) in definition
            .requires
            .env
            .iter()
            .map(|name| (name, true))
            .chain(definition.permissions.env.iter().map(|name| (name, false)))
        {
            let need = needs.entry(variable.clone()).or_default();
            need.required |= required;
            need.users.insert(user.clone());
        }
    }
    let raw = &folder.config().raw;
    for (section, keys) in [
        ("upstream", &["env", "headers"][..]),
        ("openapi", &["headers"][..]),
    ] {
        let Some(Value::Object(entries)) = raw.get(section) else {
            continue;
        };
        for (name, entry) in entries {
            for key in keys {
                let Some(Value::Object(values)) = entry.get(*key) else {
                    continue;
                };
                for value in values.values().filter_map(Value::as_str) {
                    for variable in references(value) {
                        let need = needs.entry(variable).or_default();
                        need.required = true;
                        need.users.insert(format!("{section} `{name}`"));
                    }
                }
            }
        }
    }
    needs.retain(|variable, _| {
        !ALWAYS_PASSED.contains(&variable.as_str())
            && !variable.is_empty()
            && variable
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    needs
}

/// The names in `${NAME}` references of a text.
fn references(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        rest = &rest[start + 2..];
        let Some(end) = rest.find('}') else { break };
        names.push(rest[..end].to_owned());
        rest = &rest[end + 1..];
    }
    names
}

/// Whether a variable's name says it holds a secret: `*_KEY`, `*_TOKEN`, `*_SECRET`,
/// `*PASSWORD*` (and the bare words), whatever the case.
pub(super) fn looks_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET"]
        .iter()
        .any(|word| name == *word || name.ends_with(&format!("_{word}")))
        || name.contains("PASSWORD")
        || name.contains("PASSWD")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_recognised() {
        for name in [
            "API_KEY",
            "github_token",
            "CLIENT_SECRET",
            "DB_PASSWORD",
            "PASSWORD_FILE",
            "TOKEN",
        ] {
            assert!(looks_secret(name), "{name}");
        }
        for name in ["KEYBOARD", "WEATHER_CITY", "TOKENIZER_MODEL", "MONKEY"] {
            assert!(!looks_secret(name), "{name}");
        }
    }

    #[test]
    fn references_are_read_from_headers() {
        assert_eq!(
            references("Bearer ${TOKEN} and ${OTHER}"),
            ["TOKEN", "OTHER"]
        );
        assert!(references("no reference, ${unclosed").is_empty());
    }

    #[test]
    fn a_hidden_tool_message_names_its_variables() {
        let (tool, variables) = hidden_tool(
            "tool `forecast` is hidden: environment variable `A`, `B` is not set; program `ffmpeg` is not on `PATH`",
        )
        .unwrap();
        assert_eq!(tool, "forecast");
        assert_eq!(variables, ["A", "B"]);
    }

    #[test]
    fn executables_are_told_apart_by_their_first_bytes() {
        assert_eq!(Platform::of_executable(b"\x7fELF"), Some(Platform::Linux));
        assert_eq!(
            Platform::of_executable(&[0xcf, 0xfa, 0xed, 0xfe]),
            Some(Platform::Darwin)
        );
        assert_eq!(
            Platform::of_executable(b"MZ\x90\x00"),
            Some(Platform::Win32)
        );
        assert_eq!(Platform::of_executable(b"#!/b"), None);
    }
}
