//! `toolsmith install`: an entry in an AI client's MCP configuration that starts
//! `toolsmith serve DIR` (docs/install.md). The rest of the client's file is kept as it was;
//! a file Toolsmith cannot parse is not touched.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::{Map, Value, json};

use crate::ExitStatus;
use crate::args::{Client, InstallArgs};
use crate::error::Hinted;
use crate::folder;
use crate::printer::Printer;

pub(crate) fn run(args: &InstallArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let loaded = folder::load(args.folder.dir.as_deref())?;
    let catalog = loaded.catalog();
    if !args.json {
        folder::report(printer, catalog.diagnostics());
    }
    let root = std::fs::canonicalize(loaded.root())?;
    let name = match (&args.name, &loaded.config().name) {
        (Some(name), _) | (None, Some(name)) => name.clone(),
        (None, None) => root
            .file_name()
            .map_or_else(|| "tools".to_owned(), |n| n.to_string_lossy().into_owned()),
    };
    if name.trim().is_empty() {
        return Err(Hinted::new("the server name is empty")
            .hint("name it: --name my-tools")
            .into());
    }
    let options = match &args.tool_options {
        Some(text) => Some(tool_options(text)?),
        None => None,
    };
    for tool in options.iter().flat_map(Map::keys) {
        if catalog.get(tool).is_none() {
            printer.message(&format!(
                "warning: --tool-options names `{tool}`, which is not a tool of {}",
                root.display()
            ));
        }
    }
    let program = std::fs::canonicalize(std::env::current_exe()?)?;
    let server = Server {
        command: program.to_string_lossy().into_owned(),
        args: vec!["serve".to_owned(), root.to_string_lossy().into_owned()],
        options: options.map(|o| Value::Object(o).to_string()),
    };
    let path = match &args.config {
        Some(path) => path.clone(),
        None => config_path(args.client, args.project)?,
    };
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => Err(error).with_context(|| format!("cannot read {}", path.display()))?,
    };
    let format = Format::of(args.client);
    let wanted = (!args.remove).then_some(&server);
    let (text, action) = format
        .edit(existing.as_deref().unwrap_or_default(), &name, wanted)
        .map_err(|problem| {
            Hinted::new(format!(
                "cannot read {} as {}: {problem}; it is left as it is",
                path.display(),
                format.language()
            ))
            .hint(format!(
                "fix the file, or add the server by hand:\n{}",
                format.snippet(&name, &server)
            ))
        })?;
    let outcome = Outcome {
        client: args.client.title(),
        path: &path,
        name: &name,
        action,
    };
    if args.json {
        let report = json!({
            "client": outcome.client,
            "config": path,
            "name": name,
            "action": action.word(),
            "entry": format.entry(&server),
            "dry_run": args.dry_run,
        });
        printer.data(&serde_json::to_string_pretty(&report)?)?;
    }
    if action != Action::Absent && !args.dry_run {
        write(&path, existing.is_some(), &text)?;
    }
    if !args.json {
        outcome.tell(
            printer,
            args.dry_run.then(|| format.snippet(&name, &server)),
        )?;
    }
    Ok(ExitStatus::Success)
}

/// What `install` did, to say so.
struct Outcome<'a> {
    client: &'static str,
    path: &'a Path,
    name: &'a str,
    action: Action,
}

impl Outcome<'_> {
    /// Says what was done, or with `dry_run` (the snippet) what would be.
    fn tell(&self, printer: Printer, dry_run: Option<String>) -> std::io::Result<()> {
        let Self {
            client,
            path,
            name,
            action,
        } = self;
        let path = path.display();
        let preposition = if *action == Action::Removed {
            "from"
        } else {
            "in"
        };
        match (action, dry_run) {
            (Action::Absent, _) => printer.message(&format!(
                "{client} has no MCP server `{name}` in {path}; nothing to remove"
            )),
            (_, Some(snippet)) => {
                printer.message(&format!(
                    "would {} the MCP server `{name}` {preposition} {path} ({client}):",
                    action.word()
                ));
                printer.data(&snippet)?;
            }
            (_, None) => {
                let done = match action {
                    Action::Added => "added",
                    Action::Replaced => "replaced",
                    _ => "removed",
                };
                printer.message(&format!(
                    "{done} the MCP server `{name}` {preposition} {path} ({client}); restart {client} to load it"
                ));
            }
        }
        Ok(())
    }
}

/// What the client is told to run.
struct Server {
    command: String,
    args: Vec<String>,
    /// `MCP_TOOL_OPTIONS`, as JSON text.
    options: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Added,
    Replaced,
    Removed,
    /// `--remove` of a name the file does not have.
    Absent,
}

