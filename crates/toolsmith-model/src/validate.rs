//! Argument validation: lenient scalar coercion, then JSON Schema 2020-12 validation that
//! reports every violation with its JSON path (SEP-1303: invalid arguments are a tool
//! execution error the model can repair, not a protocol error).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use serde_json::{Value, json};

use crate::definition::JsonObject;
use crate::held_schema::Schema;

/// An input schema that checks (and leniently coerces) call arguments.
pub struct ArgumentValidator {
    validator: SchemaValidator,
    /// What coercion reads of the schema, read at the first validation.
    shape: OnceLock<Shape>,
}

/// The top level of an input schema, as coercion and the unknown-argument check read it.
#[derive(Debug)]
struct Shape {
    /// Declared scalar type of each top-level property, for coercion.
    properties: Vec<(String, Coercion)>,
    /// Whether the schema rejects properties it does not declare.
    closed: bool,
}

impl fmt::Debug for ArgumentValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArgumentValidator")
            .field("shape", &self.shape.get())
            .finish_non_exhaustive()
    }
}

/// How a string argument may be turned into the declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coercion {
    None,
    Integer,
    Number,
    Boolean,
    /// An array whose items are of the given scalar kind.
    ArrayOf(Scalar),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scalar {
    Integer,
    Number,
    Boolean,
}

/// A schema that cannot be compiled.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid JSON Schema: {message}")]
pub struct SchemaError {
    /// What the schema compiler said.
    pub message: String,
}

/// Compiles a JSON Schema (draft 2020-12 unless it says otherwise) without network access.
pub fn compile_schema(schema: &JsonObject) -> Result<jsonschema::Validator, SchemaError> {
    compile_value(&Value::Object(schema.clone()))
}

fn compile_value(schema: &Value) -> Result<jsonschema::Validator, SchemaError> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(schema)
        .map_err(|error| SchemaError {
            message: error.to_string(),
        })
}

/// A JSON Schema validator, compiled on first use.
///
/// Compiling a schema runs a good part of the `jsonschema` crate (the draft 2020-12
/// meta-schema is compiled and checked first), which a server that has only just started
/// and answered `initialize` never needs: those code pages are most of its memory then.
/// A compiled validator is also many times the size of its schema. So no schema is
/// compiled until a call needs it; one that could fail to compile (one not written only
/// with plain keywords, `is_plain`) is checked by [`SchemaValidator::new`], so an invalid
/// one is still an error when the tool loads, and what that check compiled is not kept: a
/// folder of thousands of tools holds compiled validators only for the tools it called
/// (docs/performance.md).
///
/// Identical schemas share one compiled validator while any of them lives ([`shared`]),
/// and a schema checked once is not compiled again to be checked ([`check`]): a reload
/// checks only the schemas that changed, and a folder of many tools with the same schema
/// checks it once.
pub struct SchemaValidator {
    /// The schema, shared with the definition it belongs to (not a copy).
    schema: Schema,
    compiled: OnceLock<Result<Arc<jsonschema::Validator>, SchemaError>>,
}

/// The compiled validator of `schema`: the one a live [`SchemaValidator`] of an identical
/// schema already has, or a new one. Compiling happens outside the lock, so two threads
/// may both compile a schema first seen by both; either result is right.
fn shared(schema: &Schema) -> Result<Arc<jsonschema::Validator>, SchemaError> {
    /// Compiled validators by their schema's JSON text; dead entries are swept whenever
    /// the map has doubled since the last sweep.
    struct Shared {
        by_schema: HashMap<String, Weak<jsonschema::Validator>>,
        sweep_at: usize,
    }
    static SHARED: Mutex<Option<Shared>> = Mutex::new(None);
    let key = schema.text();
    let lock = || SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(found) = lock()
        .as_ref()
        .and_then(|shared| shared.by_schema.get(key)?.upgrade())
    {
        return Ok(found);
    }
    let compiled = Arc::new(compile_value(&schema.to_value())?);
    let mut guard = lock();
    let shared = guard.get_or_insert_with(|| Shared {
        by_schema: HashMap::new(),
        sweep_at: 1024,
    });
    shared
        .by_schema
        .insert(key.to_owned(), Arc::downgrade(&compiled));
    if shared.by_schema.len() >= shared.sweep_at {
        shared.by_schema.retain(|_, weak| weak.strong_count() > 0);
        shared.sweep_at = (shared.by_schema.len() * 2).max(1024);
    }
    Ok(compiled)
}

