/**
 * What the relying-party recipes (authjs-app.ts, passport-app.ts) share besides http.ts: their
 * page, its style sheet and CSP, reading one cookie, and the redirect of a visitor who typed
 * another name for the app's host to the registered one.
 */
import type { NextFunction, Request, Response } from 'express';
import { escapeHtml, securityHeaders } from './http.ts';

/**
 * The pages' CSP. `form-action` names the service too: the sign-in and sign-out buttons are forms
 * whose answers redirect there, and Chromium holds a form's redirects to `form-action`.
 */
export const csp = (issuer: string) =>
  `default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self' ${new URL(issuer).origin}; base-uri 'none'; frame-ancestors 'none'`;

export const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f5f7;color:#1d1d1f}
main{max-width:34rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:.5rem}
button,a.button{display:inline-block;text-decoration:none;font:inherit;padding:.5rem 1rem;background:#0a64d8;color:#fff;border:0;border-radius:.3rem;cursor:pointer}
form{display:inline}:focus-visible{outline:3px solid #0a64d8;outline-offset:2px}`;

/** A whole HTML page titled `title · app`. */
export const page = (app: string, title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · ${escapeHtml(app)}</title><link rel="stylesheet" href="/style.css"></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>\n`;

/** A POST form with hidden fields and one button. */
export const postButton = (action: string, label: string, fields: Record<string, string> = {}) =>
  `<form method="post" action="${escapeHtml(action)}">${Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('')}<button>${escapeHtml(label)}</button></form>`;

/** The value of the cookie `name` on the request, if any. */
export function readCookie(request: Request, name: string): string | undefined {
  for (const pair of (request.headers.cookie ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return decodeURIComponent(pair.slice(at + 1).trim());
  }
  return undefined;
}

/**
 * The security headers, the style sheet, and one host: the libraries' cookies (state, PKCE
 * verifier, session) are set on the host the user opened and read back on the callback's.
 */
export function frontMiddleware(publicOrigin: string, issuer: string) {
  const host = new URL(publicOrigin).host;
  return (request: Request, response: Response, next: NextFunction) => {
    response.set(securityHeaders(csp(issuer)));
    if (request.path === '/style.css') {
      response.set('cache-control', 'no-cache').type('text/css').send(STYLE);
      return;
    }
    if (request.headers.host !== host) {
      response.redirect(302, `${publicOrigin}${request.originalUrl}`);
      return;
    }
    next();
  };
}
