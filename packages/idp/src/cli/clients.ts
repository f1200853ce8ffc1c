import { readFileSync } from 'node:fs';
import type { BrandingChange } from '../branding/service.js';
import type { SendRulesChange } from '../clients/service.js';
import type { ClientLogout } from '../clients/store.js';
import { INITIAL_ACCESS_TOKEN_TTL_HOURS } from '../defaults.js';
import type { Command, Values } from './command.js';
import { UsageError } from './command.js';
import { cursor, servedIssuer, table } from './format.js';
import { grantsOf } from './roles.js';

/** The branding flags of clients create and update: "" clears a value on update (--logo "" removes the logo). */
const BRANDING_FLAGS = ['logo', 'accent', 'display-name', 'terms-url', 'privacy-url', 'mail-sender-name'] as const;

/** The logout flags of clients create and update (OIDC Back-/Front-Channel Logout 1.0). */
const LOGOUT_FLAGS = [
  'backchannel-logout-uri',
  'backchannel-logout-session-required',
  'frontchannel-logout-uri',
  'frontchannel-logout-session-required',
] as const;

const LOGOUT_USAGE = `      --backchannel-logout-uri: where logout tokens are POSTed when a session the client got
      tokens in ends (https, or http to a loopback address; "" removes it).
      --frontchannel-logout-uri: a page of the client the signed-out page loads in a hidden
      iframe; on the origin of one of its redirect URIs ("" removes it).
      --backchannel-logout-session-required / --frontchannel-logout-session-required yes|no:
      the client needs the session id (sid; and iss for the front channel). Default no.
`;

/** The settings `clients create` and `clients update` both take (MFA, passkey MFA, DPoP, ID token algorithm, logout URIs, branding). */
const SETTING_FLAGS = [
  'mfa-policy',
  'passkey-mfa',
  'dpop',
  'par',
  'third-party',
  'device-grant',
  'id-token-alg',
  'post-logout-redirect-uri',
  ...LOGOUT_FLAGS,
  ...BRANDING_FLAGS,
] as const;

/** The send-rule flags of clients update (otp/send-rules.ts). */
const SEND_RULE_FLAGS = ['sms-countries', 'mail-domains'] as const;

/** The send rules the flags give (undefined: none): `default`/`any` remove an application's own list, `none` empties its countries. */
function sendRulesOf(values: Values): SendRulesChange | undefined {
  const countries = values['sms-countries']?.trim();
  const domains = values['mail-domains']?.trim();
  if (countries === undefined && domains === undefined) return undefined;
  const list = (text: string) => text.split(',').filter((item) => item.trim());
  return {
    ...(countries === undefined ? {} : { smsCountries: countries === 'default' ? null : countries === 'none' ? [] : list(countries) }),
    ...(domains === undefined ? {} : { mailDomains: domains === 'any' ? null : list(domains) }),
  };
}

/** The branding the flags give (undefined: none), its logo file read first: a missing one is a bad command line. */
function brandingOf(values: Values): BrandingChange | undefined {
  if (!BRANDING_FLAGS.some((flag) => values[flag] !== undefined)) return undefined;
  const text = (flag: (typeof BRANDING_FLAGS)[number]) => (values[flag] === undefined ? undefined : values[flag] || null);
  const logoFile = values.logo;
  let logo: Buffer | null | undefined;
  if (logoFile === '') logo = null;
  else if (logoFile !== undefined) {
    try {
      logo = readFileSync(logoFile);
    } catch {
      throw new UsageError(`--logo: cannot read ${logoFile}`);
    }
  }
  const change: BrandingChange = {
    displayName: text('display-name'),
    accent: text('accent'),
    termsUrl: text('terms-url'),
    privacyUrl: text('privacy-url'),
    mailSenderName: text('mail-sender-name'),
    logo,
  };
  return Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined)) as BrandingChange;
}

/** A yes|no or required|optional flag as the boolean it sets; another value is refused (exit 2). */
function switchOf(value: string | undefined, on: string, off: string, flag: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== on && value !== off) throw new UsageError(`--${flag} is ${on} or ${off}`);
  return value === on;
}

