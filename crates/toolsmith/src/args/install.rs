//! The arguments of `toolsmith install`, and the parser that reads a client's name from the
//! client table (docs/install.md).

use std::path::PathBuf;

use clap::Args;
use toolsmith_model::names::did_you_mean;

use super::{FolderArg, SkillGrouping};
use crate::install::clients::Client;

#[derive(Debug, Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent command-line flags"
)]
pub(crate) struct InstallArgs {
    /// The client to add the server to (`--list` shows them all).
    #[arg(
        value_name = "CLIENT",
        value_parser = ClientParser,
        required_unless_present = "list"
    )]
    pub(crate) client: Option<Client>,

    #[command(flatten)]
    pub(crate) folder: FolderArg,

    /// The server's name in the client [default: `[server] name` of toolsmith.toml, else
    /// the folder's name; with --http, the URL's host].
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,

    /// Tool options for this installation, as JSON `{"tool": {"option": value}}`: written
    /// to the entry's `MCP_TOOL_OPTIONS`, they override `[options]` of toolsmith.toml.
    #[arg(long, value_name = "JSON", conflicts_with = "http")]
    pub(crate) tool_options: Option<String>,

    /// Serve this profile of the folder: the entry runs `toolsmith serve --profile NAME DIR`.
    #[arg(long, value_name = "NAME", conflicts_with = "http")]
    pub(crate) profile: Option<String>,

    /// Install a server that is already running at this URL (Streamable HTTP), in the
    /// client's own form for URL servers, instead of one the client starts.
    ///
    /// Example: `--http https://tools.example.com/mcp`
    #[arg(long, value_name = "URL")]
    pub(crate) http: Option<String>,

    /// With --http: the bearer token, written into the file as an `Authorization` header.
    ///
    /// The token is written as given; to keep it out of the file, use --auth-token-env.
    #[arg(
        long,
        value_name = "TOKEN",
        requires = "http",
        conflicts_with = "auth_token_env"
    )]
    pub(crate) auth_token: Option<String>,

    /// With --http: the environment variable that holds the bearer token; the file names
    /// the variable (in the client's own syntax) and the client reads it when it starts.
    ///
    /// Example: `--auth-token-env TOOLSMITH_AUTH_TOKEN`
    #[arg(long, value_name = "VAR", requires = "http")]
    pub(crate) auth_token_env: Option<String>,

    /// Install the folder's Agent Skills where the client reads skills (e.g.
    /// `~/.claude/skills/`), instead of an MCP server entry: the skills `toolsmith skills`
    /// writes, each with a script that runs its tools with `toolsmith call`.
    ///
    /// With --project, into the project's skills folder (e.g. `.claude/skills/`); with
    /// --remove, removes this folder's skills from there. Skills from other folders, and
    /// those people wrote, are never touched.
    #[arg(long, conflicts_with_all = ["http", "tool_options", "profile", "config", "name"])]
    pub(crate) skills: bool,

    /// With --skills: how tools are grouped into skills.
    #[arg(long, value_enum, value_name = "GROUPING", requires = "skills")]
    pub(crate) by: Option<SkillGrouping>,

    /// Write the project's configuration file in the current folder, not the user's.
    #[arg(long)]
    pub(crate) project: bool,

    /// Write this configuration file instead of the client's usual one.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,

    /// Remove the entry of that name instead of adding it.
    #[arg(long)]
    pub(crate) remove: bool,

    /// Print what would change in the file, as a diff, and write nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Show every client, its file on this machine, whether it exists and whether the
    /// folder DIR [default: ./tools] is installed there.
    #[arg(
        long,
        value_name = "DIR",
        num_args = 0..=1,
        conflicts_with_all = ["remove", "dry_run", "config", "http", "name", "project"]
    )]
    #[expect(
        clippy::option_option,
        reason = "clap's optional value: no --list, --list, or --list DIR"
    )]
    pub(crate) list: Option<Option<PathBuf>>,

    /// Print the result as JSON: `{"client", "config", "name", "action", "entry",
    /// "dry_run", "diff"}`, or with --list `{"clients": [...]}`.
    #[arg(long)]
    pub(crate) json: bool,
}

/// The `CLIENT` argument: one of the client table's ids (crates/toolsmith/src/install/
/// clients.rs), with clap's error and a "did you mean" for anything else.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientParser;

impl clap::builder::TypedValueParser for ClientParser {
    type Value = Client;

    fn parse_ref(
        &self,
        command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Client, clap::Error> {
        use clap::error::{ContextKind, ContextValue, ErrorKind};
        let text = value.to_string_lossy();
        if let Some(client) = Client::find(&text) {
            return Ok(client);
        }
        let ids: Vec<&str> = Client::all().map(|client| client.spec().id).collect();
        let mut error = clap::Error::new(ErrorKind::InvalidValue).with_cmd(command);
        let arg = arg.map_or_else(|| "<CLIENT>".to_owned(), ToString::to_string);
        error.insert(ContextKind::InvalidArg, ContextValue::String(arg));
        error.insert(
            ContextKind::InvalidValue,
            ContextValue::String(text.clone().into_owned()),
        );
        error.insert(
            ContextKind::ValidValue,
            ContextValue::Strings(ids.iter().map(|id| (*id).to_owned()).collect()),
        );
        if let Some(best) = did_you_mean(&text, ids.iter().copied()).first() {
            error.insert(
                ContextKind::SuggestedValue,
                ContextValue::String((*best).to_owned()),
            );
        }
        Err(error)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(Client::all().map(|client| {
            clap::builder::PossibleValue::new(client.spec().id).help(client.spec().name)
        })))
    }
}
