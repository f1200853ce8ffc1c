import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Authenticated encryption of small secrets at rest (private signing keys, later TOTP
 * secrets): AES-256-GCM under a key derived from the server secret with HKDF (RFC 5869),
 * one derived key per purpose. Output: base64url(iv || tag || ciphertext).
 */
export interface Sealer {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

export function createSealer(serverSecret: Buffer, purpose: string): Sealer {
  const key = Buffer.from(hkdfSync('sha256', serverSecret, Buffer.alloc(0), `service-idp seal ${purpose}`, 32));
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    open(sealed) {
      const raw = Buffer.from(sealed, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}
