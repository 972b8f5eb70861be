//! `server.json` for the MCP registry (schema of 2025-09-29,
//! `static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json`): the bundle as an
//! `mcpb` package, downloaded from `--url` and checked against its SHA-256, run over stdio,
//! with the environment variables its user is asked for.

use serde_json::{Value, json};

use super::manifest::Manifest;
use crate::error::Hinted;

/// The schema `server.json` declares.
const SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json";

/// The registry's limit on `description`.
const MAX_DESCRIPTION: usize = 100;

/// The registry entry of a bundle published at `url` with hash `sha256`.
pub(super) fn server_json(
    name: &str,
    url: &str,
    sha256: &str,
    manifest: &Manifest,
) -> anyhow::Result<Value> {
    check_name(name)?;
    if !url.starts_with("https://") {
        return Err(Hinted::new(format!("`--url {url}` is not an `https://` URL"))
            .hint("the registry downloads bundles from release assets, e.g. `--url https://github.com/acme/weather/releases/download/v1.0.0/weather.mcpb`")
            .into());
    }
    let variables: Vec<Value> = manifest
        .user_config()
        .iter()
        .map(|entry| {
            json!({
                "name": entry.name,
                "description": entry.description,
                "isRequired": entry.required,
                "isSecret": entry.sensitive,
            })
        })
        .collect();
    let mut package = json!({
        "registryType": "mcpb",
        "identifier": url,
        "fileSha256": sha256,
        "transport": {"type": "stdio"},
    });
    if !variables.is_empty() {
        package["environmentVariables"] = Value::Array(variables);
    }
    let mut entry = json!({
        "$schema": SCHEMA,
        "name": name,
        "description": shortened(manifest.description()),
        "version": manifest.version(),
        "packages": [package],
    });
    if let Some(homepage) = manifest.json.get("homepage") {
        entry["websiteUrl"] = homepage.clone();
    }
    if let Some(url) = manifest
        .json
        .pointer("/repository/url")
        .and_then(Value::as_str)
        && let Some(source) = forge(url)
    {
        entry["repository"] = json!({"url": url, "source": source});
    }
    Ok(entry)
}

/// A registry name is `NAMESPACE/NAME`, reverse-DNS, e.g. `io.github.acme/weather`.
fn check_name(name: &str) -> anyhow::Result<()> {
    let part_ok = |part: &str, extra: &[char]| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-' || extra.contains(&c))
    };
    match name.split_once('/') {
        Some((namespace, server))
            if part_ok(namespace, &[]) && part_ok(server, &['_']) && name.len() <= 200 =>
        {
            Ok(())
        }
        _ => Err(Hinted::new(format!(
            "`--name {name}` is not a registry name"
        ))
        .hint("write it reverse-DNS, one `/` between namespace and name: `io.github.OWNER/NAME` (GitHub login) or `com.example/NAME` (a domain you own)")
        .into()),
    }
}

/// The description within the registry's 100 characters: its first sentence when that
/// fits, else cut at a word.
fn shortened(description: &str) -> String {
    let first_line = description.lines().next().unwrap_or_default().trim();
    if first_line.chars().count() <= MAX_DESCRIPTION {
        return first_line.to_owned();
    }
    let cut: String = first_line.chars().take(MAX_DESCRIPTION - 1).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    format!("{cut}…")
}

/// The forge of a repository URL the registry knows (`github`, `gitlab`).
fn forge(url: &str) -> Option<&'static str> {
    let host = url.strip_prefix("https://")?.split('/').next()?;
    match host {
        "github.com" => Some("github"),
        "gitlab.com" => Some("gitlab"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_reverse_dns_with_one_slash() {
        assert!(check_name("io.github.acme/weather-tools").is_ok());
        assert!(check_name("com.example/my_server").is_ok());
        for bad in ["weather", "io.github.acme/", "a/b/c", "io github/x"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_long_description_is_cut_at_a_word() {
        let long = "word ".repeat(40);
        let short = shortened(&long);
        assert!(short.chars().count() <= MAX_DESCRIPTION);
        assert!(short.ends_with("word…"));
        assert_eq!(shortened("Weather tools.\nMore."), "Weather tools.");
    }
}
