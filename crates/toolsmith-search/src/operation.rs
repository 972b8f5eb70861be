//! Which operation a request asks for and which one a tool does, by the verbs: siblings of
//! one product share every noun and differ only there ("turn on the flag" is not for
//! `disable_flag`, "take back my approval" is for `unapprove_merge_request`, "spin up a
//! branch" is not for `reset_branch`). A tool whose operation is the opposite of the
//! request's loses [`ANTONYM_PENALTY`]; one doing the very operation gains [`SAME_BONUS`].
//! And a request for many things at once ("these 5 leads", "every file") favours a tool
//! whose name says it works in batches.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::text::{for_each_word, stem};

/// Taken from the score of a tool whose operation is the opposite of the request's. The
/// three values were chosen on the train, dev and tune queries of `bench/discovery`
/// (recall@1 0.773 / 0.739 / 0.592 → 0.791 / 0.750 / 0.593); the penalty mattered little
/// there from 0.15 to 0.8, as few of those queries hinge on an opposite.
pub(crate) const ANTONYM_PENALTY: f64 = 0.3;
/// Added to the score of a tool doing the operation the request asks for.
pub(crate) const SAME_BONUS: f64 = 0.1;
/// Added to the score of a batch tool when the request is about many things.
pub(crate) const BATCH_BONUS: f64 = 0.15;

/// An operation class: an index into [`CLASSES`]. Classes come in opposite pairs, so a
/// class's opposite is the other of its pair (`index ^ 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Operation(u8);

impl Operation {
    fn opposite(self) -> Self {
        Self(self.0 ^ 1)
    }
}

/// The verbs of each operation class, in opposite pairs. General English only, no product
/// names.
const CLASSES: &[&[&str]] = &[
    &[
        "create", "add", "new", "insert", "attach", "link", "connect", "append",
    ],
    &[
        "delete",
        "remove",
        "drop",
        "erase",
        "destroy",
        "trash",
        "purge",
        "detach",
        "unlink",
        "disconnect",
        "cleanup",
        "clear",
    ],
    &["enable", "activate"],
    &["disable", "deactivate"],
    &["start", "launch", "begin", "resume", "boot"],
    &[
        "stop",
        "halt",
        "kill",
        "terminate",
        "pause",
        "abort",
        "shutdown",
    ],
    &["import", "upload"],
    &["export", "download"],
    &["lock", "protect"],
    &["unlock", "unprotect"],
    &["approve", "approval"],
    &["unapprove"],
    &["mute", "silence"],
    &["unmute"],
    &["assign"],
    &["unassign"],
    &["archive"],
    &["unarchive", "restore"],
    &["publish"],
    &["unpublish"],
    &["login", "signin"],
    &["logout", "signout"],
    &["allocate", "reserve"],
    &["release"],
    &["subscribe", "follow", "watch"],
    &["unsubscribe", "unfollow", "unwatch"],
    &["install"],
    &["uninstall"],
    // Changing what is there has no opposite: the second class of the pair is empty.
    &[
        "update", "edit", "modify", "change", "rename", "set", "mark", "bump", "patch", "retarget",
        "replace", "relabel", "reassign", "move",
    ],
    &[],
];

/// Two-word phrases of requests that say an operation in other words.
const PHRASES: &[(&str, &str, &str)] = &[
    ("turn", "on", "enable"),
    ("switch", "on", "enable"),
    ("turn", "off", "disable"),
    ("switch", "off", "disable"),
    ("spin", "up", "create"),
    ("set", "up", "create"),
    ("get", "rid", "delete"),
    ("tear", "down", "delete"),
    ("clean", "up", "delete"),
    ("shut", "down", "stop"),
    ("kick", "off", "start"),
    ("sign", "in", "login"),
    ("log", "in", "login"),
    ("sign", "out", "logout"),
    ("log", "out", "logout"),
];

/// Words that turn the next operation into its opposite ("take back my approval",
/// "revoke the approval").
const TAKING_BACK: &[&str] = &["revoke", "withdraw", "retract", "undo"];

/// Words that say a request is about many things at once.
const MANY: &[&str] = &[
    "every", "several", "multiple", "many", "batch", "bulk", "these", "those", "all",
];

/// Words of a tool's name that say it works on many things at once.
const BATCH_NAMES: &[&str] = &["batch", "bulk", "multiple", "many", "multi"];

/// The operation class of a (stemmed or plain) word, and of an `un`-word whose rest has a
/// class (`unpin` → the opposite of `pin`'s, when `unpin` itself has none).
fn class_of(word: &str) -> Option<Operation> {
    static TABLE: OnceLock<HashMap<String, Operation>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table = HashMap::new();
        for (index, class) in CLASSES.iter().enumerate() {
            let operation = Operation(u8::try_from(index).expect("fewer than 256 classes"));
            for verb in *class {
                table.insert((*verb).to_owned(), operation);
                table.insert(stem(verb), operation);
            }
        }
        table
    });
    let find = |word: &str| table.get(word).or_else(|| table.get(&stem(word))).copied();
    find(word).or_else(|| Some(find(word.strip_prefix("un")?)?.opposite()))
}

