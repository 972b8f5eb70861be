//! What the syntax tree says about a file's functions, as plain data: parameter names and
//! the source text of their annotations, the return annotation, the docstring and where
//! each is. Runtime introspection cannot give this: annotations are parsed but not
//! evaluated in our dialect, so only the source knows that `days` was declared `int | None`.

use std::ops::Range;

use starlark::codemap::Span;
use starlark::syntax::AstModule;
use starlark::syntax::ast::{AstLiteral, AstStmt, DefP, ExprP, ParameterP, StmtP};

use super::facts::{calls_in, range};

/// A top-level `def`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FunctionSyntax {
    /// The function name.
    pub(crate) name: String,
    /// 1-based line of the name.
    pub(crate) line: u32,
    /// 1-based column of the name.
    pub(crate) column: u32,
    /// Parameters in order, with their annotations.
    pub(crate) params: Vec<(String, Option<Annotation>)>,
    /// The return annotation.
    pub(crate) returns: Option<Annotation>,
    /// The docstring, as the string literal's value.
    pub(crate) docstring: Option<String>,
    /// Where the name, each parameter's name and the docstring's first line are written,
    /// and the calls the body makes.
    pub(crate) facts: FunctionFacts,
}

/// Where the parts of a `def` are written, and the calls its body makes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FunctionFacts {
    /// The function name.
    pub(crate) name: Range<usize>,
    /// Each parameter's name.
    pub(crate) parameters: Vec<(String, Range<usize>)>,
    /// The docstring's first line, from its opening quote.
    pub(crate) docstring: Option<Range<usize>>,
    /// The calls in the body, in source order.
    pub(crate) calls: Vec<toolsmith_model::Call>,
}

/// A type annotation: its source text and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Annotation {
    /// The annotation as written (`list[str]`, `int | None`).
    pub(crate) text: String,
    /// 1-based line.
    pub(crate) line: u32,
    /// 1-based column.
    pub(crate) column: u32,
    /// Byte range.
    pub(crate) span: Range<usize>,
}

/// The `def`s at the top level of a module, including those inside top-level `if`/`for`.
pub(crate) fn top_level_functions(ast: &AstModule) -> Vec<FunctionSyntax> {
    let mut functions = Vec::new();
    collect(ast, ast.statement(), &mut functions);
    functions
}

fn collect(ast: &AstModule, statement: &AstStmt, out: &mut Vec<FunctionSyntax>) {
    match &statement.node {
        StmtP::Statements(statements) => {
            for statement in statements {
                collect(ast, statement, out);
            }
        }
        StmtP::If(_, body) => collect(ast, body, out),
        StmtP::IfElse(_, branches) => {
            collect(ast, &branches.0, out);
            collect(ast, &branches.1, out);
        }
        StmtP::For(for_loop) => collect(ast, &for_loop.body, out),
        StmtP::Def(def) => out.push(function(ast, def)),
        _ => {}
    }
}

fn function(ast: &AstModule, def: &DefP<starlark::syntax::ast::AstNoPayload>) -> FunctionSyntax {
    let (line, column) = position(ast, def.name.span);
    let params = def
        .params
        .iter()
        .filter_map(|param| match &param.node {
            ParameterP::Normal(name, annotation, _)
            | ParameterP::Args(name, annotation)
            | ParameterP::KwArgs(name, annotation) => Some((
                name.node.ident.clone(),
                annotation.as_ref().map(|a| annotation_of(ast, a.span)),
            )),
            ParameterP::NoArgs | ParameterP::Slash => None,
        })
        .collect();
    let parameters = def
        .params
        .iter()
        .filter_map(|param| match &param.node {
            ParameterP::Normal(name, ..)
            | ParameterP::Args(name, _)
            | ParameterP::KwArgs(name, _) => Some((name.node.ident.clone(), range(name.span))),
            ParameterP::NoArgs | ParameterP::Slash => None,
        })
        .collect();
    FunctionSyntax {
        name: def.name.node.ident.clone(),
        line,
        column,
        params,
        returns: def.return_type.as_ref().map(|a| annotation_of(ast, a.span)),
        docstring: docstring(&def.body),
        facts: FunctionFacts {
            name: range(def.name.span),
            parameters,
            docstring: docstring_line(ast, &def.body),
            calls: calls_in(&def.body),
        },
    }
}

/// The first line of the docstring opening `body`, from its opening quote.
fn docstring_line(ast: &AstModule, body: &AstStmt) -> Option<Range<usize>> {
    let first = match &body.node {
        StmtP::Statements(statements) => statements.first()?,
        _ => body,
    };
    let StmtP::Expression(expression) = &first.node else {
        return None;
    };
    if !matches!(expression.node, ExprP::Literal(AstLiteral::String(_))) {
        return None;
    }
    let span = range(expression.span);
    let file_span = ast.file_span(expression.span);
    let text = file_span.source_span();
    let line = text.find('\n').unwrap_or(text.len());
    Some(span.start..span.start + line)
}

fn docstring(body: &AstStmt) -> Option<String> {
    let first = match &body.node {
        StmtP::Statements(statements) => statements.first()?,
        _ => body,
    };
    match &first.node {
        StmtP::Expression(expression) => match &expression.node {
            ExprP::Literal(AstLiteral::String(text)) => Some(text.node.clone()),
            _ => None,
        },
        _ => None,
    }
}

fn annotation_of(ast: &AstModule, span: Span) -> Annotation {
    let (line, column) = position(ast, span);
    Annotation {
        text: ast.file_span(span).source_span().to_owned(),
        line,
        column,
        span: range(span),
    }
}

fn position(ast: &AstModule, span: Span) -> (u32, u32) {
    let at = ast.file_span(span).resolve_span().begin;
    (
        u32::try_from(at.line + 1).unwrap_or(u32::MAX),
        u32::try_from(at.column + 1).unwrap_or(u32::MAX),
    )
}
