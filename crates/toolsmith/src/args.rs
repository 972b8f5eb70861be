//! Command-line arguments: every clap type lives here, and each flag's doc comment is its
//! help text (first line short, then the long help).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Turn a folder of tool definitions into an MCP server, and work on those tools.
///
/// A tools folder holds Starlark files (`forecast.star`), manifests with a script
/// (`hello.toml` + `hello.star`) and manifests that run any program (`command = [...]`).
/// Start with `toolsmith list examples/tools`, then `toolsmith call examples/tools hello name=Ada`.
#[derive(Debug, Parser)]
#[command(name = "toolsmith", version, about, long_about, max_term_width = 100)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,

    /// Log more (-v: debug, -vv: trace); logs go to stderr.
    ///
    /// The `TOOLSMITH_LOG` environment variable takes a full filter instead,
    /// e.g. `TOOLSMITH_LOG=toolsmith_starlark=debug`.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,

    /// Print only errors.
    #[arg(short, long, global = true)]
    pub(crate) quiet: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the tools of a folder, as `tools/list` will publish them.
    ///
    /// Shows each tool's name, title, parameters (`?` marks optional ones) and source file,
    /// then every file that failed to load with its line and column. Exits 1 when a file
    /// failed to load.
    ///
    /// Example: toolsmith list examples/tools --json | jq '.tools[].name'
    List(ListArgs),

    /// Call one tool through the same path the server uses, and print its result.
    ///
    /// Arguments are `KEY=VALUE` pairs (a VALUE that parses as JSON is JSON, anything else
    /// is a string) and/or `--args '{"key": ...}'`. Prints the text content; `--json`
    /// prints the whole MCP CallToolResult. Exits 0 on success, 1 when the result is
    /// `isError`, 2 when the call could not be made (unknown tool, folder not found).
    ///
    /// Examples:
    ///   toolsmith call examples/tools hello name=Ada times=2
    ///   toolsmith call examples/tools process_list --args '{"numbers": [1, 2], "operation": "sum"}'
    Call(CallArgs),
}

/// Where the tools are.
#[derive(Debug, Args)]
pub(crate) struct FolderArg {
    /// The tools folder [default: ./tools].
    #[arg(value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub(crate) folder: FolderArg,

    /// Print `{"tools": [...], "errors": [...]}`: MCP Tool objects exactly as
    /// `tools/list` publishes them, and the load errors.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// `[DIR] TOOL [KEY=VALUE ...]`: the folder (default ./tools), the tool, its arguments.
    #[arg(value_name = "[DIR] TOOL [KEY=VALUE]", required = true, num_args = 1..)]
    pub(crate) words: Vec<String>,

    /// Arguments as a JSON object; `KEY=VALUE` pairs override its keys.
    #[arg(long, value_name = "JSON")]
    pub(crate) args: Option<String>,

    /// Print the whole MCP CallToolResult as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}
