//! A tool's published JSON Schema, held as its compact JSON text and parsed only where a
//! call or a listing needs the object.
//!
//! A schema as a `serde_json` object is an ordered map per object and a string per key:
//! about 6 KB for a schema whose text is 600 bytes. A folder of thousands of tools holds
//! every one of them, and uses few: `tools/list` of a folder behind `tool_search` lists
//! two, a server validates the arguments of the tools it calls. So a definition holds the
//! text, which `tools/list`, `tool_search` and `[search] mode = "auto"` read as it is, and
//! the object is parsed once, and kept, by what needs it for good (a tool's validator, its
//! listed rmcp `Tool`); everything that only reads a schema once parses a copy it drops
//! (docs/performance.md).

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::json::JsonObject;

/// A JSON Schema object as its compact JSON text, cheap to clone (shared).
///
/// Two schemas are equal when their texts are: the text is written from the object in its
/// keys' order, so equal objects in the same order have equal texts.
#[derive(Clone)]
pub struct Schema(Arc<Held>);

struct Held {
    text: Box<str>,
    /// Written only with keywords that surely compile (`is_plain_object`),
    /// decided while the object was at hand.
    plain: bool,
    object: OnceLock<Arc<JsonObject>>,
}

impl Schema {
    /// The schema of `object`, held as its text (the object is dropped).
    pub fn new(object: &JsonObject) -> Self {
        // A `Map` of `Value`s always serializes.
        let text = serde_json::to_string(object).unwrap_or_else(|_| "{}".to_owned());
        Self(Arc::new(Held {
            text: text.into_boxed_str(),
            plain: is_plain_object(object),
            object: OnceLock::new(),
        }))
    }

    /// The schema of `object`, kept parsed too: for a schema whose object something holds
    /// anyway (an upstream server's listing).
    pub fn with_object(object: Arc<JsonObject>) -> Self {
        let schema = Self::new(&object);
        let _ = schema.0.object.set(object);
        schema
    }

    /// The schema's compact JSON text, as `tools/list` publishes it.
    pub fn text(&self) -> &str {
        &self.0.text
    }

    /// The schema as an object, parsed on first use and kept: for what holds it for the
    /// life of the definition (a validator, a listed tool). What reads a schema once uses
    /// [`Schema::to_object`].
    pub fn object(&self) -> &Arc<JsonObject> {
        self.0.object.get_or_init(|| Arc::new(self.parse()))
    }

    /// The schema as an object of its own, not kept.
    pub fn to_object(&self) -> JsonObject {
        match self.0.object.get() {
            Some(object) => (**object).clone(),
            None => self.parse(),
        }
    }

    /// The schema as a JSON value of its own (see [`Schema::to_object`]).
    pub fn to_value(&self) -> Value {
        Value::Object(self.to_object())
    }

    /// The value of one top-level keyword (`properties`, `type`), parsed from a copy.
    pub fn keyword(&self, keyword: &str) -> Option<Value> {
        match self.0.object.get() {
            Some(object) => object.get(keyword).cloned(),
            None => self.parse().remove(keyword),
        }
    }

    /// The names of the top-level properties (the tool's parameters) with their
    /// `description`s, in order, read from the text without building the rest of the
    /// object: what tool search indexes of every tool.
    pub fn parameters(&self) -> Vec<(String, Option<String>)> {
        serde_json::from_str::<parameters::Top>(&self.0.text)
            .map(|top| top.properties.0)
            .unwrap_or_default()
    }

    /// Whether the schema is written only with keywords that cannot fail to compile, so
    /// its validator need not be checked before its first use ([`crate::SchemaValidator`]).
    pub fn is_plain(&self) -> bool {
        self.0.plain
    }

    /// Whether the object has been parsed and kept ([`Schema::object`]).
    pub fn is_parsed(&self) -> bool {
        self.0.object.get().is_some()
    }

    fn parse(&self) -> JsonObject {
        serde_json::from_str(&self.0.text).expect("a schema's text was written from a JSON object")
    }
}

/// Reading only `properties` and each property's `description` out of a schema's text;
/// every other value is skipped without being built.
mod parameters {
    use std::fmt;
    use std::marker::PhantomData;

