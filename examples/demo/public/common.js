// Shared by both pages: DOM helpers, messages, and calls to the demo backend.
(() => {
  const $ = (selector) => document.querySelector(selector);

  /** Shows a message in the page's alert region; kind is 'error', 'info' or 'success'. */
  function say(text, kind = 'error') {
    const box = $('#message');
    if (!text) {
      box.hidden = true;
      box.textContent = '';
      return;
    }
    box.hidden = false;
    box.className = `message ${kind}`;
    box.textContent = text;
  }

  /** POSTs JSON to the demo backend; resolves to { ok, status, body }. Never rejects. */
  async function post(path, body) {
    try {
      const response = await fetch(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body ?? {}),
        credentials: 'same-origin',
      });
      const data = await response.json().catch(() => ({}));
      return { ok: response.ok, status: response.status, body: data };
    } catch {
      return { ok: false, status: 0, body: { message: 'The demo server could not be reached.' } };
    }
  }

  async function get(path) {
    try {
      const response = await fetch(path, { credentials: 'same-origin' });
      const data = await response.json().catch(() => ({}));
      return { ok: response.ok, status: response.status, body: data };
    } catch {
      return { ok: false, status: 0, body: { message: 'The demo server could not be reached.' } };
    }
  }

  /** Disables a form's controls while a request runs. */
  async function busy(form, work) {
    const controls = form ? [...form.querySelectorAll('button, input, select')] : [];
    for (const c of controls) c.disabled = true;
    form?.setAttribute('aria-busy', 'true');
    try {
      return await work();
    } finally {
      for (const c of controls) c.disabled = false;
      form?.removeAttribute('aria-busy');
    }
  }

  const METHOD_NAMES = { none: 'None', email: 'Email code', sms: 'Text message (SMS)', totp: 'Authenticator app' };

  window.Demo = { $, say, post, get, busy, METHOD_NAMES };
})();
