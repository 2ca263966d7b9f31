#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx's loader, so `npx compactor` works
// right after `npm ci` with no build step.
import { register } from 'tsx/esm/api';

register();
await import('../cli/run-main.ts');
