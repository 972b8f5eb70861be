//! YAML files (Continue's `config.yaml`, Goose's `config.yaml`), edited with `yaml-edit`'s
//! lossless tree: the entry is set in place under its key (a mapping of names, or a list
//! of entries with `name`), and comments and formatting elsewhere stay as they were.

use std::fmt::Write as _;
use std::str::FromStr as _;

use serde_json::Value;
use yaml_edit::validator::{Severity, Validator};
use yaml_edit::{Document, Mapping, YamlFile, YamlNode};

use super::Servers;
use crate::install::clients::Layout;

/// The file as JSON, when it is valid YAML 1.2. `yaml-edit`'s parser recovers from most
/// mistakes (`a: b: c`, tabs as indentation, a key indented off its siblings) and reads
/// something from them, so its strict validator decides first: an invalid file is
/// refused, as a JSON file that does not parse is.
pub(super) fn read(text: &str) -> Result<Value, String> {
    let file = YamlFile::from_str(text).map_err(|error| error.to_string())?;
    let validator = Validator::new();
    let violation = file
        .documents()
        .flat_map(|document| validator.validate(&document))
        .find(|violation| violation.severity == Severity::Error);
    if let Some(violation) = violation {
        let mut message = violation.message;
        if let Some(first) = message.get(..1) {
            message.replace_range(..1, &first.to_lowercase());
        }
        return Err(match violation.location {
            Some(location) => format!("{message} (line:column {location})"),
            None => message,
        });
    }
    toolsmith_openapi::json_from_yaml(text)
}

pub(super) fn edit(
    text: &str,
    servers: Servers<'_>,
    name: &str,
    value: Option<&Value>,
) -> Result<String, String> {
    let file = YamlFile::from_str(text).map_err(|error| error.to_string())?;
    let document = file.ensure_document();
    let key = servers.key;
    let entry = value.map(block).transpose()?;
    match servers.layout {
        Layout::Map | Layout::NamedMap => match document.get_mapping(key) {
            Some(members) => match &entry {
                Some(entry) => members.set(name, entry),
                None => {
                    members.remove(name);
                }
            },
            None => {
                if let Some(value) = value {
                    let wrapper = block(&serde_json::json!({ key: { name: value } }))?;
                    let members = wrapper.get(key).ok_or("cannot write the entry")?;
                    document.set(key, &members);
                }
            }
        },
        Layout::List => {
            let found = document.get_sequence(key).map(|items| {
                let index = items.values().position(|item| named(&item, name));
                (items, index)
            });
            match (found, &entry) {
                (Some((items, Some(index))), Some(entry)) => {
                    items.set(index, entry);
                }
                (Some((items, None)), Some(entry)) => items.push(entry),
                (Some((items, Some(index))), None) => {
                    items.remove(index);
                }
                (None, Some(_)) => {
                    let mut text = String::new();
                    render(value.unwrap_or(&Value::Null), 2, &mut text);
                    text.replace_range(0..2, "- ");
                    let items = Document::from_str(&text).map_err(|error| error.to_string())?;
                    let items = items.as_sequence().ok_or("the entry is not a mapping")?;
                    document.set(key, &items);
                }
                (_, None) => {}
            }
        }
    }
    let mut edited = file.to_string();
    if !edited.ends_with('\n') {
        edited.push('\n');
    }
    Ok(edited)
}

/// Whether a list item is the mapping whose `name` is `name`.
fn named(item: &YamlNode, name: &str) -> bool {
    item.as_mapping()
        .and_then(|mapping| mapping.get("name"))
        .and_then(|value| value.as_scalar().map(yaml_edit::Scalar::as_string))
        .is_some_and(|value| value == name)
}

/// `value` (a JSON object) as a block mapping, its members in their order.
fn block(value: &Value) -> Result<Mapping, String> {
    let mut text = String::new();
    render(value, 0, &mut text);
    let document = Document::from_str(&text).map_err(|error| error.to_string())?;
    document
        .as_mapping()
        .ok_or_else(|| "the entry is not a mapping".to_owned())
}

/// Block YAML for a JSON object's members at `indent`.
fn render(value: &Value, indent: usize, out: &mut String) {
    let Value::Object(members) = value else {
        return;
    };
    let pad = " ".repeat(indent);
    for (key, value) in members {
        match value {
            Value::Object(inner) if !inner.is_empty() => {
                let _ = writeln!(out, "{pad}{}:", inline(&Value::String(key.clone())));
                render(value, indent + 2, out);
            }
            _ => {
                let _ = writeln!(
                    out,
                    "{pad}{}: {}",
                    inline(&Value::String(key.clone())),
                    inline(value)
                );
            }
        }
    }
}

