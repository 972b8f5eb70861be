//! `toolsmith install`: an entry in an AI client's MCP configuration that starts
//! `toolsmith serve DIR`, or points at a server's URL (docs/install.md). The client table,
//! the paths, the entry shapes and the format writers are in `crate::install`; this file
//! turns the flags into one edit of one file and says what it did. `--list` is in
//! [`listing`].

mod listing;
mod skills;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::ExitStatus;
use crate::args::{InstallArgs, SkillGrouping};
use crate::error::Hinted;
use crate::folder;
use crate::install::clients::{Client, ClientSpec};
use crate::install::config_file::{ConfigFile, Edit, Updated};
use crate::install::entry::{self, EntryError, Server, Token};
use crate::install::files::{Action, Servers};
use crate::install::paths::{self, Os};
use crate::printer::Printer;

pub(crate) fn run(args: &InstallArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    if let Some(dir) = &args.list {
        let dir = dir.as_deref().or(args.folder.dir.as_deref());
        return listing::run(dir, args.json, printer);
    }
    let client = args.client.ok_or_else(|| {
        Hinted::new("name the client to install into")
            .hint("see them all: toolsmith install --list")
    })?;
    if args.skills {
        let by = args.by.unwrap_or(SkillGrouping::Profile);
        return skills::run(client, args, by, printer);
    }
    install_entry(client, args, printer)
}

/// An MCP server entry in the client's configuration file.
fn install_entry(
    client: Client,
    args: &InstallArgs,
    printer: Printer,
) -> anyhow::Result<ExitStatus> {
    let InstallArgs {
        folder,
        name,
        tool_options,
        profile,
        http,
        auth_token,
        auth_token_env,
        project,
        config,
        remove,
        dry_run,
        json,
        ..
    } = args;
    let spec = client.spec();
    let (name, server) = match http {
        Some(url) => {
            let token = match (auth_token, auth_token_env) {
                (Some(token), _) => Some(Token::Literal(token.clone())),
                (None, Some(var)) => Some(Token::Env(var.clone())),
                (None, None) => None,
            };
            url_server(url, name.as_deref(), token)?
        }
        None => stdio_server(
            folder.dir.as_deref(),
            name.as_deref(),
            tool_options.as_deref(),
            profile.as_deref(),
            *json,
            printer,
        )?,
    };
    let path = match config {
        Some(path) => path.clone(),
        None => config_path(spec, *project)?,
    };
    let entry = entry_for(spec, &name, &server)?;
    let updated = edit_file(spec, &path, &name, &entry, *remove, *dry_run)?;
    let action = updated.outcome;
    let diff = diff(updated.before.as_deref(), &updated.after, &path);
    if *json {
        let report = json!({
            "client": spec.id,
            "config": path,
            "name": name,
            "action": action.word(),
            "entry": entry,
            "dry_run": dry_run,
            "diff": diff,
            "backup": updated.backup,
        });
        printer.data(&serde_json::to_string_pretty(&report)?)?;
    } else {
        tell(
            spec,
            &path,
            &name,
            action,
            dry_run.then_some(diff.as_str()),
            printer,
        )?;
        if let Some(backup) = &updated.backup {
            printer.message(&format!(
                "the file as it was before toolsmith first changed it is kept in {}",
                backup.display()
            ));
        }
    }
    Ok(ExitStatus::Success)
}

