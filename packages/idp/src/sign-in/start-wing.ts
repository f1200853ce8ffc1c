import type { ClientService } from '../clients/service.js';
import { defineWing } from '../composition/wing.js';
import type { DeviceKeySignIn } from '../factors/device-key/sign-in.js';
import type { NewDeviceSignIn } from '../factors/email-code/new-device.js';
import { createSignInStart } from './start.js';

/** The way in (POST /v1/authenticate): picks the first factor, a remembered device's key or the emailed code. */
export const signInStartWing = defineWing(
  'sign-in-start',
  ({ deviceKey, newDeviceSignIn, clients }: { deviceKey: DeviceKeySignIn; newDeviceSignIn: NewDeviceSignIn; clients: ClientService }) => ({
    services: { signInStart: createSignInStart({ deviceKey, emailCode: newDeviceSignIn, clients }) },
  }),
);
