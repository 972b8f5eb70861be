//! `toolsmith upstream add`: writes `[upstream.NAME]` into a folder's toolsmith.toml and
//! tries the server once (docs/gateway.md). The table is read back the way the folder reads
//! it before anything is written, so what is written is what `serve` will accept.

use std::path::PathBuf;

use serde_json::{Map, Value, json};
use toolsmith_folder::CONFIG_FILE;
use toolsmith_upstream::{Upstream, UpstreamSpec};

use crate::ExitStatus;
use crate::args::{UpstreamAddArgs, UpstreamArgs, UpstreamCommand};
use crate::error::Hinted;
use crate::folder::DEFAULT_DIR;
use crate::install::files::toml::set_table;
use crate::printer::{Printer, plural};

pub(crate) fn run(args: &UpstreamArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let UpstreamArgs { action } = args;
    match action {
        UpstreamCommand::Add(args) => add(args, printer),
    }
}

fn add(args: &UpstreamAddArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let (root, name) = match args.words.as_slice() {
        [name] => (PathBuf::from(DEFAULT_DIR), name.as_str()),
        [dir, name, ..] => (PathBuf::from(dir), name.as_str()),
        [] => unreachable!("clap requires NAME"),
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(Hinted::new(format!("`{name}` cannot name an upstream"))
            .hint("use letters, digits, `_` and `-`, e.g. `github`")
            .into());
    }
    if !root.is_dir() {
        return Err(Hinted::new(format!("there is no folder `{}`", root.display()))
            .hint("name the tools folder first (`toolsmith upstream add DIR NAME …`), or make one with `toolsmith new`")
            .into());
    }
    let entry = entry(args)?;
    let spec = UpstreamSpec::parse(name, &entry, &root).map_err(Hinted::new)?;

    let path = root.join(CONFIG_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => {
            return Err(Hinted::new(format!("cannot read `{}`", path.display()))
                .caused_by(error)
                .into());
        }
    };
    if has_upstream(&text, name) {
        return Err(Hinted::new(format!(
            "`{}` already has `[upstream.{name}]`",
            path.display()
        ))
        .hint("edit that table, or pick another NAME")
        .into());
    }
    let written = set_table(&text, "upstream", name, Some(&entry)).map_err(|message| {
        Hinted::new(format!("cannot edit `{}`: {message}", path.display()))
            .hint("fix the file's TOML first (`toolsmith check` points at the line)")
    })?;
    std::fs::write(&path, written).map_err(|error| {
        Hinted::new(format!("cannot write `{}`", path.display())).caused_by(error)
    })?;
    printer.message(&format!(
        "added `[upstream.{name}]` to {}: its tools are served as `{}…`",
        path.display(),
        spec.prefix
    ));
    warn_of_secrets(printer, &entry);

    let tried = (!args.no_start).then(|| try_start(spec, printer));
    if args.json {
        let (tools, error) = match &tried {
            Some(Ok(tools)) => (json!(tools), Value::Null),
            Some(Err(error)) => (Value::Null, json!(error)),
            None => (Value::Null, Value::Null),
        };
        let document = json!({
            "file": path, "name": name, "entry": entry, "tools": tools, "error": error,
        });
        printer.data(&serde_json::to_string_pretty(&document)?)?;
    }
    Ok(match tried {
        Some(Err(_)) => ExitStatus::Findings,
        _ => ExitStatus::Success,
    })
}

/// The `[upstream.NAME]` table the flags describe, as JSON.
fn entry(args: &UpstreamAddArgs) -> anyhow::Result<Value> {
    let mut entry = Map::new();
    if let Some(url) = &args.url {
        entry.insert("url".into(), json!(url));
        let headers = headers(&args.headers)?;
        if !headers.is_empty() {
            entry.insert("headers".into(), Value::Object(headers));
        }
    } else {
        entry.insert("command".into(), json!(args.command));
        let mut env = Map::new();
        for pair in &args.env {
            let Some((name, value)) = pair.split_once('=') else {
                return Err(Hinted::new(format!("`--env {pair}` must be `NAME=VALUE`"))
                    .hint("e.g. `--env 'GITHUB_TOKEN=${GITHUB_TOKEN}'`")
                    .into());
            };
            env.insert(name.to_owned(), json!(value));
        }
        if !env.is_empty() {
            entry.insert("env".into(), Value::Object(env));
        }
    }
    if let Some(prefix) = &args.prefix {
        entry.insert("prefix".into(), json!(prefix));
    }
    Ok(Value::Object(entry))
}