/** The logout change the flags ask for, undefined when none is given; "" removes a URI. */
function logoutChange(values: Values): Partial<ClientLogout> | undefined {
  if (!LOGOUT_FLAGS.some((flag) => values[flag] !== undefined)) return undefined;
  const uri = (flag: (typeof LOGOUT_FLAGS)[number]) => (values[flag] === undefined ? undefined : (values[flag] as string) || null);
  const change: Partial<ClientLogout> = {
    backchannelLogoutUri: uri('backchannel-logout-uri'),
    frontchannelLogoutUri: uri('frontchannel-logout-uri'),
    backchannelLogoutSessionRequired: switchOf(
      values['backchannel-logout-session-required'],
      'yes',
      'no',
      'backchannel-logout-session-required',
    ),
    frontchannelLogoutSessionRequired: switchOf(
      values['frontchannel-logout-session-required'],
      'yes',
      'no',
      'frontchannel-logout-session-required',
    ),
  };
  return Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined)) as Partial<ClientLogout>;
}

/** A JWKS file's JSON; unreadable or not JSON is a bad command line (exit 2). */
function jwksFile(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new UsageError(`--jwks: cannot read a JSON Web Key Set from ${path}`);
  }
}

const create: Command = {
  name: 'clients create',
  usage: `  service-idp clients create --name NAME [--origin URL ...] [--redirect-uri URL ...] [--public]
                             [--machine [--jwks FILE | --jwks-uri URL]]
                             [--post-logout-redirect-uri URL ...] [--id-token-alg RS256|ES256|EdDSA]
                             [--mfa-policy optional|required] [--passkey-mfa yes|no] [--dpop required|optional] [--par required|optional]
                             [--third-party yes|no] [--device-grant yes|no] [--display-name NAME] [--logo FILE] [--accent '#RRGGBB'] [--terms-url URL]
                             [--privacy-url URL] [--mail-sender-name NAME]
                             [--backchannel-logout-uri URL] [--backchannel-logout-session-required yes|no]
                             [--frontchannel-logout-uri URL] [--frontchannel-logout-session-required yes|no] [--json]
      Register a client application. Prints its clientId, publishableKey (browser, valid
      only from the listed origins) and secretKey (backend) once; they cannot be shown again.
      --redirect-uri: where /authorize may send codes (exact match; repeat for several).
      --public: no secretKey (a single-page or native app); the token endpoint takes its
      client_id alone and requires PKCE S256. Needs at least one --origin or --redirect-uri.
      --machine: a machine client (a backend, a job, another service): it gets access tokens
      for itself with client_credentials (RFC 6749 4.4), never signs a user in, and has no
      --origin or --redirect-uri. It authenticates with its secretKey or, with --jwks FILE
      (a JSON Web Key Set of public keys) or --jwks-uri URL (https), by private_key_jwt.
      What it may do is granted with service-idp clients grant.
      --post-logout-redirect-uri: where the end-session endpoint (/logout) may send the browser
      back after signing out (exact match; repeat for several).
      Every setting of clients update (below) is taken here too and applied at creation, so the
      client never exists without it; a refused value creates nothing (exit 2).
`,
  flags: ['name', 'origin', 'redirect-uri', 'public', 'machine', 'jwks', 'jwks-uri', ...SETTING_FLAGS, 'json'],
  async run({ values, config }, io) {
    if (!values.name) throw new UsageError('clients create needs --name');
    const brand = brandingOf(values);
    const passkeySatisfiesMfa = switchOf(values['passkey-mfa'], 'yes', 'no', 'passkey-mfa');
    const dpopBoundAccessTokens = switchOf(values.dpop, 'required', 'optional', 'dpop');
    const requirePushedAuthorizationRequests = switchOf(values.par, 'required', 'optional', 'par');
    const thirdParty = switchOf(values['third-party'], 'yes', 'no', 'third-party');
    const deviceCodeGrant = switchOf(values['device-grant'], 'yes', 'no', 'device-grant');
    const logout = logoutChange(values);
    const jwks = values.jwks === undefined ? undefined : jwksFile(values.jwks);
    if ((jwks !== undefined || values['jwks-uri'] !== undefined) && !values.machine)
      throw new UsageError('--jwks and --jwks-uri are for a --machine client');
    const { withData, operations } = await import('./open.js');
    return withData(config, async (data) => {
      const keys = await (await operations(data)).createClient(
        {
          name: values.name as string,
          origins: values.origin ?? [],
          redirectUris: values['redirect-uri'] ?? [],
          public: values.public ?? false,
          ...(values.machine ? { machine: true } : {}),
          ...(jwks !== undefined ? { jwks } : {}),
          ...(values['jwks-uri'] !== undefined ? { jwksUri: values['jwks-uri'] } : {}),
          postLogoutRedirectUris: (values['post-logout-redirect-uri'] ?? []).filter((uri) => uri !== ''),
          ...(values['id-token-alg'] !== undefined ? { idTokenSignedResponseAlg: values['id-token-alg'] } : {}),
          ...(values['mfa-policy'] !== undefined ? { mfaPolicy: values['mfa-policy'] } : {}),
          ...(passkeySatisfiesMfa !== undefined ? { passkeySatisfiesMfa } : {}),
          ...(dpopBoundAccessTokens !== undefined ? { dpopBoundAccessTokens } : {}),
          ...(requirePushedAuthorizationRequests !== undefined ? { requirePushedAuthorizationRequests } : {}),
          ...(thirdParty !== undefined ? { thirdParty } : {}),
          ...(deviceCodeGrant !== undefined ? { deviceCodeGrant } : {}),
          ...(logout ? { logout } : {}),
        },
        'cli',
        brand,
      );
      if (values.json) io.out(`${JSON.stringify(keys)}\n`);
      else {
        io.out(
          `Client created. The keys are shown once; store them now.\n  clientId:       ${keys.clientId}\n  publishableKey: ${keys.publishableKey}\n${
            keys.secretKey
              ? `  secretKey:      ${keys.secretKey}\n`
              : '  secretKey:      none (public client: PKCE S256 at the token endpoint)\n'
          }`,
        );
      }
      return 0;
    });
  },
};

