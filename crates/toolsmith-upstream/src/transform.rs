//! Tool transformation (docs/gateway.md, "Wrapping an upstream tool"): a manifest with
//! `upstream = "NAME"` and `tool = "…"` publishes one upstream tool under its own name and
//! description, with parameters renamed, redescribed, given defaults or hidden. Here the
//! upstream's input schema becomes the published one, and an [`ArgumentMap`] remembers how
//! a call's arguments become the upstream's again.

use std::collections::BTreeMap;

use serde_json::Value;
use toolsmith_model::JsonObject;

/// What `[params.NAME]` of a wrapping manifest changes about one upstream parameter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParameterChange {
    /// The name it is published under (`name = "…"`), when not the upstream's.
    pub name: Option<String>,
    /// `hide = true`: left out of the published schema, and always sent with its
    /// `default` (or not at all, when it has none).
    pub hide: bool,
    /// JSON Schema keywords laid over the upstream's (`description`, `default`, `enum`, …).
    pub keywords: JsonObject,
}

/// Why a wrapping manifest's `[params]` cannot apply to the upstream's tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransformError {
    /// `[params.NAME]` names a parameter the upstream's tool does not have.
    #[error("`{tool}` has no parameter `{parameter}`")]
    UnknownParameter {
        /// The upstream's tool, as published.
        tool: String,
        /// The parameter named.
        parameter: String,
        /// The parameters it has.
        known: Vec<String>,
    },
    /// A hidden parameter the upstream requires, with no value to send.
    #[error(
        "parameter `{parameter}` of `{tool}` is required, so hiding it needs a `default` to send"
    )]
    HiddenWithoutDefault {
        /// The upstream's tool, as published.
        tool: String,
        /// The parameter.
        parameter: String,
    },
    /// Two parameters would be published under one name.
    #[error(
        "parameter `{parameter}` cannot be published as `{name}`: another parameter has that name"
    )]
    NameTaken {
        /// The parameter renamed.
        parameter: String,
        /// The name asked for.
        name: String,
    },
}

/// How the arguments of a wrapped tool's call become the upstream tool's: renamed back,
/// missing ones given their defaults, hidden ones set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ArgumentMap {
    /// Published name → the upstream's, for the renamed parameters.
    renamed: Vec<(String, String)>,
    /// Sent when the call leaves them out, under the upstream's names.
    defaults: JsonObject,
    /// Always sent, whatever the call says (hidden parameters), under the upstream's names.
    fixed: JsonObject,
}

impl ArgumentMap {
    /// The upstream's arguments for a call of the wrapped tool with `arguments` (already
    /// valid for the published schema).
    pub fn apply(&self, arguments: &JsonObject) -> JsonObject {
        let mut sent = JsonObject::new();
        for (key, value) in arguments {
            let key = self
                .renamed
                .iter()
                .find(|(published, _)| published == key)
                .map_or(key, |(_, remote)| remote);
            sent.insert(key.clone(), value.clone());
        }
        for (key, value) in &self.defaults {
            if !sent.contains_key(key) {
                sent.insert(key.clone(), value.clone());
            }
        }
        for (key, value) in &self.fixed {
            sent.insert(key.clone(), value.clone());
        }
        sent
    }

    /// Whether the arguments go upstream as they came.
    pub fn is_identity(&self) -> bool {
        self.renamed.is_empty() && self.defaults.is_empty() && self.fixed.is_empty()
    }
}