/// Whether `schema` compiles, compiling it unless a schema of the same JSON text was
/// checked before: what it compiles to is dropped, as most tools of a big folder are never
/// called (see [`SchemaValidator`]).
fn check(schema: &Schema) -> Result<(), SchemaError> {
    use std::collections::HashSet;
    use std::hash::{BuildHasher as _, RandomState};
    /// Hashes of the JSON texts of the schemas that compiled; a few bytes a schema, kept
    /// for the process's life.
    static COMPILES: OnceLock<(RandomState, Mutex<HashSet<u64>>)> = OnceLock::new();
    let (hasher, compiles) = COMPILES.get_or_init(Default::default);
    let known = || compiles.lock().unwrap_or_else(PoisonError::into_inner);
    let hash = hasher.hash_one(schema.text());
    if known().contains(&hash) {
        return Ok(());
    }
    compile_value(&schema.to_value())?;
    known().insert(hash);
    Ok(())
}

impl fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaValidator")
            .field("compiled", &self.is_compiled())
            .finish_non_exhaustive()
    }
}

impl SchemaValidator {
    /// A validator for `schema`, which is checked now unless it cannot fail to compile
    /// (`is_plain`) and compiled by its first use.
    ///
    /// # Errors
    ///
    /// The schema does not compile.
    pub fn new(schema: &Schema) -> Result<Self, SchemaError> {
        if !schema.is_plain() {
            check(schema)?;
        }
        Ok(Self {
            schema: schema.clone(),
            compiled: OnceLock::new(),
        })
    }

    /// The compiled validator, compiling the schema on first use.
    ///
    /// # Errors
    ///
    /// Only if a schema that compiled when it was checked did not compile after all, which
    /// compiling being deterministic rules out.
    pub fn compiled(&self) -> Result<&jsonschema::Validator, &SchemaError> {
        self.compiled
            .get_or_init(|| shared(&self.schema))
            .as_ref()
            .map(|validator| &**validator)
    }

    /// Whether the schema has been compiled yet.
    pub fn is_compiled(&self) -> bool {
        self.compiled.get().is_some()
    }
}

impl ArgumentValidator {
    /// An input schema's validator; the schema is compiled now unless it cannot fail to
    /// (see [`SchemaValidator`]).
    ///
    /// # Errors
    ///
    /// The schema does not compile.
    pub fn new(schema: &Schema) -> Result<Self, SchemaError> {
        Ok(Self {
            validator: SchemaValidator::new(schema)?,
            shape: OnceLock::new(),
        })
    }

