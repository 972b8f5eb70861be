//! `toolsmith list`: the tools of a folder, as `tools/list` will publish them.

use std::fmt::Write as _;

use toolsmith_model::{Severity, ToolDefinition};

use crate::ExitStatus;
use crate::args::ListArgs;
use crate::folder;
use crate::printer::{Printer, Style};

pub(crate) fn run(args: &ListArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let ListArgs {
        folder: folder_arg,
        json,
    } = args;
    let loaded = folder::load(folder_arg.dir.as_deref())?;
    let catalog = loaded.catalog();
    if *json {
        printer.data(&serde_json::to_string_pretty(&catalog.to_json())?)?;
    } else {
        let rows: Vec<[String; 4]> = catalog
            .definitions()
            .map(|tool| row(tool, loaded.root()))
            .collect();
        print_table(printer, &rows)?;
        folder::report(printer, catalog.diagnostics());
        let count = rows.len();
        printer.message(&format!(
            "{count} tool{} from {}",
            if count == 1 { "" } else { "s" },
            loaded.root().display()
        ));
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

fn row(tool: &ToolDefinition, root: &std::path::Path) -> [String; 4] {
    let properties = tool
        .input_schema
        .get("properties")
        .and_then(|p| p.as_object());
    let required: Vec<&str> = tool
        .input_schema
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
    [
        tool.name.clone(),
        tool.title.clone().unwrap_or_default(),
        parameters,
        location,
    ]
}

fn print_table(printer: Printer, rows: &[[String; 4]]) -> std::io::Result<()> {
    const HEADERS: [&str; 4] = ["NAME", "TITLE", "PARAMETERS", "SOURCE"];
    let mut widths = HEADERS.map(str::len);
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 4]| {
        let mut out = String::new();
        for (index, (cell, width)) in cells.iter().zip(widths).enumerate() {
            if index == 3 {
                out.push_str(cell);
            } else {
                let _ = write!(out, "{cell:<width$}  ");
            }
        }
        out.trim_end().to_owned()
    };
    printer.data(&printer.style(Style::Bold, &line(HEADERS)))?;
    for row in rows {
        printer.data(&line([&row[0], &row[1], &row[2], &row[3]]))?;
    }
    Ok(())
}
