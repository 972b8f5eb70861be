//! `[profiles.NAME]` in `toolsmith.toml`: named servers made of a folder's tools, prompts
//! and resources, each with its own server settings (docs/profiles.md).
//!
//! A [`Profile`] is parsed with the rest of the configuration ([`FolderConfig`]) and
//! applied to a loaded folder by [`ToolFolder::with_profile`]: the catalog keeps the tools
//! the profile selects, the prompts and resources likewise, and the profile's `[server]`
//! and `[search]` settings replace the folder's. A selector that matches nothing is a
//! warning at the profile's line in `toolsmith.toml`; the rest of the profile serves.
//!
//! [`FolderConfig`]: crate::FolderConfig
//! [`ToolFolder::with_profile`]: crate::ToolFolder::with_profile

use std::collections::BTreeMap;
use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};
use serde_json::Value;
use toolsmith_model::{
    Catalog, Diagnostic, EvaluatorSettings, JsonObject, Key, Prompts, Resources, SearchSettings,
    Severity, SourceLocation, ToolDefinition, kind,
};

use crate::keys::key_location;

/// The built-in profile that adds tools for writing tools (docs/profiles.md, "The
/// toolsmith-dev profile"); it selects every tool of the folder.
pub const DEV_PROFILE: &str = "toolsmith-dev";

/// The rule of the warning for a profile's entry that selects nothing.
pub const PROFILE_PROBLEM: &str = "unknown-profile-entry";

/// The keys a `[profiles.NAME]` table may have.
const KEYS: &[&str] = &[
    "description",
    "tools",
    "prompts",
    "resources",
    "skills",
    "discoverable",
    "name",
    "version",
    "instructions",
    "search",
    "evaluator",
    "scopes",
];

/// One `[profiles.NAME]`: which tools, prompts and resources it serves and the server
/// settings it replaces.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// The profile's name (the key of `[profiles.NAME]`).
    pub name: String,
    /// `description`: what the profile is for, shown by `toolsmith list --profiles`.
    pub description: Option<String>,
    /// `tools`: what it serves; `None` (no `tools` key) serves every tool.
    tools: Option<Vec<Selector>>,
    /// `prompts`: names or globs; `None` serves every prompt.
    prompts: Option<Vec<Selector>>,
    /// `resources`: URIs, names or globs of either; `None` serves every resource.
    resources: Option<Vec<Selector>>,
    /// `skills`: skill names or globs; `None` serves every skill (docs/skills.md).
    skills: Option<Vec<Selector>>,
    /// `discoverable`: tools this profile puts behind `tool_search`.
    discoverable: Vec<Selector>,
    /// `name`: the server name clients show, instead of `[server] name`.
    pub server_name: Option<String>,
    /// `version`, instead of `[server] version`.
    pub version: Option<String>,
    /// `instructions`, instead of `[server] instructions`.
    pub instructions: Option<String>,
    /// `[profiles.NAME.search]`: the folder's `[search]` with the keys this one sets.
    pub search: Option<SearchSettings>,
    /// `evaluator`: `true`, `false` or `[profiles.NAME.evaluator]`, the folder's
    /// `[evaluator]` with the keys this one sets (docs/code-mode.md).
    pub evaluator: Option<EvaluatorSettings>,
    /// `scopes`: the OAuth scopes every caller of the server this profile makes needs,
    /// besides `[auth] required_scopes` (docs/auth.md).
    pub scopes: Vec<String>,
    /// Where `[profiles.NAME]` is written.
    location: SourceLocation,
}

/// One entry of a profile's `tools` (or `prompts`, `resources`, `discoverable`) list.
#[derive(Debug, Clone)]
struct Selector {
    /// As written.
    text: String,
    pattern: Pattern,
    /// Where it is written in `toolsmith.toml`.
    location: SourceLocation,
}

impl PartialEq for Selector {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.location == other.location
    }
}

#[derive(Debug, Clone)]
enum Pattern {
    /// A name (or a qualified name `publisher/package/tool`, or a resource URI).
    Exact(String),
    /// A name with `*`, `?` or `[...]` in it: `github_*`, `acme/weather/*`.
    Glob(GlobMatcher),
    /// `tag:NAME`: the tools tagged NAME.
    Tag(String),
}

