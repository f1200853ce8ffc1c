/**
 * Where the admin API lives: a prefix of its own, outside the browser scope and its CORS.
 * In a module of its own so the CLI names it without loading the routes.
 */
export const ADMIN_PREFIX = '/admin/v1';
