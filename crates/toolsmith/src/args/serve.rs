//! The arguments of `toolsmith serve`, with the `--search` flag it shares with `list`, and
//! the parsers of sizes and durations its limits take.

use std::time::Duration;

use clap::{Args, ValueEnum};
use toolsmith_model::{EvaluatorMode, EvaluatorSettings, SearchMode, SearchSettings};

use super::{FolderArg, ProfileArg};

#[derive(Debug, Clone, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) folder: FolderArg,

    #[command(flatten)]
    pub(crate) profile: ProfileArg,

    /// Serve Streamable HTTP on ADDR (endpoint `/mcp`) instead of stdio.
    ///
    /// ADDR is `PORT` or `:PORT` (both mean 127.0.0.1:PORT), `HOST:PORT` or `[IPv6]:PORT`;
    /// port 0 picks a free port. Only loopback is bound unless you say otherwise:
    /// `--http 0.0.0.0:8080` listens on every interface (pair it with `--auth-token`).
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<String>,

    /// Also accept this name in the HTTP `Host` header (repeatable; `*` for any).
    ///
    /// By default only `localhost`, `127.0.0.1` and `[::1]` are accepted, which protects
    /// local servers from DNS rebinding; others get 403. Add the names clients use to reach
    /// the server, e.g. `--allow-host tools.internal --allow-host 10.0.0.5:8080`.
    #[arg(long = "allow-host", value_name = "HOST", requires = "http")]
    pub(crate) allow_hosts: Vec<String>,

    /// Also accept browser requests from this origin (repeatable; `*` for any).
    ///
    /// Requests with an `Origin` header must come from a loopback page by default; others
    /// get 403. Requests without one (non-browser clients) are not affected.
    /// Example: `--allow-origin https://app.example.com`.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    pub(crate) allow_origins: Vec<String>,

    /// The URL clients reach the MCP endpoint at, behind a proxy or load balancer.
    ///
    /// The Server Card at /mcp/server-card and the AI Catalog name it (docs/http.md); by
    /// default they name the URL they were asked on. Example: `--public-url
    /// https://tools.example.com/mcp`.
    #[arg(long, value_name = "URL", requires = "http")]
    pub(crate) public_url: Option<String>,

    /// Require `Authorization: Bearer TOKEN` on every HTTP request.
    ///
    /// Requests without the token, or with another one, get 401 with
    /// `WWW-Authenticate: Bearer`; `/metrics` too, on the serving port or on --metrics. Prefer
    /// the environment variable to keep the token out of process listings. Over stdio it
    /// guards only the --metrics listener.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "TOOLSMITH_AUTH_TOKEN",
        hide_env_values = true
    )]
    pub(crate) auth_token: Option<String>,

    /// Refuse HTTP request bodies larger than SIZE with 413.
    ///
    /// SIZE is bytes, or a number with `KiB`, `MiB` (or `KB`, `MB`). Example: `--max-body-size 16MiB`.
    #[arg(long, value_name = "SIZE", default_value = "4MiB", value_parser = parse_size)]
    pub(crate) max_body_size: usize,

    /// Close an HTTP connection that has not sent a request's headers within DURATION.
    ///
    /// The clock starts when the connection opens and again when a response ends, so this
    /// is also how long an idle keep-alive connection stays open. A duration such as `10s`.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration, requires = "http")]
    pub(crate) header_timeout: Duration,

    /// Answer 408 to an HTTP request whose body has not arrived within DURATION.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration, requires = "http")]
    pub(crate) body_timeout: Duration,

    /// How many HTTP connections may be open at once; one more gets 503 and is closed.
    ///
    /// Keep it below the process's file descriptor limit (`ulimit -n`).
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..), requires = "http")]
    pub(crate) max_connections: u32,

    /// How many HTTP sessions may be open at once.
    ///
    /// At the cap, a new `initialize` closes the session idle longest (its client gets 404
    /// and opens a new one); when every session is busy answering or streaming, it gets 503.
    /// Each open session costs about 80 KiB.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..), requires = "http")]
    pub(crate) max_sessions: u32,

    /// Close an HTTP session that has been idle for DURATION.
    ///
    /// While more than half of --max-sessions are open, a fifth of it is enough (a minute
    /// by default). Its client gets 404 and opens a new session.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration, requires = "http")]
    pub(crate) session_timeout: Duration,

    /// How many tool calls may run at once, over all clients; more wait for a free slot.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_concurrent_calls: u32,

    /// On SIGINT/SIGTERM, how long running calls may take to finish before the server exits.
    ///
    /// A duration such as `500ms`, `10s` or `1m`. A second signal stops at once.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub(crate) shutdown_grace: Duration,

    /// Keep an MCP task for DURATION from its creation, and again once it ended.
    ///
    /// A task still running then is ended `failed`; an ended one is then forgotten, and its
    /// id is unknown (`-32602`). It is the `ttlMs` clients are told (docs/tasks.md). A
    /// duration such as `30s` or `1h`.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub(crate) task_ttl: Duration,

    /// Reload the folder when its files change, and tell connected clients.
    ///
    /// The OS tells of file changes (inotify, `FSEvents`, …; where it cannot, the folder is
    /// checked every 100 ms), and the folder is reloaded once changes have settled for
    /// 50 ms (200 ms when polling), re-reading only the changed files; every client then gets `notifications/tools/list_changed` (and
    /// `prompts/list_changed`, `resources/list_changed` when those changed). A file that
    /// no longer loads keeps serving its previous tools, prompts and resources; its errors
    /// are printed to stderr with file and line. Calls already running finish on the
    /// version they started with. Hidden files and folders (`.name`) are ignored.
    #[arg(long)]
    pub(crate) watch: bool,

    /// Serve `GET /metrics` on a listener of its own at ADDR instead of the serving port.
    ///
    /// Prometheus text format: tool calls by tool and outcome, call durations, calls in
    /// flight, sessions, reloads, load errors and HTTP requests by status (docs/http.md,
    /// "Metrics"). ADDR is written as for --http (`9090` means 127.0.0.1:9090). It works over
    /// stdio too, where it is the only HTTP listener. Without it, `--http` serves `/metrics`
    /// on its own port, behind --auth-token like `/mcp`.
    #[arg(long, value_name = "ADDR")]
    pub(crate) metrics: Option<String>,

    /// How logs on stderr are written: `text` (the default) or `json`.
    ///
    /// `json` writes one JSON object per line, for log collectors: every message, and one
    /// `info` event per tool call (target `toolsmith::call`) with the tool, outcome,
    /// `duration_ms`, session and request id (docs/http.md, "Logs"). Its default level is
    /// `info`; `-q`, `-v` and `TOOLSMITH_LOG` change it as for text.
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub(crate) log_format: LogFormat,

    #[command(flatten)]
    pub(crate) search: SearchArg,

    #[command(flatten)]
    pub(crate) code_mode: CodeModeArg,

    #[command(flatten)]
    pub(crate) authorization: AuthorizationArgs,

    #[command(flatten)]
    pub(crate) shared_state: SharedStateArg,

    #[command(flatten)]
    pub(crate) audit: super::AuditArgs,
}