/// `--header 'NAME: VALUE'` flags as a table (`check --url` reads them the same way).
pub(crate) fn headers(flags: &[String]) -> anyhow::Result<Map<String, Value>> {
    flags
        .iter()
        .map(|header| {
            let (name, value) = header.split_once(':').ok_or_else(|| {
                Hinted::new(format!("`--header {header}` must be `NAME: VALUE`"))
                    .hint("e.g. `--header 'Authorization: Bearer ${TOKEN}'`")
            })?;
            Ok((name.trim().to_owned(), json!(value.trim())))
        })
        .collect()
}

fn has_upstream(text: &str, name: &str) -> bool {
    text.parse::<toml::Table>().is_ok_and(|table| {
        table
            .get("upstream")
            .and_then(toml::Value::as_table)
            .is_some_and(|upstreams| upstreams.contains_key(name))
    })
}

/// A header or variable whose value names no `${VAR}` but looks like a credential is
/// written into a file that may be committed: say so.
fn warn_of_secrets(printer: Printer, entry: &Value) {
    for key in ["headers", "env"] {
        let Some(Value::Object(values)) = entry.get(key) else {
            continue;
        };
        for (name, value) in values {
            let value = value.as_str().unwrap_or_default();
            let lower = name.to_ascii_lowercase();
            let sensitive = ["authorization", "token", "key", "secret", "password"]
                .iter()
                .any(|word| lower.contains(word));
            if sensitive && !value.contains("${") {
                printer.warning(&format!(
                    "`{key}.{name}` holds its value in the file; write `${{VAR}}` to read it from the environment instead"
                ));
            }
        }
    }
}

/// Starts the server once and lists its tools; what went wrong, as one message, if not.
fn try_start(spec: UpstreamSpec, printer: Printer) -> Result<Vec<String>, String> {
    let target = spec.target();
    printer.message(&format!("starting `{target}` to list its tools …"));
    let prefix = spec.prefix.clone();
    let listed = Upstream::new(spec).list_once();
    match listed {
        Ok(tools) => {
            let names: Vec<String> = tools
                .iter()
                .map(|tool| format!("{prefix}{}", tool.name))
                .collect();
            let shown: Vec<&str> = names.iter().take(8).map(String::as_str).collect();
            let more = names.len().saturating_sub(shown.len());
            printer.message(&format!(
                "{} tool{}: {}{}",
                names.len(),
                plural(names.len()),
                shown.join(", "),
                if more > 0 {
                    format!(", and {more} more")
                } else {
                    String::new()
                }
            ));
            Ok(names)
        }
        Err(error) => {
            printer.warning(&format!(
                "the entry is written, but the server did not start: {error}"
            ));
            printer.hint(
                "fix the command (or set its variables) and run `toolsmith list` to try again",
            );
            Err(error.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_table_is_found() {
        assert!(has_upstream(
            "[upstream.github]\nurl = \"https://x/mcp\"\n",
            "github"
        ));
        assert!(!has_upstream(
            "[upstream.linear]\nurl = \"https://x/mcp\"\n",
            "github"
        ));
        assert!(!has_upstream("", "github"));
    }

    #[test]
    fn headers_are_name_colon_value() {
        let parsed = headers(&["Authorization: Bearer ${T}".into()]).unwrap();
        assert_eq!(parsed["Authorization"], "Bearer ${T}");
        assert!(headers(&["no colon".into()]).is_err());
    }
}
