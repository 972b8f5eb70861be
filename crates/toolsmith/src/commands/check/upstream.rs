//! `toolsmith check --upstream -- COMMAND…` and `toolsmith check --url URL`: lint the tools
//! another MCP server publishes, with no folder (docs/gateway.md, "A lint of any server").
//! The server is started (or connected to) the way `[upstream.NAME]` does it, its tools are
//! listed once, and every rule that reads a definition judges them.

use std::sync::Arc;

use anyhow::Context as _;
use serde_json::{Map, json};
use toolsmith_check::{CheckContext, Settings, check};
use toolsmith_model::{SourceLocation, Tool, ToolDefinition};
use toolsmith_upstream::{Upstream, UpstreamSpec, UpstreamTool};

use crate::ExitStatus;
use crate::args::{CheckFormat, CheckServerArgs};
use crate::error::Hinted;
use crate::printer::Printer;

/// The rules about what only a Toolsmith folder has (its files, test cases, permissions,
/// required programs, packages, the names its discovery mode keeps for itself): a server
/// known only by its `tools/list` has none of them.
const FOLDER_RULES: &[&str] = &[
    "missing-examples",
    "missing-permission",
    "missing-requirement",
    "overbroad-permission",
    "package-permission-denied",
    "read-only-writes",
    "reserved-tool-name",
    "unused-permission",
];

/// What the name of the server is in messages (`upstream `server` cannot start …`).
const NAME: &str = "server";

pub(super) fn run(
    server: &CheckServerArgs,
    select: Vec<&'static str>,
    ignore: Vec<&'static str>,
    format: CheckFormat,
    strict: bool,
    printer: Printer,
) -> anyhow::Result<ExitStatus> {
    let spec = spec(server)?;
    let target = spec.target();
    let upstream = Arc::new(Upstream::new(spec));
    printer.message(&format!("listing the tools of `{target}` …"));
    let listed = upstream.list_once();
    let listed = listed.map_err(|error| {
        Hinted::new(format!("cannot lint `{target}`"))
            .caused_by(error)
            .hint(
                "run the command by hand to see why; an npm server may need `npx -y`, and \
                 a server that needs a token reads it from the environment",
            )
    })?;
    // Findings point at the command line or the URL: there is no file to show.
    let source = SourceLocation::file(&target);
    let tools = UpstreamTool::all(&upstream, &listed, &source);
    // A Toolsmith upstream's own discovery tools are Toolsmith's, not its author's: exempt.
    let definitions: Vec<&ToolDefinition> = tools
        .iter()
        .map(Tool::definition)
        .filter(|definition| !toolsmith_search::is_builtin(definition))
        .collect();

    let (mut settings, _) = Settings::from_config(&Map::new(), source.path.as_path());
    if !select.is_empty() {
        settings.set_select(select);
    }
    settings.add_ignore(FOLDER_RULES.iter().copied().chain(ignore));
    let context = CheckContext {
        config_path: Some(source.path.clone()),
        ..CheckContext::default()
    };
    let mut findings = check(definitions.iter().copied(), &context, &settings);
    toolsmith_check::sort(&mut findings);
    super::report(&findings, &context, definitions.len(), 0, format, printer)?;
    Ok(super::exit_status(&findings, strict))
}

/// `[upstream.server]` as the flags describe it, with no prefix: the tools keep the names
/// the server gives them.
fn spec(server: &CheckServerArgs) -> anyhow::Result<UpstreamSpec> {
    let table = if let Some(url) = &server.url {
        let headers = crate::commands::upstream::headers(&server.headers)?;
        json!({ "url": url, "headers": headers, "prefix": "" })
    } else {
        json!({ "command": server.command, "prefix": "" })
    };
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    UpstreamSpec::parse(NAME, &table, &cwd).map_err(|message| anyhow::anyhow!(message))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_folder_rules_name_rules() {
        for id in super::FOLDER_RULES {
            assert!(toolsmith_check::resolve(id).is_ok(), "`{id}` names no rule");
        }
    }
}