    use serde::Deserialize;
    use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};

    /// A schema's top level: its `properties`, if they are an object.
    #[derive(Deserialize)]
    pub(super) struct Top {
        #[serde(default)]
        pub(super) properties: Properties,
    }

    /// Property names with their descriptions, in order; anything but an object is none.
    #[derive(Default)]
    pub(super) struct Properties(pub(super) Vec<(String, Option<String>)>);

    /// A property's `description`, if it is a string and the property an object.
    #[derive(Default)]
    struct Description(Option<String>);

    /// What is read out of a JSON object; any other JSON value reads as the default.
    trait FromObject<'de>: Default {
        fn from_object<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
    }

    impl<'de> FromObject<'de> for Properties {
        fn from_object<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
            let mut entries = Vec::new();
            while let Some((name, Description(description))) = map.next_entry()? {
                entries.push((name, description));
            }
            Ok(Self(entries))
        }
    }

    impl<'de> FromObject<'de> for Description {
        fn from_object<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
            let mut description = None;
            while let Some(keyword) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if keyword == "description" {
                    description = map
                        .next_value::<serde_json::Value>()?
                        .as_str()
                        .map(str::to_owned);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(Self(description))
        }
    }

    impl<'de> Deserialize<'de> for Properties {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(ObjectOrDefault(PhantomData))
        }
    }

    impl<'de> Deserialize<'de> for Description {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(ObjectOrDefault(PhantomData))
        }
    }

    /// Reads a `T` out of an object, and skips any other value as `T::default()`.
    struct ObjectOrDefault<T>(PhantomData<T>);

    impl<'de, T: FromObject<'de>> Visitor<'de> for ObjectOrDefault<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::from_object(map)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(T::default())
        }
        fn visit_bool<E>(self, _: bool) -> Result<T, E> {
            Ok(T::default())
        }
        fn visit_i64<E>(self, _: i64) -> Result<T, E> {
            Ok(T::default())
        }
        fn visit_u64<E>(self, _: u64) -> Result<T, E> {
            Ok(T::default())
        }
        fn visit_f64<E>(self, _: f64) -> Result<T, E> {
            Ok(T::default())
        }
        fn visit_str<E>(self, _: &str) -> Result<T, E> {
            Ok(T::default())
        }
        fn visit_unit<E>(self) -> Result<T, E> {
            Ok(T::default())
        }
    }
}

impl From<JsonObject> for Schema {
    fn from(object: JsonObject) -> Self {
        Self::new(&object)
    }
}

impl From<&JsonObject> for Schema {
    fn from(object: &JsonObject) -> Self {
        Self::new(object)
    }
}

impl From<Arc<JsonObject>> for Schema {
    fn from(object: Arc<JsonObject>) -> Self {
        Self::new(&object)
    }
}

impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.text == other.0.text
    }
}

impl Eq for Schema {}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.text)
    }
}

impl fmt::Display for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.text)
    }
}

/// Whether `schema` surely compiles: it uses only keywords whose values are checked here
/// as strictly as the draft 2020-12 meta-schema checks them, and none that the compiler
/// does more with (`pattern` is a regular expression to compile, `$ref` a reference to
/// resolve, `$schema` picks another draft). The schemas Toolsmith builds from typed
/// parameters are plain; `params=` overlays usually are too, and so are the `anyOf`s of
/// optional parameters that Python servers publish.
pub(crate) fn is_plain(schema: &Value) -> bool {
    match schema {
        Value::Bool(_) => true,
        Value::Object(keywords) => is_plain_object(keywords),
        _ => false,
    }
}

fn is_plain_object(keywords: &JsonObject) -> bool {
    keywords
        .iter()
        .all(|(keyword, value)| is_plain_keyword(keyword, value))
}

