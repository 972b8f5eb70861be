//! The page's HTML, written from the page's data ([`super::info`]): every text from a tool
//! definition is escaped (descriptions are untrusted: a `<script>` in one shows as text),
//! and the Content-Security-Policy lets only the page's own inline script and style run,
//! by hash, so a slip in escaping could still not run a script.

use std::fmt::Write as _;
use std::sync::LazyLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use toolsmith_model::Escape;

use super::InstallSnippet;
use super::form;

const STYLE: &str = include_str!("assets/page.css");
const SCRIPT: &str = include_str!("assets/page.js");

/// The policy every page is served with: nothing but the inline script and style (by
/// hash), images from tool icons and results, and requests to this server.
pub(super) fn content_security_policy() -> &'static str {
    static POLICY: LazyLock<String> = LazyLock::new(|| {
        let hash = |text: &str| STANDARD.encode(Sha256::digest(text.as_bytes()));
        format!(
            "default-src 'none'; script-src 'sha256-{}'; style-src 'sha256-{}'; \
             img-src data: https: http:; media-src data:; connect-src 'self'; \
             form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
            hash(SCRIPT),
            hash(STYLE)
        )
    });
    &POLICY
}

/// `text` escaped for HTML text and attribute values.
pub(super) fn escape(text: &str) -> String {
    Escape::Html.apply(text)
}

/// The string at `key` of `value`, or "".
pub(super) fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The strings of the array `value` (none when it is not one).
pub(super) fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The head of every page, and the body's opening tag with `attributes`.
fn open(out: &mut String, title: &str, attributes: &str) {
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n<script>{SCRIPT}</script>\n</head>\n\
         <body {attributes}>\n",
        escape(title)
    );
}

/// The page that asks for the bearer token: nothing of what the server serves.
pub(super) fn locked() -> String {
    let mut out = String::new();
    open(
        &mut out,
        "Token required · Toolsmith",
        &format!("data-locked data-mcp-path=\"{}\"", super::super::MCP_PATH),
    );
    out.push_str(
        "<main class=\"locked\">\n<h1>This MCP server needs a token</h1>\n\
         <p>It was started with <code>--auth-token</code>: its tools, and this page, are \
         for those who have the token. Enter it to see and try the tools. It is kept in \
         this tab only (<code>sessionStorage</code>) and sent as \
         <code>Authorization: Bearer</code>.</p>\n",
    );
    token_form(&mut out, "Unlock");
    out.push_str(
        "<noscript><p class=\"error\">Sending the token needs JavaScript. Without it, ask \
         <code>/api/info</code> with the token, e.g. <code>curl -H \"Authorization: \
         Bearer $TOKEN\" URL/api/info</code>.</p></noscript>\n</main>\n</body>\n</html>\n",
    );
    out
}

fn token_form(out: &mut String, action: &str) {
    let _ = writeln!(
        out,
        "<form id=\"token-form\" class=\"token\">\n<label for=\"token\">Token</label>\n\
         <input type=\"password\" id=\"token\" name=\"token\" autocomplete=\"off\" required>\n\
         <button type=\"submit\">{action}</button>\n\
         <p id=\"token-status\" role=\"alert\"></p>\n</form>"
    );
}

/// The whole page for `info`.
pub(super) fn page(info: &Value, snippets: &[InstallSnippet]) -> String {
    let name = text(info, "name");
    let heading = Some(text(info, "title"))
        .filter(|title| !title.is_empty())
        .unwrap_or(name);
    let auth = info["authRequired"].as_bool().unwrap_or(false);
    let mut out = String::new();
    open(
        &mut out,
        &format!("{heading} · Toolsmith"),
        &format!(
            "data-mcp-path=\"{}\" data-auth=\"{}\"",
            super::super::MCP_PATH,
            if auth { "required" } else { "none" }
        ),
    );
    let tools = info["tools"].as_array().map_or(&[][..], Vec::as_slice);
    let _ = write!(
        out,
        "<header>\n<h1>{}</h1>\n<p class=\"meta\"><code>{}</code> {} · MCP at <code \
         class=\"url\">{}</code></p>\n<nav><a href=\"#tools\">Tools ({})</a> <a \
         href=\"#prompts\">Prompts</a> <a href=\"#resources\">Resources</a> <a \
         href=\"#skills\">Skills</a> <a href=\"#install\">Install</a> <a \
         href=\"{}\">JSON</a>{}</nav>\n",
        escape(heading),
        escape(name),
        escape(text(info, "version")),
        escape(text(info, "mcpUrl")),
        tools.len(),
        super::INFO_PATH,
        card_links(info),
    );
    if auth {
        out.push_str(
            "<p class=\"token-bar\">Calls send the token you entered. \
             <button type=\"button\" id=\"forget-token\">Forget the token</button></p>\n",
        );
    }
    out.push_str("</header>\n<main>\n");
    if let Some(instructions) = info["instructions"].as_str() {
        let _ = writeln!(
            out,
            "<section id=\"instructions\">\n<h2>Instructions</h2>\n<p class=\"prose\">{}</p>\n</section>",
            escape(instructions)
        );
    }
    out.push_str(
        "<section id=\"tools\">\n<h2>Tools</h2>\n<noscript><p class=\"note\">The try-it \
         forms need JavaScript; everything else on this page reads without it.</p></noscript>\n",
    );
    if tools.is_empty() {
        out.push_str("<p class=\"note\">This server serves no tools.</p>\n");
    }
    for (index, tool) in tools.iter().enumerate() {
        self::tool(&mut out, index, tool);
    }
    out.push_str("</section>\n");
    prompts(&mut out, info);
    resources(&mut out, info);
    skills(&mut out, info);
    install(&mut out, info, snippets);
    let versions = strings(&info["protocolVersions"]);
    let _ = write!(
        out,
        "</main>\n<footer>Served by Toolsmith · MCP protocol versions {} · this page as \
         JSON: <a href=\"{}\"><code>{}</code></a></footer>\n</body>\n</html>\n",
        escape(&versions.join(", ")),
        super::INFO_PATH,
        super::INFO_PATH,
    );
    out
}

