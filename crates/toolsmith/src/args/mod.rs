//! Command-line arguments: every clap type lives in this module (`serve`'s and `install`'s,
//! the longest, in their own files), and each flag's doc comment is its help text (first
//! line short, then the long help).

mod audit;
mod bundle;
mod card;
mod install;
mod serve;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub(crate) use audit::AuditArgs;
pub(crate) use bundle::{BundleArgs, CompletionsArgs};
pub(crate) use card::{CardArgs, IconArgs};
pub(crate) use install::InstallArgs;
pub(crate) use serve::{
    AuthorizationArgs, CodeModeArg, DevArgs, LogFormat, SearchArg, SearchModeArg, ServeArgs,
    SharedStateArg,
};

/// Turn a folder of tool definitions into an MCP server, and work on those tools.
///
/// A tools folder holds Starlark files (`forecast.star`), manifests with a script
/// (`hello.toml` + `hello.star`) and manifests that run any program (`command = [...]`).
/// Start with `toolsmith list examples/tools`, then `toolsmith call examples/tools hello name=Ada`.
#[derive(Debug, Parser)]
#[command(
    name = "toolsmith",
    version = env!("TOOLSMITH_VERSION"),
    about,
    long_about,
    max_term_width = 100
)]
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
    /// prints the whole MCP `CallToolResult`. Exits 0 on success, 1 when the result is
    /// `isError`, 2 when the call could not be made (unknown tool, folder not found).
    ///
    /// Examples:
    ///   toolsmith call examples/tools hello name=Ada times=2
    ///   toolsmith call examples/tools process_list --args '{"numbers": [1, 2], "operation": "sum"}'
    #[expect(
        clippy::doc_markdown,
        reason = "the examples are shell lines, shown as typed"
    )]
    #[command(verbatim_doc_comment)]
    Call(CallArgs),

    /// Run every tool's test cases through the same path the server uses.
    ///
    /// Cases are `examples=[{"args": {...}, "expect": {...}}]` on `mcp.tool`, `[[tests]]` in
    /// manifests and `[[tests]]` in `tests/*.toml` (format: docs/testing.md). They run in
    /// parallel; a failing case shows expected against actual. The run ends with the line
    /// `N passed, N failed` and exits 1 when a case fails or a file fails to load.
    ///
    /// Examples:
    ///   toolsmith test examples/tools
    ///   toolsmith test examples/tools --filter forecast --junit target/toolsmith-junit.xml
    #[command(verbatim_doc_comment)]
    Test(TestArgs),

    /// Start a new tool, or a new tools folder, that follows the description convention.
    ///
    /// Writes files that pass `toolsmith check` and `toolsmith test` as generated, prints
    /// what it wrote and what to run next, and never overwrites a file (exit 2 instead).
    ///
    /// Examples:
    ///   toolsmith new tool forecast
    ///   toolsmith new tool stats --lang python tools
    ///   toolsmith new folder my-tools
    #[command(verbatim_doc_comment)]
    New(NewArgs),

    /// Lint the tools of a folder: names, descriptions, parameters, schemas, permissions.
    ///
    /// Prints each finding with the offending source line and a `help:` line, then a summary
    /// line; files that failed to load are reported the same way. Each rule is documented in
    /// docs/rules/ and by `--explain RULE`. Configure in toolsmith.toml with `[check]`
    /// `select = [...]`, `ignore = [...]` and `[check.per-tool-ignores]` (see docs/check.md).
    /// Exits 1 when an error is found (or a warning, with `--strict`), 2 when it cannot run.
    ///
    /// Examples:
    ///   toolsmith check examples/tools
    ///   toolsmith check tools --strict --format github
    ///   toolsmith check --explain non-ecma-pattern
    ///   toolsmith check --upstream -- npx -y @modelcontextprotocol/server-everything
    ///   toolsmith check --url https://mcp.example.com/mcp --header 'Authorization: Bearer ${TOKEN}'
    #[expect(
        clippy::doc_markdown,
        reason = "the examples are shell lines, shown as typed"
    )]
    #[command(verbatim_doc_comment)]
    Check(CheckArgs),

    /// Serve the tools over MCP: stdio by default, Streamable HTTP with `--http`
    ///
    /// Over stdio (how AI clients launch local servers) stdout carries protocol messages
    /// only; load errors and logs go to stderr, and the server exits when the client closes
    /// stdin. With `--http ADDR` it serves `http://ADDR/mcp` and prints that URL to stderr.
    /// SIGINT/SIGTERM stop it after running calls finish (see `--shutdown-grace`).
    ///
    /// Examples:
    ///   toolsmith serve examples/tools
    ///   toolsmith serve examples/tools --http 8080
    ///   toolsmith serve tools --http 0.0.0.0:8080 --allow-host tools.internal --auth-token "$TOKEN"
    #[command(verbatim_doc_comment)]
    Serve(ServeArgs),

    /// Develop tools: serve them over HTTP, reload on every change, and print the page's URL
    ///
    /// `toolsmith dev DIR` is `toolsmith serve DIR --http 8080 --watch` (another free port
    /// when 8080 is taken, unless you pass `--http`). Open the URL it prints to see every
    /// tool as a client sees it and try it from a form; save a tool file and reload the
    /// page. `--open` opens the page in the default browser ($BROWSER when set). Every flag
    /// of `serve` works here too.
    ///
    /// Examples:
    ///   toolsmith dev examples/tools --open
    ///   toolsmith dev tools --profile weather --http 9000
    // `serve` asks for `--http` with its HTTP flags; `dev` always serves HTTP.
    #[command(verbatim_doc_comment, mut_args(|arg| arg.requires(clap::builder::Resettable::<clap::Id>::Reset)))]
    Dev(DevArgs),

    /// Search the tools of a folder the way `tool_search` does, and print the ranking.
    ///
    /// Ranks every tool (listed and discoverable) by how well its name, title, keywords,
    /// tags, description and parameters match QUERY, best first, with the score the server's
    /// `tool_search` reports (see docs/search.md). Prints NAME, SCORE and TITLE; `--json`
    /// prints `tool_search`'s structured result.
    ///
    /// Examples:
    ///   toolsmith search examples/tools "sum two numbers"
    ///   toolsmith search tools "wether forecast" -n 3 --json
    #[command(verbatim_doc_comment)]
    Search(SearchArgs),

    /// Add the tools folder to an AI client's MCP servers, so the client starts
    /// `toolsmith serve DIR` itself.
    ///
    /// With --http URL, the client connects to a server that is already running instead.
    /// Writes one entry, in the client's own file, format and shape, keeping everything
    /// else in the file (comments too); the old file is kept as FILE.bak and the new one is
    /// written atomically. Installing again under the same name replaces the entry where
    /// it is. A file Toolsmith cannot read is left alone, with the entry printed to add by
    /// hand. Restart the client (or reload its MCP servers) afterwards.
    ///
    /// `toolsmith install --list` shows every client, its file on this machine, whether the
    /// file exists and whether the folder is installed there. docs/install.md has every
    /// client's file per OS, key, format and entry.
    ///
    /// Examples:
    ///   toolsmith install claude-code tools
    ///   toolsmith install cursor examples/tools --name examples --dry-run
    ///   toolsmith install codex tools --profile readonly
    ///   toolsmith install vscode tools --project
    ///   toolsmith install gemini --http https://tools.example.com/mcp --auth-token-env TOOLS_TOKEN
    ///   toolsmith install claude-code tools --remove
    ///   toolsmith install --list tools --json
    #[command(verbatim_doc_comment)]
    #[expect(clippy::doc_markdown, reason = "help text, printed as written")]
    Install(InstallArgs),

    /// Write Agent Skills from the folder's tools, for agents that read skills, not MCP.
    ///
    /// One skill folder per profile (or per tag with `--by tag`, per tool with `--by
    /// tool`): a SKILL.md whose front matter follows the Agent Skills format and whose body
    /// says when to use each tool, its parameters and an example, plus scripts/call.sh,
    /// which runs a tool with `toolsmith call`. Regenerating replaces what it wrote before
    /// and removes skills no longer generated; a folder it did not write is never touched.
    /// `--check` writes nothing and exits 1 naming what changed when the skills no longer
    /// match the tools (for CI).
    ///
    /// Examples:
    ///   toolsmith skills tools --out skills
    ///   toolsmith skills tools --out skills --check
    #[command(verbatim_doc_comment)]
    Skills(SkillsArgs),

    /// Show the folder's packages, and move the pins of its git packages.
    ///
    /// A package is another tools folder whose tools this one serves: `[packages.NAME]` in
    /// toolsmith.toml with `path = "../weather-tools"`, or `git = "URL"` and `rev = "v1"`
    /// (cloned into the cache, pinned in toolsmith.lock). Its tools are published as
    /// `PREFIX_TOOL` and named `PUBLISHER/PACKAGE/TOOL` on the command line; `allow` caps the
    /// permissions they may hold (see docs/packages.md).
    ///
    /// Examples:
    ///   toolsmith packages list tools
    ///   toolsmith packages list tools --json
    ///   toolsmith packages update tools
    ///   toolsmith packages update tools geo
    #[command(verbatim_doc_comment)]
    Packages(PackagesArgs),

    /// Add another MCP server to a folder: its tools are served as `NAME_TOOL`
    ///
    /// Writes `[upstream.NAME]` into the folder's toolsmith.toml (made if missing; the rest
    /// of the file is kept as it is), then starts the server once and lists its tools, so a
    /// typo shows now and not at `serve`. A server is a program spoken to over stdio (the
    /// words after `--`) or a Streamable HTTP URL. Write secrets as `${VAR}` (in single
    /// quotes, so the shell leaves them alone): they are read from the environment when the
    /// server starts, and never sit in the file. Exits 1 when the entry was written but the
    /// server did not start, 2 when nothing was written (see docs/gateway.md).
    ///
    /// Examples:
    ///   toolsmith upstream add tools everything -- npx -y @modelcontextprotocol/server-everything
    ///   toolsmith upstream add github --env 'GITHUB_TOKEN=${GITHUB_TOKEN}' -- npx -y @modelcontextprotocol/server-github
    ///   toolsmith upstream add linear --url https://mcp.linear.app/mcp --header 'Authorization: Bearer ${LINEAR_TOKEN}'
    #[expect(
        clippy::doc_markdown,
        reason = "the examples are shell lines, shown as typed"
    )]
    #[command(verbatim_doc_comment)]
    Upstream(UpstreamArgs),

    /// Pack a tools folder into an MCP Bundle (.mcpb) that runs where Toolsmith is not
    /// installed, and optionally its `server.json` for the MCP registry.
    ///
    /// The bundle holds the folder's files, this `toolsmith` binary under `server/`, and a
    /// manifest.json (manifest_version 0.4) whose name, version, description and author come
    /// from toolsmith.toml's `[server]`. Every environment variable the tools need becomes a
    /// `user_config` entry the client asks its user for. A folder with load errors is
    /// refused; `.env` files and files that look like keys are left out (see docs/bundle.md).
    ///
    /// Examples:
    ///   toolsmith bundle tools
    ///   toolsmith bundle tools -o dist/weather.mcpb --binary target/aarch64-apple-darwin/dist/toolsmith
    ///   toolsmith bundle tools --server-json --name io.github.acme/weather --url https://github.com/acme/weather/releases/download/v1.0.0/weather.mcpb
    #[expect(
        clippy::doc_markdown,
        reason = "the examples are shell lines, shown as typed"
    )]
    #[command(verbatim_doc_comment)]
    Bundle(BundleArgs),

    /// Print a shell completion script for `toolsmith`.
    ///
    /// Load it in the shell's startup file (docs/install-toolsmith.md):
    ///   bash:        source <(toolsmith completions bash)        (in ~/.bashrc)
    ///   zsh:         source <(toolsmith completions zsh)         (in ~/.zshrc)
    ///   fish:        toolsmith completions fish | source         (in ~/.config/fish/config.fish)
    ///   powershell:  toolsmith completions powershell | Out-String | Invoke-Expression
    ///
    /// Example: toolsmith completions zsh > ~/.zfunc/_toolsmith
    #[command(verbatim_doc_comment)]
    Completions(CompletionsArgs),

    /// Print the folder's MCP Server Card, for hosting it as a static file.
    ///
    /// The card (SEP-2127) says what the server is before a client connects: its
    /// reverse-DNS name, version, description and where to reach it. `serve --http` serves
    /// the same card at /mcp/server-card (docs/http.md).
    ///
    /// Example: toolsmith card tools --url https://tools.example.com/mcp > server-card.json
    #[expect(
        clippy::doc_markdown,
        reason = "the example is a shell line, shown as typed"
    )]
    #[command(verbatim_doc_comment)]
    Card(CardArgs),

    /// Check an image and print it as a tool or server icon (a data: URI).
    ///
    /// Reads a PNG, JPEG, WebP or SVG, its size, and prints the `icons` entry a tool or
    /// `[server]` takes (docs/tools.md, "Icons"); --size N scales a PNG first.
    ///
    /// Example: toolsmith icon logo.png --size 64
    #[command(verbatim_doc_comment)]
    Icon(IconArgs),
}

