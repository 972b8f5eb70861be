//! `toolsmith serve`: the folder's tools over MCP, on stdio or Streamable HTTP.

use std::io::IsTerminal as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use anyhow::Context as _;
use toolsmith_folder::ToolFolder;
use toolsmith_model::{CatalogEntry, Transport};
use toolsmith_server::{
    HttpOptions, MCP_PATH, METRICS_PATH, OAuthSettings, ServerOptions, ServerState,
};

use crate::ExitStatus;
use crate::args::AuthorizationArgs;
use crate::args::{SearchModeArg, ServeArgs};
use crate::error::Hinted;
use crate::folder;
use crate::printer::Printer;
use crate::served::ServedFolder;

use super::search_cache::{self, Cache, Place, ReadAhead};

pub(crate) fn run(args: &ServeArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    run_then(args, printer, |_| {})
}

/// [`run`], calling `listening` with the bound address once an HTTP server listens
/// (`toolsmith dev` prints and opens its page then).
pub(crate) fn run_then(
    args: &ServeArgs,
    printer: Printer,
    listening: impl FnOnce(SocketAddr),
) -> anyhow::Result<ExitStatus> {
    let ServeArgs {
        folder: folder_arg,
        profile,
        http,
        allow_hosts,
        watch,
        metrics,
        search,
        code_mode,
        ..
    } = args;
    let transport = if http.is_some() {
        Transport::Http
    } else {
        Transport::Stdio
    };
    refuse_an_empty_token(args)?;
    if http.is_none()
        && profile.profile.as_deref() != Some(crate::dev::PROFILE)
        && !std::io::stdin().is_terminal()
    {
        return serve_stdio_while_loading(args, printer);
    }
    let (loaded, seen) = load(args, transport, |_| {})?;
    // Diagnostics go to stderr: over stdio, stdout belongs to the protocol.
    folder::report(printer, loaded.catalog().diagnostics());
    let _telemetry = telemetry(printer, loaded.config());
    let mut http_options = http_options(args, loaded.config(), loaded.root())?;
    let config_auth = config_auth(args, loaded.config())?;
    let mut options = with_flags(
        server_options(
            loaded.config(),
            loaded.root(),
            http_options.shared_state.as_ref(),
        ),
        args,
    );
    options.audit = super::audit::open(&args.audit, loaded.config(), loaded.root(), printer)?;
    folder::explain_search(printer, loaded.catalog(), options.search);
    let state = ServerState::with_content(
        Arc::clone(loaded.catalog()),
        Arc::clone(loaded.prompts()),
        crate::skills::with_generated(&loaded, loaded.resources()),
        options,
    );
    let profile_scopes = loaded.config().profile_scopes.clone();
    let flags = (search.clone(), code_mode.clone());
    let served = ServedFolder::new((loaded, seen), flags, state.clone(), printer);
    upstream_changes(&served);
    let developing = crate::dev::attach(&served, profile.profile.as_deref())?;
    if *watch || developing {
        crate::watch::spawn(served).context("cannot start watching the folder")?;
    }
    let tools = state.catalog().entries().len();
    http_options.oauth = oauth_settings(&args.authorization, config_auth, &state.catalog())?;
    if http.is_some() {
        require_profile_scopes(printer, http_options.oauth.as_mut(), &profile_scopes);
    }
    if let Some(address) = metrics {
        serve_metrics(printer, &state, &http_options, address)?;
    }
    let Some(address) = http else {
        if std::io::stdin().is_terminal() {
            first_minute(
                printer,
                &state,
                folder_arg.dir.as_deref(),
                profile.profile.as_deref(),
            );
        }
        let served = toolsmith_server::serve_stdio(state);
        toolsmith_upstream::kill_all();
        served.map_err(Hinted::wrap)?;
        return Ok(ExitStatus::Success);
    };
    let address = listen_address(address, "--http")?;
    let public = beyond_loopback(address);
    let served = toolsmith_server::serve_http(state, &http_options, address, |bound| {
        printer.message(&format!(
            "Serving {tools} tool{} at {}",
            if tools == 1 { "" } else { "s" },
            url(bound)
        ));
        if public && allow_hosts.is_empty() {
            printer.hint(
                "only the Host names localhost, 127.0.0.1 and [::1] are accepted; add the names clients use with --allow-host",
            );
        }
        if public && http_options.auth_token.is_none() && http_options.oauth.is_none() {
            printer.warning("listening beyond loopback without auth: anyone who can reach this address can call every tool");
            printer.hint("set TOOLSMITH_AUTH_TOKEN or --auth-token");
        }
        listening(bound);
    });
    toolsmith_upstream::kill_all();
    served.map_err(Hinted::wrap)?;
    Ok(ExitStatus::Success)
}

