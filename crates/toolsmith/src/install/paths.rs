//! Where a client's file is on this machine: the client table's path templates resolved
//! against the OS and the environment. A template is a `/`-separated path whose first
//! part may be `~` (the home folder), `{VAR}` (that environment variable, which must be
//! set) or `{VAR|fallback}` (the variable, else the fallback template), e.g.
//! `{XDG_CONFIG_HOME|~/.config}/opencode/opencode.json`.

use std::path::PathBuf;

use super::clients::PerOs;

/// The operating systems the client table knows paths for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Os {
    Linux,
    Macos,
    Windows,
}

impl Os {
    /// The OS this binary was built for (other Unixes use the Linux paths).
    pub(crate) fn current() -> Self {
        if cfg!(target_os = "macos") {
            Self::Macos
        } else if cfg!(windows) {
            Self::Windows
        } else {
            Self::Linux
        }
    }

    pub(crate) fn title(self) -> &'static str {
        match self {
            Self::Linux => "Linux",
            Self::Macos => "macOS",
            Self::Windows => "Windows",
        }
    }

    /// The template `paths` holds for this OS.
    pub(crate) fn pick(self, paths: PerOs) -> Option<&'static str> {
        match self {
            Self::Linux => paths.linux,
            Self::Macos => paths.macos,
            Self::Windows => paths.windows,
        }
    }
}

/// Why a template has no path here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PathError {
    /// Neither `HOME` nor `USERPROFILE` is set.
    NoHome,
    /// The template needs this variable, and it is not set.
    Unset(String),
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoHome => f.write_str("neither HOME nor USERPROFILE is set"),
            Self::Unset(name) => write!(f, "`{name}` is not set"),
        }
    }
}

/// Resolves `template` with `var` reading the environment (empty values count as unset).
pub(crate) fn resolve(
    template: &str,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf, PathError> {
    let set = |name: &str| var(name).filter(|value| !value.is_empty());
    // The first part ends at the first `/` after its braces (a fallback may hold `/`).
    let end = match template.strip_prefix('{') {
        Some(_) => template.find('}').map_or(0, |brace| brace + 1),
        None => 0,
    };
    let (first, rest) = match template[end..].find('/') {
        Some(slash) => (&template[..end + slash], &template[end + slash + 1..]),
        None => (template, ""),
    };
    let mut path = if first == "~" {
        PathBuf::from(
            set("HOME")
                .or_else(|| set("USERPROFILE"))
                .ok_or(PathError::NoHome)?,
        )
    } else if let Some(inner) = first.strip_prefix('{').and_then(|f| f.strip_suffix('}')) {
        let (name, fallback) = match inner.split_once('|') {
            Some((name, fallback)) => (name, Some(fallback)),
            None => (inner, None),
        };
        match (set(name), fallback) {
            (Some(value), _) => PathBuf::from(value),
            (None, Some(fallback)) => resolve(fallback, var)?,
            (None, None) => return Err(PathError::Unset(name.to_owned())),
        }
    } else {
        PathBuf::from(first)
    };
    path.extend(rest.split('/').filter(|part| !part.is_empty()));
    Ok(path)
}

/// This process's environment, for [`resolve`].
pub(crate) fn environment(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        |name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    #[test]
    fn home_variables_and_fallbacks() {
        let vars = [("HOME", "/home/ada"), ("XDG_CONFIG_HOME", "")];
        let var = with(&vars);
        assert_eq!(
            resolve("~/.cursor/mcp.json", &var).unwrap(),
            PathBuf::from("/home/ada/.cursor/mcp.json")
        );
        assert_eq!(
            resolve("{XDG_CONFIG_HOME|~/.config}/zed/settings.json", &var).unwrap(),
            PathBuf::from("/home/ada/.config/zed/settings.json")
        );
        assert_eq!(
            resolve("{APPDATA}/Claude/claude_desktop_config.json", &var),
            Err(PathError::Unset("APPDATA".into()))
        );
        let vars = [
            ("USERPROFILE", "C:/Users/ada"),
            ("CODEX_HOME", "/srv/codex"),
        ];
        let var = with(&vars);
        assert_eq!(
            resolve("~/.mcp.json", &var).unwrap(),
            PathBuf::from("C:/Users/ada/.mcp.json")
        );
        assert_eq!(
            resolve("{CODEX_HOME|~/.codex}/config.toml", &var).unwrap(),
            PathBuf::from("/srv/codex/config.toml")
        );
        assert_eq!(resolve("~/x", &with(&[])), Err(PathError::NoHome));
    }
}
