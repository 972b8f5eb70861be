//! What the HTTP endpoint keeps about rmcp's sessions, to cap them and to refuse a reused
//! request id.
//!
//! rmcp's `LocalSessionManager` keeps a session until it has been idle for
//! [`HttpOptions::session_timeout`] (five minutes), and each costs about 80 KiB (measured:
//! rmcp's session worker and service tasks; Toolsmith's own part is a few hundred bytes): a
//! flood of `initialize` grew the server until it aborted. So the book counts sessions, and
//! at [`HttpOptions::max_sessions`] the session idle longest is closed (as if its client had
//! deleted it) to make room; when every session is busy, `initialize` gets 503. Under
//! pressure — more than half of the cap open — a session idle for a fifth of the timeout
//! (a minute by default) is closed too, so a flood meets a cap made of idle sessions less
//! often. A session is busy while one of its requests is being answered or its `GET` stream
//! is open.
//!
//! The book also knows the ids of the requests each session is running: rmcp routes a
//! response by its request id, so a second request reusing the id of one still running
//! would take the first one's answer. It is refused instead.
//!
//! [`HttpOptions::max_sessions`]: crate::HttpOptions::max_sessions
//! [`HttpOptions::session_timeout`]: crate::HttpOptions::session_timeout

use std::collections::{HashMap, HashSet};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes, HttpBody};
use axum::response::Response;
use hyper::body::{Frame, SizeHint};
use rmcp::model::RequestId;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

/// The sessions of the endpoint, by id. Cheap to clone.
#[derive(Clone)]
pub(super) struct SessionBook(Arc<Book>);

struct Book {
    max: usize,
    /// How long a session may stay idle under pressure.
    idle_under_pressure: Duration,
    rmcp: Arc<LocalSessionManager>,
    pages: Mutex<Pages>,
}

struct Pages {
    sessions: HashMap<Arc<str>, Page>,
    /// `initialize` requests let in and not answered yet: they count against the cap.
    opening: usize,
    /// When idle sessions were last looked for (at most once a second).
    swept: Option<Instant>,
}

/// How often, at most, the book looks for sessions idle too long under pressure.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

struct Page {
    last_used: Instant,
    /// Requests being answered, `GET` streams included.
    busy: usize,
    /// The ids of the requests being answered.
    running: HashSet<RequestId>,
    /// The session initialized with protocol revision 2025-03-26, which has JSON-RPC
    /// batches (`batch.rs`).
    batches: bool,
}

/// A place for one new session, held while its `initialize` is answered.
pub(super) struct Opening(Arc<Book>);

/// A request of a known session, being answered (a `GET` stream: open).
pub(super) struct InFlight {
    book: Arc<Book>,
    session: Arc<str>,
    request: Option<RequestId>,
}

