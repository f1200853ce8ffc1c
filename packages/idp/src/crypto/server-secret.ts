import { hkdfSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The server secret keys every HMAC and seal. Created on first start in the data folder,
 * readable by the owner only, and reused afterwards.
 */
export function loadServerSecret(dataDir: string): Buffer {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, 'server-secret');
  try {
    const secret = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64url');
    if (secret.length < 32) throw new Error(`${path} holds fewer than 32 bytes`);
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const secret = randomBytes(32);
    writeFileSync(path, `${secret.toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  }
}

/**
 * A key of its own for one purpose, derived from the server secret with HKDF (RFC 5869), as the
 * sealer's keys are: a key handed to a library (the send challenge's HMAC key) reveals nothing
 * of the secret or of the other keys. Never logged.
 */
export function deriveServerKey(serverSecret: Buffer, purpose: string): string {
  return Buffer.from(hkdfSync('sha256', serverSecret, Buffer.alloc(0), `service-idp key ${purpose}`, 32)).toString('hex');
}
