#!/usr/bin/env node
// The file npm links as `service-idp`. It is committed (not built) so that the link exists
// from the first `npm install` of a fresh clone, before `npm run build` has made dist/.
import('../dist/cli.js').catch((error) => {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/cli.js')) {
    process.stderr.write('service-idp: not built yet. Run `npm run build` in the repository first.\n');
    process.exit(2);
  }
  throw error;
});
