/** GET /.well-known/openid-configuration (OpenID Connect Discovery 1.0 3): every member the service publishes. */
export interface DiscoveryDocument {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint: string;
  revocation_endpoint: string;
  end_session_endpoint: string;
  /**
   * Not in OpenID Connect Discovery (no registered member names it): the service's account page
   * (`<issuer>/account`), where every user manages their own devices, activity and data. The
   * name follows `service_documentation`'s style (a URL, `_url` like `op_policy_uri`'s intent).
   */
  account_url: string;
  response_types_supported: string[];
  response_modes_supported: string[];
  prompt_values_supported: string[];
  authorization_response_iss_parameter_supported: boolean;
  request_parameter_supported: boolean;
  request_uri_parameter_supported: boolean;
  grant_types_supported: string[];
  subject_types_supported: string[];
  id_token_signing_alg_values_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  /** RFC 8414 2: the algorithms a private_key_jwt client assertion may be signed with. */
  token_endpoint_auth_signing_alg_values_supported: string[];
  revocation_endpoint_auth_methods_supported: string[];
  /** RFC 8414 2: RFC 7662 token introspection, for confidential clients (the token's client, its API's resource server). */
  introspection_endpoint: string;
  introspection_endpoint_auth_methods_supported: string[];
  code_challenge_methods_supported: string[];
  scopes_supported: string[];
  claims_supported: string[];
  acr_values_supported: string[];
  /** RFC 9449 5.1: the JWS algorithms the service accepts for DPoP proofs. */
  dpop_signing_alg_values_supported: string[];
  /** OIDC Back-Channel Logout 1.0 2.1: logout tokens are POSTed to a client's `backchannel_logout_uri`. */
  backchannel_logout_supported: boolean;
  /** Logout tokens carry `sid`, as ID tokens do. */
  backchannel_logout_session_supported: boolean;
  /** OIDC Front-Channel Logout 1.0 3: the signed-out page frames a client's `frontchannel_logout_uri`. */
  frontchannel_logout_supported: boolean;
  /** The framed URI gets `iss` and `sid`. */
  frontchannel_logout_session_supported: boolean;
  /** RFC 9126 5: where a client pushes its authorization request; `require_…` false: pushing is each client's choice or registration. */
  pushed_authorization_request_endpoint: string;
  /** RFC 8628 4: where a device starts the device authorization grant (urn:ietf:params:oauth:grant-type:device_code). */
  device_authorization_endpoint: string;
  require_pushed_authorization_requests: boolean;
  /** The languages the hosted pages and mails speak (BCP 47), chosen by `ui_locales`. */
  ui_locales_supported: string[];
  /** OIDC Core 5.5: false, the `claims` request parameter is not supported. */
  claims_parameter_supported: boolean;
  /** RFC 8414 2 / RFC 7591 3: where clients register themselves; absent unless the operator allows it (SERVICE_IDP_CLIENT_REGISTRATION). */
  registration_endpoint?: string;
  /** draft-ietf-oauth-client-id-metadata-document: client_ids may be https URLs of Client ID Metadata Documents (only when the operator turns them on). */
  client_id_metadata_document_supported?: boolean;
  /** The operator's settings (`settings set documentation-url|policy-url|terms-url`); absent when not set. */
  service_documentation?: string;
  op_policy_uri?: string;
  op_tos_uri?: string;
}

/**
 * POST /oauth/register (RFC 7591 3.2.1) and GET/PUT /oauth/register/<client_id> (RFC 7592 3):
 * what the service registered for a client that registered itself, and its registration access
 * token (shown in every answer: the service keeps only its hash, so it echoes the one presented).
 */
export interface ClientInformation {
  client_id: string;
  /** Seconds since the epoch. */
  client_id_issued_at: number;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  /** Always `none`: a registered client is public (PKCE, no secret). */
  token_endpoint_auth_method: 'none';
  registration_access_token: string;
  registration_client_uri: string;
}

/** POST /oauth/par (RFC 9126 2.2). */
export interface PushedAuthorizationResponse {
  request_uri: string;
  expires_in: number;
}

/** A published signing key (RFC 7517 4): its type's members, and kid, alg and use. */
export interface PublishedJwk {
  kty: string;
  kid: string;
  alg: string;
  use: string;
  /** RSA (RFC 7518 6.3.1). */
  n?: string;
  e?: string;
  /** EC and OKP (RFC 7518 6.2.1, RFC 8037 2). */
  crv?: string;
  x?: string;
  /** EC. */
  y?: string;
}

/** GET /.well-known/jwks.json (RFC 7517 5). */
export interface JsonWebKeySet {
  keys: PublishedJwk[];
}

/**
 * The session configuration of Device Bound Session Credentials (W3C draft): the answer of the
 * registration and refresh endpoints (POST /signin/dbsc/registration, /signin/dbsc/refresh).
 */
export interface DbscSessionConfig {
  session_identifier: string;
  refresh_url: string;
  scope: { origin: string; include_site: boolean; scope_specification: { type: string; domain: string; path: string }[] };
  credentials: { type: 'cookie'; name: string; attributes: string }[];
  allowed_refresh_initiators: string[];
}
