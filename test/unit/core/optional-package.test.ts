import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { loadOptional } from '#src/core/optional-package.js';
import { PeerDependencyError } from '#src/core/errors.js';

// The library installs with xstate, zod, tiktoken and the provider HTTP layer only; the proxy's
// Prometheus client and the inspector's WebSocket server are optional peers loaded on use.
describe('optional peer dependencies', () => {
  it('a missing package is a one-line error naming the feature and what to install', async () => {
    const missing = 'compactor-no-such-package';
    const failed = loadOptional(() => import(missing), missing, 'compactor serve');
    await expect(failed).rejects.toBeInstanceOf(PeerDependencyError);
    await expect(failed).rejects.toThrow(
      /^compactor serve needs the optional peer dependency "compactor-no-such-package": npm install compactor-no-such-package$/,
    );
  });

  it('any other failure while loading is not mistaken for a missing package', async () => {
    const broken = loadOptional(() => Promise.reject(new SyntaxError('bad module')), 'ws', 'the inspector');
    await expect(broken).rejects.toThrow(/^bad module$/);
  });

  it('the package asks a library user for only what the library runs on', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    for (const onUse of ['prom-client', 'ws', '@statelyai/inspect']) {
      expect(pkg.dependencies).not.toHaveProperty(onUse);
      expect(pkg.peerDependenciesMeta[onUse]?.optional).toBe(true);
    }
    expect(Object.keys(pkg.dependencies).length).toBeLessThanOrEqual(7);
  });
});