/// `serve --http` as an OAuth 2.1 resource server (docs/auth.md).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Authorization")]
#[expect(
    clippy::struct_field_names,
    reason = "each field is its flag, and every flag says `--oauth-`"
)]
pub(crate) struct AuthorizationArgs {
    /// Accept OAuth access tokens (JWTs) issued by URL, checked against its JWKS.
    ///
    /// Every request to `/mcp` then needs `Authorization: Bearer <token>` signed by a key
    /// of the issuer (`RS256`, `ES256` or `EdDSA`), with `iss` = URL, `aud` = this server (see
    /// --oauth-audience) and a valid `exp`/`nbf`; a tool with `scopes = [...]` is shown only
    /// to tokens holding them. The JWKS is found in the issuer's
    /// `/.well-known/oauth-authorization-server` (or `openid-configuration`) metadata.
    /// Example: `--oauth-issuer https://auth.example.com`. `[auth]` in toolsmith.toml sets
    /// the same settings; each --oauth-* flag given wins over its key there.
    #[arg(
        long,
        value_name = "URL",
        requires = "http",
        conflicts_with = "auth_token",
        env = "TOOLSMITH_OAUTH_ISSUER"
    )]
    pub(crate) oauth_issuer: Option<String>,

    /// The `aud` every token must carry; default: this server's URL (--oauth-resource).
    #[arg(long, value_name = "AUDIENCE", requires = "http")]
    pub(crate) oauth_audience: Option<String>,

    /// This server's URL as clients reach it, e.g. `https://tools.example.com/mcp`.
    ///
    /// Named in the metadata at `/.well-known/oauth-protected-resource` (RFC 9728) and the
    /// default audience. Default: `http://` + the request's Host + `/mcp`.
    #[arg(long, value_name = "URL", requires = "http")]
    pub(crate) oauth_resource: Option<String>,

    /// Fetch the issuer's keys from URL instead of the address its metadata names.
    #[arg(long, value_name = "URL", requires = "http")]
    pub(crate) oauth_jwks_uri: Option<String>,

    /// A scope every token must hold (repeatable); others get 403 `insufficient_scope`.
    #[arg(long = "oauth-scope", value_name = "SCOPE", requires = "http")]
    pub(crate) oauth_scopes: Vec<String>,

    /// How far `exp` and `nbf` may be off: a duration such as `30s`. Default `60s`.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "http")]
    pub(crate) oauth_clock_skew: Option<Duration>,

    /// Ask URL about access tokens that are not JWTs (RFC 7662 token introspection).
    ///
    /// Each opaque token is posted there with `--oauth-client-id` and its secret as HTTP
    /// Basic credentials, and its answer cached for at most five minutes. Also
    /// `[auth] introspection_url`. Example:
    /// `--oauth-introspection-url https://auth.example.com/oauth2/introspect`.
    #[arg(long, value_name = "URL", requires = "http")]
    pub(crate) oauth_introspection_url: Option<String>,

    /// This server's client id at the issuer, for introspection (`[auth] client_id`).
    #[arg(long, value_name = "ID", requires = "http")]
    pub(crate) oauth_client_id: Option<String>,

    /// This server's client secret at the issuer, for introspection (`[auth]
    /// client_secret`). Prefer the environment variable: a flag shows in `ps`.
    #[arg(
        long,
        value_name = "SECRET",
        requires = "http",
        env = "TOOLSMITH_OAUTH_CLIENT_SECRET",
        hide_env_values = true
    )]
    pub(crate) oauth_client_secret: Option<String>,
}