#[derive(Debug, Args)]
pub(crate) struct UpstreamArgs {
    #[command(subcommand)]
    pub(crate) action: UpstreamCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum UpstreamCommand {
    /// Write `[upstream.NAME]` into toolsmith.toml and try the server once.
    Add(UpstreamAddArgs),
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("server").required(true).args(["url", "command"]))]
pub(crate) struct UpstreamAddArgs {
    /// `[DIR] NAME`: the folder (default ./tools) and the upstream's name, which is also its
    /// tools' prefix (`NAME_TOOL`) unless --prefix says otherwise.
    #[arg(value_name = "[DIR] NAME", num_args = 1..=2, required = true)]
    pub(crate) words: Vec<String>,

    /// A Streamable HTTP MCP server instead of a program.
    ///
    /// Example: `--url https://mcp.example.com/mcp`.
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,

    /// A header for every request to --url, as `NAME: VALUE`; repeatable.
    ///
    /// Example: `--header 'Authorization: Bearer ${TOKEN}'`.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    pub(crate) headers: Vec<String>,

    /// An environment variable for the program, as `NAME=VALUE`; repeatable.
    ///
    /// Example: `--env 'GITHUB_TOKEN=${GITHUB_TOKEN}'`.
    #[arg(long = "env", value_name = "NAME=VALUE", conflicts_with = "url")]
    pub(crate) env: Vec<String>,

