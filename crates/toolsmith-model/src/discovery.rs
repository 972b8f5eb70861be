//! Server-wide discovery settings (docs/search.md): `[search]` in `toolsmith.toml` and
//! `serve --search`. Whether the tools go behind `tool_search` is decided by
//! `toolsmith_search::plan`, which counts their tokens.

use std::fmt;
use std::str::FromStr;

/// How many tokens the listed tools' definitions may take before `auto` puts every tool
/// behind `tool_search`.
pub const DEFAULT_BUDGET_TOKENS: usize = 8_000;

/// When tools go behind `tool_search` and `execute_tool`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SearchMode {
    /// Tools marked `discoverable` are found through search; when the other tools'
    /// definitions exceed the token budget, every tool is.
    #[default]
    Auto,
    /// Every tool is found through search; `tools/list` shows only the two built-ins.
    Always,
    /// No discovery: every tool is listed, `discoverable` is ignored and there are no
    /// built-ins (for clients that bring their own tool search).
    Never,
}

impl SearchMode {
    /// The modes by their `toolsmith.toml` names.
    pub const NAMES: [&str; 3] = ["auto", "always", "never"];

    /// The mode's name in `toolsmith.toml`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Always => "always",
            Self::Never => "never",
        }
    }
}

impl fmt::Display for SearchMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a [`SearchMode`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown search mode `{0}`: use auto, always or never")]
pub struct UnknownSearchMode(pub String);

impl FromStr for SearchMode {
    type Err = UnknownSearchMode;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "auto" => Ok(Self::Auto),
            "always" => Ok(Self::Always),
            "never" => Ok(Self::Never),
            _ => Err(UnknownSearchMode(text.to_owned())),
        }
    }
}

/// `[search]` of `toolsmith.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchSettings {
    /// `mode`: auto (the default), always or never.
    pub mode: SearchMode,
    /// `budget_tokens`: the most tokens of listed definitions `auto` allows.
    pub budget_tokens: usize,
}

impl Default for SearchSettings {
    fn default() -> Self {
        Self {
            mode: SearchMode::Auto,
            budget_tokens: DEFAULT_BUDGET_TOKENS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip_by_name() {
        for name in SearchMode::NAMES {
            assert_eq!(name.parse::<SearchMode>().unwrap().name(), name);
        }
        assert_eq!(
            "sometimes".parse::<SearchMode>().unwrap_err().to_string(),
            "unknown search mode `sometimes`: use auto, always or never"
        );
    }
}
