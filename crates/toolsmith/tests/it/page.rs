//! The page at `/` and its data at `/api/info` on `toolsmith serve
//! --http`, over real HTTP: what they show, escaping, the bearer token and the `Host` and
//! `Origin` checks. The page in a real browser is `page_browser.rs`.

use serde_json::Value;

use crate::folder;
use crate::serve_process::ServeProcess;

/// A tool with a number, an enum and an array (and an HTTP override), one that always
/// fails, and a discoverable one whose description and parameter are markup.
pub(crate) const TOOLS: &str = r#"
def scale(values: list[float], factor: float, unit: str = "cm") -> dict:
    """Scale a list of lengths by a factor.

    Args:
        values: The lengths to scale.
        factor: What to multiply each length by.
        unit: The unit of the lengths.
    """
    scaled = [value * factor for value in values]
    return {"scaled": scaled, "unit": unit, "total": sum(scaled)}

mcp.tool(
    scale,
    title = "Scale lengths",
    icons = ["data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4="],
    read_only = True,
    params = {"unit": {"enum": ["cm", "in", "mm"]}},
    overrides = {"http": {"description": "Scale lengths (served over HTTP)."}},
)

def refuse(reason: str) -> str:
    """Always fail, saying why.

    Args:
        reason: What to say.
    """
    return mcp.error("refused: " + reason)

mcp.tool(refuse)

def shady(text: str) -> str:
    """Echo text. <script>window.pwned = true</script><img src=x onerror="window.pwned = true"> & "quotes"

    Args:
        text: <b>bold</b> text to echo.
    """
    return text

mcp.tool(shady, discoverable = True)
"#;

/// The fixture folder: [`TOOLS`] and a server with instructions.
pub(crate) fn tools_folder() -> tempfile::TempDir {
    folder(&[
        ("tools.star", TOOLS),
        (
            "toolsmith.toml",
            "[server]\nname = \"lengths\"\ninstructions = \"Measure <things> & scale them.\"\n",
        ),
    ])
}

/// One HTTP/1.1 GET of `path` with `Host` set to the server's address and `headers`;
/// the status, the head and the body.
fn get(server: &ServeProcess, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    let mut request = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        request.extend(["Host: ", server.address(), "\r\n"]);
    }
    for (name, value) in headers {
        request.extend([*name, ": ", *value, "\r\n"]);
    }
    request.push_str("\r\n");
    let (status, answer) = server.raw(&request);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (status, head.to_ascii_lowercase(), body.to_owned())
}

fn info(server: &ServeProcess, headers: &[(&str, &str)]) -> Value {
    let (status, head, body) = get(server, "/api/info", headers);
    assert_eq!(status, 200, "{head}\n{body}");
    assert!(head.contains("content-type: application/json"), "{head}");
    serde_json::from_str(&body).unwrap()
}