const update: Command = {
  name: 'clients update',
  usage: `  service-idp clients update CLIENT_ID [--mfa-policy optional|required] [--id-token-alg RS256|ES256|EdDSA]
                             [--post-logout-redirect-uri URL ...] [--passkey-mfa yes|no] [--dpop required|optional] [--par required|optional]
                             [--third-party yes|no] [--device-grant yes|no] [--display-name NAME] [--logo FILE] [--accent '#RRGGBB'] [--terms-url URL]
                             [--privacy-url URL] [--mail-sender-name NAME]
                             [--backchannel-logout-uri URL] [--backchannel-logout-session-required yes|no]
                             [--frontchannel-logout-uri URL] [--frontchannel-logout-session-required yes|no]
                             [--sms-countries CC,CC|none|default] [--mail-domains DOMAIN,DOMAIN|any] [--json]
      optional (default): users choose whether to enroll in MFA; required: no code without it.
      --id-token-alg: how the client's ID tokens are signed (default RS256).
      --post-logout-redirect-uri: replaces the list (one empty value, "", clears it).
      --passkey-mfa: yes (default): a passkey sign-in also passes this client's MFA; no: the
      user's MFA step follows it.
      --dpop: required: every token request must carry a DPoP proof (RFC 9449); optional
      (default): a proof binds the tokens when the client sends one.
      --par: required: /authorize takes the client's requests only pushed first to
      /oauth/par (RFC 9126); optional (default): the client's choice.
      --third-party: yes: a third-party application: before its code is issued the user sees
      a consent page listing what it asks (remembered per user, revocable in the account
      center); no (default): first-party, no consent page. Not for a --machine client.
      --device-grant: yes: the client may use the device authorization grant (RFC 8628: a
      TV or CLI shows a code the user approves at /device); no (default). Not for a --machine client.
${LOGOUT_USAGE}
      --sms-countries: the ISO 3166 countries this application's SMS may go to, e.g. US,CA,GB;
      none: no SMS; default: the service's list (SERVICE_IDP_SMS_COUNTRIES).
      --mail-domains: the only mail domains its codes may go to (exact match, e.g. example.com);
      any: every domain (default). Both docs/security.md, SMS pumping and address rules.
      Branding of the hosted pages and mails (docs/operations.md, Branding): --display-name
      (else the client's name); --logo: a PNG, JPEG or WebP file of at most 128 KiB (SVG is
      refused); --accent: a colour with WCAG AA contrast in both themes; --terms-url and
      --privacy-url: https pages linked under the sign-in form; --mail-sender-name: the name
      the mails' From shows. "" clears any of them. A refused value changes nothing (exit 2).
`,
  flags: [...SETTING_FLAGS, ...SEND_RULE_FLAGS, 'json'],
  async run({ values, operands: [clientId], config }, io) {
    const { withData, operations } = await import('./open.js');
    const postLogout = values['post-logout-redirect-uri'];
    if (!clientId || ![...SETTING_FLAGS, ...SEND_RULE_FLAGS].some((flag) => values[flag] !== undefined))
      throw new UsageError(
        'usage: service-idp clients update CLIENT_ID [--mfa-policy optional|required] [--id-token-alg RS256|ES256|EdDSA] [--post-logout-redirect-uri URL ...] [--passkey-mfa yes|no] [--dpop required|optional] [--par required|optional] [--third-party yes|no] [--device-grant yes|no] [--display-name NAME] [--logo FILE] [--accent #RRGGBB] [--terms-url URL] [--privacy-url URL] [--mail-sender-name NAME] [--backchannel-logout-uri URL] [--backchannel-logout-session-required yes|no] [--frontchannel-logout-uri URL] [--frontchannel-logout-session-required yes|no] [--sms-countries CC,CC|none|default] [--mail-domains DOMAIN,DOMAIN|any]',
      );
    const brand = brandingOf(values);
    const sendRules = sendRulesOf(values);
    const logout = logoutChange(values);
    return withData(config, async (data) => {
      const ops = await operations(data);
      // First: the one change checked against the others (a front-channel URI on a redirect URI's origin).
      if (logout) {
        await ops.setAddresses(clientId, { logout }, 'cli');
        io.out(
          `Client ${clientId}: logout ${Object.entries(logout)
            .map(([name, value]) => `${name} ${value ?? 'none'}`)
            .join(', ')}.\n`,
        );
      }
      if (brand) {
        const shown = await ops.setBranding(clientId, brand, 'cli');
        if (values.json) io.out(`${JSON.stringify(shown)}\n`);
        else
          io.out(
            `Client ${clientId}: branding updated.\n${Object.entries(shown)
              .filter(([name]) => name !== 'clientId')
              .map(([name, value]) => `  ${name}: ${value ?? '-'}\n`)
              .join('')}`,
          );
      }
      if (sendRules) {
        await ops.setSendRules(clientId, sendRules, 'cli');
        if (sendRules.smsCountries !== undefined)
          io.out(
            `Client ${clientId}: SMS ${sendRules.smsCountries === null ? 'to the service-wide countries (SERVICE_IDP_SMS_COUNTRIES)' : sendRules.smsCountries.length ? `to ${sendRules.smsCountries.join(' ')}` : 'to no country'}.\n`,
          );
        if (sendRules.mailDomains !== undefined)
          io.out(
            `Client ${clientId}: codes mailed to ${sendRules.mailDomains === null ? 'any domain' : sendRules.mailDomains.join(' ')}.\n`,
          );
      }
      if (values['mfa-policy'] !== undefined) {
        await ops.setMfaPolicy(clientId, values['mfa-policy'], 'cli');
        io.out(`Client ${clientId}: MFA ${values['mfa-policy']}.\n`);
      }
      if (values['passkey-mfa'] !== undefined) {
        await ops.setPasskeyMfa(clientId, values['passkey-mfa'], 'cli');
        io.out(`Client ${clientId}: a passkey sign-in ${values['passkey-mfa'] === 'yes' ? 'also passes' : 'does not pass'} MFA.\n`);
      }
      if (values.dpop !== undefined) {
        await ops.setDpop(clientId, values.dpop, 'cli');
        io.out(`Client ${clientId}: DPoP ${values.dpop}.\n`);
      }
      if (values.par !== undefined) {
        await ops.setPushedRequests(clientId, values.par, 'cli');
        io.out(`Client ${clientId}: pushed authorization requests ${values.par}.\n`);
      }
      if (values['device-grant'] !== undefined) {
        await ops.setDeviceCodeGrant(clientId, values['device-grant'], 'cli');
        io.out(`Client ${clientId}: device authorization grant ${values['device-grant'] === 'yes' ? 'allowed' : 'not allowed'}.\n`);
      }
      if (values['third-party'] !== undefined) {
        await ops.setThirdParty(clientId, values['third-party'], 'cli');
        io.out(
          `Client ${clientId}: ${values['third-party'] === 'yes' ? 'third-party (consent page)' : 'first-party (no consent page)'}.\n`,
        );
      }
      if (values['id-token-alg'] !== undefined) {
        await ops.setIdTokenAlg(clientId, values['id-token-alg'], 'cli');
        io.out(`Client ${clientId}: ID tokens signed with ${values['id-token-alg']}.\n`);
      }
      if (postLogout) {
        const uris = postLogout.filter((uri) => uri !== '');
        await ops.setPostLogoutRedirectUris(clientId, uris, 'cli');
        io.out(`Client ${clientId}: post-logout redirect URIs ${uris.length ? uris.join(' ') : 'none'}.\n`);
      }
      return 0;
    });
  },
};