    /// What coercion reads of the schema, read once.
    fn shape(&self) -> &Shape {
        self.shape.get_or_init(|| {
            let schema = self.validator.schema.to_object();
            let properties = schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|properties| {
                    properties
                        .iter()
                        .map(|(name, property)| (name.clone(), coercion_for(property)))
                        .collect()
                })
                .unwrap_or_default();
            let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
            Shape { properties, closed }
        })
    }

    /// Whether the schema has been compiled yet (see [`SchemaValidator`]).
    pub fn is_compiled(&self) -> bool {
        self.validator.is_compiled()
    }

    /// Coerces and validates `arguments`, returning the arguments the tool should get.
    ///
    /// `null` for an optional parameter counts as absent. Every violation is reported, each
    /// with the JSON path of the offending value.
    pub fn validate(&self, mut arguments: JsonObject) -> Result<JsonObject, ArgumentErrors> {
        let mut violations = Vec::new();
        let shape = self.shape();
        if shape.closed {
            let unknown: Vec<&String> = arguments
                .keys()
                .filter(|key| !shape.properties.iter().any(|(name, _)| name == *key))
                .collect();
            for key in unknown {
                let valid = shape
                    .properties
                    .iter()
                    .map(|(name, _)| format!("`{name}`"))
                    .collect::<Vec<_>>();
                let valid = if valid.is_empty() {
                    "none".to_owned()
                } else {
                    valid.join(", ")
                };
                violations.push(Violation {
                    path: format!("/{key}"),
                    message: format!("unknown argument `{key}`; valid arguments: {valid}"),
                });
            }
        }
        for (name, coercion) in &shape.properties {
            if let Some(value) = arguments.get_mut(name) {
                coerce(value, *coercion);
            }
        }
        // A null for an optional parameter means "not given".
        arguments.retain(|_, value| !value.is_null());
        let instance = Value::Object(arguments);
        let validator = self.validator.compiled().map_err(|error| ArgumentErrors {
            violations: vec![Violation {
                path: String::new(),
                message: error.to_string(),
            }],
        })?;
        for error in validator.iter_errors(&instance) {
            let path = error.instance_path().to_string();
            // Unknown top-level arguments were reported above, with the valid names; one
            // deeper down (an object argument's own `additionalProperties`) is reported here.
            if shape.closed
                && path.is_empty()
                && error.to_string().contains("Additional properties")
            {
                continue;
            }
            violations.push(Violation {
                path,
                message: error.to_string(),
            });
        }
        let Value::Object(arguments) = instance else {
            unreachable!("constructed as an object above")
        };
        if violations.is_empty() {
            Ok(arguments)
        } else {
            Err(ArgumentErrors { violations })
        }
    }
}

fn coercion_for(property: &Value) -> Coercion {
    let scalar = |schema: &Value| match schema.get("type").and_then(Value::as_str) {
        Some("integer") => Some(Scalar::Integer),
        Some("number") => Some(Scalar::Number),
        Some("boolean") => Some(Scalar::Boolean),
        _ => None,
    };
    match property.get("type").and_then(Value::as_str) {
        Some("integer") => Coercion::Integer,
        Some("number") => Coercion::Number,
        Some("boolean") => Coercion::Boolean,
        Some("array") => property
            .get("items")
            .and_then(scalar)
            .map_or(Coercion::None, Coercion::ArrayOf),
        _ => Coercion::None,
    }
}

fn coerce(value: &mut Value, coercion: Coercion) {
    match coercion {
        Coercion::None => {}
        Coercion::Integer => coerce_scalar(value, Scalar::Integer),
        Coercion::Number => coerce_scalar(value, Scalar::Number),
        Coercion::Boolean => coerce_scalar(value, Scalar::Boolean),
        Coercion::ArrayOf(scalar) => {
            if let Value::Array(items) = value {
                for item in items {
                    coerce_scalar(item, scalar);
                }
            }
        }
    }
}

/// Replaces a string that clearly encodes `scalar` with that value; leaves anything else.
fn coerce_scalar(value: &mut Value, scalar: Scalar) {
    let Value::String(text) = value else { return };
    let text = text.trim();
    let coerced = match scalar {
        Scalar::Integer => text.parse::<i64>().ok().map(Value::from),
        Scalar::Number => text.parse::<i64>().ok().map(Value::from).or_else(|| {
            text.parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(|f| json!(f))
        }),
        Scalar::Boolean => match text {
            "true" | "True" => Some(Value::Bool(true)),
            "false" | "False" => Some(Value::Bool(false)),
            _ => None,
        },
    };
    if let Some(coerced) = coerced {
        *value = coerced;
    }
}

/// One way the arguments break the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer to the offending value (`/days`, `/items/2`; empty for the whole object).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// Every violation found in one set of arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentErrors {
    /// The violations, in the order found.
    pub violations: Vec<Violation>,
}

