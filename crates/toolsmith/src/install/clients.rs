//! The AI clients `toolsmith install` writes to, as one table of data: where each keeps
//! its MCP servers on each OS, in which format and under which key, and the entry it
//! expects for a local (stdio) server and for a remote (URL) one. docs/install.md is the
//! same table for people, with where each fact comes from.

use super::files::Format;

/// One AI client.
#[derive(Debug)]
pub(crate) struct ClientSpec {
    /// The `CLIENT` argument: kebab-case.
    pub(crate) id: &'static str,
    /// The client's name as people write it.
    pub(crate) name: &'static str,
    /// The user's file, per OS (see [`super::paths`] for the placeholders).
    pub(crate) user: PerOs,
    /// The project's file, relative to the current folder (`--project`).
    pub(crate) project: Option<&'static str>,
    pub(crate) format: Format,
    /// The top-level key holding the servers.
    pub(crate) key: &'static str,
    pub(crate) layout: Layout,
    pub(crate) stdio: StdioShape,
    /// The entry for a server at a URL; `None` when the client's file cannot hold one.
    pub(crate) url: Option<UrlShape>,
}

/// A file's path template on each OS; `None` where the client has no such file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PerOs {
    pub(crate) linux: Option<&'static str>,
    pub(crate) macos: Option<&'static str>,
    pub(crate) windows: Option<&'static str>,
}

impl PerOs {
    /// The same template on every OS.
    pub(super) const fn everywhere(path: &'static str) -> Self {
        Self {
            linux: Some(path),
            macos: Some(path),
            windows: Some(path),
        }
    }

    const fn each(linux: &'static str, macos: &'static str, windows: &'static str) -> Self {
        Self {
            linux: Some(linux),
            macos: Some(macos),
            windows: Some(windows),
        }
    }
}

/// How the servers sit under the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// An object (table, mapping) from name to entry.
    Map,
    /// An object from name to entry, where the entry repeats its name as `name` (Goose).
    NamedMap,
    /// A list of entries, each with its `name` (Continue).
    List,
}

/// The entry of a local server, started by the client.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StdioShape {
    /// The key of the program: `command`, or `cmd` (Goose).
    pub(crate) command: &'static str,
    /// `command` is an array of the program and its arguments (opencode), not a string
    /// beside `args`.
    pub(crate) joined: bool,
    /// The key of the environment variables: `env`, `envs` (Goose), `environment` (opencode).
    pub(crate) env: &'static str,
    /// Fixed members, as a JSON object, written before the command (`{"type": "stdio"}`).
    pub(crate) extra: &'static str,
}

/// The entry of a remote server, reached over Streamable HTTP.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UrlShape {
    /// The key of the URL: `url`, `httpUrl` (Gemini CLI), `serverUrl` (Windsurf), `uri` (Goose).
    pub(crate) url: &'static str,
    /// The key of the HTTP headers, dotted when nested (`requestOptions.headers`); `None`
    /// when the client sends none.
    pub(crate) headers: Option<&'static str>,
    /// How the file names an environment variable holding the bearer token.
    pub(crate) token_from_env: TokenFromEnv,
    /// Fixed members, as a JSON object, written before the URL (`{"type": "http"}`).
    pub(crate) extra: &'static str,
}

