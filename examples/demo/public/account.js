// The signed-in page: our backend's session, the claims it verified, this user's devices
// (service-web/devices, proven by this browser's device key), and the MFA change through the backend's
// ServiceDelegationClient.
(() => {
  const { $, say, post, get, busy, METHOD_NAMES } = window.Demo;
  const page = $('#account');
  const sdk = window.ServiceWeb?.ServiceInitializer;
  /** service-web/devices (window.ServiceWebDevices): list, rename and revoke, with the device key the core stored. */
  const devices = window.ServiceWebDevices && new window.ServiceWebDevices.ServiceDevices();
  let email = '';
  /** service-web/passkeys, initialized in load() when the browser can use passkeys. */
  let passkeys;

  const LABELS = {
    sub: 'Subject (sub)',
    email: 'Email',
    email_verified: 'Email verified',
    iss: 'Issuer (iss)',
    aud: 'Audience (aud)',
    iat: 'Issued at',
    exp: 'Expires',
    amr: 'Methods used (amr)',
    device_id: 'Device (device_id)',
  };

  const when = (ms) => (ms ? new Date(ms).toLocaleString() : 'never');

  /** One list item per device: name, browser and OS, dates, and its rename and revoke controls. */
  function renderDevice(device) {
    const li = document.createElement('li');
    li.dataset.deviceId = device.id;
    li.dataset.current = String(device.current);
    const title = document.createElement('strong');
    title.className = 'device-name';
    title.textContent = device.name;
    const tag = document.createElement('span');
    tag.className = 'badge';
    tag.textContent = 'This device';
    tag.hidden = !device.current;
    const details = document.createElement('p');
    details.className = 'muted';
    const kind =
      device.kind === 'passkey'
        ? `Passkey · ${device.synced ? 'synced to your other devices' : 'on one device only'}`
        : [device.browser, device.os].filter(Boolean).join(' · ') || 'Unknown browser';
    li.dataset.kind = device.kind;
    details.textContent = `${kind} · added ${when(device.createdAt)} · last used ${when(device.lastUsedAt)}`;
    const form = document.createElement('form');
    form.className = 'row';
    const name = document.createElement('input');
    name.name = 'name';
    name.maxLength = 64;
    name.value = device.name;
    name.setAttribute('aria-label', `New name for ${device.name}`);
    const rename = document.createElement('button');
    rename.type = 'submit';
    rename.className = 'secondary small';
    rename.textContent = 'Rename';
    const revoke = document.createElement('button');
    revoke.type = 'button';
    revoke.className = 'danger small';
    revoke.dataset.action = 'revoke';
    revoke.textContent = device.current ? 'Sign out this device' : 'Revoke';
    form.append(name, rename, revoke);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      busy(form, async () => {
        const r = await devices.renameDevice({ userid: email, deviceId: device.id, name: name.value });
        if (r.status !== 'SUCCESS') return say(r.message);
        say('Device renamed.', 'success');
        await loadDevices();
      });
    });
    revoke.addEventListener('click', () =>
      busy(form, async () => {
        const r = await devices.revokeDevice({ userid: email, deviceId: device.id });
        if (r.status !== 'SUCCESS') return say(r.message);
        say(
          device.current ? 'This browser is signed out: it will need a code from your email next time.' : `“${device.name}” is revoked.`,
          'success',
        );
        await loadDevices();
      }),
    );
    li.append(title, ' ', tag, details, form);
    return li;
  }

  async function loadDevices() {
    const list = $('#devices');
    const note = $('#devices-note');
    list.textContent = '';
    if (!sdk || !devices) {
      note.hidden = false;
      note.textContent = 'The sign-in library could not be loaded, so devices cannot be shown.';
      return;
    }
    const r = await devices.listDevices(email);
    list.dataset.state = r.status;
    $('#revoke-others').hidden = r.status !== 'SUCCESS' || r.devices.length < 2;
    if (r.status !== 'SUCCESS') {
      note.hidden = false;
      note.textContent =
        r.status === 'DEVICE_KEY_UNAVAILABLE'
          ? 'This browser is not a remembered device, so it cannot manage devices. Sign in again with “Remember this device” to do so.'
          : r.message;
      return;
    }
    note.hidden = true;
    for (const device of r.devices) list.append(renderDevice(device));
  }

  $('#add-passkey').addEventListener('click', (event) =>
    busy(event.currentTarget.parentElement, async () => {
      const r = await passkeys.add({ userid: email });
      page.dataset.passkey = r.status;
      if (r.status !== 'SUCCESS') {
        return say(
          {
            PASSKEY_CANCELLED: 'No passkey was created.',
            PASSKEY_EXISTS: 'This device already holds a passkey for your account.',
            NO_AUTHENTICATOR: 'No authenticator on this device can hold a passkey.',
          }[r.status] ?? r.message,
        );
      }
      say('Passkey added: next time, sign in with it, no email needed.', 'success');
      await loadDevices();
    }),
  );

  $('#revoke-others').addEventListener('click', (event) =>
    busy(event.currentTarget.parentElement, async () => {
      const r = await devices.revokeOtherDevices(email);
      if (r.status !== 'SUCCESS') return say(r.message);
      say(`Signed out everywhere else (${r.revoked} ${r.revoked === 1 ? 'device' : 'devices'}).`, 'success');
      await loadDevices();
    }),
  );

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

  /**
   * Acme Notes' own API: the page calls /api/notes with its access token for the API (got through
   * the service's /authorize with resource and read:notes), which the backend verifies.
   */
  async function loadNotes(me) {
    const section = $('#notes');
    if (!me.notesApi) return;
    section.hidden = false;
    const status = $('#notes-status');
    const refused = new URLSearchParams(location.search).get('notes') === 'refused';
    if (!me.notesToken) {
      section.dataset.state = 'no-token';
      status.textContent = refused
        ? 'The identity service did not give a notes token. Try again.'
        : 'Get a token for the notes API: the identity service signs you in and asks for read:notes.';
      return;
    }
    let answer;
    try {
      const response = await fetch('/api/notes', { headers: { authorization: `Bearer ${me.notesToken}` } });
      answer = { status: response.status, body: await response.json().catch(() => ({})) };
    } catch {
      answer = { status: 0, body: {} };
    }
    $('#notes-get').textContent = 'Get a new notes token';
    if (answer.status === 200) {
      section.dataset.state = 'notes';
      status.textContent = 'Your token carries read:notes: the API served your notes.';
      const list = $('#notes-list');
      list.replaceChildren(
        ...answer.body.notes.map((note) => {
          const li = document.createElement('li');
          const title = document.createElement('strong');
          title.textContent = note.title;
          const body = document.createElement('p');
          body.className = 'muted';
          body.textContent = note.body;
          li.append(title, body);
          return li;
        }),
      );
      list.hidden = false;
      return;
    }
    if (answer.status === 403 && answer.body.error === 'insufficient_scope') {
      section.dataset.state = 'forbidden';
      status.textContent =
        'You lack read:notes: the notes API refused your token (403 insufficient_scope). An operator gives it with the notes-reader role; then get a new notes token:';
      const command = $('#notes-command');
      command.querySelector('code').textContent = `npx service-idp users roles add ${email} notes-reader`;
      command.hidden = false;
      return;
    }
    section.dataset.state = 'refused';
    status.textContent = 'The notes API refused your token (it may have expired): get a new one.';
  }

  async function load() {
    const me = await get('/api/me');
    if (!me.ok) {
      location.assign('/');
      return;
    }
    email = me.body.email;
    $('#who').textContent = email;
    renderClaims(me.body.claims);
    // A code from the email (amr otp) that registered a device key: this sign-in added a device.
    const amr = me.body.claims.amr ?? [];
    $('#new-device').hidden = !(amr.includes('otp') && me.body.claims.device_id);
    if (sdk) {
      const init = await sdk.init(document.body.dataset.publishableKey, document.body.dataset.serviceUrl);
      if (!init.success) say(`The sign-in library could not start: ${init.message}`);
    }
    if (devices) await devices.init(document.body.dataset.publishableKey, document.body.dataset.serviceUrl);
    if (window.ServiceWebPasskeys) {
      const candidate = new window.ServiceWebPasskeys.ServicePasskeys();
      const ready = await candidate.init(document.body.dataset.publishableKey, document.body.dataset.serviceUrl);
      if (ready.success && (await candidate.support()).passkeys) passkeys = candidate;
    }
    await Promise.all([loadMethod(), loadDevices(), loadNotes(me.body)]);
    // A passkey is added from a remembered device (its key proves the signed-in user).
    $('#add-passkey').hidden = !passkeys || $('#devices').dataset.state !== 'SUCCESS';
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
      showStep(r.body, body.phoneNumber);
      form.hidden = true;
      $('#confirm-form').hidden = false;
      $('#change-otp').value = '';
      $('#change-otp').focus();
      page.dataset.state = 'confirming';
    });
  });

  /** One step of the change: the current method's code first (when there is one), then the new method's. */
  function showStep(step, phoneNumber) {
    const current = step.status === 'current_factor_needed';
    $('#change-totp').hidden = current || step.method !== 'totp';
    $('#change-sent').hidden = !current && step.method === 'totp';
    if (current) {
      $('#change-sent').textContent = {
        email: 'First confirm it is you: enter the code we sent to your email address.',
        sms: 'First confirm it is you: enter the code we sent to your phone by SMS.',
        totp: 'First confirm it is you: enter the code from your current authenticator app.',
      }[step.current_method];
    } else if (step.method === 'totp') {
      $('#change-qr').src = step.qr;
      $('#change-secret').textContent = step.secret ?? '';
    } else {
      $('#change-sent').textContent =
        step.method === 'sms' ? `We sent a code to ${phoneNumber || 'your new number'} by SMS.` : 'We sent a code to your email address.';
    }
    $('#change-otp').value = '';
    $('#change-otp').focus();
  }

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
      if (r.body.status !== 'success') return showStep(r.body, $('#change-phone').value.trim());
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
