//! Where the keys of a TOML file are written: every key at every depth, with its path and
//! the spans of the key and its value, as the TOML parser reports them. Manifests locate
//! their diagnostics with it and publish it for `toolsmith check`, and `toolsmith test`
//! locates the cases of `tests/*.toml`; nothing else in the workspace looks for keys in TOML
//! text.

use std::ops::Range;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};
use toolsmith_model::{Key, SourceLocation, line_column};

/// Every key of `source`, in source order (none when the text is not TOML). An entry of
/// an array (`[[parameters]]`) is a key too, named by its index, spanning its header or
/// its inline table.
pub fn toml_keys(source: &str) -> Vec<Key> {
    let Ok(table) = DeTable::parse(source) else {
        return Vec::new();
    };
    let mut keys = Vec::new();
    table_keys(table.get_ref(), &[], &mut keys);
    keys.sort_by_key(|key| (key.span.start, key.path.len()));
    keys
}

/// Where the key at `key` (from [`toml_keys`] of `source`) is written, for a diagnostic:
/// the line of the key, at the line's first character (a `[table]` header's bracket); the
/// file when there is no such key.
pub fn key_location(path: &Path, source: &str, keys: &[Key], key: &[&str]) -> SourceLocation {
    let Some(found) = keys.iter().find(|k| k.is(key)) else {
        return SourceLocation::file(path);
    };
    let line_start = source[..found.span.start].rfind('\n').map_or(0, |n| n + 1);
    let indent = source[line_start..found.span.start].len()
        - source[line_start..found.span.start].trim_start().len();
    let (line, column) = line_column(source, line_start + indent);
    SourceLocation {
        path: path.to_owned(),
        line,
        column,
    }
}

fn table_keys(table: &DeTable<'_>, path: &[String], keys: &mut Vec<Key>) {
    for (key, value) in table {
        let mut inner = path.to_vec();
        inner.push(key.get_ref().to_string());
        keys.push(Key {
            path: inner.clone(),
            span: key.span(),
            value: value.span(),
        });
        value_keys(value, &inner, keys);
    }
}

fn value_keys(value: &Spanned<DeValue<'_>>, path: &[String], keys: &mut Vec<Key>) {
    match value.get_ref() {
        DeValue::Table(table) => table_keys(table, path, keys),
        DeValue::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let mut inner = path.to_vec();
                inner.push(index.to_string());
                let span: Range<usize> = item.span();
                keys.push(Key {
                    path: inner.clone(),
                    span: span.clone(),
                    value: span,
                });
                value_keys(item, &inner, keys);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_tables_arrays_and_headers_are_located() {
        let source = "description = \"x\"\n[[parameters]]\nname = \"a\"\n\n[[parameters]]\nname = \"b\"\n[params.b]\npattern = '\\d'\n";
        let keys = toml_keys(source);
        let text = |path: &[&str]| {
            let key = keys.iter().find(|k| k.is(path)).unwrap();
            (&source[key.span.clone()], &source[key.value.clone()])
        };
        assert_eq!(text(&["description"]), ("description", "\"x\""));
        assert_eq!(text(&["parameters", "1", "name"]), ("name", "\"b\""));
        assert_eq!(text(&["params", "b", "pattern"]), ("pattern", "'\\d'"));
        assert_eq!(text(&["params"]).0, "params");
        let at = |key: &[&str]| {
            let location = key_location(Path::new("t.toml"), source, &keys, key);
            (location.line, location.column)
        };
        assert_eq!(at(&["parameters", "1"]), (5, 1));
        assert_eq!(at(&["params"]), (7, 1));
        let nowhere = SourceLocation::file("t.toml");
        assert_eq!(at(&["tests"]), (nowhere.line, nowhere.column));
    }
}
