//! `toolsmith test`: run a folder's test cases (collected, checked and reported by
//! `toolsmith-testing`) and print the results for people, `--json` or `JUnit`.

use std::time::Instant;

use anyhow::Context as _;
use toolsmith_folder::ToolFolder;
use toolsmith_model::{Diagnostic, Severity};
use toolsmith_testing::{CaseResult, Report, Status, TestCase};

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
    let (cases, diagnostics) = collect(&loaded);
    let found = cases.len();
    let cases = toolsmith_testing::filter(cases, filter);

    let progress = printer.progress("testing", cases.len());
    let step = |result: &CaseResult| progress.step(&result.case.id());
    let report = run_cases(&loaded, cases, &diagnostics, &step);
    progress.finish();

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

/// Every test case of `loaded`, and the diagnostics of its tool files and test files.
pub(crate) fn collect(loaded: &ToolFolder) -> (Vec<TestCase>, Vec<Diagnostic>) {
    let collection = toolsmith_testing::collect(loaded);
    let diagnostics = loaded
        .catalog()
        .diagnostics()
        .iter()
        .chain(&collection.diagnostics)
        .cloned()
        .collect();
    (collection.cases, diagnostics)
}

/// Runs `cases` of `loaded` in parallel through its caller, calling `step` after each;
/// the error-severity `diagnostics` fail the run by themselves.
pub(crate) fn run_cases(
    loaded: &ToolFolder,
    cases: Vec<TestCase>,
    diagnostics: &[Diagnostic],
    step: &(dyn Fn(&CaseResult) + Sync),
) -> Report {
    let started = Instant::now();
    let results = toolsmith_testing::run_cases(
        &loaded.caller(),
        cases,
        toolsmith_testing::default_workers(),
        step,
    );
    Report {
        folder: loaded.root().to_owned(),
        results,
        load_errors: diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .cloned()
            .collect(),
        duration: started.elapsed(),
    }
}

/// One line per case, the failures in full, then the totals line.
fn print_human(printer: Printer, report: &Report) -> std::io::Result<()> {
    for line in human(report, &|style, text| printer.style(style, text)) {
        printer.data(&line)?;
    }
    Ok(())
}

/// The lines of [`print_human`], each styled with `paint` (which may leave it plain).
pub(crate) fn human(report: &Report, paint: &dyn Fn(Style, &str) -> String) -> Vec<String> {
    let mut lines = Vec::new();
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
        lines.push(format!(
            "{} {}{}",
            paint(style, label),
            result.case.id(),
            paint(Style::Dim, &detail)
        ));
    }
    for result in &report.results {
        let Status::Failed(failures) = &result.status else {
            continue;
        };
        lines.push(String::new());
        let heading = format!(
            "{} {}",
            paint(Style::Red, "FAIL"),
            paint(Style::Bold, &result.case.id())
        );
        lines.push(format!("{heading} at {}", result.case.source));
        for failure in failures {
            lines.push(format!("  {failure}"));
            if let Some(detail) = failure.detail() {
                for line in detail.lines() {
                    lines.push(format!("    {}", paint_diff_line(paint, line)));
                }
            }
        }
    }
    if !report.results.is_empty() {
        lines.push(String::new());
    }
    let totals = report.totals().to_string();
    let style = if report.passed() {
        Style::Green
    } else {
        Style::Red
    };
    lines.push(paint(style, &totals));
    lines
}

/// Colours the `-`/`+` lines of a diff (on a terminal only).
fn paint_diff_line(paint: &dyn Fn(Style, &str) -> String, line: &str) -> String {
    if line.starts_with("---") || line.starts_with("+++") {
        paint(Style::Bold, line)
    } else if line.starts_with('-') {
        paint(Style::Red, line)
    } else if line.starts_with('+') {
        paint(Style::Green, line)
    } else if line.starts_with("@@") {
        paint(Style::Cyan, line)
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
