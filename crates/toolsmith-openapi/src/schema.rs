//! OpenAPI schemas as the JSON Schema 2020-12 Toolsmith publishes (docs/gateway.md,
//! "OpenAPI"): local `$ref`s (`#/components/...`) replaced by what they point at, and
//! OpenAPI 3.0's dialect turned into 2020-12 (`nullable: true` into a `"null"` type, boolean
//! `exclusiveMinimum`/`exclusiveMaximum` into numbers). A 3.1 schema is 2020-12 already and
//! passes through.
//!
//! A document is untrusted input (a spec fetched from a URL is anyone's), and `$ref`s that
//! repeat and nest expand exponentially: 24 levels of a schema that refers twice to the one
//! below it are 2^24 copies of the bottom one from a 3 KB file. So expansion is bounded. A
//! schema is expanded in place while it stays under [`INLINE_LIMIT`] values; past that it is
//! expanded again keeping each schema it refers to once, in `$defs`, which costs no more
//! than the document holds. A whole document may keep [`DOCUMENT_LIMIT`] values and spend
//! [`WORK_LIMIT`] making them; past either it is refused whole ([`Unresolved::Oversized`]).

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::{Map, Value};

/// How deep `$ref`s may nest in place before a schema is taken to refer to itself.
const MAX_DEPTH: usize = 32;

/// How deep objects and arrays may nest, `$ref`s followed: a bound on the resolver's stack.
const MAX_NESTING: usize = 512;

/// The most JSON values one schema (a parameter, a request body, a response) expands to in
/// place; a bigger one keeps the schemas it refers to in `$defs`.
pub(crate) const INLINE_LIMIT: usize = 5_000;

/// The most JSON values the tools of one document may hold in their schemas.
pub const DOCUMENT_LIMIT: usize = 2_000_000;

/// The most JSON values resolving one document may make, kept or not (tries in place that
/// grew past [`INLINE_LIMIT`] included): a bound on the time a document takes to load.
pub(crate) const WORK_LIMIT: usize = 20_000_000;

/// Why a schema was not resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unresolved {
    /// Something about this one operation, which is left out with this message.
    Problem(String),
    /// The document's schemas expand past [`DOCUMENT_LIMIT`] or [`WORK_LIMIT`].
    Oversized,
}

impl From<String> for Unresolved {
    fn from(message: String) -> Self {
        Self::Problem(message)
    }
}

impl From<&str> for Unresolved {
    fn from(message: &str) -> Self {
        Self::Problem(message.to_owned())
    }
}

/// What resolving one document may still make and keep, in JSON values.
#[derive(Debug)]
pub(crate) struct Budget {
    kept: usize,
    work: usize,
}

impl Budget {
    /// A whole document's budget.
    pub(crate) fn new() -> Self {
        Self {
            kept: DOCUMENT_LIMIT,
            work: WORK_LIMIT,
        }
    }

    /// Takes `value`'s size from what the document's tools may keep.
    fn keep(&mut self, value: &Value) -> Result<(), Unresolved> {
        self.take(size(vec![value], self.kept.saturating_add(1)))
    }

    /// Takes the size of the schema `object` from what the document's tools may keep.
    pub(crate) fn keep_object(&mut self, object: &Map<String, Value>) -> Result<(), Unresolved> {
        self.take(1 + size(object.values().collect(), self.kept.saturating_add(1)))
    }

    fn take(&mut self, values: usize) -> Result<(), Unresolved> {
        self.kept = self.kept.checked_sub(values).ok_or(Unresolved::Oversized)?;
        Ok(())
    }
}