/// How a client's file refers to an environment variable for the bearer token
/// (`--auth-token-env VAR`), so the token itself is not written.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TokenFromEnv {
    /// The client expands this template in header values, with `VAR` replaced.
    Expand(&'static str),
    /// The entry has a key naming the variable, and the client sends the bearer header
    /// itself (Codex's `bearer_token_env_var`).
    Key(&'static str),
    /// The client does not read environment variables in its file.
    Unsupported,
}

const STDIO: StdioShape = StdioShape {
    command: "command",
    joined: false,
    env: "env",
    extra: "{}",
};

const TYPED_STDIO: StdioShape = StdioShape {
    extra: r#"{"type": "stdio"}"#,
    ..STDIO
};

const URL: UrlShape = UrlShape {
    url: "url",
    headers: Some("headers"),
    token_from_env: TokenFromEnv::Unsupported,
    extra: "{}",
};

const TYPED_URL: UrlShape = UrlShape {
    extra: r#"{"type": "http"}"#,
    ..URL
};

/// Gemini CLI's form, which Qwen Code (a fork of it) shares.
const GEMINI_URL: UrlShape = UrlShape {
    url: "httpUrl",
    token_from_env: TokenFromEnv::Expand("${VAR}"),
    ..URL
};

/// The folder where VS Code keeps an extension's settings (Cline, Roo Code).
macro_rules! vscode_storage {
    ($rest:literal) => {
        PerOs::each(
            concat!(
                "{XDG_CONFIG_HOME|~/.config}/Code/User/globalStorage/",
                $rest
            ),
            concat!(
                "~/Library/Application Support/Code/User/globalStorage/",
                $rest
            ),
            concat!("{APPDATA}/Code/User/globalStorage/", $rest),
        )
    };
}

/// A client whose user file is `path` on every OS, with servers as `mcpServers` entries
/// of the common shape.
const fn common(
    id: &'static str,
    name: &'static str,
    path: &'static str,
    project: Option<&'static str>,
) -> ClientSpec {
    ClientSpec {
        id,
        name,
        user: PerOs::everywhere(path),
        project,
        format: Format::Json,
        key: "mcpServers",
        layout: Layout::Map,
        stdio: STDIO,
        url: Some(URL),
    }
}

/// Every client, in the order `install --list` shows them.
pub(crate) static CLIENTS: &[ClientSpec] = &[
    ClientSpec {
        url: Some(UrlShape {
            token_from_env: TokenFromEnv::Expand("${VAR}"),
            ..TYPED_URL
        }),
        ..common(
            "claude-code",
            "Claude Code",
            "~/.claude.json",
            Some(".mcp.json"),
        )
    },
    ClientSpec {
        user: PerOs::each(
            "{XDG_CONFIG_HOME|~/.config}/Claude/claude_desktop_config.json",
            "~/Library/Application Support/Claude/claude_desktop_config.json",
            "{APPDATA}/Claude/claude_desktop_config.json",
        ),
        // Remote servers are added in Claude Desktop's settings (Connectors), not its file.
        url: None,
        ..common("claude-desktop", "Claude Desktop", "", None)
    },
    ClientSpec {
        url: Some(UrlShape {
            token_from_env: TokenFromEnv::Expand("${env:VAR}"),
            ..URL
        }),
        ..common(
            "cursor",
            "Cursor",
            "~/.cursor/mcp.json",
            Some(".cursor/mcp.json"),
        )
    },
    ClientSpec {
        user: PerOs::each(
            "{XDG_CONFIG_HOME|~/.config}/Code/User/mcp.json",
            "~/Library/Application Support/Code/User/mcp.json",
            "{APPDATA}/Code/User/mcp.json",
        ),
        format: Format::Jsonc,
        key: "servers",
        stdio: TYPED_STDIO,
        url: Some(UrlShape {
            token_from_env: TokenFromEnv::Expand("${env:VAR}"),
            ..TYPED_URL
        }),
        ..common("vscode", "VS Code", "", Some(".vscode/mcp.json"))
    },
    ClientSpec {
        // Visual Studio runs on Windows only: `%USERPROFILE%\.mcp.json`.
        user: PerOs {
            linux: None,
            macos: None,
            windows: Some("~/.mcp.json"),
        },
        format: Format::Jsonc,
        key: "servers",
        stdio: TYPED_STDIO,
        url: Some(TYPED_URL),
        ..common("visual-studio", "Visual Studio", "", Some(".mcp.json"))
    },
    ClientSpec {
        url: Some(UrlShape {
            url: "serverUrl",
            token_from_env: TokenFromEnv::Expand("${env:VAR}"),
            ..URL
        }),
        ..common(
            "windsurf",
            "Windsurf",
            "~/.codeium/windsurf/mcp_config.json",
            None,
        )
    },
    ClientSpec {
        format: Format::Jsonc,
        url: Some(GEMINI_URL),
        ..common(
            "gemini",
            "Gemini CLI",
            "~/.gemini/settings.json",
            Some(".gemini/settings.json"),
        )
    },
    ClientSpec {
        format: Format::Toml,
        key: "mcp_servers",
        url: Some(UrlShape {
            headers: Some("http_headers"),
            token_from_env: TokenFromEnv::Key("bearer_token_env_var"),
            ..URL
        }),
        ..common(
            "codex",
            "Codex",
            "{CODEX_HOME|~/.codex}/config.toml",
            Some(".codex/config.toml"),
        )
    },
    ClientSpec {
        stdio: StdioShape {
            extra: r#"{"type": "local", "tools": ["*"]}"#,
            ..STDIO
        },
        url: Some(UrlShape {
            extra: r#"{"type": "http", "tools": ["*"]}"#,
            ..URL
        }),
        ..common(
            "copilot-cli",
            "Copilot CLI",
            "~/.copilot/mcp-config.json",
            None,
        )
    },
    ClientSpec {
        user: vscode_storage!("saoudrizwan.claude-dev/settings/cline_mcp_settings.json"),
        stdio: StdioShape {
            extra: r#"{"disabled": false}"#,
            ..STDIO
        },
        url: Some(UrlShape {
            extra: r#"{"type": "streamableHttp", "disabled": false}"#,
            ..URL
        }),
        ..common("cline", "Cline", "", None)
    },
    ClientSpec {
        user: vscode_storage!("rooveterinaryinc.roo-cline/settings/mcp_settings.json"),
        url: Some(UrlShape {
            extra: r#"{"type": "streamable-http"}"#,
            ..URL
        }),
        ..common("roo-code", "Roo Code", "", Some(".roo/mcp.json"))
    },
    ClientSpec {
        format: Format::Yaml,
        layout: Layout::List,
        url: Some(UrlShape {
            headers: Some("requestOptions.headers"),
            extra: r#"{"type": "streamable-http"}"#,
            ..URL
        }),
        ..common("continue", "Continue", "~/.continue/config.yaml", None)
    },
    ClientSpec {
        user: PerOs::each(
            "{XDG_CONFIG_HOME|~/.config}/zed/settings.json",
            "~/.config/zed/settings.json",
            "{APPDATA}/Zed/settings.json",
        ),
        format: Format::Jsonc,
        key: "context_servers",
        ..common("zed", "Zed", "", Some(".zed/settings.json"))
    },
    common(
        "junie",
        "Junie",
        "~/.junie/mcp/mcp.json",
        Some(".junie/mcp/mcp.json"),
    ),
    ClientSpec {
        user: PerOs::each(
            "{XDG_CONFIG_HOME|~/.config}/goose/config.yaml",
            "{XDG_CONFIG_HOME|~/.config}/goose/config.yaml",
            "{APPDATA}/Block/goose/config/config.yaml",
        ),
        format: Format::Yaml,
        key: "extensions",
        layout: Layout::NamedMap,
        stdio: StdioShape {
            command: "cmd",
            joined: false,
            env: "envs",
            extra: r#"{"type": "stdio", "enabled": true, "timeout": 300}"#,
        },
        url: Some(UrlShape {
            url: "uri",
            extra: r#"{"type": "streamable_http", "enabled": true, "timeout": 300}"#,
            ..URL
        }),
        ..common("goose", "Goose", "", None)
    },
    common("lm-studio", "LM Studio", "~/.lmstudio/mcp.json", None),
    common(
        "amazon-q",
        "Amazon Q Developer",
        "~/.aws/amazonq/mcp.json",
        Some(".amazonq/mcp.json"),
    ),
    common(
        "kiro",
        "Kiro",
        "~/.kiro/settings/mcp.json",
        Some(".kiro/settings/mcp.json"),
    ),
    ClientSpec {
        format: Format::Jsonc,
        key: "mcp",
        stdio: StdioShape {
            command: "command",
            joined: true,
            env: "environment",
            extra: r#"{"type": "local", "enabled": true}"#,
        },
        url: Some(UrlShape {
            token_from_env: TokenFromEnv::Expand("{env:VAR}"),
            extra: r#"{"type": "remote", "enabled": true}"#,
            ..URL
        }),
        ..common(
            "opencode",
            "opencode",
            "{XDG_CONFIG_HOME|~/.config}/opencode/opencode.json",
            Some("opencode.json"),
        )
    },
    ClientSpec {
        user: PerOs::each(
            "{XDG_CONFIG_HOME|~/.config}/crush/crush.json",
            "{XDG_CONFIG_HOME|~/.config}/crush/crush.json",
            "{LOCALAPPDATA}/crush/crush.json",
        ),
        key: "mcp",
        stdio: TYPED_STDIO,
        url: Some(TYPED_URL),
        ..common("crush", "Crush", "", Some(".crush.json"))
    },
    ClientSpec {
        url: Some(TYPED_URL),
        ..common("augment", "Augment", "~/.augment/settings.json", None)
    },
    ClientSpec {
        user: PerOs::each(
            "{XDG_CONFIG_HOME|~/.config}/Trae/User/mcp.json",
            "~/Library/Application Support/Trae/User/mcp.json",
            "{APPDATA}/Trae/User/mcp.json",
        ),
        ..common("trae", "Trae", "", Some(".trae/mcp.json"))
    },
    common("warp", "Warp", "~/.warp/.mcp.json", Some(".warp/.mcp.json")),
    ClientSpec {
        format: Format::Jsonc,
        url: Some(GEMINI_URL),
        ..common(
            "qwen-code",
            "Qwen Code",
            "~/.qwen/settings.json",
            Some(".qwen/settings.json"),
        )
    },
    ClientSpec {
        url: Some(UrlShape {
            url: "serverUrl",
            ..URL
        }),
        ..common(
            "antigravity",
            "Antigravity",
            "~/.gemini/antigravity/mcp_config.json",
            None,
        )
    },
    common("kimi-code", "Kimi Code", "~/.kimi/mcp.json", None),
];

/// A client of [`CLIENTS`], as the `CLIENT` argument names it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Client(&'static ClientSpec);

impl Client {
    /// The client with this id.
    pub(crate) fn find(id: &str) -> Option<Self> {
        CLIENTS.iter().find(|spec| spec.id == id).map(Self)
    }

    /// Every client.
    pub(crate) fn all() -> impl Iterator<Item = Self> {
        CLIENTS.iter().map(Self)
    }

    pub(crate) fn spec(self) -> &'static ClientSpec {
        self.0
    }
}