    /// What its tools' names start with instead of `NAME_`; `--prefix ''` for none.
    #[arg(long, value_name = "PREFIX")]
    pub(crate) prefix: Option<String>,

    /// Write the entry without starting the server.
    #[arg(long)]
    pub(crate) no_start: bool,

    /// Print `{"file", "name", "entry", "tools", "error"}` as JSON.
    #[arg(long)]
    pub(crate) json: bool,

    /// The program and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
}

/// Where the tools are.
#[derive(Debug, Clone, Args)]
pub(crate) struct FolderArg {
    /// The tools folder [default: ./tools].
    #[arg(value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
}

/// Which of the folder's profiles to use.
#[derive(Debug, Clone, Args)]
pub(crate) struct ProfileArg {
    /// Use only profile NAME: its tools, prompts, resources and server settings.
    ///
    /// A profile is a `[profiles.NAME]` table in toolsmith.toml (docs/profiles.md);
    /// `toolsmith list --profiles` shows them. Default: every tool, prompt and resource of
    /// the folder.
    ///
    /// `toolsmith-dev` is built in: with `serve`, every tool of the folder plus `toolsmith_*`
    /// tools that let an AI assistant author tools in DIR over MCP (list the tools and load
    /// errors, read and write files inside DIR, run `check` and `test`, call a tool,
    /// scaffold one as `toolsmith new tool` does); a write reloads the folder before it is
    /// answered, and it implies `--watch`. Only for an assistant you trust with DIR: a
    /// command tool it writes runs any program. Example: `toolsmith serve tools --profile
    /// toolsmith-dev`.
    #[arg(long, value_name = "NAME")]
    pub(crate) profile: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub(crate) folder: FolderArg,

