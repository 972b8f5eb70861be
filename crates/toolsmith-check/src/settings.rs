//! Which rules run: `[check]` in `toolsmith.toml` (`select`, `ignore`, `per-tool-ignores`)
//! and the `--select`/`--ignore` flags on top.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;
use toolsmith_model::names::{did_you_mean, suggestion, suggestion_suffix};
use toolsmith_model::{Diagnostic, Severity, SourceLocation};

use crate::registry;

/// Which rules are enabled, for which tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// Only these rules run; `None` means all of them.
    select: Option<BTreeSet<&'static str>>,
    /// These rules never run.
    ignore: BTreeSet<&'static str>,
    /// Rules ignored for one tool.
    per_tool_ignores: BTreeMap<String, BTreeSet<&'static str>>,
}

/// A rule id that names no rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRule {
    /// The id given.
    pub id: String,
    /// Close ids, best first.
    pub suggestions: Vec<&'static str>,
}

impl std::fmt::Display for UnknownRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown rule `{}`{}",
            self.id,
            suggestion_suffix(&self.suggestions)
        )
    }
}

impl std::error::Error for UnknownRule {}

impl toolsmith_model::Hint for UnknownRule {
    fn hints(&self) -> Vec<String> {
        if self.suggestions.is_empty() {
            vec!["the rules are listed in docs/rules/README.md".to_owned()]
        } else {
            Vec::new()
        }
    }
}

/// Resolves a rule id, with "did you mean" suggestions when it names no rule.
pub fn resolve(id: &str) -> Result<&'static str, UnknownRule> {
    registry::rule(id)
        .map(|rule| rule.id)
        .ok_or_else(|| UnknownRule {
            id: id.to_owned(),
            suggestions: did_you_mean(id, registry::RULES.iter().map(|rule| rule.id)),
        })
}

impl Settings {
    /// Reads the `[check]` table of `toolsmith.toml` (`config` is the whole file as JSON).
    ///
    /// Unknown rule ids and keys become warnings located at `path`; the rest applies.
    #[must_use]
    pub fn from_config(
        config: &serde_json::Map<String, Value>,
        path: &Path,
    ) -> (Self, Vec<Diagnostic>) {
        Self::from_config_at(config, &|_| SourceLocation::file(path))
    }

    /// [`Settings::from_config`] with each warning at the key it is about: `locate` maps a
    /// key's path (`["check", "ignore"]`) to where it is written.
    #[must_use]
    pub fn from_config_at(
        config: &serde_json::Map<String, Value>,
        locate: &dyn Fn(&[&str]) -> SourceLocation,
    ) -> (Self, Vec<Diagnostic>) {
        let mut settings = Self::default();
        let mut problems = Vec::new();
        let Some(Value::Object(table)) = config.get("check") else {
            return (settings, problems);
        };
        let mut warn = |key: &[&str], message: String, help: String| {
            let mut diagnostic =
                Diagnostic::error("invalid-config", locate(key), message).with_help(help);
            diagnostic.severity = Severity::Warning;
            problems.push(diagnostic);
        };
        let ids = |path: &[&str], value: &Value, warn: &mut dyn FnMut(&[&str], String, String)| {
            let key = path[1..].join(".");
            let Some(items) = value.as_array() else {
                warn(
                    path,
                    format!("`[check] {key}` must be a list of rule ids"),
                    format!("e.g. {key} = [\"missing-examples\"]"),
                );
                return BTreeSet::new();
            };
            let mut set = BTreeSet::new();
            for item in items {
                let text = item.as_str().unwrap_or_default();
                match resolve(text) {
                    Ok(id) => {
                        set.insert(id);
                    }
                    Err(unknown) => warn(
                        path,
                        format!("`[check] {key}`: {unknown}"),
                        "`toolsmith check --explain RULE` describes a rule; docs/rules/ lists them all".into(),
                    ),
                }
            }
            set
        };
        for (key, value) in table {
            match key.as_str() {
                "select" => settings.select = Some(ids(&["check", key], value, &mut warn)),
                "ignore" => settings.ignore = ids(&["check", key], value, &mut warn),
                "per-tool-ignores" => match value {
                    Value::Object(tools) => {
                        for (tool, rules) in tools {
                            let set = ids(&["check", key, tool], rules, &mut warn);
                            settings.per_tool_ignores.insert(tool.clone(), set);
                        }
                    }
                    _ => warn(
                        &["check", key],
                        "`[check] per-tool-ignores` must be a table".into(),
                        "e.g. [check.per-tool-ignores]\nhello = [\"missing-examples\"]".into(),
                    ),
                },
                other => {
                    let known = ["select", "ignore", "per-tool-ignores"];
                    let help = suggestion(other, known).unwrap_or_else(|| {
                        "`[check]` takes select, ignore and per-tool-ignores".to_owned()
                    });
                    warn(
                        &["check", other],
                        format!("unknown key `{other}` in `[check]`"),
                        help,
                    );
                }
            }
        }
        (settings, problems)
    }

    /// Runs only these rules (replaces the configured selection).
    pub fn set_select(&mut self, ids: impl IntoIterator<Item = &'static str>) {
        self.select = Some(ids.into_iter().collect());
    }

    /// Also ignores these rules.
    pub fn add_ignore(&mut self, ids: impl IntoIterator<Item = &'static str>) {
        self.ignore.extend(ids);
    }

    /// Whether the rule runs at all.
    #[must_use]
    pub fn is_selected(&self, id: &str) -> bool {
        self.select
            .as_ref()
            .is_none_or(|select| select.contains(id))
            && !self.ignore.contains(id)
    }

    /// Whether findings of `id` about `tool` are reported.
    #[must_use]
    pub fn is_enabled(&self, id: &str, tool: Option<&str>) -> bool {
        self.is_selected(id)
            && tool
                .and_then(|tool| self.per_tool_ignores.get(tool))
                .is_none_or(|ignored| !ignored.contains(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn config_selects_ignores_and_warns_about_typos() {
        let config = json!({"check": {
            "ignore": ["missing-examples", "missing-exampels"],
            "per-tool-ignores": {"hello": ["description-too-short"]},
        }});
        let (settings, problems) =
            Settings::from_config(config.as_object().unwrap(), Path::new("toolsmith.toml"));
        assert!(!settings.is_selected("missing-examples"));
        assert!(settings.is_selected("missing-description"));
        assert!(!settings.is_enabled("description-too-short", Some("hello")));
        assert!(settings.is_enabled("description-too-short", Some("other")));
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0]
                .message
                .contains("did you mean `missing-examples`?"),
            "{}",
            problems[0].message
        );
    }

    #[test]
    fn an_unknown_rule_hints_at_the_list_only_without_suggestions() {
        use toolsmith_model::Hint as _;
        let close = resolve("missing-exampels").unwrap_err();
        assert_eq!(
            close.to_string(),
            "unknown rule `missing-exampels`; did you mean `missing-examples`?"
        );
        assert!(close.hints().is_empty());
        let far = resolve("zzzzzzzz").unwrap_err();
        assert_eq!(
            far.hints(),
            ["the rules are listed in docs/rules/README.md"]
        );
    }
}
