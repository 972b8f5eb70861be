//! `toolsmith check`: lint a folder's tools with the rules of `toolsmith-check`, print the
//! findings (and the folder's load errors) in one of four formats, optionally apply fixes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use toolsmith_check::render;
use toolsmith_check::{
    CheckContext, Edit, Finding, Settings, apply_edits, check, counts, load_findings, registry,
};
use toolsmith_folder::ToolFolder;

use crate::ExitStatus;
use crate::args::{CheckArgs, CheckFormat};
use crate::error::Hinted;
use crate::folder;
use crate::printer::Printer;

mod upstream;

pub(crate) fn run(args: &CheckArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let CheckArgs {
        folder: folder_arg,
        profile,
        format,
        explain,
        strict,
        fix,
        select,
        ignore,
        server,
    } = args;
    if let Some(id) = explain {
        let rule = registry::rule(resolve(id)?).expect("resolved ids name rules");
        printer.data(&rule.explain())?;
        return Ok(ExitStatus::Success);
    }
    let select: Vec<&'static str> = select
        .iter()
        .map(|id| resolve(id))
        .collect::<Result<_, _>>()?;
    let ignore: Vec<&'static str> = ignore
        .iter()
        .map(|id| resolve(id))
        .collect::<Result<_, _>>()?;

    if server.upstream || server.url.is_some() {
        return upstream::run(server, select, ignore, *format, *strict, printer);
    }
    let loaded = folder::load_profile(folder_arg.dir.as_deref(), None, profile.profile.as_deref())?;
    let catalog = loaded.catalog();
    let (mut findings, context) = lint(&loaded, select, ignore);
    let fixed = if *fix {
        apply_fixes(&mut findings, &context)?
    } else {
        0
    };
    toolsmith_check::sort(&mut findings);

    report(
        &findings,
        &context,
        catalog.entries().len(),
        fixed,
        *format,
        printer,
    )?;
    Ok(exit_status(&findings, *strict))
}

/// Prints `findings` in `format`; the summary line counts `tools`.
pub(crate) fn report(
    findings: &[Finding],
    context: &CheckContext,
    tools: usize,
    fixed: usize,
    format: CheckFormat,
    printer: Printer,
) -> anyhow::Result<()> {
    match format {
        CheckFormat::Human => {
            let colour = printer.colours_stdout();
            let text = render::human(findings, &context.sources, colour);
            if !text.is_empty() {
                printer.data(text.trim_end())?;
            }
            printer.message(&summary(findings, tools, fixed));
        }
        CheckFormat::Json => printer.data(&render::json(findings))?,
        CheckFormat::Github => {
            let text = render::github(findings);
            if !text.is_empty() {
                printer.data(text.trim_end())?;
            }
        }
        CheckFormat::Sarif => printer.data(&render::sarif(findings, env!("CARGO_PKG_VERSION")))?,
    }
    Ok(())
}

/// 1 when an error was found (or a warning, with `--strict`), else 0.
pub(crate) fn exit_status(findings: &[Finding], strict: bool) -> ExitStatus {
    let (errors, warnings, _) = counts(findings);
    if errors > 0 || (strict && warnings > 0) {
        ExitStatus::Findings
    } else {
        ExitStatus::Success
    }
}

/// What `toolsmith check` finds in `loaded`, unsorted: the rules' findings, the load
/// errors and the problems of `toolsmith.toml`'s `[check]`, with the context the rules saw
/// (its `sources` hold every file a finding points into, for the renderers). `select`
/// replaces `[check] select` unless it is empty; `ignore` adds to `[check] ignore`.
pub(crate) fn lint(
    loaded: &ToolFolder,
    select: Vec<&'static str>,
    ignore: Vec<&'static str>,
) -> (Vec<Finding>, CheckContext) {
    let (mut settings, config_problems) =
        Settings::from_config_at(&loaded.config().raw, &|key| loaded.config().locate(key));
    if !select.is_empty() {
        settings.set_select(select);
    }
    settings.add_ignore(ignore);

    let mut context = gather(loaded);
    let catalog = loaded.catalog();
    let mut findings = check(catalog.definitions(), &context, &settings);
    findings.extend(load_findings(catalog.diagnostics(), &settings));
    findings.extend(config_problems.into_iter().map(Finding::from_load));
    for finding in &findings {
        let path = &finding.diagnostic.location.path;
        if !context.sources.contains_key(path)
            && let Ok(text) = std::fs::read_to_string(path)
        {
            context.sources.insert(path.clone(), text);
        }
    }
    (findings, context)
}

