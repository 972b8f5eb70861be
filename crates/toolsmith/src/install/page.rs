//! The install snippets on `serve --http`'s page (docs/http.md, "The page"): for a few
//! popular clients, the `toolsmith install CLIENT --http URL` command and the entry it
//! would write, in the client's own format, from the same table and writers as the
//! command itself. The page never holds the token: where the server wants one, the entry
//! reads it from `TOOLSMITH_AUTH_TOKEN` if the client can, and has a placeholder if not.

use toolsmith_server::{InstallSnippet, InstallSnippets, SnippetServer};

use super::clients::{Client, ClientSpec, TokenFromEnv};
use super::entry::{self, Server, Token};
use super::files::Servers;
use super::paths::Os;

/// The clients the page shows, in this order.
const POPULAR: [&str; 7] = [
    "claude-code",
    "cursor",
    "vscode",
    "windsurf",
    "gemini",
    "codex",
    "opencode",
];

/// The environment variable the snippets read the token from.
const TOKEN_VARIABLE: &str = "TOOLSMITH_AUTH_TOKEN";

/// What stands in for the token where a client cannot read it from the environment.
const TOKEN_PLACEHOLDER: &str = "YOUR-TOKEN";

/// The page's snippets, as `toolsmith_server` asks for them.
pub(crate) fn snippets() -> InstallSnippets {
    InstallSnippets::new(|server| {
        POPULAR
            .iter()
            .filter_map(|id| Client::find(id))
            .filter_map(|client| snippet(client.spec(), server))
            .collect()
    })
}

/// The snippet for one client; `None` when it cannot take this server (no URL servers, or
/// no headers for the token).
fn snippet(spec: &ClientSpec, server: &SnippetServer<'_>) -> Option<InstallSnippet> {
    let from_env = spec
        .url
        .is_some_and(|shape| !matches!(shape.token_from_env, TokenFromEnv::Unsupported));
    let (token, flags) = match (server.needs_token, from_env) {
        (false, _) => (None, String::new()),
        (true, true) => (
            Some(Token::Env(TOKEN_VARIABLE.into())),
            format!(" --auth-token-env {TOKEN_VARIABLE}"),
        ),
        (true, false) => (
            Some(Token::Literal(TOKEN_PLACEHOLDER.into())),
            format!(" --auth-token {TOKEN_PLACEHOLDER}"),
        ),
    };
    let name = server.name;
    let url = Server::Url {
        url: server.url.to_owned(),
        token,
    };
    let entry = entry::entry(spec, name, &url).ok()?;
    let servers = Servers {
        key: spec.key,
        layout: spec.layout,
    };
    let file = Os::current()
        .pick(spec.user)
        .filter(|path| !path.is_empty())
        .or(spec.project)
        .unwrap_or("its MCP configuration file");
    Some(InstallSnippet {
        client: spec.name.to_owned(),
        command: format!(
            "toolsmith install {} --http {} --name {}{flags}",
            spec.id,
            shell_word(server.url),
            shell_word(name)
        ),
        file: file.to_owned(),
        text: spec.format.snippet(servers, name, &entry),
    })
}

/// `word` as one shell word: as it is when plain, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snippets_for(needs_token: bool) -> Vec<InstallSnippet> {
        let server = SnippetServer {
            name: "weather",
            url: "http://127.0.0.1:8080/mcp",
            needs_token,
        };
        POPULAR
            .iter()
            .filter_map(|id| snippet(Client::find(id).unwrap().spec(), &server))
            .collect()
    }

    #[test]
    fn every_popular_client_gets_the_entry_install_writes() {
        let snippets = snippets_for(false);
        assert_eq!(snippets.len(), POPULAR.len());
        let claude = &snippets[0];
        assert_eq!(claude.client, "Claude Code");
        assert_eq!(
            claude.command,
            "toolsmith install claude-code --http http://127.0.0.1:8080/mcp --name weather"
        );
        assert_eq!(claude.file, "~/.claude.json");
        let entry: serde_json::Value = serde_json::from_str(&claude.text).unwrap();
        assert_eq!(
            entry["mcpServers"]["weather"],
            serde_json::json!({"type": "http", "url": "http://127.0.0.1:8080/mcp"})
        );
        let codex = snippets.iter().find(|s| s.client == "Codex").unwrap();
        assert!(
            codex.text.contains("[mcp_servers.weather]"),
            "{}",
            codex.text
        );
    }

    #[test]
    fn with_a_token_snippets_name_a_variable_or_a_placeholder() {
        for snippet in snippets_for(true) {
            let from_env = snippet
                .command
                .contains("--auth-token-env TOOLSMITH_AUTH_TOKEN");
            let placeholder = snippet.command.contains("--auth-token YOUR-TOKEN");
            assert!(from_env != placeholder, "{snippet:?}");
            let named =
                snippet.text.contains(TOKEN_VARIABLE) || snippet.text.contains(TOKEN_PLACEHOLDER);
            assert!(named, "{snippet:?}");
        }
    }

    #[test]
    fn odd_words_are_quoted_for_the_shell() {
        assert_eq!(shell_word("weather-1.2"), "weather-1.2");
        assert_eq!(shell_word("my tools"), "'my tools'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }
}
