// A real OAuth 2 authorization server for the gateway's upstream OAuth tests
// (crates/toolsmith/tests/it/upstream_oauth.rs; docs/gateway.md, "Upstreams behind their
// own OAuth"): oauth2-mock-server on a free loopback port, with one registered client that
// must authenticate as the discovery metadata says (client_secret_basic or _post). Its
// client credentials tokens carry `sub` and `client_id` = the client and `aud` = the
// `resource` asked for (RFC 8707), as a real server's would. Prints `{"issuer": URL}` once
// listening, then answers one JSON command per stdin line with one JSON line on stdout:
//   {"client": {"id", "secret", "method"?: "basic"|"post", "expires_in"?: N}} -> {"ok": true}
//   {"expired": N} -> {"ok": true}: the next N client credentials tokens are signed
//       already expired, while the token response still says `expires_in` (a token the
//       upstream refuses before the client expects it to)
//   {"token": {"claims": {...}}} -> {"token": JWT}: a user's token (the caller's)
//   {"requests": true} -> {"count": N, "last": {...}}: the client credentials requests
//       answered so far, and the last one's client, method, grant, resource and scope
//       (never its secret)
import { createInterface } from "node:readline";
import { OAuth2Server } from "oauth2-mock-server";

const server = new OAuth2Server();
await server.issuer.keys.generate("RS256", { kid: "first" });
await server.start(0, "127.0.0.1");

let client = null;
let expired = 0;
let count = 0;
let last = null;

const decode = (text) => decodeURIComponent(text.replace(/\+/g, " "));

// Who the request authenticates as, and how: {id, secret, method} or null.
function credentials(req) {
  const header = req.headers.authorization ?? "";
  if (header.startsWith("Basic ")) {
    const text = Buffer.from(header.slice(6), "base64").toString();
    const colon = text.indexOf(":");
    return {
      id: decode(text.slice(0, colon)),
      secret: decode(text.slice(colon + 1)),
      method: "basic",
    };
  }
  if (req.body?.client_secret !== undefined) {
    return { id: req.body.client_id, secret: req.body.client_secret, method: "post" };
  }
  return null;
}

server.service.on("beforeWellKnownOpenIdConfiguration", (response) => {
  const method = client?.method === "post" ? "client_secret_post" : "client_secret_basic";
  response.body.token_endpoint_auth_methods_supported = [method];
});

server.service.on("beforeTokenSigning", (token, req) => {
  if (req.body?.grant_type !== "client_credentials") return;
  const who = credentials(req);
  token.payload.sub = who?.id;
  token.payload.client_id = who?.id;
  token.payload.aud = req.body.resource;
  const now = Math.floor(Date.now() / 1000);
  if (expired > 0) {
    expired -= 1;
    token.payload.iat = now - 600;
    token.payload.nbf = now - 600;
    token.payload.exp = now - 300;
  } else if (client?.expires_in) {
    token.payload.exp = now + client.expires_in;
  }
});

server.service.on("beforeResponse", (response, req) => {
  if (req.body?.grant_type !== "client_credentials") return;
  const who = credentials(req);
  const method = client?.method ?? "basic";
  if (!client || !who || who.id !== client.id || who.secret !== client.secret || who.method !== method) {
    response.statusCode = 401;
    response.body = {
      error: "invalid_client",
      error_description: `authenticate with client_secret_${method}`,
    };
    return;
  }
  count += 1;
  last = {
    client_id: who.id,
    method: who.method,
    grant_type: req.body.grant_type,
    resource: req.body.resource ?? null,
    scope: req.body.scope ?? null,
  };
  if (client.expires_in) response.body.expires_in = client.expires_in;
});

const say = (value) => process.stdout.write(JSON.stringify(value) + "\n");
say({ issuer: server.issuer.url });

for await (const line of createInterface({ input: process.stdin })) {
  try {
    const command = JSON.parse(line);
    if (command.client) {
      client = command.client;
      say({ ok: true });
    } else if (command.expired !== undefined) {
      expired = command.expired;
      say({ ok: true });
    } else if (command.token) {
      const { claims = {} } = command.token;
      const token = await server.issuer.buildToken({
        kid: "first",
        expiresIn: 3600,
        scopesOrTransform: (_header, payload) => Object.assign(payload, claims),
      });
      say({ token });
    } else if (command.requests) {
      say({ count, last });
    } else {
      say({ error: `unknown command: ${line}` });
    }
  } catch (error) {
    say({ error: String(error) });
  }
}
await server.stop();