    #[command(flatten)]
    pub(crate) profile: ProfileArg,

    /// Show the folder's profiles instead of its tools: each with its tool count and what
    /// its listed tools cost a model's context in tokens.
    #[arg(long, conflicts_with = "profile")]
    pub(crate) profiles: bool,

    /// Print `{"tools": [...], "errors": [...], "search": {...}}`: MCP Tool objects as
    /// the folder defines them, the load errors, and what discovery decides (token costs).
    #[arg(long)]
    pub(crate) json: bool,

    #[command(flatten)]
    pub(crate) search: SearchArg,
}

#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// `[DIR] TOOL [KEY=VALUE ...]`: the folder (default ./tools), the tool, its arguments.
    #[arg(value_name = "[DIR] TOOL [KEY=VALUE]", required = true, num_args = 1..)]
    pub(crate) words: Vec<String>,

    /// Arguments as a JSON object; `KEY=VALUE` pairs override its keys.
    #[arg(long, value_name = "JSON")]
    pub(crate) args: Option<String>,

    /// Print the whole MCP `CallToolResult` as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    #[command(flatten)]
    pub(crate) folder: FolderArg,

    #[command(flatten)]
    pub(crate) profile: ProfileArg,

    /// How to print the findings.
    ///
    /// `human`: source snippets with carets and help lines (colour on a terminal);
    /// `json`: an array of {rule, severity, path, line, column, message, help};
    /// `github`: GitHub Actions annotations (`::error file=...`) for pull requests;
    /// `sarif`: a SARIF 2.1.0 log for code-scanning dashboards.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "human")]
    pub(crate) format: CheckFormat,

    /// Print the documentation of a rule (what it finds, why, how to fix) and exit.
    ///
    /// Example: `toolsmith check --explain description-too-short`.
    #[arg(long, value_name = "RULE")]
    pub(crate) explain: Option<String>,

    /// Exit 1 on warnings too, not only on errors (for CI).
    #[arg(long)]
    pub(crate) strict: bool,

    /// Apply the safe fixes to the source files, then report what is left.
    ///
    /// Today these are ECMA-262 translations of regex `pattern`s written for PCRE or ICU
    /// (`\A`, `(?i)`, `[[:alpha:]]`, possessive quantifiers, …), written into the
    /// `params=` dict or the manifest. A pattern without an exact translation is reported only.
    #[arg(long)]
    pub(crate) fix: bool,

    /// Run only these rules (comma-separated or repeated); replaces `[check] select`.
    ///
    /// Example: `--select non-ecma-pattern,invalid-default`.
    #[arg(long, value_name = "RULE", value_delimiter = ',')]
    pub(crate) select: Vec<String>,

    /// Skip these rules (comma-separated or repeated), on top of `[check] ignore`.
    ///
    /// Example: `--ignore missing-examples`.
    #[arg(long, value_name = "RULE", value_delimiter = ',')]
    pub(crate) ignore: Vec<String>,

    #[command(flatten)]
    pub(crate) server: CheckServerArgs,
}