impl Selector {
    /// Whether it selects `tool`: by name, qualified name or tag.
    fn selects_tool(&self, tool: &ToolDefinition) -> bool {
        match &self.pattern {
            Pattern::Tag(tag) => tool.tags.iter().any(|t| t == tag),
            _ => {
                self.matches(&tool.name)
                    || tool
                        .qualified_name()
                        .is_some_and(|qualified| self.matches(&qualified))
            }
        }
    }

    /// Whether the name (or URI) `text` matches; a tag matches no prompt or resource.
    fn matches(&self, text: &str) -> bool {
        match &self.pattern {
            Pattern::Exact(exact) => exact == text,
            Pattern::Glob(glob) => glob.is_match(text),
            Pattern::Tag(_) => false,
        }
    }
}

/// Reads every `[profiles.NAME]` of `profiles` (the `[profiles]` table of the file at
/// `path`, whose text is `source` and keys `keys`). A problem is a warning passed to
/// `problem(location, message, help)`, and the rest of the profile still applies.
pub(crate) fn parse(
    profiles: &JsonObject,
    folder: (SearchSettings, &EvaluatorSettings),
    file: (&Path, &str, &[Key]),
    problem: &mut dyn FnMut(SourceLocation, String, String),
) -> BTreeMap<String, Profile> {
    let (path, source, keys) = file;
    let mut parsed = BTreeMap::new();
    for (name, table) in profiles {
        let location = key_location(path, source, keys, &["profiles", name]);
        let Value::Object(table) = table else {
            problem(
                location,
                format!("`profiles.{name}` must be a table, got {}", kind(table)),
                format!("write it as `[profiles.{name}]` with a `tools` list"),
            );
            continue;
        };
        if name == DEV_PROFILE {
            problem(
                location,
                format!(
                    "`[profiles.{DEV_PROFILE}]` is the name of the built-in profile; it is ignored"
                ),
                "give your profile another name".to_owned(),
            );
            continue;
        }
        let profile = parse_one(name, table, location, folder, file, problem);
        parsed.insert(name.clone(), profile);
    }
    parsed
}

/// One `[profiles.NAME]` table (see [`parse`]).
#[expect(
    clippy::too_many_lines,
    reason = "one match arm per profile key, read top to bottom"
)]
fn parse_one(
    name: &str,
    table: &JsonObject,
    location: SourceLocation,
    (folder_search, folder_evaluator): (SearchSettings, &EvaluatorSettings),
    (path, source, keys): (&Path, &str, &[Key]),
    problem: &mut dyn FnMut(SourceLocation, String, String),
) -> Profile {
    let mut profile = Profile {
        name: name.to_owned(),
        description: None,
        tools: None,
        prompts: None,
        resources: None,
        skills: None,
        discoverable: Vec::new(),
        server_name: None,
        version: None,
        instructions: None,
        search: None,
        evaluator: None,
        scopes: Vec::new(),
        location,
    };
    for (key, value) in table {
        let at = |keys: &[Key], more: &[&str]| {
            let mut full = vec!["profiles", name, key.as_str()];
            full.extend_from_slice(more);
            key_location(path, source, keys, &full)
        };
        let mut text = |slot: &mut Option<String>| match value {
            Value::String(text) => *slot = Some(text.clone()),
            other => problem(
                at(keys, &[]),
                format!(
                    "`profiles.{name}.{key}` must be a string, got {}",
                    kind(other)
                ),
                format!("e.g. {key} = \"...\""),
            ),
        };
        match key.as_str() {
            "description" => text(&mut profile.description),
            "name" => text(&mut profile.server_name),
            "version" => text(&mut profile.version),
            "instructions" => text(&mut profile.instructions),
            "tools" | "prompts" | "resources" | "skills" | "discoverable" => {
                let selectors = selectors(
                    value,
                    &format!("profiles.{name}.{key}"),
                    problem,
                    (at(keys, &[]), |index: usize| {
                        at(keys, &[&index.to_string()])
                    }),
                );
                match key.as_str() {
                    "tools" => profile.tools = Some(selectors),
                    "prompts" => profile.prompts = Some(selectors),
                    "resources" => profile.resources = Some(selectors),
                    "skills" => profile.skills = Some(selectors),
                    _ => profile.discoverable = selectors,
                }
            }
            "scopes" => profile.scopes = scopes(value, name, at(keys, &[]), problem),
            "evaluator" => {
                let here = at(keys, &[]);
                profile.evaluator = Some(crate::settings::evaluator_settings(
                    value,
                    folder_evaluator.clone(),
                    &format!("profiles.{name}.evaluator"),
                    &mut |inner, message, help| {
                        let location =
                            inner.map_or_else(|| here.clone(), |inner| at(keys, &[inner]));
                        problem(location, message, help);
                    },
                ));
            }
            "search" => match value {
                Value::Object(search) => {
                    let here = at(keys, &[]);
                    profile.search = Some(crate::settings::search_settings(
                        search,
                        folder_search,
                        &format!("profiles.{name}.search"),
                        &mut |inner, message, help| {
                            let location =
                                inner.map_or_else(|| here.clone(), |inner| at(keys, &[inner]));
                            problem(location, message, help);
                        },
                    ));
                }
                other => problem(
                    at(keys, &[]),
                    format!(
                        "`profiles.{name}.search` must be a table, got {}",
                        kind(other)
                    ),
                    format!(
                        "write it as `[profiles.{name}.search]` with `mode` and `budget_tokens`"
                    ),
                ),
            },
            _ => {
                let hint = toolsmith_model::names::suggestion(key, KEYS.iter().copied())
                    .unwrap_or_else(|| format!("known keys: {}", KEYS.join(", ")));
                problem(
                    at(keys, &[]),
                    format!("unknown key `{key}` in `[profiles.{name}]`"),
                    hint,
                );
            }
        }
    }
    profile
}