impl Book {
    fn lock(&self) -> MutexGuard<'_, Pages> {
        self.pages.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl SessionBook {
    /// A book of at most `max` sessions of `rmcp`, the session service's manager, which
    /// closes sessions idle for `timeout`.
    pub(super) fn new(max: usize, timeout: Duration, rmcp: Arc<LocalSessionManager>) -> Self {
        Self(Arc::new(Book {
            max: max.max(1),
            idle_under_pressure: timeout / 5,
            rmcp,
            pages: Mutex::new(Pages {
                sessions: HashMap::new(),
                opening: 0,
                swept: None,
            }),
        }))
    }

    /// Makes room for one more session. At the cap, the session idle longest is closed,
    /// and its id returned with the place; `None` when every session is busy.
    pub(super) async fn open(&self) -> Option<(Opening, Option<Arc<str>>)> {
        self.close_idle_under_pressure().await;
        if self.reserve() {
            return Some((Opening(Arc::clone(&self.0)), None));
        }
        // Full: first forget the sessions rmcp has closed on its own (idle, or ended).
        let known: Vec<Arc<str>> = self.0.lock().sessions.keys().cloned().collect();
        for id in known {
            if !self.0.rmcp.has_session(&id).await.unwrap_or(false) {
                self.0.lock().sessions.remove(&id);
            }
        }
        if self.reserve() {
            return Some((Opening(Arc::clone(&self.0)), None));
        }
        let oldest = {
            let mut pages = self.0.lock();
            let oldest = pages
                .sessions
                .iter()
                .filter(|(_, page)| page.busy == 0)
                .min_by_key(|(_, page)| page.last_used)
                .map(|(id, _)| Arc::clone(id))?;
            pages.sessions.remove(&oldest);
            pages.opening += 1;
            oldest
        };
        let opening = Opening(Arc::clone(&self.0));
        tracing::info!(session = %oldest, max = self.0.max, "closing the session idle longest: at the session cap");
        self.close(&oldest).await;
        Some((opening, Some(oldest)))
    }

    /// With more than half the cap open, closes the sessions idle longer than a fifth of
    /// the timeout (looking at most once a second).
    async fn close_idle_under_pressure(&self) {
        let idle: Vec<Arc<str>> = {
            let mut pages = self.0.lock();
            let now = Instant::now();
            if (pages.sessions.len() + pages.opening) * 2 <= self.0.max
                || pages
                    .swept
                    .is_some_and(|swept| now.duration_since(swept) < SWEEP_EVERY)
            {
                return;
            }
            pages.swept = Some(now);
            let limit = self.0.idle_under_pressure;
            let idle: Vec<Arc<str>> = pages
                .sessions
                .iter()
                .filter(|(_, page)| page.busy == 0 && now.duration_since(page.last_used) > limit)
                .map(|(id, _)| Arc::clone(id))
                .collect();
            for id in &idle {
                pages.sessions.remove(id);
            }
            idle
        };
        if idle.is_empty() {
            return;
        }
        tracing::info!(
            sessions = idle.len(),
            idle = ?self.0.idle_under_pressure,
            "closing sessions idle too long while more than half the session cap is open"
        );
        for id in idle {
            self.close(&id).await;
        }
    }

    /// Closes `id` in rmcp (its client gets 404 from now on), already out of the book.
    async fn close(&self, id: &Arc<str>) {
        if let Err(error) = self.0.rmcp.close_session(id).await {
            tracing::debug!(%error, "could not close the session");
        }
    }

    /// Takes a place if there is one.
    fn reserve(&self) -> bool {
        let mut pages = self.0.lock();
        if pages.sessions.len() + pages.opening < self.0.max {
            pages.opening += 1;
            true
        } else {
            false
        }
    }

    /// Marks a request of `session` (with its id, `None` for a notification, a response
    /// or a `GET` stream) in flight until the returned guard drops; `Ok(None)` for a
    /// session the book does not know (rmcp answers it 404). `Err` with the id when that id
    /// is already running in the session.
    pub(super) fn enter(
        &self,
        session: &str,
        request: Option<RequestId>,
    ) -> Result<Option<InFlight>, RequestId> {
        let mut pages = self.0.lock();
        let Some((key, _)) = pages.sessions.get_key_value(session) else {
            return Ok(None);
        };
        let key = Arc::clone(key);
        let Some(page) = pages.sessions.get_mut(session) else {
            return Ok(None);
        };
        if let Some(id) = &request
            && !page.running.insert(id.clone())
        {
            return Err(id.clone());
        }
        page.busy += 1;
        page.last_used = Instant::now();
        Ok(Some(InFlight {
            book: Arc::clone(&self.0),
            session: key,
            request,
        }))
    }

    /// Records `session`, opened by another replica and restored here from the shared
    /// state (docs/deploy.md), unless the book knows it already. It counts against the cap
    /// from now on, though it was not refused at it: the client holds it already.
    pub(super) fn adopt(&self, session: &str) {
        self.0
            .lock()
            .sessions
            .entry(session.into())
            .or_insert_with(|| Page {
                last_used: Instant::now(),
                busy: 0,
                running: HashSet::new(),
                batches: false,
            });
    }

    /// Whether `session` takes JSON-RPC batches (it initialized with 2025-03-26).
    pub(super) fn takes_batches(&self, session: &str) -> bool {
        self.0
            .lock()
            .sessions
            .get(session)
            .is_some_and(|page| page.batches)
    }

    /// Forgets `session` (the client deleted it).
    pub(super) fn forget(&self, session: &str) {
        self.0.lock().sessions.remove(session);
    }
}

impl Opening {
    /// Records the session the `initialize` opened; `batches` when it asked for the
    /// revision with JSON-RPC batches.
    pub(super) fn opened(self, session: &str, batches: bool) {
        self.0.lock().sessions.insert(
            session.into(),
            Page {
                last_used: Instant::now(),
                busy: 0,
                running: HashSet::new(),
                batches,
            },
        );
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        let mut pages = self.0.lock();
        pages.opening = pages.opening.saturating_sub(1);
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut pages = self.book.lock();
        if let Some(page) = pages.sessions.get_mut(&self.session) {
            page.busy = page.busy.saturating_sub(1);
            page.last_used = Instant::now();
            if let Some(id) = &self.request {
                page.running.remove(id);
            }
        }
    }
}

/// Tells rmcp's worker for session `id` that the session is alive, resetting its idle
/// timeout, when the session's calls take the direct path and the worker sees none of them.
///
/// The one place this crate reaches past rmcp's `SessionManager` trait: rmcp 3.11.0 has no
/// call that only says "alive". Its worker resets the timeout on any event it receives,
/// and the trait's calls that send one either carry a message to the handler
/// (`accept_message`, `create_stream`) or open a stream; so this takes the session's
/// handle from `LocalSessionManager::sessions` (a public field) and closes a request
/// stream that does not exist (`close_request_wise_channel` with an id rmcp never hands
/// out: they count up from 0), an event that does nothing else.
pub(super) async fn keep_alive(rmcp: &LocalSessionManager, id: &str) {
    let handle = rmcp.sessions.read().await.get(id).cloned();
    if let Some(handle) = handle {
        let _ = handle.close_request_wise_channel(u64::MAX).await;
    }
}

/// `response`, with `held` (the request in flight, a `GET` stream counted) kept until its
/// body has been sent or dropped (an event stream lasts as long as the client listens).
pub(super) fn until_sent<H: Send + Unpin + 'static>(
    response: Response,
    held: Option<H>,
) -> Response {
    match held {
        Some(held) => response.map(|body| Body::new(Tracked { body, _held: held })),
        None => response,
    }
}