#[test]
fn api_info_describes_the_server_as_served_over_http() {
    let dir = tools_folder();
    let server = ServeProcess::http(&[dir.path().to_str().unwrap()], None);
    let info = info(&server, &[]);
    assert_eq!(info["name"], "lengths");
    assert_eq!(info["instructions"], "Measure <things> & scale them.");
    assert_eq!(info["mcpUrl"], server.url());
    assert_eq!(info["authRequired"], false);
    let versions = info["protocolVersions"].as_array().unwrap();
    assert!(versions.contains(&"2025-11-25".into()), "{versions:?}");
    let tools = info["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    // The discoverable tool is there, and so are the built-ins that find and run it.
    assert_eq!(
        names,
        ["execute_tool", "refuse", "scale", "shady", "tool_search"]
    );
    let scale = &tools[2];
    assert_eq!(scale["description"], "Scale lengths (served over HTTP).");
    assert_eq!(scale["discoverable"], false);
    assert_eq!(scale["annotations"]["readOnlyHint"], true);
    assert_eq!(
        scale["inputSchema"]["properties"]["unit"]["enum"],
        serde_json::json!(["cm", "in", "mm"])
    );
    assert_eq!(tools[3]["discoverable"], true);
    assert_eq!(info["prompts"], serde_json::json!([]));
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn the_page_shows_every_tool_escaped_with_forms_and_install_snippets() {
    let dir = tools_folder();
    let server = ServeProcess::http(&[dir.path().to_str().unwrap()], None);
    let (status, head, page) = get(&server, "/", &[]);
    assert_eq!(status, 200, "{head}");
    assert!(
        head.contains("content-type: text/html; charset=utf-8"),
        "{head}"
    );
    // Only the page's own inline script and style run, by hash.
    assert!(
        head.contains("content-security-policy: default-src 'none'; script-src 'sha256-"),
        "{head}"
    );
    for tool in ["execute_tool", "refuse", "scale", "shady", "tool_search"] {
        assert!(
            page.contains(&format!("<article class=\"tool\" id=\"tool-{tool}\"")),
            "{tool}"
        );
        assert!(
            page.contains(&format!("<form class=\"try-form\" data-tool=\"{tool}\"")),
            "{tool}"
        );
    }
    assert!(page.contains("Scale lengths (served over HTTP)."));
    assert!(page.contains("Measure &lt;things&gt; &amp; scale them."));
    assert!(page.contains("<span class=\"badge discoverable\""));
    assert!(
        page.contains("<img class=\"icon\" src=\"data:image/svg+xml;base64,PHN2Zy"),
        "{page}"
    );
    // A description is text, whatever it holds.
    assert!(
        page.contains("Echo text. &lt;script&gt;window.pwned = true&lt;/script&gt;&lt;img src=x onerror=&quot;window.pwned = true&quot;&gt; &amp; &quot;quotes&quot;"),
        "{page}"
    );
    assert!(!page.contains("<script>window.pwned"));
    assert!(!page.contains("<img src=x"));
    assert!(page.contains("&lt;b&gt;bold&lt;/b&gt; text to echo."));
    // Each parameter gets the control of its type.
    assert!(page.contains("data-param=\"values\" data-kind=\"json\" data-required"));
    assert!(page.contains("<input type=\"number\" step=\"any\" id=\"try-2-1\" data-param=\"factor\" data-kind=\"number\" data-required"));
    assert!(page.contains("<option value=\"&quot;cm&quot;\" selected>cm</option>"));
    // Install snippets for this server's URL, from `toolsmith install`'s own table.
    let url = server.url();
    assert!(
        page.contains(&format!(
            "toolsmith install claude-code --http {url} --name lengths"
        )),
        "{page}"
    );
    assert!(page.contains("[mcp_servers.lengths]"), "{page}");
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn with_a_token_the_page_asks_for_it_and_never_holds_it() {
    let dir = tools_folder();
    let token = "page-s3cret";
    let server = ServeProcess::http(&[dir.path().to_str().unwrap()], Some(token));
    let (status, head, page) = get(&server, "/", &[]);
    assert_eq!(status, 401, "{head}");
    assert!(head.contains("www-authenticate: bearer"), "{head}");
    assert!(head.contains("content-type: text/html"), "{head}");
    assert!(
        page.contains("<input type=\"password\" id=\"token\""),
        "{page}"
    );
    assert!(
        !page.contains("tool-scale") && !page.contains("Scale lengths"),
        "the tools show without the token: {page}"
    );
    let (status, head, _) = get(&server, "/", &[("Authorization", "Bearer wrong")]);
    assert_eq!(status, 401);
    assert!(head.contains("error=\"invalid_token\""), "{head}");
    let bearer = format!("Bearer {token}");
    let (status, _, page) = get(&server, "/", &[("Authorization", &bearer)]);
    assert_eq!(status, 200);
    assert!(page.contains("id=\"tool-scale\""), "{page}");
    assert!(!page.contains(token), "the page holds the token");
    // The snippets name a variable for the token, or a placeholder.
    assert!(
        page.contains("--auth-token-env TOOLSMITH_AUTH_TOKEN"),
        "{page}"
    );
    // The data is as secret as the page.
    let (status, head, _) = get(&server, "/api/info", &[]);
    assert_eq!(status, 401, "{head}");
    assert_eq!(
        info(&server, &[("Authorization", &bearer)])["authRequired"],
        true
    );
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn the_page_and_its_data_check_host_and_origin_as_mcp_does() {
    let dir = tools_folder();
    let dir = dir.path().to_str().unwrap();
    let server = ServeProcess::http(&[dir, "--allow-origin", "https://app.example"], None);
    let own_origin = format!("http://{}", server.address());
    for path in ["/", "/api/info"] {
        let (status, _, body) = get(&server, path, &[("Host", "evil.example")]);
        assert_eq!(status, 403, "{path}: {body}");
        let (status, _, body) = get(&server, path, &[("Origin", "http://evil.example")]);
        assert_eq!(status, 403, "{path}: {body}");
        let twice = [("Host", server.address()), ("Host", "evil.example")];
        assert_eq!(get(&server, path, &twice).0, 400, "{path}");
        // Near misses: the page's own origin and an allowed one.
        assert_eq!(
            get(&server, path, &[("Origin", &own_origin)]).0,
            200,
            "{path}"
        );
        assert_eq!(
            get(&server, path, &[("Origin", "https://app.example")]).0,
            200,
            "{path}"
        );
    }
    assert_eq!(server.stop(), Some(0));
}
