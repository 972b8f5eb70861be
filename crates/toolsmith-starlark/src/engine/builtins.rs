//! Globals Toolsmith adds to Starlark's own: `sum` (Scriptling scripts use it), a `range`
//! that refuses giant ranges, and the guarded `+`/`*` that binary operators are rewritten
//! to, so that `"x" * n` or `s + s` in a loop fail cleanly instead of asking the allocator
//! for gigabytes in one native step (starlark checks its heap limit only every thousand
//! loop iterations or calls, far too late for a single huge allocation). The `json` module
//! is ours too: starlark's own `json.encode` recurses through serde and overflows a 2 MiB
//! thread stack on a list nested a thousand deep, aborting the process.
//!
//! For the same reason `str`, `repr`, `print`, `%` formatting and `json.encode` measure the
//! text they would build first ([`size`](super::size)), and every guard grows the
//! evaluation's share of the server's memory budget before it allocates, so
//! that no script can take the server's memory (docs/faults.md).

use std::collections::HashMap;
use std::num::NonZeroI32;

use std::sync::OnceLock;

use starlark::environment::{Globals, GlobalsBuilder, LibraryExtension};
use starlark::eval::Evaluator;
use starlark::starlark_module;
use starlark::syntax::AstModule;
use starlark::values::dict::DictRef;
use starlark::values::list::ListRef;
use starlark::values::none::{NoneOr, NoneType};
use starlark::values::range::Range;
use starlark::values::string::StarlarkStr;
use starlark::values::tuple::{TupleRef, UnpackTuple};
use starlark::values::{FrozenValue, Heap, Value};

use super::budget;
use super::convert::{ConvertError, from_json, to_json_within, too_large};
use super::rewrite;
use super::size::{self, Form};
use super::{MAX_RANGE_LENGTH, MAX_VALUE_BYTES, heap_limit, heap_limit_message};

const GUARDED_ADD: &str = "__toolsmith_add__";
const GUARDED_MUL: &str = rewrite::MUL_GUARD;
const GUARDED_PERCENT: &str = rewrite::PERCENT_GUARD;

/// Routes `a + b`, `a * b` and `a % b` through the guarded functions below. Augmented
/// assignments and method calls cannot be rewritten this way; [`rewrite`](super::rewrite)
/// edits the source for `x += y` and the guarded methods.
pub(super) fn guard_operators(ast: &mut AstModule) {
    let replace = HashMap::from([
        ("+".to_owned(), GUARDED_ADD.to_owned()),
        ("*".to_owned(), GUARDED_MUL.to_owned()),
        ("%".to_owned(), GUARDED_PERCENT.to_owned()),
    ]);
    ast.replace_binary_operators(&replace);
}

/// Starlark's own `print`, which the guarded one calls once the text is measured.
fn standard_print() -> Option<FrozenValue> {
    static PRINT: OnceLock<Globals> = OnceLock::new();
    PRINT
        .get_or_init(|| Globals::extended_by(&[LibraryExtension::Print]))
        .iter()
        .find_map(|(name, print)| (name == "print").then_some(print))
}

/// Measures the text `what` would build from `value`, refusing past the value limit or the
/// heap limit.
fn check_text<'v>(
    value: Value<'v>,
    form: Form,
    heap: Heap<'v>,
    what: &str,
) -> anyhow::Result<usize> {
    let size = size::text_size(value, form, MAX_VALUE_BYTES, heap)
        .map_err(|refused| anyhow::anyhow!(refused.message(what)))?;
    check_size(size, heap, what)?;
    Ok(size)
}

/// The size in bytes a string, list or tuple occupies, for the guards.
fn size_of(value: Value) -> Option<usize> {
    if let Some(text) = value.unpack_str() {
        Some(text.len())
    } else if let Some(list) = ListRef::from_value(value) {
        Some(list.len().saturating_mul(8))
    } else {
        TupleRef::from_value(value).map(|tuple| tuple.len().saturating_mul(8))
    }
}

fn check_size(size: usize, heap: Heap, what: &str) -> anyhow::Result<()> {
    if size > MAX_VALUE_BYTES {
        anyhow::bail!(
            "{what} would create a value of {} MiB; the limit is {} MiB",
            size >> 20,
            MAX_VALUE_BYTES >> 20
        );
    }
    let after = heap.allocated_bytes().saturating_add(size);
    if after > heap_limit() {
        anyhow::bail!(heap_limit_message());
    }
    budget::ensure(after, &|| false).map_err(|busy| anyhow::anyhow!(busy.message()))
}

