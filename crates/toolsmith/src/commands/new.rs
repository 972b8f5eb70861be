//! `toolsmith new`: write a tool, or a whole tools folder, that follows the description
//! convention and carries one example test. The files come from `templates/new/`; nothing
//! that exists is ever overwritten.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::ExitStatus;
use crate::args::{Lang, NewArgs, NewCommand, NewFolderArgs, NewToolArgs, ToolForm};
use crate::error::Hinted;
use crate::folder::DEFAULT_DIR;
use crate::printer::{Printer, Style};

/// The longest tool name portable across clients.
const MAX_NAME: usize = 64;

/// The tool `toolsmith new folder` starts with.
const STARTER_TOOL: &str = "text_repeat";

const DESCRIPTION: &str = include_str!("../../templates/new/description.txt");
const STAR_TOOL: &str = include_str!("../../templates/new/tool.star");
const MANIFEST: &str = include_str!("../../templates/new/manifest.toml");
const SCRIPT: &str = include_str!("../../templates/new/script.star");
const PYTHON: &str = include_str!("../../templates/new/command.py");
const NODE: &str = include_str!("../../templates/new/command.js");
const BASH: &str = include_str!("../../templates/new/command.sh");
const PYTHON_WORKER: &str = include_str!("../../templates/new/worker.py");
const NODE_WORKER: &str = include_str!("../../templates/new/worker.js");
/// The helper libraries a worker imports, copied next to it (examples/workers/ holds them).
const PYTHON_HELPER: (&str, &str) = (
    "toolsmith_worker.py",
    include_str!("../../../../examples/workers/toolsmith_worker.py"),
);
const NODE_HELPER: (&str, &str) = (
    "toolsmith_worker.js",
    include_str!("../../../../examples/workers/toolsmith_worker.js"),
);
const FOLDER_CONFIG: &str = include_str!("../../templates/new/toolsmith.toml");
const FOLDER_README: &str = include_str!("../../templates/new/README.md");

pub(crate) fn run(args: &NewArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    match &args.what {
        NewCommand::Tool(args) => new_tool(args, printer),
        NewCommand::Folder(args) => new_folder(args, printer),
    }
}

fn new_tool(args: &NewToolArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let NewToolArgs {
        name,
        folder,
        form,
        lang,
    } = args;
    let dir = folder
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_DIR));
    let scaffolded = scaffold(&dir, name, *form, *lang)?;
    let shown = dir.display();
    report(
        printer,
        &format!("Created tool `{name}` ({}) in {shown}:", scaffolded.kind),
        &scaffolded.written,
        &[
            format!("toolsmith test {shown} --filter {name}"),
            format!("toolsmith call {shown} {name} text=hello times=2"),
            format!("toolsmith check {shown}"),
        ],
    );
    Ok(ExitStatus::Success)
}

/// A new tool's files, as written.
pub(crate) struct Scaffolded {
    /// The paths written, in `dir`.
    pub(crate) written: Vec<PathBuf>,
    /// How the tool is written: `Starlark`, `manifest + script`, `command, Python`, …
    pub(crate) kind: &'static str,
}