/// OpenTelemetry traces when the `OTEL_*` variables or `[telemetry]` name a collector
/// (docs/http.md, "Telemetry"); the spans left are exported when the returned value drops,
/// once serving has ended. A setting that cannot work is warned about and traces stay off.
fn telemetry(
    printer: Printer,
    config: &toolsmith_folder::FolderConfig,
) -> Option<toolsmith_server::telemetry::Telemetry> {
    toolsmith_server::telemetry::Telemetry::start(&config.telemetry).unwrap_or_else(|error| {
        printer.warning(&error.to_string());
        None
    })
}

/// An empty token would let `Authorization: Bearer ` through: no auth at all.
fn refuse_an_empty_token(args: &ServeArgs) -> anyhow::Result<()> {
    let empty = args
        .auth_token
        .as_deref()
        .is_some_and(|token| token.trim().is_empty());
    if (args.http.is_some() || args.metrics.is_some()) && empty {
        return Err(Hinted::new("the auth token is empty")
            .hint("pass a non-empty token with --auth-token or TOOLSMITH_AUTH_TOKEN, or unset both to serve without auth")
            .into());
    }
    Ok(())
}

/// `serve` over stdio for a client (stdin is not a terminal): `initialize` is answered from
/// `toolsmith.toml` alone while the folder loads on a thread of its own, and the rest of the
/// session waits for the folder (thousands of tools no longer delay the
/// handshake; docs/performance.md). A folder that cannot be loaded at all ends the process
/// with the error, as it does before serving without a client.
fn serve_stdio_while_loading(args: &ServeArgs, printer: Printer) -> anyhow::Result<ExitStatus> {
    let dir = args.folder.dir.as_deref();
    let root = folder::path_of(dir);
    let config = ToolFolder::server_config(&root, args.profile.profile.as_deref())
        .map_err(|error| folder::hinted(dir, error))?;
    let mut options = with_flags(server_options(&config, &root, None), args);
    options.audit = super::audit::open(&args.audit, &config, &root, printer)?;
    let state = ServerState::loading(options);
    let _telemetry = telemetry(printer, &config);
    if let Some(address) = &args.metrics {
        serve_metrics(
            printer,
            &state,
            &http_options(args, &config, &root)?,
            address,
        )?;
    }
    // The served folder lives as long as the server: without `--watch` nothing else holds
    // it (the upstream hook holds it weakly).
    let served: Arc<OnceLock<Arc<ServedFolder>>> = Arc::default();
    let loader = {
        let (args, state, served) = (args.clone(), state.clone(), Arc::clone(&served));
        move || {
            let loaded = std::panic::catch_unwind(AssertUnwindSafe(|| {
                load_and_serve(&args, printer, &state)
            }));
            match loaded {
                Ok(Ok(folder)) => {
                    let _ = served.set(folder);
                    state.wait_for_search_index();
                    crate::release_free_memory();
                    return;
                }
                Ok(Err(error)) => crate::error::render(printer, &error),
                // The panic's message is on stderr already.
                Err(_) => {}
            }
            // A server that will never serve its folder must not keep the client waiting:
            // it ends as `serve` does when it cannot start (`ExitStatus::Failure`).
            toolsmith_upstream::kill_all();
            std::process::exit(2);
        }
    };
    std::thread::Builder::new()
        .name("toolsmith-load".into())
        .spawn(loader)
        .context("cannot start loading the folder")?;
    let result = toolsmith_server::serve_stdio(state);
    toolsmith_upstream::kill_all();
    result.map_err(Hinted::wrap)?;
    Ok(ExitStatus::Success)
}