/// Refuses a guarded method call whose result would pass the value or heap limit.
fn check_method<'v>(
    receiver: Value<'v>,
    name: &str,
    args: &[Value<'v>],
    heap: Heap<'v>,
) -> anyhow::Result<()> {
    let what = format!("`.{name}(...)`");
    if let Some(text) = receiver.unpack_str() {
        let size = match (name, args) {
            ("join", [items, ..]) => {
                let items = match (ListRef::from_value(*items), TupleRef::from_value(*items)) {
                    (Some(list), _) => list.content().to_vec(),
                    (None, Some(tuple)) => tuple.content().to_vec(),
                    _ => return Ok(()),
                };
                let mut total = text.len().saturating_mul(items.len());
                for item in items {
                    total = total.saturating_add(item.unpack_str().map_or(0, str::len));
                    if total > MAX_VALUE_BYTES {
                        break;
                    }
                }
                total
            }
            ("replace", [old, new, rest @ ..]) => {
                let (Some(old), Some(new)) = (old.unpack_str(), new.unpack_str()) else {
                    return Ok(());
                };
                if new.len() <= old.len() {
                    return Ok(());
                }
                let growth = new.len() - old.len();
                // Counting stops as soon as the result is known to be too large.
                let mut enough = MAX_VALUE_BYTES.saturating_sub(text.len()) / growth + 1;
                if let Some(count) = rest.first().and_then(|count| count.unpack_i32()) {
                    enough = enough.min(usize::try_from(count).unwrap_or(0));
                }
                let found = if old.is_empty() {
                    text.chars().take(enough).count()
                } else {
                    text.match_indices(old).take(enough).count()
                };
                text.len().saturating_add(found.saturating_mul(growth))
            }
            ("format", _) => {
                // Each `{}` may name any argument, so each may be the largest one.
                let mut largest = 0;
                for arg in args {
                    largest = largest.max(
                        size::text_size(*arg, Form::Str, MAX_VALUE_BYTES, heap)
                            .map_err(|refused| anyhow::anyhow!(refused.message(&what)))?,
                    );
                }
                text.len()
                    .saturating_add(text.matches('{').count().saturating_mul(largest))
            }
            _ => return Ok(()),
        };
        return check_size(size, heap, &what);
    }
    if let (Some(list), "extend", [items, ..]) = (ListRef::from_value(receiver), name, args) {
        let added = size_of(*items).unwrap_or(0);
        return check_size(
            list.len().saturating_mul(8).saturating_add(added),
            heap,
            &what,
        );
    }
    Ok(())
}

/// `a + b`, refusing results larger than the value limit.
fn add<'v>(a: Value<'v>, b: Value<'v>, heap: Heap<'v>, what: &str) -> starlark::Result<Value<'v>> {
    if let (Some(left), Some(right)) = (size_of(a), size_of(b)) {
        check_size(left.saturating_add(right), heap, what)?;
    }
    a.add(b, heap)
}

/// `a * b`, refusing repetitions larger than the value limit.
fn mul<'v>(a: Value<'v>, b: Value<'v>, heap: Heap<'v>) -> starlark::Result<Value<'v>> {
    for (sequence, count) in [(a, b), (b, a)] {
        if let (Some(size), Some(count)) = (size_of(sequence), count.unpack_i32()) {
            let count = usize::try_from(count).unwrap_or(0);
            check_size(size.saturating_mul(count), heap, "repetition with `*`")?;
        }
    }
    a.mul(b, heap)
}

/// `a % b`, measuring what string formatting would build first.
fn percent<'v>(a: Value<'v>, b: Value<'v>, heap: Heap<'v>) -> starlark::Result<Value<'v>> {
    if let Some(format) = a.unpack_str() {
        // `%s` of a string is the string; anything else at most its `repr`.
        let measure = |value: Value<'v>| {
            let form = if value.unpack_str().is_some() {
                Form::Str
            } else {
                Form::Repr
            };
            size::text_size(value, form, MAX_VALUE_BYTES, heap)
        };
        let mut total = format.len();
        let items: Vec<Value<'v>> = match (TupleRef::from_value(b), DictRef::from_value(b)) {
            (Some(tuple), _) => tuple.content().to_vec(),
            (None, Some(dict)) => dict.iter().map(|(_, item)| item).collect(),
            (None, None) => vec![b],
        };
        // A mapping may be used by many `%(name)s`: each use is a `%`.
        let uses = format.matches('%').count().max(1);
        for item in items {
            let size = measure(item)
                .map_err(|refused| anyhow::anyhow!(refused.message("formatting with `%`")))?;
            let repeated = if DictRef::from_value(b).is_some() {
                size.saturating_mul(uses)
            } else {
                size
            };
            total = total.saturating_add(repeated);
        }
        check_size(total, heap, "formatting with `%`")?;
    }
    a.percent(b, heap)
}