impl Action {
    fn word(self) -> &'static str {
        match self {
            Self::Added => "add",
            Self::Replaced => "replace",
            Self::Removed => "remove",
            Self::Absent => "none",
        }
    }
}

/// `--tool-options`: a JSON object of objects.
fn tool_options(text: &str) -> anyhow::Result<Map<String, Value>> {
    let hint = r#"write it as {"tool": {"option": value}}, e.g. --tool-options '{"forecast_get": {"units": "metric"}}'"#;
    let value: Value = serde_json::from_str(text).map_err(|error| {
        Hinted::new("--tool-options is not JSON")
            .caused_by(error)
            .hint(hint)
    })?;
    match value {
        Value::Object(options) if options.values().all(Value::is_object) => Ok(options),
        _ => Err(
            Hinted::new("--tool-options must be a JSON object of objects, one per tool")
                .hint(hint)
                .into(),
        ),
    }
}

impl Client {
    /// The client's name as people write it.
    fn title(self) -> &'static str {
        match self {
            Self::ClaudeCode => "Claude Code",
            Self::ClaudeDesktop => "Claude Desktop",
            Self::Cursor => "Cursor",
            Self::Vscode => "VS Code",
            Self::Windsurf => "Windsurf",
            Self::Gemini => "Gemini CLI",
            Self::Codex => "Codex",
        }
    }
}

/// The client's configuration file: the user's, or with `project` the one in the current
/// folder.
fn config_path(client: Client, project: bool) -> anyhow::Result<PathBuf> {
    if project {
        let file = match client {
            Client::ClaudeCode => ".mcp.json",
            Client::Cursor => ".cursor/mcp.json",
            Client::Vscode => ".vscode/mcp.json",
            Client::Gemini => ".gemini/settings.json",
            Client::ClaudeDesktop | Client::Windsurf | Client::Codex => {
                return Err(Hinted::new(format!(
                    "{} has no project configuration file",
                    client.title()
                ))
                .hint("leave out --project to write the user's file")
                .into());
            }
        };
        return Ok(std::env::current_dir()?.join(file));
    }
    let home = home()?;
    Ok(match client {
        Client::ClaudeCode => home.join(".claude.json"),
        Client::ClaudeDesktop => app_config(&home)?.join("Claude/claude_desktop_config.json"),
        Client::Cursor => home.join(".cursor/mcp.json"),
        Client::Vscode => app_config(&home)?.join("Code/User/mcp.json"),
        Client::Windsurf => home.join(".codeium/windsurf/mcp_config.json"),
        Client::Gemini => home.join(".gemini/settings.json"),
        Client::Codex => std::env::var_os("CODEX_HOME")
            .map_or_else(|| home.join(".codex"), PathBuf::from)
            .join("config.toml"),
    })
}

fn home() -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            Hinted::new("cannot tell the home folder: neither HOME nor USERPROFILE is set")
                .hint("name the file: --config PATH")
                .into()
        })
}

/// Where desktop applications keep their settings: `~/Library/Application Support` on
/// macOS, `%APPDATA%` on Windows, `$XDG_CONFIG_HOME` (else `~/.config`) elsewhere.
fn app_config(home: &Path) -> anyhow::Result<PathBuf> {
    if cfg!(target_os = "macos") {
        return Ok(home.join("Library/Application Support"));
    }
    if cfg!(windows) {
        return std::env::var_os("APPDATA")
            .map(PathBuf::from)
            .ok_or_else(|| {
                Hinted::new("APPDATA is not set")
                    .hint("name the file: --config PATH")
                    .into()
            });
    }
    Ok(std::env::var_os("XDG_CONFIG_HOME")
        .filter(|dir| !dir.is_empty())
        .map_or_else(|| home.join(".config"), PathBuf::from))
}

/// How a client's file holds its servers.
#[derive(Debug, Clone, Copy)]
enum Format {
    /// A JSON object with the servers under `key`; VS Code's entries also say
    /// `"type": "stdio"`.
    Json { key: &'static str, typed: bool },
    /// Codex's TOML: a `[mcp_servers.NAME]` table.
    Toml,
}

impl Format {
    fn of(client: Client) -> Self {
        match client {
            Client::Vscode => Self::Json {
                key: "servers",
                typed: true,
            },
            Client::Codex => Self::Toml,
            _ => Self::Json {
                key: "mcpServers",
                typed: false,
            },
        }
    }