/// Loads the folder of a [`ServerState::loading`] server and serves it, with what `serve`
/// does around a loaded folder: its diagnostics on stderr, reloads on upstream changes and
/// under `--watch`.
fn load_and_serve(
    args: &ServeArgs,
    printer: Printer,
    state: &ServerState,
) -> anyhow::Result<Arc<ServedFolder>> {
    let cache = Mutex::new(None);
    let root = folder::path_of(args.folder.dir.as_deref());
    let flags = format!("{:?} {:?}", args.search, args.code_mode);
    let place = Place {
        transport: Some(Transport::Stdio),
        profile: args.profile.profile.as_deref(),
        flags: &flags,
    };
    let (loaded, seen) = std::thread::scope(|scope| {
        // Read while the folder's files are looked at, checked against them after.
        let ahead = scope.spawn(|| ReadAhead::read(&root, &place));
        load(args, Transport::Stdio, |seen| {
            let ahead = ahead.join().unwrap_or(ReadAhead::NONE);
            *cache.lock().unwrap_or_else(PoisonError::into_inner) =
                kept_index(state, Cache::at(&root, &place, seen), ahead);
        })
    })?;
    let cache = cache.into_inner().unwrap_or_else(PoisonError::into_inner);
    if let Some(cache) = cache.filter(|_| search_cache::keepable(&loaded)) {
        state.keep_search_index(Arc::new(move |index, catalog| {
            cache.write_catalog(catalog, index);
        }));
    }
    folder::report(printer, loaded.catalog().diagnostics());
    let search = args.search.apply(loaded.config().search);
    let evaluator = args.code_mode.apply(loaded.config().evaluator.clone());
    folder::explain_search(printer, loaded.catalog(), search);
    let catalog = Arc::clone(loaded.catalog());
    let content = (
        Arc::clone(loaded.prompts()),
        crate::skills::with_generated(&loaded, loaded.resources()),
    );
    let flags = (args.search.clone(), args.code_mode.clone());
    // Looked at before the folder is served: a change made once a client can list it is seen.
    let served = ServedFolder::new((loaded, seen), flags, state.clone(), printer);
    state.loaded(catalog, content, (search, evaluator));
    upstream_changes(&served);
    if args.watch {
        crate::watch::spawn(Arc::clone(&served)).context("cannot start watching the folder")?;
    }
    Ok(served)
}

/// Hands `state` the search index `ahead` read, when it is the one `cache` (the folder as
/// its files are now, served as now) keeps: it answers `tool_search` while the folder
/// loads, and is the loaded folder's index (docs/search.md, "The kept index"). Otherwise,
/// where the index `tool_search` builds is to be kept.
fn kept_index(state: &ServerState, cache: Option<Cache>, ahead: ReadAhead) -> Option<Cache> {
    let cache = cache?;
    match cache.check(ahead) {
        Some(kept) => {
            state.kept_index(kept);
            None
        }
        None => Some(cache),
    }
}

/// The folder to serve over `transport`, and what its files were before it loaded
/// ([`ServedFolder::load`], which hands that to `seen` as soon as it is known).
fn load(
    args: &ServeArgs,
    transport: Transport,
    seen: impl FnOnce(&toolsmith_folder::Snapshot) + Send,
) -> anyhow::Result<(toolsmith_folder::ToolFolder, toolsmith_folder::Snapshot)> {
    let dir = args.folder.dir.as_deref();
    let (loaded, seen) = ServedFolder::load(
        &folder::path_of(dir),
        || {
            // `tools/list` of `--search never` needs every tool held.
            let defer = args.search.mode != Some(SearchModeArg::Never);
            folder::load_to_serve(dir, Some(transport), args.profile.profile.as_deref(), defer)
        },
        seen,
    );
    Ok((loaded?, seen))
}

/// `[auth]` of `config`, which is for HTTP like the flags; `--auth-token` is the other way
/// to authorize, and both at once is an error.
fn config_auth(
    args: &ServeArgs,
    config: &toolsmith_folder::FolderConfig,
) -> anyhow::Result<Option<OAuthSettings>> {
    let auth = config.auth.clone().filter(|_| args.http.is_some());
    if auth.is_some() && args.auth_token.is_some() {
        return Err(Hinted::new("`--auth-token` and `[auth]` in toolsmith.toml are both set")
            .hint("use one: OAuth access tokens (`[auth]`) or a shared bearer token (--auth-token)")
            .into());
    }
    Ok(auth)
}

