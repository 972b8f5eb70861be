//! Parsing: the Scriptling source rewrites (`is`/`is not`, the `scriptling.mcp.tool` import
//! line), the dialect, and our own checks (bracket nesting, `load`), with a hint for each
//! Python construct Starlark lacks.

use std::path::Path;

use starlark::syntax::AstModule;

use super::{Form, MAX_NESTING, Program, SourceError, builtins, dialect, facts, rewrite, syntax};

/// Parses a file: the Scriptling rewrites, the dialect, then our own checks.
pub(crate) fn parse(path: &Path, source: &str, form: Form) -> Result<Program, SourceError> {
    check_nesting(source)?;
    let name = path.display().to_string();
    let mut text = match form {
        Form::Script => blank_scriptling_imports(source),
        Form::Native => source.to_owned(),
    };
    // `is` is a reserved word in Starlark. Each time the lexer rejects one, rewrite it in
    // place with an operator of the same width (`is not` → `!=    `, `is` → `==`) so that
    // strings and comments are never touched and columns stay exact.
    let mut ast = None;
    for _ in 0..10_000 {
        match AstModule::parse(&name, text.clone(), &dialect()) {
            Ok(parsed) => {
                ast = Some(parsed);
                break;
            }
            Err(error) => {
                if !rewrite_is(&mut text, &error) {
                    return Err(source_error(&error));
                }
            }
        }
    }
    let Some(mut ast) = ast else {
        return Err(SourceError {
            rule: "syntax-error",
            message: "too many `is` comparisons to rewrite".into(),
            line: 1,
            column: 1,
            span: None,
            help: None,
        });
    };
    if let Some(load) = ast.loads().first() {
        let at = load.span.resolve_span().begin;
        return Err(SourceError {
            rule: "load-not-supported",
            message: format!("`load(\"{}\", ...)` is not supported", load.module_id),
            line: u32::try_from(at.line + 1).unwrap_or(u32::MAX),
            column: u32::try_from(at.column + 1).unwrap_or(u32::MAX),
            span: Some(load.span.span.begin().get() as usize..load.span.span.end().get() as usize),
            help: Some(
                "every tool file is loaded on its own; copy the helper you need into this file"
                    .into(),
            ),
        });
    }
    let functions = syntax::top_level_functions(&ast);
    let facts = facts::file_facts(&ast);
    if let Some(guarded) = rewrite::guard_methods(&ast, &text) {
        ast = AstModule::parse(&name, guarded, &dialect()).map_err(|error| source_error(&error))?;
    }
    builtins::guard_operators(&mut ast);
    Ok(Program {
        ast,
        form,
        file: name,
        functions,
        facts,
    })
}

/// Replaces `import scriptling.mcp.tool as tool` (and the `from` form) by blanks, keeping
/// line and column numbers.
fn blank_scriptling_imports(source: &str) -> String {
    source
        .split_inclusive('\n')
        .map(|line| {
            let code = line.trim();
            let code = code.split('#').next().unwrap_or_default().trim();
            let accepted = matches!(
                code.split_whitespace().collect::<Vec<_>>().as_slice(),
                ["import", "scriptling.mcp.tool"]
                    | ["import", "scriptling.mcp.tool", "as", "tool"]
                    | ["from", "scriptling.mcp", "import", "tool"]
            );
            if accepted {
                line.chars()
                    .map(|c| if c == '\n' || c == '\r' { c } else { ' ' })
                    .collect()
            } else {
                line.to_owned()
            }
        })
        .collect()
}

/// Rewrites the `is` the lexer just rejected; false when the error is about something else.
fn rewrite_is(text: &mut String, error: &starlark::Error) -> bool {
    if !error
        .without_diagnostic()
        .to_string()
        .contains("reserved keyword `is`")
    {
        return false;
    }
    let Some(span) = error.span() else {
        return false;
    };
    let begin = span.span.begin().get() as usize;
    let rest = text.get(begin..).unwrap_or_default();
    if !rest.starts_with("is") {
        return false;
    }
    let after = &rest[2..];
    let gap = after.len() - after.trim_start_matches([' ', '\t']).len();
    let negated = gap > 0
        && after[gap..].starts_with("not")
        && !after[gap + 3..].starts_with(|c: char| c.is_alphanumeric() || c == '_');
    if negated {
        let width = 2 + gap + 3;
        text.replace_range(
            begin..begin + width,
            &format!("!={}", " ".repeat(width - 2)),
        );
    } else {
        text.replace_range(begin..begin + 2, "==");
    }
    true
}

