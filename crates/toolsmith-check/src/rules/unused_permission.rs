use toolsmith_model::PermissionFamily;

use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks Starlark and script tools for `permissions` their code never uses: a `net`
    /// grant in a file that makes no network call and names none of the granted hosts, an
    /// `fs.read`/`fs.write` grant in a file that touches no files, an `env` grant in a file
    /// that reads no environment variable. The check is deliberately conservative: any
    /// mention anywhere in the file counts as use, and command tools (whose program cannot be
    /// seen) are not checked.
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

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    const FAMILIES: &[(PermissionFamily, &str, &[&str])] = &[
        (
            PermissionFamily::Net,
            "makes no network request",
            &[
                "http.",
                "https.",
                "net.",
                "fetch(",
                "urllib",
                "requests.",
                "socket",
            ],
        ),
        (
            PermissionFamily::FsRead,
            "reads no files",
            &["fs.", "open(", "read_file", "list_dir", "file."],
        ),
        (
            PermissionFamily::FsWrite,
            "writes no files",
            &["fs.", "open(", "write_file", "file."],
        ),
        (
            PermissionFamily::Env,
            "reads no environment variables",
            &["env.", "env(", "getenv", "environ"],
        ),
    ];
    for tool in &server.tools {
        let Some(code) = tool.code.map(crate::locate::without_registrations) else {
            continue;
        };
        let permissions = &tool.definition.permissions;
        for (family, never, calls) in FAMILIES {
            let granted = permissions.family(*family);
            if granted.is_empty() {
                continue;
            }
            let called = calls.iter().any(|call| code.contains(call));
            let named = granted.iter().any(|value| {
                let literal = value
                    .trim_matches('*')
                    .trim_start_matches('.')
                    .trim_end_matches('/');
                !literal.is_empty() && code.contains(literal)
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
