//! Why a server could not start or stopped.

/// Why a server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The async runtime could not be created.
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
    /// The HTTP address could not be bound.
    #[error("cannot listen on `{address}`")]
    Bind {
        /// The address asked for.
        address: std::net::SocketAddr,
        /// Why (in use, permission denied, …).
        #[source]
        source: std::io::Error,
    },
    /// The HTTP server failed.
    #[error("the HTTP server failed")]
    Http(#[source] std::io::Error),
    /// stdin or stdout could not be used.
    #[error("cannot serve on stdin/stdout")]
    Stdio(#[source] std::io::Error),
    /// The state shared with other replicas (`--state`) could not be used.
    #[error(transparent)]
    State(#[from] crate::replicas::StateError),
    /// The client's first messages were not a valid MCP handshake.
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
}

impl toolsmith_model::Hint for ServeError {
    fn hints(&self) -> Vec<String> {
        match self {
            Self::Bind { address, source } if source.kind() == std::io::ErrorKind::AddrInUse => {
                vec![format!(
                    "another program is using port {}; pick another with --http PORT",
                    address.port()
                )]
            }
            Self::State(crate::replicas::StateError::Unreachable { .. }) => vec![
                "start Redis (or Valkey) first, or give every replica the same --state-key (TOOLSMITH_STATE_KEY) so it can start while Redis is down".to_owned(),
            ],
            _ => Vec::new(),
        }
    }
}
