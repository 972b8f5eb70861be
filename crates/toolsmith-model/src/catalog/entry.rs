//! One tool of a catalog, ready to be called: the tool, its published definition, its
//! validators, and the single call path (validate → run → result contract → output
//! check) every transport goes through.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::deferred::Deferred;
use crate::definition::{JsonObject, SourceLocation, ToolDefinition};
use crate::diagnostic::Diagnostic;
use crate::ending::OutcomeKind;
use crate::init::{InitStatus, LazyInit};
use crate::notifications::Throttled;
use crate::outcome::{CallOutcome, ToolReturn};
use crate::tool::{CallContext, ClientBridge, Tool, ToolFailure};
use crate::validate::{ArgumentValidator, SchemaValidator};
use crate::watchdog::Watchdog;

/// A tool ready to be called: the tool plus its input and output schema validators (shared,
/// so a derived catalog reuses them, compiled or not; see [`SchemaValidator`] for when a
/// schema is compiled).
#[derive(Clone)]
pub struct CatalogEntry {
    /// The published definition when the catalog's builder changed the tool's own
    /// (default timeout, resolved icons, …); `None` when it is the tool's own, as it is for
    /// most tools, which then cost no copy. Shared by the catalogs derived from
    /// this one (discovery, a profile, a reload that kept it).
    adjusted: Option<Arc<ToolDefinition>>,
    /// Whether this catalog publishes the tool behind `tool_search` rather than in
    /// `tools/list`: the definition's own `discoverable`, unless a derived catalog
    /// (discovery, a profile, code mode) turned it. Kept here, not in a copy of the
    /// definition, so deriving a catalog of thousands of tools copies none.
    discoverable: bool,
    pub(super) tool: Arc<dyn Tool>,
    /// Made with the entry; for a [`Deferred`] tool, at its first call (its schemas were
    /// not read), when a schema that does not compile is the call's error.
    pub(super) validators: Arc<OnceLock<Result<Validators, String>>>,
    /// [`ToolDefinition::mcp_json_len`] of `definition`, once asked: `[search] mode =
    /// "auto"` weighs the tools more than once per load.
    published_len: OnceLock<usize>,
}

/// The validators of a tool's input and output schemas.
pub(super) struct Validators {
    pub(super) arguments: ArgumentValidator,
    output: Option<SchemaValidator>,
}

impl Validators {
    /// The validators of `definition`'s schemas; a schema that does not compile is an
    /// `invalid-schema` diagnostic.
    fn of(definition: &ToolDefinition) -> Result<Self, Diagnostic> {
        let schema_error = |which: &str, message: String| {
            Diagnostic::error(
                "invalid-schema",
                definition.source.clone(),
                format!(
                    "tool `{}` has an invalid {which}: {message}",
                    definition.name
                ),
            )
            .with_help("fix the JSON Schema keywords given in `params=`/`output=` or the manifest")
        };
        let arguments = ArgumentValidator::new(&definition.input_schema)
            .map_err(|e| schema_error("input schema", e.message))?;
        let output = match &definition.output_schema {
            Some(schema) => Some(
                SchemaValidator::new(schema)
                    .map_err(|e| schema_error("output schema", e.message))?,
            ),
            None => None,
        };
        Ok(Self { arguments, output })
    }
}

impl CatalogEntry {
    /// The entry of `tool` publishing `definition` (its own, or adjusted by the catalog's
    /// builder), with its validators; a schema that does not compile is an
    /// `invalid-schema` diagnostic.
    pub(super) fn new(definition: ToolDefinition, tool: Arc<dyn Tool>) -> Result<Self, Diagnostic> {
        let validators = Validators::of(&definition)?;
        let adjusted = (definition != *tool.definition()).then(|| Arc::new(definition));
        Ok(Self {
            discoverable: adjusted
                .as_deref()
                .unwrap_or_else(|| tool.definition())
                .discoverable,
            adjusted,
            tool,
            validators: Arc::new(OnceLock::from(Ok(validators))),
            published_len: OnceLock::new(),
        })
    }

