use toolsmith_model::PermissionFamily;

use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks for `permissions` broader than the tool can need, where that can be seen:
    /// `fs.write` on a tool annotated `read_only`, the whole file system (`/`, `*`, `/**`)
    /// for `fs.read` or `fs.write`, the whole environment (`env: ["*"]`), and `net: ["*"]` in
    /// a tool whose code names the hosts it talks to.
    ///
    /// ## Why is this bad?
    /// A permission is the boundary a tool cannot cross even when its code is wrong or its
    /// input is hostile. A wildcard turns that boundary off: the whole environment includes
    /// every secret of the server, and a read-only tool that may write is a contradiction
    /// clients act on (they skip confirmation for read-only tools).
    ///
    /// ## Example
    /// ```python
    /// def forecast_get(city: str) -> dict:
    ///     return http.get("https://api.weather.example/v1/" + city)
    ///
    /// mcp.tool(forecast_get, read_only = True, permissions = {"net": ["*"], "fs.write": ["/tmp"]})
    /// ```
    ///
    /// ## How to fix
    /// Grant exactly what the code uses: `permissions = {"net": ["api.weather.example"]}`,
    /// and no `fs.write` on a read-only tool.
    pub(crate) static OVERBROAD_PERMISSION: OverbroadPermission = {
        id: "overbroad-permission",
        summary: "A permission is broader than the tool can need",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    const EVERYTHING: &[&str] = &["*", "**", "/", "/*", "/**"];
    for tool in &server.tools {
        let permissions = &tool.definition.permissions;
        let mut problems: Vec<(String, String)> = Vec::new();
        if tool.definition.annotations.read_only == Some(true) && !permissions.fs_write.is_empty() {
            problems.push((
                format!(
                    "`{}` is annotated read-only but granted `fs.write`",
                    tool.name()
                ),
                "remove `fs.write`, or drop `read_only = True` if the tool does write".into(),
            ));
        }
        for (family, granted) in [
            (PermissionFamily::FsRead, &permissions.fs_read),
            (PermissionFamily::FsWrite, &permissions.fs_write),
        ] {
            if let Some(all) = granted
                .iter()
                .find(|path| EVERYTHING.contains(&path.as_str()))
            {
                problems.push((
                    format!(
                        "`{}` is granted `{family}` on `{all}`, the whole file system",
                        tool.name()
                    ),
                    "grant the directories the tool works in, e.g. [\"data/\"]".into(),
                ));
            }
        }
        if permissions.env.iter().any(|name| name == "*") {
            problems.push((
                format!("`{}` is granted every environment variable", tool.name()),
                "list the variables the tool reads; the environment holds the server's secrets"
                    .into(),
            ));
        }
        if permissions.net.iter().any(|host| host == "*") {
            let hosts = tool
                .definition
                .source_facts()
                .code
                .as_ref()
                .map(|code| crate::prose::hosts_named(&code.strings.join("\n")))
                .unwrap_or_default();
            if !hosts.is_empty() {
                problems.push((
                    format!(
                        "`{}` is granted every host, but its code names only {}",
                        tool.name(),
                        hosts
                            .iter()
                            .map(|h| format!("`{h}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    format!(
                        "grant just those: \"net\": [{}]",
                        hosts
                            .iter()
                            .map(|h| format!("\"{h}\""))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
        for (message, help) in problems {
            report
                .add(tool.at_keyword("permissions"), Some(tool.name()), message)
                .help(help);
        }
    }
}
