//! `toolsmith search`: the tools of a folder ranked for a query, exactly as the server's
//! `tool_search` ranks them (docs/search.md).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toolsmith_search::SearchIndex;

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
    } = args;
    let (dir, query) = split_words(words)?;
    let loaded = folder::load_served(dir.as_deref(), None, profile.profile.as_deref())?;
    let catalog = loaded.catalog();
    let index = SearchIndex::new(catalog.definitions());
    let hits = index.search(query, *limit);
    if *json {
        let results = toolsmith_search::results(catalog, &hits);
        printer.data(&serde_json::to_string_pretty(&results)?)?;
        return Ok(ExitStatus::Success);
    }
    folder::report(printer, catalog.diagnostics());
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
            let title = catalog
                .get(&hit.name)
                .and_then(|entry| entry.definition().title.clone())
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