const branding: Command = {
  name: 'clients branding',
  usage: `  service-idp clients branding CLIENT_ID [--json]
      The client's branding (display name, logo URL, accent, links, mail sender name).
`,
  flags: ['json'],
  async run({ values, operands: [clientId], config }, io) {
    if (!clientId) throw new UsageError('usage: service-idp clients branding CLIENT_ID [--json]');
    const { withData, brandingService } = await import('./open.js');
    const shown = await withData(config, async (data) => (await brandingService(data)).show(clientId));
    if (values.json) io.out(`${JSON.stringify(shown)}\n`);
    else
      io.out(
        Object.entries(shown)
          .map(([name, value]) => `${name}: ${value ?? '-'}\n`)
          .join(''),
      );
    return 0;
  },
};

const delegationKeys: Command = {
  name: 'clients delegation-keys',
  usage: `  service-idp clients delegation-keys CLIENT_ID [--json] [--issuer URL] [--sp-signing-key FILE --sp-encryption-key FILE]
      Delegation keys for the client's backend: prints SERVICE_BASE_URL (the URL the service
      last started on this data folder serves, or --issuer), OAUTH_CLIENT_ID, the
      SP's Ed25519 and X25519 private keys (shown once) and the service's public keys, one line
      each. With the two files (SPKI PEM public keys made elsewhere), stores those instead.
      Running it again replaces the SP keys.
`,
  flags: ['json', 'issuer', 'sp-signing-key', 'sp-encryption-key'],
  async run({ values, operands: [clientId], config, settings }, io) {
    const issuer = servedIssuer(config.dataDir, values.issuer ?? settings.SERVICE_IDP_ISSUER);
    const { withContext } = await import('./open.js');
    return withContext(config, async (ctx) => {
      if (!clientId)
        throw new UsageError('usage: service-idp clients delegation-keys CLIENT_ID [--sp-signing-key FILE --sp-encryption-key FILE]');
      const signing = values['sp-signing-key'];
      const encryption = values['sp-encryption-key'];
      if (Boolean(signing) !== Boolean(encryption)) throw new UsageError('give both --sp-signing-key and --sp-encryption-key, or neither');
      const made = await ctx.delegation.createKeys(
        clientId,
        signing && encryption ? { verifyPem: readFileSync(signing, 'utf8'), encryptionPem: readFileSync(encryption, 'utf8') } : undefined,
      );
      await ctx.events.record({ type: 'client.updated', clientId: made.client.id, actor: 'cli', detail: { delegationKeys: 'replaced' } });
      // One line per value (base64 of the PEM), as secret stores and .env files want them.
      const line = (pem: string) => Buffer.from(pem).toString('base64');
      const env: Record<string, string> = {
        SERVICE_BASE_URL: issuer,
        OAUTH_CLIENT_ID: made.client.id,
        ...(made.sp
          ? { SP_ED25519_PRIVATE_KEY_PEM: line(made.sp.signingPrivatePem), SP_X25519_PRIVATE_KEY_PEM: line(made.sp.encryptionPrivatePem) }
          : {}),
        IDP_ED25519_PUBLIC_KEY_PEM: line(made.idp.verifyPublicPem),
        IDP_X25519_PUBLIC_KEY_PEM: line(made.idp.encryptionPublicPem),
      };
      if (values.json) io.out(`${JSON.stringify(env)}\n`);
      else {
        io.out(
          made.sp
            ? `# Delegation keys for ${made.client.name}. The SP private keys are shown once: put these lines in the SP's secret store.\n`
            : `# Delegation for ${made.client.name} uses the SP public keys given. Add these lines to the SP's configuration (its private keys stay where they are).\n`,
        );
        for (const [key, value] of Object.entries(env)) io.out(`${key}=${value}\n`);
      }
      return 0;
    });
  },
};

