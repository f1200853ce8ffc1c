import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';

/**
 * What the HTTP app knows that no wing does (app.ts fills it): each part is declared by the
 * module that owns its type (i18n/page-language.ts the pages' `languages`,
 * http/browser-client.ts every client's `origins`), so this module, which every wing imports,
 * imports none of them.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging, as Fastify's own FastifyRequest is.
export interface HttpContext {}

/**
 * A wing's routes, by where the app mounts them (app.ts): `root` at the origin's root, `admin`
 * inside the admin API's credential hook (/admin/v1, http/admin-routes.ts AdminRoutes). The browser API's
 * routes (/v1) are the sign-in's and the factors' (factors/module.ts), mounted with the client resolved.
 */
export interface WingRoutes {
  readonly root?: (http: HttpContext) => FastifyPluginAsync;
  readonly admin?: FastifyPluginAsyncTypebox;
}

/** What a wing gives the composition when it opens: its services, and what the app and the sweeper take from it. */
export interface OpenedWing<Services extends object> {
  readonly services: Services;
  readonly routes?: WingRoutes;
  /** Deletes its expired rows (the periodic sweep; storage/sweeper.ts). */
  readonly sweep?: (at: number) => Promise<void>;
  /** Finishes opening what needs the database (read once the whole composition is made, in wing order). */
  readonly ready?: () => Promise<void>;
  /** Releases what it holds (timers, connections) when the service closes. */
  readonly close?: () => void;
}

/**
 * One wing of the service (docs/architecture.md): `open` makes its services from what earlier
 * wings made (`Needs`, checked by the compiler against what the composition holds when the wing
 * is added, so a wing cannot use one opened after it).
 */
export interface Wing<Needs, Services extends object> {
  readonly name: string;
  readonly open: (deps: Needs) => OpenedWing<Services>;
}

/** A wing from its name and its `open`; the compiler reads what it needs and gives from `open`'s types. */
export function defineWing<Needs, Services extends object>(
  name: string,
  open: (deps: Needs) => OpenedWing<Services>,
): Wing<Needs, Services> {
  return { name, open };
}

/** A wing as the composition keeps it, once opened: its name and its parts. */
export type OpenedPart = { readonly name: string } & Omit<OpenedWing<object>, 'services'>;

/**
 * The composition, folded over the wings in dependency order (context.ts): each `with` opens one
 * wing on what the composition holds so far and adds its services. No service is defined later
 * than its first use, and none is opened twice.
 */
export class Composition<Context extends object> {
  private constructor(
    readonly context: Context,
    readonly parts: readonly OpenedPart[],
  ) {}

  static of<Base extends object>(base: Base): Composition<Base> {
    return new Composition(base, []);
  }

  with<Services extends object>(wing: Wing<Context, Services>): Composition<Context & Services> {
    const { services, ...parts } = wing.open(this.context);
    const twice = Object.keys(services).filter((key) => key in this.context);
    if (twice.length > 0) throw new Error(`wing ${wing.name} opens ${twice.join(', ')} again`);
    return new Composition({ ...this.context, ...services }, [...this.parts, { name: wing.name, ...parts }]);
  }
}
