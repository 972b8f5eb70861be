use crate::checker::{At, Report, Server};
use crate::rule::declare_rule;

declare_rule! {
    /// ## What it does
    /// Reports an `[upstream.NAME]` whose table says `forward_caller_token = true`: each
    /// call of its tools made for a caller with an access token sends that caller's own
    /// token to the upstream, instead of a token of the upstream's own authorization server
    /// (docs/gateway.md, "Upstreams behind their own OAuth").
    ///
    /// ## Why is this bad?
    /// The MCP authorization specification forbids token passthrough: a token was issued
    /// for this server (its audience), and an upstream that accepts it without checking
    /// its audience, or that logs or forwards it again, lets anyone who sees it act as the
    /// user wherever else that token is accepted. It also hides who is really calling from
    /// the upstream's audit and rate limits, which see the user, never the gateway. It is
    /// safe only when the upstream shares this server's issuer and audience on purpose, and
    /// checks both.
    ///
    /// ## Example
    /// ```toml
    /// [upstream.tickets]
    /// url = "https://tickets.example.com/mcp"
    /// forward_caller_token = true
    /// ```
    ///
    /// ## How to fix
    /// Give the upstream a token of its own: `oauth = { client_id = "toolsmith",
    /// client_secret = "${TICKETS_CLIENT_SECRET}", scopes = ["tickets"] }`, registered at
    /// the upstream's authorization server, and remove `forward_caller_token`. When the
    /// upstream does share the issuer and the audience by design, keep it and ignore this
    /// rule: `[check] ignore = ["token-passthrough"]`.
    pub(crate) static TOKEN_PASSTHROUGH: TokenPassthrough = {
        id: "token-passthrough",
        summary: "An upstream is sent the caller's own access token (`forward_caller_token = true`)",
        severity: Warning,
        check: check,
    }
}

fn check(server: &Server<'_>, report: &mut Report<'_>) {
    for (name, location) in &server.context.token_passthrough {
        report
            .add(
                At::location(location),
                None,
                format!(
                    "upstream `{name}` is sent each caller's own access token (`forward_caller_token = true`), which the MCP specification forbids unless it shares this server's issuer and audience"
                ),
            )
            .help(format!(
                "give `[upstream.{name}]` a token of its own with `oauth = {{ client_id = \"…\", client_secret = \"${{VAR}}\" }}` and remove `forward_caller_token`, or ignore `token-passthrough` if the upstream shares the issuer and audience on purpose"
            ));
    }
}
