//! The catalog: the tools a server offers, each with its schema validators, and the one call
//! path every caller uses (`toolsmith call`, `toolsmith test`, the MCP server):
//! look up → coerce and validate → run → apply the result contract → check the output.

mod entry;

use std::sync::Arc;

use serde_json::{Value, json};

use crate::definition::{Init, JsonObject, SourceLocation, ToolDefinition};
use crate::diagnostic::{Diagnostic, Severity};
use crate::init::{InitSummary, LazyInit};
use crate::names::{did_you_mean, suggestion_suffix};
use crate::outcome::CallOutcome;
use crate::tool::{CallContext, Tool};

pub use entry::CatalogEntry;

/// A call to a tool the catalog does not have (JSON-RPC `-32602` on the wire).
///
/// When the folder defined a tool of that name and left it out, the message says why
/// instead: "tool `needs_key` is hidden: environment variable `API_KEY` is not set", "tool
/// `js` failed to load: js.toml:3:1: ...".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .reason.clone().unwrap_or_else(|| format!("unknown tool `{}`{}", .name, suggestion_suffix(.suggestions))))]
pub struct UnknownTool {
    /// The name asked for.
    pub name: String,
    /// Close names, best first.
    pub suggestions: Vec<String>,
    /// Why a tool of that name is not in the catalog, when one was defined.
    pub reason: Option<String>,
}

/// Why `diagnostic` keeps its tool `name` out of a catalog, for [`UnknownTool`].
fn absence(name: &str, diagnostic: &Diagnostic) -> String {
    match diagnostic.severity {
        // Not a failure: the tool is hidden on purpose, and the message says so.
        Severity::Info => diagnostic.message.clone(),
        Severity::Warning | Severity::Error => format!(
            "tool `{name}` failed to load: {}: {}",
            diagnostic.location, diagnostic.message
        ),
    }
}

fn duplicate_name(name: &str, source: &SourceLocation, first: &SourceLocation) -> Diagnostic {
    Diagnostic::error(
        "duplicate-tool-name",
        source.clone(),
        format!("tool `{name}` is already defined at {first}"),
    )
    .with_help("rename one of the two tools; tool names must be unique in a server")
}

/// The `invalid-tool-name` error for a tool named as clients refuse, with the message and
/// help `toolsmith check` gives; `None` for a good name.
fn refused_name(name: &str, source: &SourceLocation) -> Option<Diagnostic> {
    let message = crate::names::tool_name_problem(name)?;
    Some(
        Diagnostic::error("invalid-tool-name", source.clone(), message)
            .with_help(crate::names::TOOL_NAME_HELP)
            .for_tool(name),
    )
}

/// The tools of a folder (or of an embedding program), by name, plus what failed to load.
#[derive(Default)]
pub struct Catalog {
    /// Sorted by tool name: the stable order of `tools/list`.
    /// Names are unique; [`Catalog::get`] finds one by binary search (a map of copied
    /// names cost a reload of thousands of tools as much as the rest of building it).
    entries: Vec<CatalogEntry>,
    diagnostics: Vec<Diagnostic>,
}

/// Whether the builder would adjust a kept tool's definition as it did before
/// ([`Catalog::rebuild`]).
type Unchanged<'a> = &'a dyn Fn(&ToolDefinition) -> bool;

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field(
                "tools",
                &self
                    .entries
                    .iter()
                    .map(CatalogEntry::name)
                    .collect::<Vec<_>>(),
            )
            .field("diagnostics", &self.diagnostics)
            .finish_non_exhaustive()
    }
}

impl Catalog {
    /// Builds a catalog from loaded tools and the diagnostics of what failed to load.
    ///
    /// A tool whose schemas do not compile, whose name was already taken, or whose name
    /// clients refuse (outside `[A-Za-z0-9_.-]{1,128}`: some reject the whole server for
    /// it) is left out with a diagnostic; the others are unaffected.
    pub fn new(tools: Vec<Arc<dyn Tool>>, diagnostics: Vec<Diagnostic>) -> Self {
        Self::build(tools, diagnostics, |_| Ok(()))
    }