fn tool(out: &mut String, index: usize, tool: &Value) {
    let name = text(tool, "name");
    let title = Some(text(tool, "title"))
        .filter(|title| !title.is_empty())
        .or_else(|| tool["annotations"]["title"].as_str());
    let _ = write!(
        out,
        "<article class=\"tool\" id=\"tool-{}\" data-tool=\"{}\">\n<h3>",
        escape(name),
        escape(name)
    );
    icon(out, &tool["icons"]);
    if let Some(title) = title {
        let _ = write!(out, "{} ", escape(title));
    }
    let _ = write!(out, "<code class=\"name\">{}</code>", escape(name));
    if tool["discoverable"].as_bool().unwrap_or(false) {
        out.push_str(
            " <span class=\"badge discoverable\" title=\"not in tools/list: found through \
             tool_search, called directly or through execute_tool\">discoverable</span>",
        );
    }
    out.push_str("</h3>\n");
    let description = text(tool, "description");
    if !description.is_empty() {
        let _ = writeln!(out, "<p class=\"prose\">{}</p>", escape(description));
    }
    annotations(out, &tool["annotations"]);
    form::parameters(out, &tool["inputSchema"]);
    if let Some(schema) = tool.get("outputSchema") {
        let _ = writeln!(
            out,
            "<details><summary>Output schema</summary><pre>{}</pre></details>",
            escape(&serde_json::to_string_pretty(schema).unwrap_or_default())
        );
    }
    form::try_it(out, index, name, &tool["inputSchema"]);
    out.push_str("</article>\n");
}

/// The first icon, when its `src` is a URL an `<img>` may load.
fn icon(out: &mut String, icons: &Value) {
    let Some(src) = icons
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|icon| icon["src"].as_str())
        .find(|src| {
            ["data:image/", "https:", "http:"]
                .iter()
                .any(|scheme| src.starts_with(scheme))
        })
    else {
        return;
    };
    let _ = write!(
        out,
        "<img class=\"icon\" src=\"{}\" alt=\"\" width=\"24\" height=\"24\"> ",
        escape(src)
    );
}

fn annotations(out: &mut String, annotations: &Value) {
    const HINTS: [(&str, &str, &str); 4] = [
        (
            "readOnlyHint",
            "read-only",
            "does not change its environment",
        ),
        ("destructiveHint", "destructive", "may delete or overwrite"),
        (
            "idempotentHint",
            "idempotent",
            "calling it again with the same arguments does nothing more",
        ),
        (
            "openWorldHint",
            "open world",
            "reaches beyond the server (the web, other systems)",
        ),
    ];
    let badges: Vec<String> = HINTS
        .iter()
        .filter_map(|(key, label, meaning)| {
            let value = annotations[*key].as_bool()?;
            let label = if value {
                (*label).to_owned()
            } else {
                format!("not {label}")
            };
            Some(format!(
                "<span class=\"badge\" title=\"{key}: {value} ({meaning})\">{label}</span>"
            ))
        })
        .collect();
    if !badges.is_empty() {
        let _ = writeln!(out, "<p class=\"annotations\">{}</p>", badges.join(" "));
    }
}

