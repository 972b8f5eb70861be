//! `toolsmith list`: the tools of a folder, as `tools/list` will publish them, then its
//! prompts and resources (its upstreams' among them).

use std::fmt::Write as _;

use serde_json::{Value, json};
use toolsmith_folder::{PROFILE_PROBLEM, ToolFolder};
use toolsmith_model::{Catalog, CatalogEntry, InitSummary, SearchMode, SearchSettings, Severity};
use toolsmith_search::{Plan, tokens};

use crate::ExitStatus;
use crate::args::ListArgs;
use crate::folder;
use crate::printer::{Printer, Style};

pub(crate) fn run(args: &ListArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let ListArgs {
        folder: folder_arg,
        profile,
        profiles,
        json,
        search,
    } = args;
    let loaded = folder::load_served(folder_arg.dir.as_deref(), None, profile.profile.as_deref())?;
    if *profiles {
        return list_profiles(&loaded, search, *json, printer);
    }
    let catalog = loaded.catalog();
    let costs = Costs::new(catalog, search.apply(loaded.config().search));
    if *json {
        let mut document = catalog.to_json();
        document["search"] = costs.to_json(catalog);
        document["inits"] = InitSummary::of(catalog.entries())
            .iter()
            .map(InitSummary::to_json)
            .collect();
        content_json(&loaded, &mut document);
        // The tools listed but not callable now, and why: an upstream's that did not
        // start, from what it listed last (docs/gateway.md, "Faults").
        let unavailable: serde_json::Map<String, Value> = catalog
            .definitions()
            .filter_map(|tool| Some((tool.name.clone(), json!(tool.unavailable.as_ref()?))))
            .collect();
        if !unavailable.is_empty() {
            document["unavailable"] = Value::Object(unavailable);
        }
        printer.data(&serde_json::to_string_pretty(&document)?)?;
    } else {
        let rows: Vec<[String; 5]> = catalog
            .entries()
            .iter()
            .zip(&costs.tokens)
            .map(|(tool, &tokens)| row(tool, tokens, loaded.root()))
            .collect();
        print_table(
            printer,
            ["NAME", "TITLE", "PARAMETERS", "TOKENS", "SOURCE"],
            &rows,
            &[3],
        )?;
        print_inits(printer, &InitSummary::of(catalog.entries()))?;
        print_content(printer, &loaded)?;
        folder::report(printer, catalog.diagnostics());
        let count = rows.len();
        printer.message(&format!(
            "{count} tool{} from {}, {} token{} in all ({})",
            if count == 1 { "" } else { "s" },
            loaded.root().display(),
            thousands(costs.total()),
            if costs.total() == 1 { "" } else { "s" },
            tokens::ENCODING,
        ));
        printer.message(&costs.summary());
    }
    let failed = catalog
        .diagnostics()
        .iter()
        .any(|d| d.severity == Severity::Error);
    Ok(if failed {
        ExitStatus::Findings
    } else {
        ExitStatus::Success
    })
}

/// What each tool costs a model's context, and what `serve` makes of it.
struct Costs {
    plan: Plan,
    /// Per tool, in catalog order.
    tokens: Vec<usize>,
    /// The tools `auto` lists (not marked `discoverable`): how many and their tokens.
    listed: (usize, usize),
    /// Tools marked `discoverable`.
    discoverable: usize,
}

impl Costs {
    fn new(catalog: &Catalog, settings: SearchSettings) -> Self {
        let tokens: Vec<usize> = catalog.definitions().map(tokens::cost).collect();
        let mut listed = (0, 0);
        let mut discoverable = 0;
        for (entry, &cost) in catalog.entries().iter().zip(&tokens) {
            if entry.discoverable() {
                discoverable += 1;
            } else {
                listed.0 += 1;
                listed.1 += cost;
            }
        }
        Self {
            plan: Plan::decide(settings, Some(listed.1)),
            tokens,
            listed,
            discoverable,
        }
    }

    fn total(&self) -> usize {
        self.tokens.iter().sum()
    }

    /// One line: what `tools/list` will cost and why.
    fn summary(&self) -> String {
        let SearchSettings {
            mode,
            budget_tokens,
        } = self.plan.settings;
        let (listed, listed_tokens) = self.listed;
        let encoding = tokens::ENCODING;
        let tools = |n: usize| format!("{n} tool{}", if n == 1 { "" } else { "s" });
        match mode {
            SearchMode::Never => format!(
                "search never: serve lists all {} ({} tokens, {encoding})",
                tools(self.tokens.len()),
                thousands(self.total())
            ),
            SearchMode::Always => format!(
                "search always: serve lists only tool_search and execute_tool; listed, the {} \
                 would cost {} tokens ({encoding})",
                tools(self.tokens.len()),
                thousands(self.total())
            ),
            SearchMode::Auto if self.plan.all_behind_search => format!(
                "search auto: the {} to list cost {} tokens ({encoding}), over the budget of {}, \
                 so serve puts every tool behind tool_search (set [search] budget_tokens or \
                 mode = \"never\" to list them)",
                tools(listed),
                thousands(listed_tokens),
                thousands(budget_tokens)
            ),
            SearchMode::Auto => {
                let hidden = if self.discoverable == 0 {
                    String::new()
                } else {
                    format!(
                        "; {} marked discoverable behind tool_search",
                        tools(self.discoverable)
                    )
                };
                format!(
                    "search auto: serve lists {} costing {} tokens ({encoding}) of the budget of {}{hidden}",
                    tools(listed),
                    thousands(listed_tokens),
                    thousands(budget_tokens)
                )
            }
        }
    }