    /// Like [`Catalog::new`], with `adjust` applied to each published definition first
    /// (the folder loader resolves icon files and default timeouts this way). A tool whose
    /// adjustment fails is left out with the returned diagnostic.
    pub fn build(
        tools: Vec<Arc<dyn Tool>>,
        diagnostics: Vec<Diagnostic>,
        adjust: impl Fn(&mut ToolDefinition) -> Result<(), Diagnostic>,
    ) -> Self {
        Self::build_keeping(tools, diagnostics, adjust, None)
    }

    /// [`Catalog::build`], keeping what `previous` prepared for a tool that is the same one
    /// (the same `Arc`, as a reload keeps for a file that did not change) and publishes the
    /// same definition: its entry, validators and measured length are reused, so a reload
    /// prepares only what changed (docs/performance.md). A kept tool for which `unchanged`
    /// says `adjust` would do what it did when `previous` was built is not even adjusted
    /// again (the folder's settings did not change): a reload of thousands of tools copied
    /// every definition to adjust and compare it.
    pub fn rebuild(
        tools: Vec<Arc<dyn Tool>>,
        diagnostics: Vec<Diagnostic>,
        adjust: impl Fn(&mut ToolDefinition) -> Result<(), Diagnostic>,
        previous: &Self,
        unchanged: impl Fn(&ToolDefinition) -> bool,
    ) -> Self {
        Self::build_keeping(tools, diagnostics, adjust, Some((previous, &unchanged)))
    }

