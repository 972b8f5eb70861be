//! Source rewrites that route the native operations that can multiply memory through the
//! guards in [`builtins`](super::builtins) (issue 14, item 1): `r.join(...)`,
//! `r.replace(...)`, `r.format(...)` and `r.extend(...)` become
//! `__toolsmith_method__(r, "join", ...)`, and `x += y` (for a plain variable) becomes
//! `x = __toolsmith_iadd__(x, (y))`, and `f"a{x}b"` becomes
//! `__toolsmith_fstring__("a{}b", x)`. Starlark's syntax tree cannot be edited in place
//! (only binary operators can be replaced), so the edits are made to the source text at
//! the spans the parser reported and the text is parsed again. Columns after an edit on the
//! same line shift in run-time error messages; line numbers never change (no newline is
//! added or removed), and everything read from the file itself (functions, docstrings,
//! annotations) comes from the unedited parse.

use std::fmt::Write as _;

use starlark::syntax::AstModule;
use starlark::syntax::ast::{AssignOp, AssignTargetP, AstExpr, AstStmt, ExprP, StmtP};

/// The methods whose result can dwarf their receiver and arguments.
pub(super) const GUARDED_METHODS: [&str; 4] = ["join", "replace", "format", "extend"];

/// The function guarded method calls are rewritten to.
pub(super) const METHOD_GUARD: &str = "__toolsmith_method__";

/// The function `x += y` is rewritten to.
pub(super) const IADD_GUARD: &str = "__toolsmith_iadd__";

/// The function f-strings are rewritten to.
pub(super) const FSTRING_GUARD: &str = "__toolsmith_fstring__";

/// One edit: replace `text[start..end]` (empty for an insertion) by `with`.
struct Edit {
    start: usize,
    end: usize,
    with: String,
}

