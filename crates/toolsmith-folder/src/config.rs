//! `toolsmith.toml`: server information, defaults and tool options for a folder
//! (docs/tools.md, docs/serve.md). Sections read elsewhere (`check`, `resources`) are kept
//! as raw tables; `[profiles]` is read by the `profiles` module, `[packages]` by the
//! `packages` module, `[upstream]` by the `upstreams` module, and `[package]` describes a folder used as a package.
//! `[auth]`, `[state]` and `[limits]` are read by the `serving` module.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use toolsmith_model::{
    Diagnostic, EvaluatorSettings, JsonObject, SearchSettings, Severity, SourceLocation, kind,
};

use crate::manifest::parse_toml;
use crate::profiles::{self, Profile};
use crate::settings::{evaluator_settings, search_settings};
use crate::{DEV_PROFILE, FolderError};

/// The file name of a folder's configuration.
pub const CONFIG_FILE: &str = "toolsmith.toml";

/// The keys of `[server]`, `[defaults]` and `[package]`, the sections read here key by key.
const SERVER_KEYS: &[&str] = &[
    "name",
    "version",
    "instructions",
    // The Server Card's (docs/http.md, "Server Card and AI Catalog").
    "registry_name",
    "title",
    "description",
    "website",
    "repository",
    // The MCP Bundle's (docs/bundle.md).
    "author",
    "icon",
    "license",
];
const DEFAULTS_KEYS: &[&str] = &["timeout", "load_timeout"];
const PACKAGE_KEYS: &[&str] = &["name", "publisher", "version", "description"];

const SECTIONS: &[&str] = &[
    "server",
    "defaults",
    "search",
    "evaluator",
    "options",
    "check",
    "resources",
    // `[skills] from_tools`: serve the skills `toolsmith skills` writes (docs/skills.md).
    "skills",
    "profiles",
    "packages",
    "package",
    "upstream",
    "auth",
    "state",
    "limits",
    // `[audit]`: `serve`'s audit log, read by the CLI (docs/http.md, "Audit log").
    "audit",
    "openapi",
    // Where OpenTelemetry traces go (docs/http.md, "Telemetry"): the `telemetry` module.
    "telemetry",
];

/// A folder's `toolsmith.toml` (all parts optional).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FolderConfig {
    /// `[server] name`: the server name clients show.
    pub name: Option<String>,
    /// `[server] version`.
    pub version: Option<String>,
    /// `[server] instructions`: sent to clients at initialization.
    pub instructions: Option<String>,
    /// `[defaults] timeout`: for tools that declare none.
    pub default_timeout: Option<Duration>,
    /// `[defaults] load_timeout`: how long a file's top level may run at load.
    pub load_timeout: Option<Duration>,
    /// `[options.TOOL]`: option values per tool.
    pub options: JsonObject,
    /// `[search]`: when tools go behind `tool_search`.
    pub search: SearchSettings,
    /// `[evaluator]`: code mode's `run_code` tool (docs/code-mode.md), with its options
    /// from `[options.run_code]` and `MCP_TOOL_OPTIONS` once the folder has loaded.
    pub evaluator: EvaluatorSettings,
    /// `[auth]`: the OAuth resource server (docs/auth.md); `None` without an `issuer`.
    pub auth: Option<toolsmith_model::OAuthSettings>,
    /// `[state]`: the state replicas share (docs/deploy.md).
    pub state: crate::serving::StateConfig,
    /// `[limits]`: rate limits and quotas (docs/limits.md).
    pub limits: toolsmith_model::LimitSettings,
    /// `[telemetry]`: where OpenTelemetry traces go (docs/http.md, "Telemetry").
    pub telemetry: toolsmith_model::telemetry::TelemetrySettings,
    /// `[profiles.NAME]`, by name (docs/profiles.md).
    pub profiles: BTreeMap<String, Profile>,
    /// The served profile's `scopes`, which every OAuth caller needs (docs/auth.md); empty
    /// without a profile.
    pub profile_scopes: Vec<String>,
    /// The whole file as JSON, for sections read elsewhere.
    pub raw: JsonObject,
    /// Where each key of the file is written, so that readers of `raw` can point at it.
    pub(crate) located: KeyLocations,
}

/// Where each key of a `toolsmith.toml` is written.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct KeyLocations {
    file: PathBuf,
    keys: Vec<(Vec<String>, SourceLocation)>,
}