impl fmt::Display for ArgumentErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid arguments:")?;
        for violation in &self.violations {
            let path = if violation.path.is_empty() {
                "(arguments)"
            } else {
                violation.path.as_str()
            };
            write!(f, "\n- {path}: {}", violation.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ArgumentErrors {}

impl ArgumentErrors {
    /// The violations as JSON (`[{"path", "message"}]`), kept as structured content.
    pub fn to_json(&self) -> Value {
        self.violations
            .iter()
            .map(|v| json!({"path": v.path, "message": v.message}))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::held_schema::is_plain;
    use crate::schema::{ParamType, Parameter, input_schema};

    /// Identical schemas compile once, and a shared validator still
    /// checks each tool's arguments.
    #[test]
    fn identical_schemas_share_one_compiled_validator() {
        let schema = |pattern: &str| {
            json!({"type": "object", "properties": {"code": {"type": "string", "pattern": pattern}}})
                .as_object()
                .cloned()
                .unwrap()
        };
        let first = SchemaValidator::new(&Schema::new(&schema("^[A-Z]{3}$"))).unwrap();
        let second = SchemaValidator::new(&Schema::new(&schema("^[A-Z]{3}$"))).unwrap();
        let other = SchemaValidator::new(&Schema::new(&schema("^[a-z]+$"))).unwrap();
        let (first, second, other) = (
            first.compiled().unwrap(),
            second.compiled().unwrap(),
            other.compiled().unwrap(),
        );
        assert!(std::ptr::eq(first, second));
        assert!(!std::ptr::eq(first, other));
        assert!(first.is_valid(&json!({"code": "ABC"})));
        assert!(!second.is_valid(&json!({"code": "abc"})));
        assert!(other.is_valid(&json!({"code": "abc"})));
    }

    fn validator() -> ArgumentValidator {
        let mut days = Parameter::new("days", ParamType::Integer);
        days.required = false;
        days.extra.insert("minimum".into(), json!(1));
        days.extra.insert("maximum".into(), json!(7));
        let mut flags = Parameter::new(
            "flags",
            ParamType::Array(Some(Box::new(ParamType::Boolean))),
        );
        flags.required = false;
        let schema = input_schema(&[Parameter::new("city", ParamType::String), days, flags]);
        ArgumentValidator::new(&Schema::new(&schema)).unwrap()
    }

    fn args(value: &Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn scalar_strings_are_coerced() {
        let valid = validator()
            .validate(args(
                &json!({"city": "Oslo", "days": " 5", "flags": ["true", false]}),
            ))
            .unwrap();
        assert_eq!(
            Value::Object(valid),
            json!({"city": "Oslo", "days": 5, "flags": [true, false]})
        );
    }

    #[test]
    fn non_numeric_string_is_a_violation_not_a_coercion() {
        let errors = validator()
            .validate(args(&json!({"city": "Oslo", "days": "five"})))
            .unwrap_err();
        assert_eq!(errors.violations.len(), 1);
        assert_eq!(errors.violations[0].path, "/days");
    }

    #[test]
    fn every_violation_is_reported_with_its_path() {
        let errors = validator()
            .validate(args(&json!({"days": 9, "flags": [1], "cty": "x"})))
            .unwrap_err();
        let paths: Vec<&str> = errors.violations.iter().map(|v| v.path.as_str()).collect();
        assert!(paths.contains(&"/cty"), "{paths:?}");
        assert!(paths.contains(&"/days"), "{paths:?}");
        assert!(paths.contains(&"/flags/0"), "{paths:?}");
        assert!(paths.contains(&""), "missing required `city`: {paths:?}");
        insta::assert_snapshot!(errors.to_string());
    }

    // Regression test, found by fuzzing (`schema_validate`): with a closed top level,
    // every "Additional properties" error was dropped as already reported, so unknown keys
    // inside an object argument passed validation.
    #[test]
    fn unknown_keys_inside_an_object_argument_are_violations() {
        let mut options = Parameter::new("options", ParamType::Object);
        options
            .extra
            .insert("properties".into(), json!({"depth": {"type": "integer"}}));
        options
            .extra
            .insert("additionalProperties".into(), json!(false));
        let validator = ArgumentValidator::new(&Schema::new(&input_schema(&[options]))).unwrap();
        let errors = validator
            .validate(args(&json!({"options": {"depth": 1, "bogus": 2}})))
            .unwrap_err();
        let paths: Vec<&str> = errors.violations.iter().map(|v| v.path.as_str()).collect();
        assert_eq!(paths, ["/options"], "{errors}");
    }

    #[test]
    fn null_for_optional_means_absent() {
        let valid = validator()
            .validate(args(&json!({"city": "Oslo", "days": null})))
            .unwrap();
        assert_eq!(Value::Object(valid), json!({"city": "Oslo"}));
    }

    fn object(value: &Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn a_plain_schema_is_compiled_by_its_first_use() {
        let validator = validator();
        assert!(!validator.is_compiled());
        assert!(validator.validate(args(&json!({"city": "Oslo"}))).is_ok());
        assert!(validator.is_compiled());
    }

    #[test]
    fn plain_schemas_compile() {
        // What `is_plain` accepts must compile: these are compiled lazily, with no load-time
        // error to fall back on.
        let schemas = [
            json!({}),
            json!({"type": ["string", "null"], "title": "t", "$comment": "c", "deprecated": true}),
            json!({"type": "number", "minimum": -1.5, "exclusiveMaximum": 10, "multipleOf": 0.5}),
            json!({"type": "string", "minLength": 0, "maxLength": 3, "enum": ["a", 1, null]}),
            json!({"type": "array", "items": {"type": "integer"}, "minItems": 1, "uniqueItems": true}),
            json!({"type": "object", "properties": {"a": true, "b": {"const": {"x": 1}}},
                   "required": ["a"], "additionalProperties": false, "maxProperties": 2,
                   "default": {}, "examples": [{"a": 1}], "readOnly": false}),
            json!({"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]}),
            json!({"oneOf": [{"type": "integer"}, {"format": "no-such-format"}],
                   "allOf": [true], "not": {"const": 3}}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                   "properties": {"when": {"type": "string", "format": "date"}},
                   "exclusiveMinimum": 1}),
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema"}),
        ];
        for schema in schemas {
            assert!(is_plain(&schema), "{schema}");
            assert!(compile_value(&schema).is_ok(), "{schema}");
        }
    }

    #[test]
    fn an_invalid_schema_is_an_error_at_once() {
        let schemas = [
            json!({"type": "integer", "minimum": "one"}),
            json!({"type": "strng"}),
            json!({"type": ["string", "string"]}),
            json!({"required": ["a", "a"]}),
            json!({"minLength": -1}),
            json!({"multipleOf": 0}),
            json!({"properties": {"a": {"type": "string", "pattern": "("}}}),
            json!({"items": {"$ref": "#/$defs/missing"}}),
            json!({"anyOf": []}),
            json!({"oneOf": [{"type": "strng"}]}),
            json!({"format": 1}),
        ];
        for schema in schemas {
            assert!(!is_plain(&schema), "{schema}");
            let error = SchemaValidator::new(&Schema::new(&object(&schema))).unwrap_err();
            assert!(!error.message.is_empty(), "{schema}");
        }
    }

    // A folder of thousands of tools held a compiled validator for
    // every schema that was not plain (about 6 KB each), called or not.
    #[test]
    fn a_schema_with_other_keywords_is_checked_at_once_and_compiled_by_its_first_use() {
        let schema = json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "^[a-z]+$"}}});
        let validator = ArgumentValidator::new(&Schema::new(&object(&schema))).unwrap();
        assert!(!validator.is_compiled());
        let errors = validator
            .validate(args(&json!({"code": "ABC"})))
            .unwrap_err();
        assert_eq!(errors.violations[0].path, "/code");
        assert!(validator.is_compiled());
        // Checked again (the same text): still an error for an invalid one.
        let invalid = json!({"type": "string", "pattern": "("});
        assert!(SchemaValidator::new(&Schema::new(&object(&invalid))).is_err());
        assert!(SchemaValidator::new(&Schema::new(&object(&invalid))).is_err());
    }
}
