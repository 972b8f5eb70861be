//! `toolsmith skills`: Agent Skills written from the folder's tools, or `--check`ed against
//! what is on disk (docs/skills.md). The skills themselves are built in `crate::skills`.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use anyhow::Context as _;
use serde_json::json;

use crate::ExitStatus;
use crate::args::{SkillGrouping, SkillsArgs};
use crate::error::Hinted;
use crate::folder;
use crate::printer::{Printer, plural};
use crate::skills::{Grouping, MARKER, SCRIPT, Skill, skills};

pub(crate) fn run(args: &SkillsArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let SkillsArgs {
        folder: folder_arg,
        out,
        by,
        check,
        json,
    } = args;
    let loaded = folder::load(folder_arg.dir.as_deref())?;
    folder::report(printer, loaded.catalog().diagnostics());
    let placement = Placement::plan(&loaded, (*by).into(), out, Sharing::Own)?;
    if *check {
        return report_stale(&loaded, args, &placement, printer);
    }
    placement.write()?;
    placement.report(false, *json, printer)?;
    Ok(ExitStatus::Success)
}

impl From<SkillGrouping> for Grouping {
    fn from(by: SkillGrouping) -> Self {
        match by {
            SkillGrouping::Profile => Self::Profile,
            SkillGrouping::Tag => Self::Tag,
            SkillGrouping::Tool => Self::Tool,
        }
    }
}

/// Whether the skills folder belongs to this tools folder alone (`toolsmith skills --out`),
/// or is a client's, shared with skills from elsewhere (`toolsmith install --skills`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sharing {
    /// Every generated skill in it is this folder's: stale ones are removed.
    Own,
    /// A generated skill is this folder's only when its `scripts/call.sh` runs this folder;
    /// the others (from other tools folders) are left alone, and never overwritten.
    Shared,
}

/// The skills of a tools folder, placed in a skills folder: what is written, and which of
/// the skills already there are this folder's.
pub(crate) struct Placement {
    /// The skills folder as the user wrote it (for messages).
    pub(crate) out: PathBuf,
    out_abs: PathBuf,
    pub(crate) generated: Vec<Skill>,
    /// The generated skill folders in `out` that are this tools folder's.
    ours: BTreeSet<String>,
    /// The generated skill folders in `out` that belong to another tools folder.
    others: BTreeSet<String>,
    /// Those of `ours` that are no longer generated.
    pub(crate) stale: Vec<String>,
}

impl Placement {
    pub(crate) fn plan(
        loaded: &toolsmith_folder::ToolFolder,
        grouping: Grouping,
        out: &Path,
        sharing: Sharing,
    ) -> anyhow::Result<Self> {
        let out_abs = toolsmith_folder::resolved_path(out);
        let root = loaded
            .root()
            .canonicalize()
            .with_context(|| format!("cannot resolve `{}`", loaded.root().display()))?;
        // Every skill's `call.sh` is in OUT/NAME/scripts/, so one relative path serves them all.
        let scripts_to_folder = relative(&out_abs.join("skill").join("scripts"), &root);
        let generated = skills(loaded, grouping, &scripts_to_folder);
        let script = generated
            .first()
            .and_then(|skill| skill.files.iter().find(|(path, _)| path == SCRIPT))
            .map(|(_, text)| text.clone());
        let (ours, others): (BTreeSet<String>, BTreeSet<String>) = generated_on_disk(&out_abs)
            .into_iter()
            .partition(|name| match sharing {
                Sharing::Own => true,
                Sharing::Shared => {
                    let on_disk = std::fs::read_to_string(out_abs.join(name).join(SCRIPT)).ok();
                    on_disk.is_some() && on_disk == script
                }
            });
        let names: BTreeSet<&str> = generated.iter().map(|skill| skill.name.as_str()).collect();
        let stale = ours
            .iter()
            .filter(|name| !names.contains(name.as_str()))
            .cloned()
            .collect();
        Ok(Self {
            out: out.to_owned(),
            out_abs,
            generated,
            ours,
            others,
            stale,
        })
    }

    /// Writes the generated skills and removes the stale ones.
    pub(crate) fn write(&self) -> anyhow::Result<()> {
        for skill in &self.generated {
            self.write_skill(skill)?;
        }
        for name in &self.stale {
            self.remove(name)?;
        }
        Ok(())
    }

    /// Removes every skill of this tools folder, generated now or before; returns their names.
    pub(crate) fn remove_all(&self) -> anyhow::Result<Vec<String>> {
        for name in &self.ours {
            self.remove(name)?;
        }
        Ok(self.ours.iter().cloned().collect())
    }

    /// The names [`Self::remove_all`] removes.
    pub(crate) fn installed(&self) -> impl Iterator<Item = &String> {
        self.ours.iter()
    }

    fn remove(&self, name: &str) -> anyhow::Result<()> {
        std::fs::remove_dir_all(self.out_abs.join(name))
            .with_context(|| format!("cannot remove the skill `{name}`"))
    }