impl KeyLocations {
    fn new(path: &Path, source: &str) -> Self {
        let keys = crate::keys::toml_keys(source);
        let located = keys
            .iter()
            .map(|key| {
                let at: Vec<&str> = key.path.iter().map(String::as_str).collect();
                (
                    key.path.clone(),
                    crate::keys::key_location(path, source, &keys, &at),
                )
            })
            .collect();
        Self {
            file: path.to_owned(),
            keys: located,
        }
    }

    /// The location of `key`, else of the nearest enclosing key written, else the file.
    fn locate(&self, key: &[&str]) -> SourceLocation {
        (1..=key.len())
            .rev()
            .find_map(|depth| {
                self.keys.iter().find(|(path, _)| {
                    path.iter()
                        .map(String::as_str)
                        .eq(key[..depth].iter().copied())
                })
            })
            .map_or_else(
                || SourceLocation::file(&self.file),
                |(_, location)| location.clone(),
            )
    }
}

impl FolderConfig {
    /// This configuration as profile `name` serves it: its `[server]`, `[search]` and
    /// `[evaluator]` settings where the profile sets them (docs/profiles.md).
    ///
    /// # Errors
    ///
    /// [`FolderError::UnknownProfile`] when there is no `[profiles.NAME]`.
    pub(crate) fn with_profile(&self, name: &str) -> Result<Self, FolderError> {
        let Some(profile) = self.profiles.get(name) else {
            let mut known: Vec<String> = self.profiles.keys().cloned().collect();
            known.push(DEV_PROFILE.to_owned());
            known.sort();
            return Err(FolderError::UnknownProfile {
                name: name.to_owned(),
                known,
            });
        };
        let mut config = self.clone();
        config.name = profile.server_name.clone().or(config.name);
        config.version = profile.version.clone().or(config.version);
        config.instructions = profile.instructions.clone().or(config.instructions);
        config.search = profile.search.unwrap_or(config.search);
        config.profile_scopes.clone_from(&profile.scopes);
        if let Some(evaluator) = &profile.evaluator {
            config.evaluator = EvaluatorSettings {
                // The options were resolved for the folder's tool name.
                options: config.evaluator.options.clone(),
                folder: config.evaluator.folder.clone(),
                ..evaluator.clone()
            };
        }
        Ok(config)
    }

    /// Reads `toolsmith.toml` in `root`, if there is one. Problems become diagnostics and
    /// the rest of the file still applies. The evaluator's settings name `root` as their
    /// folder.
    pub fn load(root: &Path) -> (Self, Vec<Diagnostic>) {
        let path = root.join(CONFIG_FILE);
        let (mut config, diagnostics) = match crate::read::read_definition(&path) {
            Ok(source) => Self::parse(&path, &source),
            Err(error) if error.is_not_found() => (Self::default(), Vec::new()),
            Err(error) => (
                Self::default(),
                vec![error.diagnostic(SourceLocation::file(&path))],
            ),
        };
        // Code mode's saved sessions are the folder's own (docs/code-mode.md, "Sessions").
        config.evaluator.folder =
            Some(std::fs::canonicalize(root).unwrap_or_else(|_| root.to_owned()));
        (config, diagnostics)
    }

    /// Where the key at `key` (`["check", "ignore"]`) is written: its line, at the key; the
    /// nearest enclosing key written when it is not, else the file.
    #[must_use]
    pub fn locate(&self, key: &[&str]) -> SourceLocation {
        self.located.locate(key)
    }