/// Shared state: replicas of one server behind a load balancer (docs/deploy.md).
#[derive(Debug, Clone, Args)]
pub(crate) struct SharedStateArg {
    /// Share sessions with other replicas through Redis (or Valkey) at URL.
    ///
    /// URL is `redis://HOST:PORT/DB` (`rediss://` for TLS). Every replica given the same
    /// URL serves every session, so a load balancer needs no sticky sessions
    /// (docs/deploy.md), `[limits]` counts calls there for all replicas, and MCP tasks are
    /// kept there, so any replica serves `tasks/*` (docs/tasks.md). While Redis is down, new
    /// sessions get 503, limits are not enforced and calls cannot become tasks (`-32603`).
    /// Also `[state] url`.
    #[arg(
        long = "state",
        value_name = "URL",
        env = "TOOLSMITH_STATE",
        requires = "http"
    )]
    pub(crate) url: Option<String>,

    /// Sign 2026-07-28 `requestState` with this secret, the same on every replica.
    ///
    /// Without it, with --state, the first replica stores a random key in Redis for the
    /// others; without either, the key is random per process. Prefer the environment
    /// variable to keep it out of process listings.
    #[arg(
        long,
        value_name = "SECRET",
        env = "TOOLSMITH_STATE_KEY",
        hide_env_values = true,
        requires = "http"
    )]
    pub(crate) state_key: Option<String>,

    /// Name this replica in the `Toolsmith-Replica` header of every HTTP response.
    ///
    /// With --state it defaults to `HOST:PORT`; without it there is no header unless named.
    #[arg(long, value_name = "NAME", requires = "http")]
    pub(crate) replica_name: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct CodeModeArg {
    /// Serve the `run_code` tool: the model writes a Starlark program that calls the tools.
    ///
    /// Turns on `[evaluator]` of toolsmith.toml (docs/code-mode.md). `--code-mode` keeps
    /// its `mode`; `--code-mode=only` lists just `run_code` and `tool_search` (every tool
    /// is still callable from code), `--code-mode=alongside` lists the tools too.
    #[arg(
        id = "code_mode",
        long = "code-mode",
        value_name = "MODE",
        num_args = 0..=1,
        require_equals = true
    )]
    #[expect(
        clippy::option_option,
        reason = "absent, `--code-mode` and `--code-mode=MODE` are three different things"
    )]
    pub(crate) mode: Option<Option<CodeModeModeArg>>,
}

