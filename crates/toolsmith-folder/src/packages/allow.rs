//! The cap on a package's tools: each grant in a tool's `permissions` is kept only when the
//! host's `[packages.NAME] allow` covers it (for `fs.read`, the package's own folder is
//! always allowed), and the rest is recorded as [`Withheld`] for `toolsmith check` and
//! `toolsmith packages list`. The cap is applied to the definition the tool is built from,
//! so the tool really runs without what was withheld.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolsmith_command::Confinement;
use toolsmith_model::{PermissionFamily, Permissions, ToolDefinition, Withheld};
use toolsmith_starlark::Restrict;

/// What the host lets one package's tools hold.
#[derive(Debug, Clone)]
pub(crate) struct Allow {
    /// `NAME` of `[packages.NAME]`.
    key: String,
    /// The package folder, where the tools' relative grants point.
    folder: PathBuf,
    /// The host folder, where `allow`'s relative paths point.
    host: PathBuf,
    /// `allow`, as written.
    grants: Permissions,
    /// `allow = {"commands" = true}`: whether the tools may run programs.
    commands: bool,
}

impl Allow {
    pub(crate) fn new(
        key: &str,
        folder: &Path,
        host: &Path,
        grants: Permissions,
        commands: bool,
    ) -> Self {
        Self {
            key: key.to_owned(),
            folder: crate::resolved_path(folder),
            host: crate::resolved_path(host),
            grants,
            commands,
        }
    }

    /// `[packages.NAME] allow`, for messages.
    pub(crate) fn table(&self) -> String {
        format!("[packages.{}] allow", self.key)
    }

    /// Whether the package's tools may run programs (`allow = {"commands" = true}`).
    pub(crate) fn commands(&self) -> bool {
        self.commands
    }

    /// What the programs `definition`'s tool starts may touch: nothing at all without
    /// `commands = true`; else the package folder, the system folders, and the `fs.*`
    /// grants and network it holds after [`cap`](Self::cap).
    pub(crate) fn confinement(&self, definition: &ToolDefinition) -> Confinement {
        if !self.commands {
            return Confinement::refuse(self.commands_denied());
        }
        let permissions = &definition.permissions;
        let confinement = permissions
            .fs_read
            .iter()
            .fold(Confinement::new(&self.folder), |confinement, grant| {
                confinement.read(grant_path(&self.folder, grant))
            });
        permissions
            .fs_write
            .iter()
            .fold(confinement, |confinement, grant| {
                confinement.write(grant_path(&self.folder, grant))
            })
            .network(!permissions.net.is_empty())
    }

    /// Why a tool of this package may not run a program, and the fix.
    pub(crate) fn commands_denied(&self) -> String {
        format!(
            "package `{key}` may not run programs; to let its command tools run (confined to the package folder and their grants), add `\"commands\" = true` to `[packages.{key}] allow` in the host's toolsmith.toml",
            key = self.key
        )
    }

    /// The cap as a load restriction.
    pub(crate) fn restriction(&self) -> Restrict {
        let allow = self.clone();
        Restrict {
            id: format!(
                "{}|{}|{}|{:?}",
                self.key,
                self.folder.display(),
                self.host.display(),
                self.grants
            ),
            apply: Arc::new(move |definition| allow.cap(definition)),
        }
    }

    /// Keeps in `definition.permissions` what the host allows; the rest becomes
    /// `definition.withheld`.
    pub(crate) fn cap(&self, definition: &mut ToolDefinition) {
        let mut withheld = Permissions::default();
        let mut allow = Permissions::default();
        for family in PermissionFamily::ALL {
            let (kept, denied): (Vec<String>, Vec<String>) = definition
                .permissions
                .family(family)
                .iter()
                .cloned()
                .partition(|grant| self.covers(family, grant));
            *definition.permissions.family_mut(family) = kept;
            *allow.family_mut(family) = denied
                .iter()
                .map(|grant| self.as_allowed(family, grant))
                .collect();
            *withheld.family_mut(family) = denied;
        }
        definition.withheld = (!withheld.is_empty()).then(|| {
            Box::new(Withheld {
                package: self.key.clone(),
                permissions: withheld,
                allow,
            })
        });
    }

    /// A tool's `grant` as `allow` would write it: an `fs.*` folder relative to the host
    /// folder (absolute when it is on another branch of the tree than the host folder).
    fn as_allowed(&self, family: PermissionFamily, grant: &str) -> String {
        match family {
            PermissionFamily::Net | PermissionFamily::Env => grant.to_owned(),
            PermissionFamily::FsRead | PermissionFamily::FsWrite => {
                let target = grant_path(&self.folder, grant);
                match target.strip_prefix(&self.host) {
                    Ok(inside) if inside.as_os_str().is_empty() => ".".to_owned(),
                    Ok(inside) => inside.display().to_string(),
                    Err(_) => target.display().to_string(),
                }
            }
        }
    }

