/**
 * The name (`operationId`) and one-line `summary` of every documented operation, keyed by
 * `METHOD path` as the route is registered (Fastify's `:param` syntax). Client generators
 * name their functions after the operationId, so a name, once published, does not change.
 * http/openapi.ts puts them on the routes; test/http/openapi.test.ts checks that every
 * documented operation has one.
 */
export const OPERATIONS: Readonly<Record<string, readonly [operationId: string, summary: string]>> = {
  // Browser API (/v1), called by service-web with the publishable key.
  'GET /v1/client': ['getClient', 'The client app the publishable key names'],
  'POST /v1/device-challenges': ['createDeviceChallenge', 'A nonce for a trusted device to sign'],
  'POST /v1/authenticate': ['authenticate', 'Start a sign-in: a trusted device, or a one-time code by email or SMS'],
  'POST /v1/email-otp/verify': ['verifyEmailOtp', 'Verify a one-time code'],
  'POST /v1/devices': ['registerDevice', 'Register this device as trusted'],
  'POST /v1/devices/list': ['listDevices', "List the user's trusted devices"],
  'POST /v1/devices/rename': ['renameDevice', 'Rename a trusted device'],
  'POST /v1/devices/revoke': ['revokeDevice', 'Revoke a trusted device'],
  'POST /v1/devices/revoke-others': ['revokeOtherDevices', 'Revoke every trusted device but this one'],
  'POST /v1/mfa/initiate': ['initiateMfa', 'Start the second-factor step of a sign-in'],
  'POST /v1/mfa/verify': ['verifyMfa', 'Answer the second-factor step of a sign-in'],
  'POST /v1/passkeys/registration/options': ['getPasskeyRegistrationOptions', 'Creation options for a new passkey'],
  'POST /v1/passkeys/registration': ['registerPasskey', 'Register a passkey'],
  'POST /v1/passkeys/authentication/options': ['getPasskeyAuthenticationOptions', 'Request options for a passkey sign-in'],
  'POST /v1/passkeys/authentication': ['authenticateWithPasskey', 'Sign in with a passkey'],
  'POST /v1/passkeys/mfa/enrollment/options': ['getPasskeyMfaEnrollmentOptions', 'Creation options for a passkey as second factor'],
  'POST /v1/passkeys/mfa/enrollment': ['enrollPasskeyMfa', 'Enroll a passkey as second factor'],
  'POST /v1/passkeys/mfa/options': ['getPasskeyMfaOptions', 'Request options for a passkey second factor'],
  'POST /v1/passkeys/mfa/verify': ['verifyPasskeyMfa', 'Answer the second-factor step with a passkey'],
  'GET /v1/upstream/connections': ['listUpstreamConnections', 'The upstream providers this app shows as buttons'],
  'POST /v1/upstream/link': ['confirmUpstreamLink', 'Prove the existing account with its emailed code, and link the upstream identity'],
  'POST /v1/delegation': ['delegate', 'Run an operation for a user from a backend (sealed request and answer)'],
  // Admin API (/admin/v1), with an admin key.
  'GET /admin/v1/webhooks': ['listWebhooks', 'List webhook endpoints'],
  'POST /admin/v1/webhooks': ['createWebhook', 'Add a webhook endpoint'],
  'DELETE /admin/v1/webhooks/:id': ['deleteWebhook', 'Remove a webhook endpoint'],
  'POST /admin/v1/webhooks/:id/enable': ['enableWebhook', 'Enable a webhook endpoint'],
  'POST /admin/v1/webhooks/:id/disable': ['disableWebhook', 'Disable a webhook endpoint'],
  'GET /admin/v1/webhooks/:id/deliveries': ['listWebhookDeliveries', "An endpoint's deliveries: state, attempts, last error, next attempt"],
  'POST /admin/v1/webhook-deliveries/:id/retry': ['retryWebhookDelivery', 'Attempt a delivery that failed or was given up again now'],
  'GET /admin/v1/users': ['listUsers', 'List users, or find one by email'],
  'GET /admin/v1/users/:id': ['getUser', 'Get a user'],
  'DELETE /admin/v1/users/:id': ['deleteUser', 'Delete a user and everything of theirs'],
  'POST /admin/v1/users/:id/disable': ['disableUser', 'Disable a user'],
  'POST /admin/v1/users/:id/enable': ['enableUser', 'Enable a user'],
  'POST /admin/v1/users/:id/recovery-codes': ['createRecoveryCodes', "Issue a new set of a user's recovery codes"],
  'POST /admin/v1/users/:id/mfa/reset': ['resetUserMfa', "Remove a user's second factor and recovery codes (the user is mailed)"],
  'GET /admin/v1/users/:id/export': ['exportUser', 'Export everything stored about a user'],
  'GET /admin/v1/users/:id/devices': ['listUserDevices', "List a user's trusted devices"],
  'POST /admin/v1/devices/:id/revoke': ['revokeUserDevice', 'Revoke a trusted device'],
  'GET /admin/v1/events': ['listEvents', 'List audit events'],
  'GET /admin/v1/clients': ['listClients', 'List client apps'],
  'POST /admin/v1/clients': ['createClient', 'Register a client app'],
  'PATCH /admin/v1/clients/:id': ['updateClient', 'Change a client app'],
  'DELETE /admin/v1/clients/:id': ['deleteClient', 'Remove a client app'],
  'GET /admin/v1/clients/:id/branding': ['getClientBranding', "A client app's branding (name, logo, colour, links, mail sender)"],
  'PATCH /admin/v1/clients/:id/branding': ['updateClientBranding', "Change a client app's branding"],
  'GET /admin/v1/settings': ['getSettings', "The service's settings (product name)"],
  'PATCH /admin/v1/settings': ['updateSettings', "Change the service's settings"],
  'POST /admin/v1/signing-keys/rotate': ['rotateSigningKeys', 'Rotate the token signing keys'],
  'GET /admin/v1/admin-keys': ['listAdminKeys', 'List admin keys'],
  'POST /admin/v1/admin-keys': ['createAdminKey', 'Create an admin key (shown once)'],
  'POST /admin/v1/admin-keys/:id/revoke': ['revokeAdminKey', 'Revoke an admin key'],
  'GET /admin/v1/operators': ['listOperators', 'List the operators of the console'],
  'POST /admin/v1/operators': ['addOperator', "Add an operator, or change an operator's role"],
  'DELETE /admin/v1/operators/:id': ['removeOperator', 'Remove an operator (their console sessions end)'],
  'GET /admin/v1/signing-keys': ['listSigningKeys', 'List the published token signing keys'],
  'GET /admin/v1/dashboard': ['getDashboard', 'Sign-ins, failures, new devices, code sends and the webhook backlog'],
  // The operator console (/admin), with its session cookie.
  'GET /admin': ['getConsole', 'The operator console (or a redirect to its sign-in)'],
  'GET /admin/console.js': ['getConsoleScript', "The operator console's script"],
  'GET /admin/console.css': ['getConsoleStyles', "The operator console's styles"],
  'GET /admin/signin': ['startConsoleSignIn', 'Start an operator sign-in through the hosted sign-in'],
  'GET /admin/callback': ['finishConsoleSignIn', 'The hosted sign-in returns the operator here'],
  'GET /admin/session': ['getConsoleSession', 'The signed-in operator and the per-session token'],
  'POST /admin/signout': ['endConsoleSession', 'Sign the operator out of the console'],
  'GET /admin/v1/connections': ['listConnections', 'List connections to upstream identity providers'],
  'POST /admin/v1/connections': ['createConnection', 'Add a connection to an upstream identity provider'],
  'PATCH /admin/v1/connections/:id': ['updateConnection', 'Change a connection'],
  'DELETE /admin/v1/connections/:id': ['deleteConnection', 'Remove a connection'],
  'GET /admin/v1/users/:id/identities': ['listUserIdentities', "List a user's linked upstream identities"],
  'POST /admin/v1/users/:id/identities/unlink': ['unlinkUserIdentity', "Unlink one of a user's upstream identities"],
  // "Not me" links in new-device notices.
  'GET /devices/not-me': ['showDeviceNotice', 'The page of a new-device notice link'],
  'POST /devices/not-me': ['revokeNoticedDevice', 'Revoke the device a notice named'],
  // OAuth 2.0 / OpenID Connect.
  'GET /authorize': ['authorize', 'Authorization endpoint'],
  'POST /authorize': ['authorizeWithForm', 'Authorization endpoint (form post)'],
  'GET /signin': ['getSignInPage', 'The hosted sign-in page'],
  'GET /signin/signin.js': ['getSignInScript', "The hosted sign-in page's script"],
  'GET /signin/qr.js': ['getQrScript', "The hosted sign-in page's QR code module"],
  'GET /signin/signin.css': ['getSignInStyles', "The hosted sign-in page's styles"],
  'POST /signin/complete': ['completeSignIn', 'Finish a hosted sign-in'],
  'POST /signin/dbsc/registration': ['registerBoundSession', 'Bind the service session to a browser key (W3C DBSC)'],
  'POST /signin/dbsc/refresh': ['refreshBoundSession', "Renew a bound session's short-lived cookie with a proof of its key (W3C DBSC)"],
  'POST /signin/continue': ['continueSignIn', 'Finish a hosted sign-in held for a passkey offer'],
  'POST /signin/passkey/options': ['getSignInPasskeyOptions', 'Creation options for a passkey offered after sign-in'],
  'POST /signin/passkey': ['addSignInPasskey', 'Add the passkey offered after sign-in'],
  'POST /locale': ['setLocale', "Choose the hosted pages' and mails' language (the switcher's form)"],
  'GET /upstream/start': ['startUpstreamSignIn', 'Start a sign-in with an upstream provider (a navigation)'],
  'GET /upstream/callback': ['upstreamCallback', "The upstream provider's answer"],
  'POST /upstream/callback': ['upstreamFormPostCallback', "The upstream provider's answer (form_post)"],
  'GET /logout': ['logout', 'End the session (RP-Initiated Logout)'],
  'POST /logout': ['confirmLogout', 'End the session (confirmation form post)'],
  'POST /oauth/token': ['token', 'Token endpoint'],
  'POST /oauth/revoke': ['revokeToken', 'Revoke a token (RFC 7009)'],
  'GET /oauth/userinfo': ['getUserInfo', 'UserInfo endpoint'],
  'GET /.well-known/jwks.json': ['getJwks', 'The public signing keys (JWKS)'],
  'GET /.well-known/openid-configuration': ['getOpenIdConfiguration', 'OpenID Provider metadata'],
  // Branding assets (content-addressed, cached for a year).
  'GET /branding/logos/:file': ['getLogo', "An application's logo"],
  'GET /branding/accent/:file': ['getAccentStyles', "The stylesheet of an application's accent colour"],
  // The browser SDK, and the probes.
  'GET /sdk/v1/service-web.js': ['getSdkScript', 'The service-web script'],
  'GET /sdk/v1/service-web.global.js.map': ['getSdkSourceMap', "The service-web script's source map"],
  'GET /healthz': ['getHealth', 'Liveness probe'],
  'GET /readyz': ['getReadiness', 'Readiness probe: the database answers'],
};

/**
 * The credentials of the operations outside /v1's browser routes and the admin API (those two
 * say theirs where they are registered: http/browser-client.ts, admin/routes.ts). `{}` in a
 * list: the credential may be left out. Every other operation takes none (`security: []`).
 */
export const CREDENTIALS: Readonly<Record<string, readonly Record<string, string[]>[]>> = {
  // client_secret_basic; client_secret_post and public clients (`none`) authenticate in the form.
  'POST /oauth/token': [{ clientSecretBasic: [] }, {}],
  'POST /oauth/revoke': [{ clientSecretBasic: [] }, {}],
  'GET /oauth/userinfo': [{ accessToken: [] }],
  // Optional: the envelope's signature already authenticates the caller (docs/delegation.md).
  'POST /v1/delegation': [{ secretKey: [] }, {}],
  'GET /admin': [{ consoleSession: [] }, {}],
  'GET /admin/session': [{ consoleSession: [] }],
  'POST /admin/signout': [{ consoleSession: [] }],
};
