// The sign-in page: service-web (window.ServiceWeb, loaded from the service) drives the flow;
// the authorization code goes straight to our backend, which exchanges it and sets our cookie.
(() => {
  const { $, say, post, busy } = window.Demo;
  const app = $('#app');
  const serviceUrl = document.body.dataset.serviceUrl;
  const publishableKey = document.body.dataset.publishableKey;

  /** Login state kept in memory only: the PKCE verifier and the code never touch storage. */
  const state = { email: '', pkce: undefined, method: undefined, sessionId: undefined, enrolling: false };
  let sdk;
  /** service-web/passkeys (window.ServiceWebPasskeys), when the browser can use passkeys. */
  let passkeys;

  // ---- steps ------------------------------------------------------------------------------

  function show(step, { title, subtitle } = {}) {
    for (const el of document.querySelectorAll('.step')) el.hidden = el.dataset.stepName !== step;
    app.dataset.step = step;
    if (title) $('#title').textContent = title;
    if (subtitle !== undefined) $('#subtitle').textContent = subtitle;
    const first = document.querySelector(`.step[data-step-name="${step}"] input:not([type=hidden]):not([type=radio]):not([type=checkbox])`);
    if (first) {
      first.value = first.type === 'email' ? first.value : '';
      first.focus();
    }
  }

  function restart(message, kind = 'error') {
    state.pkce = undefined;
    show('email', { title: 'Sign in', subtitle: 'No password. We recognise this device, or send you a code.' });
    say(message, kind);
  }

  /** Records the library's last status on <main data-status> (handy for tests and debugging). */
  function record(result) {
    app.dataset.status = result.status;
    return result;
  }

  // ---- failures ---------------------------------------------------------------------------

  /** A clear sentence for every failure status of service-web; returns true if the flow must restart. */
  function fail(result) {
    const wait = result.retryAfter ? ` Try again in ${formatSeconds(result.retryAfter)}.` : ' Try again later.';
    switch (result.status) {
      case 'INVALID_EMAIL':
        say('That does not look like an email address. Check it and try again.');
        $('#email').focus();
        return false;
      case 'INVALID_OTP':
        say(
          result.attemptsRemaining !== undefined
            ? `That code is not right. ${result.attemptsRemaining} ${result.attemptsRemaining === 1 ? 'try' : 'tries'} left.`
            : 'That code is not right. Check it and try again.',
        );
        return false;
      case 'OTP_EXPIRED':
        restart('That code has expired or was tried too often. Enter your email to get a new one.');
        return true;
      case 'SESSION_EXPIRED':
        restart('This sign-in took too long and has ended. Please start again.');
        return true;
      case 'RATE_LIMITED':
        say(`Too many requests.${wait}`);
        return false;
      case 'ACCOUNT_LOCKED':
        say(`This account is temporarily locked after too many wrong codes.${wait}`);
        return false;
      case 'INVALID_API_KEY':
        say(`The sign-in service does not accept this application from ${location.origin}. Check the client's registered origins.`);
        return false;
      case 'NETWORK_ERROR':
        say(`The sign-in service at ${serviceUrl} could not be reached. Is it running?`);
        return false;
      case 'TIMEOUT':
        say('The sign-in service took too long to answer. Try again.');
        return false;
      case 'SERVICE_ERROR':
        say(`The sign-in service had a problem: ${result.message}`);
        return false;
      case 'NOT_INITIALIZED':
        say('The sign-in library is not ready yet. Reload the page.');
        return false;
      default:
        say(result.message || `Unexpected answer: ${result.status}`);
        return false;
    }
  }

  const formatSeconds = (s) => (s >= 90 ? `${Math.ceil(s / 60)} minutes` : `${s} second${s === 1 ? '' : 's'}`);

  // ---- the flow ---------------------------------------------------------------------------

  /** Moves the flow on from any result of authenticate, verifyDevice or verifyMfa. */
  async function advance(result) {
    record(result);
    switch (result.status) {
      case 'SUCCESS':
      case 'DEVICE_REGISTERED':
        if (result.code) return finish(result.code, result.recoveryCodes);
        // A DEVICE_REGISTERED without a code: the device is known now, authenticate again.
        return advance(await sdk.authenticate(state.email, authenticateOptions()));
      case 'OTP_NEEDED':
        say('');
        show('otp', { title: 'Check your email', subtitle: 'This device is new to us, so we need to confirm it is you.' });
        return;
      case 'MFA_REQUIRED':
        return challenge(result);
      case 'MFA_ENROLLMENT_NEEDED':
        return chooseMethod(result.methods, true);
      case 'FINALIZE_REGISTRATION_NEEDED':
        return finalize(result);
      default:
        fail(result);
    }
  }

  function authenticateOptions() {
    return {
      rememberDevice: $('#remember-device').checked,
      code_challenge: state.pkce.codeChallenge,
      code_challenge_method: 'S256',
    };
  }

  async function start(form) {
    say('');
    const email = $('#email').value.trim();
    if (!email) return say('Enter your email address.');
    state.email = email;
    for (const el of document.querySelectorAll('.email-echo')) el.textContent = email;
    await busy(form, async () => {
      state.pkce = await window.ServiceWeb.createPkcePair();
      await advance(await sdk.authenticate(email, authenticateOptions()));
    });
  }

  async function verifyOtp(form) {
    say('');
    const otp = $('#otp').value.replace(/\s+/g, '');
    await busy(form, async () => {
      const verified = record(await sdk.verifyEmailOtp({ userid: state.email, otp }));
      if (verified.status !== 'SUCCESS') return fail(verified);
      // A user who has a second step already is asked for it, never offered another one.
      if (verified.mfaEnrolled) return advance(await sdk.verifyDevice({ userid: state.email }));
      chooseMethod(['email', 'sms', 'totp', 'passkey'], false);
    });
  }

  function chooseMethod(methods, required) {
    for (const option of document.querySelectorAll('#method-step .option')) {
      const method = option.dataset.method;
      // A passkey is offered only where this browser can make one (service-web/passkeys loaded and supported).
      option.hidden = method === 'none' ? required : !methods.includes(method) || (method === 'passkey' && !passkeys);
      option.querySelector('input').checked = false;
    }
    const first = document.querySelector('#method-step .option:not([hidden]) input');
    if (first) first.checked = true;
    // The number is asked when SMS is the preselected step too (a strict app offers no email: SMS may come first).
    $('#phone-field').hidden = first?.value !== 'sms';
    $('#method-legend').textContent = required
      ? 'This application requires a second step. Choose one:'
      : 'Add a second step to your sign-in?';
    show('method', { title: 'Email confirmed', subtitle: required ? '' : 'Your device is almost registered.' });
    if (required) say('A second sign-in step is required for this application.', 'info');
    else say('');
  }

  async function registerDevice(form) {
    say('');
    const method = form.querySelector('input[name=mfa]:checked')?.value ?? 'none';
    const options = { userid: state.email };
    if (method !== 'none') options.mfaMethod = method;
    if (method === 'sms') {
      options.phoneNumber = $('#phone').value.trim();
      if (!options.phoneNumber) return say('Enter your mobile number, for example +1 415 555 0123.');
      for (const el of document.querySelectorAll('.phone-echo')) el.textContent = options.phoneNumber;
    }
    await busy(form, async () => advance(await sdk.verifyDevice(options)));
  }

  async function finalize(result) {
    state.method = result.method;
    if (result.method === 'passkey') return askPasskey(result.sessionId, true);
    $('#totp-setup').hidden = result.method !== 'totp';
    $('#sms-setup').hidden = result.method !== 'sms';
    if (result.method === 'totp') {
      $('#totp-secret').textContent = result.secret ?? '';
      $('#totp-qr').removeAttribute('src');
      // The QR code is drawn by our backend (no third-party CDN sees the secret).
      const qr = await post('/api/qr', { uri: result.otpauthUri });
      if (qr.ok) $('#totp-qr').src = qr.body.dataUrl;
      else $('#totp-qr').alt = 'The QR code could not be drawn; enter the key by hand.';
    }
    say('');
    show('finalize', {
      title: result.method === 'totp' ? 'Set up your authenticator' : 'Confirm your phone',
      subtitle: 'One more step to finish registering this device.',
    });
  }

  async function confirmMethod(form) {
    say('');
    const otp = $('#finalize-otp').value.replace(/\s+/g, '');
    await busy(form, async () => {
      const result = await sdk.verifyMfa({ userid: state.email, otp });
      if (result.status === 'SUCCESS') return advance(result);
      record(result);
      fail(result);
    });
  }

  async function challenge(required) {
    say('');
    state.sessionId = required.sessionId;
    // A passkey step sends nothing: no initiateMfa, the browser asks for the passkey.
    if (required.method === 'passkey' && passkeys) return askPasskey(required.sessionId, false);
    show('busy', { title: 'Verification', subtitle: '' });
    $('#busy-text').textContent = 'Sending your code…';
    const initiated = record(await sdk.initiateMfa({ userid: state.email, sessionId: required.sessionId }));
    if (initiated.status !== 'MFA_INITIATED') {
      if (!fail(initiated)) restart($('#message').textContent);
      return;
    }
    const method = initiated.method ?? required.method;
    state.method = method;
    $('#mfa-prompt').textContent =
      method === 'totp'
        ? 'Enter the 6-digit code from your authenticator app.'
        : method === 'sms'
          ? 'We sent a 6-digit code to your phone by SMS.'
          : `We sent a 6-digit code to ${state.email}.`;
    show('mfa', { title: 'Verify it is you', subtitle: 'Your account has a second sign-in step.' });
  }

  async function verifyMfa(form) {
    say('');
    const otp = $('#mfa-otp').value.replace(/\s+/g, '');
    await busy(form, async () => {
      const result = await sdk.verifyMfa({
        userid: state.email,
        otp,
        remember_me: $('#remember-me').checked,
        ...(state.sessionId ? { sessionId: state.sessionId } : {}),
      });
      if (result.status === 'SUCCESS') return advance(result);
      record(result);
      fail(result);
    });
  }

  /** The passkey step: create the passkey that becomes the second step (enrolling), or use it. */
  function askPasskey(sessionId, enrolling) {
    state.sessionId = sessionId;
    state.enrolling = enrolling;
    $('#passkey-mfa-prompt').textContent = enrolling
      ? 'Create a passkey on this device: it becomes your second sign-in step.'
      : 'Confirm it is you with your passkey.';
    $('#passkey-mfa-button').textContent = enrolling ? 'Create my passkey' : 'Use my passkey';
    $('#passkey-use-recovery').hidden = enrolling;
    $('#passkey-remember-field').hidden = enrolling;
    say('');
    show('passkey-mfa', { title: enrolling ? 'Add your passkey' : 'Verify it is you', subtitle: '' });
  }

  async function passkeyMfa(form) {
    say('');
    await busy(form, async () => {
      const input = { userid: state.email, sessionId: state.sessionId };
      const result = record(
        state.enrolling
          ? await passkeys.enrollMfa(input)
          : await passkeys.verifyMfa({ ...input, remember_me: $('#passkey-remember-me').checked }),
      );
      if (result.status === 'SUCCESS') return advance(result);
      const messages = {
        PASSKEY_CANCELLED: 'No passkey was used. Try again, or use a recovery code.',
        PASSKEY_EXISTS: 'This device already holds a passkey for your account.',
        PASSKEY_REFUSED: `That passkey was not accepted.${result.attemptsRemaining !== undefined ? ` ${result.attemptsRemaining} tries left.` : ''}`,
        NO_AUTHENTICATOR: 'No passkey is available on this device. Use a recovery code.',
        PASSKEY_NOT_SUPPORTED: 'This browser cannot use passkeys here. Use a recovery code.',
      };
      if (messages[result.status]) return say(messages[result.status]);
      fail(result);
    });
  }

  /**
   * Hands the code to our backend at once (it lives 60 s); it exchanges it and opens our
   * session. Recovery codes from an enrollment are shown after that, once, before the account.
   */
  async function finish(code, recoveryCodes) {
    show('busy', { title: 'Signing in', subtitle: '' });
    $('#busy-text').textContent = 'Signing you in…';
    const response = await window.DemoDpop.login({ code, userid: state.email, code_verifier: state.pkce?.codeVerifier });
    state.pkce = undefined;
    if (response.ok) {
      app.dataset.status = 'SIGNED_IN';
      if (recoveryCodes?.length) return showRecoveryCodes(recoveryCodes);
      location.assign('/account');
      return;
    }
    restart(response.body.message || 'Sign-in failed. Please try again.');
  }

  /** The service shows the codes only in this answer: the page keeps them nowhere. */
  function showRecoveryCodes(codes) {
    const list = $('#recovery-codes');
    list.replaceChildren(
      ...codes.map((code) => {
        const item = document.createElement('li');
        item.textContent = code;
        return item;
      }),
    );
    say('');
    show('recovery', { title: 'Save these recovery codes', subtitle: 'You are signed in.' });
  }

  /** Sign-in with a passkey: no address needed; the code goes to our backend like any other. */
  async function passkeySignIn(button) {
    say('');
    await busy(button.form, async () => {
      state.pkce = await window.ServiceWeb.createPkcePair();
      // An address typed already binds the passkey to it (and lets an MFA step that follows name the user).
      state.email = $('#email').value.trim();
      const pkce = { code_challenge: state.pkce.codeChallenge, code_challenge_method: 'S256' };
      const r = record(await passkeys.signIn(state.email ? { userid: state.email, ...pkce } : pkce));
      if (r.status === 'SUCCESS') return finish(r.code);
      if (r.status === 'MFA_REQUIRED') {
        // A sign-in without an address learns it here, for the MFA step.
        state.email = r.userid;
        return advance(r);
      }
      const messages = {
        PASSKEY_CANCELLED: 'No passkey was used. Enter your email instead, or try again.',
        PASSKEY_REFUSED: 'That passkey was not accepted (it may have been revoked). Sign in with your email.',
        NO_AUTHENTICATOR: 'No passkey is available on this device. Sign in with your email.',
        PASSKEY_NOT_SUPPORTED: 'This browser cannot use passkeys here. Sign in with your email.',
      };
      if (messages[r.status]) return say(messages[r.status]);
      fail(r);
    });
  }

  // ---- wiring -----------------------------------------------------------------------------

  const on = (id, handler) =>
    $(id).addEventListener('submit', (event) => {
      event.preventDefault();
      handler(event.currentTarget);
    });
  on('#email-step', start);
  on('#otp-step', verifyOtp);
  on('#method-step', registerDevice);
  on('#finalize-step', confirmMethod);
  on('#mfa-step', verifyMfa);
  on('#passkey-mfa-step', passkeyMfa);
  $('#passkey-use-recovery').addEventListener('click', () => {
    $('#mfa-prompt').textContent = 'Enter one of your recovery codes.';
    show('mfa', { title: 'Use a recovery code', subtitle: '' });
  });
  on('#recovery-step', () => {
    $('#recovery-codes').replaceChildren();
    location.assign('/account');
  });
  for (const button of document.querySelectorAll('.restart')) button.addEventListener('click', () => restart(''));
  $('#passkey-signin').addEventListener('click', (event) => passkeySignIn(event.currentTarget));
  $('#method-step').addEventListener('change', () => {
    $('#phone-field').hidden = $('#method-step').querySelector('input[name=mfa]:checked')?.value !== 'sms';
  });

  async function boot() {
    if (!window.ServiceWeb) {
      show('email');
      for (const c of document.querySelectorAll('#email-step input, #email-step button')) c.disabled = true;
      say(`The sign-in library could not be loaded from ${serviceUrl}. Is the identity service running?`);
      app.dataset.status = 'SDK_MISSING';
      return;
    }
    sdk = window.ServiceWeb.ServiceInitializer;
    const init = record(await sdk.init(publishableKey, serviceUrl));
    show('email');
    if (!init.success) {
      fail(init);
      return;
    }
    if (window.ServiceWebPasskeys) {
      const candidate = new window.ServiceWebPasskeys.ServicePasskeys();
      const ready = await candidate.init(publishableKey, serviceUrl);
      if (ready.success && (await candidate.support()).passkeys) {
        passkeys = candidate;
        $('#passkey-signin').hidden = false;
      }
    }
    app.dataset.ready = 'true';
  }
  boot();
})();