    /// The `search` member of `list --json`.
    fn to_json(&self, catalog: &Catalog) -> Value {
        let per_tool: serde_json::Map<String, Value> = catalog
            .definitions()
            .zip(&self.tokens)
            .map(|(definition, &tokens)| (definition.name.clone(), json!(tokens)))
            .collect();
        json!({
            "mode": self.plan.settings.mode.name(),
            "budget_tokens": self.plan.settings.budget_tokens,
            "encoding": tokens::ENCODING,
            "all_behind_search": self.plan.all_behind_search,
            "listed_tokens": self.listed.1,
            "total_tokens": self.total(),
            "tokens": per_tool,
        })
    }
}

/// `31200` as `31,200`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

fn row(entry: &CatalogEntry, tokens: usize, root: &std::path::Path) -> [String; 5] {
    let tool = entry.definition();
    let schema = tool.input_schema.to_object();
    let properties = schema.get("properties").and_then(|p| p.as_object());
    let required: Vec<&str> = schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|names| names.iter().filter_map(|n| n.as_str()).collect())
        .unwrap_or_default();
    let parameters = properties
        .map(|properties| {
            properties
                .keys()
                .map(|name| {
                    if required.contains(&name.as_str()) {
                        name.clone()
                    } else {
                        format!("{name}?")
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let source = tool
        .source
        .path
        .strip_prefix(root)
        .unwrap_or(&tool.source.path);
    let location = if tool.source.line > 1 {
        format!("{}:{}", source.display(), tool.source.line)
    } else {
        source.display().to_string()
    };
    let mut name = tool.name.clone();
    if entry.discoverable() {
        name.push_str(" (search)");
    }
    if tool.unavailable.is_some() {
        name.push_str(" (unavailable)");
    }
    [
        name,
        tool.title.clone().unwrap_or_default(),
        parameters,
        tokens.to_string(),
        location,
    ]
}

/// Prints `rows` under `headers`, columns padded to their widest cell, the columns at
/// `right` (numbers) aligned right and the last one not padded.
/// Where a prompt or resource comes from: `upstream NAME`, or the file that defines it.
fn origin(
    remote: Option<&toolsmith_model::Remote>,
    source: &toolsmith_model::SourceLocation,
    root: &std::path::Path,
) -> String {
    match remote {
        Some(remote) => format!("upstream {}", remote.owner),
        None => source
            .path
            .strip_prefix(root)
            .unwrap_or(&source.path)
            .display()
            .to_string(),
    }
}

/// The prompts, resources and resource templates the folder serves, its upstreams' among
/// them, each with where it comes from; nothing when there are none.
fn print_content(printer: Printer, loaded: &ToolFolder) -> std::io::Result<()> {
    let root = loaded.root();
    let prompts: Vec<[String; 3]> = loaded
        .prompts()
        .list()
        .iter()
        .map(|prompt| {
            [
                prompt.name.clone(),
                prompt
                    .description
                    .clone()
                    .unwrap_or_default()
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
                origin(prompt.remote.as_ref(), &prompt.source, root),
            ]
        })
        .collect();
    if !prompts.is_empty() {
        printer.data("")?;
        print_table(printer, ["PROMPT", "DESCRIPTION", "SOURCE"], &prompts, &[])?;
    }
    let resources = loaded.resources();
    let rows: Vec<[String; 3]> = resources
        .list()
        .iter()
        .map(|resource| (resource.uri.clone(), &resource.info))
        .chain(
            resources
                .templates()
                .iter()
                .map(|template| (template.uri_template.as_str().to_owned(), &template.info)),
        )
        .map(|(uri, info)| {
            [
                uri,
                info.name.clone(),
                origin(info.remote.as_ref(), &info.source, root),
            ]
        })
        .collect();
    if !rows.is_empty() {
        printer.data("")?;
        print_table(printer, ["RESOURCE", "NAME", "SOURCE"], &rows, &[])?;
    }
    Ok(())
}

/// `prompts`, `resources` and `resource_templates` of `list --json`, as `prompts/list`,
/// `resources/list` and `resources/templates/list` publish them, each with `upstream` when
/// an upstream serves it; left out when empty.
fn content_json(loaded: &ToolFolder, document: &mut Value) {
    let with_upstream = |mut entry: Value, remote: Option<&toolsmith_model::Remote>| {
        if let Some(remote) = remote {
            entry["upstream"] = json!(remote.owner);
        }
        entry
    };
    let prompts: Vec<Value> = loaded
        .prompts()
        .list()
        .iter()
        .map(|prompt| with_upstream(prompt.to_mcp(), prompt.remote.as_ref()))
        .collect();
    let resources = loaded.resources();
    let listed: Vec<Value> = resources
        .list()
        .iter()
        .map(|resource| with_upstream(resource.to_mcp(), resource.info.remote.as_ref()))
        .collect();
    let templates: Vec<Value> = resources
        .templates()
        .iter()
        .map(|template| with_upstream(template.to_mcp(), template.info.remote.as_ref()))
        .collect();
    for (key, entries) in [
        ("prompts", prompts),
        ("resources", listed),
        ("resource_templates", templates),
    ] {
        if !entries.is_empty() {
            document[key] = Value::Array(entries);
        }
    }
}

fn print_table<const N: usize>(
    printer: Printer,
    headers: [&str; N],
    rows: &[[String; N]],
    right: &[usize],
) -> std::io::Result<()> {
    let mut widths = headers.map(str::len);
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; N]| {
        let mut out = String::new();
        for (index, (cell, width)) in cells.iter().zip(widths).enumerate() {
            if index + 1 == N {
                out.push_str(cell);
            } else if right.contains(&index) {
                let _ = write!(out, "{cell:>width$}  ");
            } else {
                let _ = write!(out, "{cell:<width$}  ");
            }
        }
        out.trim_end().to_owned()
    };
    printer.data(&printer.style(Style::Bold, &line(headers)))?;
    for row in rows {
        printer.data(&line(std::array::from_fn(|index| row[index].as_str())))?;
    }
    Ok(())
}

/// The inits of the tools, after their table (docs/tools.md, "Lazy initialization"): what
/// runs, for which tools, within what time, and whether it has run in this process.
fn print_inits(printer: Printer, inits: &[InitSummary]) -> std::io::Result<()> {
    if inits.is_empty() {
        return Ok(());
    }
    let rows: Vec<[String; 4]> = inits
        .iter()
        .map(|init| {
            [
                format!("{} ({})", init.label, init.kind),
                init.tools.join(", "),
                toolsmith_model::duration::format(init.timeout),
                init.status.to_string(),
            ]
        })
        .collect();
    printer.data("")?;
    print_table(printer, ["INIT", "TOOLS", "TIMEOUT", "STATE"], &rows, &[])
}

/// `toolsmith list --profiles`: each profile of the folder with its tools and what its
/// listed tools cost, after the whole folder (docs/profiles.md).
fn list_profiles(
    loaded: &ToolFolder,
    search: &crate::args::SearchArg,
    json: bool,
    printer: Printer,
) -> anyhow::Result<ExitStatus> {
    let mut views = Vec::new();
    for name in loaded.config().profiles.keys() {
        views.push((Some(name.as_str()), loaded.with_profile(name)?));
    }
    let whole = std::iter::once((None, loaded));
    let views = whole.chain(views.iter().map(|(name, view)| (*name, view)));
    let mut problems = Vec::new();
    let mut documents = Vec::new();
    let mut rows = Vec::new();
    for (name, view) in views {
        let catalog = view.catalog();
        problems.extend(
            catalog
                .diagnostics()
                .iter()
                .filter(|d| d.rule == PROFILE_PROBLEM)
                .cloned(),
        );
        let costs = Costs::new(catalog, search.apply(view.config().search));
        let description = name
            .and_then(|name| loaded.config().profiles.get(name))
            .and_then(|profile| profile.description.clone())
            .unwrap_or_else(|| {
                if name.is_none() {
                    "every tool of the folder".to_owned()
                } else {
                    String::new()
                }
            });
        let label = name.map_or_else(|| "(no profile)".to_owned(), str::to_owned);
        documents.push(json!({
            "name": name,
            "description": description,
            "tools": catalog.definitions().map(|tool| tool.name.as_str()).collect::<Vec<_>>(),
            "tool_count": catalog.entries().len(),
            "listed_tokens": costs.listed.1,
            "total_tokens": costs.total(),
            "search": costs.plan.settings.mode.name(),
            "all_behind_search": costs.plan.all_behind_search,
        }));
        rows.push([
            label,
            catalog.entries().len().to_string(),
            thousands(costs.listed.1),
            costs.plan.settings.mode.name().to_owned(),
            description,
        ]);
    }
    if json {
        printer.data(&serde_json::to_string_pretty(&json!({
            "profiles": documents,
            "errors": problems.iter().map(toolsmith_model::Diagnostic::to_json).collect::<Vec<_>>(),
        }))?)?;
    } else {
        print_table(
            printer,
            ["PROFILE", "TOOLS", "TOKENS", "SEARCH", "DESCRIPTION"],
            &rows,
            &[1, 2],
        )?;
        folder::report(printer, &problems);
        printer.message(&format!(
            "TOKENS: what the listed tools cost a model's context ({}); serve one with `toolsmith serve --profile NAME`",
            tokens::ENCODING
        ));
    }
    Ok(ExitStatus::Success)
}