const list: Command = {
  name: 'clients list',
  usage:
    '  service-idp clients list [--limit 50] [--cursor CURSOR] [--json]\n      Oldest first; a full page ends with the --cursor of the next one.\n',
  flags: ['limit', 'cursor', 'json'],
  paged: true,
  async run({ values, limit, config }, io) {
    const { withData, clientService } = await import('./open.js');
    const page = await withData(config, async (data) => (await clientService(data)).page({ ...cursor(values.cursor), limit }));
    const clients = page.items;
    if (values.json)
      io.out(`${JSON.stringify({ clients, nextCursor: page.nextCursor })}\n`); // GET /admin/v1/clients's shape
    else if (clients.length === 0) io.out('No clients yet: service-idp clients create --name NAME --origin URL\n');
    else
      io.out(
        `${table(
          ['CLIENT ID', 'NAME', 'TYPE', 'MFA', 'ORIGINS', 'REDIRECT URIS', 'POST-LOGOUT URIS'],
          clients.map((c) => [
            c.id,
            c.name,
            c.type,
            c.mfaPolicy,
            c.origins.join(' '),
            c.redirectUris.join(' '),
            c.postLogoutRedirectUris.join(' '),
          ]),
        )}\n${page.nextCursor ? `More: --cursor ${page.nextCursor}\n` : ''}`,
      );
    return 0;
  },
};