/// A rule id, or an error that suggests close ones.
pub(crate) fn resolve(id: &str) -> anyhow::Result<&'static str> {
    toolsmith_check::resolve(id).map_err(|unknown| Hinted::wrap(unknown).into())
}

/// What the rules may look at: the folder's files, the tools' sources, the resources it
/// serves, the tools `toolsmith test` has cases for, which required environment variables
/// are set and which required programs are found.
fn gather(loaded: &ToolFolder) -> CheckContext {
    let root = loaded.root();
    let mut context = CheckContext::gather(
        root,
        loaded.files(),
        loaded.catalog().definitions(),
        loaded.config().search,
        &mut |path| std::fs::read_to_string(path).ok(),
        &|name| std::env::var_os(name).is_some(),
        &|program| toolsmith_folder::program_found(root, program),
    );
    context.tested_tools = toolsmith_testing::collect(loaded)
        .cases
        .into_iter()
        .map(|case| case.tool)
        .collect();
    context.resource_uris = Some(
        loaded
            .resources()
            .list()
            .iter()
            .map(|resource| resource.uri.clone())
            .collect(),
    );
    context.token_passthrough = toolsmith_folder::token_passthrough(root, loaded.config());
    context
}

/// Writes every finding's fix into its file and drops the fixed findings; returns how many
/// were fixed.
fn apply_fixes(findings: &mut Vec<Finding>, context: &CheckContext) -> anyhow::Result<usize> {
    let mut by_file: BTreeMap<PathBuf, Vec<&Edit>> = BTreeMap::new();
    for fix in findings.iter().filter_map(|finding| finding.fix.as_ref()) {
        for edit in &fix.edits {
            by_file.entry(edit.path.clone()).or_default().push(edit);
        }
    }
    let mut written = BTreeSet::new();
    for (path, edits) in &by_file {
        let Some(source) = context.sources.get(path) else {
            continue;
        };
        let (text, applied) = apply_edits(source, edits);
        if applied == edits.len() {
            std::fs::write(path, text)
                .with_context(|| format!("cannot write the fixes to `{}`", path.display()))?;
            written.insert(path.clone());
        }
    }
    let before = findings.len();
    findings.retain(|finding| {
        finding
            .fix
            .as_ref()
            .is_none_or(|fix| !fix.edits.iter().all(|edit| written.contains(&edit.path)))
    });
    Ok(before - findings.len())
}

/// `2 errors, 1 warning, 3 infos in 8 tools` (and what `--fix` did).
pub(crate) fn summary(findings: &[Finding], tools: usize, fixed: usize) -> String {
    let plural =
        |count: usize, word: &str| format!("{count} {word}{}", if count == 1 { "" } else { "s" });
    let (errors, warnings, infos) = counts(findings);
    let mut line = if findings.is_empty() {
        format!("no problems in {}", plural(tools, "tool"))
    } else {
        format!(
            "{}, {}, {} in {}",
            plural(errors, "error"),
            plural(warnings, "warning"),
            plural(infos, "info"),
            plural(tools, "tool")
        )
    };
    if fixed > 0 {
        let _ = write!(line, "; fixed {}", plural(fixed, "finding"));
    } else if findings.iter().any(|finding| finding.fix.is_some()) {
        let fixable = findings
            .iter()
            .filter(|finding| finding.fix.is_some())
            .count();
        let _ = write!(
            line,
            "; {} fixable with `--fix`",
            plural(fixable, "finding")
        );
    }
    line
}