/// Writes a new tool `name` into `dir` (created when missing), as `toolsmith new tool`
/// does: `form` defaults to Starlark (command with a `lang`), `lang` to Python. Refuses an
/// invalid name, a name a tool of the folder has, and a file that exists, with hints.
pub(crate) fn scaffold(
    dir: &Path,
    name: &str,
    form: Option<ToolForm>,
    lang: Option<Lang>,
) -> anyhow::Result<Scaffolded> {
    check_name(name)?;
    let form = match (form, lang) {
        (Some(form @ (ToolForm::Star | ToolForm::Manifest)), Some(_)) => {
            let form = if form == ToolForm::Star {
                "star"
            } else {
                "manifest"
            };
            return Err(Hinted::new(format!(
                "`--lang` picks the language of a command tool; `--form {form}` tools are Starlark"
            ))
            .hint("drop `--lang`, or use `--form command --lang ...`")
            .into());
        }
        (Some(ToolForm::Worker), Some(Lang::Bash)) => {
            return Err(Hinted::new(
                "a worker is written with a helper library, and there is one for Python and Node.js, not Bash",
            )
            .hint("use `--form worker --lang python` or `--lang node`, or `--form command --lang bash` for a program run per call")
            .into());
        }
        (Some(form), _) => form,
        (None, Some(_)) => ToolForm::Command,
        (None, None) => ToolForm::Star,
    };
    let lang = lang.unwrap_or(Lang::Python);
    if dir.is_dir() {
        refuse_duplicate(dir, name)?;
    }
    let mut files = tool_files(name, form, lang);
    // Workers of one folder share the helper library; one already there is kept.
    files.retain(|(path, _)| {
        let helper = [PYTHON_HELPER.0, NODE_HELPER.0]
            .iter()
            .any(|helper| path.as_os_str() == *helper);
        !(helper && dir.join(path).exists())
    });
    let written = write_all(dir, &files)?;
    let kind = match (form, lang) {
        (ToolForm::Star, _) => "Starlark",
        (ToolForm::Manifest, _) => "manifest + script",
        (ToolForm::Command, Lang::Python) => "command, Python",
        (ToolForm::Command, Lang::Node) => "command, Node.js",
        (ToolForm::Command, Lang::Bash) => "command, Bash",
        (ToolForm::Worker, Lang::Node) => "worker, Node.js",
        (ToolForm::Worker, _) => "worker, Python",
    };
    Ok(Scaffolded { written, kind })
}

