//! 2026-07-28 "input required" (SEP-2322, multi round-trip requests): a request of that
//! revision has no live channel back to the client, so a tool that asks the client for
//! something (`mcp.sample`, `mcp.elicit`, `mcp.roots`) is answered by replay.
//!
//! Every such request gets a key (the tool's `key=`, else `sample-0`, `elicit-1`, … in call
//! order). Its answer is looked up in the retry's `inputResponses` and in the answers the
//! previous rounds carried in `requestState`. When it is not there, the tool stops and the
//! call answers an `InputRequiredResult` asking for it (and for the deferred requests made
//! before); the client retries the call, which runs again from the start and gets the
//! answers in order.
//!
//! `requestState` holds the answers the tool used so far, bound to the method, name and
//! arguments of the request and signed with HMAC-SHA256 under a random per-process key (or the key replicas share,
//! docs/deploy.md): a state that was altered, belongs to another request or comes from
//! another server process is refused with `-32602`.

use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex, OnceLock, PoisonError};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::{
    ClientCapabilities, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    JsonObject, ProtocolVersion,
};
use rmcp::service::RequestContext;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// What a tool asks the client for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Sample,
    Elicit,
    Roots,
}

impl Kind {
    fn prefix(self) -> &'static str {
        match self {
            Self::Sample => "sample",
            Self::Elicit => "elicit",
            Self::Roots => "roots",
        }
    }

    fn capability(self) -> &'static str {
        match self {
            Self::Sample => "sampling",
            Self::Elicit => "elicitation",
            Self::Roots => "roots",
        }
    }

    fn method(self) -> &'static str {
        match self {
            Self::Sample => "sampling/createMessage",
            Self::Elicit => "elicitation/create",
            Self::Roots => "roots/list",
        }
    }

    fn supported(self, capabilities: &ClientCapabilities) -> bool {
        match self {
            Self::Sample => capabilities.sampling.is_some(),
            Self::Elicit => capabilities.elicitation.is_some(),
            Self::Roots => capabilities.roots.is_some(),
        }
    }

    /// Whether `answer` has the shape of this request's result.
    fn fits(self, answer: &Value) -> bool {
        match self {
            Self::Sample => answer.get("content").is_some(),
            Self::Elicit => answer.get("action").is_some_and(Value::is_string),
            Self::Roots => answer.get("roots").is_some_and(Value::is_array),
        }
    }
}

/// Why the tool stopped when an answer was missing; never seen by the client.
const INPUT_REQUIRED: &str = "input required: the client is asked for it and retries the call";

/// The replay of one 2026-07-28 request (`tools/call`, `prompts/get`).
pub(crate) struct Replay {
    /// The answers known for this round: the verified state's, then `inputResponses`.
    answers: BTreeMap<String, Value>,
    capabilities: ClientCapabilities,
    /// The request named a `logLevel`: without one, a 2026-07-28 request gets no logs.
    wants_logs: bool,
    /// What the state is bound to: method, name and arguments.
    binding: Vec<u8>,
    round: Mutex<Round>,
}

#[derive(Default)]
struct Round {
    /// Requests made so far, for keys assigned in call order.
    count: usize,
    /// The answers the tool used, carried to the next round.
    used: BTreeMap<String, Value>,
    /// What the client is asked for.
    asked: InputRequests,
    /// A request the tool could not go on without is missing.
    stopped: bool,
    /// That request needs a capability the client did not declare.
    undeclared: Option<Kind>,
    /// A request asked for was marked to be asked before the call becomes a task
    /// (`before_task`, docs/tasks.md).
    before_task: bool,
}

