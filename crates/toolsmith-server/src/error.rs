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
            _ => Vec::new(),
        }
    }
}
