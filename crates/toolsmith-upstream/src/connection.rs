//! One upstream MCP server as Toolsmith keeps it (docs/gateway.md, "Faults"): started
//! (a program in its own process group, or a Streamable HTTP session), listed, and started
//! again with backoff when it has stopped, its stderr's tail kept for the messages that say
//! why. Everything async runs on one small runtime of its own, so the synchronous
//! [`Tool::call`](toolsmith_model::Tool::call) of any thread (inside another runtime or
//! not) can wait for it.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::future::Future;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use rmcp::RoleClient;
use rmcp::ServiceExt as _;
use rmcp::model::{SubscribeRequestParams, Tool as RemoteTool};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::AsyncBufReadExt as _;

use crate::content::Listing;
use crate::relay::Relay;
use toolsmith_model::sources::expand;

use crate::spec::{UpstreamSpec, UpstreamTransport};

/// How many lines of an upstream's stderr its messages quote.
const STDERR_LINES: usize = 12;
/// The longest wait between two attempts to start an upstream that keeps failing.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long a connection must have lived for its end not to count as a failure: an
/// upstream that stops sooner after it started is crash-looping, and backs off like one
/// that cannot start.
const SETTLED: Duration = Duration::from_secs(10);

/// The wait before the next start of an upstream after `failures` failures in a row, past
/// the first: 250 ms, doubling, at most [`MAX_BACKOFF`].
fn backoff(failures: u32) -> Duration {
    (Duration::from_millis(250) * 2u32.saturating_pow(failures)).min(MAX_BACKOFF)
}

/// Why an upstream cannot serve now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("upstream `{name}` {message}{}", stderr_suffix(.stderr))]
pub struct UpstreamError {
    /// `NAME` of `[upstream.NAME]`.
    pub name: String,
    /// What went wrong, starting with a verb (`cannot start …`, `stopped …`).
    pub message: String,
    /// The last lines its stderr had, when it is a program.
    pub stderr: String,
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.trim().is_empty() {
        String::new()
    } else {
        format!("; its stderr ends with:\n{}", stderr.trim_end())
    }
}

/// The runtime every upstream connection runs on.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolsmith-upstream")
            .enable_all()
            .build()
            .expect("a runtime with one worker thread can be built")
    })
}

/// Runs `future` on the upstreams' runtime and waits for it on this thread, which may be
/// a thread of another runtime: a channel, not `block_on`.
pub(crate) fn wait<F>(future: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (sender, receiver) = std::sync::mpsc::sync_channel(1);
    runtime().spawn(async move {
        let _ = sender.send(future.await);
    });
    receiver
        .recv()
        .expect("the upstreams' runtime finishes every future it is given")
}

/// Runs `work`, which may block, on a thread of the upstreams' runtime's blocking pool, and
/// waits for it without blocking the caller's runtime.
pub(crate) async fn unblocked<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    runtime()
        .spawn_blocking(work)
        .await
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic.into_panic()))
}

/// The last lines of a program's stderr.
#[derive(Debug, Default)]
pub(crate) struct StderrTail(VecDeque<String>);

impl StderrTail {
    fn push(&mut self, line: String) {
        if self.0.len() == STDERR_LINES {
            self.0.pop_front();
        }
        self.0.push_back(line);
    }

    fn text(&self) -> String {
        self.0
            .iter()
            .flat_map(|line| [line.as_str(), "\n"])
            .collect()
    }
}

/// A live connection: the rmcp client and, for a program, its process group.
pub(crate) struct Connection {
    pub(crate) service: RunningService<RoleClient, Relay>,
    pub(crate) relay: Relay,
    pub(crate) tools: Mutex<Vec<RemoteTool>>,
    /// The direct path of its calls, for a program (`direct.rs`).
    pub(crate) direct: Option<Arc<crate::direct::Direct>>,
    /// Its prompts, resources and templates.
    pub(crate) listing: Mutex<Listing>,
    /// The process group of the program (its pid), killed when the connection goes.
    group: Option<Pid>,
    /// When it was started.
    started: Instant,
    /// When its program exited, once it has (set by the task that reaps it).
    exited: Arc<Mutex<Option<Instant>>>,
    /// The failures in a row (failed starts, early stops) before it started.
    failures: u32,
    /// A call found it gone before rmcp did (`Upstream::discard`).
    discarded: AtomicBool,
}