    /// Parses the text of a `toolsmith.toml`.
    pub fn parse(path: &Path, source: &str) -> (Self, Vec<Diagnostic>) {
        let mut diagnostics = Vec::new();
        let raw = match parse_toml(
            path,
            source,
            "invalid-config",
            "fix the TOML syntax; the folder loads with default settings meanwhile",
        ) {
            Ok(raw) => raw,
            Err(diagnostic) => return (Self::default(), vec![diagnostic]),
        };
        let located = KeyLocations::new(path, source);
        let mut config = Self {
            raw: raw.clone(),
            located: located.clone(),
            ..Self::default()
        };
        // Every problem points at the key it is about (its line and column), or at the
        // nearest enclosing key that is written.
        let mut problem = |key: &[&str], message: String, help: String| {
            let mut diagnostic =
                Diagnostic::error("invalid-config", located.locate(key), message).with_help(help);
            diagnostic.severity = Severity::Warning;
            diagnostics.push(diagnostic);
        };
        check_sections(&raw, &mut problem);
        let mut text = |section: &str, key: &str| match raw.get(section)?.get(key)? {
            Value::String(text) => Some(text.clone()),
            other => {
                problem(
                    &[section, key],
                    format!("`[{section}] {key}` must be a string, got {}", kind(other)),
                    format!("e.g. {key} = \"...\""),
                );
                None
            }
        };
        config.name = text("server", "name");
        config.version = text("server", "version");
        config.instructions = text("server", "instructions");
        for (key, slot, example) in [
            ("timeout", &mut config.default_timeout, "timeout = \"10s\""),
            (
                "load_timeout",
                &mut config.load_timeout,
                "load_timeout = \"2s\"",
            ),
        ] {
            if let Some(value) = raw.get("defaults").and_then(|d| d.get(key)) {
                match toolsmith_model::duration::parse(value) {
                    Ok(duration) => *slot = Some(duration),
                    Err(message) => problem(
                        &["defaults", key],
                        format!("`[defaults] {key}`: {message}"),
                        format!("e.g. {example}"),
                    ),
                }
            }
        }
        if let Some(Value::Object(options)) = raw.get("options") {
            config.options.clone_from(options);
        }
        if let Some(Value::Object(search)) = raw.get("search") {
            config.search = search_settings(
                search,
                SearchSettings::default(),
                "search",
                &mut |key, message, help| {
                    problem(&["search", key.unwrap_or_default()], message, help);
                },
            );
        }
        if let Some(evaluator) = raw.get("evaluator") {
            config.evaluator = evaluator_settings(
                evaluator,
                EvaluatorSettings::default(),
                "evaluator",
                &mut |key, message, help| {
                    problem(&["evaluator", key.unwrap_or_default()], message, help);
                },
            );
        }
        (config.auth, config.state, config.limits) = crate::serving::sections(&raw, &mut problem);
        if let Some(Value::Object(table)) = raw.get("telemetry") {
            config.telemetry = crate::telemetry::settings(table, &mut problem);
        }
        if let Some(Value::Object(table)) = raw.get("profiles") {
            let keys = crate::keys::toml_keys(source);
            config.profiles = profiles::parse(
                table,
                (config.search, &config.evaluator),
                (path, source, &keys),
                &mut |location, message, help| {
                    let mut diagnostic =
                        Diagnostic::error("invalid-config", location, message).with_help(help);
                    diagnostic.severity = Severity::Warning;
                    diagnostics.push(diagnostic);
                },
            );
        }
        (config, diagnostics)
    }
}

/// Warns about every section of `raw` (a whole `toolsmith.toml`) Toolsmith does not know,
/// every section that is not a table, and every unknown key of the sections read key by key
/// here (`[server]`, `[defaults]`, `[package]`); the others check their own keys.
fn check_sections(raw: &JsonObject, problem: &mut dyn FnMut(&[&str], String, String)) {
    for (section, value) in raw {
        if !SECTIONS.contains(&section.as_str()) {
            let hint =
                toolsmith_model::names::suggestion_as(section, SECTIONS.iter().copied(), |best| {
                    format!("[{best}]")
                })
                .unwrap_or_else(|| format!("known sections: {}", SECTIONS.join(", ")));
            problem(&[section], format!("unknown section `[{section}]`"), hint);
            continue;
        }
        match value {
            Value::Object(table) => {
                let known = match section.as_str() {
                    "server" => SERVER_KEYS,
                    "defaults" => DEFAULTS_KEYS,
                    "package" => PACKAGE_KEYS,
                    _ => continue,
                };
                for key in table.keys().filter(|key| !known.contains(&key.as_str())) {
                    let hint = toolsmith_model::names::suggestion(key, known.iter().copied())
                        .unwrap_or_else(|| format!("known keys: {}", known.join(", ")));
                    problem(
                        &[section, key],
                        format!("unknown key `{key}` in `[{section}]`"),
                        hint,
                    );
                }
            }
            _ => problem(
                &[section],
                format!("`{section}` must be a table, got {}", kind(value)),
                format!("write it as `[{section}]`"),
            ),
        }
    }
}