struct Tracked<H> {
    body: Body,
    _held: H,
}

impl<H: Unpin> HttpBody for Tracked<H> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body)
            .poll_frame(cx)
            .map_ok(|frame| frame.map_data(without_progress_tokens))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// An event-stream chunk with `_meta.progressToken` taken out of every server→client
/// request in it: rmcp gives each request it sends a progress token, which a request from
/// the server must not carry (stdio strips it as it writes,
/// [`crate::bridge::drop_progress_token`]). Chunks without the word pass untouched.
fn without_progress_tokens(chunk: Bytes) -> Bytes {
    const NEEDLE: &[u8] = b"\"progressToken\"";
    if !chunk.windows(NEEDLE.len()).any(|window| window == NEEDLE) {
        return chunk;
    }
    let Ok(text) = std::str::from_utf8(&chunk) else {
        return chunk;
    };
    let mut changed = false;
    let lines: Vec<String> = text
        .split('\n')
        .map(|line| {
            let Some(data) = line.strip_prefix("data:") else {
                return line.to_owned();
            };
            let Ok(mut message) = serde_json::from_str::<serde_json::Value>(data.trim_start())
            else {
                return line.to_owned();
            };
            let is_request = message.get("id").is_some() && message.get("method").is_some();
            let removed = is_request
                && message
                    .pointer_mut("/params/_meta")
                    .and_then(serde_json::Value::as_object_mut)
                    .and_then(|meta| meta.remove("progressToken"))
                    .is_some();
            if removed {
                changed = true;
                format!("data: {message}")
            } else {
                line.to_owned()
            }
        })
        .collect();
    if changed {
        Bytes::from(lines.join("\n"))
    } else {
        chunk
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_to_the_client_lose_their_progress_token_and_nothing_else_changes() {
        let request = "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"roots/list\",\"params\":{\"_meta\":{\"progressToken\":1}}}\n\n";
        let stripped = without_progress_tokens(Bytes::from(request));
        let text = std::str::from_utf8(&stripped).unwrap();
        assert!(!text.contains("progressToken"), "{text}");
        assert!(text.ends_with("\n\n"), "{text:?}");
        let progress = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n";
        assert_eq!(without_progress_tokens(Bytes::from(progress)), progress);
    }
}
