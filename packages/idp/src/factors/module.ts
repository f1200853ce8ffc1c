import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { ServiceConfig } from '../config.js';
import type { Connections } from '../connections/service.js';
import type { Factor, MfaFactor } from '../sign-in/factor.js';
import type { Db } from '../storage/schema.js';
import type { DeviceProver } from './device-key/prover.js';
import type { NewDeviceSignIn } from './email-code/new-device.js';
import type { PasskeyMfa } from './passkey/mfa.js';
import type { PasskeyService } from './passkey/service.js';
import type { SentCodeDeps } from './sent-code.js';
import type { TotpFactorDeps } from './totp/factor.js';
import type { UpstreamService } from './upstream/service.js';

/** What every factor's MFA half is made from (the one code sender, the TOTP secrets' sealer, the user's method). */
export type MfaFactorDeps = SentCodeDeps & TotpFactorDeps;

/** A table a factor owns, and the column saying whose rows they are: a user's erasure deletes by it (users/store.ts). */
export interface FactorTable {
  readonly name: string;
  readonly userColumn: 'user_id' | 'email';
}

/** The languages the service ships a catalogue for (i18n/messages): a factor's messages come in each. */
export type FactorMessages = Readonly<Record<'en' | 'fr' | 'de' | 'es', Readonly<Record<string, string>>>>;

/**
 * What a user sees of a factor they can choose: the hosted enrollment list (MFA_ENROLLMENT_NEEDED's
 * methods, labelled by the page's `hosted.method.<method>` message) and the account page's factor
 * lines (the method in force, and the ones to change to).
 */
export interface FactorEnrollment {
  /** The message that names the method, in every language: `hosted.method.<method>` (the hosted page's script reads it). */
  readonly label: `hosted.method.${string}`;
  /** Offered to the user at an enrollment and on the account page; false: set by other means only (an operator, a backend). */
  readonly userEnrollable: boolean;
  /** The account page's change form offers it; false: the page adds it otherwise (a passkey, as a device). */
  readonly onAccountPage: boolean;
  /** Offered where the service runs this way (SMS through the development outbox reaches nobody in production); default always. */
  readonly offered?: (config: ServiceConfig) => boolean;
}

/**
 * What the composition gives every factor's routes: the built-in factors' services (made in
 * context.ts, which several wings share) and the HTTP context they read. A factor of its own
 * (a plug-in) makes its services from what its MFA half is given, or from nothing.
 */
export interface FactorRouteDeps {
  readonly issuer: string;
  /** Every MFA method of the service's factors, as the wire names them (the OpenAPI document's enumeration). */
  readonly mfaMethods: readonly string[];
  readonly placeHeader: string | undefined;
  readonly prover: DeviceProver;
  readonly newDeviceSignIn: NewDeviceSignIn;
  readonly passkeys: PasskeyService;
  readonly passkeyMfa: PasskeyMfa;
  /** The hosted pages' passkey ceremony binding (oidc/routes.ts hostedCeremonyContext). */
  readonly ceremonyContext: (request: FastifyRequest) => Promise<string | undefined>;
  readonly upstream: UpstreamService;
  readonly connections: Pick<Connections, 'forClient'>;
  /** The hosted pages' pending request cookie, its parser and the header naming the request. */
  readonly bindingCookie: string;
  readonly cookies: (header: string | undefined) => Map<string, string>;
  readonly requestHeader: string;
}

/**
 * One way to prove who signs in, as the registry (factors/index.ts) lists it: every list of
 * methods, metric label, enrollment choice and route of a factor derives from its module.
 * `first` and `second` (Factor) are the amr values a pass adds as a first factor and as the MFA
 * step; absent where it cannot stand.
 */
export interface FactorModule extends Factor {
  /** The MFA method this factor is (the wire's MfaMethod, service-protocol) where it can be a user's second factor. */
  readonly method?: string;
  /** Makes the MFA half the MFA step dispatches to by the session's method (sign-in/mfa-step.ts). */
  readonly mfa?: (deps: MfaFactorDeps) => MfaFactor;
  /**
   * The assurance each of its amr values reaches by itself (the ID token's acr, oidc/acr.ts): a
   * hardware-bound key is phishing-resistant, a device's key `device`; `mfa` is the pipeline's.
   */
  readonly acr?: Readonly<Record<string, 'phishingResistant' | 'device' | 'otp'>>;
  /** The label of its sign-ins in the metrics (service_idp_sign_ins_total's and second_factors_total's `method`), per role. */
  readonly metrics: { readonly first?: string; readonly second?: string };
  /** The tables it owns (its migrations are in storage/migrations): a user's rows there go with the user. */
  readonly tables: readonly FactorTable[];
  /** Deletes its expired rows (the periodic sweep, context.ts sweepExpired). */
  readonly sweep?: (db: Db, at: number) => Promise<void>;
  readonly enrollment?: FactorEnrollment;
  /** Its messages beside the service's catalogues (a factor's label, where the catalogues do not have it). */
  readonly messages?: FactorMessages;
  /** Its routes: `browser` under the browser API's prefix (/v1, the publishable key's client resolved), `root` at the origin's root. */
  readonly routes?: { readonly browser?: FastifyPluginAsync<FactorRouteDeps>; readonly root?: FastifyPluginAsync<FactorRouteDeps> };
}
