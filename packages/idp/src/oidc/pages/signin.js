// The hosted sign-in page: service-web (loaded before this file) against the service's own
// first-party client. Every call names the pending authorization request, so the service applies
// the requesting app's MFA policy; the code it ends with is traded for the app's code at
// /signin/complete. docs/protocol.md ("Sign-in with redirects").
(() => {
  const config = document.querySelector('meta[name="service-sign-in"]').dataset;
  const $ = (id) => document.getElementById(id);
  const status = $('status');
  const steps = ['email-step', 'otp-step', 'enroll-step', 'mfa-step', 'codes-step', 'passkey-mfa-step', 'passkey-step'];
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

  let offerPasskey = false;

  /**
   * Whether this browser can create a passkey here: WebAuthn with a user-verifying platform
   * authenticator (fingerprint, face, screen lock), on a host name (never an IP address), and
   * the sign-in was not itself made with a passkey.
   */
  async function canAddPasskey() {
    const pkc = window.PublicKeyCredential;
    if (passkeyFirst || !pkc || !navigator.credentials?.create || /^[\d.]+$|:|^\[/.test(location.hostname)) return false;
    try {
      return (await pkc.isUserVerifyingPlatformAuthenticatorAvailable?.()) === true;
    } catch {
      return false;
    }
  }

  /**
   * The end of a successful step. With recovery codes (an MFA enrollment), or where the page may
   * offer to add a passkey, the hosted code is redeemed at once and the sign-in held by the
   * service, so nothing expires while the user copies the codes or makes a passkey; "I have
   * saved them", then "Add a passkey" or "Not now", continue it.
   */
  async function complete(result) {
    const body = { request: config.request, code: result.code, codeVerifier: pkce.codeVerifier };
    const codes = result.recoveryCodes ?? [];
    const mayOffer = await canAddPasskey();
    if (codes.length || mayOffer) {
      const held = await post('/signin/complete', { ...body, hold: true });
      if (!held) return;
      // The service says whether the user has no passkey for these pages yet.
      offerPasskey = mayOffer && held.passkeyOffer === true;
      if (!codes.length) return afterHold();
      $('recovery-codes').replaceChildren(...codes.map((code) => Object.assign(document.createElement('li'), { textContent: code })));
      return show('codes-step');
    }
    say('Signing you in…');
    const done = await post('/signin/complete', body);
    if (done) location.assign(done.location);
  }

  /** After the recovery codes (if any): the passkey offer, or straight on to the app. */
  function afterHold() {
    return offerPasskey ? show('passkey-step') : continueSignIn();
  }

  /** Finishes the held sign-in: the app gets its code (once: the service consumes the request). */
  async function continueSignIn() {
    say('Signing you in…');
    const done = await post('/signin/continue', { request: config.request });
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
  let passkeyFirst = false;

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
    // After a passkey the device is the passkey itself: nothing to remember on this browser.
    $('mfa-remember-field').hidden = on || passkeyFirst;
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

  // Passkeys: the service's passkey routes, called from this page (same origin, so the relying
  // party id is this host or SERVICE_IDP_PASSKEY_RP_ID). Discoverable credentials: no address is
  // needed. The sign-in ends, like the others, in a hosted code traded at /signin/complete.
  const b64 = {
    decode: (text) => Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0)).buffer,
    encode: (buffer) =>
      btoa(String.fromCharCode(...new Uint8Array(buffer)))
        .replace(/\+/g, '-')
        .replace(/\//g, '_')
        .replace(/=+$/, ''),
  };
  let autofill;

  async function passkeyCall(path, body) {
    const response = await fetch(`/v1/passkeys/${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-key': config.publishableKey,
        'x-service-authorization-request': config.request,
      },
      body: JSON.stringify(body),
    });
    const answer = await response.json();
    if (!response.ok) throw Object.assign(new Error(answer.message), { shown: answer.message });
    return answer;
  }

  /** One passkey ceremony: `mediation` 'conditional' offers the passkeys in the email field's autofill. */
  async function passkeySignIn(mediation, signal) {
    const { options } = await passkeyCall('authentication/options', {});
    const credential = await navigator.credentials.get({
      publicKey: { ...options, challenge: b64.decode(options.challenge), allowCredentials: [] },
      ...(mediation ? { mediation } : {}),
      ...(signal ? { signal } : {}),
    });
    if (!credential) return;
    const r = credential.response;
    passkeyFirst = true; // nothing to remember, no passkey to offer after a passkey
    pkce = await ServiceWeb.createPkcePair();
    const answer = await passkeyCall('authentication', {
      credential: {
        id: credential.id,
        rawId: b64.encode(credential.rawId),
        type: 'public-key',
        response: {
          clientDataJSON: b64.encode(r.clientDataJSON),
          authenticatorData: b64.encode(r.authenticatorData),
          signature: b64.encode(r.signature),
          ...(r.userHandle ? { userHandle: b64.encode(r.userHandle) } : {}),
        },
        ...(credential.authenticatorAttachment ? { authenticatorAttachment: credential.authenticatorAttachment } : {}),
        clientExtensionResults: credential.getClientExtensionResults(),
      },
      codeChallenge: pkce.codeChallenge,
      codeChallengeMethod: 'S256',
    });
    if (answer.status === 'SUCCESS') return complete(answer);
    // The app does not count a passkey as MFA: its second factor, as after an email sign-in.
    email = answer.userid;
    passkeyFirst = true;
    await startMfa(answer.sessionId, answer.method);
  }

  /** Says why a ceremony failed; a dismissed or aborted prompt says nothing. */
  function passkeyFailed(error) {
    if (error?.name === 'AbortError') return;
    say(error?.shown ?? (error?.name === 'NotAllowedError' ? 'No passkey was chosen.' : 'Something went wrong. Try again.'));
  }

  /** Offers passkeys where this browser can use them: the button, and the autofill where it has conditional UI. */
  async function offerPasskeys() {
    const pkc = window.PublicKeyCredential;
    if (!pkc || !navigator.credentials || /^[\d.]+$|:|^\[/.test(location.hostname)) return;
    $('passkey-sign-in').hidden = false;
    let conditional = false;
    try {
      conditional = (await pkc.isConditionalMediationAvailable?.()) === true;
    } catch {}
    if (!conditional) return;
    $('email').setAttribute('autocomplete', 'username webauthn');
    startAutofill();
  }

  function startAutofill() {
    autofill = new AbortController();
    passkeySignIn('conditional', autofill.signal).catch(passkeyFailed);
  }

  $('passkey-sign-in').addEventListener('click', async () => {
    const button = $('passkey-sign-in');
    button.disabled = true;
    say('');
    // One ceremony at a time: the autofill's request is withdrawn, and offered again after.
    const hadAutofill = autofill !== undefined;
    autofill?.abort();
    autofill = undefined;
    try {
      await passkeySignIn(undefined);
    } catch (error) {
      passkeyFailed(error);
    } finally {
      button.disabled = false;
      if (hadAutofill && !$('email-step').hidden) startAutofill();
    }
  });

  onSubmit('email-step', async () => {
    passkeyFirst = false;
    autofill?.abort();
    autofill = undefined;
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
    const { decode, encode } = b64;
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

  onSubmit('codes-step', afterHold);

  /**
   * "Add a passkey": creation options for the held sign-in's user, the browser's ceremony, the
   * new credential to the service. Whatever happens (added, cancelled, refused), the sign-in
   * then continues to the app: the offer never stands in the way.
   */
  onSubmit('passkey-step', async () => {
    $('passkey-not-now').disabled = true;
    try {
      const asked = await post('/signin/passkey/options', { request: config.request });
      if (asked) {
        const o = asked.options;
        const credential = await navigator.credentials.create({
          publicKey: {
            ...o,
            challenge: b64.decode(o.challenge),
            user: { ...o.user, id: b64.decode(o.user.id) },
            excludeCredentials: o.excludeCredentials.map((c) => ({ ...c, id: b64.decode(c.id) })),
          },
        });
        const r = credential.response;
        const added = await post('/signin/passkey', {
          request: config.request,
          credential: {
            id: credential.id,
            rawId: b64.encode(credential.rawId),
            type: 'public-key',
            response: {
              clientDataJSON: b64.encode(r.clientDataJSON),
              attestationObject: b64.encode(r.attestationObject),
              ...(r.getTransports ? { transports: r.getTransports() } : {}),
            },
            ...(credential.authenticatorAttachment ? { authenticatorAttachment: credential.authenticatorAttachment } : {}),
            clientExtensionResults: credential.getClientExtensionResults(),
          },
        });
        if (added) say('Passkey added.');
      }
    } catch {
      // Cancelled, or no authenticator: no passkey this time.
    }
    try {
      await continueSignIn();
    } finally {
      $('passkey-not-now').disabled = false;
    }
  });

  $('passkey-not-now').addEventListener('click', async () => {
    const buttons = $('passkey-step').querySelectorAll('button');
    for (const button of buttons) button.disabled = true;
    say('');
    try {
      await continueSignIn();
    } catch {
      say('Something went wrong. Try again.');
    } finally {
      for (const button of buttons) button.disabled = false;
    }
  });

  client.init(config.publishableKey, config.issuer).then((result) => {
    if (result.status !== 'INITIALIZED') return say(result.message);
    show('email-step');
    void offerPasskeys();
  });
})();