    /// The entry of a [`Deferred`] tool (`deferred` is `tool`'s): nothing of its file is
    /// read until it is called or its definition asked for.
    pub(super) fn deferred(tool: Arc<dyn Tool>, deferred: &Deferred) -> Self {
        Self {
            adjusted: None,
            discoverable: deferred.discoverable(),
            published_len: OnceLock::from(deferred.published_len()),
            validators: Arc::new(OnceLock::new()),
            tool,
        }
    }

    /// The tool's validators, made now for a deferred tool's first call.
    pub(super) fn validators(&self) -> Result<&Validators, &str> {
        self.validators
            .get_or_init(|| Validators::of(self.definition()).map_err(|d| d.message))
            .as_ref()
            .map_err(String::as_str)
    }

    /// The tool as a [`Deferred`] one whose entry holds no definition: what the walks over
    /// every tool read of it is read there.
    fn stub(&self) -> Option<&Deferred> {
        self.tool.deferred().filter(|_| self.adjusted.is_none())
    }

    /// The tool's name, read without its definition for a [`Deferred`] tool.
    pub fn name(&self) -> &str {
        match &self.adjusted {
            Some(adjusted) => &adjusted.name,
            None => self.tool.name(),
        }
    }

    /// Where the tool is defined, read without its definition for a [`Deferred`] tool.
    pub fn source(&self) -> &SourceLocation {
        match self.stub() {
            Some(deferred) => deferred.source(),
            None => &self.definition().source,
        }
    }

    /// [`ToolDefinition::effective_timeout`] of the published definition, read without it
    /// for a [`Deferred`] tool.
    pub fn effective_timeout(&self) -> Duration {
        match self.stub() {
            Some(deferred) => deferred.timeout(),
            None => self.definition().effective_timeout(),
        }
    }

    /// The published `max_concurrency`, read without the definition for a [`Deferred`]
    /// tool.
    pub fn max_concurrency(&self) -> Option<usize> {
        match self.stub() {
            Some(deferred) => deferred.max_concurrency(),
            None => self.definition().max_concurrency,
        }
    }