fn new_folder(args: &NewFolderArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let NewFolderArgs { dir } = args;
    let shown = dir.display().to_string();
    let server = dir
        .canonicalize()
        .ok()
        .or_else(|| std::env::current_dir().ok().map(|cwd| cwd.join(dir)))
        .and_then(|path| {
            path.file_name()
                .map(|name| name.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "tools".to_owned());
    let fill = |template: &str| {
        template
            .replace("{{server}}", &server)
            .replace("{{dir}}", &shown)
            .replace("{{tool}}", STARTER_TOOL)
    };
    let mut files = vec![(
        PathBuf::from(toolsmith_folder::CONFIG_FILE),
        fill(FOLDER_CONFIG),
    )];
    files.extend(tool_files(STARTER_TOOL, ToolForm::Star, Lang::Python));
    files.push((PathBuf::from("README.md"), fill(FOLDER_README)));
    let written = write_all(dir, &files)?;
    report(
        printer,
        &format!("Created tools folder {shown}:"),
        &written,
        &[
            format!("toolsmith test {shown}"),
            format!("toolsmith call {shown} {STARTER_TOOL} text=hello times=2"),
            format!("toolsmith new tool NAME {shown}"),
            format!("toolsmith serve {shown}"),
        ],
    );
    Ok(ExitStatus::Success)
}

/// The files of a new tool: names relative to the folder, and contents.
fn tool_files(name: &str, form: ToolForm, lang: Lang) -> Vec<(PathBuf, String)> {
    let title = title(name);
    let description = DESCRIPTION.trim_end().replace("{{name}}", name);
    let fill = |template: &str, description: &str| {
        template
            .replace("{{description}}", description)
            .replace("{{title}}", &title)
            .replace("{{name}}", name)
    };
    let file_name = |extension: &str| PathBuf::from(format!("{name}.{extension}"));
    if form == ToolForm::Star {
        // The docstring's lines after the first are indented like the function body.
        let docstring = description
            .replace('\n', "\n    ")
            .replace("\n    \n", "\n\n");
        return vec![(file_name("star"), fill(STAR_TOOL, &docstring))];
    }
    let (flags, how, program, command, extension, code) = match (form, lang) {
        (ToolForm::Command, Lang::Python) => (
            "--lang python",
            format!("Toolsmith runs `python3 {name}.py` per call, the arguments as JSON on stdin."),
            format!("{name}.py"),
            format!("command = [\"python3\", \"{name}.py\"]\ntimeout = \"10s\"\n"),
            "py",
            PYTHON,
        ),
        (ToolForm::Command, Lang::Node) => (
            "--lang node",
            format!("Toolsmith runs `node {name}.js` per call, the arguments as JSON on stdin."),
            format!("{name}.js"),
            format!("command = [\"node\", \"{name}.js\"]\ntimeout = \"10s\"\n"),
            "js",
            NODE,
        ),
        (ToolForm::Command, Lang::Bash) => (
            "--lang bash",
            format!(
                "Toolsmith runs `bash {name}.sh TEXT [TIMES]` per call (an argv template, no shell)."
            ),
            format!("{name}.sh"),
            format!(
                "command = [\"bash\", \"{name}.sh\", \"{{text}}\", \"{{times}}\"]\ntimeout = \"10s\"\n"
            ),
            "sh",
            BASH,
        ),
        (ToolForm::Worker, Lang::Node) => {
            return worker_files(name, "node", "js", NODE_WORKER, NODE_HELPER, &description);
        }
        (ToolForm::Worker, _) => {
            return worker_files(
                name,
                "python3",
                "py",
                PYTHON_WORKER,
                PYTHON_HELPER,
                &description,
            );
        }
        _ => (
            "--form manifest",
            format!("{name}.star runs top to bottom on each call (Scriptling-compatible)."),
            format!("{name}.star"),
            String::new(),
            "star",
            SCRIPT,
        ),
    };
    let manifest = MANIFEST
        .replace("{{flags}}", &format!("{name} {flags}"))
        .replace("{{how}}", &how)
        .replace("{{program}}", &program)
        .replace("{{command}}", &command);
    vec![
        (file_name("toml"), fill(&manifest, &description)),
        (file_name(extension), fill(code, &description)),
    ]
}

/// The files of a new worker: its manifest, its program and the helper library.
fn worker_files(
    name: &str,
    interpreter: &str,
    extension: &str,
    code: &str,
    (helper, library): (&str, &str),
    description: &str,
) -> Vec<(PathBuf, String)> {
    let lang = if extension == "js" { "node" } else { "python" };
    let program = format!("{name}.{extension}");
    let manifest = MANIFEST
        .replace("{{flags}}", &format!("{name} --form worker --lang {lang}"))
        .replace(
            "{{how}}",
            &format!(
                "Toolsmith starts `{interpreter} {program}` once and keeps it running (`worker = true`);\n# each call is one JSON line on its stdin, answered through {helper}."
            ),
        )
        .replace("{{program}}", &program)
        .replace(
            "{{command}}",
            &format!("command = [\"{interpreter}\", \"{program}\"]\nworker = true\ntimeout = \"10s\"\n"),
        )
        .replace("{{description}}", description)
        .replace("{{title}}", &title(name))
        .replace("{{name}}", name);
    vec![
        (PathBuf::from(format!("{name}.toml")), manifest),
        (PathBuf::from(&program), code.replace("{{name}}", name)),
        (PathBuf::from(helper), library.to_owned()),
    ]
}

/// `weather_get` → `Weather get`.
fn title(name: &str) -> String {
    let spaced = name.replace('_', " ");
    let mut chars = spaced.chars();
    chars
        .next()
        .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// Accepts `snake_case` ASCII names of 1 to 64 characters; anything else is an error that
/// suggests a valid name.
fn check_name(name: &str) -> anyhow::Result<()> {
    if is_snake_case(name) {
        return Ok(());
    }
    let why = if name.is_empty() {
        "it is empty".to_owned()
    } else if name.chars().count() > MAX_NAME {
        format!(
            "it has {} characters, more than {MAX_NAME}",
            name.chars().count()
        )
    } else {
        "tool names are snake_case: lowercase ASCII letters and digits in words joined by `_`, starting with a letter"
            .to_owned()
    };
    let suggestion = suggest_name(name);
    Err(Hinted::new(format!("`{name}` is not a valid tool name: {why}"))
        .hint(format!("try `{suggestion}`: toolsmith new tool {suggestion}"))
        .hint(format!("names are 1 to {MAX_NAME} characters so that every client accepts them; `service_noun_verb` reads well"))
        .into())
}

fn is_snake_case(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.split('_').all(|word| {
            !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// The closest `snake_case` name: `camelCase` split into words, other characters turned into
/// `_`, a leading digit prefixed with `tool_`, cut to 64 characters.
fn suggest_name(name: &str) -> String {
    let mut spaced = String::new();
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if previous.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit()) {
                spaced.push('_');
            }
            spaced.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            spaced.push(c);
        } else {
            spaced.push('_');
        }
        previous = Some(c);
    }
    let mut suggestion = spaced
        .split('_')
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join("_");
    if suggestion.is_empty() {
        "my_tool".clone_into(&mut suggestion);
    } else if suggestion.starts_with(|c: char| c.is_ascii_digit()) {
        suggestion.insert_str(0, "tool_");
    }
    suggestion.truncate(MAX_NAME);
    suggestion.trim_end_matches('_').to_owned()
}

/// Refuses a name that a tool of the folder already has.
fn refuse_duplicate(dir: &Path, name: &str) -> anyhow::Result<()> {
    let Ok(loaded) = toolsmith_folder::ToolFolder::load(dir) else {
        return Ok(());
    };
    match loaded.catalog().get(name) {
        Some(existing) => Err(Hinted::new(format!(
            "the folder already has a tool named `{name}`, at {}",
            existing.definition().source
        ))
        .hint("tool names are unique in a server: pick another name")
        .into()),
        None => Ok(()),
    }
}

/// Writes `files` into `dir` (created when missing), refusing before writing anything when
/// one of them exists. Returns the paths written.
fn write_all(dir: &Path, files: &[(PathBuf, String)]) -> anyhow::Result<Vec<PathBuf>> {
    if dir.exists() && !dir.is_dir() {
        return Err(Hinted::new(format!("`{}` is not a folder", dir.display()))
            .hint("pass the tools folder to write into, or a new folder's path")
            .into());
    }
    let paths: Vec<PathBuf> = files.iter().map(|(name, _)| dir.join(name)).collect();
    let existing: Vec<String> = paths
        .iter()
        .filter(|path| path.exists())
        .map(|path| format!("`{}`", path.display()))
        .collect();
    if !existing.is_empty() {
        let (noun, verb) = if existing.len() == 1 {
            ("file", "exists")
        } else {
            ("files", "exist")
        };
        return Err(Hinted::new(format!("refusing to overwrite: {noun} {} already {verb}", existing.join(", ")))
            .hint("`toolsmith new` never overwrites files: pick another name or folder, or move the files away first")
            .into());
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the folder `{}`", dir.display()))?;
    for ((_, content), path) in files.iter().zip(&paths) {
        // `create_new` keeps the promise even when a file appears after the check above.
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .with_context(|| format!("cannot create `{}`", path.display()))?;
        file.write_all(content.as_bytes())
            .with_context(|| format!("cannot write `{}`", path.display()))?;
    }
    Ok(paths)
}

/// Prints what was written and what to run next (stderr: these are messages, not data).
fn report(printer: Printer, heading: &str, written: &[PathBuf], next: &[String]) {
    printer.message(heading);
    for path in written {
        printer.message(&format!("  {}", path.display()));
    }
    printer.message(&printer.style_err(Style::Bold, "Next:"));
    for command in next {
        printer.message(&format!("  {command}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snake_case_names() {
        for valid in ["a", "weather_get", "v2_list", &"x".repeat(64)] {
            assert!(is_snake_case(valid), "{valid}");
        }
        for invalid in [
            "",
            "Weather",
            "a__b",
            "_a",
            "a_",
            "2fa",
            "naïve",
            "a-b",
            &"x".repeat(65),
        ] {
            assert!(!is_snake_case(invalid), "{invalid}");
        }
    }

    #[test]
    fn suggestions_are_valid_names() {
        let cases = [
            ("WeatherGet", "weather_get"),
            ("weather-get", "weather_get"),
            ("get  HTTPStatus", "get_httpstatus"),
            ("2fa_check", "tool_2fa_check"),
            ("café", "caf"),
            ("---", "my_tool"),
        ];
        for (name, expected) in cases {
            assert_eq!(suggest_name(name), expected, "{name}");
            assert!(is_snake_case(expected));
        }
        assert!(is_snake_case(&suggest_name(&"Long".repeat(30))));
    }

    #[test]
    fn titles() {
        assert_eq!(title("weather_get"), "Weather get");
    }
}