/// `options` with `serve`'s flags applied over the folder's settings.
fn with_flags(mut options: ServerOptions, args: &ServeArgs) -> ServerOptions {
    options.max_concurrent_calls = usize::try_from(args.max_concurrent_calls).unwrap_or(usize::MAX);
    options.search = args.search.apply(options.search);
    options.evaluator = args.code_mode.apply(options.evaluator);
    options.tasks.ttl = args.task_ttl;
    options
}

/// Loads the folder again when an upstream's tools change, so that clients hear of it, and
/// passes an upstream's `resources/updated` to the sessions subscribed (docs/gateway.md,
/// "A faithful proxy"). The reloads run on the upstreams' own thread, coalesced.
fn upstream_changes(served: &Arc<ServedFolder>) {
    let state = served.state().clone();
    toolsmith_upstream::on_resource_updated(move |uri| state.resource_updated(uri));
    let served = Arc::downgrade(served);
    toolsmith_upstream::on_tools_changed(move || {
        if let Some(served) = served.upgrade() {
            let _ = served.reload("upstream tools changed");
        }
    });
}

/// The HTTP server's settings from `serve`'s flags, and `[state]` of `config` where a flag
/// is not given.
fn http_options(
    args: &ServeArgs,
    config: &toolsmith_folder::FolderConfig,
    root: &std::path::Path,
) -> anyhow::Result<HttpOptions> {
    let crate::args::SharedStateArg {
        url,
        state_key,
        replica_name,
    } = &args.shared_state;
    let toolsmith_folder::StateConfig {
        url: config_url,
        key: config_key,
        replica_name: config_replica_name,
    } = &config.state;
    // `[state]` applies to HTTP only, as its flags do.
    let http = args.http.is_some();
    let pick = |flag: &Option<String>, key: &Option<String>| {
        flag.clone().or_else(|| key.clone().filter(|_| http))
    };
    let (url, state_key, replica_name) = (
        pick(url, config_url),
        pick(state_key, config_key),
        pick(replica_name, config_replica_name),
    );
    let shared_state = url
        .as_deref()
        .map(toolsmith_server::SharedState::open)
        .transpose()
        .map_err(|error| Hinted::wrap(toolsmith_server::ServeError::State(error)))?;
    Ok(HttpOptions {
        allowed_hosts: args.allow_hosts.clone(),
        allowed_origins: args.allow_origins.clone(),
        auth_token: args.auth_token.clone(),
        oauth: None,
        max_body_bytes: args.max_body_size,
        shutdown_grace: args.shutdown_grace,
        header_timeout: args.header_timeout,
        body_timeout: args.body_timeout,
        max_connections: usize::try_from(args.max_connections).unwrap_or(usize::MAX),
        max_sessions: usize::try_from(args.max_sessions).unwrap_or(usize::MAX),
        session_timeout: args.session_timeout,
        metrics_on_port: args.metrics.is_none(),
        install_snippets: Some(crate::install::page::snippets()),
        shared_state,
        state_key,
        replica_name,
        server_card: Some(super::card::server_card(
            config,
            root,
            args.public_url.clone(),
        )),
    })
}

