// The signed-in page: our backend's session, the claims it verified, and the MFA change
// through the backend's ServiceDelegationClient.
(() => {
  const { $, say, post, get, busy, METHOD_NAMES } = window.Demo;
  const page = $('#account');

  const LABELS = {
    sub: 'Subject (sub)',
    email: 'Email',
    email_verified: 'Email verified',
    iss: 'Issuer (iss)',
    aud: 'Audience (aud)',
    iat: 'Issued at',
    exp: 'Expires',
    amr: 'Methods used (amr)',
  };

  function renderClaims(claims) {
    const list = $('#claims');
    list.textContent = '';
    const keys = [
      ...Object.keys(LABELS).filter((k) => k in claims),
      ...Object.keys(claims)
        .filter((k) => !(k in LABELS))
        .sort(),
    ];
    for (const key of keys) {
      const dt = document.createElement('dt');
      dt.textContent = LABELS[key] ?? key;
      const dd = document.createElement('dd');
      dd.dataset.claim = key;
      let value = claims[key];
      if ((key === 'iat' || key === 'exp' || key === 'auth_time') && typeof value === 'number') {
        value = `${new Date(value * 1000).toLocaleString()} (${value})`;
      } else if (Array.isArray(value)) value = value.join(', ');
      else if (typeof value === 'object') value = JSON.stringify(value);
      dd.textContent = String(value);
      list.append(dt, dd);
    }
  }

  async function loadMethod() {
    const r = await get('/api/mfa');
    const el = $('#mfa-method');
    if (!r.ok) {
      el.textContent = 'unknown';
      el.dataset.method = '';
      say(r.body.message || 'Could not read your MFA method.');
      return;
    }
    el.dataset.method = r.body.mfa_method ?? 'none';
    el.textContent = METHOD_NAMES[r.body.mfa_method] ?? 'None';
  }

  async function load() {
    const me = await get('/api/me');
    if (!me.ok) {
      location.assign('/');
      return;
    }
    $('#who').textContent = me.body.email;
    renderClaims(me.body.claims);
    await loadMethod();
    page.dataset.state = 'ready';
  }

  const chosen = () => $('#change-form').querySelector('input[name=method]:checked')?.value;
  $('#change-form').addEventListener('change', () => {
    $('#change-phone-field').hidden = chosen() !== 'sms';
  });

  $('#change-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    say('');
    const method = chosen();
    const body = { mfaMethod: method };
    if (method === 'sms') {
      body.phoneNumber = $('#change-phone').value.trim();
      if (!body.phoneNumber) return say('Enter your mobile number, for example +1 415 555 0123.');
    }
    busy(form, async () => {
      const r = await post('/api/mfa/change', body);
      if (!r.ok) return say(r.body.message || 'The change could not be started.');
      $('#change-totp').hidden = method !== 'totp';
      $('#change-sent').hidden = method === 'totp';
      if (method === 'totp') {
        $('#change-qr').src = r.body.qr;
        $('#change-secret').textContent = r.body.secret ?? '';
      } else {
        $('#change-sent').textContent =
          method === 'sms' ? `We sent a code to ${body.phoneNumber} by SMS.` : 'We sent a code to your email address.';
      }
      form.hidden = true;
      $('#confirm-form').hidden = false;
      $('#change-otp').value = '';
      $('#change-otp').focus();
      page.dataset.state = 'confirming';
    });
  });

  function closeConfirm() {
    $('#confirm-form').hidden = true;
    $('#change-form').hidden = false;
    $('#change-qr').removeAttribute('src');
    $('#change-secret').textContent = '';
    page.dataset.state = 'ready';
  }

  $('#confirm-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    say('');
    busy(form, async () => {
      const r = await post('/api/mfa/verify', { otp: $('#change-otp').value.replace(/\s+/g, '') });
      if (!r.ok) return say(r.body.message || 'The code could not be checked.');
      closeConfirm();
      $('#change-phone').value = '';
      await loadMethod();
      say(
        `Done: your second step is now “${METHOD_NAMES[r.body.mfa_method] ?? r.body.mfa_method}”. We also emailed you about the change.`,
        'success',
      );
      page.dataset.state = 'changed';
    });
  });

  $('#change-cancel').addEventListener('click', async () => {
    await post('/api/mfa/cancel', {});
    closeConfirm();
    say('');
  });

  $('#sign-out').addEventListener('click', async () => {
    await post('/api/logout', {});
    location.assign('/');
  });

  load();
})();