/// What a tool called `name` does: the class of the first word of its name that has one
/// (`jira_remove_watcher` deletes, `unapprove_merge_request` unapproves).
pub(crate) fn of_tool(name: &str) -> Option<Operation> {
    let mut found = None;
    for_each_word(name, |word| {
        if found.is_none() {
            found = class_of(word);
        }
    });
    found
}

/// Whether a tool called `name` works on many things at once (`hubspot-batch-create-objects`).
pub(crate) fn is_batch_tool(name: &str) -> bool {
    let mut batch = false;
    for_each_word(name, |word| batch |= BATCH_NAMES.contains(&word));
    batch
}

/// What `query` asks to do: the first operation it names, by a verb or a phrase ("turn on",
/// "get rid of"), turned to its opposite after "revoke", "take back" and the like.
pub(crate) fn of_query(query: &str) -> Option<Operation> {
    let words: Vec<String> = {
        let mut words = Vec::new();
        for_each_word(query, |word| words.push(word.to_owned()));
        words
    };
    let mut taking_back = false;
    for (at, word) in words.iter().enumerate() {
        let next = words.get(at + 1).map_or("", String::as_str);
        if TAKING_BACK.contains(&word.as_str()) || (word == "take" && next == "back") {
            taking_back = true;
            continue;
        }
        let phrase = PHRASES
            .iter()
            .find(|(first, second, _)| first == word && *second == next)
            .and_then(|(_, _, verb)| class_of(verb));
        if let Some(operation) = phrase.or_else(|| class_of(word)) {
            return Some(if taking_back {
                operation.opposite()
            } else {
                operation
            });
        }
    }
    None
}

/// Whether `query` is about many things at once: a word that says so, or a number of two
/// or more before a plural ("these 5 leads", "3 files").
pub(crate) fn asks_for_many(query: &str) -> bool {
    let mut previous_number = false;
    let mut many = false;
    for word in query.split_whitespace() {
        let word = word
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        if MANY.contains(&word.as_str()) || (previous_number && word.ends_with('s')) {
            many = true;
        }
        previous_number = word.parse::<u32>().is_ok_and(|n| n >= 2);
    }
    many
}

/// What a tool's operation adds to its score for a request asking for `asked`.
pub(crate) fn adjustment(asked: Option<Operation>, tool: Option<Operation>) -> f64 {
    match (asked, tool) {
        (Some(asked), Some(tool)) if tool == asked.opposite() => -ANTONYM_PENALTY,
        (Some(asked), Some(tool)) if tool == asked => SAME_BONUS,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opposite_verbs_are_opposite_operations() {
        // "turn on the flag" ranked `disable…` first, and "import" an `export` tool.
        let on = of_query("turn on the beta flag for everyone");
        assert_eq!(on, of_tool("enable_feature_flag"));
        assert!(adjustment(on, of_tool("disable_feature_flag")) < 0.0);
        let import = of_query("import the glossary from a CSV");
        assert!(adjustment(import, of_tool("export_glossary")) < 0.0);
        assert!(adjustment(import, of_tool("import_glossary")) > 0.0);
        assert!(adjustment(import, of_tool("list_glossaries")).abs() < f64::EPSILON);
        // `detach` deletes what `attach` adds.
        let off = of_query("take the ReadOnlyAccess policy off the group: remove it");
        assert!(adjustment(off, of_tool("attach_group_policy")) < 0.0);
    }

    #[test]
    fn phrases_and_taking_back_name_operations() {
        assert_eq!(
            of_query("spin up a preview branch"),
            of_tool("create_branch")
        );
        assert_eq!(of_query("get rid of the tag"), of_tool("delete_tag"));
        assert_eq!(of_query("tear down the pods"), of_tool("delete_pod"));
        // "take back my approval" is the opposite of approving.
        assert_eq!(
            of_query("take back my approval on the MR"),
            of_tool("unapprove_merge_request")
        );
        assert_eq!(of_tool("undelete_file"), of_tool("create_file"));
        assert_eq!(of_query("what is the weather"), None);
    }

    #[test]
    fn changing_what_is_there_is_an_update() {
        // "make the project private" changes a project; it does not make a new one.
        let private = of_query("make the Asana project Website Relaunch private");
        assert!(adjustment(private, of_tool("asana_create_project")).abs() < f64::EPSILON);
        let rename = of_query("rename the 'Stat' column to 'Status'");
        assert_eq!(rename, of_tool("update_field"));
        assert!(adjustment(rename, of_tool("update_field")) > 0.0);
        assert!(adjustment(rename, of_tool("create_field")).abs() < f64::EPSILON);
        assert_eq!(of_query("make a new folder"), of_tool("create_directory"));
    }

    #[test]
    fn many_things_favour_batch_tools() {
        // "add these 5 leads as contacts" wants the batch tool, not the one-at-a-time one.
        assert!(asks_for_many("add these 5 leads as new contacts"));
        assert!(asks_for_many("delete 3 files"));
        assert!(asks_for_many("tag every open issue"));
        assert!(!asks_for_many("add a contact named Ada"));
        assert!(is_batch_tool("hubspot-batch-create-objects"));
        assert!(!is_batch_tool("create-contact"));
    }
}