/// A value in flow style: JSON, which is YAML, except that plain words stay unquoted.
fn inline(value: &Value) -> String {
    match value {
        Value::String(text) if plain(text) => text.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(members) if members.is_empty() => "{}".into(),
        _ => value.to_string(),
    }
}

/// Whether `text` reads back as this same string when written without quotes.
fn plain(text: &str) -> bool {
    let reserved = [
        "true", "false", "yes", "no", "on", "off", "null", "~", "y", "n",
    ];
    !text.is_empty()
        && !reserved.contains(&text.to_ascii_lowercase().as_str())
        && text.parse::<f64>().is_err()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+@".contains(c))
        && !text.starts_with(['-', '.', '@'])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::install::files::{Action, Format};

    #[test]
    fn goose_extensions_keep_comments_and_replace_in_place() {
        let servers = Servers {
            key: "extensions",
            layout: Layout::NamedMap,
        };
        let text = "# Goose\nGOOSE_PROVIDER: openai\nextensions:\n  # built in\n  developer:\n    enabled: true\n    type: builtin\n    name: developer\n  other:\n    cmd: x # mine\n";
        let entry = json!({"name": "tools", "type": "stdio", "cmd": "/bin/toolsmith", "args": ["serve", "/t"], "envs": {"MCP_TOOL_OPTIONS": "{\"a\": {}}"}});
        let (added, action) = Format::Yaml
            .edit(text, servers, "tools", Some(&entry))
            .unwrap();
        assert_eq!(action, Action::Added);
        for kept in ["# Goose", "# built in", "cmd: x # mine"] {
            assert!(added.contains(kept), "{added}");
        }
        assert_eq!(read(&added).unwrap()["extensions"]["tools"], entry);
        let mut other = entry.clone();
        other["cmd"] = "/bin/other".into();
        let (replaced, action) = Format::Yaml
            .edit(&added, servers, "tools", Some(&other))
            .unwrap();
        assert_eq!(action, Action::Replaced);
        assert_eq!(read(&replaced).unwrap()["extensions"]["tools"], other);
        let (removed, action) = Format::Yaml
            .edit(&replaced, servers, "tools", None)
            .unwrap();
        assert_eq!(action, Action::Removed);
        assert_eq!(read(&removed).unwrap(), read(text).unwrap());
    }

    #[test]
    fn continue_servers_are_a_list_of_named_entries() {
        let servers = Servers {
            key: "mcpServers",
            layout: Layout::List,
        };
        let entry = json!({"name": "tools", "command": "/bin/toolsmith", "args": ["serve", "/t"]});
        let (text, _) = Format::Yaml
            .edit(
                "name: my assistant\n# models\nmodels: []\n",
                servers,
                "tools",
                Some(&entry),
            )
            .unwrap();
        assert!(text.contains("# models"), "{text}");
        assert_eq!(read(&text).unwrap()["mcpServers"], json!([entry]));
        let second = json!({"name": "more", "command": "x", "args": []});
        let (text, action) = Format::Yaml
            .edit(&text, servers, "more", Some(&second))
            .unwrap();
        assert_eq!(action, Action::Added);
        let (text, action) = Format::Yaml.edit(&text, servers, "tools", None).unwrap();
        assert_eq!(action, Action::Removed);
        assert_eq!(read(&text).unwrap()["mcpServers"], json!([second]));
    }

    #[test]
    fn invalid_yaml_the_parser_would_recover_from_is_refused() {
        // Each of these was read as something and edited anyway.
        for text in [
            "a: b: c\n",
            "a:\n\tb: 1\n",
            "extensions:\n  x: 1\n bad: 2\n",
            "@foo\n",
        ] {
            assert!(read(text).is_err(), "{text:?}");
        }
        assert!(read("a: 1\nb: [x, y]\n").is_ok());
    }

    #[test]
    fn strings_that_look_like_other_things_are_quoted() {
        for text in ["true", "3", "{}", "a: b", "", "- x", "#x"] {
            let value = json!({ "k": text });
            let mut rendered = String::new();
            render(&value, 0, &mut rendered);
            assert_eq!(read(&rendered).unwrap(), value, "{rendered}");
        }
    }
}
