//! `skills/` of a tools folder: Agent Skills served over MCP (docs/skills.md, "Serving
//! skills"; the `io.modelcontextprotocol/skills` extension, SEP-2640).
//!
//! Every folder under `skills/` that holds a `SKILL.md` is a skill. Its `SKILL.md` opens
//! with front matter in the Agent Skills format: `name` (lowercase letters, digits and
//! single hyphens, at most 64 characters, equal to the folder's name) and `description`
//! (1 to 1,024 characters); other keys are carried as they are. Each file of the skill
//! (hidden `.` and private `_` names left out, as everywhere in a tools folder) becomes a
//! `skill://PATH/FILE` resource, where `PATH` is the skill folder's path under `skills/`,
//! listed with its size and `sha256:` digest; UTF-8 files are served as text, the others
//! as blobs. A `skill://PATH/_manifest` resource lists the files for clients that do not
//! speak the extension.
//!
//! A broken skill (front matter missing or invalid, a name that is not its folder's, more
//! than 512 files or 16 MiB) is a diagnostic naming its `SKILL.md` and the fix; the other
//! skills and every tool are still served.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use sha2::{Digest as _, Sha256};
use toolsmith_model::{
    Diagnostic, JsonObject, MAX_SKILL_BYTES, MAX_SKILL_FILES, Resource, ResourceBody, ResourceInfo,
    SKILL_FILE, SKILL_MANIFEST, SKILL_SCHEME, Skill, SkillFile, SourceLocation,
};

use crate::front_matter::{self, Node, Value};
use crate::mime;

/// The folder of a tools folder that holds skills.
pub const SKILLS_FOLDER: &str = "skills";

/// The Agent Skills limits on `name` and `description` (agentskills.io specification).
const MAX_NAME: usize = 64;
const MAX_DESCRIPTION: usize = 1024;

