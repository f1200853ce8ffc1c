import type { FastifyReply } from 'fastify';
import { Paths } from 'service-protocol';

/**
 * The policy of every page the service renders itself (the hosted sign-in, logout and
 * "this wasn't me" pages): our own files only, no inline script or style, never framed
 * (clickjacking), forms and calls only to this origin.
 */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
}

/**
 * A server-rendered page under PAGE_CSP (or `csp`, a widening of it that a route names), with
 * `X-Frame-Options: DENY`, never cached, styled by the hosted pages' stylesheet. `main` is HTML
 * whose text the caller has escaped.
 */
export function sendPage(reply: FastifyReply, status: number, title: string, main: string, csp = PAGE_CSP) {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', csp)
    .header('x-frame-options', 'DENY')
    .send(
      `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><link rel="stylesheet" href="${Paths.signIn}/signin.css"></head><body><main>${main}</main></body></html>\n`,
    );
}