fn is_plain_keyword(keyword: &str, value: &Value) -> bool {
    const TYPES: [&str; 7] = [
        "null", "boolean", "object", "array", "number", "string", "integer",
    ];
    let unique_strings = |items: &Vec<Value>, allowed: &dyn Fn(&str) -> bool| {
        items.iter().enumerate().all(|(index, item)| {
            item.as_str().is_some_and(allowed) && !items[..index].contains(item)
        })
    };
    match (keyword, value) {
        // Without format validation (off by default for draft 2020-12), any format name,
        // known or not, compiles to nothing.
        ("title" | "description" | "$comment" | "format", Value::String(_))
        | ("default" | "const", _)
        | ("deprecated" | "readOnly" | "writeOnly" | "uniqueItems", Value::Bool(_))
        | ("minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum", Value::Number(_))
        | ("examples", Value::Array(_)) => true,
        ("enum", Value::Array(items)) => !items.is_empty(),
        ("type", Value::String(name)) => TYPES.contains(&name.as_str()),
        ("type", Value::Array(names)) => {
            !names.is_empty() && unique_strings(names, &|name| TYPES.contains(&name))
        }
        ("multipleOf", Value::Number(number)) => number.as_f64().is_some_and(|f| f > 0.0),
        (
            "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties",
            Value::Number(number),
        ) => number.is_u64(),
        ("required", Value::Array(names)) => unique_strings(names, &|_| true),
        ("properties", Value::Object(properties)) => properties.values().all(is_plain),
        ("items" | "additionalProperties" | "not", schema) => is_plain(schema),
        ("anyOf" | "oneOf" | "allOf", Value::Array(schemas)) => {
            !schemas.is_empty() && schemas.iter().all(is_plain)
        }
        // The drafts under which every keyword above means what it says here (draft-04
        // has a boolean `exclusiveMinimum`); zod-generated schemas name draft-07.
        ("$schema", Value::String(uri)) => matches!(
            uri.trim_end_matches('#'),
            "http://json-schema.org/draft-07/schema"
                | "http://json-schema.org/draft-06/schema"
                | "https://json-schema.org/draft/2019-09/schema"
                | "https://json-schema.org/draft/2020-12/schema"
        ),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: &Value) -> JsonObject {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn the_text_is_compact_json_in_the_keys_order_and_parses_back() {
        let original =
            object(&json!({"type": "object", "properties": {"z": {}, "a": {"type": "integer"}}}));
        let schema = Schema::new(&original);
        assert_eq!(
            schema.text(),
            r#"{"type":"object","properties":{"z":{},"a":{"type":"integer"}}}"#
        );
        assert!(!schema.is_parsed());
        assert_eq!(schema.to_object(), original);
        assert_eq!(schema.keyword("type"), Some(json!("object")));
        assert!(!schema.is_parsed(), "reading a copy keeps nothing");
        assert_eq!(**schema.object(), original);
        assert!(schema.is_parsed());
    }

    #[test]
    fn parameters_are_read_in_order_with_their_descriptions_whatever_the_rest_is() {
        let text = json!({"type": "object", "$defs": {"x": [1, {"a": null}]},
            "properties": {"city": {"type": "string", "description": "City name", "enum": ["a"]},
                           "flag": true,
                           "days": {"description": 3, "anyOf": [{"type": "integer"}]},
                           "note": {"title": "t", "description": "A \"quoted\" note"}}});
        let expected = vec![
            ("city".to_owned(), Some("City name".to_owned())),
            ("flag".to_owned(), None),
            ("days".to_owned(), None),
            ("note".to_owned(), Some("A \"quoted\" note".to_owned())),
        ];
        let schema = Schema::new(&object(&text));
        assert_eq!(schema.parameters(), expected);
        assert!(!schema.is_parsed());
        schema.object();
        assert_eq!(
            schema.parameters(),
            expected,
            "the same from the parsed object"
        );
        for odd in [
            json!({}),
            json!({"properties": [1]}),
            json!({"properties": "x"}),
        ] {
            assert_eq!(Schema::new(&object(&odd)).parameters(), vec![]);
        }
    }

    #[test]
    fn schemas_are_equal_when_their_texts_are() {
        let a = Schema::new(&object(&json!({"type": "object"})));
        let b = Schema::new(&object(&json!({"type": "object"})));
        let c = Schema::new(&object(&json!({"type": "object", "required": []})));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, a.clone());
    }
}
