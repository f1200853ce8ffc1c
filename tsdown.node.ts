import type { UserConfig } from 'tsdown';

/**
 * The build of a published Node package (service-oauth-client, service-idp): ESM for Node 20.19,
 * module by module (unbundle: dist/ mirrors src/, for stack traces and the benchmark's profiles),
 * with the private service-protocol compiled in under dist/ so the tarball installs from the
 * registry alone. Each package adds its entries and anything else it compiles in.
 */
export function nodePackage(entry: string[], compiledIn: (string | RegExp)[] = []): UserConfig {
  const inlined = ['service-protocol', ...compiledIn];
  return {
    entry,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    outDir: 'dist',
    clean: true,
    unbundle: true,
    sourcemap: true,
    noExternal: inlined,
    dts: { resolve: inlined },
  };
}