/// `toolsmith check --upstream -- COMMAND…` / `--url URL`: lint another MCP server's tools.
#[derive(Debug, Args)]
pub(crate) struct CheckServerArgs {
    /// Lint the tools another MCP server publishes, without a folder: start COMMAND (the
    /// words after `--`) and talk to it over stdio.
    ///
    /// Every rule that reads a definition applies (names, descriptions, schemas,
    /// annotations, icons, the size of the list); the rules about a folder's own files,
    /// tests and permissions do not. Example: `toolsmith check --upstream -- npx -y
    /// @modelcontextprotocol/server-github` (docs/gateway.md).
    #[arg(long, requires = "command", conflicts_with_all = ["dir", "url", "fix", "profile"])]
    pub(crate) upstream: bool,

    /// Lint the tools of the Streamable HTTP MCP server at URL, without a folder.
    ///
    /// Example: `toolsmith check --url http://127.0.0.1:8080/mcp`.
    #[arg(long, value_name = "URL", conflicts_with_all = ["dir", "command", "fix", "profile"])]
    pub(crate) url: Option<String>,

    /// A header sent with every request to --url, as `NAME: VALUE`; repeatable. `${VAR}`
    /// in the value is read from the environment, so no secret sits in a shell history.
    ///
    /// Example: `--header 'Authorization: Bearer ${GITHUB_TOKEN}'`.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    pub(crate) headers: Vec<String>,

