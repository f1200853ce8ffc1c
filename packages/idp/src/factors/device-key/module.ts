import type { FactorModule } from '../module.js';
import { deviceKeyFactor } from './factor.js';
import { deviceKeyRoutes } from './routes.js';

/** The remembered device's key: a first factor only; its keys live with the devices (devices/), so it owns no table. */
export const deviceKeyModule: FactorModule = {
  ...deviceKeyFactor,
  acr: { swk: 'device' },
  metrics: { first: 'device' },
  tables: [],
  routes: { browser: async (app, deps) => app.register(deviceKeyRoutes, { prover: deps.prover }) },
};