impl PartialEq for Client {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}

impl Eq for Client {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_kebab_case_and_shapes_are_json_objects() {
        let mut ids: Vec<&str> = CLIENTS.iter().map(|spec| spec.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), CLIENTS.len());
        for spec in CLIENTS {
            assert!(
                spec.id
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{}",
                spec.id
            );
            let extras = std::iter::once(spec.stdio.extra).chain(spec.url.map(|url| url.extra));
            for extra in extras {
                let value: serde_json::Value = serde_json::from_str(extra).unwrap();
                assert!(value.is_object(), "{}: {extra}", spec.id);
            }
            for path in [spec.user.linux, spec.user.macos, spec.user.windows] {
                assert_ne!(path, Some(""), "{} has an empty path", spec.id);
            }
        }
    }

    /// Every client's user file on each OS, for a user `ada`
    /// with no variables set beyond the usual ones, and its project file.
    #[test]
    fn every_clients_file_per_os() {
        use std::fmt::Write as _;

        use crate::install::paths::{Os, resolve};

        type Environment<'a> = &'a dyn Fn(&str) -> Option<String>;
        let unix = |name: &str| (name == "HOME").then(|| "/home/ada".to_owned());
        let mac = |name: &str| (name == "HOME").then(|| "/Users/ada".to_owned());
        let windows = |name: &str| match name {
            "USERPROFILE" => Some("C:/Users/ada".to_owned()),
            "APPDATA" => Some("C:/Users/ada/AppData/Roaming".to_owned()),
            "LOCALAPPDATA" => Some("C:/Users/ada/AppData/Local".to_owned()),
            _ => None,
        };
        let systems: [(Os, Environment<'_>); 3] = [
            (Os::Linux, &unix),
            (Os::Macos, &mac),
            (Os::Windows, &windows),
        ];
        let mut table = String::new();
        for spec in CLIENTS {
            let _ = writeln!(
                table,
                "{} ({}, {})",
                spec.id,
                spec.format.language(),
                spec.key
            );
            for (os, var) in systems {
                let path = os.pick(spec.user).map_or_else(
                    || "-".to_owned(),
                    |template| resolve(template, var).unwrap().display().to_string(),
                );
                let _ = writeln!(table, "  {:8} {path}", os.title());
            }
            let _ = writeln!(table, "  project  {}", spec.project.unwrap_or("-"));
        }
        insta::assert_snapshot!(table);
    }

    /// docs/install.md names every client and its user file.
    #[test]
    fn the_install_guide_lists_every_client() {
        let guide = include_str!("../../../../docs/install.md");
        for spec in CLIENTS {
            assert!(
                guide.contains(&format!("`{}`", spec.id)),
                "{} is not in docs/install.md",
                spec.id
            );
            // In a Markdown table, `|` is written `\|`.
            if let Some(linux) = spec.user.linux.map(|path| path.replace('|', "\\|")) {
                assert!(
                    guide.contains(&linux),
                    "{}'s {linux} is not in docs/install.md",
                    spec.id
                );
            }
        }
    }

    /// At least these clients.
    #[test]
    fn every_client_the_issue_names_is_there() {
        let names = [
            "Claude Code",
            "Claude Desktop",
            "Cursor",
            "VS Code",
            "Visual Studio",
            "Windsurf",
            "Gemini CLI",
            "Codex",
            "Copilot CLI",
            "Cline",
            "Roo Code",
            "Continue",
            "Zed",
            "Junie",
            "Goose",
            "LM Studio",
            "Amazon Q Developer",
            "Kiro",
            "opencode",
            "Crush",
            "Augment",
            "Trae",
            "Warp",
            "Qwen Code",
            "Antigravity",
            "Kimi Code",
        ];
        for name in names {
            assert!(CLIENTS.iter().any(|spec| spec.name == name), "{name}");
        }
    }
}