/// `scopes` of `[profiles.NAME]`: a list of strings, else a warning and none.
fn scopes(
    value: &Value,
    name: &str,
    location: SourceLocation,
    problem: &mut dyn FnMut(SourceLocation, String, String),
) -> Vec<String> {
    let scopes = value.as_array().and_then(|items| {
        items
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
    });
    scopes.unwrap_or_else(|| {
        problem(
            location,
            format!(
                "`profiles.{name}.scopes` must be a list of strings, got {}",
                kind(value)
            ),
            "e.g. scopes = [\"tickets:write\"]".to_owned(),
        );
        Vec::new()
    })
}

/// The selectors of a list of strings; an entry that is not a string, or a glob that does
/// not parse, is a warning and left out.
fn selectors(
    value: &Value,
    what: &str,
    problem: &mut dyn FnMut(SourceLocation, String, String),
    (whole, at): (SourceLocation, impl Fn(usize) -> SourceLocation),
) -> Vec<Selector> {
    let Value::Array(items) = value else {
        problem(
            whole,
            format!("`{what}` must be a list of strings, got {}", kind(value)),
            format!(
                "e.g. {} = [\"github_*\", \"tag:search\"]",
                what.rsplit('.').next().unwrap_or(what)
            ),
        );
        return Vec::new();
    };
    let mut selectors = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let location = at(index);
        let Value::String(text) = item else {
            problem(
                location,
                format!("`{what}` entries must be strings, got {}", kind(item)),
                "write a name, a glob such as `github_*`, or `tag:NAME`".to_owned(),
            );
            continue;
        };
        let pattern = if let Some(tag) = text.strip_prefix("tag:") {
            Pattern::Tag(tag.to_owned())
        } else if text.contains(['*', '?', '[', '{']) {
            match GlobBuilder::new(text).literal_separator(false).build() {
                Ok(glob) => Pattern::Glob(glob.compile_matcher()),
                Err(error) => {
                    problem(
                        location,
                        format!("`{what}`: `{text}` is not a valid glob: {}", error.kind()),
                        "`*` matches any run of characters, `?` one, `[abc]` one of a set"
                            .to_owned(),
                    );
                    continue;
                }
            }
        } else {
            Pattern::Exact(text.clone())
        };
        selectors.push(Selector {
            text: text.clone(),
            pattern,
            location,
        });
    }
    selectors
}