    /// Whether `allow` covers a tool's `grant` of `family`.
    fn covers(&self, family: PermissionFamily, grant: &str) -> bool {
        let allowed = self.grants.family(family);
        match family {
            PermissionFamily::Net => allowed.iter().any(|allowed| host_covers(allowed, grant)),
            PermissionFamily::Env => allowed
                .iter()
                .any(|allowed| allowed == "*" || allowed == grant),
            PermissionFamily::FsRead | PermissionFamily::FsWrite => {
                let target = grant_path(&self.folder, grant);
                (family == PermissionFamily::FsRead && target.starts_with(&self.folder))
                    || allowed
                        .iter()
                        .any(|allowed| target.starts_with(grant_path(&self.host, allowed)))
            }
        }
    }
}

/// Whether the `net` grant `allowed` covers the `net` grant `grant`: `*` covers every host,
/// `*.example.com` its subdomains (and grants of them), a host without a port every port.
fn host_covers(allowed: &str, grant: &str) -> bool {
    if allowed == "*" {
        return true;
    }
    let (allowed_host, allowed_port) = split_port(allowed);
    let (host, port) = split_port(grant);
    let port_covered = allowed_port.is_none() || allowed_port == port;
    let host = host.to_ascii_lowercase();
    let allowed_host = allowed_host.to_ascii_lowercase();
    let host_covered = allowed_host == host
        || allowed_host
            .strip_prefix("*.")
            .is_some_and(|domain| host.ends_with(&format!(".{domain}")));
    port_covered && host_covered
}

/// `host:port` into its host and port (`[::1]:80` too); no port when none is written.
fn split_port(grant: &str) -> (&str, Option<&str>) {
    match grant.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
            (host.trim_matches(['[', ']']), Some(port))
        }
        _ => (grant.trim_matches(['[', ']']), None),
    }
}

/// The folder an `fs.*` grant names, from `base`, with links and `..` resolved as far as it
/// exists.
fn grant_path(base: &Path, grant: &str) -> PathBuf {
    crate::resolved_path(&base.join(toolsmith_starlark::grant_folder(grant)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_covered_exactly_by_wildcard_or_without_a_port() {
        assert!(host_covers("api.example.com", "API.example.com"));
        assert!(host_covers("*.example.com", "eu.api.example.com"));
        assert!(host_covers("*.example.com", "*.api.example.com"));
        assert!(!host_covers("*.example.com", "example.com"));
        assert!(!host_covers("*.example.com", "*"));
        assert!(host_covers("127.0.0.1", "127.0.0.1:8080"));
        assert!(!host_covers("127.0.0.1:8080", "127.0.0.1"));
        assert!(!host_covers("api.example.com", "evil.com"));
        assert!(host_covers("*", "evil.com"));
    }

    #[test]
    fn the_cap_keeps_what_is_allowed_and_withholds_the_rest() {
        let host = tempfile::tempdir().unwrap();
        let package = host.path().join("weather");
        std::fs::create_dir_all(package.join("data")).unwrap();
        std::fs::create_dir_all(host.path().join("shared")).unwrap();
        let allow = Allow::new(
            "weather",
            &package,
            host.path(),
            Permissions {
                net: vec!["api.example.com".into()],
                env: vec!["API_KEY".into()],
                fs_read: vec!["shared".into()],
                ..Permissions::default()
            },
            false,
        );
        let mut definition =
            ToolDefinition::new("forecast_get", "x", toolsmith_model::JsonObject::new());
        definition.permissions = Permissions {
            net: vec!["api.example.com".into(), "evil.com".into()],
            env: vec!["API_KEY".into(), "HOME".into()],
            fs_read: vec![
                "data".into(),
                "../shared/*".into(),
                "/etc".into(),
                "../..".into(),
            ],
            fs_write: vec!["data".into()],
        };
        allow.cap(&mut definition);
        assert_eq!(
            definition.permissions,
            Permissions {
                net: vec!["api.example.com".into()],
                env: vec!["API_KEY".into()],
                fs_read: vec!["data".into(), "../shared/*".into()],
                fs_write: vec![],
            }
        );
        let withheld = definition.withheld.unwrap();
        assert_eq!(withheld.package, "weather");
        assert_eq!(withheld.allow.fs_read[0], "/etc");
        assert_eq!(withheld.allow.fs_write, ["weather/data"]);
        assert_eq!(
            withheld.permissions,
            Permissions {
                net: vec!["evil.com".into()],
                env: vec!["HOME".into()],
                fs_read: vec!["/etc".into(), "../..".into()],
                fs_write: vec!["data".into()],
            }
        );
    }
}
