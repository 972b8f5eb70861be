//! Bounded size estimates: how long the text `str(x)`/`repr(x)` would produce is, found
//! with a walk that gives up as soon as it passes a limit. Starlark builds such text in one
//! native step (`str`, `repr`, `print`, `%`, `json.encode`, the result of a call), so a
//! small value that shares one large string many times (`[c] * 5000`) would ask the
//! allocator for gigabytes before any periodic check runs; the guards ask this module first.
//!
//! The walk is iterative (no native recursion, whatever the nesting), counts a container
//! that contains itself once (Starlark prints `[...]` for it), and refuses values nested
//! deeper than [`MAX_TEXT_DEPTH`], which Starlark's own recursive `repr` could not print
//! without overflowing the native stack.

use starlark::values::dict::DictRef;
use starlark::values::list::ListRef;
use starlark::values::structs::StructRef;
use starlark::values::tuple::TupleRef;
use starlark::values::{Heap, Value};

/// How deeply a value may nest to be turned into text.
pub(crate) const MAX_TEXT_DEPTH: usize = 1000;

/// Why a value's text was not measured to the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TooLarge {
    /// The text would be longer than the limit (in bytes).
    Longer(usize),
    /// The value nests deeper than [`MAX_TEXT_DEPTH`].
    Deeper,
}

impl TooLarge {
    /// The refusal as an error message for `what` (a builtin, in backticks).
    pub(crate) fn message(self, what: &str) -> String {
        match self {
            Self::Longer(limit) => format!(
                "{what} would create a string of more than {} MiB; the limit is {} MiB",
                limit >> 20,
                limit >> 20
            ),
            Self::Deeper => {
                format!("{what}: the value is nested more than {MAX_TEXT_DEPTH} levels deep")
            }
        }
    }
}

/// How the text of a value is produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// `str(x)`: a string stands for itself.
    Str,
    /// `repr(x)`: a string is quoted and escaped.
    Repr,
}

/// An upper estimate of the length of `str(value)` or `repr(value)`, or why it passed
/// `limit`. The cost of the walk is bounded by `limit` (every step adds at least a byte)
/// and the size of the containers it visits.
pub(crate) fn text_size<'v>(
    value: Value<'v>,
    form: Form,
    limit: usize,
    heap: Heap<'v>,
) -> Result<usize, TooLarge> {
    if let (Form::Str, Some(text)) = (form, value.unpack_str()) {
        return within(text.len(), limit);
    }
    let mut total = 0usize;
    // The containers being walked, each with its children and the next one to visit.
    let mut path: Vec<(Value<'v>, Children<'v>, usize)> = Vec::new();
    let mut next = Some(value);
    loop {
        if let Some(value) = next.take() {
            let (own, children) = node(value, heap);
            total = within(total.saturating_add(own), limit)?;
            if let Some(children) = children {
                if path.iter().any(|(ancestor, ..)| ancestor.ptr_eq(value)) {
                    // Printed as `[...]`.
                    total = within(total.saturating_add(5), limit)?;
                } else if path.len() >= MAX_TEXT_DEPTH {
                    return Err(TooLarge::Deeper);
                } else {
                    path.push((value, children, 0));
                }
            }
        }
        let Some((_, children, index)) = path.last_mut() else {
            return Ok(total);
        };
        match children.get(*index) {
            Some(child) => {
                *index += 1;
                next = Some(child);
            }
            None => {
                path.pop();
            }
        }
    }
}

fn within(size: usize, limit: usize) -> Result<usize, TooLarge> {
    if size > limit {
        Err(TooLarge::Longer(limit))
    } else {
        Ok(size)
    }
}

/// The values inside a container, borrowed when Starlark lets us.
enum Children<'v> {
    Borrowed(&'v [Value<'v>]),
    Owned(Vec<Value<'v>>),
}

impl<'v> Children<'v> {
    fn get(&self, index: usize) -> Option<Value<'v>> {
        match self {
            Self::Borrowed(items) => items.get(index).copied(),
            Self::Owned(items) => items.get(index).copied(),
        }
    }
}

