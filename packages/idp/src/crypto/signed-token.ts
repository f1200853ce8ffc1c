import { randomToken, type SecretHasher, safeEqual } from './secrets.js';

/** What a token shows (`visible`, in order, before the expiry) and what its MAC alone binds (`bound`). */
export interface SignedTokenFields {
  visible: string[];
  bound: string[];
}

export type SignedTokenCheck =
  | { ok: true; visible: string[]; expiresAt: number; nonce: string }
  | { ok: false; reason: 'invalid' | 'expired' };

export interface SignedTokenSpec {
  /** The MAC's purpose label (SecretHasher): a token of one purpose never checks as another's. */
  purpose: string;
  /** How many visible fields lead the token. */
  visibleFields: number;
  /** Longer tokens are refused before any work. */
  maxLength: number;
  /**
   * A MAC rule of an earlier release also accepted, for tokens issued before an upgrade that
   * outlive it (the "this wasn't me" link, devices/notice.ts). Tokens are only ever issued
   * under the current rule.
   */
  legacyMac?: (fields: SignedTokenFields, expiry: string, nonce: string) => string;
}

export interface SignedTokens {
  issue(fields: SignedTokenFields, expiresAt: number): string;
  /** The visible fields of a token of the right shape (length, field count), before any check: to look up what it binds. */
  visibleOf(token: string): string[] | undefined;
  /**
   * The token's visible fields and expiry when its MAC matches `bound` (given, or derived from
   * the visible fields) and it is still live at `now`; otherwise why not. A token that does not
   * check out is `invalid` even when its expiry has passed: only a genuine token is `expired`.
   */
  check(token: string, bound: string[] | ((visible: string[]) => string[] | undefined), now: number): SignedTokenCheck;
}

/**
 * The one signed-challenge codec (devices/challenge.ts, devices/notice.ts, webauthn/challenge.ts
 * are bindings of it). A token is `visible….expiry.nonce.mac`: the visible fields, the expiry
 * (epoch milliseconds, base 36), 16 random bytes (base64url) and a MAC: the keyed hash
 * (HMAC-SHA256 under the server secret) under the purpose label of macInput: the bound fields,
 * the visible fields, the expiry and the nonce, each prefixed with its length, so each field is
 * bound by position and no field can shift into another whatever characters it holds. Issuing one writes nothing; a
 * caller that must refuse a replay spends the token in spent-tokens/ once it is used.
 *
 * Visible fields must not contain a dot (they are split on it) and may be empty (the binding
 * decides what an empty one means); bound fields may hold anything.
 */
export function createSignedTokens(hash: SecretHasher, spec: SignedTokenSpec): SignedTokens {
  const { purpose, visibleFields, maxLength } = spec;
  const parts = visibleFields + 3;
  const mac = (fields: SignedTokenFields, expiry: string, nonce: string) => hash(purpose, macInput(fields, expiry, nonce));

  return {
    issue(fields: SignedTokenFields, expiresAt: number): string {
      if (fields.visible.length !== visibleFields || fields.visible.some((field) => field.includes('.')))
        throw new Error(`a ${purpose} token has ${visibleFields} visible fields without a dot`);
      const expiry = expiresAt.toString(36);
      const nonce = randomToken('', 16);
      return [...fields.visible, expiry, nonce, mac(fields, expiry, nonce)].join('.');
    },

    visibleOf(token: string): string[] | undefined {
      if (token.length > maxLength) return undefined;
      const split = token.split('.');
      return split.length === parts ? split.slice(0, visibleFields) : undefined;
    },

    check(token: string, bound: string[] | ((visible: string[]) => string[] | undefined), now: number): SignedTokenCheck {
      if (token.length > maxLength) return { ok: false, reason: 'invalid' };
      const split = token.split('.');
      if (split.length !== parts) return { ok: false, reason: 'invalid' };
      const visible = split.slice(0, visibleFields);
      const [expiry, nonce, given] = split.slice(visibleFields) as [string, string, string];
      if (!expiry || !nonce || !given) return { ok: false, reason: 'invalid' };
      const boundFields = typeof bound === 'function' ? bound(visible) : bound;
      if (!boundFields) return { ok: false, reason: 'invalid' };
      const fields = { visible, bound: boundFields };
      if (!safeEqual(given, mac(fields, expiry, nonce)) && !(spec.legacyMac && safeEqual(given, spec.legacyMac(fields, expiry, nonce))))
        return { ok: false, reason: 'invalid' };
      const expiresAt = Number.parseInt(expiry, 36);
      if (!Number.isSafeInteger(expiresAt) || expiresAt <= now) return { ok: false, reason: 'expired' };
      return { ok: true, visible, expiresAt, nonce };
    },
  };
}

/**
 * `<bound count>:<visible count>` then `|<length>:<field>` for each bound field, each visible
 * field, the expiry and the nonce: one string per field list, and no two lists give the same
 * one. (String concatenation: a JSON encoding cost a microsecond on every login.)
 */
function macInput(fields: SignedTokenFields, expiry: string, nonce: string): string {
  let input = `${fields.bound.length}:${fields.visible.length}`;
  for (const field of fields.bound) input += `|${field.length}:${field}`;
  for (const field of fields.visible) input += `|${field.length}:${field}`;
  return `${input}|${expiry.length}:${expiry}|${nonce.length}:${nonce}`;
}
