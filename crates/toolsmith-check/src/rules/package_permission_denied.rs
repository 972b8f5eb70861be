use toolsmith_model::{PermissionFamily, Permissions};

use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Reports a package's tool that asks in its `permissions` for more than the host
    /// folder's `[packages.NAME] allow` grants (docs/packages.md). The tool is served
    /// without what was withheld: a call that needs it fails as if the tool had never
    /// asked.
    ///
    /// ## Why is this bad?
    /// It may be what you want: `allow` is how a host keeps someone else's tools away from
    /// its secrets and its network. But the tool was written to use what it asked for, so
    /// some of its calls now fail, and the model sees errors instead of results.
    ///
    /// ## Example
    /// ```toml
    /// # toolsmith.toml of the host folder
    /// [packages.weather]
    /// path = "../weather-tools"
    /// allow = {"net" = ["api.weather.example"]}
    /// ```
    /// ```python
    /// # ../weather-tools/forecast.star
    /// mcp.tool(forecast_get, permissions = {"net": ["api.weather.example", "tracker.example"]})
    /// ```
    ///
    /// ## How to fix
    /// If you trust the package with it, add the grant to `allow` in the host's
    /// `toolsmith.toml` (paths there are relative to the host folder):
    /// `allow = {"net" = ["api.weather.example", "tracker.example"]}`. If not, leave it
    /// out and ignore this rule for the tool: `[check.per-tool-ignores]`.
    pub(crate) static PACKAGE_PERMISSION_DENIED: PackagePermissionDenied = {
        id: "package-permission-denied",
        summary: "A package's tool asks for a permission its package's `allow` does not grant",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let Some(withheld) = &tool.definition.withheld else {
            continue;
        };
        let key = &withheld.package;
        report
            .add(
                tool.at_keyword("permissions"),
                Some(tool.name()),
                format!(
                    "tool `{}` asks for {} beyond what `[packages.{key}] allow` grants; it runs without {}",
                    tool.name(),
                    listed(&withheld.permissions),
                    if count(&withheld.permissions) == 1 { "it" } else { "them" },
                ),
            )
            .help(format!(
                "to grant it, add to `[packages.{key}]` in the host's toolsmith.toml: allow = {{{}}}",
                allow_table(&withheld.allow)
            ));
    }
}

fn count(permissions: &Permissions) -> usize {
    PermissionFamily::ALL
        .iter()
        .map(|family| permissions.family(*family).len())
        .sum()
}

/// `net` `evil.example`, `fs.read` `../secret`.
fn listed(permissions: &Permissions) -> String {
    let mut items = Vec::new();
    for family in PermissionFamily::ALL {
        for grant in permissions.family(family) {
            items.push(format!("`{family}` `{grant}`"));
        }
    }
    items.join(", ")
}

/// `"net" = ["evil.example"], "fs.read" = ["secret"]`.
fn allow_table(permissions: &Permissions) -> String {
    PermissionFamily::ALL
        .iter()
        .filter(|family| !permissions.family(**family).is_empty())
        .map(|family| {
            let grants: Vec<String> = permissions
                .family(*family)
                .iter()
                .map(|grant| format!("\"{grant}\""))
                .collect();
            format!("\"{family}\" = [{}]", grants.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}