/// `a += b`: in place for a list (as Starlark does), checked like `+` otherwise.
fn iadd<'v>(
    a: Value<'v>,
    b: Value<'v>,
    eval: &mut Evaluator<'v, '_, '_>,
) -> starlark::Result<Value<'v>> {
    let heap = eval.heap();
    if ListRef::from_value(a).is_some() {
        check_method(a, "extend", &[b], heap)?;
        let extend = a.get_attr_error("extend", heap)?;
        eval.eval_function(extend, &[b], &[])?;
        return Ok(a);
    }
    add(a, b, heap, "`+=`")
}

/// `a op= b` for the operators the rewrite guards (`+`, `*`, `%`).
fn augmented<'v>(
    a: Value<'v>,
    op: &str,
    b: Value<'v>,
    eval: &mut Evaluator<'v, '_, '_>,
) -> starlark::Result<Value<'v>> {
    match op {
        "+" => iadd(a, b, eval),
        "*" => mul(a, b, eval.heap()),
        "%" => percent(a, b, eval.heap()),
        other => Err(anyhow::anyhow!("unknown augmented assignment `{other}=`").into()),
    }
}

#[starlark_module]
pub(super) fn register(builder: &mut GlobalsBuilder) {
    /// Adds up the items of an iterable, starting from `start` (Python's `sum`).
    fn sum<'v>(
        #[starlark(require = pos)] iterable: Value<'v>,
        #[starlark(default = NoneOr::None)] start: NoneOr<Value<'v>>,
        heap: Heap<'v>,
    ) -> starlark::Result<Value<'v>> {
        let mut total = start.into_option().unwrap_or_else(|| heap.alloc(0));
        for item in iterable.iterate(heap)? {
            total = total.add(item, heap)?;
        }
        Ok(total)
    }

    /// The integers from `start` to `stop` by `step`, like Starlark's own `range`, limited
    /// to ten million items.
    fn range(
        #[starlark(require = pos)] a1: i32,
        #[starlark(require = pos)] a2: Option<i32>,
        #[starlark(require = pos, default = 1)] step: i32,
    ) -> anyhow::Result<Range> {
        let (start, stop) = match a2 {
            Some(stop) => (a1, stop),
            None => (0, a1),
        };
        let Some(step) = NonZeroI32::new(step) else {
            anyhow::bail!("the step of `range` cannot be zero");
        };
        let span = i64::from(stop) - i64::from(start);
        let step_size = i64::from(step.get());
        let length = if span.signum() == step_size.signum() {
            (span.abs() + step_size.abs() - 1) / step_size.abs()
        } else {
            0
        };
        if length > MAX_RANGE_LENGTH {
            anyhow::bail!(
                "`range` of {length} items is too long; the limit is {MAX_RANGE_LENGTH} \
                 (loop over smaller ranges, or nest two loops)"
            );
        }
        Ok(Range::new(start, stop, step))
    }

    /// `a + b`, refusing results larger than the value limit.
    fn __toolsmith_add__<'v>(
        #[starlark(require = pos)] a: Value<'v>,
        #[starlark(require = pos)] b: Value<'v>,
        heap: Heap<'v>,
    ) -> starlark::Result<Value<'v>> {
        add(a, b, heap, "`+`")
    }

    /// `a * b` (and `x *= y`), refusing repetitions larger than the value limit.
    fn __toolsmith_mul__<'v>(
        #[starlark(require = pos)] a: Value<'v>,
        #[starlark(require = pos)] b: Value<'v>,
        heap: Heap<'v>,
    ) -> starlark::Result<Value<'v>> {
        mul(a, b, heap)
    }

    /// `a % b` (and `x %= y`), measuring what string formatting would build first.
    fn __toolsmith_percent__<'v>(
        #[starlark(require = pos)] a: Value<'v>,
        #[starlark(require = pos)] b: Value<'v>,
        heap: Heap<'v>,
    ) -> starlark::Result<Value<'v>> {
        percent(a, b, heap)
    }

    /// `target[key] op= value`: the item is read, combined as the guarded operator does,
    /// and written back (as Starlark does, a list is extended in place and stored again).
    fn __toolsmith_augmented_index__<'v>(
        #[starlark(require = pos)] target: Value<'v>,
        #[starlark(require = pos)] key: Value<'v>,
        #[starlark(require = pos)] op: &str,
        #[starlark(require = pos)] value: Value<'v>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<NoneType> {
        let current = target.at(key, eval.heap())?;
        let result = augmented(current, op, value, eval)?;
        target.set_at(key, result)?;
        Ok(NoneType)
    }

    /// `target.name op= value`, as `__toolsmith_augmented_index__` does for an item.
    fn __toolsmith_augmented_attr__<'v>(
        #[starlark(require = pos)] target: Value<'v>,
        #[starlark(require = pos)] name: &str,
        #[starlark(require = pos)] op: &str,
        #[starlark(require = pos)] value: Value<'v>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<NoneType> {
        let current = target.get_attr_error(name, eval.heap())?;
        let result = augmented(current, op, value, eval)?;
        target.set_attr(name, result)?;
        Ok(NoneType)
    }

    /// `receiver.name(*args, **kwargs)` for the methods that can multiply memory
    /// (`str.join`, `str.replace`, `str.format`, `list.extend`): the size of the result is
    /// checked first, then the real method runs.
    fn __toolsmith_method__<'v>(
        #[starlark(require = pos)] receiver: Value<'v>,
        #[starlark(require = pos)] name: &str,
        #[starlark(args)] args: UnpackTuple<Value<'v>>,
        #[starlark(kwargs)] kwargs: DictRef<'v>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let heap = eval.heap();
        check_method(receiver, name, &args.items, heap)?;
        let method = receiver.get_attr_error(name, heap)?;
        let named: Vec<(&str, Value<'v>)> = kwargs
            .iter()
            .filter_map(|(key, value)| Some((key.unpack_str()?, value)))
            .collect();
        eval.eval_function(method, &args.items, &named)
    }

    /// An f-string, `f"a{x}b"` as `__toolsmith_fstring__("a{}b", x)`: the values' text is
    /// measured, then formatted as Starlark formats f-strings (`str.format`).
    fn __toolsmith_fstring__<'v>(
        #[starlark(require = pos)] format: &str,
        #[starlark(args)] args: UnpackTuple<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        let heap = eval.heap();
        let mut total = format.len();
        for arg in &args.items {
            total = total.saturating_add(check_text(*arg, Form::Repr, heap, "an f-string")?);
        }
        check_size(total, heap, "an f-string")?;
        let method = heap.alloc(format).get_attr_error("format", heap)?;
        eval.eval_function(method, &args.items, &[])
    }

    /// `x += y`: in place for a list (as Starlark does), checked like `+` otherwise.
    fn __toolsmith_iadd__<'v>(
        #[starlark(require = pos)] a: Value<'v>,
        #[starlark(require = pos)] b: Value<'v>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<Value<'v>> {
        iadd(a, b, eval)
    }

    /// `str(x)`: the string form of a value, measured before it is built.
    #[starlark(as_type = StarlarkStr)]
    fn str<'v>(
        #[starlark(require = pos)] a: Value<'v>,
        heap: Heap<'v>,
    ) -> anyhow::Result<Value<'v>> {
        if a.unpack_str().is_some() {
            return Ok(a);
        }
        check_text(a, Form::Str, heap, "`str`")?;
        Ok(heap.alloc(a.to_str()))
    }

    /// `repr(x)`: the Starlark source form of a value, measured before it is built.
    fn repr<'v>(
        #[starlark(require = pos)] a: Value<'v>,
        heap: Heap<'v>,
    ) -> anyhow::Result<Value<'v>> {
        check_text(a, Form::Repr, heap, "`repr`")?;
        Ok(heap.alloc(a.to_repr()))
    }

    /// `print(*values)`: the values' string forms, separated by spaces, to the log.
    fn print<'v>(
        #[starlark(args)] args: UnpackTuple<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<NoneType> {
        let heap = eval.heap();
        let mut total = args.items.len();
        for item in &args.items {
            total = total.saturating_add(check_text(*item, Form::Str, heap, "`print`")?);
        }
        check_size(total, heap, "`print`")?;
        let print = standard_print().ok_or_else(|| anyhow::anyhow!("`print` is unavailable"))?;
        eval.eval_function(print.to_value(), &args.items, &[])?;
        Ok(NoneType)
    }
}

/// The `json` module: `json.encode(x)` and `json.decode(text)`, depth-limited.
#[starlark_module]
pub(super) fn json(builder: &mut GlobalsBuilder) {
    /// Encodes a value as compact JSON text.
    fn encode(#[starlark(require = pos)] x: Value) -> anyhow::Result<String> {
        let json = to_json_within(x, MAX_VALUE_BYTES).map_err(|error| match error {
            ConvertError::TooLarge(limit) => {
                anyhow::anyhow!("`json.encode`: {}", too_large("the value", limit))
            }
            ConvertError::Invalid(message) => anyhow::anyhow!("`json.encode`: {message}"),
        })?;
        Ok(json.to_string())
    }

    /// Decodes JSON text into a value.
    fn decode<'v>(#[starlark(require = pos)] x: &str, heap: Heap<'v>) -> anyhow::Result<Value<'v>> {
        let json: serde_json::Value =
            serde_json::from_str(x).map_err(|error| anyhow::anyhow!("`json.decode`: {error}"))?;
        from_json(heap, &json).map_err(|error| anyhow::anyhow!("`json.decode`: {error}"))
    }
}
