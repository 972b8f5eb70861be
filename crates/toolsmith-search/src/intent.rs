//! Whether a request asks to look at something or to change it, and whether a tool looks or
//! changes, from the words alone: "which branches are protected?" wants
//! `list_protected_branches`, not `protect_branch`, though both share its words.

use crate::text::for_each_word;

/// What a tool does to the things it works on, or what a request wants done to them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Intent {
    /// Looks: gets, lists, searches, reads.
    Read,
    /// Changes: creates, updates, deletes, sends, runs.
    Change,
}

/// The first of these in a tool's name says the tool reads.
const READ_VERBS: &[&str] = &[
    "get",
    "list",
    "search",
    "read",
    "describe",
    "show",
    "fetch",
    "query",
    "find",
    "count",
    "view",
    "check",
    "inspect",
    "lookup",
    "retrieve",
    "browse",
    "explain",
    "summarize",
    "summarise",
    "preview",
    "status",
    "info",
    "details",
];

/// The first of these in a tool's name says the tool changes something.
const CHANGE_VERBS: &[&str] = &[
    "create",
    "update",
    "delete",
    "add",
    "remove",
    "set",
    "put",
    "post",
    "patch",
    "insert",
    "upsert",
    "move",
    "rename",
    "merge",
    "approve",
    "unapprove",
    "close",
    "send",
    "push",
    "edit",
    "write",
    "append",
    "modify",
    "replace",
    "cancel",
    "kill",
    "terminate",
    "stop",
    "start",
    "restart",
    "assign",
    "unassign",
    "archive",
    "publish",
    "upload",
    "drop",
    "clear",
    "reset",
    "revert",
    "tag",
    "untag",
    "lock",
    "unlock",
    "mute",
    "unmute",
    "enable",
    "disable",
    "invite",
    "mark",
    "link",
    "unlink",
    "protect",
    "unprotect",
    "schedule",
    "trigger",
    "deploy",
    "apply",
    "import",
];

/// Words of requests for a change besides [`CHANGE_VERBS`] ("bump PROJ-123 to high
/// priority", "tear down the pods").
const CHANGE_WORDS: &[&str] = &["make", "new", "change", "bump", "tear"];

/// Besides [`READ_VERBS`], the words a request that asks to look opens with ("which tags
/// does this repo have").
const READ_OPENERS: &[&str] = &[
    "what", "which", "who", "when", "where", "how", "is", "are", "does", "did", "do", "any", "see",
    "look", "display", "tell", "pull",
];

/// What a tool called `name` does, by the first verb of its name (`asana_get_task` reads,
/// `jira_update_issue` changes); `None` when its name has no verb of either list.
pub(crate) fn of_tool(name: &str) -> Option<Intent> {
    let mut intent = None;
    for_each_word(name, |word| {
        if intent.is_none() {
            if READ_VERBS.contains(&word) {
                intent = Some(Intent::Read);
            } else if CHANGE_VERBS.contains(&word) {
                intent = Some(Intent::Change);
            }
        }
    });
    intent
}

/// What `query` asks for: a change when any of its words asks for one (a change verb of tool
/// names, or one of [`CHANGE_WORDS`]), else a look when it is a question or opens like one; `None` when it says neither ("slack channel history").
pub(crate) fn of_query(query: &str) -> Option<Intent> {
    let mut first = None;
    let mut change = false;
    for_each_word(query, |word| {
        if first.is_none() {
            first = Some(READ_OPENERS.contains(&word) || READ_VERBS.contains(&word));
        }
        change |= CHANGE_VERBS.contains(&word) || CHANGE_WORDS.contains(&word);
    });
    if change {
        Some(Intent::Change)
    } else if first == Some(true) || query.trim_end().ends_with('?') {
        Some(Intent::Read)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_does_what_the_first_verb_of_its_name_says() {
        assert_eq!(of_tool("asana_get_task"), Some(Intent::Read));
        assert_eq!(of_tool("listProtectedBranches"), Some(Intent::Read));
        assert_eq!(of_tool("jira_update_issue"), Some(Intent::Change));
        // "protect" comes before "branch"; "get" in a later word does not count.
        assert_eq!(of_tool("protect_branch_get_rules"), Some(Intent::Change));
        assert_eq!(of_tool("maps_elevation"), None);
    }

    #[test]
    fn a_request_asks_for_a_change_when_a_word_says_so() {
        assert_eq!(
            of_query("bump PROJ-123 to High priority"),
            Some(Intent::Change)
        );
        assert_eq!(
            of_query("which branches can I delete?"),
            Some(Intent::Change)
        );
        assert_eq!(
            of_query("which branches are protected in the gitlab repo"),
            Some(Intent::Read)
        );
        assert_eq!(
            of_query("Datadog maintenance windows active now?"),
            Some(Intent::Read)
        );
        assert_eq!(of_query("slack channel history"), None);
    }
}
