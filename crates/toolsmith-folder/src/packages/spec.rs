//! `[packages.NAME]` of a host folder's `toolsmith.toml`, read into [`Spec`]s: where the
//! package is (`path`, or `git` with `rev`), the `prefix` its tools are published under and
//! what `allow` lets them hold. A table that cannot be used is a warning naming the key to
//! fix, and the other packages still load.

use std::path::{Path, PathBuf};

use serde_json::Value;
use toolsmith_model::{
    Diagnostic, JsonObject, PermissionFamily, Permissions, Severity, SourceLocation,
};

use crate::config::{CONFIG_FILE, FolderConfig};

/// The keys of a `[packages.NAME]` table.
const KEYS: &[&str] = &["path", "git", "rev", "prefix", "allow"];

/// Where a package's folder comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `path = "../weather-tools"`: a folder, relative to the host folder.
    Path(PathBuf),
    /// `git = "URL"`, `rev = "..."` (a branch, tag or commit; the remote's `HEAD` when
    /// not given), cloned into the cache and pinned in `toolsmith.lock`.
    Git {
        /// The repository, as `git clone` takes it.
        url: String,
        /// What to check out.
        rev: String,
    },
}

/// One `[packages.NAME]` table.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    /// `NAME`.
    pub(crate) key: String,
    pub(crate) source: Source,
    /// `prefix`, when given (`""` publishes the tools under their own names).
    pub(crate) prefix: Option<String>,
    /// `allow`: the most the package's tools may hold.
    pub(crate) allow: Permissions,
    /// `allow = {"commands" = true}`: whether the package's tools may run programs.
    pub(crate) commands: bool,
    /// Where the table is written, for diagnostics.
    pub(crate) location: SourceLocation,
}

/// The `[packages.NAME]` tables of `config` (the `toolsmith.toml` of `root`), by name, and
/// the problems with them (warnings).
pub(crate) fn parse(root: &Path, config: &FolderConfig) -> (Vec<Spec>, Vec<Diagnostic>) {
    let mut specs = Vec::new();
    let mut diagnostics = Vec::new();
    let Some(Value::Object(tables)) = config.raw.get("packages") else {
        return (specs, diagnostics);
    };
    let path = root.join(CONFIG_FILE);
    let source = crate::read::read_definition(&path).unwrap_or_default();
    let keys = crate::keys::toml_keys(&source);
    for (key, table) in tables {
        let location = crate::keys::key_location(&path, &source, &keys, &["packages", key]);
        let mut problem = |message: String, help: String| {
            let mut diagnostic =
                Diagnostic::error("invalid-config", location.clone(), message).with_help(help);
            diagnostic.severity = Severity::Warning;
            diagnostics.push(diagnostic);
        };
        let Value::Object(table) = table else {
            problem(
                format!("`packages.{key}` must be a table"),
                format!(
                    "write it as `[packages.{key}]` with `path = \"../{key}\"` or `git = \"URL\"`"
                ),
            );
            continue;
        };
        if let Some(spec) = spec(key, table, location.clone(), &mut problem) {
            specs.push(spec);
        }
    }
    (specs, diagnostics)
}

fn spec(
    key: &str,
    table: &JsonObject,
    location: SourceLocation,
    problem: &mut impl FnMut(String, String),
) -> Option<Spec> {
    for name in table.keys() {
        if !KEYS.contains(&name.as_str()) {
            let hint = toolsmith_model::names::suggestion(name, KEYS.iter().copied())
                .unwrap_or_else(|| format!("known keys: {}", KEYS.join(", ")));
            problem(format!("unknown key `{name}` in `[packages.{key}]`"), hint);
        }
    }
    let text = |name: &str, problem: &mut dyn FnMut(String, String)| match table.get(name) {
        None => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(other) => {
            problem(
                format!(
                    "`[packages.{key}] {name}` must be a string, got {}",
                    toolsmith_model::kind(other)
                ),
                format!("e.g. {name} = \"...\""),
            );
            None
        }
    };
    let path = text("path", problem);
    let git = text("git", problem);
    let rev = text("rev", problem);
    let prefix = text("prefix", problem);
    let source = match (path, git) {
        (Some(path), None) => {
            if rev.is_some() {
                problem(
                    format!("`[packages.{key}] rev` applies to `git` packages only; it is ignored"),
                    "remove `rev`, or give the package as `git = \"URL\"`".into(),
                );
            }
            Source::Path(PathBuf::from(path))
        }
        (None, Some(url)) => Source::Git {
            url,
            rev: rev.unwrap_or_else(|| "HEAD".to_owned()),
        },
        (Some(_), Some(_)) => {
            problem(
                format!("`[packages.{key}]` has both `path` and `git`; it is not loaded"),
                "keep one: `path` for a folder on this machine, `git` for a repository".into(),
            );
            return None;
        }
        (None, None) => {
            problem(
                format!("`[packages.{key}]` has neither `path` nor `git`; it is not loaded"),
                format!("add `path = \"../{key}\"` or `git = \"https://…\"` with `rev = \"v1.0\"`"),
            );
            return None;
        }
    };
    let (allow, commands) = match table.get("allow") {
        None => (Permissions::default(), false),
        Some(Value::Object(allow)) => (allowed(key, allow, problem), commands(key, allow, problem)),
        Some(other) => {
            problem(
                format!(
                    "`[packages.{key}] allow` must be a table, got {}",
                    toolsmith_model::kind(other)
                ),
                "e.g. allow = {\"net\" = [\"api.example.com\"], \"env\" = [\"API_KEY\"]}".into(),
            );
            (Permissions::default(), false)
        }
    };
    Some(Spec {
        key: key.to_owned(),
        source,
        prefix,
        allow,
        commands,
        location,
    })
}