/// How many JSON values `values` hold, themselves included, counting no further than
/// `limit`.
fn size(mut stack: Vec<&Value>, limit: usize) -> usize {
    let mut count = 0;
    while let Some(value) = stack.pop() {
        count += 1;
        if count >= limit {
            return count;
        }
        match value {
            Value::Object(members) => stack.extend(members.values()),
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    count
}

/// The schemas of one published schema (a tool's input schema or its output schema), resolved
/// against one document: the `$defs` they share are gathered here.
pub(crate) struct Expansion<'a, 'b> {
    root: &'a Value,
    budget: &'b mut Budget,
    names: Names<'a>,
    /// The resolved schemas, by key.
    defs: HashMap<String, Value>,
}

impl<'a, 'b> Expansion<'a, 'b> {
    /// Resolves against `root`, spending `budget`.
    pub(crate) fn new(root: &'a Value, budget: &'b mut Budget) -> Self {
        Self {
            root,
            budget,
            names: Names::default(),
            defs: HashMap::new(),
        }
    }

    /// `value` with every local `$ref` resolved against the document (siblings of a `$ref`
    /// override what it points at, as 3.1 allows), schemas in 2020-12 form.
    ///
    /// In place when that stays under [`INLINE_LIMIT`] values: a `$ref` that leads back to
    /// itself is then left as the empty schema (anything), so a recursive `Tree` still
    /// validates its first levels. Otherwise each `$ref` below `value` itself becomes one
    /// to `#/$defs/NAME`, and [`Expansion::defs`] has what they point at.
    ///
    /// # Errors
    ///
    /// A `$ref` to another file or to nothing, named; nesting past [`MAX_NESTING`];
    /// [`Unresolved::Oversized`] when the document's budget is spent.
    pub(crate) fn resolve(&mut self, value: &'a Value) -> Result<Value, Unresolved> {
        let limit = INLINE_LIMIT.min(self.budget.work);
        let mut inline = InPlace {
            root: self.root,
            trail: Vec::new(),
            left: limit,
        };
        let result = inline.resolve(value, 0);
        self.budget.work -= limit - inline.left;
        match result {
            Ok(resolved) => Ok(resolved),
            Err(Stop::Problem(message)) => Err(Unresolved::Problem(message)),
            Err(Stop::Full) if self.budget.work == 0 => Err(Unresolved::Oversized),
            Err(Stop::Full) => self.by_reference(value),
        }
    }

    /// `value` resolved with every `$ref` below it as one into `$defs`, and what they point
    /// at resolved once each, from a worklist (a long chain of `$ref`s costs no stack).
    fn by_reference(&mut self, value: &'a Value) -> Result<Value, Unresolved> {
        let mut walk = Walk {
            root: self.root,
            left: self.budget.work,
            root_trail: Vec::new(),
            names: &mut self.names,
            pending: Vec::new(),
        };
        let result = walk.resolve(value, 0, true).and_then(|resolved| {
            while let Some((key, reference)) = walk.pending.pop() {
                let target = pointed(walk.root, reference)?;
                let def = walk.resolve(target, 0, false)?;
                self.defs.insert(key, def);
            }
            Ok(resolved)
        });
        self.budget.work = walk.left;
        result
    }

    /// `schema` (one [`Expansion::resolve`] made) with a `$ref` into `$defs` at its top
    /// replaced by what it points at, so its `type` and `properties` show where a client,
    /// argument coercion and the output check look; what it refers to stays in `$defs`.
    ///
    /// # Errors
    ///
    /// [`Unresolved::Oversized`] when the document's budget is spent.
    pub(crate) fn unwrapped(&mut self, mut schema: Value) -> Result<Value, Unresolved> {
        for _ in 0..MAX_DEPTH {
            let Value::Object(object) = &schema else {
                break;
            };
            let Some(Value::Object(target)) = object
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|reference| reference.strip_prefix(DEFS))
                .and_then(|key| self.defs.get(key))
            else {
                break;
            };
            let copied = 1 + size(target.values().collect(), self.budget.work);
            self.budget.work = self
                .budget
                .work
                .checked_sub(copied)
                .ok_or(Unresolved::Oversized)?;
            let mut inner = target.clone();
            for (key, sibling) in object {
                if key != "$ref" {
                    inner.insert(key.clone(), sibling.clone());
                }
            }
            schema = Value::Object(inner);
        }
        Ok(schema)
    }

    /// The `$defs` that the schema `object` refers to, and those they refer to in turn, by
    /// name; `None` when it refers to none.
    ///
    /// # Errors
    ///
    /// [`Unresolved::Oversized`] when the document's budget is spent.
    pub(crate) fn defs(
        &mut self,
        object: &Map<String, Value>,
    ) -> Result<Option<Map<String, Value>>, Unresolved> {
        let mut used = BTreeSet::new();
        let mut added = Vec::new();
        let note =
            |members: &Map<String, Value>, used: &mut BTreeSet<String>, added: &mut Vec<String>| {
                if let Some(key) = members
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|reference| reference.strip_prefix(DEFS))
                    && self.defs.contains_key(key)
                    && used.insert(key.to_owned())
                {
                    added.push(key.to_owned());
                }
            };
        note(object, &mut used, &mut added);
        let mut stack: Vec<&Value> = object.values().collect();
        loop {
            while let Some(value) = stack.pop() {
                match value {
                    Value::Object(members) => {
                        note(members, &mut used, &mut added);
                        stack.extend(members.values());
                    }
                    Value::Array(items) => stack.extend(items),
                    _ => {}
                }
            }
            let Some(key) = added.pop() else {
                break;
            };
            if let Some(def) = self.defs.get(&key) {
                stack.push(def);
            }
        }
        if used.is_empty() {
            return Ok(None);
        }
        let mut defs = Map::new();
        for key in used {
            if let Some(def) = self.defs.get(&key) {
                let def = def.clone();
                self.budget.keep(&def)?;
                defs.insert(key, def);
            }
        }
        Ok(Some(defs))
    }
}

