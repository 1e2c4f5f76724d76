// A real OAuth 2.1 authorization server for cairn's end-to-end tests, built on
// oidc-provider so the resource server is checked against an independent
// implementation rather than against tokens the test suite mints itself.
//
//   node tests/e2e/data/oauth/provider.mjs --port P --groups team-a,team-b [--ttl 600]
//
// --port 0 picks a free port; the chosen one is in the READY line.
// Stdout carries exactly one line, `READY <issuer>`, once the server listens;
// everything else (oidc-provider's notices included) goes to stderr.
// oidc-provider is loaded from $CAIRN_OIDC_MODULES (a node_modules folder),
// default <repo>/target/oidc/node_modules.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

// oidc-provider prints its notices with console.info, i.e. to stdout; the test
// reads stdout for the READY line only, so every console channel goes to stderr.
for (const method of ['log', 'info', 'debug']) console[method] = console.error;

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    groups: { type: 'string', default: '' },
    ttl: { type: 'string', default: '600' },
  },
});
const port = Number(args.port);
const ttl = Number(args.ttl);
const groups = args.groups.split(',').map((g) => g.trim()).filter(Boolean);
if (!Number.isInteger(port) || port < 0 || port > 65535 || !(ttl > 0)) {
  console.error('usage: provider.mjs --port P --groups a,b [--ttl SECONDS]');
  process.exit(2);
}

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const modules = process.env.CAIRN_OIDC_MODULES || join(repo, 'target/oidc/node_modules');
// The package has no "exports" map, so require.resolve finds its ESM entry point.
const entry = createRequire(join(modules, 'noop.js')).resolve('oidc-provider');
const { default: Provider, errors } = await import(pathToFileURL(entry).href);

// The resource server's scope; a JWT access token for any resource carries it.
const RESOURCE_SCOPE = 'cairn:read';
const ACCOUNT = 'alice';

// A signing key per run: nothing outlives the process, and the resource server
// must fetch it from jwks_uri like it would from a real issuer.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = {
  ...privateKey.export({ format: 'jwk' }),
  kid: `test-${randomBytes(4).toString('hex')}`,
  alg: 'RS256',
  use: 'sig',
};

// Listen first so that --port 0 works: the issuer has to name the real port,
// and the provider is only built once that is known.
let handler = (_req, res) => { res.statusCode = 503; res.end(); };
const server = createServer((req, res) => handler(req, res));
try {
  await new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', ok);
  });
} catch (err) {
  console.error(`provider.mjs: cannot listen on 127.0.0.1:${port}: ${err.message}`);
  process.exit(1);
}
const issuer = `http://127.0.0.1:${server.address().port}`;

function isHttpUrl(value) {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && !url.hash;
  } catch {
    return false;
  }
}

const provider = new Provider(issuer, {
  jwks: { keys: [signingKey] },
  // Session and interaction cookies are signed; a random key will do, since
  // every session dies with the process anyway.
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  // cairn:read is listed as an authorization-server scope too: DCR clients may
  // register `scope: "cairn:read offline_access"` (the MCP SDK does), which
  // oidc-provider rejects unless every value is in `scopes`; it also puts the
  // scope in discovery's scopes_supported.
  scopes: ['openid', 'offline_access', RESOURCE_SCOPE],
  // OAuth 2.1: no implicit or hybrid flows.
  responseTypes: ['code'],
  findAccount: (_ctx, sub) => ({
    accountId: sub,
    claims: () => ({ sub }),
  }),
  features: {
    // Login and consent are answered by the middleware below instead.
    devInteractions: { enabled: false },
    registration: { enabled: true }, // open: no initial access token
    revocation: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // Without `resource`, the token is an opaque one for userinfo (no audience to sign for).
      defaultResource: (_ctx, _client, oneOf) => oneOf,
      // The token request may repeat or omit `resource`; either way the grant decides.
      useGrantedResource: () => true,
      // Any http(s) URL is a resource server here; cairn's tests pick the port.
      getResourceServerInfo: (_ctx, resource) => {
        if (!isHttpUrl(resource)) throw new errors.InvalidTarget();
        return {
          scope: RESOURCE_SCOPE,
          audience: resource,
          accessTokenTTL: ttl,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  // Claims a resource server can authorize on without calling userinfo.
  extraTokenClaims: () => ({ groups }),
  // OAuth 2.1: PKCE for every authorization code, confidential clients included.
  pkce: { required: () => true },
  ttl: {
    AccessToken: ttl,
    AuthorizationCode: 60,
    Grant: 3600,
    IdToken: 3600,
    Interaction: 600,
    RefreshToken: 86400,
    Session: 3600,
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  // Errors the "user" would see (bad redirect_uri, unknown client) come back as
  // JSON, so a failing test's message says what went wrong.
  renderError: (ctx, out) => {
    ctx.type = 'json';
    ctx.body = out;
  },
});

// One line per request, so a test (or a person) can see the discovery order.
// Registered first so that it also wraps the interaction middleware.
provider.use(async (ctx, next) => {
  await next();
  // The token request's form body is not in the URL; show the parameters that matter here.
  const body = ctx.method === 'POST' && ctx.path === '/token' && ctx.oidc?.params
    ? ` grant_type=${ctx.oidc.params.grant_type} resource=${ctx.oidc.params.resource}`
    : '';
  console.error(`${ctx.method} ${ctx.url}${body} -> ${ctx.status}`);
});

// Automatic end-user: each interaction completes at once with a 303 back to
// the authorization endpoint, so a client that follows redirects with a cookie
// jar lands on its redirect_uri with code, state and iss.
provider.use(async (ctx, next) => {
  if (ctx.method !== 'GET' || !ctx.path.startsWith('/interaction/')) return next();
  let details;
  try {
    details = await provider.interactionDetails(ctx.req, ctx.res);
  } catch (err) { // no or expired interaction cookie: a client that dropped its cookie jar
    ctx.status = 400;
    ctx.body = { error: 'invalid_request', error_description: `${err.name}: ${err.message}` };
    return undefined;
  }
  const { prompt, params, session, grantId } = details;
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: ACCOUNT } };
  } else if (prompt.name === 'consent') {
    const grant = grantId
      ? await provider.Grant.find(grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  } else {
    result = { error: 'access_denied', error_description: `unhandled prompt ${prompt.name}` };
  }
  const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, {
    mergeWithLastSubmission: true,
  });
  ctx.status = 303;
  ctx.redirect(returnTo);
});

for (const event of [
  'server_error', 'authorization.error', 'grant.error', 'registration_create.error',
  'introspection.error', 'revocation.error', 'discovery.error', 'jwks.error', 'userinfo.error',
]) {
  provider.on(event, (_ctx, err) => {
    console.error(`${event}: ${err.name}: ${err.message}${err.error_detail ? ` (${err.error_detail})` : ''}`);
  });
}

handler = provider.callback();
process.stdout.write(`READY ${issuer}\n`);

function stop() {
  server.close();
  server.closeAllConnections();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