/// The OAuth resource server's settings: `[auth]` (`config`), each Authorization flag given
/// winning over its key, with the scopes the tools name for the metadata to list
/// (docs/auth.md).
fn oauth_settings(
    args: &AuthorizationArgs,
    config: Option<OAuthSettings>,
    catalog: &toolsmith_model::Catalog,
) -> anyhow::Result<Option<OAuthSettings>> {
    let AuthorizationArgs {
        oauth_issuer,
        oauth_audience,
        oauth_resource,
        oauth_jwks_uri,
        oauth_scopes,
        oauth_clock_skew,
        oauth_introspection_url,
        oauth_client_id,
        // Often in the environment for other reasons: it alone asks for nothing.
        oauth_client_secret: _,
    } = args;
    let mut settings = match (config, oauth_issuer) {
        (Some(mut settings), Some(issuer)) => {
            issuer.clone_into(&mut settings.issuer);
            settings
        }
        (Some(settings), None) => settings,
        (None, Some(issuer)) => OAuthSettings::new(issuer.clone()),
        (None, None) => {
            let given = oauth_audience.is_some()
                || oauth_resource.is_some()
                || oauth_jwks_uri.is_some()
                || !oauth_scopes.is_empty()
                || oauth_clock_skew.is_some()
                || oauth_introspection_url.is_some()
                || oauth_client_id.is_some();
            if given {
                return Err(Hinted::new("the --oauth-* flags need an issuer")
                    .hint("pass --oauth-issuer URL, or set `[auth] issuer` in toolsmith.toml")
                    .into());
            }
            return Ok(None);
        }
    };
    if oauth_audience.is_some() {
        settings.audience.clone_from(oauth_audience);
    }
    if oauth_resource.is_some() {
        settings.resource.clone_from(oauth_resource);
    }
    if oauth_jwks_uri.is_some() {
        settings.jwks_uri.clone_from(oauth_jwks_uri);
    }
    if !oauth_scopes.is_empty() {
        settings.required_scopes.clone_from(oauth_scopes);
    }
    if let Some(skew) = oauth_clock_skew {
        settings.clock_skew = *skew;
    }
    introspection_flags(args, &mut settings)?;
    // A deferred tool needs no scopes (docs/performance.md, "Tools not held").
    for scope in catalog
        .entries()
        .iter()
        .filter(|entry| entry.tool().deferred().is_none())
        .flat_map(|entry| &entry.definition().scopes)
    {
        if !settings.scopes_supported.contains(scope) {
            settings.scopes_supported.push(scope.clone());
        }
    }
    Ok(Some(settings))
}

/// `--oauth-introspection-url`, `--oauth-client-id` and `--oauth-client-secret`, each
/// winning over its `[auth]` key; together they must name an endpoint and both credentials.
fn introspection_flags(
    args: &AuthorizationArgs,
    settings: &mut OAuthSettings,
) -> anyhow::Result<()> {
    let AuthorizationArgs {
        oauth_introspection_url: url,
        oauth_client_id: id,
        oauth_client_secret: secret,
        ..
    } = args;
    if url.is_none() && id.is_none() && (secret.is_none() || settings.introspection.is_none()) {
        return Ok(());
    }
    let known = settings.introspection.take();
    let pick = |flag: &Option<String>, key: Option<&String>| flag.clone().or_else(|| key.cloned());
    let url = pick(url, known.as_ref().map(|known| &known.url));
    let client_id = pick(id, known.as_ref().map(|known| &known.client_id));
    let client_secret = pick(secret, known.as_ref().map(|known| &known.client_secret));
    let (Some(url), Some(client_id), Some(client_secret)) = (url, client_id, client_secret) else {
        return Err(Hinted::new(
            "token introspection needs an endpoint, a client id and a client secret",
        )
        .hint("pass --oauth-introspection-url URL --oauth-client-id ID and set TOOLSMITH_OAUTH_CLIENT_SECRET (or the `[auth]` keys introspection_url, client_id, client_secret)")
        .into());
    };
    settings.introspection = Some(toolsmith_model::Introspection {
        url,
        client_id,
        client_secret,
    });
    Ok(())
}

/// Over HTTP, a profile's `scopes` join the scopes every OAuth caller needs (docs/auth.md);
/// without OAuth there is no caller to hold them, which is worth a warning.
fn require_profile_scopes(printer: Printer, oauth: Option<&mut OAuthSettings>, scopes: &[String]) {
    if scopes.is_empty() {
        return;
    }
    let Some(settings) = oauth else {
        printer.warning(&format!(
            "the profile's `scopes` ({}) apply to OAuth callers only; without --oauth-issuer or `[auth]` every client gets this profile",
            scopes.join(", ")
        ));
        return;
    };
    for scope in scopes {
        if !settings.required_scopes.contains(scope) {
            settings.required_scopes.push(scope.clone());
        }
        if !settings.scopes_supported.contains(scope) {
            settings.scopes_supported.push(scope.clone());
        }
    }
}