impl Connection {
    /// Whether it can no longer carry a request.
    pub(crate) fn is_closed(&self) -> bool {
        self.discarded.load(Ordering::Acquire) || self.service.is_closed()
    }

    /// What the next start makes of it, now that it has stopped.
    fn stopped(&self) -> State {
        let exited = *self.exited.lock().unwrap_or_else(PoisonError::into_inner);
        let at = exited.unwrap_or_else(Instant::now);
        State::Stopped {
            at,
            lived: at.saturating_duration_since(self.started),
            failures: self.failures,
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if let Some(group) = self.group {
            let _ = killpg(group, Signal::SIGKILL);
            forget_group(group);
        }
    }
}

enum State {
    NotStarted,
    Up(Arc<Connection>),
    /// It ran, and stopped at `at` after running for `lived`, with `failures` failures in a
    /// row before it started.
    Stopped {
        at: Instant,
        lived: Duration,
        failures: u32,
    },
    /// It cannot be started before `retry_at`.
    Down {
        error: UpstreamError,
        retry_at: Instant,
        failures: u32,
    },
}

/// The resource URIs Toolsmith subscribes to at one upstream, for the sessions that
/// subscribed to them (docs/gateway.md, "Prompts and resources"); kept across its restarts.
pub(crate) type Subscribed = Arc<Mutex<BTreeSet<String>>>;

/// One `[upstream.NAME]`, started or not.
pub struct Upstream {
    spec: UpstreamSpec,
    state: Mutex<State>,
    stderr: Arc<Mutex<StderrTail>>,
    subscribed: Subscribed,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl Upstream {
    /// An upstream that starts at its first use.
    pub fn new(spec: UpstreamSpec) -> Self {
        Self {
            spec,
            state: Mutex::new(State::NotStarted),
            stderr: Arc::default(),
            subscribed: Subscribed::default(),
        }
    }

    /// Its `[upstream.NAME]`.
    pub fn spec(&self) -> &UpstreamSpec {
        &self.spec
    }

    /// The tools it lists, starting it for that and stopping it again (its process group
    /// killed): for a one-shot command such as `toolsmith check --upstream`.
    ///
    /// # Errors
    ///
    /// Why it could not be started or listed, with its stderr's tail.
    pub fn list_once(&self) -> Result<Vec<RemoteTool>, UpstreamError> {
        let tools = self.tools();
        *self.state.lock().unwrap_or_else(PoisonError::into_inner) = State::NotStarted;
        tools
    }

    /// Whether it runs now (started and not stopped since).
    pub fn is_running(&self) -> bool {
        matches!(
            &*self.state.lock().unwrap_or_else(PoisonError::into_inner),
            State::Up(connection) if !connection.is_closed()
        )
    }

    /// The tools it lists, starting it first if it is not running (waiting at most its
    /// `startup_timeout`).
    ///
    /// # Errors
    ///
    /// Why it could not be started or listed, with its stderr's tail.
    /// After its `notifications/tools/list_changed`, the tools are listed again.
    pub fn tools(&self) -> Result<Vec<RemoteTool>, UpstreamError> {
        let connection = self.connection()?;
        if connection.relay.tools_changed.swap(false, Ordering::AcqRel) {
            let peer = connection.service.peer().clone();
            let listed = wait(async move { peer.list_all_tools().await }).map_err(|error| {
                self.error(format!("answered `tools/list` with an error: {error}"))
            })?;
            *connection
                .tools
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = listed;
        }
        let tools = connection
            .tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        Ok(tools)
    }

    /// Its prompts, resources and resource templates, starting it first if it is not
    /// running; listed again after its `notifications/prompts/list_changed` or
    /// `resources/list_changed`.
    ///
    /// # Errors
    ///
    /// Why it could not be started, with its stderr's tail.
    pub fn listing(&self) -> Result<Listing, UpstreamError> {
        let connection = self.connection()?;
        if connection
            .relay
            .content_changed
            .swap(false, Ordering::AcqRel)
        {
            let peer = connection.service.peer().clone();
            let name = self.spec.name.clone();
            let listed = wait(async move { crate::content::list(&name, &peer).await });
            *connection
                .listing
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = listed;
        }
        let listing = connection
            .listing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        Ok(listing)
    }

    /// The running connection, if there is one; never starts it.
    pub(crate) fn running(&self) -> Option<Arc<Connection>> {
        match &*self.state.lock().unwrap_or_else(PoisonError::into_inner) {
            State::Up(connection) if !connection.is_closed() => Some(Arc::clone(connection)),
            _ => None,
        }
    }

    /// The running connection, started (again) when there is none and the backoff after
    /// the last failure has passed.
    ///
    /// A failure is a start that failed, or a connection that stopped within [`SETTLED`]
    /// of its start: the first such stop is started again at once (a crash, once, is not
    /// a loop), the next ones after a backoff, as failed starts are.
    pub(crate) fn connection(&self) -> Result<Arc<Connection>, UpstreamError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let State::Up(connection) = &*state {
            if !connection.is_closed() {
                return Ok(Arc::clone(connection));
            }
            *state = connection.stopped();
        }
        if let State::Stopped {
            at,
            lived,
            failures,
        } = *state
            && lived < SETTLED
            && failures > 0
        {
            // It stopped soon after it started, again: a crash loop, backed off like a
            // start that fails.
            let failures = failures.saturating_add(1);
            *state = State::Down {
                error: self.error(format!(
                    "stopped {} after it started, {failures} times in a row",
                    toolsmith_model::duration::format(lived)
                )),
                retry_at: at + backoff(failures - 2),
                failures,
            };
        }
        let (failures, was_down) = match &*state {
            State::Up(_) => unreachable!("a running connection was returned above"),
            State::NotStarted => (0, false),
            // A stop soon after the start counts as a failure; one after it settled, as none.
            State::Stopped { lived, .. } => (u32::from(*lived < SETTLED), false),
            State::Down {
                error,
                retry_at,
                failures,
            } => {
                let now = Instant::now();
                if now < *retry_at {
                    let mut error = error.clone();
                    error.message = format!(
                        "{}; Toolsmith starts it again in {}",
                        error.message,
                        toolsmith_model::duration::format(*retry_at - now)
                    );
                    return Err(error);
                }
                (*failures, true)
            }
        };
        match self.start(failures) {
            Ok(connection) => {
                let connection = Arc::new(connection);
                *state = State::Up(Arc::clone(&connection));
                self.subscribe_again(connection.service.peer());
                if self.spec.lazy || was_down {
                    // Its tools were listed from the last run (a lazy upstream's, or an
                    // unavailable one's): the folder lists them again from the running
                    // server, and the clients hear when they changed.
                    crate::changes::notify();
                }
                Ok(connection)
            }
            Err(error) => {
                *state = State::Down {
                    error: error.clone(),
                    retry_at: Instant::now() + backoff(failures),
                    failures: failures.saturating_add(1),
                };
                Err(error)
            }
        }
    }

