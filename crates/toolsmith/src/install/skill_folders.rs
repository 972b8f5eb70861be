//! Where each client that reads Agent Skills looks for them (`toolsmith install CLIENT
//! --skills`; docs/skills.md): the user's skills folder, a path template as in [`super::paths`],
//! and the project's, relative to the current folder. Clients not listed here read no
//! skills (or read them only from another client's folder, as opencode also reads Claude's).

use super::clients::PerOs;

/// One client's skills folders.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SkillFolders {
    /// The client's id in the client table.
    pub(crate) client: &'static str,
    pub(crate) user: PerOs,
    pub(crate) project: &'static str,
}

const fn folders(client: &'static str, user: &'static str, project: &'static str) -> SkillFolders {
    SkillFolders {
        client,
        user: PerOs::everywhere(user),
        project,
    }
}

/// Every client that reads skills, as each one's documentation gives the folders.
pub(crate) static SKILL_FOLDERS: &[SkillFolders] = &[
    folders("claude-code", "~/.claude/skills", ".claude/skills"),
    // Codex reads the folders the Agent Skills standard shares between agents.
    folders("codex", "~/.agents/skills", ".agents/skills"),
    folders("gemini", "~/.gemini/skills", ".gemini/skills"),
    folders(
        "opencode",
        "{XDG_CONFIG_HOME|~/.config}/opencode/skills",
        ".opencode/skills",
    ),
    folders("copilot-cli", "~/.copilot/skills", ".github/skills"),
    folders("cursor", "~/.cursor/skills", ".cursor/skills"),
];

/// The skills folders of the client `id`, if it reads skills.
pub(crate) fn of(id: &str) -> Option<&'static SkillFolders> {
    SKILL_FOLDERS.iter().find(|folders| folders.client == id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::clients::Client;

    #[test]
    fn every_entry_names_a_client_of_the_table() {
        for folders in SKILL_FOLDERS {
            assert!(Client::find(folders.client).is_some(), "{}", folders.client);
        }
    }
}
