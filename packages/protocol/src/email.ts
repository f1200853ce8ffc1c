/**
 * The one address grammar of the service: the browser library, the service and the CLI
 * accept exactly the same identities, and every identity is exactly one mailbox.
 *
 * Accepted: an RFC 5321 Mailbox whose local part is a Dot-string of atext (RFC 5322 3.2.3)
 * and whose domain is dot-separated LDH labels (RFC 5890 2.3.1; each 1–63 octets, no leading or
 * trailing hyphen, the last label not all digits so that it can never be read as an IP address).
 * Local part at most 64 octets, the whole at most 254 (RFC 5321 4.5.3.1, erratum 1690).
 *
 * Refused, because a mail library or a mail server could read them as something other than
 * one mailbox: quoted local parts, comments, address literals (`[1.2.3.4]`), whitespace and
 * control characters inside the address, and `, ; < > ( ) [ ] \ " :` anywhere. Non-ASCII local
 * parts (SMTPUTF8) are refused too: not every mail server delivers them.
 *
 * Canonicalised: surrounding whitespace is trimmed; letters are lower-cased (the domain because
 * DNS is case-insensitive, the local part because the service has always treated `Ann@…` and
 * `ann@…` as one user, as nearly every mail provider does); an internationalised domain is
 * converted to its ASCII form (IDNA, `bücher.example` → `xn--bcher-kva.example`).
 * Not canonicalised: dots and `+tags` in the local part (`a.b+x@…` and `ab@…` are different
 * identities: only the domain's owner knows whether they reach one mailbox).
 */

/** The WHATWG URL class, global in browsers and Node; this package compiles without DOM types. */
declare const URL: new (input: string) => { hostname: string };

export const EMAIL_MAX_LENGTH = 254;
export const EMAIL_LOCAL_MAX_LENGTH = 64;

/** RFC 5322 atext: letters, digits and ! # $ % & ' * + - / = ? ^ _ ` { | } ~ */
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+(?:\.[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]+)*$/;
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Before IDNA: LDH, dots, and any character beyond ASCII except separators, controls and format characters. */
const RAW_DOMAIN = /^(?:[A-Za-z0-9.-]|[^\p{ASCII}\p{Cc}\p{Cf}\p{Z}\p{Cs}])+$/u;

/** The ASCII form of a domain (IDNA via the WHATWG URL host parser, present in browsers and Node), or null. */
function asciiDomain(domain: string): string | null {
  if (!RAW_DOMAIN.test(domain)) return null;
  if (/^\p{ASCII}*$/u.test(domain)) return domain.toLowerCase();
  try {
    return new URL(`http://${domain}/`).hostname;
  } catch {
    return null;
  }
}

/**
 * The canonical form of an address, or null when it is not a single mailbox under the rules
 * above. Compare and store only canonical forms.
 */
export function canonicalEmail(input: string): string | null {
  if (typeof input !== 'string') return null;
  const trimmed = input.trim();
  const at = trimmed.lastIndexOf('@');
  if (at < 1) return null;
  const local = trimmed.slice(0, at);
  if (local.length > EMAIL_LOCAL_MAX_LENGTH || !DOT_ATOM.test(local)) return null;
  const domain = asciiDomain(trimmed.slice(at + 1));
  if (domain === null) return null;
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((label) => LDH_LABEL.test(label)) || /^[0-9]+$/.test(labels.at(-1) as string)) return null;
  const email = `${local.toLowerCase()}@${domain}`;
  return email.length <= EMAIL_MAX_LENGTH ? email : null;
}

export function isValidEmail(input: string): boolean {
  return canonicalEmail(input) !== null;
}

/**
 * The canonical form of a valid address; any other input comes back trimmed and lower-cased,
 * for display only (validate with isValidEmail or canonicalEmail first).
 */
export function normalizeEmail(input: string): string {
  return canonicalEmail(input) ?? input.trim().toLowerCase();
}