    /// Notes that `connection` (when it is still the current one) is gone, so the next use
    /// starts the upstream again; how long it lived counts, as for any stop.
    pub(crate) fn discard(&self, connection: &Arc<Connection>) {
        connection.discarded.store(true, Ordering::Release);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let State::Up(current) = &*state
            && Arc::ptr_eq(current, connection)
        {
            *state = connection.stopped();
        }
    }

    /// Notes that a session subscribed to `uri`: `true` when no session had, and the
    /// upstream is to be asked.
    pub(crate) fn add_subscription(&self, uri: &str) -> bool {
        self.subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(uri.to_owned())
    }

    /// Notes that no session subscribes to `uri` any more: `true` when one had, and the
    /// upstream is to be told.
    pub(crate) fn remove_subscription(&self, uri: &str) -> bool {
        self.subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(uri)
    }

    /// A new connection knows nothing of the subscriptions made on the last one: it is
    /// asked for each again, in the background.
    fn subscribe_again(&self, peer: &Peer<RoleClient>) {
        let uris: Vec<String> = self
            .subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        if uris.is_empty() || !offers_subscriptions(peer) {
            return;
        }
        let (peer, name) = (peer.clone(), self.spec.name.clone());
        runtime().spawn(async move {
            for uri in uris {
                #[expect(deprecated, reason = "a 2025-era upstream subscribes this way")]
                let subscribed = peer.subscribe(SubscribeRequestParams::new(uri.clone())).await;
                if let Err(error) = subscribed {
                    tracing::warn!(upstream = %name, %uri, %error, "could not subscribe again after a restart");
                }
            }
        });
    }