/// Sets the entry `name` in the client's file at `path` (or takes it out, with `remove`),
/// through [`ConfigFile`], which keeps the file whole, its mode, owner and backups; with
/// `dry_run` only says what would change.
fn edit_file(
    spec: &ClientSpec,
    path: &Path,
    name: &str,
    entry: &Value,
    remove: bool,
    dry_run: bool,
) -> anyhow::Result<Updated<Action>> {
    let servers = Servers {
        key: spec.key,
        layout: spec.layout,
    };
    let edit = |before: Option<&str>| -> Result<Edit<Action>, Hinted> {
        let (text, action) = spec
            .format
            .edit(
                before.unwrap_or_default(),
                servers,
                name,
                (!remove).then_some(entry),
            )
            .map_err(|problem| {
                Hinted::new(format!(
                    "cannot edit {} as {}: {problem}; it is left as it is",
                    path.display(),
                    spec.format.language()
                ))
                .hint(format!(
                    "fix the file, or add the server by hand:\n{}",
                    spec.format.snippet(servers, name, entry)
                ))
            })?;
        let changes = !matches!(action, Action::Absent | Action::Unchanged);
        Ok(Edit {
            text: changes.then_some(text),
            outcome: action,
        })
    };
    let file = ConfigFile::new(path)?;
    let updated = if dry_run {
        file.preview(edit)?
    } else {
        file.update(edit)?
    };
    Ok(updated)
}

/// The entry of `server` for the client, or what to do instead when it cannot take one.
fn entry_for(spec: &ClientSpec, name: &str, server: &Server) -> anyhow::Result<Value> {
    entry::entry(spec, name, server).map_err(|problem| {
        let hint = match problem {
            EntryError::NoEnv => {
                "pass the token itself with --auth-token, which writes it into the file"
            }
            EntryError::NoHeaders => {
                "install it without a token, or put the server behind a proxy that adds it"
            }
            EntryError::LocalOnly => {
                "install the folder instead, so the client starts the server: toolsmith install CLIENT DIR"
            }
        };
        Hinted::new(format!(
            "cannot install a URL server into {}: {problem}",
            spec.name
        ))
        .hint(hint)
        .into()
    })
}