    fn language(self) -> &'static str {
        match self {
            Self::Json { .. } => "JSON",
            Self::Toml => "TOML",
        }
    }

    /// The server's entry as JSON (also what `--json` prints for Codex).
    fn entry(self, server: &Server) -> Value {
        let mut entry = Map::new();
        if let Self::Json { typed: true, .. } = self {
            entry.insert("type".into(), "stdio".into());
        }
        entry.insert("command".into(), server.command.clone().into());
        entry.insert("args".into(), server.args.clone().into());
        if let Some(options) = &server.options {
            entry.insert("env".into(), json!({ "MCP_TOOL_OPTIONS": options }));
        }
        Value::Object(entry)
    }

    /// The entry as it appears in the file, for `--dry-run` and for adding by hand.
    fn snippet(self, name: &str, server: &Server) -> String {
        match self {
            Self::Json { key, .. } => {
                let mut servers = Map::new();
                servers.insert(name.to_owned(), self.entry(server));
                serde_json::to_string_pretty(&json!({ key: servers })).unwrap_or_default()
            }
            Self::Toml => toml_table(name, server),
        }
    }

    /// `text` with the server `name` set to `server` (or removed, when `None`).
    fn edit(
        self,
        text: &str,
        name: &str,
        server: Option<&Server>,
    ) -> Result<(String, Action), String> {
        match self {
            Self::Json { key, .. } => {
                let mut root: Value = if text.trim().is_empty() {
                    json!({})
                } else {
                    serde_json::from_str(text).map_err(|error| error.to_string())?
                };
                let Value::Object(top) = &mut root else {
                    return Err("the file is not a JSON object".into());
                };
                let servers = top.entry(key).or_insert_with(|| json!({}));
                let Value::Object(servers) = servers else {
                    return Err(format!("`{key}` is not an object"));
                };
                let action = match server {
                    Some(server) => match servers.insert(name.to_owned(), self.entry(server)) {
                        Some(_) => Action::Replaced,
                        None => Action::Added,
                    },
                    None => match servers.shift_remove(name) {
                        Some(_) => Action::Removed,
                        None => Action::Absent,
                    },
                };
                let mut text = serde_json::to_string_pretty(&root).map_err(|e| e.to_string())?;
                text.push('\n');
                Ok((text, action))
            }
            Self::Toml => toml_edit(text, name, server),
        }
    }
}

/// Codex's `[mcp_servers.NAME]` (and `[mcp_servers.NAME.env]`) for `server`.
fn toml_table(name: &str, server: &Server) -> String {
    let key = toml_key(name);
    let string = |text: &str| toml::Value::String(text.to_owned()).to_string();
    let args: Vec<String> = server.args.iter().map(|arg| string(arg)).collect();
    let mut table = format!(
        "[mcp_servers.{key}]\ncommand = {}\nargs = [{}]\n",
        string(&server.command),
        args.join(", ")
    );
    if let Some(options) = &server.options {
        let _ = write!(
            table,
            "\n[mcp_servers.{key}.env]\nMCP_TOOL_OPTIONS = {}\n",
            string(options)
        );
    }
    table
}

/// A TOML key: bare when it can be, else quoted.
fn toml_key(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        name.to_owned()
    } else {
        toml::Value::String(name.to_owned()).to_string()
    }
}

/// Codex's file with the tables of server `name` replaced by `server`'s (or removed). The
/// file is parsed first, so one Toolsmith cannot read is left alone; the tables are found
/// by their headers, so the rest of the file (comments included) stays as it was.
fn toml_edit(text: &str, name: &str, server: Option<&Server>) -> Result<(String, Action), String> {
    let parsed: toml::Table = text
        .parse()
        .map_err(|error: toml::de::Error| error.message().to_owned())?;
    let present = parsed
        .get("mcp_servers")
        .and_then(|servers| servers.get(name))
        .is_some();
    let header = format!("[mcp_servers.{}", toml_key(name));
    let mut kept = String::new();
    let mut skipping = false;
    let mut found = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            let ours = trimmed
                .strip_prefix(&header)
                .is_some_and(|rest| rest.starts_with(']') || rest.starts_with('.'));
            skipping = ours;
            found |= ours;
        }
        if !skipping {
            kept.push_str(line);
        }
    }
    if present && !found {
        return Err(format!(
            "`mcp_servers.{name}` is not written as a `[mcp_servers.{name}]` table"
        ));
    }
    let action = match (server, present) {
        (Some(_), true) => Action::Replaced,
        (Some(_), false) => Action::Added,
        (None, true) => Action::Removed,
        (None, false) => return Ok((text.to_owned(), Action::Absent)),
    };
    if let Some(server) = server {
        let body = kept.trim_end();
        kept = if body.is_empty() {
            String::new()
        } else {
            format!("{body}\n\n")
        };
        kept.push_str(&toml_table(name, server));
    }
    Ok((kept, action))
}