/// `--code-mode=MODE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CodeModeModeArg {
    Alongside,
    Only,
}

impl CodeModeArg {
    /// The folder's `[evaluator]` settings with `--code-mode` applied.
    pub(crate) fn apply(&self, mut settings: EvaluatorSettings) -> EvaluatorSettings {
        if let Some(mode) = self.mode {
            settings.enabled = true;
            match mode {
                Some(CodeModeModeArg::Alongside) => settings.mode = EvaluatorMode::Alongside,
                Some(CodeModeModeArg::Only) => settings.mode = EvaluatorMode::Only,
                None => {}
            }
        }
        settings
    }
}

/// `toolsmith dev`: `serve`'s arguments, and how to show the page.
#[derive(Debug, Args)]
pub(crate) struct DevArgs {
    #[command(flatten)]
    pub(crate) serve: ServeArgs,

    /// Open the server's page in the default browser once it listens.
    #[arg(long)]
    pub(crate) open: bool,
}

/// `--log-format FORMAT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormat {
    /// Lines for people.
    Text,
    /// One JSON object per line.
    Json,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct SearchArg {
    /// When tools go behind `tool_search` and `execute_tool`; overrides `[search] mode`.
    ///
    /// `auto` (the default) lists the tools while their definitions fit the token budget
    /// (`[search] budget_tokens`, default 8000) and puts them all behind search when they
    /// don't; tools marked `discoverable` are always behind search. `always` lists only the
    /// two built-ins. `never` lists every tool, with no built-ins.
    #[arg(long = "search", value_name = "MODE")]
    pub(crate) mode: Option<SearchModeArg>,
}

/// `--search MODE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SearchModeArg {
    Auto,
    Always,
    Never,
}

impl SearchArg {
    /// The folder's `[search]` settings with `--search` applied.
    pub(crate) fn apply(&self, mut settings: SearchSettings) -> SearchSettings {
        if let Some(mode) = self.mode {
            settings.mode = match mode {
                SearchModeArg::Auto => SearchMode::Auto,
                SearchModeArg::Always => SearchMode::Always,
                SearchModeArg::Never => SearchMode::Never,
            };
        }
        settings
    }
}

/// Parses `4194304`, `512KiB`, `4MiB`, `4MB`.
fn parse_size(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale: usize = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1024,
        "kb" => 1000,
        "m" | "mib" => 1024 * 1024,
        "mb" => 1000 * 1000,
        "g" | "gib" => 1024 * 1024 * 1024,
        "gb" => 1000 * 1000 * 1000,
        other => {
            return Err(format!(
                "unknown size unit `{other}`; use bytes, KiB or MiB (e.g. 4MiB)"
            ));
        }
    };
    let number: usize = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size; write e.g. 4MiB or 1048576"))?;
    number
        .checked_mul(scale)
        .filter(|&size| size > 0)
        .ok_or_else(|| format!("`{text}` is not a usable size"))
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    toolsmith_model::duration::parse_text(text)
}