/// `allow = {"net" = [...], "fs.read" = [...], "fs.write" = [...], "env" = [...]}`.
fn allowed(key: &str, allow: &JsonObject, problem: &mut impl FnMut(String, String)) -> Permissions {
    let mut permissions = Permissions::default();
    for (name, value) in allow {
        if name == COMMANDS {
            continue;
        }
        let Some(family) = PermissionFamily::parse(name) else {
            let families = PermissionFamily::ALL.map(PermissionFamily::name);
            let names = [families.as_slice(), &[COMMANDS]].concat();
            let hint = toolsmith_model::names::suggestion(name, names.iter().copied())
                .unwrap_or_else(|| format!("known permissions: {}", names.join(", ")));
            problem(
                format!("unknown permission `{name}` in `[packages.{key}] allow`"),
                hint,
            );
            continue;
        };
        let grants: Option<Vec<String>> = match value {
            Value::Array(items) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect(),
            _ => None,
        };
        match grants {
            Some(grants) => permissions.family_mut(family).extend(grants),
            None => problem(
                format!("`[packages.{key}] allow.\"{name}\"` must be a list of strings"),
                format!("e.g. \"{name}\" = [\"...\"]"),
            ),
        }
    }
    permissions
}

/// The key of `allow` that lets a package's tools run programs.
const COMMANDS: &str = "commands";

/// `allow = {"commands" = true}`: whether the package's tools may run programs (a
/// manifest's `command`, `worker` or `init`); anything but `true` is no.
fn commands(key: &str, allow: &JsonObject, problem: &mut impl FnMut(String, String)) -> bool {
    match allow.get(COMMANDS) {
        None => false,
        Some(Value::Bool(allowed)) => *allowed,
        Some(other) => {
            problem(
                format!(
                    "`[packages.{key}] allow.\"{COMMANDS}\"` must be `true` or `false`, got {}; the package's tools run no programs",
                    toolsmith_model::kind(other)
                ),
                format!("write `\"{COMMANDS}\" = true` to let them run, confined"),
            );
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> (Vec<Spec>, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE), text).unwrap();
        let (config, _) = FolderConfig::load(dir.path());
        let (specs, diagnostics) = parse(dir.path(), &config);
        (specs, diagnostics.into_iter().map(|d| d.message).collect())
    }

    #[test]
    fn reads_path_and_git_packages_with_their_allow() {
        let (specs, problems) = parsed(
            "[packages.weather]\npath = \"../weather\"\nprefix = \"wx\"\nallow = {\"net\" = [\"api.example.com\"], \"fs.read\" = [\"../data\"]}\n\n[packages.zoo]\ngit = \"https://example.com/geo.git\"\n",
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(specs[0].source, Source::Path("../weather".into()));
        assert_eq!(specs[0].prefix.as_deref(), Some("wx"));
        assert_eq!(specs[0].allow.net, ["api.example.com"]);
        assert_eq!(specs[0].allow.fs_read, ["../data"]);
        assert!(!specs[0].commands);
        assert_eq!(specs[0].location.line, 1);
        assert_eq!(
            specs[1].source,
            Source::Git {
                url: "https://example.com/geo.git".into(),
                rev: "HEAD".into()
            }
        );
        assert_eq!(specs[1].location.line, 6);
    }

    #[test]
    fn commands_are_allowed_only_by_true() {
        let (specs, problems) = parsed(
            "[packages.a]\npath = \"a\"\nallow = {\"commands\" = true, \"env\" = [\"KEY\"]}\n[packages.b]\npath = \"b\"\nallow = {\"commands\" = \"yes\"}\n",
        );
        assert!(specs[0].commands);
        assert_eq!(specs[0].allow.env, ["KEY"]);
        assert!(!specs[1].commands);
        assert_eq!(
            problems,
            [
                "`[packages.b] allow.\"commands\"` must be `true` or `false`, got a string; the package's tools run no programs"
            ]
        );
    }

    #[test]
    fn unusable_tables_say_what_to_fix() {
        let (specs, problems) = parsed(
            "[packages.a]\npath = \"a\"\ngit = \"b\"\n[packages.b]\nprefx = \"x\"\n[packages.c]\npath = \"c\"\nallow = {\"network\" = [\"x\"]}\n",
        );
        assert_eq!(specs.len(), 1);
        assert_eq!(
            problems,
            [
                "`[packages.a]` has both `path` and `git`; it is not loaded",
                "unknown key `prefx` in `[packages.b]`",
                "`[packages.b]` has neither `path` nor `git`; it is not loaded",
                "unknown permission `network` in `[packages.c] allow`",
            ]
        );
    }
}
