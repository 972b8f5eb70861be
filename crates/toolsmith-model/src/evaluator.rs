//! Server-wide code-mode settings (docs/code-mode.md): `[evaluator]` in `toolsmith.toml`, a
//! profile's `evaluator`, and `serve --code-mode`. The `run_code` tool itself lives in the
//! `toolsmith-code` crate.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::JsonObject;

/// The evaluator tool's name unless `[evaluator] name` says otherwise.
pub const RUN_CODE: &str = "run_code";

/// Which tools `tools/list` shows next to the evaluator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EvaluatorMode {
    /// The folder's tools stay listed; `run_code` is one more.
    #[default]
    Alongside,
    /// Only `run_code` and `tool_search` are listed; every other tool is reached from code
    /// (or found with `tool_search`).
    Only,
}

impl EvaluatorMode {
    /// The modes by their `toolsmith.toml` names.
    pub const NAMES: [&str; 2] = ["alongside", "only"];

    /// The mode's name in `toolsmith.toml`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Alongside => "alongside",
            Self::Only => "only",
        }
    }
}

impl fmt::Display for EvaluatorMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not an [`EvaluatorMode`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown evaluator mode `{0}`: use alongside or only")]
pub struct UnknownEvaluatorMode(pub String);

impl FromStr for EvaluatorMode {
    type Err = UnknownEvaluatorMode;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "alongside" => Ok(Self::Alongside),
            "only" => Ok(Self::Only),
            _ => Err(UnknownEvaluatorMode(text.to_owned())),
        }
    }
}

/// `[evaluator]` of `toolsmith.toml`: whether the server lists the evaluator tool, under
/// which name, next to which tools, and its options (`[options.run_code]`, merged with
/// `MCP_TOOL_OPTIONS` when the folder loads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvaluatorSettings {
    /// Whether the evaluator is served at all (`[evaluator]` present, `enabled = true`, a
    /// profile's `evaluator = true`, `serve --code-mode`).
    pub enabled: bool,
    /// `mode`: alongside (the default) or only.
    pub mode: EvaluatorMode,
    /// `name`: the tool's name, [`RUN_CODE`] by default.
    pub name: String,
    /// The tool's options: `time_constraint`, `max_session_count`, `max_session_bytes`,
    /// `max_session_age`, `sessions_dir`.
    pub options: JsonObject,
    /// The tools folder served, as its canonical path: saved sessions are kept per folder,
    /// so two servers of different folders never share one. `None` outside a folder.
    pub folder: Option<PathBuf>,
}

impl Default for EvaluatorSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            mode: EvaluatorMode::Alongside,
            name: RUN_CODE.to_owned(),
            options: JsonObject::new(),
            folder: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip_by_name() {
        for name in EvaluatorMode::NAMES {
            assert_eq!(name.parse::<EvaluatorMode>().unwrap().name(), name);
        }
        assert_eq!(
            "sometimes"
                .parse::<EvaluatorMode>()
                .unwrap_err()
                .to_string(),
            "unknown evaluator mode `sometimes`: use alongside or only"
        );
    }
}
