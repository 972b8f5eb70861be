//! `--help`: what a user reads before anything else.

use crate::toolsmith;

/// Every command's help shows its examples one per line, as they are typed.
#[test]
fn examples_are_shown_one_per_line() {
    let commands: &[&[&str]] = &[
        &["list"],
        &["call"],
        &["test"],
        &["new", "tool"],
        &["new", "folder"],
        &["check"],
        &["serve"],
        &["search"],
        &["packages"],
        &["packages", "update"],
    ];
    for command in commands {
        let output = toolsmith().args(*command).arg("--help").output().unwrap();
        assert!(output.status.success(), "{command:?}");
        let help = String::from_utf8(output.stdout).unwrap();
        let invocation = format!("toolsmith {}", command.join(" "));
        let examples: Vec<&str> = help
            .lines()
            .skip_while(|line| !line.starts_with("Example"))
            .take_while(|line| !line.is_empty())
            .collect();
        assert!(
            !examples.is_empty(),
            "{command:?} shows no example:\n{help}"
        );
        for line in &examples {
            let typed = line
                .trim_start_matches("Examples:")
                .trim_start_matches("Example:")
                .trim();
            assert!(
                typed.is_empty() || typed.matches(&invocation).count() == 1,
                "{command:?}: one example per line, got `{line}`"
            );
        }
    }
}

/// `toolsmith ARGS --help`, as a user reads it: the whole text under a snapshot. The width
/// is clap's 100 columns whatever the terminal (stdin, stdout and stderr are no terminal,
/// and `COLUMNS` is unset), and the token variable is unset, as on a clean machine.
macro_rules! help_snapshots {
    ($($test:ident: [$($arg:literal),*],)*) => {$(
        #[test]
        fn $test() {
            let mut command = toolsmith();
            command
                .args([$($arg,)* "--help"])
                .stdin(std::process::Stdio::null())
                .env_remove("COLUMNS")
                .env_remove("TOOLSMITH_AUTH_TOKEN");
            insta_cmd::assert_cmd_snapshot!(stringify!($test), command);
        }
    )*};
}

help_snapshots! {
    toolsmith_help: [],
    list_help: ["list"],
    call_help: ["call"],
    test_command_help: ["test"],
    new_help: ["new"],
    new_tool_help: ["new", "tool"],
    new_folder_help: ["new", "folder"],
    check_help: ["check"],
    serve_help: ["serve"],
    search_help: ["search"],
    install_help: ["install"],
    packages_help: ["packages"],
    packages_update_help: ["packages", "update"],
}
