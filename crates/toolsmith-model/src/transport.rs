//! The transports a server serves tools on. A tool's `overrides` are keyed by a
//! transport's name, so the same folder can publish different properties over stdio and
//! HTTP.

/// An MCP transport (MCP spec, basic/transports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// Newline-delimited JSON-RPC on a process's stdin and stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
}

impl Transport {
    /// The name a tool's `overrides` use for this transport: `stdio` or `http`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Http => "http",
        }
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::Transport;

    #[test]
    fn transports_are_named_as_overrides_key_them() {
        assert_eq!(Transport::Stdio.to_string(), "stdio");
        assert_eq!(Transport::Http.to_string(), "http");
    }
}
