//! The syntax facts `toolsmith check` reads (see `toolsmith_model::SourceFacts`), taken
//! from the unedited parse of a file: every call with a (dotted) name and where it is
//! written, the string literals, and the keywords of each `mcp.tool(...)` registration with
//! the keys of the dict literals given to them.

use std::ops::Range;

use starlark::codemap::Span;
use starlark::syntax::AstModule;
use starlark::syntax::ast::{ArgumentP, AstExpr, AstLiteral, AstStmt, ExprP, StmtP};
use toolsmith_model::{Call, Key};

/// What one file says, as far as `toolsmith check` is concerned.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileFacts {
    /// Every call in the file but the registrations (whose arguments are skipped too).
    pub(crate) calls: Vec<Call>,
    /// The string literals outside docstrings and registrations.
    pub(crate) strings: Vec<String>,
    /// The `mcp.tool(...)` calls.
    pub(crate) registrations: Vec<RegistrationSyntax>,
}

/// One `mcp.tool(FUNCTION, keyword = …)` as written.
#[derive(Debug, Clone)]
pub(crate) struct RegistrationSyntax {
    /// 1-based line of the call (a run-time registration reports the same line).
    pub(crate) line: u32,
    /// The first argument, when it is a name.
    pub(crate) function: Option<String>,
    /// The keywords and the string keys of their dict literals.
    pub(crate) keys: Vec<Key>,
}

/// Collects the facts of a module.
pub(crate) fn file_facts(ast: &AstModule) -> FileFacts {
    let mut facts = FileFacts::default();
    let mut skipped = Vec::new();
    docstrings(ast.statement(), &mut skipped);
    walk(ast.statement(), &mut |expr| {
        if let ExprP::Call(callee, args) = &expr.node
            && dotted(callee).as_deref() == Some("mcp.tool")
        {
            let at = ast.file_span(expr.span).resolve_span().begin;
            let function = args.args.first().and_then(|arg| match &arg.node {
                ArgumentP::Positional(expr) => match &expr.node {
                    ExprP::Identifier(name) => Some(name.node.ident.clone()),
                    _ => None,
                },
                _ => None,
            });
            let mut keys = Vec::new();
            for arg in &args.args {
                if let ArgumentP::Named(name, value) = &arg.node {
                    let path = vec![name.node.clone()];
                    keys.push(Key {
                        path: path.clone(),
                        span: range(name.span),
                        value: range(value.span),
                    });
                    dict_keys(value, &path, &mut keys);
                }
            }
            facts.registrations.push(RegistrationSyntax {
                line: u32::try_from(at.line + 1).unwrap_or(u32::MAX),
                function,
                keys,
            });
            return false;
        }
        if !skipped.contains(&range(expr.span)) {
            record(expr, &mut facts.calls, &mut facts.strings);
        }
        true
    });
    facts
}

/// The calls in a statement (a `def` body), registrations included.
pub(crate) fn calls_in(body: &AstStmt) -> Vec<Call> {
    let mut calls = Vec::new();
    let mut strings = Vec::new();
    walk(body, &mut |expr| {
        record(expr, &mut calls, &mut strings);
        true
    });
    calls
}

/// Records `expr` if it is a named call or a string.
fn record(expr: &AstExpr, calls: &mut Vec<Call>, strings: &mut Vec<String>) {
    match &expr.node {
        ExprP::Call(callee, args) => {
            if let Some(name) = dotted(callee) {
                let first_literal = args.args.iter().find_map(|arg| match &arg.node {
                    ArgumentP::Positional(expr) => Some(match &expr.node {
                        ExprP::Literal(AstLiteral::String(text)) => Some(text.node.clone()),
                        _ => None,
                    }),
                    _ => None,
                });
                calls.push(Call {
                    name,
                    span: range(callee.span),
                    first_literal: first_literal.flatten(),
                });
            }
        }
        ExprP::Literal(AstLiteral::String(text)) => strings.push(text.node.clone()),
        ExprP::FString(fstring) => strings.push(fstring.node.format.node.clone()),
        _ => {}
    }
}