    /// Says what [`Self::write`] did (or, `dry_run`, would do).
    pub(crate) fn report(&self, dry_run: bool, json: bool, printer: Printer) -> anyhow::Result<()> {
        let out = &self.out;
        if json {
            let written: Vec<_> = self
                .generated
                .iter()
                .map(|skill| json!({"name": skill.name, "path": out.join(&skill.name), "tools": skill.tools}))
                .collect();
            printer.data(&serde_json::to_string_pretty(
                &json!({"skills": written, "removed": self.stale, "dry_run": dry_run}),
            )?)?;
            return Ok(());
        }
        let (wrote, removed) = if dry_run {
            ("would write", "would remove")
        } else {
            ("wrote", "removed")
        };
        for skill in &self.generated {
            printer.message(&format!(
                "{wrote} {}: {} tool{}",
                out.join(&skill.name).display(),
                skill.tools.len(),
                plural(skill.tools.len())
            ));
        }
        for name in &self.stale {
            printer.message(&format!(
                "{removed} {} (no longer generated)",
                out.join(name).display()
            ));
        }
        Ok(())
    }

    /// Writes `skill`; a folder of that name that `toolsmith skills` did not write is
    /// someone's own skill, and one written from another tools folder is that folder's:
    /// neither is ever overwritten.
    fn write_skill(&self, skill: &Skill) -> anyhow::Result<()> {
        let dir = self.out_abs.join(&skill.name);
        if self.others.contains(&skill.name) {
            return Err(Hinted::new(format!(
                "`{}` is a skill written from another tools folder",
                dir.display()
            ))
            .hint("remove it with `toolsmith install CLIENT OTHER_DIR --skills --remove`, or group this folder's skills another way with --by")
            .into());
        }
        if dir.exists() && !self.ours.contains(&skill.name) {
            return Err(Hinted::new(format!(
                "`{}` exists and was not written by `toolsmith skills`",
                dir.display()
            ))
            .hint("move it away, or write the skills elsewhere with --out")
            .into());
        }
        for (path, text) in &skill.files {
            let file = dir.join(path);
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("cannot create `{}`", parent.display()))?;
            }
            std::fs::write(&file, text)
                .with_context(|| format!("cannot write `{}`", file.display()))?;
            if Path::new(path).extension().is_some_and(|ext| ext == "sh") {
                make_executable(&file)?;
            }
        }
        Ok(())
    }
}

/// `--check`: whether the skills in `out` are what would be written now.
fn report_stale(
    loaded: &toolsmith_folder::ToolFolder,
    args: &SkillsArgs,
    placement: &Placement,
    printer: Printer,
) -> anyhow::Result<ExitStatus> {
    let SkillsArgs { out, by, json, .. } = args;
    let Placement {
        out_abs,
        generated,
        stale,
        ..
    } = placement;
    let mut problems: Vec<String> = Vec::new();
    for skill in generated {
        for (path, text) in &skill.files {
            let file = out_abs.join(&skill.name).join(path);
            match std::fs::read_to_string(&file) {
                Ok(existing) if existing == *text => {}
                Ok(_) => problems.push(format!("{}/{path} changed", skill.name)),
                Err(_) => problems.push(format!("{}/{path} is missing", skill.name)),
            }
        }
    }
    problems.extend(
        stale
            .iter()
            .map(|name| format!("{name}/ is no longer generated")),
    );
    if *json {
        printer.data(&serde_json::to_string_pretty(&json!({
            "up_to_date": problems.is_empty(),
            "problems": problems,
            "skills": generated.iter().map(|s| &s.name).collect::<Vec<_>>(),
        }))?)?;
    }
    if problems.is_empty() {
        if !*json {
            printer.message(&format!(
                "{} skill{} in {} match the tools",
                generated.len(),
                plural(generated.len()),
                out.display()
            ));
        }
        return Ok(ExitStatus::Success);
    }
    if !*json {
        printer.message(&format!("the skills in {} are stale:", out.display()));
        for problem in &problems {
            printer.message(&format!("  {problem}"));
        }
        printer.hint(&format!(
            "regenerate them: toolsmith skills {} --out {}{}",
            loaded.root().display(),
            out.display(),
            by_flag(*by)
        ));
    }
    Ok(ExitStatus::Findings)
}

#[cfg(unix)]
fn make_executable(file: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make `{}` executable", file.display()))
}

#[cfg(not(unix))]
fn make_executable(_file: &Path) -> anyhow::Result<()> {
    Ok(())
}

/// The skill folders in `out` that `toolsmith skills` wrote (their `SKILL.md` has the
/// marker line).
fn generated_on_disk(out: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return BTreeSet::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            std::fs::read_to_string(entry.path().join("SKILL.md"))
                .is_ok_and(|text| text.lines().any(|line| line == MARKER))
        })
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

/// The relative path from the folder `from` to `to` (both absolute).
fn relative(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut path = PathBuf::new();
    for _ in common..from.len() {
        path.push("..");
    }
    for component in &to[common..] {
        path.push(component);
    }
    path
}

fn by_flag(by: SkillGrouping) -> &'static str {
    match by {
        SkillGrouping::Profile => "",
        SkillGrouping::Tag => " --by tag",
        SkillGrouping::Tool => " --by tool",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_climb_then_descend() {
        assert_eq!(
            relative(
                Path::new("/repo/skills/x/scripts"),
                Path::new("/repo/tools")
            ),
            PathBuf::from("../../../tools")
        );
        assert_eq!(
            relative(Path::new("/a/b"), Path::new("/a/b/c")),
            PathBuf::from("c")
        );
    }
}
