#!/usr/bin/env node
// The `compactor` executable: compiled to dist/ by `npm run build` (no TypeScript at run time).
import '../cli/run-main.js';
