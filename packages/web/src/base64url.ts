/** Base64url without padding (RFC 7515 Section 2), the encoding of JWS parts and PKCE values. */
export function base64url(bytes: Uint8Array): string {
  // Spread: the inputs are a few hundred bytes at most (keys, signatures, a JWS header or payload).
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

export function base64urlJson(value: unknown): string {
  return base64url(utf8(JSON.stringify(value)));
}

/** UTF-8 bytes of `text`. */
export const utf8 = (text: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(text);