/// Where a `$ref` into the published schema's `$defs` starts.
const DEFS: &str = "#/$defs/";

/// The `$defs` name of each `$ref` met: the last part of its pointer (`Pet` for
/// `#/components/schemas/Pet`), made safe to write in a `$ref` without escapes, and numbered
/// when two pointers end alike.
#[derive(Debug, Default)]
struct Names<'a> {
    keys: HashMap<&'a str, String>,
    taken: HashSet<String>,
    /// The next number to try after each name, so many alike cost no search.
    numbers: HashMap<String, usize>,
}

impl<'a> Names<'a> {
    /// The name of `reference`, and whether it is new.
    fn of(&mut self, reference: &'a str) -> (String, bool) {
        if let Some(key) = self.keys.get(reference) {
            return (key.clone(), false);
        }
        let last = reference.rsplit('/').next().unwrap_or_default();
        let mut name: String = last
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if name.is_empty() {
            name.push_str("schema");
        }
        let mut key = name.clone();
        while self.taken.contains(&key) {
            let number = self.numbers.entry(name.clone()).or_insert(2);
            key = format!("{name}_{number}");
            *number += 1;
        }
        self.taken.insert(key.clone());
        self.keys.insert(reference, key.clone());
        (key, true)
    }
}

/// Why an expansion in place stopped.
enum Stop {
    Problem(String),
    /// It grew past its limit.
    Full,
}

impl From<String> for Stop {
    fn from(message: String) -> Self {
        Self::Problem(message)
    }
}

/// An expansion in place, making at most `left` more values.
struct InPlace<'a> {
    root: &'a Value,
    trail: Vec<&'a str>,
    left: usize,
}

