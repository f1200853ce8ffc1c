// node-oidc-provider ships no type declarations; the tests use it as an upstream provider.
declare module 'oidc-provider';
