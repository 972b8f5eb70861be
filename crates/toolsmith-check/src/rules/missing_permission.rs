use toolsmith_model::PermissionFamily;

use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks Starlark and script tools for calls that need a permission the tool is not
    /// granted: `http.get`, `http.post` or `http.request` without `net`; `mcp.read_file` or
    /// `mcp.list_dir` without `fs.read`; `mcp.write_file` without `fs.write`; `mcp.getenv`
    /// without `env`. A Starlark tool's own `def` is read (not the helpers it calls), a
    /// manifest tool's whole script.
    ///
    /// ## Why is this bad?
    /// The call fails every time it runs, with an error the model sees instead of a
    /// result. The check finds it before anyone calls the tool.
    ///
    /// ## Example
    /// ```python
    /// def forecast_get(city: str) -> dict:
    ///     return http.get("https://api.weather.example/v1/" + city).json
    ///
    /// mcp.tool(forecast_get)
    /// ```
    ///
    /// ## How to fix
    /// Grant exactly what the call needs:
    /// `mcp.tool(forecast_get, permissions = {"net": ["api.weather.example"]})`.
    pub(crate) static MISSING_PERMISSION: MissingPermission = {
        id: "missing-permission",
        summary: "A tool calls what its permissions do not allow",
        severity: Warning,
        check: check,
    }
}

/// Each permission and the calls that need it.
const NEEDS: &[(PermissionFamily, &[&str])] = &[
    (
        PermissionFamily::Net,
        &["http.get", "http.post", "http.request"],
    ),
    (PermissionFamily::FsRead, &["mcp.read_file", "mcp.list_dir"]),
    (PermissionFamily::FsWrite, &["mcp.write_file"]),
    (PermissionFamily::Env, &["mcp.getenv"]),
];

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let permissions = &tool.definition.permissions;
        for (family, calls) in NEEDS {
            let granted = permissions.family(*family);
            if !granted.is_empty() {
                continue;
            }
            let Some(call) = tool
                .calls()
                .iter()
                .filter(|call| calls.contains(&call.name.as_str()))
                .min_by_key(|call| call.span.start)
            else {
                continue;
            };
            report
                .add(
                    tool.at_call(call, "permissions"),
                    Some(tool.name()),
                    format!(
                        "`{}` calls `{}` but is not granted `{family}`",
                        tool.name(),
                        call.name
                    ),
                )
                .help(format!(
                    "add `permissions = {{\"{family}\": [...]}}` naming what it reaches \
                     (docs/tools.md, the sandbox)"
                ));
        }
    }
}