fn prompts(out: &mut String, info: &Value) {
    out.push_str("<section id=\"prompts\">\n<h2>Prompts</h2>\n");
    let prompts = info["prompts"].as_array().map_or(&[][..], Vec::as_slice);
    if prompts.is_empty() {
        out.push_str("<p class=\"note\">No prompts.</p>\n");
    }
    for prompt in prompts {
        let _ = write!(
            out,
            "<article class=\"prompt\">\n<h3>{}<code class=\"name\">{}</code></h3>\n",
            title_then_space(prompt),
            escape(text(prompt, "name"))
        );
        let description = text(prompt, "description");
        if !description.is_empty() {
            let _ = writeln!(out, "<p class=\"prose\">{}</p>", escape(description));
        }
        let arguments = prompt["arguments"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        if !arguments.is_empty() {
            out.push_str("<ul class=\"arguments\">\n");
            for argument in arguments {
                let required = argument["required"].as_bool().unwrap_or(false);
                let _ = writeln!(
                    out,
                    "<li><code>{}</code>{} {}</li>",
                    escape(text(argument, "name")),
                    if required {
                        " <span class=\"required\">required</span>"
                    } else {
                        ""
                    },
                    escape(text(argument, "description"))
                );
            }
            out.push_str("</ul>\n");
        }
        out.push_str("</article>\n");
    }
    out.push_str("</section>\n");
}

fn resources(out: &mut String, info: &Value) {
    out.push_str("<section id=\"resources\">\n<h2>Resources</h2>\n");
    let listed = info["resources"].as_array().map_or(&[][..], Vec::as_slice);
    let templates = info["resourceTemplates"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if listed.is_empty() && templates.is_empty() {
        out.push_str("<p class=\"note\">No resources.</p>\n");
    }
    for (resource, uri_key) in listed
        .iter()
        .map(|resource| (resource, "uri"))
        .chain(templates.iter().map(|template| (template, "uriTemplate")))
    {
        let _ = write!(
            out,
            "<article class=\"resource\">\n<h3>{}<code class=\"name\">{}</code></h3>\n<p \
             class=\"meta\"><code>{}</code>",
            title_then_space(resource),
            escape(text(resource, "name")),
            escape(text(resource, uri_key)),
        );
        let mime = text(resource, "mimeType");
        if !mime.is_empty() {
            let _ = write!(out, " · {}", escape(mime));
        }
        if uri_key == "uriTemplate" {
            out.push_str(" · template");
        }
        out.push_str("</p>\n");
        let description = text(resource, "description");
        if !description.is_empty() {
            let _ = writeln!(out, "<p class=\"prose\">{}</p>", escape(description));
        }
        out.push_str("</article>\n");
    }
    out.push_str("</section>\n");
}

/// Links to the Server Card and the AI Catalog, when they are served.
fn card_links(info: &Value) -> String {
    match (info["serverCard"].as_str(), info["aiCatalog"].as_str()) {
        (Some(card), Some(catalog)) => format!(
            " <a href=\"{}\">Server Card</a> <a href=\"{}\">AI Catalog</a>",
            escape(card),
            escape(catalog)
        ),
        _ => String::new(),
    }
}

fn skills(out: &mut String, info: &Value) {
    out.push_str("<section id=\"skills\">\n<h2>Skills</h2>\n");
    let skills = info["skills"].as_array().map_or(&[][..], Vec::as_slice);
    if skills.is_empty() {
        out.push_str("<p class=\"note\">No skills.</p>\n");
    }
    for skill in skills {
        let files = skill["files"].as_u64().unwrap_or(0);
        let _ = write!(
            out,
            "<article class=\"skill\">\n<h3><code class=\"name\">{}</code></h3>\n<p \
             class=\"meta\"><code>{}</code> · {files} file{}</p>\n<p class=\"prose\">{}</p>\n</article>\n",
            escape(text(skill, "name")),
            escape(text(skill, "uri")),
            if files == 1 { "" } else { "s" },
            escape(text(skill, "description")),
        );
    }
    out.push_str("</section>\n");
}

fn title_then_space(item: &Value) -> String {
    let title = text(item, "title");
    if title.is_empty() {
        String::new()
    } else {
        format!("{} ", escape(title))
    }
}

fn install(out: &mut String, info: &Value, snippets: &[InstallSnippet]) {
    let url = escape(text(info, "mcpUrl"));
    let _ = write!(
        out,
        "<section id=\"install\">\n<h2>Install</h2>\n<p>Point an MCP client at \
         <code class=\"copy\">{url}</code> (Streamable HTTP).",
    );
    if info["authRequired"].as_bool().unwrap_or(false) {
        out.push_str(
            " It needs the token as <code>Authorization: Bearer</code>: the snippets read it \
             from the environment variable <code>TOOLSMITH_AUTH_TOKEN</code> where the client \
             can, and leave a placeholder where it cannot.",
        );
    }
    out.push_str("</p>\n");
    if snippets.is_empty() {
        let _ = writeln!(
            out,
            "<pre class=\"copy\">toolsmith install CLIENT --http {url}</pre>"
        );
    }
    for (index, snippet) in snippets.iter().enumerate() {
        let _ = writeln!(
            out,
            "<details class=\"snippet\"{}>\n<summary>{}</summary>\n<pre class=\"copy\">{}</pre>\n\
             <p>or add this to <code>{}</code>:</p>\n<pre class=\"copy\">{}</pre>\n</details>",
            if index == 0 { " open" } else { "" },
            escape(&snippet.client),
            escape(&snippet.command),
            escape(&snippet.file),
            escape(snippet.text.trim_end()),
        );
    }
    out.push_str("</section>\n");
}
