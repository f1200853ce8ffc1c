// DPoP (RFC 9449) with this browser's device key: service-web/dpop (window.ServiceWebDpop) signs a
// proof for each call our backend makes to the identity service on the user's behalf, so the
// tokens it gets are bound to this device. Without a remembered device key the sign-in goes on
// with bearer tokens. The service asks for its nonce first (use_dpop_nonce): the backend relays
// it, and the page signs again with it.
(() => {
  const { post } = window.Demo;
  const serviceUrl = document.body.dataset.serviceUrl;
  const publishableKey = document.body.dataset.publishableKey;
  let dpop;
  let nonce;

  async function client() {
    if (!dpop && window.ServiceWebDpop) {
      const candidate = new window.ServiceWebDpop.ServiceDpop();
      if ((await candidate.init(publishableKey, serviceUrl)).success) dpop = candidate;
    }
    return dpop;
  }

  /** POSTs to our backend with a fresh proof for (method, url), signing again once with the nonce it relays. */
  async function withProof(path, body, userid, method, url, accessToken) {
    for (let attempt = 0; ; attempt++) {
      const signed = await (await client())?.dpop({ userid, method, url, accessToken, nonce });
      const response = await post(path, signed?.success ? { ...body, dpop: signed.headers.DPoP } : body);
      if (attempt > 0 || response.status !== 401 || response.body.error !== 'use_dpop_nonce') return response;
      nonce = response.body.dpopNonce;
    }
  }

  /** /api/login with a proof for the token endpoint; then the backend reads userinfo with a proof for it. */
  async function login(body) {
    const response = await withProof('/api/login', body, body.userid, 'POST', `${serviceUrl}/oauth/token`);
    if (response.ok && response.body.tokenType === 'DPoP') {
      const checked = await withProof('/api/userinfo', {}, body.userid, 'GET', `${serviceUrl}/oauth/userinfo`, response.body.accessToken);
      document.querySelector('#app').dataset.userinfo = checked.ok ? 'device-bound' : 'refused';
    }
    return response;
  }

  window.DemoDpop = { login };
})();