impl<'a> InPlace<'a> {
    fn resolve(&mut self, value: &'a Value, nesting: usize) -> Result<Value, Stop> {
        self.left = self.left.checked_sub(1).ok_or(Stop::Full)?;
        if nesting > MAX_NESTING {
            return Err(Stop::Problem(too_deep()));
        }
        match value {
            Value::Object(object) => {
                if let Some(Value::String(reference)) = object.get("$ref") {
                    if self.trail.contains(&reference.as_str()) || self.trail.len() >= MAX_DEPTH {
                        return Ok(Value::Object(Map::new()));
                    }
                    let target = pointed(self.root, reference)?;
                    self.trail.push(reference);
                    let mut resolved = self.resolve(target, nesting + 1)?;
                    self.trail.pop();
                    if let Value::Object(resolved) = &mut resolved {
                        for (key, sibling) in object {
                            if key != "$ref" {
                                resolved.insert(key.clone(), self.resolve(sibling, nesting + 1)?);
                            }
                        }
                    }
                    return Ok(resolved);
                }
                let mut out = Map::with_capacity(object.len());
                for (key, member) in object {
                    out.insert(key.clone(), self.resolve(member, nesting + 1)?);
                }
                modernize(&mut out);
                Ok(Value::Object(out))
            }
            Value::Array(items) => items
                .iter()
                .map(|item| self.resolve(item, nesting + 1))
                .collect::<Result<_, _>>()
                .map(Value::Array),
            other => Ok(other.clone()),
        }
    }
}

/// An expansion that keeps what `$ref`s point at in `$defs`: `$ref`s at the top are
/// followed (a parameter, a request body or a response is one), the others become
/// `#/$defs/NAME` and their targets `pending`.
struct Walk<'a, 'n> {
    root: &'a Value,
    left: usize,
    /// The `$ref`s followed at the top, to stop at one that leads back to itself.
    root_trail: Vec<&'a str>,
    names: &'n mut Names<'a>,
    pending: Vec<(String, &'a str)>,
}

impl<'a> Walk<'a, '_> {
    fn resolve(
        &mut self,
        value: &'a Value,
        nesting: usize,
        top: bool,
    ) -> Result<Value, Unresolved> {
        self.left = self.left.checked_sub(1).ok_or(Unresolved::Oversized)?;
        if nesting > MAX_NESTING {
            return Err(Unresolved::Problem(too_deep()));
        }
        match value {
            Value::Object(object) => {
                if let Some(Value::String(reference)) = object.get("$ref") {
                    let target = pointed(self.root, reference)?;
                    let mut resolved = if top
                        && !self.root_trail.contains(&reference.as_str())
                        && self.root_trail.len() < MAX_DEPTH
                    {
                        self.root_trail.push(reference);
                        let resolved = self.resolve(target, nesting + 1, true)?;
                        self.root_trail.pop();
                        resolved
                    } else {
                        let (key, new) = self.names.of(reference);
                        if new {
                            self.pending.push((key.clone(), reference));
                        }
                        let mut out = Map::new();
                        out.insert("$ref".into(), Value::String(format!("{DEFS}{key}")));
                        Value::Object(out)
                    };
                    if let Value::Object(resolved) = &mut resolved {
                        for (key, sibling) in object {
                            if key != "$ref" {
                                let sibling = self.resolve(sibling, nesting + 1, false)?;
                                resolved.insert(key.clone(), sibling);
                            }
                        }
                    }
                    return Ok(resolved);
                }
                let mut out = Map::with_capacity(object.len());
                for (key, member) in object {
                    out.insert(key.clone(), self.resolve(member, nesting + 1, false)?);
                }
                modernize(&mut out);
                Ok(Value::Object(out))
            }
            Value::Array(items) => items
                .iter()
                .map(|item| self.resolve(item, nesting + 1, false))
                .collect::<Result<_, _>>()
                .map(Value::Array),
            other => Ok(other.clone()),
        }
    }
}

fn too_deep() -> String {
    format!("its schemas nest deeper than {MAX_NESTING} levels (`$ref`s followed); flatten them")
}