/// Serves `/metrics` on a listener of its own at `address` (`--metrics`), and says where.
fn serve_metrics(
    printer: Printer,
    state: &ServerState,
    options: &HttpOptions,
    address: &str,
) -> anyhow::Result<()> {
    let address = listen_address(address, "--metrics")?;
    let bound =
        toolsmith_server::serve_metrics(state.clone(), options, address).map_err(Hinted::wrap)?;
    printer.message(&format!("Metrics at {}{METRICS_PATH}", origin(bound)));
    Ok(())
}

/// What `serve` says on a terminal, where nobody sees MCP on stdin: what
/// it serves, that it waits for a client, and the commands that show something at once.
fn first_minute(printer: Printer, state: &ServerState, dir: Option<&Path>, profile: Option<&str>) {
    let catalog = state.catalog();
    let dir = dir.map_or_else(
        || folder::DEFAULT_DIR.to_owned(),
        |dir| dir.display().to_string(),
    );
    let names: Vec<&str> = catalog
        .entries()
        .iter()
        .map(CatalogEntry::name)
        .take(6)
        .collect();
    let more = catalog.entries().len().saturating_sub(names.len());
    let listed = if more == 0 {
        names.join(", ")
    } else {
        format!("{}, and {more} more", names.join(", "))
    };
    let profile_flag = profile.map_or_else(String::new, |name| format!(" --profile {name}"));
    printer.message(&format!(
        "Serving {} tool{} from {dir}{profile_flag}: {listed}",
        catalog.entries().len(),
        if catalog.entries().len() == 1 {
            ""
        } else {
            "s"
        },
    ));
    printer.message("Waiting for an MCP client on stdin (this is what an AI client starts; Ctrl-D or Ctrl-C to stop).");
    if let Some(example) = catalog.definitions().next() {
        let required: Vec<String> = example
            .input_schema
            .keyword("required")
            .as_ref()
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|name| Some(format!(" {}=...", name.as_str()?)))
            .collect();
        printer.hint(&format!(
            "try a tool:         toolsmith call {dir} {}{}",
            example.name,
            required.concat()
        ));
    }
    printer.hint(&format!(
        "add it to a client: toolsmith install claude-code {dir}{profile_flag}"
    ));
    printer.hint(&format!(
        "open its page:      toolsmith dev {dir}{profile_flag} --open   (over HTTP, following your edits)"
    ));
}

/// The server a tools folder asks for in its `toolsmith.toml` (`[server]`, `[search]`),
/// with defaults for the rest and the folder (`root`) as command tools' working directory.
fn server_options(
    config: &toolsmith_folder::FolderConfig,
    root: &Path,
    shared: Option<&toolsmith_server::SharedState>,
) -> ServerOptions {
    let defaults = ServerOptions::new(root.to_owned());
    // With `--state`, every replica counts `[limits]` in the same Redis (docs/limits.md).
    let limits = match shared {
        Some(shared) => toolsmith_server::Limits::new(
            config.limits.clone(),
            Arc::new(toolsmith_server::RedisCounters::new(shared.clone())),
        ),
        None => toolsmith_server::Limits::in_memory(config.limits.clone()),
    };
    ServerOptions {
        name: config.name.clone().unwrap_or(defaults.name),
        version: config.version.clone().unwrap_or(defaults.version),
        instructions: config.instructions.clone(),
        search: config.search,
        evaluator: config.evaluator.clone(),
        limits,
        // With `--state`, tasks are kept in Redis for every replica (docs/tasks.md).
        tasks: toolsmith_server::TaskSettings {
            shared: shared.cloned(),
            ..defaults.tasks
        },
        ..defaults
    }
}

/// Whether `address` listens where other machines can reach it (an IPv4-mapped loopback
/// address such as `[::ffff:127.0.0.1]` is loopback too).
fn beyond_loopback(address: SocketAddr) -> bool {
    !address.ip().to_canonical().is_loopback()
}

/// The URL a local client uses for a bound address.
fn url(bound: SocketAddr) -> String {
    format!("{}{MCP_PATH}", origin(bound))
}