/// Visits every expression of `statement` in source order, outer first; `f` returns
/// whether to look inside.
fn walk<'a>(statement: &'a AstStmt, f: &mut dyn FnMut(&'a AstExpr) -> bool) {
    statement.visit_expr(|expr| walk_expr(expr, f));
}

fn walk_expr<'a>(expr: &'a AstExpr, f: &mut dyn FnMut(&'a AstExpr) -> bool) {
    if f(expr) {
        expr.visit_expr(|child| walk_expr(child, f));
    }
}

/// The docstrings under `statement`: a string on its own opening a body (or the module).
fn docstrings(statement: &AstStmt, out: &mut Vec<Range<usize>>) {
    let first = match &statement.node {
        StmtP::Statements(statements) => statements.first(),
        _ => Some(statement),
    };
    if let Some(StmtP::Expression(expr)) = first.map(|first| &first.node)
        && matches!(expr.node, ExprP::Literal(AstLiteral::String(_)))
    {
        out.push(range(expr.span));
    }
    statement.visit_stmt(|child| docstrings(child, out));
}

/// `http.get` for `http.get`, `f` for `f`; `None` for any other callee.
fn dotted(expr: &AstExpr) -> Option<String> {
    match &expr.node {
        ExprP::Identifier(name) => Some(name.node.ident.clone()),
        ExprP::Dot(receiver, attribute) => {
            Some(format!("{}.{}", dotted(receiver)?, attribute.node))
        }
        _ => None,
    }
}

/// The string keys of a dict literal `value` (at `path`), recursively, in source order.
fn dict_keys(value: &AstExpr, path: &[String], keys: &mut Vec<Key>) {
    let ExprP::Dict(entries) = &value.node else {
        return;
    };
    for (key, value) in entries {
        let ExprP::Literal(AstLiteral::String(text)) = &key.node else {
            continue;
        };
        let mut inner = path.to_vec();
        inner.push(text.node.clone());
        keys.push(Key {
            path: inner.clone(),
            span: range(key.span),
            value: range(value.span),
        });
        dict_keys(value, &inner, keys);
    }
}

/// A span as a byte range.
pub(crate) fn range(span: Span) -> Range<usize> {
    span.begin().get() as usize..span.end().get() as usize
}

#[cfg(test)]
mod tests {
    use starlark::syntax::AstModule;

    use super::*;

    #[test]
    fn calls_strings_and_registration_keys_are_recorded_but_not_docstrings() {
        let source = "\"\"\"Calls http.get(x).\"\"\"\n\
                      def f(url):\n    \"\"\"Calls http.post(url).\"\"\"\n    \
                      return http.get(\"https://a.example/\" + url)\n\n\
                      mcp.tool(f, name = \"g\", params = {\"url\": {\"pattern\": \"^a\"}})\n";
        let ast = AstModule::parse("t.star", source.to_owned(), &super::super::dialect()).unwrap();
        let facts = file_facts(&ast);
        let calls: Vec<&str> = facts.calls.iter().map(|call| call.name.as_str()).collect();
        assert_eq!(calls, ["http.get"]);
        assert_eq!(&source[facts.calls[0].span.clone()], "http.get");
        assert_eq!(facts.strings, ["https://a.example/"]);
        let registration = &facts.registrations[0];
        assert_eq!(
            (registration.line, registration.function.as_deref()),
            (6, Some("f"))
        );
        let keys: Vec<(String, &str)> = registration
            .keys
            .iter()
            .map(|key| (key.path.join("."), &source[key.value.clone()]))
            .collect();
        assert_eq!(
            keys,
            [
                ("name".to_owned(), "\"g\""),
                ("params".to_owned(), "{\"url\": {\"pattern\": \"^a\"}}"),
                ("params.url".to_owned(), "{\"pattern\": \"^a\"}"),
                ("params.url.pattern".to_owned(), "\"^a\""),
            ]
        );
    }
}
