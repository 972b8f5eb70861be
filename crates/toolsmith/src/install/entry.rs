//! The entry `install` writes for one server, in a client's own shape: what the client
//! runs (stdio) or where it connects (a URL), built as JSON and turned into the file's
//! format by [`super::files`].

use serde_json::{Map, Value};

use super::clients::{ClientSpec, Layout, TokenFromEnv};

/// The server a client is given.
#[derive(Debug, Clone)]
pub(crate) enum Server {
    /// A program the client starts, speaking MCP over stdio.
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// A server the client reaches over Streamable HTTP.
    Url { url: String, token: Option<Token> },
}

/// The bearer token of a URL server.
#[derive(Debug, Clone)]
pub(crate) enum Token {
    /// Written into the file as given (`--auth-token`).
    Literal(String),
    /// The name of an environment variable the client reads it from (`--auth-token-env`).
    Env(String),
}

/// Why a client cannot take the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EntryError {
    /// The client's file holds local servers only.
    LocalOnly,
    /// The client sends no headers to a URL server.
    NoHeaders,
    /// The client's file cannot refer to an environment variable.
    NoEnv,
}

impl std::fmt::Display for EntryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::LocalOnly => "its configuration file holds only servers it starts itself",
            Self::NoHeaders => "its configuration file cannot give a URL server an HTTP header",
            Self::NoEnv => {
                "its configuration file cannot read the token from an environment variable"
            }
        })
    }
}

/// The entry of `server`, named `name`, for `client`.
pub(crate) fn entry(client: &ClientSpec, name: &str, server: &Server) -> Result<Value, EntryError> {
    let mut entry = Map::new();
    if client.layout != Layout::Map {
        entry.insert("name".into(), name.into());
    }
    match server {
        Server::Stdio { command, args, env } => {
            let shape = client.stdio;
            entry.extend(fixed(shape.extra));
            if shape.joined {
                let mut line = vec![command.clone()];
                line.extend(args.iter().cloned());
                entry.insert(shape.command.into(), line.into());
            } else {
                entry.insert(shape.command.into(), command.clone().into());
                entry.insert("args".into(), args.clone().into());
            }
            if !env.is_empty() {
                let env: Map<String, Value> = env
                    .iter()
                    .map(|(key, value)| (key.clone(), value.clone().into()))
                    .collect();
                entry.insert(shape.env.into(), env.into());
            }
        }
        Server::Url { url, token } => {
            let shape = client.url.ok_or(EntryError::LocalOnly)?;
            entry.extend(fixed(shape.extra));
            entry.insert(shape.url.into(), url.clone().into());
            let header = match token {
                None => None,
                Some(Token::Literal(token)) => Some(format!("Bearer {token}")),
                Some(Token::Env(var)) => match shape.token_from_env {
                    TokenFromEnv::Expand(template) => {
                        Some(format!("Bearer {}", template.replace("VAR", var)))
                    }
                    TokenFromEnv::Key(key) => {
                        entry.insert(key.into(), var.clone().into());
                        None
                    }
                    TokenFromEnv::Unsupported => return Err(EntryError::NoEnv),
                },
            };
            if let Some(header) = header {
                // A dotted key nests: `requestOptions.headers` (Continue).
                let path = shape.headers.ok_or(EntryError::NoHeaders)?;
                let mut keys = path.rsplit('.');
                let mut key = keys.next().unwrap_or(path);
                let mut value = serde_json::json!({ "Authorization": header });
                for outer in keys {
                    value = serde_json::json!({ key: value });
                    key = outer;
                }
                entry.insert(key.into(), value);
            }
        }
    }
    Ok(Value::Object(entry))
}

/// A shape's fixed members (the client table's JSON text, checked by its tests).
fn fixed(extra: &str) -> Map<String, Value> {
    serde_json::from_str(extra).unwrap_or_default()
}

/// Whether `entry` serves the folder at `dir`: some string in it is that path (in `args`,
/// or in opencode's `command` array).
pub(crate) fn serves(entry: &Value, dir: &str) -> bool {
    match entry {
        Value::String(text) => text == dir,
        Value::Array(items) => items.iter().any(|item| serves(item, dir)),
        Value::Object(members) => members.values().any(|value| serves(value, dir)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::install::clients::Client;

    fn spec(id: &str) -> &'static ClientSpec {
        Client::find(id).unwrap().spec()
    }

    fn stdio() -> Server {
        Server::Stdio {
            command: "/bin/toolsmith".into(),
            args: vec!["serve".into(), "/tools".into()],
            env: vec![("MCP_TOOL_OPTIONS".into(), "{}".into())],
        }
    }

    fn url(token: Option<Token>) -> Server {
        Server::Url {
            url: "https://tools.example/mcp".into(),
            token,
        }
    }

    #[test]
    fn stdio_entries_take_each_clients_shape() {
        assert_eq!(
            entry(spec("cursor"), "t", &stdio()).unwrap(),
            json!({"command": "/bin/toolsmith", "args": ["serve", "/tools"], "env": {"MCP_TOOL_OPTIONS": "{}"}})
        );
        assert_eq!(
            entry(spec("opencode"), "t", &stdio()).unwrap(),
            json!({"type": "local", "enabled": true, "command": ["/bin/toolsmith", "serve", "/tools"], "environment": {"MCP_TOOL_OPTIONS": "{}"}})
        );
        assert_eq!(
            entry(spec("goose"), "t", &stdio()).unwrap(),
            json!({"name": "t", "type": "stdio", "enabled": true, "timeout": 300, "cmd": "/bin/toolsmith", "args": ["serve", "/tools"], "envs": {"MCP_TOOL_OPTIONS": "{}"}})
        );
        assert_eq!(entry(spec("continue"), "t", &stdio()).unwrap()["name"], "t");
        assert_eq!(
            entry(spec("vscode"), "t", &stdio()).unwrap()["type"],
            "stdio"
        );
    }

    #[test]
    fn url_entries_carry_the_bearer_header_where_the_client_can() {
        let literal = Some(Token::Literal("s3cret".into()));
        assert_eq!(
            entry(spec("claude-code"), "t", &url(literal.clone())).unwrap(),
            json!({"type": "http", "url": "https://tools.example/mcp", "headers": {"Authorization": "Bearer s3cret"}})
        );
        assert_eq!(
            entry(spec("continue"), "t", &url(literal.clone())).unwrap()["requestOptions"],
            json!({"headers": {"Authorization": "Bearer s3cret"}})
        );
        assert_eq!(
            entry(spec("gemini"), "t", &url(None)).unwrap(),
            json!({"httpUrl": "https://tools.example/mcp"})
        );
        let env = Some(Token::Env("TOOLS_TOKEN".into()));
        assert_eq!(
            entry(spec("cursor"), "t", &url(env.clone())).unwrap()["headers"]["Authorization"],
            "Bearer ${env:TOOLS_TOKEN}"
        );
        assert_eq!(
            entry(spec("codex"), "t", &url(env.clone())).unwrap(),
            json!({"url": "https://tools.example/mcp", "bearer_token_env_var": "TOOLS_TOKEN"})
        );
        assert_eq!(entry(spec("kiro"), "t", &url(env)), Err(EntryError::NoEnv));
        assert_eq!(
            entry(spec("claude-desktop"), "t", &url(None)),
            Err(EntryError::LocalOnly)
        );
    }

    #[test]
    fn an_entry_serves_the_folder_whose_path_it_holds() {
        let entry = entry(spec("opencode"), "t", &stdio()).unwrap();
        assert!(serves(&entry, "/tools"));
        assert!(!serves(&entry, "/other"));
    }
}
