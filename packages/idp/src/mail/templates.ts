import { OTP_TTL_SECONDS } from '../defaults.js';
import type { OutgoingMail } from './mailer.js';

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/** The email that carries a device-verification OTP. */
export function otpMail(to: string, otp: string, clientName: string): OutgoingMail {
  const minutes = OTP_TTL_SECONDS / 60;
  // The code stays out of the subject: mail servers log subjects and phones show them on lock screens.
  const subject = `Your ${clientName} sign-in code`;
  const text = [
    `Your sign-in code for ${clientName} is: ${otp}`,
    '',
    `It expires in ${minutes} minutes and works once.`,
    'If you did not try to sign in, you can ignore this email: nobody can sign in without this code.',
  ].join('\n');
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif">
<p>Your sign-in code for <strong>${escapeHtml(clientName)}</strong> is:</p>
<p style="font-size:28px;letter-spacing:6px;font-weight:bold">${otp}</p>
<p>It expires in ${minutes} minutes and works once.</p>
<p style="color:#666">If you did not try to sign in, you can ignore this email: nobody can sign in without this code.</p>
</body></html>`;
  return { to, subject, text, html };
}

/** The email that carries an MFA code (email as second factor). */
export function mfaMail(to: string, code: string, clientName: string): OutgoingMail {
  const minutes = OTP_TTL_SECONDS / 60;
  const subject = `Your ${clientName} verification code`;
  const text = [
    `Your verification code for ${clientName} is: ${code}`,
    '',
    `It expires in ${minutes} minutes and works once.`,
    'Someone who knows how you sign in is asking for it: if it was not you, do not share it and consider changing your MFA method.',
  ].join('\n');
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif">
<p>Your verification code for <strong>${escapeHtml(clientName)}</strong> is:</p>
<p style="font-size:28px;letter-spacing:6px;font-weight:bold">${code}</p>
<p>It expires in ${minutes} minutes and works once.</p>
<p style="color:#666">If it was not you, do not share it and consider changing your MFA method.</p>
</body></html>`;
  return { to, subject, text, html };
}