const remove: Command = {
  name: 'clients delete',
  usage: `  service-idp clients delete CLIENT_ID
      Delete a client with its devices, pending sign-ins and delegation keys; its keys stop
      working at once. Users stay (they may use other clients).
`,
  flags: [],
  async run({ operands: [clientId], config }, io) {
    const { withData, operations } = await import('./open.js');
    return withData(config, async (data) => {
      if (!clientId) throw new UsageError('usage: service-idp clients delete CLIENT_ID');
      await (await operations(data)).deleteClient(clientId, 'cli');
      io.out(`Client ${clientId} deleted.\n`);
      return 0;
    });
  },
};

const rotateSecret: Command = {
  name: 'clients rotate-secret',
  usage: `  service-idp clients rotate-secret CLIENT_ID [--json]
      Give a confidential client a new secretKey, printed once. The old one stops working at
      once (no grace): put the new one in the app's backend right away. Codes and refresh
      tokens already issued are redeemed with the new one.
`,
  flags: ['json'],
  async run({ values, operands: [clientId], config }, io) {
    if (!clientId) throw new UsageError('usage: service-idp clients rotate-secret CLIENT_ID [--json]');
    const { withData, operations } = await import('./open.js');
    return withData(config, async (data) => {
      const secretKey = await (await operations(data)).rotateClientSecret(clientId, 'cli');
      // --json: POST /admin/v1/clients/{id}/secret's shape.
      if (values.json) io.out(`${JSON.stringify({ clientId, secretKey })}\n`);
      else io.out(`Client ${clientId}: new secret key, shown once; the old one no longer works.\n  secretKey: ${secretKey}\n`);
      return 0;
    });
  },
};