    fn build_keeping(
        tools: Vec<Arc<dyn Tool>>,
        mut diagnostics: Vec<Diagnostic>,
        adjust: impl Fn(&mut ToolDefinition) -> Result<(), Diagnostic>,
        previous: Option<(&Self, Unchanged<'_>)>,
    ) -> Self {
        let mut entries: Vec<CatalogEntry> = Vec::with_capacity(tools.len());
        // Where each name taken so far is defined, borrowed from the tools (a reload of
        // thousands of tools copied every name and location). Adjusting changes
        // neither. Hashed with FNV: short names, from the folder's own files.
        let mut taken: fnv::FnvHashMap<&str, &SourceLocation> =
            fnv::FnvHashMap::with_capacity_and_hasher(tools.len(), fnv::FnvBuildHasher::default());
        // The previous entries by their tool's address: a kept tool is the same `Arc`
        // (looking each one up by name was a tenth of a one-file reload).
        let by_tool: fnv::FnvHashMap<*const (), &CatalogEntry> = previous
            .map(|(previous, _)| {
                previous
                    .entries
                    .iter()
                    .map(|entry| (Arc::as_ptr(&entry.tool).cast::<()>(), entry))
                    .collect()
            })
            .unwrap_or_default();
        for tool in &tools {
            if let Some(deferred) = tool.deferred() {
                // Published as its folder read it: adjusted before it was deferred, and
                // read again adjusted (docs/performance.md, "Tools not held").
                let name = tool.name();
                if let Some(refused) = refused_name(name, deferred.source()) {
                    diagnostics.push(refused);
                    continue;
                }
                if let Some(first) = taken.get(name) {
                    diagnostics.push(duplicate_name(name, deferred.source(), first));
                    continue;
                }
                taken.insert(name, deferred.source());
                let kept = by_tool
                    .get(&Arc::as_ptr(tool).cast::<()>())
                    .filter(|entry| entry.name() == name);
                entries.push(match kept {
                    Some(entry) => entry.as_built(),
                    None => CatalogEntry::deferred(Arc::clone(tool), deferred),
                });
                continue;
            }
            let own = tool.definition();
            let previously = previous.and_then(|(_, unchanged)| {
                let entry = by_tool.get(&Arc::as_ptr(tool).cast::<()>())?;
                (entry.definition().name == own.name).then_some((*entry, unchanged))
            });
            if let Some((entry, _)) = previously.filter(|(_, unchanged)| unchanged(own)) {
                if let Some(first) = taken.get(own.name.as_str()) {
                    diagnostics.push(duplicate_name(&own.name, &own.source, first));
                } else {
                    taken.insert(&own.name, &own.source);
                    entries.push(entry.as_built());
                }
                continue;
            }
            let mut definition = own.clone();
            // Adjusted on a copy, kept only when it differs from the tool's own.
            if let Err(diagnostic) = adjust(&mut definition) {
                diagnostics.push(diagnostic.for_tool(&definition.name));
                continue;
            }
            if let Some(refused) = refused_name(&definition.name, &definition.source) {
                diagnostics.push(refused);
                continue;
            }
            if let Some(first) = taken.get(definition.name.as_str()) {
                diagnostics.push(duplicate_name(&definition.name, &definition.source, first));
                continue;
            }
            let kept = previously
                .map(|(entry, _)| entry)
                .filter(|entry| *entry.definition() == definition);
            if let Some(entry) = kept {
                taken.insert(&own.name, &own.source);
                entries.push(entry.as_built());
                continue;
            }
            let name = definition.name.clone();
            match CatalogEntry::new(definition, Arc::clone(tool)) {
                Ok(entry) => {
                    taken.insert(&own.name, &own.source);
                    entries.push(entry);
                }
                Err(diagnostic) => diagnostics.push(diagnostic.for_tool(name)),
            }
        }
        // The entries hold their own `Arc`s; `taken` borrowed the names from these.
        drop(tools);
        Self::sorted(entries, diagnostics)
    }

    /// A catalog of the same tools, their schemas not compiled again, each one
    /// `discoverable` as `discoverable` says of its entry (the one thing a derived catalog
    /// changes: discovery, a profile, code mode), plus `extra` tools prepared as
    /// [`Catalog::build`] does and `extra_diagnostics`. No definition is copied.
    ///
    /// An extra tool whose name is taken is left out with a `duplicate-tool-name`
    /// diagnostic.
    #[must_use]
    pub fn derive(
        &self,
        discoverable: impl Fn(&CatalogEntry) -> bool,
        extra: Vec<Arc<dyn Tool>>,
        extra_diagnostics: Vec<Diagnostic>,
    ) -> Self {
        let entries: Vec<CatalogEntry> = self
            .entries
            .iter()
            .map(|entry| entry.published_as(discoverable(entry)))
            .collect();
        self.joined(entries, extra, extra_diagnostics)
    }

    /// This catalog plus `extra` tools, as [`Catalog::derive`] without adjusting its own
    /// (a server's built-in tools join a reload this way without copying every definition
    /// of a big folder).
    #[must_use]
    pub fn with_tools(&self, extra: Vec<Arc<dyn Tool>>) -> Self {
        self.joined(self.entries.clone(), extra, Vec::new())
    }

    /// `entries` (this catalog's, adjusted) plus `extra` tools and `extra_diagnostics`.
    fn joined(
        &self,
        mut entries: Vec<CatalogEntry>,
        extra: Vec<Arc<dyn Tool>>,
        extra_diagnostics: Vec<Diagnostic>,
    ) -> Self {
        let mut diagnostics = self.diagnostics.clone();
        diagnostics.extend(extra_diagnostics);
        let added = Self::build(extra, Vec::new(), |_| Ok(()));
        diagnostics.extend(added.diagnostics);
        for entry in added.entries {
            if let Some(existing) = self.get(entry.name()) {
                let definition = entry.definition();
                diagnostics.push(duplicate_name(
                    &definition.name,
                    &definition.source,
                    &existing.definition().source,
                ));
            } else {
                entries.push(entry);
            }
        }
        Self::sorted(entries, diagnostics)
    }

    /// This catalog plus `kept` entries of another one, as that one published them (their
    /// schemas not compiled again); an entry whose name this catalog has is left out.
    ///
    /// A reload keeps this way what a file that broke defined before it broke.
    #[must_use]
    pub fn with_entries(&self, kept: impl IntoIterator<Item = CatalogEntry>) -> Self {
        let mut entries = self.entries.clone();
        entries.extend(
            kept.into_iter()
                .filter(|entry| self.get(entry.name()).is_none()),
        );
        Self::sorted(entries, self.diagnostics.clone())
    }

    /// The entries whose published definition `keep` accepts, as this catalog published
    /// them (their schemas not compiled again), with all of its diagnostics.
    ///
    /// A profile (docs/profiles.md) serves a folder's tools this way.
    #[must_use]
    pub fn selected(&self, keep: impl Fn(&ToolDefinition) -> bool) -> Self {
        let entries = self
            .entries
            .iter()
            .filter(|entry| keep(&entry.definition_once()))
            .cloned()
            .collect();
        Self::sorted(entries, self.diagnostics.clone())
    }

    fn sorted(mut entries: Vec<CatalogEntry>, diagnostics: Vec<Diagnostic>) -> Self {
        let by_name = |a: &CatalogEntry, b: &CatalogEntry| a.name().cmp(b.name());
        // A reload's entries mostly come in the order of the catalog it replaces.
        if !entries.is_sorted_by(|a, b| by_name(a, b).is_le()) {
            entries.sort_by(by_name);
        }
        Self {
            entries,
            diagnostics,
        }
    }

    /// The tools, sorted by name.
    pub fn entries(&self) -> &[CatalogEntry] {
        &self.entries
    }

    /// The tool definitions, sorted by name. Each [`Deferred`](crate::Deferred) tool's file
    /// is read and the tool held: a walk over every tool uses
    /// [`Catalog::definitions_once`].
    pub fn definitions(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.entries.iter().map(CatalogEntry::definition)
    }

    /// The tool definitions, sorted by name, for a walk that reads each once: a
    /// [`Deferred`](crate::Deferred) tool not held is read from its file and not kept
    /// ([`CatalogEntry::definition_once`]).
    pub fn definitions_once(&self) -> impl Iterator<Item = std::borrow::Cow<'_, ToolDefinition>> {
        self.entries.iter().map(CatalogEntry::definition_once)
    }

