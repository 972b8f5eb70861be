//! `toolsmith card`: the folder's MCP Server Card (SEP-2127), for static hosting; the same
//! card `serve --http` serves at `/mcp/server-card` (docs/http.md, "Server Card and AI
//! Catalog"), built here from `[server]` of `toolsmith.toml` for both.

use serde_json::Value;
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
    let card = server_card(loaded.config(), url.clone());
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
/// `version`, `website` (else `homepage`) and `repository`.
pub(crate) fn server_card(config: &FolderConfig, public_url: Option<String>) -> ServerCard {
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
        public_url,
    }
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
