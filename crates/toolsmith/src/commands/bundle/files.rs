//! Which of the folder's files go into the bundle: everything but `.git`, caches, what the
//! folder's `.mcpbignore` names (gitignore syntax, as the MCPB CLI reads it), and files
//! that look like secrets, which only `--include` lets in.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use globset::{Glob, GlobMatcher};

use crate::error::Hinted;

/// The file in the folder that lists what to leave out.
const IGNORE_FILE: &str = ".mcpbignore";

/// Left out of every bundle: version control, the caches Toolsmith and Python write, and
/// other bundles (the MCPB CLI leaves out the same).
const ALWAYS_LEFT_OUT: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".DS_Store",
    "Thumbs.db",
    ".gitignore",
    ".mcpbignore",
    ".toolsmith",
    "__pycache__",
    "*.pyc",
    "*.mcpb",
    "*.mcpb.partial",
];

/// File names that look like secrets: environment files, private keys, keystores and
/// credential files.
const SECRET_NAMES: &[&str] = &[
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    ".netrc",
    ".npmrc",
    ".pypirc",
    "credentials",
    "credentials.json",
    "*secret*",
];

/// How deep the walk goes, so a link to a parent folder cannot make it endless.
const MAX_DEPTH: usize = 32;

/// What goes into the bundle, relative to the folder.
#[derive(Debug)]
pub(super) struct Selection {
    /// Bundled, sorted.
    pub(super) files: Vec<PathBuf>,
    /// Left out because they look like secrets (and `--include` did not name them).
    pub(super) secrets: Vec<PathBuf>,
}

impl Selection {
    /// The files of `root` to bundle. `output` (the bundle being written) is never one of
    /// them; every `--include` path must name a file of the folder.
    pub(super) fn of(root: &Path, include: &[PathBuf], output: &Path) -> anyhow::Result<Self> {
        let mut rules = Rules::default();
        for pattern in ALWAYS_LEFT_OUT {
            rules.add(pattern)?;
        }
        let ignore_file = root.join(IGNORE_FILE);
        match std::fs::read_to_string(&ignore_file) {
            Ok(text) => {
                for line in text.lines() {
                    let line = line.trim();
                    if !line.is_empty() && !line.starts_with('#') {
                        rules
                            .add(line)
                            .with_context(|| format!("cannot read `{}`", ignore_file.display()))?;
                    }
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                return Err(error)
                    .with_context(|| format!("cannot read `{}`", ignore_file.display()));
            }
        }
        let secret = Rules::names(SECRET_NAMES)?;
        let included: BTreeSet<PathBuf> = include.iter().map(|path| normal(path)).collect();
        let output = output.canonicalize().ok();
        let mut found = Vec::new();
        walk(root, Path::new(""), 0, &rules, &mut found)?;
        let mut selection = Self {
            files: Vec::new(),
            secrets: Vec::new(),
        };
        for relative in found {
            let path = root.join(&relative);
            if output.is_some() && path.canonicalize().ok() == output {
                continue;
            }
            if secret.matches(&relative, false) && !included.contains(&relative) {
                selection.secrets.push(relative);
            } else {
                selection.files.push(relative);
            }
        }
        for path in &included {
            if !selection.files.contains(path) {
                return Err(Hinted::new(format!(
                    "`--include {}` names no file of the folder",
                    path.display()
                ))
                .hint("give the path relative to the tools folder, e.g. `--include .env.example`; a file `.mcpbignore` leaves out stays out")
                .into());
            }
        }
        selection.files.sort();
        selection.secrets.sort();
        Ok(selection)
    }
}

/// `path` without `./` parts, as the walk names files.
fn normal(path: &Path) -> PathBuf {
    path.components()
        .filter(|part| !matches!(part, std::path::Component::CurDir))
        .collect()
}

/// Collects the files under `root/relative` that `rules` keep, following links, sorted by
/// name within each folder.
fn walk(
    root: &Path,
    relative: &Path,
    depth: usize,
    rules: &Rules,
    found: &mut Vec<PathBuf>,
) -> anyhow::Result<()> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    let dir = root.join(relative);
    let entries =
        std::fs::read_dir(&dir).with_context(|| format!("cannot read `{}`", dir.display()))?;
    let mut names: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.file_name())
        .collect();
    names.sort();
    for name in names {
        let child = relative.join(&name);
        // Followed: a link is bundled as what it points at. A broken link is skipped.
        let Ok(meta) = std::fs::metadata(root.join(&child)) else {
            continue;
        };
        if rules.matches(&child, meta.is_dir()) {
            continue;
        }
        if meta.is_dir() {
            walk(root, &child, depth + 1, rules, found)?;
        } else if meta.is_file() {
            found.push(child);
        }
    }
    Ok(())
}