impl Profile {
    /// What this profile serves out of a folder's whole `catalog`, `prompts` and
    /// `resources`, plus a warning for each of its selectors that matches nothing.
    pub(crate) fn apply(
        &self,
        catalog: &Catalog,
        prompts: &Prompts,
        resources: &Resources,
    ) -> (Catalog, Prompts, Resources) {
        let mut diagnostics = Vec::new();
        for selector in self.tools.iter().flatten().chain(&self.discoverable) {
            if !catalog
                .definitions()
                .any(|tool| selector.selects_tool(tool))
            {
                diagnostics.push(self.unmatched_tool(selector, catalog));
            }
        }
        let prompts = match &self.prompts {
            None => prompts.clone(),
            Some(selectors) => {
                let names = || prompts.list().iter().map(|prompt| prompt.name.as_str());
                for selector in selectors {
                    if !names().any(|name| selector.matches(name)) {
                        diagnostics.push(self.unmatched(selector, "prompt", names()));
                    }
                }
                Prompts::new(
                    prompts
                        .list()
                        .iter()
                        .filter(|prompt| selectors.iter().any(|s| s.matches(&prompt.name)))
                        .cloned()
                        .collect(),
                )
            }
        };
        let resources = match &self.resources {
            None => resources.clone(),
            Some(selectors) => {
                // A resource is selected by its URI or its name, a template by its URI
                // template or its name.
                let keys = || {
                    let plain = resources
                        .list()
                        .iter()
                        .map(|r| (r.uri.as_str(), r.info.name.as_str()));
                    let templates = resources
                        .templates()
                        .iter()
                        .map(|t| (t.uri_template.as_str(), t.info.name.as_str()));
                    plain.chain(templates)
                };
                let selects = |selector: &Selector, (uri, name): (&str, &str)| {
                    selector.matches(uri) || selector.matches(name)
                };
                for selector in selectors {
                    if !keys().any(|key| selects(selector, key)) {
                        diagnostics.push(self.unmatched(
                            selector,
                            "resource",
                            keys().map(|(uri, _)| uri),
                        ));
                    }
                }
                let kept = |key: (&str, &str)| selectors.iter().any(|s| selects(s, key));
                // Skills are selected by `skills`, their files with them.
                let files = resources
                    .skills()
                    .iter()
                    .flat_map(|skill| resources.skill_files(skill))
                    .collect();
                Resources::new(
                    resources
                        .list()
                        .iter()
                        .filter(|r| !resources.is_skill_file(&r.uri))
                        .filter(|r| kept((&r.uri, &r.info.name)))
                        .cloned()
                        .collect(),
                    resources
                        .templates()
                        .iter()
                        .filter(|t| kept((t.uri_template.as_str(), &t.info.name)))
                        .cloned()
                        .collect(),
                )
                .with_skills(resources.skills().to_vec(), files)
            }
        };
        let resources = match &self.skills {
            None => resources,
            Some(selectors) => self.select_skills(&resources, selectors, &mut diagnostics),
        };
        // Without tool selectors, no definition is read (a big folder's are not held).
        let selected = self.tools.as_ref().map(|tools| {
            catalog.selected(|tool| tools.iter().any(|selector| selector.selects_tool(tool)))
        });
        let catalog = selected.as_ref().unwrap_or(catalog).derive(
            |entry| {
                entry.discoverable()
                    || (!self.discoverable.is_empty() && {
                        let definition = entry.definition_once();
                        self.discoverable
                            .iter()
                            .any(|selector| selector.selects_tool(&definition))
                    })
            },
            Vec::new(),
            diagnostics,
        );
        (catalog, prompts, resources)
    }