    /// The server to start for --upstream: its program and arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<String>,
}

/// The output formats of `toolsmith check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CheckFormat {
    /// Source snippets with carets and help lines.
    Human,
    /// A JSON array of findings.
    Json,
    /// GitHub Actions workflow commands.
    Github,
    /// SARIF 2.1.0.
    Sarif,
}

#[derive(Debug, Args)]
pub(crate) struct TestArgs {
    #[command(flatten)]
    pub(crate) folder: FolderArg,

    #[command(flatten)]
    pub(crate) profile: ProfileArg,

    /// Run only the cases whose id (`TOOL: NAME`) contains PATTERN (repeatable).
    ///
    /// A case's NAME is its `name`, or `example N` for the tool's Nth case. Cases left out
    /// are not counted. Examples: `--filter forecast`, `--filter "text_slugify: example 2"`.
    #[arg(long, value_name = "PATTERN")]
    pub(crate) filter: Vec<String>,

    /// Print one JSON document: every case (tool, name, status, `duration_ms`, message, diff)
    /// and the totals.
    #[arg(long)]
    pub(crate) json: bool,

    /// Also write the results as `JUnit` XML to FILE, for CI test reports.
    #[arg(long, value_name = "FILE")]
    pub(crate) junit: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct NewArgs {
    #[command(subcommand)]
    pub(crate) what: NewCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum NewCommand {
    /// Write a new tool, with one example test, into a tools folder.
    ///
    /// The tool repeats a text: a working starting point whose description, parameters
    /// and test show the shape to keep when you replace it with real work.
    ///
    /// Examples:
    ///   toolsmith new tool forecast
    ///   toolsmith new tool forecast --form manifest tools
    ///   toolsmith new tool forecast --lang node
    #[command(verbatim_doc_comment)]
    Tool(NewToolArgs),

    /// Start a tools folder: `toolsmith.toml`, one Starlark tool and a README.
    ///
    /// Example: toolsmith new folder my-tools && toolsmith test my-tools
    Folder(NewFolderArgs),
}

#[derive(Debug, Args)]
pub(crate) struct NewToolArgs {
    /// The tool's name: `snake_case` ASCII, 1 to 64 characters, e.g. `weather_get`.
    #[arg(value_name = "NAME")]
    pub(crate) name: String,

    #[command(flatten)]
    pub(crate) folder: FolderArg,

    /// How the tool is written [default: star, or command with `--lang`].
    #[arg(long, value_enum)]
    pub(crate) form: Option<ToolForm>,

    /// The language of a command tool [default: python]; implies `--form command`.
    #[arg(long, value_enum)]
    pub(crate) lang: Option<Lang>,
}

/// The three ways to write a tool (README, "The three tool forms").
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ToolForm {
    /// A Starlark file: function, docstring and `mcp.tool(...)` together (`NAME.star`).
    Star,
    /// A manifest and a Scriptling-style script (`NAME.toml` + `NAME.star`).
    Manifest,
    /// A manifest that runs a program per call (`NAME.toml` + the program).
    Command,
    /// A manifest whose program keeps running, one call per JSON line (`NAME.toml` + the
    /// program + the helper library `toolsmith_worker.py` or `.js`).
    Worker,
}

/// Languages of command tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Lang {
    /// `python3 NAME.py`: arguments as JSON on stdin, the result on stdout.
    Python,
    /// `node NAME.js`: arguments as JSON on stdin, the result on stdout.
    Node,
    /// `bash NAME.sh`: arguments on the command line, the result on stdout.
    Bash,
}

#[derive(Debug, Args)]
pub(crate) struct NewFolderArgs {
    /// The folder to create (or an existing one without these files).
    #[arg(value_name = "DIR")]
    pub(crate) dir: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct SkillsArgs {
    #[command(flatten)]
    pub(crate) folder: FolderArg,

    /// Where the skill folders go [default: ./skills].
    #[arg(long, value_name = "DIR", default_value = "skills")]
    pub(crate) out: PathBuf,

    /// How tools are grouped into skills.
    #[arg(long, value_enum, value_name = "GROUPING", default_value = "profile")]
    pub(crate) by: SkillGrouping,

    /// Write nothing: exit 1, naming each file that changed, when the skills in --out no
    /// longer match the tools; exit 0 when they do.
    #[arg(long)]
    pub(crate) check: bool,

    /// Print what was written (or, with --check, what is stale) as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// How `toolsmith skills` groups tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SkillGrouping {
    /// One skill per `[profiles.NAME]`, or one for the whole folder when it has none.
    Profile,
    /// One skill per tag; the untagged tools in one more.
    Tag,
    /// One skill per tool.
    Tool,
}

#[derive(Debug, Args)]
pub(crate) struct SearchArgs {
    /// `[DIR] QUERY`: the folder (default ./tools) and what the tool should do.
    #[arg(value_name = "[DIR] QUERY", required = true, num_args = 1..=2)]
    pub(crate) words: Vec<String>,