/// Writes `text` to `path` through a temporary file in the same folder, keeping the old
/// file as `PATH.bak`.
fn write(path: &Path, existed: bool, text: &str) -> anyhow::Result<()> {
    let with_suffix = |suffix: &str| {
        let mut other = path.as_os_str().to_owned();
        other.push(suffix);
        PathBuf::from(other)
    };
    let steps = || -> std::io::Result<()> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        if existed {
            std::fs::copy(path, with_suffix(".bak"))?;
        }
        let temporary = with_suffix(".toolsmith-tmp");
        std::fs::write(&temporary, text)?;
        std::fs::rename(&temporary, path)
    };
    steps().with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(options: Option<&str>) -> Server {
        Server {
            command: "/usr/local/bin/toolsmith".into(),
            args: vec!["serve".into(), "/home/ada/tools".into()],
            options: options.map(str::to_owned),
        }
    }

    #[test]
    fn json_keeps_the_rest_of_the_file_and_replaces_its_own_entry() {
        let format = Format::of(Client::ClaudeCode);
        let text = r#"{"theme": "dark", "mcpServers": {"other": {"command": "x"}}}"#;
        let (text, action) = format.edit(text, "tools", Some(&server(None))).unwrap();
        assert_eq!(action, Action::Added);
        let (text, action) = format
            .edit(&text, "tools", Some(&server(Some("{}"))))
            .unwrap();
        assert_eq!(action, Action::Replaced);
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["theme"], "dark");
        assert_eq!(value["mcpServers"]["other"]["command"], "x");
        assert_eq!(
            value["mcpServers"]["tools"]["args"],
            json!(["serve", "/home/ada/tools"])
        );
        assert_eq!(
            value["mcpServers"]["tools"]["env"]["MCP_TOOL_OPTIONS"],
            "{}"
        );
        let (text, action) = format.edit(&text, "tools", None).unwrap();
        assert_eq!(action, Action::Removed);
        assert!(!text.contains("/home/ada/tools"), "{text}");
        assert_eq!(format.edit(&text, "tools", None).unwrap().1, Action::Absent);
    }

    #[test]
    fn vscode_entries_say_their_type() {
        let (text, _) = Format::of(Client::Vscode)
            .edit("", "tools", Some(&server(None)))
            .unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["servers"]["tools"]["type"], "stdio");
    }

    #[test]
    fn json_that_is_not_an_object_of_servers_is_refused() {
        let format = Format::of(Client::Cursor);
        assert!(
            format
                .edit("{ // comment\n}", "t", Some(&server(None)))
                .is_err()
        );
        assert!(format.edit("[]", "t", Some(&server(None))).is_err());
        assert!(
            format
                .edit(r#"{"mcpServers": 3}"#, "t", Some(&server(None)))
                .is_err()
        );
    }

    #[test]
    fn toml_replaces_only_its_own_tables() {
        let text = "# my settings\nmodel = \"o3\"\n\n[mcp_servers.tools]\ncommand = \"old\"\n\n[mcp_servers.tools.env]\nA = \"1\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let (edited, action) =
            toml_edit(text, "tools", Some(&server(Some(r#"{"a":{}}"#)))).unwrap();
        assert_eq!(action, Action::Replaced);
        assert!(
            edited.starts_with("# my settings\nmodel = \"o3\"\n"),
            "{edited}"
        );
        let parsed: toml::Table = edited.parse().unwrap();
        let tools = &parsed["mcp_servers"]["tools"];
        assert_eq!(tools["command"].as_str(), Some("/usr/local/bin/toolsmith"));
        assert_eq!(
            tools["env"]["MCP_TOOL_OPTIONS"].as_str(),
            Some(r#"{"a":{}}"#)
        );
        assert!(tools["env"].get("A").is_none());
        assert_eq!(
            parsed["mcp_servers"]["other"]["command"].as_str(),
            Some("x")
        );
        let (removed, action) = toml_edit(&edited, "tools", None).unwrap();
        assert_eq!(action, Action::Removed);
        let parsed: toml::Table = removed.parse().unwrap();
        assert!(parsed["mcp_servers"].get("tools").is_none());
        assert!(toml_edit("model = ", "tools", None).is_err());
    }
}
