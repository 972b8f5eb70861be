use toolsmith_model::PermissionFamily;

use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks Starlark and script tools for `permissions` their code never uses: a `net`
    /// grant in a file that makes no network call and names none of the granted hosts, an
    /// `fs.read`/`fs.write` grant in a file that touches no files, an `env` grant in a file
    /// that reads no environment variable. The check is deliberately conservative: a call
    /// anywhere in the file (helpers included) counts as use, and so does a string naming a
    /// granted host or path; command tools (whose program cannot be seen) are not checked.
    ///
    /// ## Why is this bad?
    /// Permissions are what a reviewer reads to judge what a tool can do. A grant the code
    /// does not need widens what a compromised or buggy tool could reach, and teaches
    /// readers to ignore the permissions list.
    ///
    /// ## Example
    /// ```python
    /// def text_slugify(text: str) -> str: ...
    /// mcp.tool(text_slugify, permissions = {"net": ["api.example.com"]})
    /// ```
    ///
    /// ## How to fix
    /// Remove the grant; add it back when the code needs it.
    pub(crate) static UNUSED_PERMISSION: UnusedPermission = {
        id: "unused-permission",
        summary: "A tool is granted a permission its code never uses",
        severity: Warning,
        check: check,
    }
}

/// Whether a call, by its dotted name, uses a permission.
type Uses = fn(&str) -> bool;

/// Each permission, what its absence of use is called, and which calls use it.
const FAMILIES: &[(PermissionFamily, &str, Uses)] = &[
    (PermissionFamily::Net, "makes no network request", |name| {
        first(
            name,
            &["http", "https", "net", "requests", "urllib", "socket"],
        ) || last(name, &["fetch"])
    }),
    (PermissionFamily::FsRead, "reads no files", |name| {
        first(name, &["fs", "file"]) || last(name, &["open", "read_file", "list_dir"])
    }),
    (PermissionFamily::FsWrite, "writes no files", |name| {
        first(name, &["fs", "file"]) || last(name, &["open", "write_file"])
    }),
    (
        PermissionFamily::Env,
        "reads no environment variables",
        |name| {
            first(name, &["env", "environ"])
                || last(name, &["env", "getenv"])
                || name.contains("environ")
        },
    ),
];

/// Whether the dotted `name` starts with one of `segments`.
fn first(name: &str, segments: &[&str]) -> bool {
    segments.contains(&name.split('.').next().unwrap_or_default())
}

/// Whether the dotted `name` ends with one of `segments`.
fn last(name: &str, segments: &[&str]) -> bool {
    segments.contains(&name.rsplit('.').next().unwrap_or_default())
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let Some(code) = &tool.definition.source_facts().code else {
            continue;
        };
        let permissions = &tool.definition.permissions;
        for (family, never, uses) in FAMILIES {
            let granted = permissions.family(*family);
            if granted.is_empty() {
                continue;
            }
            let called = code.file_calls.iter().any(|call| uses(&call.name));
            let named = granted.iter().any(|value| {
                let literal = value
                    .trim_matches('*')
                    .trim_start_matches('.')
                    .trim_end_matches('/');
                !literal.is_empty() && code.strings.iter().any(|text| text.contains(literal))
            });
            if !called && !named {
                report
                    .add(
                        tool.at_keyword("permissions"),
                        Some(tool.name()),
                        format!(
                            "`{}` is granted `{family}` but its code {never}",
                            tool.name()
                        ),
                    )
                    .help(format!(
                        "remove `{family}` from `permissions` until the code needs it"
                    ));
            }
        }
    }
}
