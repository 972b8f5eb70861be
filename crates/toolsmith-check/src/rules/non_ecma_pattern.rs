use serde_json::Value;

use crate::checker::{Edit, Fix, Form, Report, Server, ToolView};
use crate::ecma;
use crate::literal::{self, Dialect, Literal};
use crate::rule::declare_rule;
use crate::schema;

declare_rule! {
    /// ## What it does
    /// Checks that every `pattern` (and `patternProperties` key) in a tool's input schema is
    /// a valid ECMA-262 regular expression, as JSON Schema requires, and names the PCRE, ICU
    /// or Python constructs that are not: possessive quantifiers (`a++`), atomic groups
    /// (`(?>…)`), `\A`, `\Z`, `\z`, inline flags (`(?i)`), POSIX classes (`[[:alpha:]]`),
    /// `(?P<name>…)`, `\x{…}`, `\Q…\E`, needless escapes such as `\-`, and more.
    ///
    /// When every construct has an exact ECMA-262 equivalent, the finding offers the
    /// translated pattern and `toolsmith check --fix` writes it into the source (the
    /// `params=` dict or the manifest). Otherwise it only reports.
    ///
    /// ## Why is this bad?
    /// Clients validate arguments with JavaScript engines (Ajv compiles patterns with the
    /// `u` flag). A pattern that does not compile there makes the client reject the tool,
    /// or every call to it; one that compiles with a different meaning (`\A` is a plain `A`
    /// without the `u` flag) silently accepts or refuses the wrong values. Toolsmith's own
    /// validator is more lenient, so the tool works in `toolsmith call` and fails in the
    /// client.
    ///
    /// ## Example
    /// ```python
    /// mcp.tool(user_get, params = {"login": {"pattern": "\\A[[:alnum:]_]++\\z"}})
    /// ```
    ///
    /// ## How to fix
    /// Write the ECMA-262 form (this is what `--fix` writes for the example):
    /// ```python
    /// mcp.tool(user_get, params = {"login": {"pattern": "^(?=([A-Za-z0-9_]+))\\1$"}})
    /// ```
    /// which, since nothing follows the quantifier, you may simplify to `^[A-Za-z0-9_]+$`.
    pub(crate) static NON_ECMA_PATTERN: NonEcmaPattern = {
        id: "non-ecma-pattern",
        summary: "A schema `pattern` is not a portable ECMA-262 regular expression",
        severity: Error,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for tool in &server.tools {
        let mut patterns: Vec<(String, String, bool)> = Vec::new();
        schema::walk(
            tool.definition.input_schema.object(),
            "",
            &mut |path, subschema| {
                if let Some(Value::String(pattern)) = subschema.get("pattern") {
                    patterns.push((path.to_owned(), pattern.clone(), true));
                }
                for key in subschema
                    .get("patternProperties")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .map(|(key, _)| key)
                {
                    patterns.push((path.to_owned(), key.clone(), false));
                }
            },
        );
        for (path, pattern, fixable) in patterns {
            let analysis = ecma::analyse(&pattern);
            if analysis.problems.is_empty() {
                continue;
            }
            let parameter = schema::parameter_of(&path);
            let at = match parameter {
                Some(parameter) => tool.at_parameter_keyword(
                    parameter,
                    if fixable {
                        "pattern"
                    } else {
                        "patternProperties"
                    },
                ),
                None => tool.at_name(),
            };
            let mut constructs: Vec<&str> =
                analysis.problems.iter().map(|p| p.what.as_str()).collect();
            constructs.dedup();
            let place =
                parameter.map_or_else(|| format!("`{path}`"), |name| format!("parameter `{name}`"));
            let message = format!(
                "pattern `{pattern}` of {place} of `{}` is not ECMA-262: {}",
                tool.name(),
                constructs.join(", ")
            );
            let finding = report.add(at, Some(tool.name()), message);
            if let Some(translation) = &analysis.translation {
                finding.help(format!(
                    "write `{translation}` instead (`toolsmith check --fix` does it)"
                ));
                let dialect = match tool.form {
                    Form::Starlark => Some(Dialect::Starlark),
                    Form::Manifest => Some(Dialect::Toml),
                    Form::Other => None,
                };
                let found =
                    dialect
                        .zip(tool.source)
                        .filter(|_| fixable)
                        .and_then(|(dialect, source)| {
                            pattern_literal(tool, source, dialect, &pattern)
                                .map(|literal| (literal, dialect))
                        });
                if let Some((literal, dialect)) = found {
                    finding.fix(Fix {
                        message: format!("rewrite the pattern as `{translation}`"),
                        edits: vec![Edit {
                            path: tool.definition.source.path.clone(),
                            range: literal.span.clone(),
                            replacement: literal::encode(translation, &literal, dialect),
                        }],
                    });
                }
            } else {
                let reason = analysis
                    .problems
                    .iter()
                    .find_map(|p| p.untranslatable.as_deref())
                    .unwrap_or("the translation would not compile");
                finding.help(format!("rewrite it in ECMA-262 syntax by hand ({reason})"));
            }
        }
    }
}

/// The one `pattern` value written for the tool (in its `params=` dict or manifest) whose
/// value is `pattern`; `None` when there is none or more than one (a fix must not guess).
fn pattern_literal(
    tool: &ToolView<'_>,
    source: &str,
    dialect: Dialect,
    pattern: &str,
) -> Option<Literal> {
    let mut matches = tool
        .definition
        .source_facts()
        .keys
        .iter()
        .filter(|key| key.path.last().is_some_and(|last| last == "pattern"))
        .filter_map(|key| literal::at(source, key.value.clone(), dialect))
        .filter(|literal| literal.value == pattern);
    let first = matches.next()?;
    matches.next().is_none().then_some(first)
}