/// The source with guarded calls rewritten, or `None` when nothing needs it.
pub(super) fn guard_methods(ast: &AstModule, text: &str) -> Option<String> {
    let mut edits = Vec::new();
    statement(ast.statement(), &mut edits);
    ast.statement()
        .visit_expr(|expr| expression(expr, text, &mut edits));
    if edits.is_empty() {
        return None;
    }
    // Stable: edits at the same position keep their order, outer calls first.
    edits.sort_by_key(|edit| edit.start);
    let mut out = String::with_capacity(text.len() + edits.len() * 32);
    let mut at = 0;
    for edit in edits {
        if edit.start < at {
            // Overlapping edits cannot happen for well-formed spans; keep the source as is.
            return None;
        }
        out.push_str(text.get(at..edit.start)?);
        out.push_str(&edit.with);
        at = edit.end;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

fn bounds(span: starlark::codemap::Span) -> (usize, usize) {
    (span.begin().get() as usize, span.end().get() as usize)
}

fn statement(stmt: &AstStmt, edits: &mut Vec<Edit>) {
    if let StmtP::AssignModify(target, AssignOp::Add, rhs) = &stmt.node
        && let AssignTargetP::Identifier(name) = &target.node
    {
        let (_, name_end) = bounds(target.span);
        let (rhs_start, rhs_end) = bounds(rhs.span);
        edits.push(Edit {
            start: name_end,
            end: rhs_start,
            with: format!(" = {IADD_GUARD}({}, (", name.node.ident),
        });
        // The right-hand side's own edits (from the expression pass) come in between.
        edits.push(Edit {
            start: rhs_end,
            end: rhs_end,
            with: "))".to_owned(),
        });
    }
    stmt.visit_stmt(|child| statement(child, edits));
}

fn expression(expr: &AstExpr, text: &str, edits: &mut Vec<Edit>) {
    if let ExprP::FString(fstring) = &expr.node {
        // The interpolated expressions are copied as written (each still runs once); edits
        // inside them would overlap this one, so they are left unguarded.
        if let Some(call) = fstring_call(
            &fstring.node.format.node,
            &fstring.node.expressions,
            expr,
            text,
        ) {
            let (start, end) = bounds(expr.span);
            edits.push(Edit {
                start,
                end,
                with: call,
            });
        }
        return;
    }
    if let ExprP::Call(callee, _) = &expr.node
        && let ExprP::Dot(receiver, method) = &callee.node
        && GUARDED_METHODS.contains(&method.node.as_str())
    {
        let (receiver_start, receiver_end) = bounds(receiver.span);
        let (_, callee_end) = bounds(callee.span);
        let after = text.get(callee_end..).unwrap_or_default();
        let gap = after.len()
            - after
                .trim_start_matches([' ', '\t', '\r', '\n', '\\'])
                .len();
        if after[gap..].starts_with('(') {
            edits.push(Edit {
                start: receiver_start,
                end: receiver_start,
                with: format!("{METHOD_GUARD}("),
            });
            edits.push(Edit {
                start: receiver_end,
                end: callee_end + gap + 1,
                with: format!(", \"{}\", ", method.node),
            });
        }
    }
    expr.visit_expr(|child| expression(child, text, edits));
}

/// `__toolsmith_fstring__("format", e1, e2)` for an f-string, keeping its line breaks.
fn fstring_call(
    format: &str,
    expressions: &[AstExpr],
    whole: &AstExpr,
    text: &str,
) -> Option<String> {
    let (start, end) = bounds(whole.span);
    let mut call = format!("{FSTRING_GUARD}(\"");
    for c in format.chars() {
        match c {
            '"' => call.push_str("\\\""),
            '\\' => call.push_str("\\\\"),
            '\n' => call.push_str("\\n"),
            '\r' => call.push_str("\\r"),
            '\t' => call.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(call, "\\u{:04x}", c as u32);
            }
            c => call.push(c),
        }
    }
    call.push('"');
    let mut lines = text.get(start..end)?.matches('\n').count();
    for expression in expressions {
        let (from, to) = bounds(expression.span);
        let source = text.get(from..to)?;
        lines = lines.saturating_sub(source.matches('\n').count());
        call.push_str(", ");
        call.push_str(source);
    }
    call.push_str(&"\n".repeat(lines));
    call.push(')');
    Some(call)
}

#[cfg(test)]
mod tests {
    use starlark::syntax::AstModule;

    use super::guard_methods;

    fn rewritten(source: &str) -> Option<String> {
        let ast = AstModule::parse("t.star", source.to_owned(), &super::super::dialect()).unwrap();
        guard_methods(&ast, source)
    }

    #[test]
    fn guarded_method_calls_become_guard_calls() {
        assert_eq!(
            rewritten("x = sep.join(items)\n").as_deref(),
            Some("x = __toolsmith_method__(sep, \"join\", items)\n")
        );
        assert_eq!(
            rewritten("y = \"a\".join(b).replace(\"a\", c)\n").as_deref(),
            Some(
                "y = __toolsmith_method__(__toolsmith_method__(\"a\", \"join\", b), \"replace\", \"a\", c)\n"
            )
        );
        assert_eq!(
            rewritten("l.extend()\n").as_deref(),
            Some("__toolsmith_method__(l, \"extend\", )\n")
        );
    }

    #[test]
    fn augmented_addition_to_a_variable_becomes_a_guard_call() {
        assert_eq!(
            rewritten("def f(s):\n    s += s.join([s]), 1\n").as_deref(),
            Some(
                "def f(s):\n    s = __toolsmith_iadd__(s, (__toolsmith_method__(s, \"join\", [s]), 1))\n"
            )
        );
    }

    #[test]
    fn f_strings_become_guard_calls() {
        assert_eq!(
            rewritten("x = f\"a{b}\\\"{c!r}\"\n").as_deref(),
            Some("x = __toolsmith_fstring__(\"a{}\\\"{!r}\", b, c)\n")
        );
    }

    #[test]
    fn other_code_is_left_alone() {
        assert_eq!(rewritten("x = a.split(b)\nd[k] += 1\ny = join(z)\n"), None);
    }
}