    /// What failed to load.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&CatalogEntry> {
        self.entries
            .binary_search_by(|entry| entry.name().cmp(name))
            .ok()
            .map(|index| &self.entries[index])
    }

    /// The tool called `name`, or an [`UnknownTool`] error with suggestions.
    ///
    /// A package's tool is also found by its qualified name, `publisher/package/tool`
    /// (docs/packages.md), which is how `toolsmith call` and `toolsmith test` may name it.
    pub fn lookup(&self, name: &str) -> Result<&CatalogEntry, UnknownTool> {
        let qualified = || {
            name.contains('/').then(|| {
                // A deferred tool is never a package's (docs/performance.md).
                self.entries.iter().find(|entry| {
                    entry.tool.deferred().is_none()
                        && entry
                            .definition()
                            .package
                            .as_ref()
                            .is_some_and(|origin| origin.qualified_name() == name)
                })
            })?
        };
        self.get(name).or_else(qualified).ok_or_else(|| {
            let suggestions = self.suggestions(name);
            let reason = self
                .diagnostics
                .iter()
                .find(|diagnostic| diagnostic.names_tool(name))
                .map(|diagnostic| absence(name, diagnostic))
                .or_else(|| {
                    // A problem that left out the tools of a prefix (an upstream that did
                    // not start) may be why: the message names it.
                    let diagnostic = self
                        .diagnostics
                        .iter()
                        .find(|diagnostic| diagnostic.keeps_out(name))?;
                    Some(format!(
                        "unknown tool `{name}`{}; a tool of that name may be among those left out by {}: {}",
                        suggestion_suffix(&suggestions),
                        diagnostic.location,
                        diagnostic.message
                    ))
                });
            UnknownTool {
                reason,
                name: name.to_owned(),
                suggestions,
            }
        })
    }

    /// Names close to `name`: qualified names of package tools when `name` is qualified,
    /// else published names.
    fn suggestions(&self, name: &str) -> Vec<String> {
        let known: Vec<String> = if name.contains('/') {
            self.entries
                .iter()
                .filter(|entry| entry.tool.deferred().is_none())
                .filter_map(|entry| entry.definition().qualified_name())
                .collect()
        } else {
            self.entries
                .iter()
                .map(|entry| entry.name().to_owned())
                .collect()
        };
        did_you_mean(name, known.iter().map(String::as_str))
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// Calls a tool by name.
    pub fn call(
        &self,
        name: &str,
        arguments: JsonObject,
        context: &CallContext,
    ) -> Result<CallOutcome, UnknownTool> {
        Ok(self.lookup(name)?.call(arguments, context))
    }

    /// The `{"tools": [...], "errors": [...]}` document of `toolsmith list --json`.
    pub fn to_json(&self) -> Value {
        json!({
            "tools": self.definitions().map(ToolDefinition::to_mcp).collect::<Vec<_>>(),
            "errors": self.diagnostics.iter().map(Diagnostic::to_json).collect::<Vec<_>>(),
        })
    }
}

