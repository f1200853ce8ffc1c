import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accountUrl } from '../src/account.js';

describe('service-web/account', () => {
  it('builds the account page URL from the issuer, with or without a trailing slash or a path, and ui_locales', () => {
    assert.equal(accountUrl('https://id.example.com'), 'https://id.example.com/account');
    assert.equal(accountUrl('https://id.example.com/'), 'https://id.example.com/account');
    assert.equal(accountUrl('https://id.example.com', { uiLocales: 'fr de' }), 'https://id.example.com/account?ui_locales=fr+de');
  });
});