/// The published input schema of `tool` (as the upstream lists it: `schema`) once
/// `changes` (by the upstream's parameter names) apply, and how a call's arguments map back.
///
/// # Errors
///
/// A change naming no parameter of the schema, a required parameter hidden without a
/// `default`, or two parameters published under one name.
pub fn transform(
    tool: &str,
    schema: &JsonObject,
    changes: &BTreeMap<String, ParameterChange>,
) -> Result<(JsonObject, ArgumentMap), TransformError> {
    let empty = JsonObject::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(|name| name.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    for parameter in changes.keys() {
        if !properties.contains_key(parameter) {
            return Err(TransformError::UnknownParameter {
                tool: tool.to_owned(),
                parameter: parameter.clone(),
                known: properties.keys().cloned().collect(),
            });
        }
    }
    let mut map = ArgumentMap::default();
    let mut published = JsonObject::new();
    for (parameter, property) in properties {
        let Some(change) = changes.get(parameter) else {
            published.insert(parameter.clone(), property.clone());
            continue;
        };
        let default = change.keywords.get("default");
        let is_required = required.contains(parameter);
        if change.hide {
            match default {
                Some(value) => {
                    map.fixed.insert(parameter.clone(), value.clone());
                }
                None if is_required => {
                    return Err(TransformError::HiddenWithoutDefault {
                        tool: tool.to_owned(),
                        parameter: parameter.clone(),
                    });
                }
                None => {}
            }
            required.retain(|name| name != parameter);
            continue;
        }
        let mut property = property.clone();
        if let Value::Object(keywords) = &mut property {
            keywords.extend(change.keywords.clone());
        } else {
            // `true` (anything) or `false` (nothing): the keywords are the schema now.
            property = Value::Object(change.keywords.clone());
        }
        if let Some(value) = default {
            map.defaults.insert(parameter.clone(), value.clone());
            required.retain(|name| name != parameter);
        }
        let name = change.name.clone().unwrap_or_else(|| parameter.clone());
        if name != *parameter {
            // Another parameter keeps that name, or another one is renamed to it.
            let kept = properties.contains_key(&name)
                && changes
                    .get(&name)
                    .is_none_or(|other| !other.hide && other.name.is_none());
            let taken = kept
                || changes.iter().any(|(other, change)| {
                    other != parameter && change.name.as_deref() == Some(name.as_str())
                });
            if taken {
                return Err(TransformError::NameTaken {
                    parameter: parameter.clone(),
                    name,
                });
            }
            for entry in &mut required {
                if entry == parameter {
                    entry.clone_from(&name);
                }
            }
            map.renamed.push((name.clone(), parameter.clone()));
        }
        published.insert(name, property);
    }
    let mut schema = schema.clone();
    schema.insert("properties".to_owned(), Value::Object(published));
    if required.is_empty() {
        schema.remove("required");
    } else {
        schema.insert(
            "required".to_owned(),
            Value::Array(required.into_iter().map(Value::String).collect()),
        );
    }
    Ok((schema, map))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> JsonObject {
        match value {
            Value::Object(object) => object,
            _ => unreachable!("an object literal"),
        }
    }

    fn issue_schema() -> JsonObject {
        object(json!({
            "type": "object",
            "properties": {
                "owner": {"type": "string"},
                "repo": {"type": "string"},
                "title": {"type": "string", "description": "The title."},
                "labels": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["owner", "repo", "title"],
        }))
    }

    #[test]
    fn hidden_defaulted_and_renamed_parameters_publish_and_map_back() {
        let changes = BTreeMap::from([
            (
                "owner".to_owned(),
                ParameterChange {
                    hide: true,
                    keywords: object(json!({"default": "acme"})),
                    ..ParameterChange::default()
                },
            ),
            (
                "labels".to_owned(),
                ParameterChange {
                    keywords: object(json!({"default": ["bug"]})),
                    ..ParameterChange::default()
                },
            ),
            (
                "title".to_owned(),
                ParameterChange {
                    name: Some("summary".to_owned()),
                    keywords: object(json!({"description": "What is broken."})),
                    ..ParameterChange::default()
                },
            ),
        ]);
        let (schema, map) = transform("github_create_issue", &issue_schema(), &changes).unwrap();
        assert_eq!(
            Value::Object(schema),
            json!({
                "type": "object",
                "properties": {
                    "repo": {"type": "string"},
                    "summary": {"type": "string", "description": "What is broken."},
                    "labels": {"type": "array", "items": {"type": "string"}, "default": ["bug"]},
                },
                "required": ["repo", "summary"],
            })
        );
        let sent = map.apply(&object(
            json!({"repo": "widgets", "summary": "it broke", "owner": "evil"}),
        ));
        assert_eq!(
            Value::Object(sent),
            json!({"repo": "widgets", "title": "it broke", "labels": ["bug"], "owner": "acme"})
        );
    }

    #[test]
    fn a_required_parameter_hidden_without_default_is_refused() {
        let changes = BTreeMap::from([(
            "repo".to_owned(),
            ParameterChange {
                hide: true,
                ..ParameterChange::default()
            },
        )]);
        assert_eq!(
            transform("t", &issue_schema(), &changes).unwrap_err(),
            TransformError::HiddenWithoutDefault {
                tool: "t".to_owned(),
                parameter: "repo".to_owned()
            }
        );
    }

    #[test]
    fn an_unknown_parameter_lists_the_known_ones() {
        let changes = BTreeMap::from([("titel".to_owned(), ParameterChange::default())]);
        let TransformError::UnknownParameter { known, .. } =
            transform("t", &issue_schema(), &changes).unwrap_err()
        else {
            panic!("an unknown parameter");
        };
        assert_eq!(known, ["owner", "repo", "title", "labels"]);
    }

    #[test]
    fn a_rename_onto_another_parameter_is_refused() {
        let changes = BTreeMap::from([(
            "title".to_owned(),
            ParameterChange {
                name: Some("repo".to_owned()),
                ..ParameterChange::default()
            },
        )]);
        assert!(matches!(
            transform("t", &issue_schema(), &changes),
            Err(TransformError::NameTaken { .. })
        ));
    }
}
