import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { branchName, dirName, idOfDirName } from '#src/adapters/shared/sync-point.js';

/** Every name a conversation owns on disk: its branches and its sync file. */
const namesOf = (id: string) => [
  branchName(id, 0),
  branchName(id, 1),
  branchName(id, 12),
  `${dirName(id)}.sync.json`,
];

describe('conversation storage names', () => {
  it('two different ids never share a name, whatever they contain (branches, sync files, hashed names)', () => {
    const id = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: 'grapheme', maxLength: 20 }),
      fc.string({ unit: 'binary', maxLength: 6 }),
      fc.constantFrom(
        '\ud800',
        '\udc00',
        '\ufffd',
        'a',
        'a.fork-1',
        'a.sync.json',
        'a%2Efork-1',
        '%h-abc',
        '.',
        '..',
        '',
      ),
      fc.string({ minLength: 100, maxLength: 300 }),
    );
    fc.assert(
      fc.property(id, id, (a, b) => {
        fc.pre(a !== b);
        const mine = new Set(namesOf(a));
        expect(namesOf(b).filter((n) => mine.has(n))).toEqual([]);
      }),
    );
  });

  it('names are safe file names that give their id back unless hashed; plain ids keep their old names', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (id) => {
        const name = dirName(id);
        expect(name).toMatch(/^[A-Za-z0-9_%-]+$/);
        expect(name.length).toBeLessThanOrEqual(120);
        expect(idOfDirName(name)).toBe(id);
      }),
    );
    expect(dirName('user_abc-123')).toBe('user_abc-123');
    expect(dirName('victim.fork-1')).toBe('victim%2Efork-1');
    expect(dirName('x'.repeat(200))).toMatch(/^%h-[0-9a-f]{32}$/);
    expect(idOfDirName(dirName('x'.repeat(200)))).toBeUndefined();
    expect(idOfDirName('victim.fork-1')).toBeUndefined();
  });
});