/// The `duplicate-tool-name` error for a tool of `tools` named as the evaluator `settings`
/// (of `root`'s `toolsmith.toml`) turns on (docs/code-mode.md): the tool is served, the
/// evaluator is not. It points at `[evaluator]` in `toolsmith.toml`, not at the tool's
/// file, which loaded fine (a reload keeps the old tools of a file with an error).
pub(crate) fn evaluator_clash(
    root: &Path,
    settings: &EvaluatorSettings,
    tools: &[std::sync::Arc<dyn toolsmith_model::Tool>],
) -> Option<Diagnostic> {
    if !settings.enabled {
        return None;
    }
    let tool = tools.iter().find(|tool| tool.name() == settings.name)?;
    let name = &settings.name;
    let path = root.join(CONFIG_FILE);
    let source = crate::read::read_definition(&path).unwrap_or_default();
    let keys = crate::keys::toml_keys(&source);
    let key: &[&str] = if keys.iter().any(|key| key.is(&["evaluator", "name"])) {
        &["evaluator", "name"]
    } else {
        &["evaluator"]
    };
    let location = crate::keys::key_location(&path, &source, &keys, key);
    Some(
        Diagnostic::error(
            "duplicate-tool-name",
            location,
            format!(
                "the code-mode evaluator is named `{name}`, as the tool at {} is; the tool is served and the evaluator is not",
                tool.definition().source
            ),
        )
        .with_help(format!(
            "rename the tool, or give the evaluator another name: `[evaluator] name = \"{name}_code\"`"
        ))
        .for_tool(name),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolsmith_model::{EvaluatorMode, SearchMode};

    #[test]
    fn reads_server_defaults_and_options() {
        let (config, diagnostics) = FolderConfig::parse(
            Path::new("toolsmith.toml"),
            "[server]\nname = \"weather\"\n[defaults]\ntimeout = \"5s\"\n[options.forecast_get]\nunits = \"metric\"\n",
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(config.name.as_deref(), Some("weather"));
        assert_eq!(config.default_timeout, Some(Duration::from_secs(5)));
        assert_eq!(config.options["forecast_get"], json!({"units": "metric"}));
    }

    #[test]
    fn reads_evaluator_settings_and_profile_overrides() {
        // `[evaluator]`, and a profile's `evaluator = true` or table.
        let (config, diagnostics) = FolderConfig::parse(
            Path::new("toolsmith.toml"),
            "[evaluator]\nmode = \"only\"\nname = \"code\"\n[profiles.off]\nevaluator = false\n[profiles.wide.evaluator]\nmode = \"alongside\"\n",
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert!(config.evaluator.enabled);
        assert_eq!(config.evaluator.mode, EvaluatorMode::Only);
        assert_eq!(config.evaluator.name, "code");
        let off = config.profiles["off"].evaluator.clone().unwrap();
        assert!(!off.enabled);
        let wide = config.profiles["wide"].evaluator.clone().unwrap();
        assert!(wide.enabled);
        assert_eq!(
            (wide.mode, wide.name.as_str()),
            (EvaluatorMode::Alongside, "code")
        );

        let (config, diagnostics) = FolderConfig::parse(
            Path::new("toolsmith.toml"),
            "[evaluator]\nmode = \"sometimes\"\nnmae = \"x\"\n",
        );
        assert!(config.evaluator.enabled);
        assert_eq!(config.evaluator.mode, EvaluatorMode::Alongside);
        let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "`[evaluator] mode` must be \"alongside\" or \"only\", got \"sometimes\"",
                "unknown key `nmae` in `[evaluator]`",
            ]
        );
    }

    #[test]
    fn reads_search_settings_and_warns_about_bad_ones() {
        let (config, diagnostics) = FolderConfig::parse(
            Path::new("toolsmith.toml"),
            "[search]\nmode = \"always\"\nbudget_tokens = 2000\n",
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(config.search.mode, SearchMode::Always);
        assert_eq!(config.search.budget_tokens, 2000);

        let (config, diagnostics) = FolderConfig::parse(
            Path::new("toolsmith.toml"),
            "[search]\nmode = \"sometimes\"\nbudget = 5\n",
        );
        assert_eq!(config.search, SearchSettings::default());
        let messages: Vec<_> = diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "unknown key `budget` in `[search]`",
                "`[search] mode` must be \"auto\", \"always\" or \"never\", got \"sometimes\"",
            ]
        );
        assert_eq!(
            diagnostics[0].help.as_deref(),
            Some("did you mean `budget_tokens`?")
        );
    }

    #[test]
    fn profiles_and_packages_are_read_and_a_typo_is_steered_to_them() {
        // Regression test: `[profiles]` and `[packages]` were
        // accepted and ignored in silence. (Both are read now: docs/profiles.md, docs/packages.md.)
        let (config, diagnostics) = FolderConfig::parse(
            Path::new("toolsmith.toml"),
            "[profiles.dev]\ntools = [\"x\"]\n[packages]\n[profilez]\n",
        );
        let messages: Vec<_> = diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages, ["unknown section `[profilez]`",]);
        assert_eq!(
            diagnostics[0].help.as_deref(),
            Some("did you mean `[profiles]`?")
        );
        assert!(diagnostics.iter().all(|d| d.severity == Severity::Warning));
        assert_eq!(config.profiles.keys().collect::<Vec<_>>(), ["dev"]);
    }

    #[test]
    fn reads_auth_state_and_limits() {
        // `[auth]`, `[limits]` and `[state]` in toolsmith.toml.
        let (config, diagnostics) = FolderConfig::parse(
            Path::new("toolsmith.toml"),
            "[auth]\nissuer = \"https://auth.example.com\"\nrequired_scopes = [\"tools\"]\nclock_skew = \"5s\"\n[state]\nurl = \"redis://127.0.0.1:6379/0\"\n[limits]\ncalls_per_minute = 60\nconcurrent_calls = 2\n[limits.tools]\nsearch = 10\n",
        );
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let auth = config.auth.unwrap();
        assert_eq!(auth.issuer, "https://auth.example.com");
        assert_eq!(auth.required_scopes, ["tools"]);
        assert_eq!(auth.clock_skew, Duration::from_secs(5));
        assert_eq!(auth.audience, None);
        assert_eq!(
            config.state.url.as_deref(),
            Some("redis://127.0.0.1:6379/0")
        );
        assert_eq!(config.limits.calls_per_minute, Some(60));
        assert_eq!(config.limits.concurrent_calls, Some(2));
        assert_eq!(config.limits.tools["search"], 10);

        let (config, diagnostics) = FolderConfig::parse(
            Path::new("toolsmith.toml"),
            "[auth]\naudience = \"x\"\n[limits]\ncalls_per_minute = 0\ncalls_per_minut = 3\n",
        );
        assert_eq!(config.auth, None);
        assert!(config.limits.is_empty());
        let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "`[auth]` has no `issuer`: it is ignored",
                "`[limits] calls_per_minute` must be a positive whole number, got 0",
                "unknown key `calls_per_minut` in `[limits]`",
            ]
        );
    }

    #[test]
    fn unknown_section_is_a_warning_with_a_suggestion() {
        let (_, diagnostics) =
            FolderConfig::parse(Path::new("toolsmith.toml"), "[sever]\nname = \"x\"\n");
        assert_eq!(diagnostics[0].message, "unknown section `[sever]`");
        assert_eq!(
            diagnostics[0].help.as_deref(),
            Some("did you mean `[server]`?")
        );
        assert_eq!(diagnostics[0].severity, Severity::Warning);
    }

    #[test]
    fn unknown_keys_of_every_section_are_warned_at_their_line_and_column() {
        // `[defaults] timout = "5s"` left the 30 s default in silence, and `[auth] isuer`
        // got no suggestion; config warnings all pointed at 1:1.
        let (config, diagnostics) = FolderConfig::parse(
            Path::new("toolsmith.toml"),
            "[server]\nname = \"x\"\n  nmae = \"y\"\n[defaults]\ntimout = \"5s\"\n[auth]\nisuer = \"https://a\"\n[package]\npublsher = \"me\"\n",
        );
        assert_eq!(config.default_timeout, None);
        let mut found: Vec<_> = diagnostics
            .iter()
            .map(|d| {
                (
                    d.location.line,
                    d.location.column,
                    d.message.as_str(),
                    d.help.as_deref().unwrap_or_default(),
                )
            })
            .collect();
        found.sort_unstable();
        assert_eq!(
            found,
            [
                (
                    3,
                    3,
                    "unknown key `nmae` in `[server]`",
                    "did you mean `name`?"
                ),
                (
                    5,
                    1,
                    "unknown key `timout` in `[defaults]`",
                    "did you mean `timeout`?"
                ),
                (
                    6,
                    1,
                    "`[auth]` has no `issuer`: it is ignored",
                    "name the authorization server, e.g. issuer = \"https://auth.example.com\""
                ),
                (
                    7,
                    1,
                    "unknown key `isuer` in `[auth]`",
                    "did you mean `issuer`?"
                ),
                (
                    9,
                    1,
                    "unknown key `publsher` in `[package]`",
                    "did you mean `publisher`?"
                ),
            ]
        );
        assert_eq!(
            config.locate(&["nowhere"]).line,
            SourceLocation::file("x").line
        );
    }
}