fn check_nesting(source: &str) -> Result<(), SourceError> {
    let mut depth = 0usize;
    for (offset, ch) in source.char_indices() {
        match ch {
            '(' | '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    let (line, column) = toolsmith_model::line_column(source, offset);
                    return Err(SourceError {
                        rule: "syntax-error",
                        message: format!("brackets nested more than {MAX_NESTING} deep"),
                        line,
                        column,
                        span: Some(offset..offset + 1),
                        help: Some("split the expression into named parts".into()),
                    });
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// A parse error as a [`SourceError`], with a hint for Python constructs Starlark lacks.
fn source_error(error: &starlark::Error) -> SourceError {
    let message = first_line(&error.without_diagnostic().to_string());
    let (line, column, span) = match error.span() {
        Some(file_span) => {
            let at = file_span.resolve_span().begin;
            (
                u32::try_from(at.line + 1).unwrap_or(u32::MAX),
                u32::try_from(at.column + 1).unwrap_or(u32::MAX),
                Some(file_span.span.begin().get() as usize..file_span.span.end().get() as usize),
            )
        }
        None => (1, 1, None),
    };
    let keyword = message
        .split_once("reserved keyword `")
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(word, _)| word.to_owned());
    let (message, help) = match keyword.as_deref() {
        Some(word) => (
            format!("`{word}` is not Starlark"),
            Some(keyword_help(word).to_owned()),
        ),
        None if message == "repeated named argument" => {
            let name = error
                .span()
                .map(|span| {
                    span.source_span()
                        .split('=')
                        .next()
                        .unwrap_or_default()
                        .trim()
                        .to_owned()
                })
                .unwrap_or_default();
            (
                format!("keyword argument `{name}` is given twice"),
                Some("keep one of the two".to_owned()),
            )
        }
        None => (
            message,
            Some(
                "tool files are Starlark, a small Python dialect: no classes, exceptions, \
                 `while` or imports (https://github.com/bazelbuild/starlark/blob/master/spec.md)"
                    .to_owned(),
            ),
        ),
    };
    SourceError {
        rule: "syntax-error",
        message,
        line,
        column,
        span,
        help,
    }
}

fn keyword_help(word: &str) -> &'static str {
    match word {
        "while" => {
            "Starlark has no `while` loop; use `for i in range(n):` with a bound and `break`"
        }
        "class" => "Starlark has no classes; use a dict, `struct(...)` or `record(...)`",
        "try" | "except" | "finally" | "raise" => {
            "Starlark has no exceptions; check values first and return `mcp.error(...)` (or \
             `tool.return_error(...)`), or stop with `fail(\"message\")`"
        }
        "import" | "from" => {
            "Starlark has no imports; only `import scriptling.mcp.tool as tool` is accepted \
             (in manifest scripts), and `json` is built in"
        }
        "with" => "Starlark has no `with` blocks; there are no files or resources to close",
        "del" => "Starlark has no `del`; use `dict.pop(key)` or assign a new value",
        "global" | "nonlocal" => {
            "Starlark has no `global`/`nonlocal`; return the new value from the function instead"
        }
        "yield" | "async" | "await" => {
            "Starlark has no generators or coroutines; build and return a list"
        }
        _ => "this Python keyword is reserved in Starlark and cannot be used",
    }
}

pub(super) fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_error(source: &str) -> SourceError {
        parse(Path::new("t.star"), source, Form::Script)
            .err()
            .expect("a source error")
    }

    #[test]
    fn scriptling_import_lines_become_blanks_of_the_same_width() {
        let source = "import scriptling.mcp.tool as tool  # the tool API\nx = 1\n";
        let blanked = blank_scriptling_imports(source);
        assert_eq!(blanked.len(), source.len());
        assert!(blanked.starts_with("     "));
        assert!(blanked.ends_with("\nx = 1\n"));
        assert_eq!(blank_scriptling_imports("import os\n"), "import os\n");
    }

    #[test]
    fn deep_nesting_is_refused_before_parsing() {
        let source = format!("x = {}{}\n", "[".repeat(300), "]".repeat(300));
        let error = parse_error(&source);
        assert_eq!(error.rule, "syntax-error");
        assert!(error.message.contains("nested more than"), "{error:?}");
        assert_eq!((error.line, error.column), (1, 205));
    }

    #[test]
    fn python_power_operator_is_a_syntax_error() {
        let error = parse_error("x = 10 ** 3\n");
        assert_eq!(error.rule, "syntax-error");
        assert_eq!(error.line, 1);
    }

    #[test]
    fn is_rewrites_keep_columns() {
        let program = parse(
            Path::new("t.star"),
            "def f(a, b):\n    return a is not None and b is None\n",
            Form::Native,
        )
        .expect("parses after the rewrite");
        assert_eq!(program.functions()[0].name, "f");
    }
}