/// `http://HOST:PORT` of a bound address, as a local client reaches it.
pub(crate) fn origin(bound: SocketAddr) -> String {
    let host = match bound.ip() {
        ip if ip.is_unspecified() => "127.0.0.1".to_owned(),
        IpAddr::V6(ip) => format!("[{ip}]"),
        IpAddr::V4(ip) => ip.to_string(),
    };
    format!("http://{host}:{}", bound.port())
}

/// Reads `flag`'s `PORT`, `:PORT`, `HOST:PORT` or `[IPv6]:PORT`; a bare port means loopback.
fn listen_address(text: &str, flag: &str) -> anyhow::Result<SocketAddr> {
    let port_only = text.strip_prefix(':').unwrap_or(text);
    if let Ok(port) = port_only.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Ok(address) = text.parse::<SocketAddr>() {
        return Ok(address);
    }
    let invalid = || {
        Hinted::new(format!("`{text}` is not an address to listen on")).hint(format!(
            "write PORT, :PORT, HOST:PORT or [IPv6]:PORT, e.g. {flag} 8080 or {flag} 0.0.0.0:8080"
        ))
    };
    let mut resolved = text.to_socket_addrs().map_err(|_| invalid())?;
    resolved.next().ok_or_else(|| invalid().into())
}

#[cfg(test)]
mod tests {
    use toolsmith_model::{SearchMode, SearchSettings};

    use super::*;

    #[test]
    fn toolsmith_toml_names_and_configures_the_server() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("toolsmith.toml"),
            "[server]\nname = \"weather\"\nversion = \"2.1.0\"\ninstructions = \"Ask about the weather.\"\n\n[search]\nmode = \"always\"\n",
        )
        .unwrap();
        let folder = ToolFolder::load(dir.path()).unwrap();
        let options = server_options(folder.config(), folder.root(), None);
        assert_eq!(options.name, "weather");
        assert_eq!(options.version, "2.1.0");
        assert_eq!(
            options.instructions.as_deref(),
            Some("Ask about the weather.")
        );
        assert_eq!(options.search.mode, SearchMode::Always);
        assert_eq!(options.working_dir, dir.path());
    }

    #[test]
    fn a_folder_without_toolsmith_toml_serves_as_toolsmith() {
        let dir = tempfile::tempdir().unwrap();
        let folder = ToolFolder::load(dir.path()).unwrap();
        let options = server_options(folder.config(), folder.root(), None);
        assert_eq!(options.name, "toolsmith");
        assert_eq!(options.version, env!("CARGO_PKG_VERSION"));
        assert_eq!(options.instructions, None);
        assert_eq!(options.search, SearchSettings::default());
        assert_eq!(options.working_dir, dir.path());
    }

    #[test]
    fn bare_port_means_loopback() {
        let loopback: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(listen_address("8080", "--http").unwrap(), loopback);
        assert_eq!(listen_address(":8080", "--http").unwrap(), loopback);
        assert_eq!(
            listen_address("0.0.0.0:8080", "--http").unwrap(),
            "0.0.0.0:8080".parse().unwrap()
        );
        assert_eq!(
            listen_address("[::1]:9", "--http").unwrap(),
            "[::1]:9".parse().unwrap()
        );
        assert!(listen_address("nope", "--http").is_err());
    }

    // Regression test: the warning about serving without auth must
    // not fire for loopback spelled as IPv4-mapped IPv6, and must fire for every interface.
    #[test]
    fn only_addresses_beyond_loopback_are_public() {
        for loopback in [
            "127.0.0.1:1",
            "127.0.0.2:1",
            "[::1]:1",
            "[::ffff:127.0.0.1]:1",
        ] {
            assert!(!beyond_loopback(loopback.parse().unwrap()), "{loopback}");
        }
        for public in ["0.0.0.0:1", "[::]:1", "10.0.0.5:1", "[::ffff:10.0.0.5]:1"] {
            assert!(beyond_loopback(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn url_is_usable_locally() {
        assert_eq!(
            url("0.0.0.0:8080".parse().unwrap()),
            "http://127.0.0.1:8080/mcp"
        );
        assert_eq!(url("[::1]:9".parse().unwrap()), "http://[::1]:9/mcp");
    }
}
