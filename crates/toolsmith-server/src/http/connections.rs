//! Accepting connections: hyper's HTTP/1 server with a header timeout, and a connection cap
//! past which a connection is answered 503 and closed.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// Accepts connections until `stop`, each holding a permit of `connections`, and serves
/// each with hyper's HTTP/1 server: headers must arrive within `header_timeout` (hyper
/// starts that clock when it waits for a request, so an idle keep-alive connection closes
/// too). Past the cap a connection gets 503 and is closed, so idle or slow clients cannot
/// use up the file descriptors. On `stop`, connections finish what they
/// are answering and close.
pub(super) async fn accept(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    connections: Arc<Semaphore>,
    stop: CancellationToken,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    let lingering = Arc::new(Semaphore::new(LINGERING_REFUSALS));
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors, or a connection reset before we got to it:
                    // wait a little rather than spin.
                    tracing::warn!(%error, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = stop.cancelled() => return,
        };
        let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
            refuse_connection(stream, &lingering);
            continue;
        };
        // SSE responses go out in pieces; without TCP_NODELAY each waits ~40 ms for the
        // client's delayed ACK (harness RESULTS-peers.md).
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
        // Each request learns the peer's address: the caller of `[limits]` without OAuth.
        let address = super::limits::ClientAddress(peer.ip());
        let app = tower::ServiceExt::map_request(
            app.clone(),
            move |mut request: axum::http::Request<hyper::body::Incoming>| {
                request.extensions_mut().insert(address);
                request
            },
        );
        let connection = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app));
        let stop = stop.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let mut connection = std::pin::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(error) = result {
                tracing::debug!(%error, "connection closed");
            }
        });
    }
}

const CONNECTION_REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: 57\r\n\r\nService Unavailable: too many connections; try again soon";

/// How many refused connections may linger at once to read their request (for a clean
/// close); more are closed at once.
const LINGERING_REFUSALS: usize = 64;

/// Answers a connection over the cap with 503 without serving its request. Closing a socket
/// with unread input resets it, and the client may lose the answer: so the refusal reads
/// what the client sends for up to a second, then closes.
fn refuse_connection(mut stream: TcpStream, lingering: &Arc<Semaphore>) {
    tracing::warn!("refused a connection: too many open");
    let Ok(permit) = Arc::clone(lingering).try_acquire_owned() else {
        let _ = stream.try_write(CONNECTION_REFUSAL);
        return;
    };
    tokio::spawn(async move {
        let _permit = permit;
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            stream.write_all(CONNECTION_REFUSAL).await?;
            stream.shutdown().await?;
            let mut sink = [0; 1024];
            while stream.read(&mut sink).await? > 0 {}
            Ok::<(), std::io::Error>(())
        })
        .await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_refusal_is_well_formed() {
        let text = std::str::from_utf8(CONNECTION_REFUSAL).unwrap();
        let (_, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(text.contains(&format!("content-length: {}\r\n", body.len())));
    }
}