// Written here, not beside `InitSummary`, so that the init module (which the `Tool` trait
// uses) does not reach up to the catalog.
impl InitSummary {
    /// The inits of `entries`, in the order their first tool comes, each once however many
    /// tools share it.
    pub fn of<'a>(entries: impl IntoIterator<Item = &'a CatalogEntry>) -> Vec<Self> {
        let mut found: Vec<(&Arc<LazyInit>, Self)> = Vec::new();
        for entry in entries {
            let Some(init) = entry.init() else {
                continue;
            };
            let definition = entry.definition();
            if let Some((_, summary)) = found.iter_mut().find(|(seen, _)| Arc::ptr_eq(seen, init)) {
                summary.tools.push(definition.name.clone());
                continue;
            }
            let kind = match definition.init {
                Some(Init::Command(_)) => "command",
                Some(Init::Function(_)) | None => "function",
            };
            found.push((
                init,
                Self {
                    label: init.label().to_owned(),
                    kind,
                    tools: vec![definition.name.clone()],
                    timeout: definition.effective_init_timeout(),
                    status: init.status(),
                },
            ));
        }
        found.into_iter().map(|(_, summary)| summary).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ending::OutcomeKind;
    use crate::outcome::ToolReturn;
    use crate::schema::{ParamType, Parameter, input_schema};
    use crate::tool::ToolFailure;

    struct Echo(ToolDefinition);

    impl Tool for Echo {
        fn definition(&self) -> &ToolDefinition {
            &self.0
        }

        fn call(&self, arguments: &JsonObject, _: &CallContext) -> Result<ToolReturn, ToolFailure> {
            Ok(ToolReturn::Text(
                Value::Object(arguments.clone()).to_string(),
            ))
        }
    }

    fn echo(name: &str, days: Value) -> Arc<dyn Tool> {
        let mut days_parameter = Parameter::new("days", ParamType::Integer);
        days_parameter.extra.insert("minimum".into(), days);
        let schema = input_schema(&[days_parameter]);
        Arc::new(Echo(ToolDefinition::new(
            name,
            "Echo the arguments.",
            schema,
        )))
    }

    fn context() -> CallContext {
        CallContext::detached(std::time::Duration::from_secs(1))
    }

    /// A reload prepares only the tools that changed.
    #[test]
    fn a_rebuild_keeps_the_entries_of_the_same_tools_and_prepares_the_others() {
        let kept = echo("kept", json!(1));
        let replaced = echo("replaced", json!(1));
        let first = Catalog::new(vec![Arc::clone(&kept), replaced], vec![]);
        let adjusted = |definition: &mut ToolDefinition| {
            definition.description = "Adjusted.".into();
            Ok(())
        };
        let second = Catalog::rebuild(
            vec![Arc::clone(&kept), echo("replaced", json!(2))],
            vec![],
            |_| Ok(()),
            &first,
            |_| false,
        );
        let same = |catalog: &Catalog, name: &str| {
            Arc::ptr_eq(
                &first.get(name).unwrap().validators,
                &catalog.get(name).unwrap().validators,
            )
        };
        assert!(
            same(&second, "kept"),
            "an unchanged tool keeps its validator"
        );
        assert!(
            !same(&second, "replaced"),
            "a new tool of the same name is prepared"
        );
        let outcome = second.get("replaced").unwrap().call(
            JsonObject::from_iter([("days".into(), json!(1))]),
            &context(),
        );
        assert!(outcome.is_error, "the new schema's minimum applies");

        // The same tool published differently (its settings changed) is prepared again.
        let third = Catalog::rebuild(vec![Arc::clone(&kept)], vec![], adjusted, &second, |_| {
            false
        });
        assert!(!same(&third, "kept"));
        assert_eq!(
            third.get("kept").unwrap().definition().description,
            "Adjusted."
        );

        // When the settings did not change, a kept tool is not adjusted again.
        let fourth = Catalog::rebuild(
            vec![Arc::clone(&kept)],
            vec![],
            |_| unreachable!("an unchanged kept tool is not adjusted"),
            &third,
            |_| true,
        );
        assert!(Arc::ptr_eq(
            &third.get("kept").unwrap().validators,
            &fourth.get("kept").unwrap().validators
        ));
        assert_eq!(
            fourth.get("kept").unwrap().definition().description,
            "Adjusted."
        );
    }

    // `discoverable` lives on entries; a reload rebuilds from the catalog it
    // replaces, which may be a profile's, and must not keep what the profile decided.
    #[test]
    fn a_rebuild_from_a_derived_catalog_takes_discoverable_from_the_definitions() {
        let tool = echo("echo", json!(1));
        let built = Catalog::new(vec![Arc::clone(&tool)], vec![]);
        let derived = built.derive(|_| true, vec![], vec![]);
        for unchanged in [true, false] {
            let rebuilt = Catalog::rebuild(
                vec![Arc::clone(&tool)],
                vec![],
                |_| Ok(()),
                &derived,
                |_| unchanged,
            );
            assert!(!rebuilt.entries()[0].discoverable());
            assert!(Arc::ptr_eq(
                &rebuilt.entries()[0].validators,
                &derived.entries()[0].validators
            ));
        }
    }

    #[test]
    fn a_name_taken_twice_keeps_the_first_and_says_where_it_is() {
        let first = echo("twin", json!(1));
        let catalog = Catalog::new(
            vec![first, echo("twin", json!(2)), echo("other", json!(1))],
            vec![],
        );
        assert_eq!(catalog.entries().len(), 2);
        assert_eq!(catalog.diagnostics().len(), 1);
        assert_eq!(catalog.diagnostics()[0].rule, "duplicate-tool-name");
        assert!(catalog.get("twin").is_some() && catalog.get("other").is_some());
        assert!(catalog.get("nope").is_none());
    }

    /// A call to a tool of an upstream that did not start, whose tools
    /// are not known, says which upstream, not only "unknown tool".
    #[test]
    fn an_unknown_name_under_a_left_out_prefix_names_the_problem() {
        let down = Diagnostic::error(
            "upstream-unavailable",
            crate::SourceLocation::default(),
            "upstream `github` cannot start",
        )
        .for_tools_prefixed("github_");
        let catalog = Catalog::new(vec![echo("own", json!(1))], vec![down]);
        let unknown = catalog.lookup("github_create_issue").err().unwrap();
        assert!(
            unknown
                .to_string()
                .contains("upstream `github` cannot start"),
            "{unknown}"
        );
        assert!(
            unknown
                .to_string()
                .starts_with("unknown tool `github_create_issue`")
        );
        let unrelated = catalog.lookup("gitlab_merge").err().unwrap();
        assert_eq!(unrelated.reason, None, "{unrelated}");
    }

    #[test]
    fn a_tool_with_an_invalid_input_schema_is_reported_at_load() {
        let catalog = Catalog::new(
            vec![echo("good", json!(1)), echo("bad", json!("one"))],
            vec![],
        );
        assert!(catalog.get("good").is_some());
        assert!(catalog.get("bad").is_none());
        let [diagnostic] = catalog.diagnostics() else {
            panic!("{:?}", catalog.diagnostics())
        };
        assert_eq!(diagnostic.rule, "invalid-schema");
        assert_eq!(
            diagnostic.message,
            "tool `bad` has an invalid input schema: \"one\" is not of type \"number\""
        );
    }

    // Publishing a big folder behind `tool_search` turns every tool's
    // `discoverable`; it copied each definition to do it.
    #[test]
    fn a_derived_catalog_turns_discoverable_on_its_entries_and_copies_no_definition() {
        let catalog = Catalog::new(vec![echo("echo", json!(1))], vec![]);
        let hidden = catalog.derive(|_| true, vec![], vec![]);
        assert!(hidden.entries()[0].discoverable());
        assert!(!catalog.entries()[0].discoverable());
        assert!(
            !hidden.entries()[0].definition().discoverable,
            "as declared"
        );
        assert!(std::ptr::eq(
            hidden.entries()[0].definition(),
            catalog.entries()[0].definition()
        ));
        // A catalog derived from a derived one sees what that one published.
        let again = hidden.derive(CatalogEntry::discoverable, vec![], vec![]);
        assert!(again.entries()[0].discoverable());
        let back = hidden.derive(|_| false, vec![], vec![]);
        assert!(!back.entries()[0].discoverable());
    }

    #[test]
    fn a_lazily_compiled_schema_reports_violations_as_before_and_is_shared() {
        let catalog = Catalog::new(vec![echo("echo", json!(1))], vec![]);
        let derived = catalog.derive(CatalogEntry::discoverable, vec![], vec![]);
        let arguments = json!({"days": 0}).as_object().cloned().unwrap();
        let outcome = derived.call("echo", arguments, &context()).unwrap();
        assert!(outcome.is_error);
        assert_eq!(
            outcome.joined_text(),
            "tool `echo`: invalid arguments:\n- /days: 0 is less than the minimum of 1"
        );
        // Compiled once, for both catalogs.
        assert!(
            catalog.entries()[0]
                .validators()
                .unwrap()
                .arguments
                .is_compiled()
        );
    }

    // Metrics count calls by how they ended, as decided here.
    #[test]
    fn a_call_says_how_it_ended() {
        let mut strict =
            ToolDefinition::new("strict", "Echo, declaring an output.", JsonObject::new());
        strict.output_schema = json!({"type": "object"})
            .as_object()
            .map(crate::Schema::new);
        let catalog = Catalog::new(vec![echo("echo", json!(1)), Arc::new(Echo(strict))], vec![]);
        let kind = |name: &str, arguments: Value| {
            let arguments = arguments.as_object().cloned().unwrap();
            catalog
                .get(name)
                .unwrap()
                .call_with_kind(arguments, &context())
                .1
        };
        assert_eq!(kind("echo", json!({"days": 2})), OutcomeKind::Ok);
        assert_eq!(
            kind("echo", json!({"days": 0})),
            OutcomeKind::InvalidArguments
        );
        assert_eq!(kind("strict", json!({})), OutcomeKind::InvalidOutput);
    }
}
