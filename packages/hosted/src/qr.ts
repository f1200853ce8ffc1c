/**
 * The TOTP enrollment's QR code, drawn as an SVG from the matrix of `uqr` (served by the service
 * at /signin/qr.js, loaded only now): no third-party request, no inline markup, and the TOTP key
 * never leaves the browser again. Without it the link and the key still work.
 */

/** What the page uses of uqr's ES module (its `encode`). */
interface Uqr {
  encode(text: string, options: { ecc: 'M'; border: number }): { data: boolean[][]; size: number };
}

const SVG_NS = 'http://www.w3.org/2000/svg';

function svgElement(name: string, attributes: Record<string, string | number>): SVGElement {
  const element = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  return element;
}

/** Draws `uri` (an otpauth URI) into `box`; hides the box when the encoder cannot load. */
export async function showQr(box: HTMLElement, uri: string): Promise<void> {
  box.replaceChildren();
  try {
    // External to the bundle (package.json's build): the browser loads it from the service. The
    // cast keeps TypeScript from resolving the path; esbuild still sees the literal.
    const { encode } = (await import('/signin/qr.js' as string)) as Uqr;
    const { data, size } = encode(uri, { ecc: 'M', border: 2 });
    const svg = svgElement('svg', {
      viewBox: `0 0 ${size} ${size}`,
      role: 'img',
      'aria-label': 'QR code of the account, for your authenticator app',
      'shape-rendering': 'crispEdges',
    });
    let modules = '';
    data.forEach((row, y) => {
      row.forEach((dark, x) => {
        if (dark) modules += `M${x} ${y}h1v1h-1z`;
      });
    });
    svg.append(svgElement('rect', { width: size, height: size, fill: '#fff' }), svgElement('path', { d: modules, fill: '#000' }));
    box.append(svg);
    box.hidden = false;
  } catch {
    box.hidden = true;
  }
}