/// What the local reference `reference` (`#/components/schemas/Pet`) points at in `root`.
///
/// # Errors
///
/// The reference, when it is not local or points at nothing.
pub(crate) fn pointed<'a>(root: &'a Value, reference: &str) -> Result<&'a Value, String> {
    let Some(pointer) = reference.strip_prefix('#') else {
        return Err(format!(
            "`$ref: {reference}` points into another document, which Toolsmith does not read; bundle the spec into one file (e.g. `redocly bundle`)"
        ));
    };
    root.pointer(pointer)
        .ok_or_else(|| format!("`$ref: {reference}` points at nothing in the document"))
}

/// A 3.0 schema object's keywords in their 2020-12 form. Only boolean `nullable` and
/// boolean bounds change, so a property that happens to be called `nullable` is left alone.
fn modernize(schema: &mut Map<String, Value>) {
    if let Some(Value::Bool(nullable)) = schema.get("nullable").cloned() {
        schema.remove("nullable");
        if nullable {
            match schema.get_mut("type") {
                Some(Value::String(kind)) => {
                    let kind = std::mem::take(kind);
                    schema.insert(
                        "type".into(),
                        Value::Array(vec![kind.into(), "null".into()]),
                    );
                }
                Some(Value::Array(kinds)) if !kinds.iter().any(|k| k == "null") => {
                    kinds.push("null".into());
                }
                _ => {}
            }
            if let Some(Value::Array(values)) = schema.get_mut("enum")
                && !values.contains(&Value::Null)
            {
                values.push(Value::Null);
            }
        }
    }
    for (exclusive, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if let Some(Value::Bool(flag)) = schema.get(exclusive).cloned() {
            schema.remove(exclusive);
            if flag && let Some(limit) = schema.remove(bound) {
                schema.insert(exclusive.into(), limit);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `value` resolved as one schema of a tool, with the `$defs` it refers to.
    fn resolve(root: &Value, value: &Value) -> Result<Value, Unresolved> {
        let mut budget = Budget::new();
        let mut expansion = Expansion::new(root, &mut budget);
        let resolved = expansion.resolve(value)?;
        let Value::Object(mut resolved) = expansion.unwrapped(resolved)? else {
            panic!("an object")
        };
        if let Some(defs) = expansion.defs(&resolved)? {
            resolved.insert("$defs".into(), Value::Object(defs));
        }
        Ok(Value::Object(resolved))
    }

    /// Schema `L{levels}` refers twice to `L{levels - 1}`, which refers twice to the one
    /// below, down to `L0`: 2^levels copies of `L0` when expanded in place.
    fn doubling(levels: usize) -> Value {
        let mut schemas = Map::new();
        schemas.insert("L0".into(), json!({"type": "string", "maxLength": 3}));
        for level in 1..=levels {
            let below = format!("#/components/schemas/L{}", level - 1);
            schemas.insert(
                format!("L{level}"),
                json!({"type": "object", "properties": {
                    "a": {"$ref": below}, "b": {"$ref": below},
                }}),
            );
        }
        json!({"components": {"schemas": schemas}})
    }

    // A 3.4 KB document whose `$ref`s double 24 times was expanded in full: 20 levels
    // took 2.75 GB, 24 aborted `serve` and `list`.
    #[test]
    fn a_doubling_ref_keeps_each_schema_once_in_defs() {
        let root = doubling(24);
        let resolved = resolve(&root, &json!({"$ref": "#/components/schemas/L24"})).unwrap();
        assert_eq!(resolved["properties"]["a"], json!({"$ref": "#/$defs/L23"}));
        let defs = resolved["$defs"].as_object().unwrap();
        assert_eq!(defs.len(), 24, "L0 to L23, each once");
        assert_eq!(defs["L1"]["properties"]["b"], json!({"$ref": "#/$defs/L0"}));
        assert!(size(vec![&resolved], usize::MAX) < 1000);
        // The schema still validates what it describes.
        let Value::Object(schema) = resolved else {
            panic!("an object")
        };
        let validator = toolsmith_model::compile_schema(&schema).unwrap();
        let mut good = json!("abc");
        let mut bad = json!("abcd");
        for _ in 0..24 {
            good = json!({"a": good});
            bad = json!({"b": bad});
        }
        assert!(validator.is_valid(&good));
        assert!(!validator.is_valid(&bad));
    }

    #[test]
    fn a_small_schema_is_expanded_in_place() {
        let resolved = resolve(&doubling(4), &json!({"$ref": "#/components/schemas/L4"})).unwrap();
        assert!(resolved.get("$defs").is_none(), "{resolved}");
        assert_eq!(
            resolved["properties"]["a"]["properties"]["b"]["properties"]["a"]["properties"]["b"],
            json!({"type": "string", "maxLength": 3})
        );
    }

    #[test]
    fn a_document_past_its_budget_is_oversized() {
        // Each schema is too big to expand in place and keeps `Big` in its `$defs`: many
        // of them are more than one document may keep.
        let properties: Map<String, Value> = (0..INLINE_LIMIT)
            .map(|index| (format!("p{index}"), json!({"type": "string"})))
            .collect();
        let root = json!({"components": {"schemas": {"Big": {"properties": properties}}}});
        let reference = json!({"type": "array", "items": {"$ref": "#/components/schemas/Big"}});
        let mut budget = Budget::new();
        let mut kept = 0;
        let outcome = loop {
            let mut expansion = Expansion::new(&root, &mut budget);
            let resolved = match expansion.resolve(&reference) {
                Ok(resolved) => resolved,
                Err(error) => break error,
            };
            let Value::Object(mut resolved) = resolved else {
                panic!("an object")
            };
            match expansion.defs(&resolved) {
                Ok(defs) => resolved.insert("$defs".into(), Value::Object(defs.unwrap())),
                Err(error) => break error,
            };
            if let Err(error) = budget.keep_object(&resolved) {
                break error;
            }
            kept += 1;
            assert!(kept < 1000, "never oversized");
        };
        assert_eq!(outcome, Unresolved::Oversized);
        assert!(kept > 10, "{kept}");
    }

    #[test]
    fn refs_resolve_and_nullable_becomes_a_null_type() {
        let root = json!({"components": {"schemas": {
            "Pet": {"type": "object", "properties": {
                "name": {"type": "string"},
                "tag": {"type": "string", "nullable": true},
                "owner": {"$ref": "#/components/schemas/Owner"},
            }},
            "Owner": {"type": "object", "properties": {"age": {
                "type": "integer", "minimum": 0, "exclusiveMinimum": true,
            }}},
        }}});
        let resolved = resolve(&root, &json!({"$ref": "#/components/schemas/Pet"})).unwrap();
        assert_eq!(
            resolved["properties"]["tag"],
            json!({"type": ["string", "null"]})
        );
        assert_eq!(
            resolved["properties"]["owner"]["properties"]["age"],
            json!({"type": "integer", "exclusiveMinimum": 0})
        );
    }

    #[test]
    fn a_recursive_ref_stops_at_itself() {
        let root = json!({"components": {"schemas": {"Node": {
            "type": "object",
            "properties": {"child": {"$ref": "#/components/schemas/Node"}},
        }}}});
        let resolved = resolve(&root, &json!({"$ref": "#/components/schemas/Node"})).unwrap();
        assert_eq!(resolved["properties"]["child"], json!({}));
    }

    #[test]
    fn external_and_dangling_refs_are_named() {
        let root = json!({});
        let Unresolved::Problem(error) =
            resolve(&root, &json!({"$ref": "other.yaml#/Pet"})).unwrap_err()
        else {
            panic!("a problem")
        };
        assert!(error.contains("another document"), "{error}");
        let Unresolved::Problem(error) =
            resolve(&root, &json!({"$ref": "#/components/schemas/Nope"})).unwrap_err()
        else {
            panic!("a problem")
        };
        assert!(error.contains("points at nothing"), "{error}");
    }
}
