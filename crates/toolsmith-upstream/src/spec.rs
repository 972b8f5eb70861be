//! `[upstream.NAME]` of `toolsmith.toml` (docs/gateway.md): how to reach another MCP server,
//! read from the table's JSON form, with `${VAR}` references in `env` and `headers` values
//! resolved from Toolsmith's environment when the upstream is started.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

/// How long an upstream may take to start and answer `initialize` and its lists, unless
/// `startup_timeout` says otherwise.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// The keys an `[upstream.NAME]` table may have.
pub const KEYS: &[&str] = &[
    "command",
    "env",
    "cwd",
    "url",
    "headers",
    "prefix",
    "startup_timeout",
    "lazy",
    "oauth",
    "forward_caller_token",
];

/// One `[upstream.NAME]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamSpec {
    /// `NAME`.
    pub name: String,
    /// What its tools' names start with, `_` included (`prefix`, else `NAME_`); empty for
    /// none.
    pub prefix: String,
    /// How to reach it.
    pub transport: UpstreamTransport,
    /// How long starting it may take.
    pub startup_timeout: Duration,
    /// `lazy = true`: started at its first call, its tools listed meanwhile from the last
    /// time it ran.
    pub lazy: bool,
}

/// How an upstream is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpstreamTransport {
    /// A program spoken to over its stdin and stdout.
    Stdio {
        /// `command = ["npx", "-y", "…"]`: the program and its arguments.
        command: Vec<String>,
        /// `env`: variables set on top of Toolsmith's environment (values may hold `${VAR}`).
        env: BTreeMap<String, String>,
        /// `cwd`: where it runs (relative to the tools folder); the tools folder by default.
        cwd: PathBuf,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// `url`.
        url: String,
        /// `headers` sent with every request (values may hold `${VAR}`).
        headers: BTreeMap<String, String>,
        /// `oauth = {...}`: a token of its own authorization server, by the client
        /// credentials grant (`oauth/`).
        oauth: Option<crate::oauth::OAuthClient>,
        /// `forward_caller_token = true`: a call made for a caller with an access token
        /// sends that token instead of the upstream's own credentials.
        forward_caller_token: bool,
    },
}

impl UpstreamSpec {
    /// Reads `[upstream.NAME]` (`table`, as JSON) of the folder `root`.
    ///
    /// # Errors
    ///
    /// What is wrong with the table, naming the key, as one sentence.
    #[expect(
        clippy::too_many_lines,
        reason = "one key after another, each with the sentence that says what to fix"
    )]
    pub fn parse(name: &str, table: &Value, root: &Path) -> Result<Self, String> {
        let table = toolsmith_model::sources::source_table("upstream", name, table, KEYS)?;
        let strings = |key: &str| {
            toolsmith_model::sources::string_table("upstream", name, key, table.get(key))
        };
        let transport = match (table.get("command"), table.get("url")) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "`[upstream.{name}]` has both `command` and `url`; give one"
                ));
            }
            (None, None) => {
                return Err(format!(
                    "`[upstream.{name}]` needs `command = [\"program\", \"arg\", …]` or `url = \"https://…/mcp\"`"
                ));
            }
            (Some(command), None) => {
                let command: Vec<String> = match command {
                    Value::Array(items) => items
                        .iter()
                        .map(|item| item.as_str().map(str::to_owned))
                        .collect::<Option<_>>()
                        .ok_or_else(|| {
                            format!("`[upstream.{name}] command` must be a list of strings")
                        })?,
                    Value::String(program) => vec![program.clone()],
                    _ => {
                        return Err(format!(
                            "`[upstream.{name}] command` must be a list of strings"
                        ));
                    }
                };
                if command.first().is_none_or(String::is_empty) {
                    return Err(format!(
                        "`[upstream.{name}] command` is empty; name the program to run"
                    ));
                }
                let cwd = match table.get("cwd") {
                    None => root.to_owned(),
                    Some(Value::String(cwd)) => root.join(cwd),
                    Some(_) => return Err(format!("`[upstream.{name}] cwd` must be a string")),
                };
                UpstreamTransport::Stdio {
                    command,
                    env: strings("env")?,
                    cwd,
                }
            }
            (None, Some(url)) => {
                let Some(url) = url.as_str() else {
                    return Err(format!("`[upstream.{name}] url` must be a string"));
                };
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(format!(
                        "`[upstream.{name}] url` must be an `http://` or `https://` URL, got `{url}`"
                    ));
                }
                for key in ["env", "cwd"] {
                    if table.contains_key(key) {
                        return Err(format!(
                            "`[upstream.{name}] {key}` applies to a `command`, not a `url`"
                        ));
                    }
                }
                let headers = strings("headers")?;
                let (oauth, forward_caller_token) = crate::oauth::http_keys(name, table, &headers)?;
                UpstreamTransport::Http {
                    url: url.to_owned(),
                    headers,
                    oauth,
                    forward_caller_token,
                }
            }
        };
        if matches!(transport, UpstreamTransport::Stdio { .. }) {
            for key in ["headers", "oauth", "forward_caller_token"] {
                if table.contains_key(key) {
                    return Err(format!(
                        "`[upstream.{name}] {key}` applies to a `url`, not a `command`"
                    ));
                }
            }
        }
        let prefix = toolsmith_model::sources::tool_prefix("upstream", name, table.get("prefix"))?;
        let startup_timeout = match table.get("startup_timeout") {
            None => DEFAULT_STARTUP_TIMEOUT,
            Some(value) => toolsmith_model::duration::parse(value)
                .map_err(|message| format!("`[upstream.{name}] startup_timeout`: {message}"))?,
        };
        let lazy = match table.get("lazy") {
            None => false,
            Some(Value::Bool(lazy)) => *lazy,
            Some(_) => {
                return Err(format!(
                    "`[upstream.{name}] lazy` must be `true` or `false`"
                ));
            }
        };
        Ok(Self {
            name: name.to_owned(),
            prefix,
            transport,
            startup_timeout,
            lazy,
        })
    }

    /// What to show for it: the command line or the URL.
    pub fn target(&self) -> String {
        match &self.transport {
            UpstreamTransport::Stdio { command, .. } => command.join(" "),
            UpstreamTransport::Http { url, .. } => url.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn command_upstream_gets_name_prefix_and_folder_cwd() {
        let spec = UpstreamSpec::parse(
            "gh",
            &json!({"command": ["gh-mcp", "--x"]}),
            Path::new("/t"),
        )
        .unwrap();
        assert_eq!(spec.prefix, "gh_");
        assert_eq!(
            spec.transport,
            UpstreamTransport::Stdio {
                command: vec!["gh-mcp".into(), "--x".into()],
                env: BTreeMap::new(),
                cwd: PathBuf::from("/t"),
            }
        );
    }

    #[test]
    fn command_and_url_together_is_an_error() {
        let error = UpstreamSpec::parse(
            "x",
            &json!({"command": ["a"], "url": "http://h"}),
            Path::new("."),
        )
        .unwrap_err();
        assert!(error.contains("both `command` and `url`"), "{error}");
    }

    #[test]
    fn unknown_key_lists_known_keys() {
        let error =
            UpstreamSpec::parse("x", &json!({"comand": ["a"]}), Path::new(".")).unwrap_err();
        assert!(error.contains("unknown key `comand`"), "{error}");
        assert!(error.contains("command"), "{error}");
    }
}
