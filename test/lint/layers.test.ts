import { describe, expect, it } from '@jest/globals';
import { lintMessages } from '#support/lint-probe.js';

const restricted = (filePath: string, source: string) =>
  lintMessages('no-restricted-imports', filePath, source);

describe('layers point down (eslint no-restricted-imports)', () => {
  it('a lower layer importing a higher one is an error naming both layers', async () => {
    const found = await restricted('src/runtime/probe.ts', "export { x } from '../session/index.js';\n");
    expect(found).toEqual([expect.stringMatching(/runtime layer must not import the session layer/)]);
    expect(
      await restricted('src/messages/probe.ts', "export { x } from '../estimate/index.js';\n"),
    ).toHaveLength(1);
    expect(await restricted('src/store/probe.ts', "export { x } from '../runtime/index.js';\n")).toHaveLength(
      1,
    );
  });

  it('only the bin imports the CLI: not the library, not a framework adapter', async () => {
    for (const file of ['src/session/probe.ts', 'src/adapters/probe.ts', 'src/index.ts'])
      expect(
        await restricted(
          file,
          "export { main } from './cli/main.js';\nexport { y } from '../cli/main.js';\n",
        ),
      ).not.toEqual([]);
    expect(await restricted('src/bin/probe.ts', "export { main } from '../cli/main.js';\n")).toEqual([]);
  });

  it('the CLI reaches the machines, the runtime and the store only through the session', async () => {
    const found = await restricted(
      'src/cli/commands/probe.ts',
      [
        "export { a } from '../../runtime/index.js';",
        "export { b } from '../../store/session-store.js';",
        "export type { C } from '../../../machines/index.js';",
      ].join('\n') + '\n',
    );
    expect(found).toEqual([
      expect.stringMatching(/src\/cli uses runtime only through src\/session/),
      expect.stringMatching(/src\/cli uses store only through src\/session/),
      expect.stringMatching(/src\/cli uses machines only through src\/session/),
    ]);
    const allowed = [
      "export { a } from '../session/index.js';",
      "export { b } from '../formats/index.js';",
      "export { c } from '../io/atomic-write.js';",
      "export { d } from '../core/errors.js';",
    ].join('\n');
    expect(await restricted('src/cli/probe.ts', `${allowed}\n`)).toEqual([]);
  });

  it('src/ never imports dev/ or test/', async () => {
    const found = await restricted(
      'src/cli/commands/probe.ts',
      "export { a } from '../../../dev/bench/main.js';\nexport { b } from '../../../test/support/cli.js';\n",
    );
    expect(found).toHaveLength(2);
  });

  it('imports downward and within a layer are allowed', async () => {
    const source = [
      "export { a } from '../core/errors.js';",
      "export { b } from '../messages/message.js';",
      "export { c } from '../../machines/index.js';",
      "export { d } from '../providers/index.js';",
      "export { e } from '../runtime/index.js';",
    ].join('\n');
    expect(await restricted('src/session/probe.ts', `${source}\n`)).toEqual([]);
    expect(await restricted('src/adapters/probe.ts', "export { s } from '../session/index.js';\n")).toEqual(
      [],
    );
  });

  it('tests name the code and the shared helpers by alias, never by a relative climb out of their folder', async () => {
    const climbs = [
      "export { a } from '../../../src/core/text.js';",
      "export { b } from '../../../machines/index.js';",
      "export { c } from '../../../dev/bench/corpus.js';",
      "export { d } from '../../support/deferred.js';",
    ].join('\n');
    const found = await restricted('test/unit/core/probe.test.ts', `${climbs}\n`);
    expect(found).toEqual([
      expect.stringMatching(/by its alias \(#src/),
      expect.stringMatching(/by its alias \(#src/),
      expect.stringMatching(/by its alias \(#src/),
      expect.stringMatching(/as #support\//),
    ]);
    const aliased = [
      "export { a } from '#src/core/text.js';",
      "export { b } from '#machines/index.js';",
      "export { c } from '#dev/bench/corpus.js';",
      "export { d } from '#support/deferred.js';",
      "export { e } from './neighbour.js';",
    ].join('\n');
    expect(await restricted('test/unit/core/probe.test.ts', `${aliased}\n`)).toEqual([]);
    expect(await restricted('test/support/oracles/probe.ts', "export { o } from '../oracle.js';\n")).toEqual(
      [],
    );
  });
});
