// A real OAuth 2 issuer on a free loopback port for the auth tests
// (crates/toolsmith/tests/it/oauth.rs; docs/auth.md). oauth2-mock-server signs JWTs and
// serves its metadata and JWKS. Prints `{"issuer": URL}` once listening, then answers one
// JSON command per stdin line with one JSON line on stdout:
//   {"token": {"kid"?, "expires_in"?, "claims": {...}}} -> {"token": JWT}
//   {"rotate": KID}                                        -> {"kid": KID} (a new RS256 key)
//   {"introspection": {"client": "ID:SECRET", "answer": {...}}} -> {"ok": true}: POST
//       /introspect (RFC 7662) then answers `answer` to requests with those Basic
//       credentials and 401 to others (the mock's handler does not read the token)
//   {"introspections": true}                               -> {"count": N} answered so far
import { createInterface } from "node:readline";
import { OAuth2Server } from "oauth2-mock-server";

const server = new OAuth2Server();
await server.issuer.keys.generate("RS256", { kid: "first" });
await server.start(0, "127.0.0.1");
let introspection = null;
let introspections = 0;
server.service.on("beforeIntrospect", (response, req) => {
  if (!introspection) return;
  const expected = "Basic " + Buffer.from(introspection.client).toString("base64");
  if (req.headers.authorization !== expected) {
    response.statusCode = 401;
    response.body = { error: "invalid_client" };
    return;
  }
  introspections += 1;
  response.body = introspection.answer;
});
const say = (value) => process.stdout.write(JSON.stringify(value) + "\n");
say({ issuer: server.issuer.url });

for await (const line of createInterface({ input: process.stdin })) {
  try {
    const command = JSON.parse(line);
    if (command.token) {
      const { kid, expires_in: expiresIn, claims = {} } = command.token;
      const token = await server.issuer.buildToken({
        kid: kid ?? "first",
        expiresIn: expiresIn ?? 3600,
        scopesOrTransform: (_header, payload) => Object.assign(payload, claims),
      });
      say({ token });
    } else if (command.rotate) {
      await server.issuer.keys.generate("RS256", { kid: command.rotate });
      say({ kid: command.rotate });
    } else if (command.introspection) {
      introspection = command.introspection;
      say({ ok: true });
    } else if (command.introspections) {
      say({ count: introspections });
    } else {
      say({ error: `unknown command: ${line}` });
    }
  } catch (error) {
    say({ error: String(error) });
  }
}
await server.stop();
