/**
 * A software WebAuthn authenticator for the server-side tests: it builds attestations (format
 * `none`) and assertions byte by byte as WebAuthn L3 6.1 and 6.5 lay them out, so a test can
 * also build the ones a real authenticator never would: a counter that went back (a clone), no
 * user verification, another relying party's id, a replay. ES256 keys (node:crypto), CBOR by hand
 * (the few shapes WebAuthn needs: RFC 8949 major types 0, 1, 2, 3 and 5).
 */
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

type Cbor = number | string | Uint8Array | Map<Cbor, Cbor>;

function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 256) return Buffer.from([(major << 5) | 24, length]);
  const b = Buffer.alloc(3);
  b[0] = (major << 5) | 25;
  b.writeUInt16BE(length, 1);
  return b;
}

export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();
const b64 = (data: Uint8Array) => Buffer.from(data).toString('base64url');

export const FLAGS = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 } as const;

export interface SoftCredential {
  id: Buffer;
  privateKey: KeyObject;
  publicKey: KeyObject;
  userHandle: string;
  counter: number;
}

export interface CeremonyOptions {
  origin: string;
  /** Defaults to the options' rp id. */
  rpId?: string;
  /** User verification done (UV flag); default true. */
  uv?: boolean;
  /** Backup eligible and backed up (a synced passkey); default false. */
  synced?: boolean;
  /** Overrides the counter sent (and leaves the credential's own as it was). */
  counter?: number;
}

function authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
  const count = Buffer.alloc(4);
  count.writeUInt32BE(counter >>> 0);
  return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
}

function flagsOf(options: CeremonyOptions, extra = 0): number {
  return FLAGS.UP | (options.uv === false ? 0 : FLAGS.UV) | (options.synced ? FLAGS.BE | FLAGS.BS : 0) | extra;
}

function coseKey(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' });
  return cbor(
    new Map<Cbor, Cbor>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x as string, 'base64url')],
      [-3, Buffer.from(jwk.y as string, 'base64url')],
    ]),
  );
}

/** navigator.credentials.create() for the creation options the service sent; returns the credential and the attestation JSON. */
export function createCredential(options: any, ceremony: CeremonyOptions): { credential: SoftCredential; json: any } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const id = randomBytes(32);
  const credential: SoftCredential = { id, privateKey, publicKey, userHandle: options.user.id, counter: 0 };
  const clientData = Buffer.from(
    JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin: ceremony.origin, crossOrigin: false }),
  );
  const idLength = Buffer.alloc(2);
  idLength.writeUInt16BE(id.length);
  const attested = Buffer.concat([Buffer.alloc(16), idLength, id, coseKey(publicKey)]);
  const data = authData(ceremony.rpId ?? options.rp.id, flagsOf(ceremony, FLAGS.AT), ceremony.counter ?? 0, attested);
  const attestationObject = cbor(
    new Map<Cbor, Cbor>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', data],
    ]),
  );
  return {
    credential,
    json: {
      id: b64(id),
      rawId: b64(id),
      type: 'public-key',
      response: { clientDataJSON: b64(clientData), attestationObject: b64(attestationObject), transports: ['internal'] },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    },
  };
}

/** navigator.credentials.get() for the request options the service sent; the counter goes up by one unless overridden. */
export function getAssertion(options: any, credential: SoftCredential, ceremony: CeremonyOptions): any {
  const counter = ceremony.counter ?? credential.counter + 1;
  if (ceremony.counter === undefined) credential.counter = counter;
  const clientData = Buffer.from(
    JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin: ceremony.origin, crossOrigin: false }),
  );
  const data = authData(ceremony.rpId ?? options.rpId, flagsOf(ceremony), counter);
  const signature = sign('sha256', Buffer.concat([data, sha256(clientData)]), credential.privateKey);
  return {
    id: b64(credential.id),
    rawId: b64(credential.id),
    type: 'public-key',
    response: {
      clientDataJSON: b64(clientData),
      authenticatorData: b64(data),
      signature: b64(signature),
      userHandle: credential.userHandle,
    },
    authenticatorAttachment: 'platform',
    clientExtensionResults: {},
  };
}

/** How a ceremony reaches the service: a POST of a JSON body (as the app, or as the hosted page), its status and body. */
export type CeremonyPost = (path: string, body: Record<string, unknown>) => Promise<{ status: number; body: any }>;

/**
 * A registration ceremony: creation options from `optionsPath` (200 expected), a new credential
 * for them, its attestation posted to `path` with `body`. The answer is the caller's to check.
 */
export async function createPasskey(
  post: CeremonyPost,
  ask: { path: string; body: Record<string, unknown> },
  send: { path: string; body: Record<string, unknown> },
  ceremony: CeremonyOptions,
) {
  const asked = await post(ask.path, ask.body);
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  const { credential, json } = createCredential(asked.body.options, ceremony);
  const answer = await post(send.path, { ...send.body, credential: json });
  return { ...answer, credential, json, options: asked.body.options };
}

/**
 * An authentication ceremony: request options from `optionsPath` (200 expected), the assertion
 * for them, posted to `path` with `body`. The answer is the caller's to check.
 */
export async function usePasskey(
  post: CeremonyPost,
  ask: { path: string; body: Record<string, unknown> },
  send: { path: string; body: Record<string, unknown> },
  credential: SoftCredential,
  ceremony: CeremonyOptions,
) {
  const asked = await post(ask.path, ask.body);
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  const assertion = getAssertion(asked.body.options, credential, ceremony);
  const answer = await post(send.path, { credential: assertion, ...send.body });
  return { ...answer, assertion, options: asked.body.options };
}
