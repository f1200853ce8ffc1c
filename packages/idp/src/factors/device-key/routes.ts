import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BrowserPaths, type DeviceChallengeResponse } from 'service-protocol';
import { Type } from 'typebox';
import { BODY_ERRORS, errorResponses, SERVER_ERRORS, wireBody } from '../../http/schemas.js';
import type { DeviceProver } from './prover.js';

const DeviceChallengeAnswer = wireBody<DeviceChallengeResponse>()(
  Type.Object({ challenge: Type.String(), expiresIn: Type.Integer({ description: 'seconds' }) }),
);

/** POST /v1/device-challenges: a single-use challenge for a remembered device to sign (a device proof, proof.ts). */
export const deviceKeyRoutes: FastifyPluginAsyncTypebox<{ prover: DeviceProver }> = async (app, { prover }) => {
  app.post(
    BrowserPaths.deviceChallenge,
    { schema: { response: { 200: DeviceChallengeAnswer, ...errorResponses(...BODY_ERRORS, 401, 403, ...SERVER_ERRORS) } } },
    async (request) => prover.issueChallenge(request.client),
  );
};