/// The skills of `root/skills/`, with the resources that serve their files; never fails as
/// a whole.
pub(crate) fn load(root: &Path) -> (Vec<Skill>, Vec<Resource>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let base = root.join(SKILLS_FOLDER);
    if !base.is_dir() {
        return (Vec::new(), Vec::new(), diagnostics);
    }
    let found = match crate::Walk::new(&base).files() {
        Ok(found) => found,
        Err(error) => {
            diagnostics.push(Diagnostic::error(
                "unreadable-file",
                SourceLocation::file(&base),
                format!("cannot read the skills folder: {error}"),
            ));
            return (Vec::new(), Vec::new(), diagnostics);
        }
    };
    // `/`-separated paths under `skills/`, sorted as text.
    let files: BTreeMap<String, PathBuf> = found
        .into_iter()
        .filter_map(|path| {
            let relative = path.strip_prefix(&base).ok()?;
            let key = relative
                .components()
                .map(|part| part.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            Some((key, path))
        })
        .collect();
    let mut skills = Vec::new();
    let mut resources = Vec::new();
    for (key, path) in &files {
        let Some(folder) = key
            .strip_suffix(SKILL_FILE)
            .and_then(|folder| folder.strip_suffix('/'))
        else {
            continue;
        };
        let prefix = format!("{folder}/");
        let members: Vec<(&str, &PathBuf)> = files
            .range(prefix.clone()..)
            .take_while(|(key, _)| key.starts_with(&prefix))
            .map(|(key, path)| (&key[prefix.len()..], path))
            .collect();
        match load_skill(folder, path, &members) {
            Ok((skill, mut files)) => {
                skills.push(skill);
                resources.append(&mut files);
            }
            Err(diagnostic) => diagnostics.push(*diagnostic),
        }
    }
    (skills, resources, diagnostics)
}

/// One skill: the folder `folder` (under `skills/`) whose `SKILL.md` is `skill_md` and
/// whose files are `members` (paths under the folder).
fn load_skill(
    folder: &str,
    skill_md: &Path,
    members: &[(&str, &PathBuf)],
) -> Result<(Skill, Vec<Resource>), Box<Diagnostic>> {
    let location = SourceLocation::file(skill_md);
    let invalid = |message: String, help: String| {
        Box::new(Diagnostic::error("invalid-skill", location.clone(), message).with_help(help))
    };
    if members.len() > MAX_SKILL_FILES {
        return Err(invalid(
            format!(
                "the skill `{folder}` has {} files; a skill has at most {MAX_SKILL_FILES}",
                members.len()
            ),
            "move files out of the skill folder, or split it into several skills".to_owned(),
        ));
    }
    let total: u64 = members
        .iter()
        .filter_map(|(_, path)| path.metadata().ok())
        .map(|metadata| metadata.len())
        .sum();
    if total > MAX_SKILL_BYTES {
        return Err(invalid(
            format!(
                "the skill `{folder}` holds {} MiB; a skill holds at most {} MiB",
                total.div_ceil(1 << 20),
                MAX_SKILL_BYTES >> 20
            ),
            "move large files out of the skill folder, or split it into several skills".to_owned(),
        ));
    }
    let mut contents = Vec::with_capacity(members.len());
    for (path, file) in members {
        let bytes = crate::read::read_bytes(file, MAX_SKILL_BYTES)
            .map_err(|error| Box::new(error.diagnostic(SourceLocation::file(file))))?;
        contents.push((*path, bytes));
    }
    build(folder, contents, &location)
}

/// A skill from its files held in memory: `folder` is its path under `skills/` (its last
/// segment the skill's name), `contents` each file's path under it and bytes, `location`
/// where its `SKILL.md` is (or what it was made from) for diagnostics. The same checks as a
/// skill read from `skills/`, except the limits, which bound reading.
///
/// # Errors
///
/// A diagnostic naming the problem and the fix: `SKILL.md` missing or not UTF-8, front
/// matter missing or invalid, a name that is not `folder`'s.
pub fn build(
    folder: &str,
    contents: Vec<(&str, Vec<u8>)>,
    location: &SourceLocation,
) -> Result<(Skill, Vec<Resource>), Box<Diagnostic>> {
    let invalid = |message: String, help: String| {
        Box::new(Diagnostic::error("invalid-skill", location.clone(), message).with_help(help))
    };
    let name = folder.rsplit('/').next().unwrap_or(folder);
    let skill_text = contents
        .iter()
        .find(|(path, _)| *path == SKILL_FILE)
        .and_then(|(_, bytes)| std::str::from_utf8(bytes).ok())
        .ok_or_else(|| {
            invalid(
                format!("`{SKILL_FILE}` of the skill `{folder}` is not UTF-8 text"),
                "save it as UTF-8".to_owned(),
            )
        })?;
    let frontmatter = frontmatter(skill_text).map_err(|(message, help)| invalid(message, help))?;
    check_frontmatter(&frontmatter, name).map_err(|(message, help)| invalid(message, help))?;
    let (mut files, mut resources) = serve_files(folder, name, contents, location);
    // `SKILL.md` first, then by path.
    files.sort_by(|a, b| (a.path != SKILL_FILE, &a.path).cmp(&(b.path != SKILL_FILE, &b.path)));
    let skill = Skill {
        name: name.to_owned(),
        description: frontmatter
            .get("description")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        frontmatter,
        files,
        source: location.clone(),
    };
    let manifest = skill.manifest_text();
    resources.push(file_resource(
        skill.manifest_uri(),
        SKILL_MANIFEST,
        name,
        "application/json",
        ResourceBody::Text(manifest),
        location,
    ));
    Ok((skill, resources))
}

/// The manifest entries and resources of a skill's files (`contents`: path under the skill
/// folder `folder`, and bytes).
fn serve_files(
    folder: &str,
    name: &str,
    contents: Vec<(&str, Vec<u8>)>,
    location: &SourceLocation,
) -> (Vec<SkillFile>, Vec<Resource>) {
    let base_uri = format!(
        "{SKILL_SCHEME}://{}/",
        crate::resources::encode_path(folder)
    );
    let mut files = Vec::with_capacity(contents.len());
    let mut resources = Vec::with_capacity(contents.len() + 1);
    for (path, bytes) in contents {
        let uri = format!("{base_uri}{}", crate::resources::encode_path(path));
        let utf8 = std::str::from_utf8(&bytes).is_ok();
        let mime_type = mime::for_path(Path::new(path)).unwrap_or(if utf8 {
            "text/plain"
        } else {
            "application/octet-stream"
        });
        files.push(SkillFile {
            path: path.to_owned(),
            uri: uri.clone(),
            size: bytes.len() as u64,
            digest: digest(&bytes),
        });
        let body = match String::from_utf8(bytes) {
            Ok(text) => ResourceBody::Text(text),
            Err(error) => ResourceBody::Blob(
                base64::engine::general_purpose::STANDARD.encode(error.as_bytes()),
            ),
        };
        resources.push(file_resource(uri, path, name, mime_type, body, location));
    }
    (files, resources)
}

fn file_resource(
    uri: String,
    path: &str,
    skill: &str,
    mime_type: &str,
    body: ResourceBody,
    location: &SourceLocation,
) -> Resource {
    let size = match &body {
        ResourceBody::Text(text) => text.len(),
        ResourceBody::Blob(blob) => {
            let padding = blob.bytes().rev().take_while(|byte| *byte == b'=').count();
            blob.len() / 4 * 3 - padding
        }
    };
    Resource {
        uri,
        info: ResourceInfo {
            name: format!("{skill}/{path}"),
            mime_type: Some(mime_type.to_owned()),
            source: location.clone(),
            ..ResourceInfo::default()
        },
        body,
        size: Some(size as u64),
    }
}

/// `sha256:` and the lowercase hex SHA-256 of `bytes`, as the extension writes digests.
fn digest(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut digest = String::with_capacity(7 + 64);
    digest.push_str("sha256:");
    for byte in Sha256::digest(bytes) {
        let _ = write!(digest, "{byte:02x}");
    }
    digest
}

/// The front matter of a `SKILL.md` as JSON; `Err((message, help))` when there is none or
/// it does not parse.
fn frontmatter(text: &str) -> Result<JsonObject, (String, String)> {
    let help = || {
        "open `SKILL.md` with `---`, then `name: NAME` and `description: ...` lines, then `---`"
            .to_owned()
    };
    let syntax = |error: front_matter::SyntaxError| {
        (
            format!(
                "the front matter of `SKILL.md` is invalid at line {}: {}",
                error.line, error.message
            ),
            help(),
        )
    };
    let split = front_matter::split(text).map_err(syntax)?;
    let Some((front, first_line)) = split.front else {
        return Err(("`SKILL.md` has no front matter".to_owned(), help()));
    };
    match to_json(front_matter::parse(front, first_line).map_err(syntax)?) {
        serde_json::Value::Object(object) => Ok(object),
        _ => Err((
            "the front matter of `SKILL.md` is not a map of keys".to_owned(),
            help(),
        )),
    }
}

/// A front-matter node as JSON: scalars are text, as the parser keeps them.
fn to_json(node: Node) -> serde_json::Value {
    match node.value {
        Value::Null => serde_json::Value::Null,
        Value::Scalar(text) => serde_json::Value::String(text),
        Value::List(items) => serde_json::Value::Array(items.into_iter().map(to_json).collect()),
        Value::Map(entries) => serde_json::Value::Object(
            entries
                .into_iter()
                .map(|(key, node)| (key, to_json(node)))
                .collect(),
        ),
    }
}

/// The Agent Skills rules on `name` and `description`, and the name's match with `folder`.
fn check_frontmatter(frontmatter: &JsonObject, folder: &str) -> Result<(), (String, String)> {
    let name = frontmatter.get("name").and_then(serde_json::Value::as_str);
    let Some(name) = name else {
        return Err((
            "the front matter of `SKILL.md` has no `name`".to_owned(),
            format!("add `name: {folder}` (the skill folder's name)"),
        ));
    };
    if !is_valid_name(name) {
        return Err((
            format!("the skill name `{name}` is not valid"),
            "a name is 1 to 64 lowercase letters, digits and single hyphens, with no hyphen at either end".to_owned(),
        ));
    }
    if name != folder {
        return Err((
            format!("the skill name `{name}` is not its folder's name `{folder}`"),
            format!("rename the folder to `{name}`, or set `name: {folder}`"),
        ));
    }
    match frontmatter
        .get("description")
        .and_then(serde_json::Value::as_str)
    {
        Some(text) if !text.trim().is_empty() && text.chars().count() <= MAX_DESCRIPTION => Ok(()),
        Some(text) if !text.trim().is_empty() => Err((
            format!(
                "the description of the skill `{name}` has {} characters; at most {MAX_DESCRIPTION}",
                text.chars().count()
            ),
            "shorten it: say what the skill does and when to use it".to_owned(),
        )),
        _ => Err((
            format!("the skill `{name}` has no `description`"),
            "add `description: ...`: what the skill does and when to use it".to_owned(),
        )),
    }
}

/// Lowercase ASCII letters, digits and single hyphens, 1 to 64 characters, no hyphen at
/// either end (the Agent Skills `name`).
fn is_valid_name(name: &str) -> bool {
    (1..=MAX_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, bytes) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        dir
    }

    const PDF: &[u8] = b"---\nname: pdf\ndescription: Fill PDF forms\nlicense: MIT\n---\n# PDF\n";

    #[test]
    fn every_file_is_a_resource_with_its_digest() {
        let dir = folder(&[
            ("skills/pdf/SKILL.md", PDF),
            ("skills/pdf/forms/w 9.txt", b"form"),
            ("skills/pdf/logo.bin", &[0xff, 0x00, 0x10]),
            ("skills/pdf/.hidden", b"x"),
        ]);
        let (skills, resources, diagnostics) = load(dir.path());
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let [skill] = skills.as_slice() else {
            panic!("{skills:?}")
        };
        assert_eq!(skill.uri(), "skill://pdf/SKILL.md");
        assert_eq!(skill.frontmatter["license"], "MIT");
        let paths: Vec<&str> = skill.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["SKILL.md", "forms/w 9.txt", "logo.bin"]);
        assert_eq!(skill.files[1].uri, "skill://pdf/forms/w%209.txt");
        assert_eq!(
            skill.files[1].digest,
            "sha256:07397d633f25a7101990a75864ae03d5a3b9ac07c4ed6accbc52cbfd7d7c13b4"
        );
        let blob = resources
            .iter()
            .find(|r| r.uri == "skill://pdf/logo.bin")
            .unwrap();
        assert!(matches!(blob.body, ResourceBody::Blob(_)));
        assert_eq!(blob.size, Some(3));
        assert!(resources.iter().any(|r| r.uri == "skill://pdf/_manifest"));
    }

    #[test]
    fn a_broken_skill_is_a_diagnostic_and_the_others_load() {
        let dir = folder(&[
            ("skills/pdf/SKILL.md", PDF),
            (
                "skills/Mail/SKILL.md",
                b"---\nname: mail\ndescription: Send mail\n---\n",
            ),
            ("skills/notes/SKILL.md", b"# no front matter\n"),
            ("skills/calc/SKILL.md", b"---\nname: calc\n---\n"),
        ]);
        let (skills, _, diagnostics) = load(dir.path());
        assert_eq!(skills.len(), 1);
        let messages: Vec<String> = diagnostics.iter().map(|d| d.message.clone()).collect();
        assert_eq!(
            messages,
            [
                "the skill name `mail` is not its folder's name `Mail`",
                "the skill `calc` has no `description`",
                "`SKILL.md` has no front matter",
            ],
            "{diagnostics:?}"
        );
        assert!(
            diagnostics[0]
                .location
                .path
                .ends_with("skills/Mail/SKILL.md")
        );
    }

    #[test]
    fn a_skill_over_the_file_limit_is_refused() {
        let mut files: Vec<(String, Vec<u8>)> = vec![(
            "skills/big/SKILL.md".into(),
            b"---\nname: big\ndescription: Big\n---\n".to_vec(),
        )];
        for index in 0..MAX_SKILL_FILES {
            files.push((format!("skills/big/f{index}.txt"), b"x".to_vec()));
        }
        let borrowed: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(path, bytes)| (path.as_str(), bytes.as_slice()))
            .collect();
        let dir = folder(&borrowed);
        let (skills, _, diagnostics) = load(dir.path());
        assert!(skills.is_empty());
        assert!(
            diagnostics[0].message.contains("has 513 files"),
            "{diagnostics:?}"
        );
    }
}