const registrationToken: Command = {
  name: 'clients registration-token',
  usage: `  service-idp clients registration-token [--hours N] [--json]
      An initial access token for one client to register itself at /oauth/register (RFC 7591)
      when SERVICE_IDP_CLIENT_REGISTRATION=initial-token: printed once, stored as its hash,
      spent by the one registration it allows, good for --hours (default ${INITIAL_ACCESS_TOKEN_TTL_HOURS}, at most 720).
      The client sends it as "Authorization: Bearer <token>".
`,
  flags: ['hours', 'json'],
  async run({ values, config }, io) {
    const hours = values.hours === undefined ? INITIAL_ACCESS_TOKEN_TTL_HOURS : Number(values.hours);
    if (!Number.isInteger(hours) || hours < 1 || hours > 720) throw new UsageError('--hours is a whole number from 1 to 720');
    const { withData } = await import('./open.js');
    const { issueInitialAccessToken } = await import('../client-registration/registration.js');
    return withData(config, async (data) => {
      const { token, expiresAt } = await issueInitialAccessToken(data, hours);
      const expires = new Date(expiresAt).toISOString();
      if (values.json) io.out(`${JSON.stringify({ token, expiresAt: expires })}\n`);
      else io.out(`Initial access token for one client registration, shown once; expires ${expires}.\n  token: ${token}\n`);
      if (config.clientRegistration !== 'initial-token')
        io.err(`Note: SERVICE_IDP_CLIENT_REGISTRATION is ${config.clientRegistration}; the token is used only under initial-token.\n`);
      return 0;
    });
  },
};

const grant: Command = {
  name: 'clients grant',
  usage: `  service-idp clients grant CLIENT_ID [--grant IDENTIFIER=P,P]... [--json]
      What a machine client may get with client_credentials: permissions of registered APIs,
      replacing what it had (no --grant: nothing). --grant https://api.example.com=read:notes.
      Its next token carries them; a token already issued keeps its own until it expires.
`,
  flags: ['grant', 'json'],
  async run({ values, operands: [clientId], config }, io) {
    if (!clientId) throw new UsageError('usage: service-idp clients grant CLIENT_ID [--grant IDENTIFIER=P,P]...');
    const grants = grantsOf(values.grant ?? []);
    const { withData, clientService } = await import('./open.js');
    const { apiService } = await import('./apis.js');
    return withData(config, async (data) => {
      const client = await (await clientService(data)).operated(clientId);
      if (client?.type !== 'machine') throw new UsageError(`${clientId} is not a machine client (clients create --machine)`);
      const granted = await (await apiService(data)).grantClient(clientId, grants, 'cli');
      if (values.json) io.out(`${JSON.stringify({ clientId, permissions: granted })}\n`);
      else
        io.out(
          `Client ${clientId} may now get: ${granted.length ? granted.map((g) => `${g.api}=${g.permission}`).join(' ') : 'nothing'}.\n`,
        );
      return 0;
    });
  },
};

export const clients: Command[] = [create, update, branding, delegationKeys, list, rotateSecret, remove, grant, registrationToken];
