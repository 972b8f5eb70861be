//! The arguments of `toolsmith bundle` and `toolsmith completions`: passing Toolsmith and a
//! tools folder on (docs/bundle.md, docs/install-toolsmith.md).

use std::path::PathBuf;

use clap::Args;

use super::FolderArg;

#[derive(Debug, Args)]
pub(crate) struct BundleArgs {
    #[command(flatten)]
    pub(crate) folder: FolderArg,

    /// Where the bundle goes [default: NAME-VERSION.mcpb in the current folder].
    ///
    /// Example: `-o dist/weather.mcpb`.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,

    /// The `toolsmith` binary to put under `server/` [default: this one].
    ///
    /// Another platform's build, for release jobs that bundle for every platform from one
    /// machine; the platform it runs on (`compatibility.platforms`) is read from the file.
    /// Example: `--binary target/x86_64-pc-windows-msvc/dist/toolsmith.exe`.
    #[arg(long, value_name = "PATH")]
    pub(crate) binary: Option<PathBuf>,

    /// Bundle this file although it looks like a secret (`.env`, `*.pem`, `id_rsa`, …);
    /// repeatable. The path is relative to the folder.
    ///
    /// Example: `--include certs/public.pem`.
    #[arg(long = "include", value_name = "PATH")]
    pub(crate) include: Vec<PathBuf>,

    /// Bundle a folder that has load errors (each one is listed as a warning).
    #[arg(long)]
    pub(crate) allow_errors: bool,

    /// Also write `server.json` beside the bundle, the MCP registry's entry for it.
    ///
    /// Needs `--url`. Its `packages` entry names the bundle by URL with its SHA-256, and
    /// lists the environment variables the user is asked for.
    #[arg(long, requires = "url")]
    pub(crate) server_json: bool,

    /// The server's name in the MCP registry, reverse-DNS: `io.github.OWNER/NAME`
    /// [default: `registry_name` of toolsmith.toml's `[server]`].
    #[arg(long, value_name = "NAME", requires = "server_json")]
    pub(crate) name: Option<String>,

    /// Where the bundle will be downloaded from (the registry entry's `identifier`).
    ///
    /// Example: `--url https://github.com/acme/weather/releases/download/v1.0.0/weather.mcpb`.
    #[arg(long, value_name = "URL", requires = "server_json")]
    pub(crate) url: Option<String>,

    /// Print `{"bundle", "bytes", "sha256", "files", "tools", "user_config", "server_json"}`
    /// as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum, value_name = "SHELL")]
    pub(crate) shell: clap_complete::Shell,
}
