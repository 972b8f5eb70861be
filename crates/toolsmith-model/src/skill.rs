//! Agent Skills served over MCP (the `io.modelcontextprotocol/skills` extension, SEP-2640):
//! a [`Skill`] is a folder whose `SKILL.md` front matter names and describes it, every file
//! of which is a `skill://` resource listed with its size and `sha256:` digest, so a client
//! can fetch the whole skill and verify each file.
//!
//! The files themselves are ordinary [`Resource`](crate::Resource)s held with the server's
//! other resources ([`Resources::with_skills`](crate::Resources::with_skills)); a skill
//! holds only its manifest. Digests are computed by whoever reads the files (the folder
//! loader): this crate does no hashing and no I/O.

use serde_json::{Value, json};

use crate::definition::{JsonObject, SourceLocation};

/// The extension's identifier, as a server advertises it under `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The URI scheme of skill files.
pub const SKILL_SCHEME: &str = "skill";

/// The file every skill folder holds at its root.
pub const SKILL_FILE: &str = "SKILL.md";

/// The resource next to a skill's files that lists them for clients that do not speak the
/// extension (2025-11-25 and earlier): `{"files": [{"path", "size", "hash"}]}`, as
/// FastMCP's skill providers serve it.
pub const SKILL_MANIFEST: &str = "_manifest";

/// The extension's limit on the files of one skill.
pub const MAX_SKILL_FILES: usize = 512;

/// The extension's limit on the bytes of one skill, all files together.
pub const MAX_SKILL_BYTES: u64 = 16 << 20;

/// One file of a skill, as its manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// The path under the skill's folder, `/`-separated (`SKILL.md`, `scripts/run.sh`).
    pub path: String,
    /// The `skill://` URI it is read at.
    pub uri: String,
    /// Its size in bytes.
    pub size: u64,
    /// `sha256:` and the lowercase hex digest of its bytes.
    pub digest: String,
}

/// A skill: its front matter and the manifest of its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// The front matter's `name`, equal to the skill folder's name.
    pub name: String,
    /// The front matter's `description`.
    pub description: String,
    /// The whole front matter as JSON, carried verbatim to clients.
    pub frontmatter: JsonObject,
    /// Every file, `SKILL.md` first, then by path.
    pub files: Vec<SkillFile>,
    /// Where its `SKILL.md` is.
    pub source: SourceLocation,
}

impl Skill {
    /// The URI of its `SKILL.md`, by which the extension addresses the skill.
    pub fn uri(&self) -> &str {
        self.files
            .iter()
            .find(|file| file.path == SKILL_FILE)
            .map_or("", |file| file.uri.as_str())
    }

    /// The URI of its [`SKILL_MANIFEST`] resource.
    pub fn manifest_uri(&self) -> String {
        let uri = self.uri();
        format!(
            "{}{SKILL_MANIFEST}",
            uri.strip_suffix(SKILL_FILE).unwrap_or(uri)
        )
    }

    /// Its total size in bytes.
    pub fn size(&self) -> u64 {
        self.files.iter().map(|file| file.size).sum()
    }

    /// The extension's `Skill` entry (`skills/list`, `skills/get`): `{uri, frontmatter,
    /// resources: [{uri, digest, size}]}`.
    pub fn to_mcp(&self) -> Value {
        let resources: Vec<Value> = self
            .files
            .iter()
            .map(|file| json!({"uri": file.uri, "digest": file.digest, "size": file.size}))
            .collect();
        json!({
            "uri": self.uri(),
            "frontmatter": self.frontmatter,
            "resources": resources,
        })
    }

    /// The text of its [`SKILL_MANIFEST`] resource.
    pub fn manifest_text(&self) -> String {
        let files: Vec<Value> = self
            .files
            .iter()
            .map(|file| json!({"path": file.path, "size": file.size, "hash": file.digest}))
            .collect();
        json!({ "skill": self.name, "files": files }).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill() -> Skill {
        let file = |path: &str, size| SkillFile {
            path: path.to_owned(),
            uri: format!("skill://pdf/{path}"),
            size,
            digest: format!("sha256:{}", "0".repeat(64)),
        };
        Skill {
            name: "pdf".to_owned(),
            description: "Fill PDF forms".to_owned(),
            frontmatter: serde_json::from_value(
                json!({"name": "pdf", "description": "Fill PDF forms"}),
            )
            .unwrap(),
            files: vec![file("SKILL.md", 10), file("forms/a.txt", 5)],
            source: SourceLocation::file("skills/pdf/SKILL.md"),
        }
    }

    #[test]
    fn the_entry_lists_every_file_with_its_digest() {
        let entry = skill().to_mcp();
        assert_eq!(entry["uri"], "skill://pdf/SKILL.md");
        assert_eq!(entry["frontmatter"]["name"], "pdf");
        assert_eq!(entry["resources"][1]["uri"], "skill://pdf/forms/a.txt");
        assert_eq!(entry["resources"][1]["size"], 5);
        assert_eq!(skill().size(), 15);
    }

    #[test]
    fn the_manifest_sits_next_to_skill_md() {
        assert_eq!(skill().manifest_uri(), "skill://pdf/_manifest");
        let manifest: Value = serde_json::from_str(&skill().manifest_text()).unwrap();
        assert_eq!(manifest["files"][0]["path"], "SKILL.md");
    }
}
