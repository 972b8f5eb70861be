//! `toolsmith search`: the tools of a folder ranked for a query, exactly as the server's
//! `tool_search` ranks them (docs/search.md).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;
use toolsmith_search::{SearchIndex, Verdict};

use super::search_cache::Cache;

use crate::ExitStatus;
use crate::args::SearchArgs;
use crate::folder;
use crate::printer::{Printer, Style};

pub(crate) fn run(args: &SearchArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let SearchArgs {
        words,
        limit,
        profile,
        json,
        all,
    } = args;
    let shown = Shown {
        limit: *limit,
        json: *json,
        all: *all,
    };
    let (dir, query) = split_words(words)?;
    let profile = profile.profile.as_deref();
    let cache = Cache::of(&folder::path_of(dir.as_deref()), profile);
    if let Some(kept) = cache.as_ref().and_then(Cache::read) {
        let found = |name: &str| {
            let tool = kept.tool(name)?;
            Some(Found {
                title: tool.title.as_deref(),
                description: &tool.description,
                input_schema: tool.input_schema(),
            })
        };
        return show(printer, kept.index(), query, &shown, found);
    }
    let loaded = folder::load_served(dir.as_deref(), None, profile)?;
    let catalog = loaded.catalog();
    let index = SearchIndex::new(catalog.definitions());
    if !*json {
        folder::report(printer, catalog.diagnostics());
    }
    let found = |name: &str| {
        let definition = catalog.get(name)?.definition();
        Some(Found {
            title: definition.title.as_deref(),
            description: &definition.description,
            input_schema: definition.input_schema.to_value(),
        })
    };
    let status = show(printer, &index, query, &shown, found)?;
    if let Some(cache) = cache {
        cache.write(&loaded, &index);
    }
    Ok(status)
}

/// What `toolsmith search` shows of a tool found, besides its name and score.
struct Found<'a> {
    title: Option<&'a str>,
    description: &'a str,
    input_schema: Value,
}

/// How the results are shown: how many, as JSON or a table, and whether below the floor.
struct Shown {
    limit: usize,
    json: bool,
    all: bool,
}

/// Searches `index` and prints the tools found (`found` tells about each), as a table or
/// as `tool_search`'s JSON; when no tool fits the query, what `tool_search` says instead
/// (unless `--all`).
fn show<'a>(
    printer: Printer,
    index: &SearchIndex,
    query: &str,
    shown: &Shown,
    found: impl Fn(&str) -> Option<Found<'a>>,
) -> anyhow::Result<ExitStatus> {
    let Shown { limit, json, all } = *shown;
    let judged = index.search_judged(query, limit);
    let note = judged.verdict.note(query).filter(|_| !all);
    if let Some(note) = note {
        if json {
            let results = serde_json::json!({ "results": [], "note": note });
            printer.data(&serde_json::to_string_pretty(&results)?)?;
            return Ok(ExitStatus::Success);
        }
        if !judged.hits.is_empty() {
            let why = match &judged.verdict {
                Verdict::UnknownProduct(product) => format!("none works with `{product}`"),
                Verdict::NothingFits | Verdict::Fits => {
                    "the closest explain too little of it".to_owned()
                }
            };
            printer.message(&format!(
                "no tool of {} fits `{query}`: {why}\nhint: `--all` shows the ranking below this floor",
                index.len()
            ));
            return Ok(ExitStatus::Success);
        }
    }
    let hits = judged.hits;
    if json {
        let results: Vec<Value> = hits
            .iter()
            .filter_map(|hit| {
                let tool = found(&hit.name)?;
                Some(toolsmith_search::result(
                    &hit.name,
                    tool.title,
                    tool.description,
                    hit.score,
                    tool.input_schema,
                ))
            })
            .collect();
        let results = serde_json::json!({ "results": results });
        printer.data(&serde_json::to_string_pretty(&results)?)?;
        return Ok(ExitStatus::Success);
    }
    if hits.is_empty() {
        printer.message(&format!(
            "no tool matches `{query}` among {} tools; try other words",
            index.len()
        ));
        return Ok(ExitStatus::Success);
    }
    let rows: Vec<[String; 3]> = hits
        .iter()
        .map(|hit| {
            let title = found(&hit.name)
                .and_then(|tool| tool.title.map(str::to_owned))
                .unwrap_or_default();
            [hit.name.clone(), format!("{:.3}", hit.score), title]
        })
        .collect();
    print_table(printer, &rows)?;
    Ok(ExitStatus::Success)
}

/// `[DIR] QUERY`: one word is the query (the folder defaults to ./tools).
fn split_words(words: &[String]) -> anyhow::Result<(Option<PathBuf>, &str)> {
    let (dir, query) = match words {
        [query] => (None, query),
        [dir, query] => (Some(Path::new(dir).to_owned()), query),
        _ => anyhow::bail!("expected `[DIR] QUERY`"),
    };
    if query.trim().is_empty() {
        anyhow::bail!(
            "the query is empty; say what the tool should do: toolsmith search tools \"sum two numbers\""
        );
    }
    Ok((dir, query))
}

fn print_table(printer: Printer, rows: &[[String; 3]]) -> std::io::Result<()> {
    const HEADERS: [&str; 3] = ["NAME", "SCORE", "TITLE"];
    let mut widths = HEADERS.map(str::len);
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 3]| {
        let mut out = String::new();
        for (cell, width) in cells.iter().zip(widths) {
            let _ = write!(out, "{cell:<width$}  ");
        }
        out.trim_end().to_owned()
    };
    printer.data(&printer.style(Style::Bold, &line(HEADERS)))?;
    for row in rows {
        printer.data(&line([&row[0], &row[1], &row[2]]))?;
    }
    Ok(())
}
