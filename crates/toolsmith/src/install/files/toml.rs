//! TOML files (Codex's `config.toml`), edited with `toml_edit`: the entry is a
//! `[KEY.NAME]` table that takes the old one's place, and comments, order and formatting
//! elsewhere stay as they were.

use serde_json::Value;
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table};

use super::Servers;

pub(super) fn read(text: &str) -> Result<Value, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|error: toml::de::Error| error.message().to_owned())?;
    serde_json::to_value(table).map_err(|error| error.to_string())
}

pub(super) fn edit(
    text: &str,
    servers: Servers<'_>,
    name: &str,
    entry: Option<&Value>,
) -> Result<String, String> {
    set_table(text, servers.key, name, entry)
}

/// `text` with its `[KEY.NAME]` table replaced by `entry` (or removed, for `None`): a table
/// that was there keeps its place and comment, and the rest of the file stays as it was.
/// `toolsmith install` writes Codex's servers with it, `toolsmith upstream add` a folder's
/// `[upstream.NAME]`.
pub(crate) fn set_table(
    text: &str,
    key: &str,
    name: &str,
    entry: Option<&Value>,
) -> Result<String, String> {
    let mut document: DocumentMut = text.parse().map_err(|error| format!("{error}"))?;
    let members = document
        .entry(key)
        .or_insert_with(|| {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_like_mut()
        .ok_or_else(|| format!("`{key}` is not a table"))?;
    match entry {
        Some(entry) => {
            let Value::Object(members_of_entry) = entry else {
                return Err("the entry is not a table".into());
            };
            let mut table = Table::new();
            for (member, value) in members_of_entry {
                table.insert(member, Item::Value(value_of(value)?));
            }
            // Re-installing keeps the table where it was in the file.
            if let Some(old) = members.get(name).and_then(Item::as_table) {
                if let Some(position) = old.position() {
                    table.set_position(position);
                }
                table.decor_mut().clone_from(old.decor());
            }
            members.insert(name, Item::Table(table));
        }
        None => {
            members.remove(name);
        }
    }
    Ok(document.to_string())
}

/// `value` as a TOML value; objects become inline tables (`env = { KEY = "…" }`).
fn value_of(value: &Value) -> Result<toml_edit::Value, String> {
    Ok(match value {
        Value::Null => return Err("TOML has no null".into()),
        Value::Bool(value) => (*value).into(),
        Value::Number(number) => match number.as_i64() {
            Some(integer) => integer.into(),
            None => number.as_f64().unwrap_or_default().into(),
        },
        Value::String(text) => text.as_str().into(),
        Value::Array(items) => {
            let mut array = Array::new();
            for item in items {
                array.push(value_of(item)?);
            }
            array.into()
        }
        Value::Object(members) => {
            let mut table = InlineTable::new();
            for (key, value) in members {
                table.insert(key, value_of(value)?);
            }
            table.into()
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::install::clients::Layout;
    use crate::install::files::{Action, Format};

    const SERVERS: Servers<'static> = Servers {
        key: "mcp_servers",
        layout: Layout::Map,
    };

    #[test]
    fn tables_are_replaced_in_place_and_comments_kept() {
        let text = "# my settings\nmodel = \"o3\"\n\n# the tools\n[mcp_servers.tools]\ncommand = \"old\"\n\n[mcp_servers.tools.env]\nA = \"1\"\n\n[mcp_servers.other]\ncommand = \"x\" # keep\n";
        let entry = json!({"command": "/bin/toolsmith", "args": ["serve", "/t"], "env": {"MCP_TOOL_OPTIONS": "{}"}});
        let (edited, action) = Format::Toml
            .edit(text, SERVERS, "tools", Some(&entry))
            .unwrap();
        assert_eq!(action, Action::Replaced);
        assert!(
            edited
                .starts_with("# my settings\nmodel = \"o3\"\n\n# the tools\n[mcp_servers.tools]\n"),
            "{edited}"
        );
        assert!(edited.contains("command = \"x\" # keep"), "{edited}");
        assert!(edited.find("tools]").unwrap() < edited.find("other]").unwrap());
        assert_eq!(read(&edited).unwrap()["mcp_servers"]["tools"], entry);
        let (removed, action) = Format::Toml.edit(&edited, SERVERS, "tools", None).unwrap();
        assert_eq!(action, Action::Removed);
        assert!(
            read(&removed).unwrap()["mcp_servers"]
                .get("tools")
                .is_none()
        );
        assert!(
            Format::Toml
                .edit("model = ", SERVERS, "tools", None)
                .is_err()
        );
    }

    #[test]
    fn a_new_file_gets_one_table() {
        let entry = json!({"url": "https://t.example/mcp", "bearer_token_env_var": "T"});
        let (text, _) = Format::Toml
            .edit("", SERVERS, "tools", Some(&entry))
            .unwrap();
        assert_eq!(
            text,
            "[mcp_servers.tools]\nurl = \"https://t.example/mcp\"\nbearer_token_env_var = \"T\"\n"
        );
    }
}
