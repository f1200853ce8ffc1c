import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  BrowserPaths,
  CRYPTO_VERSIONS,
  DEVICE_ID_PATTERN,
  DEVICE_NAME_MAX_LENGTH,
  type DeviceChangeResponse,
  type DeviceInfo,
  DeviceOps,
  isValidDeviceName,
  type ListDevicesResponse,
} from 'service-protocol';
import { type TObject, type TProperties, Type } from 'typebox';
import type { ClientRecord } from '../clients/store.js';
import { ServiceError } from '../errors.js';
import { BODY_ERRORS, emailOf, errorResponses, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import type { DeviceCaller, DeviceService } from './service.js';

const DeviceId = Type.String({ pattern: DEVICE_ID_PATTERN.source });
const base = {
  userid: Type.String({ maxLength: 320 }),
  cryptoVersion: Type.Union(CRYPTO_VERSIONS.map((v) => Type.Literal(v))),
  deviceProof: Type.String({ maxLength: 4096 }),
};
/** A device request's body: the fields every one carries, and the operation's own. */
const body = <P extends TProperties>(extra: P): TObject<P & typeof base> =>
  Type.Object({ ...base, ...extra }, { additionalProperties: false });

const Time = Type.Integer({ description: 'Unix epoch milliseconds' });
const DeviceInfoSchema = wireBody<DeviceInfo>()(
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    browser: Type.String(),
    os: Type.String(),
    createdAt: Time,
    lastUsedAt: Type.Union([Time, Type.Null()]),
    current: Type.Boolean(),
    kind: Type.Union([Type.Literal('browser'), Type.Literal('passkey')]),
    synced: Type.Optional(Type.Boolean()),
  }),
);
const ListDevicesAnswer = wireBody<ListDevicesResponse>()(
  Type.Object({ status: Type.Literal('SUCCESS'), message: Type.String(), devices: Type.Array(DeviceInfoSchema) }),
);
const DeviceChangeAnswer = wireBody<DeviceChangeResponse>()(
  Type.Object({ status: Type.Literal('SUCCESS'), message: Type.String(), revoked: Type.Optional(Type.Integer()) }),
);
/** 401 also answers ERR_DEVICE_UNTRUSTED: the proof was refused. */
const listErrors = errorResponses(...BODY_ERRORS, 401, 403, ...SERVER_ERRORS);
/** …and 404 ERR_DEVICE_NOT_FOUND for a `deviceId` that is not one of the caller's devices. */
const changeErrors = errorResponses(...BODY_ERRORS, 401, 403, 404, ...SERVER_ERRORS);

const ListSchema = { body: body({}), response: { 200: ListDevicesAnswer, ...listErrors } };
const RenameSchema = {
  body: body({ deviceId: DeviceId, name: Type.String({ maxLength: DEVICE_NAME_MAX_LENGTH * 4 }) }),
  response: { 200: DeviceChangeAnswer, ...changeErrors },
};
const RevokeSchema = { body: body({ deviceId: DeviceId }), response: { 200: DeviceChangeAnswer, ...changeErrors } };
const RevokeOthersSchema = { body: body({}), response: { 200: DeviceChangeAnswer, ...listErrors } };

/** POST /v1/devices/{list,rename,revoke,revoke-others}: the calling device proves itself for the operation. */
export const deviceRoutes: FastifyPluginAsyncTypebox<{ devices: DeviceService }> = async (app, { devices }) => {
  const caller = (request: {
    client: ClientRecord;
    body: { userid: string; cryptoVersion: string; deviceProof: string };
  }): DeviceCaller => {
    return {
      client: request.client,
      email: emailOf(request.body.userid),
      cryptoVersion: request.body.cryptoVersion,
      deviceProof: request.body.deviceProof,
    };
  };

  app.post(BrowserPaths.listDevices, { schema: ListSchema }, async (request): Promise<ListDevicesResponse> => {
    const { userId, deviceId } = await devices.authorize(caller(request), DeviceOps.list);
    const list = await devices.list(request.client.id, userId, deviceId);
    return { status: 'SUCCESS', message: `${list.length} trusted device(s).`, devices: list };
  });

  app.post(BrowserPaths.renameDevice, { schema: RenameSchema }, async (request): Promise<DeviceChangeResponse> => {
    // Checked before the proof is spent: a bad name costs the caller nothing and changes nothing.
    if (!isValidDeviceName(request.body.name)) {
      throw new ServiceError(
        'ERR_REQUEST_INVALID',
        `A device name is 1 to ${DEVICE_NAME_MAX_LENGTH} characters, without control or direction characters.`,
      );
    }
    const { userId } = await devices.authorize(caller(request), DeviceOps.rename);
    await devices.rename(request.client.id, userId, request.body.deviceId, request.body.name);
    return { status: 'SUCCESS', message: 'Device renamed.' };
  });

  app.post(BrowserPaths.revokeDevice, { schema: RevokeSchema }, async (request): Promise<DeviceChangeResponse> => {
    const { userId } = await devices.authorize(caller(request), DeviceOps.revoke);
    await devices.revoke(request.client.id, userId, request.body.deviceId);
    return { status: 'SUCCESS', message: 'Device revoked: it must verify by email to sign in again.', revoked: 1 };
  });

  app.post(BrowserPaths.revokeOtherDevices, { schema: RevokeOthersSchema }, async (request): Promise<DeviceChangeResponse> => {
    const { userId, deviceId } = await devices.authorize(caller(request), DeviceOps.revokeOthers);
    const revoked = await devices.revokeAll(request.client.id, userId, deviceId);
    return { status: 'SUCCESS', message: `Signed out everywhere else (${revoked} device(s)).`, revoked };
  });
};