    /// `resources` with only the skills `selectors` name (and their files), plus a warning
    /// for each selector that matches no skill.
    fn select_skills(
        &self,
        resources: &Resources,
        selectors: &[Selector],
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Resources {
        let names = || resources.skills().iter().map(|skill| skill.name.as_str());
        for selector in selectors {
            if !names().any(|name| selector.matches(name)) {
                diagnostics.push(self.unmatched(selector, "skill", names()));
            }
        }
        let kept: Vec<_> = resources
            .skills()
            .iter()
            .filter(|skill| selectors.iter().any(|s| s.matches(&skill.name)))
            .cloned()
            .collect();
        let files = kept
            .iter()
            .flat_map(|skill| resources.skill_files(skill))
            .collect();
        Resources::new(
            resources
                .list()
                .iter()
                .filter(|r| !resources.is_skill_file(&r.uri))
                .cloned()
                .collect(),
            resources.templates().to_vec(),
        )
        .with_skills(kept, files)
    }

    /// Where `[profiles.NAME]` is written.
    pub fn location(&self) -> &SourceLocation {
        &self.location
    }

    /// The warning for a tool selector that matches no loaded tool: when a tool of that
    /// name failed to load, why; else the close names.
    fn unmatched_tool(&self, selector: &Selector, catalog: &Catalog) -> Diagnostic {
        // Only a tool a diagnostic names for certain: a file that did not parse may define
        // any name, and the help below says so without claiming this one.
        if let Pattern::Exact(name) = &selector.pattern
            && catalog.diagnostics().iter().any(|d| d.names_tool(name))
            && let Err(unknown) = catalog.lookup(name)
            && let Some(reason) = unknown.reason
        {
            return warning(
                selector,
                format!(
                    "profile `{}` names tool `{name}`, which is not served: {reason}",
                    self.name
                ),
                "fix the tool's file; the rest of the profile serves meanwhile".to_owned(),
            );
        }
        let mut diagnostic = self.unmatched(
            selector,
            "tool",
            catalog.definitions().map(|tool| tool.name.as_str()),
        );
        // A file that failed to load may be where the tool was meant to come from.
        let broken: Vec<String> = catalog
            .diagnostics()
            .iter()
            // A file that names no tool, or one that did not parse (it may define any name).
            .filter(|d| {
                d.severity == Severity::Error && matches!(d.tool.as_deref(), None | Some("*"))
            })
            .map(|d| format!("`{}`", d.location.path.display()))
            .collect();
        let suggested = toolsmith_model::names::suggestion(
            &selector.text,
            catalog.definitions().map(|tool| tool.name.as_str()),
        )
        .is_some();
        if !broken.is_empty() && !suggested && matches!(selector.pattern, Pattern::Exact(_)) {
            diagnostic.help = Some(format!(
                "{} failed to load; if the tool is defined there, fix that file",
                broken.join(", ")
            ));
        }
        diagnostic
    }

    /// The warning for a selector that matches nothing of `what`, with a did-you-mean
    /// over the `known` names.
    fn unmatched<'a>(
        &self,
        selector: &Selector,
        what: &str,
        known: impl Iterator<Item = &'a str>,
    ) -> Diagnostic {
        let message = match &selector.pattern {
            Pattern::Exact(name) => format!(
                "profile `{}` names {what} `{name}`, which does not exist",
                self.name
            ),
            Pattern::Glob(_) => format!(
                "profile `{}`: `{}` matches no {what}",
                self.name, selector.text
            ),
            Pattern::Tag(tag) => format!("profile `{}`: no tool is tagged `{tag}`", self.name),
        };
        let help = match &selector.pattern {
            Pattern::Tag(_) => None,
            _ => toolsmith_model::names::suggestion(&selector.text, known),
        }
        .unwrap_or_else(|| format!("run `toolsmith list` to see the folder's {what}s"));
        warning(selector, message, help)
    }
}

/// A warning at `selector`'s entry in `toolsmith.toml`.
fn warning(selector: &Selector, message: String, help: String) -> Diagnostic {
    let mut diagnostic =
        Diagnostic::error(PROFILE_PROBLEM, selector.location.clone(), message).with_help(help);
    diagnostic.severity = Severity::Warning;
    diagnostic
}

#[cfg(test)]
mod tests {
    use toolsmith_model::{PackageOrigin, SearchMode};

    use super::*;
    use crate::FolderConfig;

    fn config(text: &str) -> (FolderConfig, Vec<String>) {
        let (config, diagnostics) = FolderConfig::parse(Path::new("toolsmith.toml"), text);
        let messages = diagnostics
            .iter()
            .map(|d| {
                format!(
                    "{}:{}: {} ({})",
                    d.location.line,
                    d.location.column,
                    d.message,
                    d.help.clone().unwrap_or_default()
                )
            })
            .collect();
        (config, messages)
    }

