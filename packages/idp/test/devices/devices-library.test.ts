/**
 * service-web/devices (ServiceDevices, beside the core client whose device key it uses) against the real service (fake-indexeddb for storage, on
 * SQLite and, with SERVICE_TEST_DATABASE_URL, PostgreSQL): two clients register as two devices;
 * the first lists both, renames and revokes the second, whose next authenticate is OTP_NEEDED
 * with its stored key gone; "sign out everywhere else". The same flow runs in real Chromium in
 * examples/demo/test/devices.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { IDBFactory } from 'fake-indexeddb';
import { ServiceClient } from 'service-web';
import { ServiceDevices } from 'service-web/devices';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

/** Records service-web keeps in its IndexedDB database. */
function storedKeys(idb: IDBFactory): Promise<number> {
  return new Promise((resolve, reject) => {
    const open = idb.open('service-web');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      if (!db.objectStoreNames.contains('devices')) {
        db.close();
        resolve(0);
        return;
      }
      const count = db.transaction('devices').objectStore('devices').count();
      count.onsuccess = () => {
        db.close();
        resolve(count.result);
      };
    };
  });
}

describe('service-web device operations against the service', () => {
  let service: TestService;
  let clock = Date.now();
  before(async () => {
    service = await startTestService({ testMode: true, now: () => clock });
  });
  after(() => service.close());

  /** A browser (its own IndexedDB) that registered as a remembered device of `email`. */
  async function browser(email: string) {
    const idb = new IDBFactory();
    const client = new ServiceClient({ indexedDB: idb, fetch: service.browserFetch });
    assert.equal((await client.init(service.publishableKey, service.url)).status, 'INITIALIZED');
    clock += 31_000;
    const started = await client.authenticate(email, { rememberDevice: true });
    assert.equal(started.status, 'OTP_NEEDED');
    assert.equal((await client.verifyEmailOtp({ userid: email, otp: (started as { code: string }).code })).status, 'SUCCESS');
    const done = await client.verifyDevice({ userid: email });
    assert.equal(done.status, 'SUCCESS');
    // Device management is service-web/devices, initialized like the core: it uses the core's device key.
    const devices = new ServiceDevices({ indexedDB: idb, fetch: service.browserFetch });
    assert.equal((await devices.init(service.publishableKey, service.url)).status, 'INITIALIZED');
    return { client, devices, idb };
  }

  it('lists, renames, revokes; the revoked browser falls back to OTP_NEEDED and forgets its key', async () => {
    const email = uniqueEmail('lib');
    const first = await browser(email);
    const second = await browser(email);
    const listed = await first.devices.listDevices(email);
    assert.equal(listed.status, 'SUCCESS');
    if (listed.status !== 'SUCCESS') return;
    assert.deepEqual(
      listed.devices.map((d) => d.current),
      [false, true],
      'newest first; the caller is marked',
    );
    const other = listed.devices[0]?.id as string;
    assert.equal((await first.devices.renameDevice({ userid: email, deviceId: other, name: 'Tablet' })).status, 'SUCCESS');
    const seen = await second.devices.listDevices(email);
    assert.equal(seen.status === 'SUCCESS' && seen.devices.find((d) => d.current)?.name, 'Tablet');

    const revoked = await first.devices.revokeDevice({ userid: email, deviceId: other });
    assert.deepEqual([revoked.status, revoked.status === 'SUCCESS' && revoked.revoked], ['SUCCESS', 1]);
    assert.equal(await storedKeys(second.idb), 1);
    clock += 31_000;
    const next = await second.client.authenticate(email);
    assert.equal(next.status, 'OTP_NEEDED', 'not an error: the page shows the code form');
    assert.equal(await storedKeys(second.idb), 0, 'the refused key is gone');
    assert.equal((await second.devices.listDevices(email)).status, 'DEVICE_KEY_UNAVAILABLE');
  });

  it('sign out everywhere else; a refused device operation also forgets the key; bad input is refused', async () => {
    const email = uniqueEmail('lib');
    const first = await browser(email);
    const second = await browser(email);
    const third = await browser(email);
    const out = await first.devices.revokeOtherDevices(email);
    assert.deepEqual([out.status, out.status === 'SUCCESS' && out.revoked], ['SUCCESS', 2]);
    for (const other of [second, third]) {
      assert.equal((await other.devices.listDevices(email)).status, 'DEVICE_KEY_UNAVAILABLE');
      assert.equal(await storedKeys(other.idb), 0);
    }
    assert.equal((await first.devices.renameDevice({ userid: email, deviceId: 'dev_x', name: 'x' })).status, 'INVALID_REQUEST');
    const listed = await first.devices.listDevices(email);
    const mine = listed.status === 'SUCCESS' ? (listed.devices[0]?.id as string) : '';
    assert.equal((await first.devices.renameDevice({ userid: email, deviceId: mine, name: 'a\u202Eb' })).status, 'INVALID_REQUEST');
    assert.equal((await first.devices.listDevices('not an email')).status, 'INVALID_EMAIL');
    // Revoking itself signs this browser out here too.
    assert.equal((await first.devices.revokeDevice({ userid: email, deviceId: mine })).status, 'SUCCESS');
    assert.equal(await storedKeys(first.idb), 0);
  });

  it('before init, every operation answers NOT_INITIALIZED without a request; a refused key at init is INVALID_API_KEY', async () => {
    const devices = new ServiceDevices({ indexedDB: new IDBFactory(), fetch: service.browserFetch });
    assert.equal((await devices.listDevices(uniqueEmail('lib'))).status, 'NOT_INITIALIZED');
    assert.equal((await devices.revokeOtherDevices(uniqueEmail('lib'))).status, 'NOT_INITIALIZED');
    const refused = await devices.init('pk_unknown', service.url);
    assert.deepEqual([refused.status, refused.success], ['INVALID_API_KEY', false]);
  });
});