/// The bytes a value adds by itself (brackets, separators, a leaf's text) and, for a
/// container, what it contains.
fn node<'v>(value: Value<'v>, heap: Heap<'v>) -> (usize, Option<Children<'v>>) {
    if let Some(text) = value.unpack_str() {
        return (quoted_size(text), None);
    }
    if value.is_none() {
        return (4, None);
    }
    if value.unpack_bool().is_some() {
        return (5, None);
    }
    if let Some(number) = value.unpack_i32() {
        return (digits(number), None);
    }
    if let Some(list) = ListRef::from_value(value) {
        let items = list.content();
        return (2 + 2 * items.len(), Some(Children::Borrowed(items)));
    }
    if let Some(tuple) = TupleRef::from_value(value) {
        let items = tuple.content();
        return (3 + 2 * items.len(), Some(Children::Borrowed(items)));
    }
    if let Some(dict) = DictRef::from_value(value) {
        let items: Vec<Value<'v>> = dict.iter().flat_map(|(key, item)| [key, item]).collect();
        return (2 + 2 * items.len(), Some(Children::Owned(items)));
    }
    if let Some(fields) = StructRef::from_value(value) {
        let mut own = 8;
        let mut items = Vec::new();
        for (name, item) in fields.iter() {
            own += name.as_str().len() + 3;
            items.push(item);
        }
        return (own, Some(Children::Owned(items)));
    }
    match value.get_type() {
        "int" | "float" => (value.to_repr().len(), None),
        "set" => match value.iterate(heap) {
            Ok(items) => {
                let items: Vec<Value<'v>> = items.collect();
                (5 + 2 * items.len(), Some(Children::Owned(items)))
            }
            Err(_) => (32, None),
        },
        kind => {
            // Records, namespaces, enum values and the like: their fields are attributes.
            let mut own = kind.len() + 32;
            let mut items = Vec::new();
            for name in value.dir_attr() {
                if let Ok(Some(item)) = value.get_attr(&name, heap) {
                    own += name.len() + 3;
                    items.push(item);
                }
            }
            (own, Some(Children::Owned(items)))
        }
    }
}

/// The length of a string's `repr`: quotes, and escapes counted at their longest. Escapes
/// are only looked for in short strings: scanning every occurrence of a large shared string
/// would cost more than the walk, and a large string's escapes can at most multiply its own
/// (already allocated) size by a small factor.
fn quoted_size(text: &str) -> usize {
    const SCANNED: usize = 4096;
    if text.len() > SCANNED {
        return text.len() + 2;
    }
    let escaped = text
        .bytes()
        .filter(|byte| *byte < 0x20 || *byte == b'"' || *byte == b'\\' || *byte >= 0x7f)
        .count();
    text.len() + 2 + 9 * escaped
}

fn digits(number: i32) -> usize {
    let sign = usize::from(number < 0);
    let mut magnitude = number.unsigned_abs();
    let mut count = 1;
    while magnitude >= 10 {
        magnitude /= 10;
        count += 1;
    }
    sign + count
}

#[cfg(test)]
mod tests {
    use starlark::environment::{Globals, LibraryExtension, Module};
    use starlark::eval::Evaluator;
    use starlark::syntax::{AstModule, Dialect};

    use super::{Form, TooLarge, text_size};

    /// Evaluates `expression` and measures it, checking the estimate against the real text.
    fn measure(expression: &str, form: Form, limit: usize) -> Result<usize, TooLarge> {
        Module::with_temp_heap(|module| {
            let ast =
                AstModule::parse("size.star", expression.to_owned(), &Dialect::Standard).unwrap();
            let mut eval = Evaluator::new(&module);
            let globals =
                Globals::extended_by(&[LibraryExtension::StructType, LibraryExtension::SetType]);
            let value = eval.eval_module(ast, &globals).unwrap();
            let size = text_size(value, form, limit, module.heap());
            if let Ok(size) = size {
                let real = match form {
                    Form::Str => value.to_str(),
                    Form::Repr => value.to_repr(),
                };
                assert!(real.len() <= size, "{real:?} is longer than {size}");
            }
            size
        })
    }

    #[test]
    fn estimates_are_upper_bounds() {
        for expression in [
            "[1, -20, 'a\"b', None, True, (1,), {'k': [2.5]}]",
            "struct(a = 1, b = 'x')",
            "set([1, 2, 3])",
            "'plain text'",
            "10000000000000000000000",
        ] {
            for form in [Form::Str, Form::Repr] {
                assert!(measure(expression, form, 1 << 20).is_ok(), "{expression}");
            }
        }
    }

    // Regression test: `str([c] * 200)` builds 200 MiB in one step.
    #[test]
    fn shared_strings_count_once_per_occurrence() {
        let expression = "c = 'z' * 1000\n[c] * 200";
        assert_eq!(
            measure(expression, Form::Str, 100_000),
            Err(TooLarge::Longer(100_000))
        );
        assert!(measure(expression, Form::Str, 300_000).is_ok());
    }

    #[test]
    fn exponential_sharing_stops_at_the_limit() {
        let expression =
            "def f():\n  x = ['a']\n  for i in range(60):\n    x = [x, x]\n  return x\nf()";
        assert_eq!(
            measure(expression, Form::Repr, 1 << 20),
            Err(TooLarge::Longer(1 << 20))
        );
    }

    #[test]
    fn a_list_containing_itself_is_measured_once() {
        let expression = "def f():\n  x = [1]\n  x.append(x)\n  return x\nf()";
        assert!(measure(expression, Form::Repr, 100).is_ok());
    }

    #[test]
    fn values_nested_too_deeply_are_refused() {
        let expression =
            "def f():\n  x = []\n  for i in range(5000):\n    x = [x]\n  return x\nf()";
        assert_eq!(
            measure(expression, Form::Repr, 1 << 30),
            Err(TooLarge::Deeper)
        );
    }
}