    fn tool(name: &str, tags: &[&str]) -> ToolDefinition {
        let mut tool = ToolDefinition::new(name, "A tool.", JsonObject::new());
        tool.tags = tags.iter().map(|&tag| tag.to_owned()).collect();
        tool
    }

    #[test]
    fn selectors_match_names_globs_tags_and_qualified_names() {
        // Names, globs, `tag:NAME` and qualified package names.
        let (config, problems) = config(
            "[profiles.p]\ntools = [\"hello\", \"github_*\", \"tag:search\", \"acme/weather/*\"]\n",
        );
        assert_eq!(problems, Vec::<String>::new());
        let profile = &config.profiles["p"];
        let selects = |tool: &ToolDefinition| {
            profile
                .tools
                .iter()
                .flatten()
                .any(|selector| selector.selects_tool(tool))
        };
        assert!(selects(&tool("hello", &[])));
        assert!(selects(&tool("github_search", &[])));
        assert!(selects(&tool("notes_find", &["search"])));
        let mut packaged = tool("weather_forecast_get", &[]);
        packaged.package = Some(Box::new(PackageOrigin {
            publisher: "acme".into(),
            name: "weather".into(),
            tool: "forecast_get".into(),
        }));
        assert!(selects(&packaged));
        assert!(!selects(&tool("hello_world", &[])));
        assert!(!selects(&tool("notes_add", &["writing"])));
    }

    #[test]
    fn server_and_search_settings_replace_the_folders() {
        let (config, problems) = config(
            "[search]\nbudget_tokens = 500\n[profiles.p]\nname = \"p-server\"\ninstructions = \"Use p.\"\n[profiles.p.search]\nmode = \"always\"\n",
        );
        assert_eq!(problems, Vec::<String>::new());
        let profile = &config.profiles["p"];
        assert_eq!(profile.server_name.as_deref(), Some("p-server"));
        assert_eq!(profile.instructions.as_deref(), Some("Use p."));
        let search = profile.search.unwrap();
        // The keys the profile sets replace the folder's; the others are the folder's.
        assert_eq!(
            (search.mode, search.budget_tokens),
            (SearchMode::Always, 500)
        );
    }

    #[test]
    fn scopes_are_read_and_a_served_profile_requires_them() {
        let (config, problems) = config(
            "[profiles.support]\nscopes = [\"support\", \"tickets:read\"]\n[profiles.bad]\nscopes = \"support\"\n",
        );
        assert_eq!(
            problems,
            [
                "4:1: `profiles.bad.scopes` must be a list of strings, got a string (e.g. scopes = [\"tickets:write\"])"
            ]
        );
        assert_eq!(
            config.profiles["support"].scopes,
            ["support", "tickets:read"]
        );
        assert!(
            config.profile_scopes.is_empty(),
            "the folder itself requires none"
        );
        let served = config.with_profile("support").unwrap();
        assert_eq!(served.profile_scopes, ["support", "tickets:read"]);
    }

    #[test]
    fn mistakes_are_warnings_at_their_line() {
        let (config, problems) = config(
            "[profiles.p]\ntool = [\"x\"]\ntools = [\"ok\", 3, \"bad[\"]\n[profiles.q]\ntools = \"x\"\n[profiles.toolsmith-dev]\n",
        );
        assert_eq!(
            problems,
            [
                "2:1: unknown key `tool` in `[profiles.p]` (did you mean `tools`?)",
                "3:1: `profiles.p.tools` entries must be strings, got a number (write a name, a glob such as `github_*`, or `tag:NAME`)",
                "3:1: `profiles.p.tools`: `bad[` is not a valid glob: unclosed character class; missing ']' (`*` matches any run of characters, `?` one, `[abc]` one of a set)",
                "5:1: `profiles.q.tools` must be a list of strings, got a string (e.g. tools = [\"github_*\", \"tag:search\"])",
                "6:1: `[profiles.toolsmith-dev]` is the name of the built-in profile; it is ignored (give your profile another name)",
            ]
        );
        assert_eq!(config.profiles.keys().collect::<Vec<_>>(), ["p", "q"]);
        let kept: Vec<&str> = config.profiles["p"]
            .tools
            .iter()
            .flatten()
            .map(|s| s.text.as_str())
            .collect();
        assert_eq!(kept, ["ok"]);
    }
}
