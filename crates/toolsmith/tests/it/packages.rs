//! Packages: a host folder with two local packages and one git
//! package, a bare repository this test makes and pushes to (nothing reaches the network),
//! served by the real binary to rmcp's client over stdio pipes and over HTTP, and driven
//! through `call`, `check`, `list` and `packages`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::mcp_client::McpClient;
use crate::serve_process::ServeProcess;
use crate::{path_filters, snapshot_filtered, toolsmith};

/// The host folder, its packages and the cache, in one temporary folder.
struct Fixture {
    dir: tempfile::TempDir,
}

const HELLO: &str = r#"def hello(name: str) -> str:
    """Greets someone by name.

    Args:
        name: Who to greet.
    """
    return "Hello, " + name + "!"

mcp.tool(hello)
"#;

const FORECAST: &str = r#"def forecast_get(city: str) -> str:
    """Gets tomorrow's forecast for a city from the package's own data file.

    Args:
        city: The city, e.g. "Lisbon".
    """
    for line in mcp.read_file("data/forecasts.txt").splitlines():
        if line.startswith(city + ":"):
            return line
    return city + ": unknown"

mcp.tool(forecast_get, permissions = {"fs.read": ["data"]})
"#;

const SECRET: &str = r#"def secret_get() -> str:
    """Reads the host's secret key, which the host never allowed the package to read."""
    return mcp.read_file("../secret/key.txt")

mcp.tool(secret_get, permissions = {"fs.read": ["../secret"], "env": ["HOME"]})
"#;

const GREET: &str = r#"description = "Prints the package's greeting, read from the folder the command runs in."
command = ["sh", "-c", "cat greeting.txt"]
"#;

