//! `toolsmith install CLIENT DIR --skills`: the folder's Agent Skills in the client's own
//! skills folder (docs/skills.md). The skills are what `toolsmith skills` writes, placed
//! among the skills already there ([`Sharing::Shared`]): only this tools folder's are
//! replaced or removed.

use std::path::PathBuf;

use serde_json::json;

use crate::ExitStatus;
use crate::args::{InstallArgs, SkillGrouping};
use crate::commands::skills::{Placement, Sharing};
use crate::error::Hinted;
use crate::folder;
use crate::install::clients::Client;
use crate::install::paths::{self, Os};
use crate::install::skill_folders::{self, SKILL_FOLDERS};
use crate::printer::{Printer, plural};

pub(crate) fn run(
    client: Client,
    args: &InstallArgs,
    by: SkillGrouping,
    printer: Printer,
) -> anyhow::Result<ExitStatus> {
    let InstallArgs {
        folder: folder_arg,
        project,
        remove,
        dry_run,
        json,
        ..
    } = args;
    let spec = client.spec();
    let out = skills_folder(client, *project)?;
    let loaded = folder::load(folder_arg.dir.as_deref())?;
    folder::report(printer, loaded.catalog().diagnostics());
    let placement = Placement::plan(&loaded, by.into(), &out, Sharing::Shared)?;
    if *remove {
        let names: Vec<String> = if *dry_run {
            placement.installed().cloned().collect()
        } else {
            placement.remove_all()?
        };
        if *json {
            printer.data(&serde_json::to_string_pretty(&json!({
                "client": spec.id, "skills_folder": out, "removed": names, "dry_run": dry_run,
            }))?)?;
        } else if names.is_empty() {
            printer.message(&format!(
                "no skills of {} in {}",
                loaded.root().display(),
                out.display()
            ));
        } else {
            let verb = if *dry_run { "would remove" } else { "removed" };
            for name in &names {
                printer.message(&format!("{verb} {}", out.join(name).display()));
            }
        }
        return Ok(ExitStatus::Success);
    }
    if !*dry_run {
        placement.write()?;
    }
    placement.report(*dry_run, *json, printer)?;
    if !*json && !*dry_run {
        let count = placement.generated.len();
        printer.hint(&format!(
            "{} reads the skill{} when it next starts; they run `toolsmith call`, so `toolsmith` must be on its PATH",
            spec.name,
            plural(count)
        ));
    }
    Ok(ExitStatus::Success)
}

/// The client's skills folder: the project's (in the current folder) or the user's.
fn skills_folder(client: Client, project: bool) -> anyhow::Result<PathBuf> {
    let spec = client.spec();
    let Some(folders) = skill_folders::of(spec.id) else {
        let readers: Vec<&str> = SKILL_FOLDERS.iter().map(|folders| folders.client).collect();
        return Err(Hinted::new(format!("{} reads no Agent Skills", spec.name))
            .hint(format!("clients that do: {}", readers.join(", ")))
            .hint("or write them into any folder: toolsmith skills DIR --out FOLDER")
            .into());
    };
    if project {
        return Ok(std::env::current_dir()?.join(folders.project));
    }
    let os = Os::current();
    let template = os.pick(folders.user).ok_or_else(|| {
        Hinted::new(format!(
            "{} has no user skills folder on {}",
            spec.name,
            os.title()
        ))
        .hint("install them into the project's: --project")
    })?;
    paths::resolve(template, &paths::environment).map_err(|problem| {
        Hinted::new(format!(
            "cannot find {}'s skills folder: {problem}",
            spec.name
        ))
        .hint("install them into the project's: --project")
        .into()
    })
}