    /// How many tools to show, best first [default: 5].
    ///
    /// The same as `tool_search`'s `max_results`. Example: `-n 10`.
    #[arg(short = 'n', long = "limit", value_name = "K", default_value_t = 5)]
    pub(crate) limit: usize,

    #[command(flatten)]
    pub(crate) profile: ProfileArg,

    /// Print `{"results": [{name, title, description, score, inputSchema}]}`, exactly the
    /// structured content `tool_search` returns.
    ///
    /// When no tool fits the query, `"results"` is empty and a `"note"` says so.
    #[arg(long)]
    pub(crate) json: bool,

    /// Show the ranking even when no tool fits the query.
    ///
    /// By default a query no tool of the folder does ("order a pizza") shows no tools, as
    /// `tool_search` answers it; `--all` shows the tools below that floor, best first.
    #[arg(long)]
    pub(crate) all: bool,
}

#[derive(Debug, Args)]
pub(crate) struct PackagesArgs {
    #[command(subcommand)]
    pub(crate) action: PackagesCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum PackagesCommand {
    /// Show every package: where it comes from, its pin, its tools and their permissions.
    ///
    /// For each tool, the permissions it asked for and what it got: a grant the package's
    /// `allow` does not cover is withheld, and `toolsmith check` reports it as
    /// `package-permission-denied`. Exits 1 when a package failed to load.
    List(PackagesListArgs),

    /// Pin git packages to the commit their `rev` names now, and write toolsmith.lock.
    ///
    /// Fetches each git package (or only NAME) and records its commit and the hash of its
    /// files. Without an update a pinned package stays where it is, and loads from the
    /// cache without the network.
    ///
    /// Examples:
    ///   toolsmith packages update tools
    ///   toolsmith packages update tools geo
    #[command(verbatim_doc_comment)]
    Update(PackagesUpdateArgs),
}

#[derive(Debug, Args)]
pub(crate) struct PackagesListArgs {
    #[command(flatten)]
    pub(crate) folder: FolderArg,

    /// Print `{"packages": [...], "errors": [...]}`: each package with its source, pin and
    /// tools (`asked`, `granted` and `withheld` permissions), then the load errors.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct PackagesUpdateArgs {
    /// `[DIR] [NAME]`: the folder (default ./tools) and the one package to update [default:
    /// every git package].
    ///
    /// A single word is the folder when a folder of that name exists, else a package of
    /// ./tools.
    #[arg(value_name = "[DIR] [NAME]", num_args = 0..=2)]
    pub(crate) words: Vec<String>,
}
