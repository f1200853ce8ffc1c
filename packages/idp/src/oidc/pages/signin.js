// The hosted sign-in page: service-web (loaded before this file) against the service's own
// first-party client. Every call names the pending authorization request, so the service applies
// the requesting app's MFA policy; the code it ends with is traded for the app's code at
// /signin/complete. docs/protocol.md ("Sign-in with redirects").
(() => {
  const config = document.querySelector('meta[name="service-sign-in"]').dataset;
  const $ = (id) => document.getElementById(id);
  const status = $('status');
  const steps = ['email-step', 'otp-step', 'enroll-step', 'mfa-step', 'codes-step', 'passkey-mfa-step'];
  const client = new ServiceWeb.ServiceClient({
    fetch: (url, init) => {
      const headers = new Headers(init?.headers);
      headers.set('x-service-authorization-request', config.request);
      return fetch(...passkeyMfaRoute(url, { ...init, headers }));
    },
  });
  let email = '';
  let pkce;
  let sessionId;

  /** Shows one step and moves keyboard focus to its first field (or its heading, when it has none). */
  function show(step) {
    for (const id of steps) $(id).hidden = id !== step;
    ($(step).querySelector('input:not([type="checkbox"])') ?? $(step).querySelector('[tabindex="-1"]'))?.focus();
  }

  function say(message) {
    status.textContent = message;
  }

  /** Runs a step's call with its button disabled; a failure is said, not thrown. */
  function onSubmit(form, run) {
    $(form).addEventListener('submit', async (event) => {
      event.preventDefault();
      const button = $(form).querySelector('button');
      button.disabled = true;
      say('');
      try {
        await run();
      } catch {
        say('Something went wrong. Try again.');
      } finally {
        button.disabled = false;
      }
    });
  }

  async function post(path, body) {
    const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = await response.json();
    if (!response.ok) say(answer.message ?? 'This sign-in has expired. Go back to the app and start again.');
    return response.ok ? answer : undefined;
  }

  /**
   * The end of a successful step. With recovery codes (an MFA enrollment) the hosted code is
   * redeemed at once and the sign-in held by the service, so nothing expires while the user
   * copies the codes; "I have saved them" then continues it.
   */
  async function complete(result) {
    const body = { request: config.request, code: result.code, codeVerifier: pkce.codeVerifier };
    if (result.recoveryCodes?.length) {
      if (!(await post('/signin/complete', { ...body, hold: true }))) return;
      $('recovery-codes').replaceChildren(
        ...result.recoveryCodes.map((code) => Object.assign(document.createElement('li'), { textContent: code })),
      );
      return show('codes-step');
    }
    say('Signing you in…');
    const done = await post('/signin/complete', body);
    if (done) location.assign(done.location);
  }

  async function startMfa(id, method) {
    sessionId = id;
    if (method === 'passkey') return passkeyMfaAvailable() ? showPasskeyMfa(false) : passkeyMfaRecovery();
    const started = await client.initiateMfa({ userid: email, sessionId });
    if (started.status !== 'MFA_INITIATED') return say(started.message);
    showMfa(method, false);
  }

  /**
   * Draws the otpauth URI as an SVG QR code, built here from the matrix of `uqr` (served by the
   * service at /signin/qr.js, loaded only now): no third-party request, no inline markup, and the
   * TOTP key never leaves the browser again. Without it the link and the key still work.
   */
  async function showQr(uri) {
    const box = $('totp-qr');
    box.replaceChildren();
    try {
      const { encode } = await import('/signin/qr.js');
      const { data, size } = encode(uri, { ecc: 'M', border: 2 });
      const svgNs = 'http://www.w3.org/2000/svg';
      const svg = document.createElementNS(svgNs, 'svg');
      for (const [name, value] of Object.entries({
        viewBox: `0 0 ${size} ${size}`,
        role: 'img',
        'aria-label': 'QR code of the account, for your authenticator app',
        'shape-rendering': 'crispEdges',
      })) {
        svg.setAttribute(name, value);
      }
      const background = document.createElementNS(svgNs, 'rect');
      for (const [name, value] of Object.entries({ width: size, height: size, fill: '#fff' })) background.setAttribute(name, value);
      let modules = '';
      data.forEach((row, y) => {
        row.forEach((dark, x) => {
          if (dark) modules += `M${x} ${y}h1v1h-1z`;
        });
      });
      const path = document.createElementNS(svgNs, 'path');
      path.setAttribute('d', modules);
      path.setAttribute('fill', '#000');
      svg.append(background, path);
      box.append(svg);
      box.hidden = false;
    } catch {
      box.hidden = true;
    }
  }

  let mfaLabel = '';
  let recoveryMode = false;

  /**
   * Switches the MFA field between the method's 6-digit code and a recovery code (login only:
   * a new method is never confirmed by one). A recovery code never remembers the device.
   */
  function useRecoveryCode(on) {
    recoveryMode = on;
    const input = $('mfa-code');
    Object.assign(input, {
      value: '',
      inputMode: on ? 'text' : 'numeric',
      maxLength: on ? 11 : 6,
      autocomplete: on ? 'off' : 'one-time-code',
    });
    if (on) input.removeAttribute('pattern');
    else input.setAttribute('pattern', '[0-9]{6}');
    $('mfa-label').textContent = on ? 'One of your recovery codes (XXXXX-XXXXX)' : mfaLabel;
    $('mfa-remember-field').hidden = on;
    $('use-recovery').textContent = on ? 'Use the 6-digit code instead' : 'Use a recovery code instead';
    input.focus();
  }

  $('use-recovery').addEventListener('click', () => useRecoveryCode(!recoveryMode));

  function showMfa(method, enrolling, result) {
    $('totp-setup').hidden = !(enrolling && method === 'totp');
    if (result?.otpauthUri) {
      $('totp-link').href = result.otpauthUri;
      if (enrolling && method === 'totp') void showQr(result.otpauthUri);
    }
    $('totp-secret').textContent = result?.secret ?? '';
    mfaLabel =
      method === 'totp'
        ? 'The 6-digit code from your authenticator app'
        : `The 6-digit code we sent by ${method === 'sms' ? 'SMS' : 'email'}`;
    $('use-recovery').hidden = enrolling;
    show('mfa-step');
    useRecoveryCode(false);
  }

  /** The answers of verifyDevice (after the email code, or after choosing a method to enroll). */
  async function afterDevice(result) {
    switch (result.status) {
      case 'SUCCESS':
      case 'DEVICE_REGISTERED':
        return complete(result);
      case 'MFA_REQUIRED':
        return startMfa(result.sessionId, result.method);
      case 'MFA_ENROLLMENT_NEEDED': {
        const methods = $('enroll-methods');
        methods.replaceChildren();
        for (const [index, method] of result.methods.filter((m) => m !== 'passkey' || passkeyMfaAvailable()).entries()) {
          const label = document.createElement('label');
          label.className = 'check';
          const input = Object.assign(document.createElement('input'), {
            type: 'radio',
            name: 'method',
            value: method,
            checked: index === 0,
          });
          input.addEventListener('change', () => {
            $('phone-field').hidden = method !== 'sms';
          });
          label.append(
            input,
            ` ${{ email: 'A code by email', sms: 'A code by SMS', totp: 'An authenticator app', passkey: 'A passkey' }[method] ?? method}`,
          );
          methods.append(label);
        }
        $('phone-field').hidden = result.methods[0] !== 'sms';
        return show('enroll-step');
      }
      case 'FINALIZE_REGISTRATION_NEEDED':
        sessionId = result.sessionId;
        if (result.method === 'passkey') return showPasskeyMfa(true);
        return showMfa(result.method, true, result);
      default:
        return say(result.message);
    }
  }

  onSubmit('email-step', async () => {
    email = $('email').value.trim();
    pkce = await ServiceWeb.createPkcePair();
    const result = await client.authenticate(email, {
      rememberDevice: $('remember').checked,
      code_challenge: pkce.codeChallenge,
      code_challenge_method: 'S256',
    });
    if (result.status === 'SUCCESS') return complete(result);
    if (result.status === 'MFA_REQUIRED') return startMfa(result.sessionId, result.method);
    if (result.status !== 'OTP_NEEDED') return say(result.message);
    $('otp-email').textContent = email;
    show('otp-step');
  });

  onSubmit('otp-step', async () => {
    const verified = await client.verifyEmailOtp({ userid: email, otp: $('otp').value.trim() });
    if (verified.status !== 'SUCCESS') return say(verified.message);
    await afterDevice(await client.verifyDevice({ userid: email }));
  });

  onSubmit('enroll-step', async () => {
    const method = document.querySelector('input[name="method"]:checked')?.value;
    const input = { userid: email, mfaMethod: method };
    if (method === 'sms') input.phoneNumber = $('phone').value.trim();
    await afterDevice(await client.verifyDevice(input));
  });

  onSubmit('mfa-step', async () => {
    const result = await client.verifyMfa({
      userid: email,
      otp: $('mfa-code').value.trim(),
      remember_me: !recoveryMode && $('mfa-remember').checked,
      sessionId,
    });
    if (result.status !== 'SUCCESS') return say(result.message);
    await complete(result);
  });

  // A passkey as the MFA method: the ceremony runs here (WebAuthn, no library), and its answer
  // finishes through the client's verifyMfa, whose request passkeyMfaRoute sends to the passkey
  // route instead: the client then keeps a new device's key as after any MFA step.
  // docs/protocol.md ("POST /v1/passkeys/mfa/…").
  let passkeyMfa; // { enrolling, credential } while one verifyMfa goes to the passkey route

  const passkeyMfaB64 = {
    decode: (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0)).buffer,
    encode: (buffer) =>
      btoa(String.fromCharCode(...new Uint8Array(buffer)))
        .replace(/\+/g, '-')
        .replace(/\//g, '_')
        .replace(/=+$/, ''),
  };

  function passkeyMfaAvailable() {
    return !!window.PublicKeyCredential && !!navigator.credentials && !/^[\d.]+$|:|^\[/.test(location.hostname);
  }

  /** The client's /v1/mfa/verify request, sent to the passkey route with the credential while a passkey step is under way. */
  function passkeyMfaRoute(url, init) {
    if (!passkeyMfa || !String(url).endsWith('/v1/mfa/verify')) return [url, init];
    const { enrolling, credential } = passkeyMfa;
    passkeyMfa = undefined;
    const { otp: _otp, regenerateRecoveryCodes: _regenerate, ...body } = JSON.parse(init.body);
    const path = enrolling ? '/v1/passkeys/mfa/enrollment' : '/v1/passkeys/mfa/verify';
    return [String(url).replace('/v1/mfa/verify', path), { ...init, body: JSON.stringify({ ...body, credential }) }];
  }

  function showPasskeyMfa(enrolling) {
    $('passkey-mfa-prompt').textContent = enrolling
      ? 'Create a passkey on this device: it becomes your second factor.'
      : 'Confirm it is you with your passkey.';
    $('passkey-mfa-button').textContent = enrolling ? 'Create a passkey' : 'Use my passkey';
    $('passkey-mfa-recovery').hidden = enrolling;
    $('passkey-mfa-remember-field').hidden = enrolling;
    $('passkey-mfa-step').dataset.enrolling = enrolling ? 'true' : '';
    show('passkey-mfa-step');
  }

  async function passkeyMfaOptions(enrolling) {
    const response = await fetch(`/v1/passkeys/mfa/${enrolling ? 'enrollment/options' : 'options'}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-key': config.publishableKey,
        'x-service-authorization-request': config.request,
      },
      body: JSON.stringify({ userid: email, sessionId }),
    });
    const answer = await response.json();
    if (!response.ok) throw Object.assign(new Error(answer.message), { shown: answer.message });
    return answer.options;
  }

  /** One WebAuthn ceremony of the MFA step, its result in the JSON form the service reads. */
  async function passkeyMfaCredential(enrolling) {
    const options = await passkeyMfaOptions(enrolling);
    const { decode, encode } = passkeyMfaB64;
    const ids = (list) => (list ?? []).map((c) => ({ ...c, id: decode(c.id) }));
    const made = enrolling
      ? await navigator.credentials.create({
          publicKey: {
            ...options,
            challenge: decode(options.challenge),
            user: { ...options.user, id: decode(options.user.id) },
            excludeCredentials: ids(options.excludeCredentials),
          },
        })
      : await navigator.credentials.get({
          publicKey: { ...options, challenge: decode(options.challenge), allowCredentials: ids(options.allowCredentials) },
        });
    if (!made) throw Object.assign(new Error('no passkey'), { name: 'NotAllowedError' });
    const r = made.response;
    const response = enrolling
      ? {
          clientDataJSON: encode(r.clientDataJSON),
          attestationObject: encode(r.attestationObject),
          ...(r.getTransports ? { transports: r.getTransports() } : {}),
        }
      : {
          clientDataJSON: encode(r.clientDataJSON),
          authenticatorData: encode(r.authenticatorData),
          signature: encode(r.signature),
          ...(r.userHandle ? { userHandle: encode(r.userHandle) } : {}),
        };
    return {
      id: made.id,
      rawId: encode(made.rawId),
      type: 'public-key',
      response,
      ...(made.authenticatorAttachment ? { authenticatorAttachment: made.authenticatorAttachment } : {}),
      clientExtensionResults: {},
    };
  }

  onSubmit('passkey-mfa-step', async () => {
    const enrolling = $('passkey-mfa-step').dataset.enrolling === 'true';
    let credential;
    try {
      credential = await passkeyMfaCredential(enrolling);
    } catch (error) {
      return say(error?.shown ?? 'No passkey was used. Try again, or use a recovery code.');
    }
    passkeyMfa = { enrolling, credential };
    // The client checks a code's shape before sending: the placeholder never leaves this page.
    const result = await client.verifyMfa({
      userid: email,
      otp: '000000',
      remember_me: !enrolling && $('passkey-mfa-remember').checked,
      sessionId,
    });
    passkeyMfa = undefined;
    if (result.status !== 'SUCCESS') return say(result.message);
    await complete(result);
  });

  /** The code field in recovery-code mode: the way through a passkey step without the passkey (or without WebAuthn). */
  function passkeyMfaRecovery() {
    showMfa('passkey', false);
    useRecoveryCode(true);
    $('use-recovery').hidden = true; // no 6-digit code for a passkey: back is a new sign-in
  }

  $('passkey-mfa-recovery').addEventListener('click', passkeyMfaRecovery);

  onSubmit('codes-step', async () => {
    say('Signing you in…');
    const done = await post('/signin/continue', { request: config.request });
    if (done) location.assign(done.location);
  });

  client.init(config.publishableKey, config.issuer).then((result) => {
    if (result.status !== 'INITIALIZED') return say(result.message);
    show('email-step');
  });
})();