    /// What its stderr said last.
    pub(crate) fn stderr_tail(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .text()
    }

    pub(crate) fn error(&self, message: impl Into<String>) -> UpstreamError {
        UpstreamError {
            name: self.spec.name.clone(),
            message: message.into(),
            stderr: self.stderr_tail(),
        }
    }

    /// Starts it, after `failures` failures in a row.
    fn start(&self, failures: u32) -> Result<Connection, UpstreamError> {
        let spec = self.spec.clone();
        let stderr = Arc::clone(&self.stderr);
        let subscribed = Arc::clone(&self.subscribed);
        *stderr.lock().unwrap_or_else(PoisonError::into_inner) = StderrTail::default();
        let timeout = spec.startup_timeout;
        let started = wait(async move {
            match tokio::time::timeout(timeout, connect(&spec, stderr, subscribed, failures)).await
            {
                Ok(result) => result,
                Err(_) => Err(format!(
                    "did not finish starting within {} (`startup_timeout`)",
                    toolsmith_model::duration::format(timeout)
                )),
            }
        });
        started.map_err(|message| self.error(message))
    }
}

/// Starts the upstream of `spec` (after `failures` failures in a row), runs the handshake
/// and lists its tools.
#[expect(
    clippy::too_many_lines,
    reason = "one match over the two transports, each step in order"
)]
async fn connect(
    spec: &UpstreamSpec,
    stderr: Arc<Mutex<StderrTail>>,
    subscribed: Subscribed,
    failures: u32,
) -> Result<Connection, String> {
    let started = Instant::now();
    let exited = Arc::new(Mutex::new(None));
    let relay = Relay::new(subscribed);
    let environment = |name: &str| std::env::var(name).ok();
    let mut direct = None;
    let mut stderr_read = None;
    let (service, group) = match &spec.transport {
        UpstreamTransport::Stdio { command, env, cwd } => {
            let mut child = tokio::process::Command::new(&command[0]);
            child
                .args(&command[1..])
                .current_dir(cwd)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .kill_on_drop(true);
            for (key, value) in env {
                let value = expand(value, environment).map_err(|e| format!("`env.{key}`: {e}"))?;
                child.env(key, value);
            }
            let mut child = child
                .spawn()
                .map_err(|error| format!("cannot start `{}`: {error}", command[0]))?;
            let group = child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .map(Pid::from_raw);
            if let Some(group) = group {
                remember_group(group);
            }
            let (Some(stdout), Some(stdin), Some(err)) =
                (child.stdout.take(), child.stdin.take(), child.stderr.take())
            else {
                return Err("started without its standard streams".to_owned());
            };
            let name = spec.name.clone();
            stderr_read = Some(tokio::spawn(async move {
                let mut lines = tokio::io::BufReader::new(err).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::debug!(upstream = %name, "{line}");
                    stderr
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(line);
                }
            }));
            // The child is reaped by its own task, which notes when (a stop soon after the
            // start is a failure); the connection kills its group.
            let reaped = Arc::clone(&exited);
            tokio::spawn(async move {
                let _ = child.wait().await;
                *reaped.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
            });
            // rmcp's client reads and writes through the direct path's reader and writer.
            let (calls, read, write) =
                crate::direct::start(stdout, stdin, relay.clone(), &spec.name)?;
            direct = Some(calls);
            let service = relay
                .clone()
                .serve((read, write))
                .await
                .map_err(|error| format!("did not answer `initialize`: {error}"));
            (service, group)
        }
        UpstreamTransport::Http {
            url,
            headers,
            oauth,
            forward_caller_token,
        } => {
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
            let mut custom = HashMap::new();
            for (key, value) in headers {
                let value =
                    expand(value, environment).map_err(|e| format!("`headers.{key}`: {e}"))?;
                if key.eq_ignore_ascii_case("authorization")
                    && let Some(token) = value.strip_prefix("Bearer ")
                {
                    config.auth_header = Some(token.to_owned());
                    continue;
                }
                let name = http::HeaderName::try_from(key.as_str())
                    .map_err(|e| format!("`headers.{key}` is not a header name: {e}"))?;
                let value = http::HeaderValue::try_from(value)
                    .map_err(|e| format!("`headers.{key}` is not a header value: {e}"))?;
                custom.insert(name, value);
            }
            config.custom_headers = custom;
            let service = if oauth.is_some() || *forward_caller_token {
                // A token per request: the upstream's own, or the caller's (`oauth/client.rs`).
                let credentials = oauth.as_ref().map(|client| {
                    Arc::new(crate::oauth::Credentials::new(
                        &spec.name,
                        url,
                        client.clone(),
                    ))
                });
                let client = crate::oauth::Authorized::new(&spec.name, credentials);
                let transport = StreamableHttpClientTransport::with_client(client, config);
                relay.clone().serve(transport).await
            } else {
                let transport = StreamableHttpClientTransport::from_config(config);
                relay.clone().serve(transport).await
            };
            let service =
                service.map_err(|error| format!("did not answer `initialize` at {url}: {error}"));
            (service, None)
        }
    };
    let connection = |service| Connection {
        service,
        relay: relay.clone(),
        tools: Mutex::default(),
        direct,
        listing: Mutex::default(),
        group,
        started,
        exited,
        failures,
        discarded: AtomicBool::new(false),
    };
    let mut connection = match service {
        Ok(service) => connection(service),
        Err(message) => {
            if let Some(group) = group {
                let _ = killpg(group, Signal::SIGKILL);
                forget_group(group);
            }
            // The message quotes its stderr's tail: what it said just before it exited is
            // read first (its stderr closes with it), within a bound for a grandchild that
            // holds it open.
            if let Some(read) = stderr_read {
                let _ = tokio::time::timeout(Duration::from_secs(1), read).await;
            }
            return Err(message);
        }
    };
    // A server of prompts or resources only may declare no `tools` and not answer
    // `tools/list`: it serves no tools, and is not broken for that.
    let peer = connection.service.peer();
    let offers_tools = peer
        .peer_info()
        .is_some_and(|info| info.capabilities.tools.is_some());
    if offers_tools {
        connection.tools = Mutex::new(
            peer.list_all_tools()
                .await
                .map_err(|error| format!("answered `tools/list` with an error: {error}"))?,
        );
    }
    connection.listing =
        Mutex::new(crate::content::list(&spec.name, connection.service.peer()).await);
    Ok(connection)
}

/// Whether the server at `peer` declared `resources.subscribe`.
pub(crate) fn offers_subscriptions(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| {
        info.capabilities
            .resources
            .as_ref()
            .and_then(|resources| resources.subscribe)
            .unwrap_or(false)
    })
}

/// The process groups of the upstream programs running now.
fn groups() -> &'static Mutex<Vec<Pid>> {
    static GROUPS: Mutex<Vec<Pid>> = Mutex::new(Vec::new());
    &GROUPS
}

fn remember_group(group: Pid) {
    groups()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(group);
}

fn forget_group(group: Pid) {
    groups()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .retain(|g| *g != group);
}

/// Kills the process group of every upstream program still running: for the program's
/// exit path, where destructors may not run (docs/gateway.md, "Faults").
pub fn kill_all() {
    let groups = std::mem::take(&mut *groups().lock().unwrap_or_else(PoisonError::into_inner));
    for group in groups {
        let _ = killpg(group, Signal::SIGKILL);
    }
}
