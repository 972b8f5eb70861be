//! The Server Card and the AI Catalog (SEP-2127): what `serve --http`
//! answers at `/mcp/server-card` and `/.well-known/ai-catalog.json`, checked against the
//! extension's own `schema.json` (a copy in `server_card/`, with the commit it came from),
//! against what `server/discover` then says, and as `toolsmith card` prints it.

use serde_json::{Value, json};

use crate::serve_process::ServeProcess;
use crate::{folder, toolsmith};

const CONFIG: &str = r#"[server]
name = "weather"
registry_name = "io.github.acme/weather"
title = "Acme Weather"
description = "Weather forecasts for any city"
version = "1.2.0"
website = "https://acme.example.com/weather"
repository = "https://github.com/acme/weather"
"#;

const TOOL: &str = "def hi() -> str:\n    \"\"\"Say hi.\"\"\"\n    return \"hi\"\n\nmcp.tool(hi)\n";

/// `card` checked against the `ServerCard` definition of the extension's schema.
fn assert_valid(card: &Value) {
    let schema: Value = serde_json::from_str(include_str!("server_card/schema.json")).unwrap();
    let schema = json!({
        "$schema": schema["$schema"],
        "$defs": schema["$defs"],
        "$ref": "#/$defs/ServerCard",
    });
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(card)
        .map(|error| format!("{error} at {}", error.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{card:#}");
    // The extension: a card never enumerates primitives.
    for key in ["tools", "prompts", "resources"] {
        assert!(card.get(key).is_none(), "{card:#}");
    }
}

/// `GET path` with `headers`: status, head and body.
fn get(server: &ServeProcess, path: &str, headers: &[&str]) -> (u16, String, String) {
    let mut request = format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
        server.address()
    );
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    let (status, answer) = server.raw(&request);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (status, head.to_ascii_lowercase(), body.to_owned())
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines()
        .find_map(|line| line.strip_prefix(&format!("{name}: ")))
        .map(str::trim)
}

#[test]
fn the_card_is_valid_public_and_says_what_discover_says() {
    let dir = folder(&[("toolsmith.toml", CONFIG), ("hi.star", TOOL)]);
    let server = ServeProcess::http(&[dir.path().to_str().unwrap()], Some("secret"));

    // No token: the card is public metadata, even with auth on.
    let (status, head, body) = get(
        &server,
        "/mcp/server-card",
        &["Accept: application/mcp-server-card+json"],
    );
    assert_eq!(status, 200, "{head}\n{body}");
    assert_eq!(
        header(&head, "content-type"),
        Some("application/mcp-server-card+json")
    );
    assert_eq!(header(&head, "access-control-allow-origin"), Some("*"));
    let card: Value = serde_json::from_str(&body).unwrap();
    assert_valid(&card);
    assert_eq!(card["name"], "io.github.acme/weather");
    assert_eq!(card["title"], "Acme Weather");
    assert_eq!(card["version"], "1.2.0");
    assert_eq!(card["repository"]["source"], "github");
    let remote = &card["remotes"][0];
    assert_eq!(remote["type"], "streamable-http");
    assert_eq!(remote["url"], server.url());
    assert_eq!(remote["headers"][0]["name"], "Authorization");

    // What the card claims is what the endpoint then says.
    let (status, discovered) = server.post_2026(
        Some("secret"),
        &json!({}),
        ("server/discover", ""),
        &json!({}),
    );
    assert_eq!(status, 200, "{discovered}");
    assert_eq!(
        remote["supportedProtocolVersions"], discovered["result"]["supportedVersions"],
        "{discovered}"
    );

    // An unchanged card is not sent again.
    let tag = header(&head, "etag").unwrap().to_owned();
    let (status, _, body) = get(
        &server,
        "/mcp/server-card",
        &[&format!("If-None-Match: {tag}")],
    );
    assert_eq!(status, 304);
    assert!(body.is_empty(), "{body}");

    // The catalog's entry fetches the card.
    let (status, head, body) = get(&server, "/.well-known/ai-catalog.json", &[]);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        header(&head, "content-type"),
        Some("application/ai-catalog+json")
    );
    let catalog: Value = serde_json::from_str(&body).unwrap();
    let entry = &catalog["entries"][0];
    assert_eq!(entry["type"], "application/mcp-server-card+json");
    assert_eq!(entry["identifier"], "urn:air:acme.github.io:mcp:weather");
    let url = entry["url"].as_str().unwrap();
    let path = url
        .strip_prefix(&format!("http://{}", server.address()))
        .unwrap_or_else(|| panic!("{url}"));
    let (status, _, again) = get(&server, path, &[]);
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<Value>(&again).unwrap(), card);

    // The page's data links both.
    let (status, _, body) = get(&server, "/api/info", &["Authorization: Bearer secret"]);
    assert_eq!(status, 200, "{body}");
    let info: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(info["serverCard"], format!("{}/server-card", server.url()));
    assert_eq!(info["aiCatalog"], "/.well-known/ai-catalog.json");
    server.stop();
}

#[test]
fn a_public_url_is_the_cards_remote() {
    let dir = folder(&[("hi.star", TOOL)]);
    let mut command = ServeProcess::http_command(&[dir.path().to_str().unwrap()], None);
    command.args(["--public-url", "https://tools.example.com/mcp"]);
    let server = ServeProcess::spawn_http(command);
    let (status, _, body) = get(&server, "/mcp/server-card", &[]);
    assert_eq!(status, 200, "{body}");
    let card: Value = serde_json::from_str(&body).unwrap();
    assert_valid(&card);
    assert_eq!(card["remotes"][0]["url"], "https://tools.example.com/mcp");
    assert!(card["remotes"][0].get("headers").is_none(), "{card:#}");
    server.stop();
}

#[test]
fn toolsmith_card_prints_the_card_for_static_hosting() {
    let dir = folder(&[("toolsmith.toml", CONFIG), ("hi.star", TOOL)]);
    let card = crate::json_output(toolsmith().args([
        "card",
        dir.path().to_str().unwrap(),
        "--url",
        "https://tools.example.com/mcp",
    ]));
    assert_valid(&card);
    assert_eq!(card["remotes"][0]["url"], "https://tools.example.com/mcp");
    assert_eq!(card["description"], "Weather forecasts for any city");
    let catalog = crate::json_output(toolsmith().args([
        "card",
        dir.path().to_str().unwrap(),
        "--url",
        "https://tools.example.com/mcp",
        "--catalog",
    ]));
    assert_eq!(
        catalog["entries"][0]["url"],
        "https://tools.example.com/mcp/server-card"
    );
}

/// The card's `icons` come from `[server] icon`: a file of the folder is sent inline as a
/// `data:` URI (the card is read before any connection, so a path would mean nothing to a
/// client), and the card stays valid.
#[test]
fn the_servers_icon_is_on_the_card_as_a_data_uri() {
    // A 1x1 PNG.
    const PNG: &[u8] = &[
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f,
        0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00,
        0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49,
        0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
    let config = format!("{CONFIG}icon = \"icon.png\"\n");
    let dir = folder(&[("toolsmith.toml", config.as_str()), ("hi.star", TOOL)]);
    std::fs::write(dir.path().join("icon.png"), PNG).unwrap();
    let card = crate::json_output(toolsmith().args([
        "card",
        dir.path().to_str().unwrap(),
        "--url",
        "https://tools.example.com/mcp",
    ]));
    assert_valid(&card);
    let icon = &card["icons"][0];
    assert_eq!(icon["mimeType"], "image/png", "{card:#}");
    assert!(
        icon["src"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{card:#}"
    );
}