impl Replay {
    /// The replay for a request, when it is of the 2026-07-28 revision or later; a
    /// `requestState` that fails verification is `-32602`.
    ///
    /// The request is `method` for `name` with `arguments`; its [`binding`] is only made
    /// for a 2026-07-28 request: earlier revisions are the common case, and it serializes
    /// the arguments.
    pub(crate) fn open(
        context: &RequestContext<RoleServer>,
        method: &str,
        name: &str,
        arguments: Option<&JsonObject>,
        input_responses: Option<InputResponses>,
        request_state: Option<&str>,
    ) -> Result<Option<Self>, ErrorData> {
        let modern = context
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        if !modern {
            return Ok(None);
        }
        let binding = binding(method, name, arguments);
        let mut answers = match request_state {
            Some(state) => unseal(&binding, state).ok_or_else(|| {
                ErrorData::invalid_params(
                    "invalid requestState: it failed its integrity check (altered, issued for \
                     another request, or by another server process); retry the request without it",
                    None,
                )
            })?,
            None => BTreeMap::new(),
        };
        answers.extend(input_responses.unwrap_or_default());
        Ok(Some(Self {
            answers,
            capabilities: context.client_capabilities().unwrap_or_default(),
            wants_logs: context.meta.log_level().is_some(),
            binding,
            round: Mutex::new(Round::default()),
        }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Round> {
        self.round.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A request of the tool: its answer, `None` when deferred (or the client cannot give
    /// it and the tool can go on without it), or an error that stops the tool.
    ///
    /// `before_task` marks a request to be asked before the call becomes an MCP task
    /// ([`Self::asked_before_task`]).
    pub(crate) fn ask(
        &self,
        kind: Kind,
        key: Option<String>,
        defer: bool,
        before_task: bool,
        params: Value,
    ) -> Result<Option<Value>, String> {
        let mut round = self.lock();
        if round.stopped {
            return Err(INPUT_REQUIRED.to_owned());
        }
        let key = key.unwrap_or_else(|| format!("{}-{}", kind.prefix(), round.count));
        round.count += 1;
        if let Some(answer) = self.answers.get(&key).filter(|answer| kind.fits(answer)) {
            round.used.insert(key, answer.clone());
            return Ok(Some(answer.clone()));
        }
        if !kind.supported(&self.capabilities) {
            return match kind {
                _ if defer => Ok(None),
                // A client without the `roots` capability has no roots to offer.
                Kind::Roots => Ok(Some(json!({"roots": []}))),
                _ => {
                    // The call is refused with -32021 (SEP-2575): see `undeclared`.
                    round.stopped = true;
                    round.undeclared = Some(kind);
                    Err(format!(
                        "the client did not declare the {} capability",
                        kind.capability()
                    ))
                }
            };
        }
        let request: InputRequest = serde_json::from_value(Value::Object(
            [
                ("method".to_owned(), json!(kind.method())),
                ("params".to_owned(), params),
            ]
            .into_iter()
            .collect(),
        ))
        .map_err(|error| format!("invalid {} request: {error}", kind.method()))?;
        round.asked.insert(key, request);
        round.before_task |= before_task;
        if defer {
            Ok(None)
        } else {
            round.stopped = true;
            Err(INPUT_REQUIRED.to_owned())
        }
    }

    /// The same request run again from the start (inside an MCP task, docs/tasks.md),
    /// knowing the answers this round knew plus `more`.
    pub(crate) fn resume(&self, more: InputResponses) -> Self {
        let mut answers = self.answers.clone();
        answers.extend(more);
        Self {
            answers,
            capabilities: self.capabilities.clone(),
            wants_logs: self.wants_logs,
            binding: self.binding.clone(),
            round: Mutex::new(Round::default()),
        }
    }

    /// What the tool asked for and has no answer to yet (empty when nothing).
    pub(crate) fn asked(&self) -> InputRequests {
        self.lock().asked.clone()
    }

    /// Whether one of the requests asked for was to be asked before the call becomes a
    /// task.
    pub(crate) fn asked_before_task(&self) -> bool {
        self.lock().before_task
    }

    /// Whether the tool's logs go to the client.
    pub(crate) fn wants_logs(&self) -> bool {
        self.wants_logs
    }

    /// The `-32021` error to answer instead of the result, when the tool could not go on
    /// without a request the client declared no capability for.
    pub(crate) fn undeclared(&self) -> Option<ErrorData> {
        let kind = self.lock().undeclared?;
        let required = serde_json::from_value(json!({ kind.capability(): {} })).unwrap_or_default();
        Some(ErrorData::missing_required_client_capability(required))
    }

    /// The `InputRequiredResult` to answer instead of the result, when the tool asked for
    /// something the client has not answered yet.
    pub(crate) fn finish(&self) -> Option<InputRequiredResult> {
        let round = self.lock();
        if round.asked.is_empty() {
            return None;
        }
        let state = seal(&self.binding, &round.used);
        Some(InputRequiredResult::new(
            Some(round.asked.clone()),
            Some(state),
        ))
    }
}

/// `prompts/get` on a 2026-07-28 request: the prompt's required arguments the client did
/// not give are asked of the user by elicitation (key `arguments`) and added to
/// `arguments`. The `InputRequiredResult` to answer while they are missing; `None` to go
/// on (all given, answered, declined, or a client without elicitation: a missing argument
/// is then the usual `-32602`).
pub(crate) fn prompt_arguments(
    replay: &Replay,
    prompt: &toolsmith_model::Prompt,
    arguments: &mut JsonObject,
) -> Option<InputRequiredResult> {
    let missing: Vec<_> = prompt
        .arguments
        .iter()
        .filter(|argument| argument.required && !arguments.contains_key(&argument.name))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut properties = serde_json::Map::new();
    for argument in &missing {
        let mut property = json!({"type": "string"});
        if let Some(title) = &argument.title {
            property["title"] = json!(title);
        }
        if let Some(description) = &argument.description {
            property["description"] = json!(description);
        }
        properties.insert(argument.name.clone(), property);
    }
    let message = match missing.as_slice() {
        [only] => only
            .description
            .clone()
            .unwrap_or_else(|| format!("The prompt `{}` needs `{}`.", prompt.name, only.name)),
        _ => format!("The prompt `{}` needs more arguments.", prompt.name),
    };
    let names: Vec<_> = missing
        .iter()
        .map(|argument| argument.name.clone())
        .collect();
    let params = json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {"type": "object", "properties": properties, "required": names},
    });
    match replay.ask(
        Kind::Elicit,
        Some("arguments".to_owned()),
        false,
        false,
        params,
    ) {
        Ok(Some(answer)) => {
            let accepted = answer.get("action").and_then(Value::as_str) == Some("accept");
            if let (true, Some(Value::Object(content))) = (accepted, answer.get("content")) {
                for name in names {
                    match content.get(&name) {
                        Some(Value::String(text)) => {
                            arguments.insert(name, Value::String(text.clone()));
                        }
                        Some(Value::Null) | None => {}
                        Some(other) => {
                            arguments.insert(name, Value::String(other.to_string()));
                        }
                    }
                }
            }
            None
        }
        Ok(None) | Err(_) => replay.finish(),
    }
}

/// What a request's state is bound to.
pub(crate) fn binding(method: &str, name: &str, arguments: Option<&JsonObject>) -> Vec<u8> {
    let arguments = arguments.map(|arguments| serde_json::to_string(arguments).unwrap_or_default());
    serde_json::to_vec(&json!([method, name, arguments])).unwrap_or_default()
}

/// The per-process signing key, unless [`share_key`] set one.
static KEY: LazyLock<[u8; 32]> = LazyLock::new(random_key);

/// The key replicas share (`serve --state`, docs/deploy.md), set once before serving.
static SHARED_KEY: OnceLock<[u8; 32]> = OnceLock::new();

/// Signs `requestState` with `key` from now on, so that a retry may land on any replica
/// holding the same key. Only the first call counts (`false` after that).
pub(crate) fn share_key(key: [u8; 32]) -> bool {
    SHARED_KEY.set(key).is_ok()
}

/// 32 random bytes (the system's randomness, else the clock and the process, hashed).
pub(crate) fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    let random = std::fs::File::open("/dev/urandom")
        .and_then(|mut file| std::io::Read::read_exact(&mut file, &mut key));
    if random.is_err() {
        // No system randomness: the clock, the process and an address, hashed.
        let seed = format!(
            "{:?} {} {:p}",
            std::time::SystemTime::now(),
            std::process::id(),
            &key
        );
        key.copy_from_slice(&Sha256::digest(seed.as_bytes()));
    }
    key
}

/// HMAC-SHA256 (RFC 2104) of `parts` under the shared key, else [`KEY`].
fn mac(parts: &[&[u8]]) -> [u8; 32] {
    let mut inner_pad = [0x36u8; 64];
    let mut outer_pad = [0x5cu8; 64];
    let key = SHARED_KEY.get().unwrap_or(&KEY);
    for (index, byte) in key.iter().enumerate() {
        inner_pad[index] ^= byte;
        outer_pad[index] ^= byte;
    }
    let mut inner = Sha256::new();
    inner.update(inner_pad);
    for part in parts {
        inner.update((part.len() as u64).to_be_bytes());
        inner.update(part);
    }
    let mut outer = Sha256::new();
    outer.update(outer_pad);
    outer.update(inner.finalize());
    let mut tag = [0u8; 32];
    tag.copy_from_slice(&outer.finalize());
    tag
}

fn seal(binding: &[u8], answers: &BTreeMap<String, Value>) -> String {
    let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(answers).unwrap_or_default());
    let tag = mac(&[b"toolsmith-request-state-1", binding, body.as_bytes()]);
    format!("{body}.{}", URL_SAFE_NO_PAD.encode(tag))
}

fn unseal(binding: &[u8], state: &str) -> Option<BTreeMap<String, Value>> {
    let (body, tag) = state.split_once('.')?;
    let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
    let expected = mac(&[b"toolsmith-request-state-1", binding, body.as_bytes()]);
    if !bool::from(expected.as_slice().ct_eq(&tag)) {
        return None;
    }
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(body).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_refuses_tampering() {
        let binding = binding("tools/call", "t", None);
        let mut answers = BTreeMap::new();
        answers.insert("k".to_owned(), json!({"action": "accept"}));
        let state = seal(&binding, &answers);
        assert_eq!(unseal(&binding, &state), Some(answers));
        assert_eq!(unseal(&binding, &format!("{state}-TAMPERED")), None);
        let other = super::binding("tools/call", "u", None);
        assert_eq!(unseal(&other, &state), None);
        assert_eq!(unseal(&binding, "garbage"), None);
    }
}
