//! Reading and editing a client's configuration file in its own format, keeping what the
//! user wrote: one small writer per format (JSON with comments through a concrete syntax
//! tree, TOML through `toml_edit`, YAML through `yaml-edit`), each changing only the one
//! entry. Every edit is checked by reading the result back: the new file must hold exactly
//! the old one's content with that entry set (or gone), or it is not written.

mod json;
pub(crate) mod toml;
mod yaml;

use serde_json::Value;

use super::clients::Layout;

/// The format of a client's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// JSON (comments are kept if the file has them, but none are added).
    Json,
    /// JSON with comments and trailing commas (VS Code, Zed, Gemini CLI, opencode).
    Jsonc,
    Toml,
    Yaml,
}

/// What an edit did to the entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Added,
    Replaced,
    Removed,
    /// Installing an entry the file already has, as it is.
    Unchanged,
    /// Removing a name the file does not have.
    Absent,
}

impl Action {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Self::Added => "add",
            Self::Replaced => "replace",
            Self::Removed => "remove",
            Self::Unchanged => "unchanged",
            Self::Absent => "none",
        }
    }
}

/// Where the entries sit in a file: under `key`, laid out as `layout`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Servers<'a> {
    pub(crate) key: &'a str,
    pub(crate) layout: Layout,
}

impl Format {
    pub(crate) fn language(self) -> &'static str {
        match self {
            Self::Json => "JSON",
            Self::Jsonc => "JSON with comments",
            Self::Toml => "TOML",
            Self::Yaml => "YAML",
        }
    }

    /// The whole file as JSON; an empty file is an empty object.
    pub(crate) fn read(self, text: &str) -> Result<Value, String> {
        if text.trim().is_empty() {
            return Ok(Value::Object(serde_json::Map::new()));
        }
        match self {
            Self::Json | Self::Jsonc => json::read(text),
            Self::Toml => toml::read(text),
            Self::Yaml => yaml::read(text),
        }
    }

    /// `text` with the entry `name` set to `entry` (or removed, when `None`), and what that
    /// did. Fails, saying why, when the file does not parse, when its servers are not
    /// where or how the client keeps them, or when the edit would change anything else.
    pub(crate) fn edit(
        self,
        text: &str,
        servers: Servers<'_>,
        name: &str,
        entry: Option<&Value>,
    ) -> Result<(String, Action), String> {
        let mut expected = self.read(text)?;
        let action = apply(&mut expected, servers, name, entry)?;
        if action == Action::Absent {
            return Ok((text.to_owned(), action));
        }
        if servers.layout == Layout::List && self != Self::Yaml {
            return Err(format!(
                "a list of servers in a {} file is not supported",
                self.language()
            ));
        }
        let edited = match self {
            Self::Json | Self::Jsonc => json::edit(text, servers, name, entry)?,
            Self::Toml => toml::edit(text, servers, name, entry)?,
            Self::Yaml => yaml::edit(text, servers, name, entry)?,
        };
        let reread = self
            .read(&edited)
            .map_err(|error| format!("the edited file would not parse ({error})"))?;
        if reread != expected {
            return Err(format!(
                "editing the file would change more than the entry `{name}`"
            ));
        }
        if edited == text {
            return Ok((edited, Action::Unchanged));
        }
        Ok((edited, action))
    }

    /// The entry as it would appear in a file of its own, to add by hand.
    pub(crate) fn snippet(self, servers: Servers<'_>, name: &str, entry: &Value) -> String {
        self.edit("", servers, name, Some(entry)).map_or_else(
            |_| serde_json::to_string_pretty(entry).unwrap_or_default(),
            |(text, _)| text,
        )
    }
}

/// The entries of a file read with [`Format::read`], by name.
pub(crate) fn entries<'a>(document: &'a Value, servers: Servers<'_>) -> Vec<(String, &'a Value)> {
    match (document.get(servers.key), servers.layout) {
        (Some(Value::Object(members)), Layout::Map | Layout::NamedMap) => members
            .iter()
            .map(|(name, entry)| (name.clone(), entry))
            .collect(),
        (Some(Value::Array(items)), Layout::List) => items
            .iter()
            .filter_map(|item| Some((item.get("name")?.as_str()?.to_owned(), item)))
            .collect(),
        _ => Vec::new(),
    }
}

/// The edit on the file's content as JSON: what the file must hold afterwards.
fn apply(
    document: &mut Value,
    servers: Servers<'_>,
    name: &str,
    entry: Option<&Value>,
) -> Result<Action, String> {
    let Servers { key, layout } = servers;
    let Value::Object(top) = document else {
        return Err("the file does not hold a map of settings at its top".into());
    };
    if entry.is_none() && !top.contains_key(key) {
        return Ok(Action::Absent);
    }
    let list = layout == Layout::List;
    let slot = top.entry(key).or_insert(Value::Null);
    // `extensions:` with nothing under it is an empty set of servers.
    if slot.is_null() {
        *slot = if list {
            Value::Array(Vec::new())
        } else {
            Value::Object(serde_json::Map::new())
        };
    }
    let action = match (slot, layout) {
        (Value::Object(members), Layout::Map | Layout::NamedMap) => match entry {
            Some(entry) => match members.insert(name.to_owned(), entry.clone()) {
                Some(_) => Action::Replaced,
                None => Action::Added,
            },
            None => match members.shift_remove(name) {
                Some(_) => Action::Removed,
                None => Action::Absent,
            },
        },
        (Value::Array(items), Layout::List) => {
            let found = items
                .iter()
                .position(|item| item.get("name").and_then(Value::as_str) == Some(name));
            match (found, entry) {
                (Some(index), Some(entry)) => {
                    items[index] = entry.clone();
                    Action::Replaced
                }
                (None, Some(entry)) => {
                    items.push(entry.clone());
                    Action::Added
                }
                (Some(index), None) => {
                    items.remove(index);
                    Action::Removed
                }
                (None, None) => Action::Absent,
            }
        }
        (_, Layout::List) => return Err(format!("`{key}` is not a list")),
        (_, _) => return Err(format!("`{key}` is not a map of servers")),
    };
    Ok(action)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const MAP: Servers<'static> = Servers {
        key: "mcpServers",
        layout: Layout::Map,
    };

    #[test]
    fn the_model_adds_replaces_and_removes() {
        let mut document = json!({"theme": "dark"});
        let entry = json!({"command": "x"});
        assert_eq!(
            apply(&mut document, MAP, "t", Some(&entry)),
            Ok(Action::Added)
        );
        assert_eq!(
            apply(&mut document, MAP, "t", Some(&entry)),
            Ok(Action::Replaced)
        );
        assert_eq!(apply(&mut document, MAP, "t", None), Ok(Action::Removed));
        assert_eq!(apply(&mut document, MAP, "t", None), Ok(Action::Absent));
        assert_eq!(document, json!({"theme": "dark", "mcpServers": {}}));
        assert!(apply(&mut json!({"mcpServers": []}), MAP, "t", Some(&entry)).is_err());
        assert!(apply(&mut json!([]), MAP, "t", Some(&entry)).is_err());
    }
}