/// Patterns in gitignore syntax: `name` matches at any depth, a pattern with a `/` is
/// anchored at the folder, a trailing `/` matches folders only, `!` brings back what an
/// earlier line left out; the last line that matches decides.
#[derive(Debug, Default)]
struct Rules {
    rules: Vec<Rule>,
}

#[derive(Debug)]
struct Rule {
    matcher: GlobMatcher,
    negated: bool,
    folders_only: bool,
}

impl Rules {
    /// Rules matching these file names at any depth.
    fn names(patterns: &[&str]) -> anyhow::Result<Self> {
        let mut rules = Self::default();
        for pattern in patterns {
            rules.add(pattern)?;
        }
        Ok(rules)
    }

    fn add(&mut self, line: &str) -> anyhow::Result<()> {
        let (negated, pattern) = match line.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let (folders_only, pattern) = match pattern.strip_suffix('/') {
            Some(rest) => (true, rest),
            None => (false, pattern),
        };
        let anchored = pattern.contains('/');
        let pattern = pattern.trim_start_matches('/');
        let glob = if anchored {
            pattern.to_owned()
        } else {
            format!("**/{pattern}")
        };
        let matcher = globset::GlobBuilder::new(&glob)
            .literal_separator(true)
            .build()
            .map(|glob: Glob| glob.compile_matcher())
            .map_err(|error| Hinted::new(format!("invalid pattern `{line}`")).caused_by(error))?;
        self.rules.push(Rule {
            matcher,
            negated,
            folders_only,
        });
        Ok(())
    }

    /// Whether `relative` (a folder when `is_dir`) is left out.
    fn matches(&self, relative: &Path, is_dir: bool) -> bool {
        let mut left_out = false;
        for rule in &self.rules {
            if rule.folders_only && !is_dir {
                continue;
            }
            if rule.matcher.is_match(relative) {
                left_out = !rule.negated;
            }
        }
        left_out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(lines: &[&str]) -> Rules {
        let mut rules = Rules::default();
        for line in lines {
            rules.add(line).unwrap();
        }
        rules
    }

    #[test]
    fn a_name_matches_at_any_depth_and_an_anchored_pattern_only_at_the_top() {
        let rules = rules(&["*.log", "/build", "docs/"]);
        assert!(rules.matches(Path::new("a.log"), false));
        assert!(rules.matches(Path::new("deep/er/a.log"), false));
        assert!(rules.matches(Path::new("build"), true));
        assert!(!rules.matches(Path::new("sub/build"), true));
        assert!(rules.matches(Path::new("docs"), true));
        assert!(!rules.matches(Path::new("docs"), false));
    }

    #[test]
    fn a_negated_line_brings_a_file_back() {
        let rules = rules(&["*.json", "!keep.json"]);
        assert!(rules.matches(Path::new("drop.json"), false));
        assert!(!rules.matches(Path::new("keep.json"), false));
    }

    #[test]
    fn secrets_are_recognised_by_name() {
        let secret = Rules::names(SECRET_NAMES).unwrap();
        for name in [
            ".env",
            ".env.production",
            "certs/server.pem",
            "id_ed25519",
            "my_secret.txt",
        ] {
            assert!(secret.matches(Path::new(name), false), "{name}");
        }
        for name in [
            "forecast.star",
            "id_ed25519.pub",
            "environment.md",
            "keys.star",
        ] {
            assert!(!secret.matches(Path::new(name), false), "{name}");
        }
    }
}
