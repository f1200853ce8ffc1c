import { defineConfig } from 'tsdown';
import { nodePackage } from '../../tsdown.node.ts';

// dist/index.js and dist/delegation/index.js, with the wire contract compiled in: the tarball
// installs with jose and @types/node alone. tsc -b writes dist/ first (service-idp's project
// reference reads its .d.ts there); this build then replaces it, file for file.
export default defineConfig(nodePackage(['src/index.ts', 'src/delegation/index.ts']));
