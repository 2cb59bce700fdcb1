// A real OAuth 2.1 authorization server for the MCP authorization tests
// (dsh-tools-runtime/tests/mcp/mcp_auth.rs): the npm `oidc-provider` package on a loopback port,
// issuing JWT access tokens by client_credentials with a resource indicator (RFC 8707), so that
// a token's `aud` is the resource the test asks for.
//
// Prints one line, {"issuer": "http://127.0.0.1:PORT"}, once it listens; exits when its stdin
// closes. Clients (secret = id + "-secret"):
//   full   — may get tools:read and tools:write; tokens live 600 s
//   reader — may get tools:read only
//   short  — like full, but tokens live 1 s (the expiry test)
//   poster — like full, authenticating with client_secret_post (rmcp's client-credentials
//            grant sends the secret in the body; cli/tests/cli_mcp_remote.rs)
//   coder  — the authorization-code flow (redirect URI http://127.0.0.1:9/callback) with
//            refresh tokens; access tokens live 1 s (the refresh test). The user is `user` and
//            consents at once: GET /interaction/:uid finishes each interaction (login, then
//            consent to every scope asked) and redirects on, so an agent that follows
//            redirects with their cookies gets the code.
// Test-only routes beside the provider's own:
//   POST /test/sign {header, claims} → {token}: a JWS over these exact claims with the
//     provider's own signing key (RS256) — or, for header.alg "none", unsigned, and for
//     header.alg "HS256", an HMAC keyed with the provider's public key PEM (the
//     algorithm-confusion attack). Claims the server would never issue (another `iss`, `nbf`
//     in the future) need it.
//   GET /test/stats → {jwks_fetches}: how often the JWKS was fetched (the refetch rate limit).
import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingJwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-key-1', alg: 'RS256', use: 'sig' };
const publicPem = createPublicKey(privateKey).export({ format: 'pem', type: 'spki' });

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const client = (id, scope) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  scope,
});
const SCOPES = 'tools:read tools:write';

const provider = new Provider(issuer, {
  clients: [
    client('full', SCOPES),
    client('reader', 'tools:read'),
    client('short', SCOPES),
    { ...client('poster', SCOPES), token_endpoint_auth_method: 'client_secret_post' },
    {
      ...client('coder', SCOPES),
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1:9/callback'],
    },
  ],
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  jwks: { keys: [signingJwk] },
  scopes: ['tools:read', 'tools:write'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource, client) => ({
        scope: SCOPES,
        audience: resource,
        accessTokenFormat: 'jwt',
        accessTokenTTL: ['short', 'coder'].includes(client.clientId) ? 1 : 600,
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  ttl: {
    ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 600,
    Interaction: 600,
    Session: 600,
    Grant: 600,
  },
});

let jwksFetches = 0;
const b64 = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

provider.use(async (ctx, next) => {
  if (ctx.method === 'GET' && ctx.path === '/jwks') jwksFetches += 1;
  if (ctx.method === 'GET' && ctx.path === '/test/stats') {
    ctx.body = { jwks_fetches: jwksFetches };
    return;
  }
  if (ctx.method === 'GET' && ctx.path.startsWith('/interaction/')) {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    let result = { login: { accountId: 'user' } };
    if (details.prompt.name === 'consent') {
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
      const { missingOIDCScope, missingResourceScopes } = details.prompt.details;
      if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
      for (const [resource, scopes] of Object.entries(missingResourceScopes ?? {})) {
        grant.addResourceScope(resource, scopes.join(' '));
      }
      result = { consent: { grantId: await grant.save() } };
    }
    const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
    ctx.status = 303;
    ctx.redirect(returnTo);
    return;
  }
  if (ctx.method === 'POST' && ctx.path === '/test/sign') {
    const chunks = [];
    for await (const chunk of ctx.req) chunks.push(chunk);
    const { header, claims } = JSON.parse(Buffer.concat(chunks).toString());
    const input = `${b64(header)}.${b64(claims)}`;
    let signature = '';
    if (header.alg === 'RS256') {
      signature = sign('sha256', Buffer.from(input), createPrivateKey({ key: signingJwk, format: 'jwk' })).toString('base64url');
    } else if (header.alg === 'HS256') {
      signature = createHmac('sha256', publicPem).update(input).digest('base64url');
    }
    ctx.body = { token: `${input}.${signature}` };
    return;
  }
  await next();
});

server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
// The tests read the first line only and close the pipe: later output (the provider's notices on
// the interaction flows) must not end the process.
process.stdout.on('error', () => {});
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
