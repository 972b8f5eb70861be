//! Words that users and models use for the same action or thing, where tool authors pick
//! one of them: `add a row` for `create_record`, `remove` for `delete`, `repo` for
//! `repository`. A query word also matches the other words of its group, at a discount.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::text::stem;

/// Groups of interchangeable words. General vocabulary of tool descriptions only: no
/// product names, nothing specific to one server.
const GROUPS: &[&[&str]] = &[
    &["create", "add", "new", "make", "insert"],
    &[
        "delete", "remove", "drop", "erase", "destroy", "trash", "revoke",
    ],
    &[
        "fetch", "retrieve", "read", "show", "view", "display", "open", "load", "describe",
    ],
    &["list", "enumerate", "browse", "all"],
    &["search", "find", "lookup", "query", "locate", "filter"],
    &[
        "update", "edit", "modify", "change", "patch", "set", "rename",
    ],
    &["run", "execute", "invoke", "launch", "start", "trigger"],
    &[
        "stop",
        "cancel",
        "kill",
        "terminate",
        "abort",
        "halt",
        "end",
    ],
    &["send", "post", "notify", "message"],
    &["issue", "ticket", "bug"],
    &["repository", "repo"],
    &["document", "doc", "docs", "documentation"],
    &["database", "db"],
    &["directory", "folder", "dir"],
    &["image", "picture", "photo", "screenshot"],
    &["email", "mail"],
    &["user", "member", "person", "people", "account"],
    &["comment", "reply", "note"],
    &["count", "number", "total", "many"],
    &["error", "exception", "crash", "failure"],
    &["log", "logs", "output"],
    &["upload", "attach"],
    &["download", "export", "save"],
    &["copy", "duplicate", "clone"],
    &["move", "transfer", "relocate"],
    &["schedule", "book", "calendar", "meeting", "event"],
    &["status", "state", "health"],
    &["permission", "access", "role", "policy"],
    &["price", "pricing", "cost"],
    &["location", "place", "address", "coordinate"],
    &["latest", "recent", "newest", "last"],
    &["sheet", "worksheet", "spreadsheet"],
];

/// The stems `term` (a stemmed query word) stands for besides itself.
pub(crate) fn synonyms(term: &str) -> &'static [String] {
    static TABLE: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table: HashMap<String, Vec<String>> = HashMap::new();
        for group in GROUPS {
            let stems: Vec<String> = group.iter().map(|word| stem(word)).collect();
            for own in &stems {
                let others = table.entry(own.clone()).or_default();
                for other in &stems {
                    if other != own && !others.contains(other) {
                        others.push(other.clone());
                    }
                }
            }
        }
        table
    });
    table.get(term).map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_stands_for_its_group() {
        assert!(synonyms(&stem("remove")).contains(&stem("delete")));
        assert!(synonyms(&stem("repo")).contains(&stem("repository")));
        assert!(synonyms("zebra").is_empty());
    }
}
