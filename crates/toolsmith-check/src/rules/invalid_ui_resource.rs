use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks a tool's MCP Apps link (`ui={"resource_uri": ...}`, or `[ui]` in a manifest):
    /// the URI must be a `ui://` URI, the folder must serve a resource with that URI (files
    /// under `resources/ui/` are MCP Apps documents), and `visibility` may only name `model`
    /// and `app`.
    ///
    /// ## Why is this bad?
    /// A host that supports MCP Apps fetches the linked resource to render the tool's UI.
    /// A URI that is not `ui://` is not an MCP Apps resource, and one the server does not
    /// serve fails when the tool is first used — in front of the user, not at startup.
    ///
    /// ## Example
    /// ```python
    /// mcp.tool(sales_report, ui = {"resource_uri": "ui://sales/dashbord.html"})
    /// # but the folder serves resources/ui/dashboard.html as ui://sales/dashboard.html
    /// ```
    ///
    /// ## How to fix
    /// Link the URI the folder serves (`toolsmith list` and the server's `resources/list`
    /// show it): `ui = {"resource_uri": "ui://sales/dashboard.html"}`.
    pub(crate) static INVALID_UI_RESOURCE: InvalidUiResource = {
        id: "invalid-ui-resource",
        summary: "A tool's MCP Apps `ui` link is not a `ui://` URI the folder serves",
        severity: Error,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    let ui_uris: Option<Vec<&str>> = server.context.resource_uris.as_ref().map(|uris| {
        uris.iter()
            .map(String::as_str)
            .filter(|uri| uri.starts_with("ui://"))
            .collect()
    });
    for tool in &server.tools {
        let Some(ui) = &tool.definition.ui else {
            continue;
        };
        let uri = &ui.resource_uri;
        if !uri.starts_with("ui://") {
            report
                .add(tool.at_keyword("ui"), Some(tool.name()), format!("`ui` of `{}` points at `{uri}`, not a `ui://` resource", tool.name()))
                .help("put the HTML under resources/ui/ and link the `ui://` URI the folder serves for it");
        } else if let Some(served) = ui_uris
            .as_ref()
            .filter(|served| !served.contains(&uri.as_str()))
        {
            let help = match toolsmith_model::names::suggestion(uri, served.iter().copied()) {
                Some(suggestion) => suggestion,
                None if served.is_empty() => {
                    "the folder serves no `ui://` resources: add the HTML under resources/ui/"
                        .to_owned()
                }
                None => format!(
                    "the folder serves {}",
                    served
                        .iter()
                        .map(|u| format!("`{u}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            report
                .add(
                    tool.at_keyword("ui"),
                    Some(tool.name()),
                    format!(
                        "`ui` of `{}` links `{uri}`, which the folder does not serve",
                        tool.name()
                    ),
                )
                .help(help);
        }
        for audience in ui
            .visibility
            .iter()
            .filter(|v| !matches!(v.as_str(), "model" | "app"))
        {
            report
                .add(
                    tool.at_keyword("ui"),
                    Some(tool.name()),
                    format!(
                        "`ui.visibility` of `{}` has unknown audience `{audience}`",
                        tool.name()
                    ),
                )
                .help("visibility lists who may call the tool: \"model\", \"app\" or both");
        }
    }
}