    /// The published definition for a walk over every tool that reads each once: a
    /// [`Deferred`] tool's is read from its file and not kept.
    pub fn definition_once(&self) -> Cow<'_, ToolDefinition> {
        match self.stub() {
            Some(deferred) => deferred.definition_once(),
            None => Cow::Borrowed(self.definition()),
        }
    }

    /// Whether this entry publishes the same definition as `other`, compared only when
    /// they are not the same tool's entry. A [`Deferred`] tool in either that is not the
    /// same is taken to differ: its file changed, and reading it now would give both the
    /// new definition (a reload then announces a change that may publish the same).
    pub fn publishes_as(&self, other: &Self) -> bool {
        let same_entry = Arc::ptr_eq(&self.tool, &other.tool)
            && match (&self.adjusted, &other.adjusted) {
                (None, None) => true,
                (Some(mine), Some(theirs)) => Arc::ptr_eq(mine, theirs),
                _ => false,
            };
        let deferred = self.tool.deferred().is_some() || other.tool.deferred().is_some();
        same_entry || (!deferred && self.definition().publishes_as(other.definition()))
    }

    /// The length of the definition as `tools/list` publishes it, in bytes of compact
    /// JSON ([`ToolDefinition::mcp_json_len`], measured once).
    pub fn published_len(&self) -> usize {
        *self
            .published_len
            .get_or_init(|| self.definition().mcp_json_len())
    }

    /// The tool's definition, as its source declared it and the catalog's builder adjusted
    /// it; whether this catalog lists it is [`CatalogEntry::discoverable`].
    pub fn definition(&self) -> &ToolDefinition {
        match &self.adjusted {
            Some(adjusted) => adjusted,
            None => self.tool.definition(),
        }
    }

    /// Whether this catalog publishes the tool behind `tool_search` (not in `tools/list`).
    pub fn discoverable(&self) -> bool {
        self.discoverable
    }

    /// This entry as [`Catalog::build`] makes it: `discoverable` as its definition says,
    /// whatever a derived catalog (the one a reload replaces may be a profile's) made it.
    pub(super) fn as_built(&self) -> Self {
        let discoverable = match self.stub() {
            Some(deferred) => deferred.discoverable(),
            None => self.definition().discoverable,
        };
        self.published_as(discoverable)
    }

    /// This entry, published behind `tool_search` or not as `discoverable` says.
    pub(super) fn published_as(&self, discoverable: bool) -> Self {
        Self {
            discoverable,
            ..self.clone()
        }
    }

    /// The tool itself.
    pub fn tool(&self) -> &Arc<dyn Tool> {
        &self.tool
    }

    /// The init the tool shares with the others naming it, when it has one.
    pub fn init(&self) -> Option<&Arc<LazyInit>> {
        self.tool.init()
    }

    /// Where the tool's init stands in this process; `None` without one.
    pub fn init_status(&self) -> Option<InitStatus> {
        self.init().map(|init| init.status())
    }

    /// The watchdog of one call, started now: `timeout` when the caller sets one, else the
    /// tool's own, plus the init's timeout while the tool's init has not succeeded (the
    /// call may have to run it or wait for it first).
    pub fn watchdog(&self, timeout: Option<Duration>) -> Watchdog {
        let watchdog = Watchdog::start(Watchdog::timeout_of(self.definition(), timeout));
        match self.init() {
            Some(init) if !init.is_ready() => {
                watchdog.with_init(self.definition().effective_init_timeout())
            }
            _ => watchdog,
        }
    }

    /// Validates, runs and checks one call: the result contract of [`CallOutcome`]
    /// (docs/result-contract.md).
    ///
    /// Every failure is an `isError` outcome; nothing here is a protocol error. The call's
    /// progress and log notifications share one budget ([`NOTIFICATION_BURST`] at once,
    /// then [`NOTIFICATIONS_PER_SECOND`]); the rest are dropped, and the client told how many.
    ///
    /// [`NOTIFICATION_BURST`]: crate::NOTIFICATION_BURST
    /// [`NOTIFICATIONS_PER_SECOND`]: crate::NOTIFICATIONS_PER_SECOND
    pub fn call(&self, arguments: JsonObject, context: &CallContext) -> CallOutcome {
        self.call_with_kind(arguments, context).0
    }

    /// [`CatalogEntry::call`], and how the call ended, decided where each outcome is made
    /// (for metrics and logs, which must not guess it from the result's text).
    pub fn call_with_kind(
        &self,
        arguments: JsonObject,
        context: &CallContext,
    ) -> (CallOutcome, OutcomeKind) {
        let (arguments, throttled, mut throttled_context) = match self.prepare(arguments, context) {
            Ok(prepared) => prepared,
            Err(invalid) => return (CallOutcome::error(invalid), OutcomeKind::InvalidArguments),
        };
        if let Some(init) = self.tool.init() {
            match init.ensure(self.definition(), &throttled_context) {
                // The call's own time starts once the init is done.
                Ok(spent) => throttled_context.deadline += spent,
                Err(failure) => {
                    throttled.finish();
                    return failure_outcome(&self.definition().name, &failure);
                }
            }
        }
        let returned = self.tool.call(&arguments, &throttled_context);
        throttled.finish();
        self.ended(returned)
    }

    /// [`CatalogEntry::call_with_kind`] as a future, for a tool whose calls are futures
    /// ([`Tool::as_async`]) and that has no init; any other tool's `arguments` come back,
    /// to be called on a thread.
    pub fn call_async_with_kind(
        &self,
        arguments: JsonObject,
        context: &CallContext,
    ) -> Result<impl Future<Output = (CallOutcome, OutcomeKind)> + Send + '_, JsonObject> {
        let Some(tool) = self.tool.as_async().filter(|_| self.tool.init().is_none()) else {
            return Err(arguments);
        };
        let prepared = self.prepare(arguments, context);
        Ok(async move {
            let (arguments, throttled, throttled_context) = match prepared {
                Ok(prepared) => prepared,
                Err(invalid) => {
                    return (CallOutcome::error(invalid), OutcomeKind::InvalidArguments);
                }
            };
            let returned = tool.call_async(arguments, throttled_context).await;
            throttled.finish();
            self.ended(returned)
        })
    }

    /// The call's validated arguments, and its context with every notification passing
    /// through one budget; or, when its arguments are invalid, what is wrong with them.
    fn prepare(
        &self,
        arguments: JsonObject,
        context: &CallContext,
    ) -> Result<(JsonObject, Arc<Throttled>, CallContext), String> {
        let definition = self.definition();
        let arguments = self
            .validators()
            .map_err(str::to_owned)?
            .arguments
            .validate(arguments)
            .map_err(|errors| format!("tool `{}`: {errors}", definition.name))?;
        let throttled = Arc::new(Throttled::new(
            Arc::clone(&context.client),
            &definition.name,
        ));
        let throttled_context = CallContext {
            client: Arc::clone(&throttled) as Arc<dyn ClientBridge>,
            ..context.clone()
        };
        Ok((arguments, throttled, throttled_context))
    }

    /// The outcome of a call whose tool returned `returned`.
    fn ended(&self, returned: Result<ToolReturn, ToolFailure>) -> (CallOutcome, OutcomeKind) {
        let definition = self.definition();
        let outcome = match returned {
            Ok(returned) => returned.into_outcome(definition.text_format),
            Err(ToolFailure::TimedOut { .. }) => {
                // Report the timeout the catalog applied (a folder default may differ from
                // what the tool itself declared).
                let failure = ToolFailure::TimedOut {
                    after: definition.effective_timeout(),
                };
                return failure_outcome(&definition.name, &failure);
            }
            Err(failure) => return failure_outcome(&definition.name, &failure),
        };
        if outcome.is_error {
            return (outcome, OutcomeKind::IsError);
        }
        self.check_output(outcome)
    }

    /// `outcome` (not `isError`) when it matches the output schema, else the `isError`
    /// outcome saying how it does not.
    fn check_output(&self, outcome: CallOutcome) -> (CallOutcome, OutcomeKind) {
        let mismatch = |message: String| (CallOutcome::error(message), OutcomeKind::InvalidOutput);
        // A call whose validators failed did not get this far.
        let Some(output) = self.validators().ok().and_then(|v| v.output.as_ref()) else {
            return (outcome, OutcomeKind::Ok);
        };
        let name = &self.definition().name;
        let output = match output.compiled() {
            Ok(output) => output,
            Err(error) => {
                return mismatch(format!(
                    "tool `{name}` has an invalid output schema: {}",
                    error.message
                ));
            }
        };
        let Some(structured) = &outcome.structured_content else {
            return mismatch(format!(
                "tool `{name}` declares an outputSchema but returned no structured content"
            ));
        };
        let problems: Vec<String> = output
            .iter_errors(structured)
            .map(|error| {
                let path = error.instance_path().to_string();
                if path.is_empty() {
                    error.to_string()
                } else {
                    format!("{path}: {error}")
                }
            })
            .collect();
        if problems.is_empty() {
            (outcome, OutcomeKind::Ok)
        } else {
            mismatch(format!(
                "tool `{name}` returned output that does not match its outputSchema:\n- {}",
                problems.join("\n- ")
            ))
        }
    }
}

/// The `isError` outcome for a tool that failed, and how the call ended.
fn failure_outcome(name: &str, failure: &ToolFailure) -> (CallOutcome, OutcomeKind) {
    match failure {
        ToolFailure::Failed { message } => {
            (CallOutcome::error(message.clone()), OutcomeKind::IsError)
        }
        ToolFailure::TimedOut { .. } => (
            CallOutcome::error(format!("tool `{name}` {failure}")),
            OutcomeKind::Timeout,
        ),
        ToolFailure::Cancelled => (
            CallOutcome::error(format!("tool `{name}` {failure}")),
            OutcomeKind::Cancelled,
        ),
    }
}
