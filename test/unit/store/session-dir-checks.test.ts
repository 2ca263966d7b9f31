import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { UserError } from '#src/core/errors.js';
import { openSessionStore } from '#src/store/index.js';

const base = mkdtempSync(join(tmpdir(), 'session-dir-checks-'));

describe('session directory checks (D3)', () => {
  it('D3: opening a regular file read-only is a one-line UserError naming it, not an empty session', () => {
    const file = join(base, 'session.json');
    writeFileSync(file, '[]');
    expect(() => openSessionStore(file, { create: false })).toThrow(UserError);
    expect(() => openSessionStore(file, { create: false })).toThrow(/session\.json: not a session directory/);
  });

  it('D3: opening a regular file for writing is a UserError, not a raw ENOTDIR', () => {
    const file = join(base, 'other.json');
    writeFileSync(file, '[]');
    expect(() => openSessionStore(file)).toThrow(UserError);
  });

  it('D3: an events.jsonl that is a directory is a UserError naming the file', () => {
    const dir = join(base, 'weird');
    mkdirSync(join(dir, 'events.jsonl'), { recursive: true });
    expect(() => openSessionStore(dir, { create: false })).toThrow(UserError);
    expect(() => openSessionStore(dir, { create: false })).toThrow(/events\.jsonl/);
  });
});
