/**
 * Part of Database (../schema.ts, which lists the exceptions to one owner per table): signing
 * keys, throttling, delegation keys, events, admin keys, webhooks, branding and the development outboxes.
 * Each table's owner is named beside it.
 */
export interface OperationTables {
  /** keys/ */
  signing_keys: {
    kid: string;
    alg: string;
    public_jwk: string;
    private_jwk_sealed: string;
    created_at: number;
    retired_at: number | null;
  };
  /** throttle/ */
  rate_counters: {
    key: string;
    window_start: number;
    count: number;
    expires_at: number;
  };
  /** delegation/: the service's own Ed25519 and X25519 key pairs (one row, id 'idp') */
  delegation_idp_keys: {
    id: string;
    signing_private_sealed: string;
    signing_public_pem: string;
    encryption_private_sealed: string;
    encryption_public_pem: string;
    created_at: number;
  };
  /** delegation/: each service provider's public keys */
  delegation_sp_keys: {
    client_id: string;
    verify_public_pem: string;
    encryption_public_pem: string;
    created_at: number;
  };
  /** events/: the append-only audit trail; never a secret or a code */
  events: {
    id: string;
    type: string;
    at: number;
    user_id: string | null;
    client_id: string | null;
    device_id: string | null;
    ip: string | null;
    user_agent: string | null;
    /** Who acted when not the user: 'cli', or an admin key's id. */
    actor: string | null;
    /** JSON object of non-secret facts (a reason code, a count). */
    detail: string | null;
  };
  /** admin/: keys of the admin API, stored as keyed hashes */
  admin_keys: {
    id: string;
    name: string;
    key_hash: string;
    created_at: number;
    last_used_at: number | null;
    revoked_at: number | null;
  };
  /** admin/: who may enter the operator console, by address */
  operators: {
    id: string;
    email: string;
    /** 'viewer' or 'admin'. */
    role: string;
    created_at: number;
    /** 'cli', an admin key's id, or `operator:<email>`. */
    added_by: string;
  };
  /** console/: the operator console's sessions, stored as keyed hashes of the cookie */
  console_sessions: {
    id: string;
    operator_id: string;
    user_id: string;
    /** What signed in (a remembered browser or a passkey): revoking it ends the session. */
    device_id: string;
    created_at: number;
    last_used_at: number;
    expires_at: number;
    ended_at: number | null;
  };
  /** webhooks/: endpoints operators registered for event webhooks */
  webhook_endpoints: {
    id: string;
    url: string;
    /** 'all', or event types separated by commas. */
    event_types: string;
    /** The Standard Webhooks signing secret (whsec_…), sealed under the server secret (crypto/seal.ts). */
    secret_sealed: string;
    created_at: number;
    disabled_at: number | null;
    /** Why it is disabled: 'operator', or 'failing' when the service gave up on it. */
    disabled_reason: string | null;
    /** Failed attempts since the last 2xx. */
    failure_count: number;
    /** The first failure since the last 2xx; null while healthy. */
    failing_since: number | null;
    last_error: string | null;
    last_error_at: number | null;
    last_delivered_at: number | null;
  };
  /** webhooks/: the outbox, one row per (event, subscribed endpoint), written with the event */
  webhook_deliveries: {
    /** The message id sent as webhook-id, the same for every attempt. */
    id: string;
    endpoint_id: string;
    event_id: string;
    /** The event's user: deliveries of one user go to an endpoint in event order. */
    user_id: string | null;
    /** The JSON body sent: {type, timestamp, data}, fixed when the event was recorded. */
    payload: string;
    created_at: number;
    attempts: number;
    next_attempt_at: number;
    /** A node's claim: no other node takes the row before this time. */
    lease_until: number;
    lease_owner: string | null;
    /** Delivered (2xx) or given up; swept afterwards. */
    done_at: number | null;
    delivered: number;
    last_error: string | null;
    /**
     * 'webhook' (endpoint_id a webhook endpoint, payload the message), or 'backchannel_logout'
     * (oidc/backchannel-logout.ts: endpoint_id a client id, payload the logout token's `sub`
     * and `sid`; the token is signed at each attempt, with a fresh jti and a short life).
     */
    kind: string;
  };
  /** sms/: the development SMS outbox */
  sms_outbox: {
    id: string;
    recipient: string;
    body: string;
    created_at: number;
  };
  /** mail/: the development mailbox */
  mailbox: {
    id: string;
    recipient: string;
    subject: string;
    text_body: string;
    html_body: string;
    created_at: number;
  };
  /** branding/: the service's own settings (the product name), by name */
  settings: {
    name: string;
    value: string;
    updated_at: number;
  };
  /** branding/: an application's branding (deleted with its client, clients/store.ts); null: not set */
  client_branding: {
    client_id: string;
    display_name: string | null;
    /** #rrggbb, checked for contrast when set (branding/validate.ts). */
    accent: string | null;
    terms_url: string | null;
    privacy_url: string | null;
    mail_sender_name: string | null;
    /** The logo's bytes, base64; its type read from them (PNG, JPEG or WebP) and its SHA-256 (hex), the URL it is served at. */
    logo_base64: string | null;
    logo_type: string | null;
    logo_sha256: string | null;
    updated_at: number;
  };
}
