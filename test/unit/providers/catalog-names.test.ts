import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { resolveRoute } from '#src/providers/catalog.js';
import { RouteError } from '#src/core/errors.js';

// Names that exist on every plain object's prototype chain.
const PROTOTYPE_NAMES = ['constructor', '__proto__'];

describe('provider names are looked up as own keys only', () => {
  for (const name of PROTOTYPE_NAMES)
    it(`D3: --provider ${name} is an unknown provider (RouteError), not a crash`, () => {
      expect(() => resolveRoute({ provider: name, model: 'm', baseUrl: 'http://127.0.0.1:9' }, {})).toThrow(
        RouteError,
      );
    });

  it('D3: a catalog file does not turn prototype names into providers', () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-names-'));
    const file = join(dir, 'catalog.json');
    writeFileSync(file, JSON.stringify({ providers: {} }));
    expect(() =>
      resolveRoute(
        { provider: 'constructor', model: 'm', baseUrl: 'http://127.0.0.1:9', catalogFile: file },
        {},
      ),
    ).toThrow(/unknown provider "constructor"/);
  });
});
