import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IDBFactory } from 'fake-indexeddb';
import { createDeviceProof, generateDeviceKeyPair } from '../src/device-proof.ts';
import { createDeviceStore, deviceRecordKey } from '../src/device-store.ts';

test('a non-extractable key survives IndexedDB and still signs, but can never be exported', async () => {
  const store = createDeviceStore(new IDBFactory(), 1000);
  const key = deviceRecordKey('http://127.0.0.1:8080', 'client_1', 'ann@example.com');
  assert.equal(key, 'http://127.0.0.1:8080|client_1|ann@example.com');
  const keyPair = await generateDeviceKeyPair(crypto);
  await store.put(key, { deviceId: 'dev_1', keyPair, cryptoVersion: 'v1', createdAt: 1 });

  const record = await store.get(key);
  assert.ok(record);
  assert.equal(record.deviceId, 'dev_1');
  assert.ok(record.keyPair.privateKey instanceof CryptoKey);
  assert.equal(record.keyPair.privateKey.extractable, false);
  await assert.rejects(crypto.subtle.exportKey('jwk', record.keyPair.privateKey));
  await assert.rejects(crypto.subtle.exportKey('pkcs8', record.keyPair.privateKey));
  // The restored key is usable: this is what authenticate does on the next login.
  const jws = await createDeviceProof(crypto, record.keyPair.privateKey, {
    deviceId: 'dev_1',
    cryptoVersion: 'v1',
    sub: 'ann@example.com',
    nonce: 'n',
  });
  assert.equal(jws.split('.').length, 3);
});

test('records are separate per key, replaceable and deletable; each IDBFactory is its own device', async () => {
  const factory = new IDBFactory();
  const store = createDeviceStore(factory, 1000);
  const first = await generateDeviceKeyPair(crypto);
  const second = await generateDeviceKeyPair(crypto);
  await store.put('a', { deviceId: 'dev_a', keyPair: first, cryptoVersion: 'v1', createdAt: 1 });
  await store.put('a', { deviceId: 'dev_b', keyPair: second, cryptoVersion: 'v1', createdAt: 2 });
  assert.equal((await store.get('a'))?.deviceId, 'dev_b');
  assert.equal(await store.get('b'), undefined);
  assert.equal(await createDeviceStore(new IDBFactory(), 1000).get('a'), undefined);
  await store.delete('a');
  assert.equal(await store.get('a'), undefined);
});

test('a failing IndexedDB rejects instead of hanging', async () => {
  const broken = {
    open: () => {
      throw new Error('SecurityError');
    },
  } as unknown as IDBFactory;
  await assert.rejects(createDeviceStore(broken, 1000).get('a'), /SecurityError/);
  const silent = { open: () => ({}) } as unknown as IDBFactory;
  await assert.rejects(createDeviceStore(silent, 50).get('a'), /did not answer/);
});
