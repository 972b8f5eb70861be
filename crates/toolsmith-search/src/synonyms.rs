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

/// Abbreviations users write for words tools spell out: a query word that is one of these
/// also stands for its words ("merge the PR" finds `merge_pull_request`). General
/// vocabulary of developer tools only.
const ABBREVIATIONS: &[(&str, &str)] = &[
    ("pr", "pull request"),
    ("prs", "pull requests"),
    ("mr", "merge request"),
    ("mrs", "merge requests"),
    ("k8s", "kubernetes"),
    ("env", "environment"),
    ("envs", "environments"),
    ("config", "configuration"),
    ("ns", "namespace"),
    ("dm", "direct message"),
    ("dms", "direct messages"),
    ("msg", "message"),
    ("org", "organization"),
    ("vm", "virtual machine"),
    ("vms", "virtual machines"),
    ("auth", "authentication"),
    ("creds", "credentials"),
    ("perms", "permissions"),
    ("deps", "dependencies"),
    ("pkg", "package"),
    ("gh", "github"),
];

/// `query` with the words of each abbreviation it uses added after it (`merge the PR` →
/// `merge the PR pull request`); `query` itself when it uses none.
pub(crate) fn spell_out(query: &str) -> std::borrow::Cow<'_, str> {
    let mut spelled = String::new();
    for word in query.split_whitespace() {
        let word = word
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        if let Some((_, words)) = ABBREVIATIONS.iter().find(|(short, _)| *short == word) {
            spelled.push(' ');
            spelled.push_str(words);
        }
    }
    if spelled.is_empty() {
        std::borrow::Cow::Borrowed(query)
    } else {
        std::borrow::Cow::Owned(format!("{query}{spelled}"))
    }
}

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

    #[test]
    fn abbreviations_are_spelled_out() {
        // "PR", "MR" and "k8s" matched no tool's words, which spell them out.
        assert_eq!(spell_out("merge PR #12"), "merge PR #12 pull request");
        assert_eq!(spell_out("list k8s pods"), "list k8s pods kubernetes");
        assert_eq!(
            spell_out("approve the MR."),
            "approve the MR. merge request"
        );
        assert_eq!(spell_out("print a report"), "print a report");
    }
}