/// The server of a tools folder: this binary runs `serve` on it, and the name defaults to
/// the folder's.
fn stdio_server(
    dir: Option<&Path>,
    name: Option<&str>,
    tool_options: Option<&str>,
    profile: Option<&str>,
    json: bool,
    printer: Printer,
) -> anyhow::Result<(String, Server)> {
    // Loaded as the entry will serve it: an unknown profile fails here, not in the client.
    let loaded = folder::load_profile(dir, None, profile)?;
    let catalog = loaded.catalog();
    if !json {
        folder::report(printer, catalog.diagnostics());
    }
    let root = std::fs::canonicalize(loaded.root())?;
    let config = loaded.config();
    let profile_name = profile
        .and_then(|profile| config.profiles.get(profile))
        .and_then(|profile| profile.server_name.clone());
    let folder_name = || {
        config.name.clone().unwrap_or_else(|| {
            root.file_name()
                .map_or_else(|| "tools".to_owned(), |n| n.to_string_lossy().into_owned())
        })
    };
    // A profile without a `name` of its own is installed as `FOLDER-PROFILE`, so that two
    // profiles of one folder are two entries, not one replacing the other.
    let name = match (name, profile, profile_name) {
        (Some(name), _, _) => name.to_owned(),
        (None, Some(_), Some(own)) => own,
        (None, Some(profile), None) => format!("{}-{profile}", folder_name()),
        (None, None, _) => folder_name(),
    };
    check_name(&name)?;
    let options = match tool_options {
        Some(text) => Some(parse_tool_options(text)?),
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
    let mut args = vec!["serve".to_owned()];
    if let Some(profile) = profile {
        args.extend(["--profile".to_owned(), profile.to_owned()]);
    }
    args.push(root.to_string_lossy().into_owned());
    let env = options
        .map(|options| {
            (
                "MCP_TOOL_OPTIONS".to_owned(),
                Value::Object(options).to_string(),
            )
        })
        .into_iter()
        .collect();
    let server = Server::Stdio {
        command: program.to_string_lossy().into_owned(),
        args,
        env,
    };
    Ok((name, server))
}

/// The server at `url`; the name defaults to the URL's host.
fn url_server(
    url: &str,
    name: Option<&str>,
    token: Option<Token>,
) -> anyhow::Result<(String, Server)> {
    let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
    else {
        return Err(Hinted::new(format!(
            "--http takes an http:// or https:// URL, not `{url}`"
        ))
        .hint("e.g. --http https://tools.example.com/mcp")
        .into());
    };
    let host = rest.split(['/', ':', '?']).next().unwrap_or_default();
    let name = name.map_or_else(|| host.replace('.', "-"), str::to_owned);
    check_name(&name)?;
    let server = Server::Url {
        url: url.to_owned(),
        token,
    };
    Ok((name, server))
}

fn check_name(name: &str) -> anyhow::Result<()> {
    if name.trim().is_empty() {
        return Err(Hinted::new("the server name is empty")
            .hint("name it: --name my-tools")
            .into());
    }
    Ok(())
}

/// Says what was done, or with `dry_run` (the diff) what would be.
fn tell(
    spec: &ClientSpec,
    path: &Path,
    name: &str,
    action: Action,
    dry_run: Option<&str>,
    printer: Printer,
) -> std::io::Result<()> {
    let client = spec.name;
    let path = path.display();
    let preposition = if action == Action::Removed {
        "from"
    } else {
        "in"
    };
    match (action, dry_run) {
        (Action::Absent, _) => printer.message(&format!(
            "{client} has no MCP server `{name}` in {path}; nothing to remove"
        )),
        (Action::Unchanged, _) => printer.message(&format!(
            "{client} already has the MCP server `{name}` as it would be written in {path}; nothing to change"
        )),
        (_, Some(diff)) => {
            printer.message(&format!(
                "would {} the MCP server `{name}` {preposition} {path} ({client}):",
                action.word()
            ));
            printer.data(diff.trim_end())?;
        }
        (_, None) => {
            let done = match action {
                Action::Added => "added",
                Action::Replaced => "replaced",
                Action::Removed | Action::Absent | Action::Unchanged => "removed",
            };
            printer.message(&format!(
                "{done} the MCP server `{name}` {preposition} {path} ({client}); restart {client} to load it"
            ));
        }
    }
    Ok(())
}

/// A unified diff from the file as it is (or nothing) to `after`.
fn diff(before: Option<&str>, after: &str, path: &Path) -> String {
    let shown = path.display().to_string();
    let old = if before.is_some() {
        shown.as_str()
    } else {
        "/dev/null"
    };
    similar::TextDiff::from_lines(before.unwrap_or_default(), after)
        .unified_diff()
        .context_radius(3)
        .header(old, &shown)
        .to_string()
}

/// `--tool-options`: a JSON object of objects.
fn parse_tool_options(text: &str) -> anyhow::Result<Map<String, Value>> {
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

/// The client's configuration file on this machine: the user's, or with `project` the one
/// in the current folder.
fn config_path(spec: &ClientSpec, project: bool) -> anyhow::Result<PathBuf> {
    if project {
        let Some(file) = spec.project else {
            return Err(
                Hinted::new(format!("{} has no project configuration file", spec.name))
                    .hint("leave out --project to write the user's file")
                    .into(),
            );
        };
        return Ok(std::env::current_dir()?.join(file));
    }
    user_path(spec, Os::current()).map_err(|problem| {
        Hinted::new(problem)
            .hint("name the file: --config PATH")
            .into()
    })
}

/// The user's file of `spec` on `os`, or why there is none.
pub(crate) fn user_path(spec: &ClientSpec, os: Os) -> Result<PathBuf, String> {
    let Some(template) = os.pick(spec.user) else {
        let project = spec
            .project
            .map(|file| format!("; its project file is {file} (--project)"))
            .unwrap_or_default();
        return Err(format!(
            "{} has no user configuration file on {}{project}",
            spec.name,
            os.title()
        ));
    };
    paths::resolve(template, &paths::environment).map_err(|problem| {
        format!(
            "cannot tell where {}'s file is: {problem} (it is {template})",
            spec.name
        )
    })
}

/// Every client, for `--list` and the per-OS path tests.
fn clients() -> impl Iterator<Item = &'static ClientSpec> {
    Client::all().map(Client::spec)
}