fn lookup(version: u32) -> String {
    format!(
        "def lookup(place: str) -> str:\n    \"\"\"Looks up a place.\n\n    Args:\n        place: The place.\n    \"\"\"\n    return \"v{version}: \" + place\n\nmcp.tool(lookup)\n"
    )
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let fixture = Self { dir };
        let geo = fixture.path("geo.git");
        fixture.write(
            "host/toolsmith.toml",
            &format!(
                "[server]\nname = \"host\"\n\n[packages.weather]\npath = \"../weather\"\n\n\
                 [packages.text]\npath = \"../text\"\nprefix = \"txt\"\nallow = {{\"commands\" = true}}\n\n\
                 [packages.geo]\ngit = \"{}\"\nrev = \"main\"\n",
                geo.display()
            ),
        );
        fixture.write("host/hello.star", HELLO);
        fixture.write(
            "weather/toolsmith.toml",
            "[package]\npublisher = \"acme\"\nname = \"weather\"\nversion = \"1.2.0\"\ndescription = \"Forecasts from a data file.\"\n",
        );
        fixture.write("weather/forecast.star", FORECAST);
        fixture.write("weather/secret.star", SECRET);
        fixture.write(
            "weather/data/forecasts.txt",
            "Lisbon: sunny, 24 C\nOslo: snow, -3 C\n",
        );
        fixture.write("text/greet.toml", GREET);
        fixture.write("text/greeting.txt", "hello from the text package\n");
        fixture.write("secret/key.txt", "the host's secret\n");

        // A bare repository with one commit on `main`, pushed from a scratch clone.
        git(
            fixture.dir.path(),
            &["init", "--quiet", "--bare", "geo.git"],
        );
        git(
            fixture.dir.path(),
            &["clone", "--quiet", "geo.git", "scratch"],
        );
        let scratch = fixture.path("scratch");
        git(&scratch, &["symbolic-ref", "HEAD", "refs/heads/main"]);
        fixture.write(
            "scratch/toolsmith.toml",
            "[package]\npublisher = \"maps\"\nname = \"geo\"\n",
        );
        fixture.commit(1);
        fixture
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    fn host(&self) -> PathBuf {
        self.path("host")
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Commits `lookup.star` at `version` in the scratch clone and pushes it to `main`.
    fn commit(&self, version: u32) {
        self.write("scratch/lookup.star", &lookup(version));
        let scratch = self.path("scratch");
        git(&scratch, &["add", "."]);
        git(
            &scratch,
            &["commit", "--quiet", "-m", &format!("v{version}")],
        );
        git(&scratch, &["push", "--quiet", "origin", "main"]);
    }

    /// `toolsmith ARGS` with this fixture's cache.
    fn toolsmith(&self, args: &[&str]) -> Command {
        let mut command = toolsmith();
        command
            .args(args)
            .env("TOOLSMITH_CACHE_DIR", self.path("cache"));
        command
    }

    /// Runs `toolsmith ARGS`: exit code, stdout, stderr.
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let output = self.toolsmith(args).output().unwrap();
        (
            output.status.code().unwrap(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    /// The commit `toolsmith.lock` pins `geo` to.
    fn pinned(&self) -> String {
        let lock = std::fs::read_to_string(self.host().join("toolsmith.lock")).unwrap();
        let lock: toml::Table = toml::from_str(&lock).unwrap();
        lock["packages"]["geo"]["commit"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// The commit `main` of the bare repository is at.
    fn head(&self) -> String {
        let output = Command::new("git")
            .args(["rev-parse", "main"])
            .current_dir(self.path("geo.git"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// Filters for snapshots: the temporary folder and commit ids.
    fn filters(&self) -> Vec<(String, String)> {
        let mut filters = path_filters(&[(self.dir.path(), "[DIR]")]);
        filters.push(("[0-9a-f]{40}".into(), "[COMMIT]".into()));
        filters.push(("sha256:[0-9a-f]{64}".into(), "[HASH]".into()));
        filters
    }
}

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Toolsmith Tests")
        .env("GIT_AUTHOR_EMAIL", "tests@toolsmith.invalid")
        .env("GIT_COMMITTER_NAME", "Toolsmith Tests")
        .env("GIT_COMMITTER_EMAIL", "tests@toolsmith.invalid")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// What every transport must serve: the host's tool and the packages' under their
/// prefixes, each running in its package folder; the secret stays out of reach.
fn serves_the_packages(client: &McpClient) {
    let mut names = client.tool_names();
    names.sort();
    assert_eq!(
        names,
        [
            "geo_lookup",
            "hello",
            "txt_greet",
            "weather_forecast_get",
            "weather_secret_get"
        ]
    );
    let forecast = client.call_text("weather_forecast_get", &json!({"city": "Oslo"}));
    assert_eq!(forecast, "Oslo: snow, -3 C");
    let greeting = client.call_text("txt_greet", &json!({}));
    assert_eq!(greeting.trim(), "hello from the text package");
    assert_eq!(
        client.call_text("geo_lookup", &json!({"place": "Porto"})),
        "v1: Porto"
    );
    let secret = client.call("weather_secret_get", &json!({}));
    assert_eq!(secret.is_error, Some(true));
    let message = client.call_text("weather_secret_get", &json!({}));
    assert!(!message.contains("the host's secret"), "{message}");
    assert!(message.contains("no `fs.read` permission"), "{message}");
    assert!(
        message.contains("the tool asked for `fs.read` `../secret`, which the host's `[packages.weather] allow` does not grant"),
        "{message}"
    );
}

#[test]
fn packages_are_served_under_their_prefixes_over_stdio() {
    let fixture = Fixture::new();
    let client = McpClient::spawn(fixture.toolsmith(&["serve", fixture.host().to_str().unwrap()]));
    serves_the_packages(&client);
}

#[test]
fn packages_are_served_under_their_prefixes_over_http() {
    let fixture = Fixture::new();
    let mut command = ServeProcess::http_command(&[fixture.host().to_str().unwrap()], None);
    command.env("TOOLSMITH_CACHE_DIR", fixture.path("cache"));
    let server = ServeProcess::spawn_http(command);
    serves_the_packages(&McpClient::http(server.url()));
}

#[test]
fn qualified_names_resolve_on_the_command_line() {
    let fixture = Fixture::new();
    let host = fixture.host();
    let host = host.to_str().unwrap();
    let (code, stdout, stderr) =
        fixture.run(&["call", host, "acme/weather/forecast_get", "city=Lisbon"]);
    assert_eq!(
        (code, stdout.trim()),
        (0, "Lisbon: sunny, 24 C"),
        "{stderr}"
    );
    let (code, stdout, _) = fixture.run(&["call", host, "text/text/greet"]);
    assert_eq!((code, stdout.trim()), (0, "hello from the text package"));
    let (code, stdout, _) = fixture.run(&["call", host, "maps/geo/lookup", "place=Faro"]);
    assert_eq!((code, stdout.trim()), (0, "v1: Faro"));
    let (code, _, stderr) = fixture.run(&["call", host, "acme/weather/forcast_get"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("did you mean one of `acme/weather/forecast_get`"),
        "{stderr}"
    );
}

#[test]
fn an_overbroad_permission_is_withheld_and_reported() {
    let fixture = Fixture::new();
    let host = fixture.host();
    let host = host.to_str().unwrap();
    // The call really cannot read what the host did not allow.
    let (code, stdout, _) = fixture.run(&["call", host, "acme/weather/secret_get"]);
    assert_eq!(code, 1);
    assert!(!stdout.contains("the host's secret"), "{stdout}");
    snapshot_filtered!(
        fixture.filters(),
        fixture.toolsmith(&["check", host, "--select", "package-permission-denied"])
    );
}

#[test]
fn packages_list_shows_pins_tools_and_permissions() {
    let fixture = Fixture::new();
    let host = fixture.host();
    let host = host.to_str().unwrap();
    snapshot_filtered!(
        fixture.filters(),
        fixture.toolsmith(&["packages", "list", host])
    );
    let (code, stdout, _) = fixture.run(&["packages", "list", host, "--json"]);
    assert_eq!(code, 0);
    let document: Value = serde_json::from_str(&stdout).unwrap();
    let weather = &document["packages"][2];
    assert_eq!(weather["name"], "weather");
    let secret = &weather["tools"][1];
    assert_eq!(secret["qualified_name"], "acme/weather/secret_get");
    assert_eq!(
        secret["asked"],
        json!({"fs.read": ["../secret"], "env": ["HOME"]})
    );
    assert_eq!(secret["granted"], json!({}));
    assert_eq!(document["packages"][0]["source"]["commit"], fixture.head());
}

#[test]
fn a_name_taken_twice_is_an_error_naming_both_sources() {
    let fixture = Fixture::new();
    fixture.write("host/txt_greet.star", &HELLO.replace("hello", "txt_greet"));
    let host = fixture.host();
    let (code, _, stderr) = fixture.run(&["list", host.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    let greet = fixture.path("text/greet.toml");
    let own = fixture.path("host/txt_greet.star");
    let expected = format!(
        "tool `txt_greet` of package `text` ({}:1:1) has the name of the tool at {}:1:5; it is not served",
        greet.display(),
        own.display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(stderr.contains("[duplicate-tool-name]"), "{stderr}");
}

#[test]
fn the_lock_pins_a_commit_and_update_moves_it() {
    let fixture = Fixture::new();
    let host = fixture.host();
    let host = host.to_str().unwrap();
    let first = fixture.head();
    let (code, stdout, stderr) = fixture.run(&["call", host, "geo_lookup", "place=Faro"]);
    assert_eq!((code, stdout.trim()), (0, "v1: Faro"), "{stderr}");
    assert_eq!(fixture.pinned(), first);

    // A new commit upstream does not move the pin.
    fixture.commit(2);
    let second = fixture.head();
    assert_ne!(first, second);
    let (_, stdout, _) = fixture.run(&["call", host, "geo_lookup", "place=Faro"]);
    assert_eq!(stdout.trim(), "v1: Faro");
    assert_eq!(fixture.pinned(), first);

    let (code, stdout, stderr) = fixture.run(&["packages", "update", host, "geo"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), format!("geo: {first} -> {second}"));
    assert_eq!(fixture.pinned(), second);
    let (_, stdout, _) = fixture.run(&["call", host, "geo_lookup", "place=Faro"]);
    assert_eq!(stdout.trim(), "v2: Faro");

    let (code, _, stderr) = fixture.run(&["packages", "update", host, "wether"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("did you mean `weather`"), "{stderr}");
}

#[test]
fn a_pinned_package_loads_from_the_cache_without_its_repository() {
    let fixture = Fixture::new();
    let host = fixture.host();
    let host = host.to_str().unwrap();
    let (code, _, stderr) = fixture.run(&["list", host]);
    assert_eq!(code, 0, "{stderr}");
    // The repository is gone, as it is offline.
    std::fs::rename(fixture.path("geo.git"), fixture.path("elsewhere.git")).unwrap();
    let (code, stdout, stderr) = fixture.run(&["call", host, "geo_lookup", "place=Faro"]);
    assert_eq!((code, stdout.trim()), (0, "v1: Faro"), "{stderr}");
    // Moving the pin needs the repository, and says so.
    let (code, _, stderr) = fixture.run(&["packages", "update", host]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot update package `geo`"), "{stderr}");
}

#[test]
fn cached_files_that_no_longer_match_the_lock_are_checked_out_again() {
    let fixture = Fixture::new();
    let host = fixture.host();
    let host = host.to_str().unwrap();
    let (code, _, stderr) = fixture.run(&["list", host]);
    assert_eq!(code, 0, "{stderr}");
    let commit = fixture.pinned();
    let cached: Vec<PathBuf> = std::fs::read_dir(fixture.path("cache/packages"))
        .unwrap()
        .map(|entry| entry.unwrap().path().join(&commit).join("lookup.star"))
        .filter(|path| path.is_file())
        .collect();
    let [cached] = cached.as_slice() else {
        panic!("one checkout of {commit} in the cache: {cached:?}")
    };
    std::fs::write(cached, lookup(1).replace("v1", "tampered")).unwrap();
    let (code, stdout, stderr) = fixture.run(&["call", host, "geo_lookup", "place=Faro"]);
    assert_eq!((code, stdout.trim()), (0, "v1: Faro"), "{stderr}");
    assert_eq!(std::fs::read_to_string(cached).unwrap(), lookup(1));
}

#[test]
fn a_profile_selects_package_tools_by_qualified_name() {
    // Profiles name a package's tools as publisher/package/tool.
    let fixture = Fixture::new();
    let config = std::fs::read_to_string(fixture.host().join("toolsmith.toml")).unwrap();
    fixture.write(
        "host/toolsmith.toml",
        &format!("{config}\n[profiles.maps]\ntools = [\"maps/geo/lookup\", \"hello\"]\n"),
    );
    let host = fixture.host();
    let (code, stdout, stderr) = fixture.run(&[
        "list",
        host.to_str().unwrap(),
        "--profile",
        "maps",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["geo_lookup", "hello"]);
}

#[test]
fn a_lock_that_pins_no_commit_id_is_refused() {
    let fixture = Fixture::new();
    let host = fixture.host();
    let host = host.to_str().unwrap();
    let (code, _, stderr) = fixture.run(&["list", host]);
    assert_eq!(code, 0, "{stderr}");
    // The commit names a folder of the cache; a lock must not lead anywhere else.
    let lock = std::fs::read_to_string(fixture.host().join("toolsmith.lock")).unwrap();
    let lock = lock.replace(&fixture.pinned(), "../../weather");
    std::fs::write(fixture.host().join("toolsmith.lock"), lock).unwrap();
    let (code, _, stderr) = fixture.run(&["list", host]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("package `geo` is not loaded: toolsmith.lock pins"),
        "{stderr}"
    );
    assert!(stderr.contains("which is not a commit id"), "{stderr}");
    assert!(
        stderr.contains("`toolsmith packages update NAME` pins the package again"),
        "{stderr}"
    );
}
