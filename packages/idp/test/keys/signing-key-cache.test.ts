/**
 * The signing-key cache: each node serves the keys it read for its cache lifetime
 * (KEY_CACHE_SECONDS, or SERVICE_IDP_KEY_CACHE_SECONDS), then reads them again, so a rotation
 * made elsewhere reaches it within that bound; a retired key stays published for the ID token
 * lifetime plus that bound. Two keyrings on one database stand for two nodes, on a clock the
 * test moves. Runs on SQLite and PostgreSQL (helpers.ts). multi-node.test.ts checks the same
 * with three `service-idp start` processes.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { createSealer } from '../../src/crypto/seal.js';
import { ID_TOKEN_TTL_SECONDS, KEY_CACHE_SECONDS } from '../../src/defaults.js';
import { createKeyring } from '../../src/keys/keyring.js';
import { createKeyStore } from '../../src/keys/store.js';
import { migrate } from '../../src/storage/migrations.js';
import { openTestDatabase } from '../support/helpers.js';

describe('signing-key cache', () => {
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  const clock = { at: Date.now() };
  const sealer = createSealer(randomBytes(32), 'signing-key');
  const node = (cacheSeconds?: number) =>
    createKeyring({
      store: createKeyStore(database.db),
      sealer,
      now: () => clock.at,
      ...(cacheSeconds === undefined ? {} : { cacheSeconds }),
    });
  before(async () => {
    database = await openTestDatabase();
    await migrate(database.db);
  });
  after(async () => {
    await database.db.destroy();
    await database.drop();
  });

  const kids = async (keyring: ReturnType<typeof node>) => (await keyring.jwks()).keys.map((k) => k.kid);

  for (const cacheSeconds of [undefined, 2]) {
    const bound = cacheSeconds ?? KEY_CACHE_SECONDS;
    it(`a node serves a rotation made elsewhere once its cache (${bound} s${cacheSeconds ? ', configured' : ''}) has run out, not before`, async () => {
      const a = node(cacheSeconds);
      const b = node(cacheSeconds);
      await a.ensure();
      const old = (await a.active()).kid;
      const newKid = await b.rotate();
      assert.notEqual(newKid, old);
      clock.at += bound * 1000 - 1;
      assert.equal((await a.active()).kid, old, 'still the cached key just before the bound');
      assert.ok(!(await kids(a)).includes(newKid));
      clock.at += 1;
      assert.equal((await a.active()).kid, newKid, 'the new key at the bound');
      assert.ok((await kids(a)).includes(old), 'the retired key is still published');
    });

    it(`keeps a retired key published for the ID token lifetime plus ${bound} s`, async () => {
      const a = node(cacheSeconds);
      const retired = (await a.active()).kid;
      await a.rotate();
      clock.at += (ID_TOKEN_TTL_SECONDS + bound) * 1000 - 1000;
      assert.ok((await kids(node(cacheSeconds))).includes(retired), 'published just before the end of its grace');
      clock.at += 2000;
      assert.ok(!(await kids(node(cacheSeconds))).includes(retired), 'gone after it');
    });
  }

  it('reads SERVICE_IDP_KEY_CACHE_SECONDS (default KEY_CACHE_SECONDS) and refuses values out of 1 to 300', () => {
    assert.equal(loadConfig({}, {}).keyCacheSeconds, KEY_CACHE_SECONDS);
    assert.equal(loadConfig({}, { SERVICE_IDP_KEY_CACHE_SECONDS: '2' }).keyCacheSeconds, 2);
    for (const bad of ['0', '301', '1.5', 'soon'])
      assert.throws(() => loadConfig({}, { SERVICE_IDP_KEY_CACHE_SECONDS: bad }), /invalid SERVICE_IDP_KEY_CACHE_SECONDS/);
  });
});
