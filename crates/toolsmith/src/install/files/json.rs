//! JSON and JSON-with-comments files, edited through `jsonc-parser`'s concrete syntax
//! tree: the entry's property is set, added or removed and every other byte (comments,
//! indentation, trailing commas, key order) stays as it was.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstRootNode};
use serde_json::Value;

use super::Servers;

fn parse(text: &str) -> Result<CstRootNode, String> {
    CstRootNode::parse(text, &ParseOptions::default()).map_err(|error| error.to_string())
}

pub(super) fn read(text: &str) -> Result<Value, String> {
    Ok(parse(text)?
        .value()
        .and_then(|value| value.to_serde_value())
        .unwrap_or_else(|| Value::Object(serde_json::Map::new())))
}

pub(super) fn edit(
    text: &str,
    servers: Servers<'_>,
    name: &str,
    entry: Option<&Value>,
) -> Result<String, String> {
    let root = parse(text)?;
    let top = root.object_value_or_set();
    let members = top.object_value_or_set(servers.key);
    match (members.get(name), entry) {
        (Some(property), Some(entry)) => property.set_value(input(entry)),
        (None, Some(entry)) => {
            members.append(name, input(entry));
        }
        (Some(property), None) => property.remove(),
        (None, None) => {}
    }
    let mut edited = root.to_string();
    if !edited.ends_with('\n') {
        edited.push('\n');
    }
    Ok(edited)
}

/// `value` as the syntax tree's input.
fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(value) => CstInputValue::Bool(*value),
        Value::Number(number) => CstInputValue::Number(number.to_string()),
        Value::String(text) => CstInputValue::String(text.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(members) => CstInputValue::Object(
            members
                .iter()
                .map(|(key, value)| (key.clone(), input(value)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::install::clients::Layout;
    use crate::install::files::{Action, Format};

    const SERVERS: Servers<'static> = Servers {
        key: "servers",
        layout: Layout::Map,
    };

    #[test]
    fn comments_and_layout_survive_add_replace_and_remove() {
        let text = "// VS Code's MCP servers\n{\n    \"servers\": {\n        // the one I use\n        \"other\": {\"command\": \"x\"},\n    },\n    \"inputs\": [] // none yet\n}\n";
        let entry = json!({"type": "stdio", "command": "/bin/toolsmith", "args": ["serve", "/t"]});
        let (added, action) = Format::Jsonc
            .edit(text, SERVERS, "tools", Some(&entry))
            .unwrap();
        assert_eq!(action, Action::Added);
        for kept in [
            "// VS Code's MCP servers",
            "// the one I use",
            "// none yet",
        ] {
            assert!(added.contains(kept), "{added}");
        }
        assert!(added.contains("\n        \"tools\": {"), "{added}");
        let other = json!({"command": "/bin/other"});
        let (replaced, action) = Format::Jsonc
            .edit(&added, SERVERS, "tools", Some(&other))
            .unwrap();
        assert_eq!(action, Action::Replaced);
        // In place: still after `other`, before `inputs`.
        let tools = replaced.find("\"tools\"").unwrap();
        assert!(replaced.find("\"other\"").unwrap() < tools);
        assert!(tools < replaced.find("\"inputs\"").unwrap());
        let (removed, action) = Format::Jsonc
            .edit(&replaced, SERVERS, "tools", None)
            .unwrap();
        assert_eq!(action, Action::Removed);
        assert_eq!(read(&removed).unwrap(), read(text).unwrap());
        assert!(removed.contains("// the one I use"), "{removed}");
    }

    #[test]
    fn an_empty_file_gets_the_key_and_the_entry() {
        let entry = json!({"command": "x", "args": []});
        let (text, _) = Format::Json
            .edit("", SERVERS, "tools", Some(&entry))
            .unwrap();
        assert_eq!(read(&text).unwrap(), json!({"servers": {"tools": entry}}));
    }

    #[test]
    fn broken_files_and_odd_shapes_are_refused() {
        let entry = json!({"command": "x"});
        assert!(
            Format::Json
                .edit("{\"servers\": ", SERVERS, "t", Some(&entry))
                .is_err()
        );
        assert!(
            Format::Json
                .edit("[1]", SERVERS, "t", Some(&entry))
                .is_err()
        );
        assert!(
            Format::Json
                .edit("{\"servers\": 3}", SERVERS, "t", Some(&entry))
                .is_err()
        );
    }
}
