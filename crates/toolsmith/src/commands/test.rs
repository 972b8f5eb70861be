//! `toolsmith test`: run a folder's test cases (collected, checked and reported by
//! `toolsmith-testing`) and print the results for people, `--json` or `JUnit`.

use std::time::Instant;

use anyhow::Context as _;
use toolsmith_model::{Diagnostic, Severity};
use toolsmith_testing::{CaseResult, Report, Status};

use crate::ExitStatus;
use crate::args::TestArgs;
use crate::folder;
use crate::printer::{Printer, Style};

pub(crate) fn run(args: &TestArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let TestArgs {
        folder: folder_arg,
        profile,
        filter,
        json,
        junit,
    } = args;
    let loaded = folder::load_profile(folder_arg.dir.as_deref(), None, profile.profile.as_deref())?;
    let collection = toolsmith_testing::collect(&loaded);
    let diagnostics: Vec<Diagnostic> = loaded
        .catalog()
        .diagnostics()
        .iter()
        .chain(&collection.diagnostics)
        .cloned()
        .collect();
    let found = collection.cases.len();
    let cases = toolsmith_testing::filter(collection.cases, filter);

    let started = Instant::now();
    let progress = printer.progress("testing", cases.len());
    let step = |result: &CaseResult| progress.step(&result.case.id());
    let results = toolsmith_testing::run_cases(
        &loaded.caller(),
        cases,
        toolsmith_testing::default_workers(),
        &step,
    );
    progress.finish();
    let report = Report {
        folder: loaded.root().to_owned(),
        results,
        load_errors: diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .cloned()
            .collect(),
        duration: started.elapsed(),
    };

    if let Some(path) = junit {
        std::fs::write(path, report.to_junit())
            .with_context(|| format!("cannot write the JUnit report to `{}`", path.display()))?;
    }
    if *json {
        printer.data(&serde_json::to_string_pretty(&report.to_json())?)?;
    } else {
        folder::report(printer, &diagnostics);
        print_human(printer, &report)?;
        if report.results.is_empty() {
            explain_no_cases(printer, &report, found, filter);
        }
        if !report.load_errors.is_empty() {
            let count = report.load_errors.len();
            printer.error(&format!(
                "{count} load error{} (see above): the run fails until {} fixed",
                if count == 1 { "" } else { "s" },
                if count == 1 { "it is" } else { "they are" }
            ));
        }
    }
    Ok(if report.passed() {
        ExitStatus::Success
    } else {
        ExitStatus::Findings
    })
}

/// One line per case, the failures in full, then the totals line.
fn print_human(printer: Printer, report: &Report) -> std::io::Result<()> {
    for result in &report.results {
        let (label, style) = match &result.status {
            Status::Passed => ("PASS", Style::Green),
            Status::Failed(_) => ("FAIL", Style::Red),
            Status::Skipped(_) => ("SKIP", Style::Yellow),
        };
        let detail = match &result.status {
            Status::Skipped(reason) if !reason.is_empty() => format!(" ({reason})"),
            Status::Skipped(_) => String::new(),
            Status::Passed | Status::Failed(_) => {
                format!(" ({})", toolsmith_model::duration::format(result.duration))
            }
        };
        printer.data(&format!(
            "{} {}{}",
            printer.style(style, label),
            result.case.id(),
            printer.style(Style::Dim, &detail)
        ))?;
    }
    for result in &report.results {
        let Status::Failed(failures) = &result.status else {
            continue;
        };
        printer.data("")?;
        let heading = format!(
            "{} {}",
            printer.style(Style::Red, "FAIL"),
            printer.style(Style::Bold, &result.case.id())
        );
        printer.data(&format!("{heading} at {}", result.case.source))?;
        for failure in failures {
            printer.data(&format!("  {failure}"))?;
            if let Some(detail) = failure.detail() {
                for line in detail.lines() {
                    printer.data(&format!("    {}", paint_diff_line(printer, line)))?;
                }
            }
        }
    }
    if !report.results.is_empty() {
        printer.data("")?;
    }
    let totals = report.totals().to_string();
    let style = if report.passed() {
        Style::Green
    } else {
        Style::Red
    };
    printer.data(&printer.style(style, &totals))
}

/// Colours the `-`/`+` lines of a diff (on a terminal only).
fn paint_diff_line(printer: Printer, line: &str) -> String {
    if line.starts_with("---") || line.starts_with("+++") {
        printer.style(Style::Bold, line)
    } else if line.starts_with('-') {
        printer.style(Style::Red, line)
    } else if line.starts_with('+') {
        printer.style(Style::Green, line)
    } else if line.starts_with("@@") {
        printer.style(Style::Cyan, line)
    } else {
        line.to_owned()
    }
}

/// Says why nothing ran: a filter that matches nothing, or a folder without cases.
fn explain_no_cases(printer: Printer, report: &Report, found: usize, filter: &[String]) {
    let folder = report.folder.display();
    if found > 0 && !filter.is_empty() {
        let patterns = filter
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ");
        printer.message(&format!(
            "{}: none of the {found} cases in {folder} matches --filter {patterns}",
            warning(printer)
        ));
        printer.hint(&format!(
            "`--filter` matches part of `TOOL: NAME`; `toolsmith test {folder}` lists every case"
        ));
    } else {
        printer.message(&format!("{}: {folder} has no test cases", warning(printer)));
        printer.hint("add `examples=[{\"args\": {...}, \"expect\": {...}}]` to `mcp.tool(...)`, `[[tests]]` to a manifest, or a `tests/*.toml` file");
        printer.hint(
            "the format is in docs/testing.md; `toolsmith new tool NAME` writes a tool with a test",
        );
    }
}

fn warning(printer: Printer) -> String {
    printer.style_err(Style::Yellow, "warning")
}
