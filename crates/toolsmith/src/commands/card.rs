//! `toolsmith card`: the folder's MCP Server Card (SEP-2127), for static hosting; the same
//! card `serve --http` serves at `/mcp/server-card` (docs/http.md, "Server Card and AI
//! Catalog"), built here from `[server]` of `toolsmith.toml` for both.

use std::path::Path;

use base64::Engine as _;
use serde_json::{Value, json};
use toolsmith_folder::FolderConfig;
use toolsmith_server::{MCP_PATH, ServerCard, ai_catalog};

use crate::ExitStatus;
use crate::args::CardArgs;
use crate::folder;
use crate::printer::Printer;

/// Where the card says the server is when neither `--url` nor `--public-url` is given.
const DEFAULT_URL: &str = "http://localhost:8080";

pub(crate) fn run(args: &CardArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let CardArgs {
        folder: folder_arg,
        url,
        auth,
        catalog,
    } = args;
    let loaded = folder::load(folder_arg.dir.as_deref())?;
    let card = server_card(loaded.config(), loaded.root(), url.clone());
    let url = card
        .public_url
        .clone()
        .unwrap_or_else(|| format!("{DEFAULT_URL}{MCP_PATH}"));
    let document = if *catalog {
        ai_catalog(&card.name, &format!("{url}/server-card"))
    } else {
        card.to_json(&url, *auth || loaded.config().auth.is_some())
    };
    printer.data(&serde_json::to_string_pretty(&document)?)?;
    Ok(ExitStatus::Success)
}

/// The card of a folder with `config`, served at `public_url` (else wherever it is asked
/// for): `[server] registry_name` (reverse-DNS; else `local/` and the server's name),
/// `title` (else `display_name`), `description` (else the first line of `instructions`),
/// `version`, `website` (else `homepage`), `repository` and `icon` (a file of the folder at
/// `root`, sent inline as a `data:` URI, or an `https:` URL). An icon that cannot be used is
/// left out with a warning in the log: the card is metadata, and serving goes on without it.
pub(crate) fn server_card(
    config: &FolderConfig,
    root: &Path,
    public_url: Option<String>,
) -> ServerCard {
    let server = config.raw.get("server").and_then(Value::as_object);
    let text = |key: &str| {
        server
            .and_then(|server| server.get(key))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|text| !text.is_empty())
            .map(str::to_owned)
    };
    let display = config
        .name
        .clone()
        .unwrap_or_else(|| "toolsmith".to_owned());
    let name = text("registry_name").unwrap_or_else(|| format!("local/{}", card_segment(&display)));
    let description = text("description")
        .or_else(|| {
            config
                .instructions
                .as_deref()
                .and_then(|text| text.lines().next())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| format!("The tools of `{display}`, served by Toolsmith"));
    ServerCard {
        name,
        title: text("title")
            .or_else(|| text("display_name"))
            .or(config.name.clone()),
        description,
        version: config
            .version
            .clone()
            .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_owned()),
        website: text("website").or_else(|| text("homepage")),
        repository: text("repository"),
        icons: text("icon")
            .and_then(|icon| match card_icon(root, &icon) {
                Ok(entry) => Some(entry),
                Err(why) => {
                    tracing::warn!("`[server] icon` is left out of the Server Card: {why}");
                    None
                }
            })
            .into_iter()
            .collect(),
        public_url,
    }
}

/// The largest icon file a card carries inline, as `toolsmith icon` allows for a data URI.
const MAX_CARD_ICON_BYTES: u64 = 100 * 1024;

/// The card's entry for `[server] icon`: an `https:` URL as it is, a file of the folder as a
/// `data:` URI with its media type.
fn card_icon(root: &Path, icon: &str) -> Result<Value, String> {
    if icon.starts_with("https://") || icon.starts_with("data:") {
        return Ok(json!({ "src": icon }));
    }
    let path = root.join(icon);
    let mime = match path
        .extension()
        .and_then(|extension| extension.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("webp") => "image/webp",
        Some("svg") => "image/svg+xml",
        _ => return Err(format!("`{icon}` is not a PNG, JPEG, WebP or SVG file")),
    };
    let bytes = toolsmith_folder::read::read_bytes(&path, MAX_CARD_ICON_BYTES)
        .map_err(|error| format!("`{icon}`: {error}"))?;
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    Ok(json!({ "src": format!("data:{mime};base64,{data}"), "mimeType": mime }))
}

/// `text` as the part of a card's `name` after the `/`: letters, digits, `.`, `_` and `-`.
fn card_segment(text: &str) -> String {
    let segment: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if segment.is_empty() {
        "toolsmith".to_owned()
    } else {
        segment
    }
}
