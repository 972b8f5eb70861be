use crate::checker::{Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Checks that each icon of a tool is an `https:` URI, a `data:image/…` URI, or an image
    /// file in the folder (which Toolsmith turns into a `data:` URI). A missing or unreadable
    /// icon file is reported under the same id when the folder loads.
    ///
    /// ## Why is this bad?
    /// Clients fetch icons themselves. Plain `http:` is blocked as mixed content or
    /// insecure, other schemes (`file:`, `ftp:`) cannot be fetched at all, and a `data:` URI
    /// of something other than an image shows nothing. The tool then appears without its
    /// icon, or the client rejects the whole tool list.
    ///
    /// ## Example
    /// ```python
    /// mcp.tool(forecast_get, icons = ["http://example.com/sun.png"])
    /// ```
    ///
    /// ## How to fix
    /// Serve the icon over `https:`, or put the file in `icons/` and reference it by path:
    /// `icons = ["icons/sun.png"]`.
    pub(crate) static INVALID_ICON: InvalidIcon = {
        id: "invalid-icon",
        summary: "An icon is not an https: or data:image URI, or its file is missing",
        severity: Error,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        for icon in &tool.definition.icons {
            let src = icon.src.as_str();
            let shown: String = src.chars().take(60).collect();
            let problem = if src.starts_with("https://") {
                continue;
            } else if let Some(data) = src.strip_prefix("data:") {
                if data.starts_with("image/") {
                    continue;
                }
                format!(
                    "icon `{shown}` of `{}` is a data: URI but not an image",
                    tool.name()
                )
            } else if src.starts_with("http://") {
                format!(
                    "icon `{shown}` of `{}` uses http:, which clients block",
                    tool.name()
                )
            } else if src
                .split_once(':')
                .is_some_and(|(scheme, _)| !scheme.contains('/') && scheme.len() > 1)
            {
                format!(
                    "icon `{shown}` of `{}` is neither https: nor data:",
                    tool.name()
                )
            } else if server.context.has_file(src) {
                continue;
            } else {
                format!("icon file `{src}` of `{}` does not exist", tool.name())
            };
            report
                .add(tool.at_keyword("icons"), Some(tool.name()), problem)
                .help("use an https: URI, or an image file in icons/ (it is sent as a data: URI)");
        }
    }
}
