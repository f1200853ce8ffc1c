import type { CryptoVersion } from 'service-protocol';

/** What a remembered device keeps: CryptoKey objects are stored by structured clone, never exported. */
export interface DeviceRecord {
  deviceId: string;
  keyPair: CryptoKeyPair;
  cryptoVersion: CryptoVersion;
  createdAt: number;
}

export const DATABASE_NAME = 'service-web';
const DATABASE_VERSION = 1;
const STORE_NAME = 'devices';

/** One record per service, client and user, so two apps or two accounts never share a key. */
export function deviceRecordKey(baseUrl: string, clientId: string, normalizedEmail: string): string {
  return `${baseUrl}|${clientId}|${normalizedEmail}`;
}

export interface DeviceStore {
  get(key: string): Promise<DeviceRecord | undefined>;
  put(key: string, record: DeviceRecord): Promise<void>;
  delete(key: string): Promise<void>;
}

/**
 * IndexedDB-backed store. Every call opens and closes the database so that no connection
 * blocks an upgrade in another tab. Each call gives up after `timeoutMs` (a blocked or
 * hanging IndexedDB must not hang the login).
 */
export function createDeviceStore(factory: IDBFactory, timeoutMs: number): DeviceStore {
  const write = (operation: (store: IDBObjectStore) => IDBRequest) =>
    withDatabase(factory, timeoutMs, 'readwrite', operation).then(() => {});
  return {
    get: (key) => withDatabase(factory, timeoutMs, 'readonly', (store) => store.get(key)).then(asRecord),
    put: (key, record) => write((store) => store.put(record, key)),
    delete: (key) => write((store) => store.delete(key)),
  };
}

function asRecord(value: unknown): DeviceRecord | undefined {
  const record = value as Partial<DeviceRecord> | undefined;
  if (typeof record?.deviceId === 'string' && record.keyPair?.privateKey) return record as DeviceRecord;
}

const problem = (what: string) => new Error(`IndexedDB ${what}`);

function withDatabase(
  factory: IDBFactory,
  timeoutMs: number,
  mode: IDBTransactionMode,
  operation: (store: IDBObjectStore) => IDBRequest,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let db: IDBDatabase | undefined;
    const finish = (error: unknown, value?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      try {
        db?.close();
      } catch {
        // closing a broken connection can throw; nothing more to release
      }
      if (error) reject(error);
      else resolve(value);
    };
    const timer = setTimeout(() => finish(problem('did not answer in time')), timeoutMs);
    try {
      const open = factory.open(DATABASE_NAME, DATABASE_VERSION);
      open.onupgradeneeded = () => {
        if (!open.result.objectStoreNames.contains(STORE_NAME)) open.result.createObjectStore(STORE_NAME);
      };
      open.onblocked = () => finish(problem('blocked'));
      open.onerror = () => finish(open.error ?? problem('open failed'));
      open.onsuccess = () => {
        db = open.result;
        if (settled) {
          db.close();
          return;
        }
        try {
          const transaction = db.transaction(STORE_NAME, mode);
          const req = operation(transaction.objectStore(STORE_NAME));
          let result: unknown;
          req.onsuccess = () => {
            result = req.result;
          };
          // Resolve on commit, so a put is durable before we report the device as remembered.
          transaction.oncomplete = () => finish(undefined, result);
          transaction.onerror = transaction.onabort = () => finish(transaction.error ?? req.error ?? problem('transaction failed'));
        } catch (error) {
          finish(error);
        }
      };
    } catch (error) {
      finish(error);
    }
  });
}
