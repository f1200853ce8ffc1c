import { hkdfSync, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The server secret keys every HMAC and seal. Created on first start in the data folder,
 * readable by the owner only, and reused afterwards.
 *
 * Two processes may start on a fresh folder at once (two nodes, a CLI command beside the
 * service): each writes its candidate whole to a file of its own, then links it to the one name.
 * A link is atomic and refused when the name exists, so exactly one candidate wins and the
 * other reads it; nobody ever reads a file still being written.
 */
export function loadServerSecret(dataDir: string): Buffer {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, 'server-secret');
  const existing = readSecret(path);
  if (existing) return existing;
  const secret = randomBytes(32);
  const candidate = `${path}.${process.pid}.${randomBytes(6).toString('hex')}`;
  writeFileSync(candidate, `${secret.toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(candidate, path);
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const winner = readSecret(path);
    if (!winner) throw error;
    return winner;
  } finally {
    unlinkSync(candidate);
  }
}

/** The secret in `path`; undefined when there is no such file. */
function readSecret(path: string): Buffer | undefined {
  try {
    const secret = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64url');
    if (secret.length < 32) throw new Error(`${path} holds fewer than 32 bytes`);
    return secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
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
