import { describe, it, expect, afterAll } from '@jest/globals';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '#support/cli.js';
import { createEstimator } from '#src/estimate/estimator.js';
import { readSessionFile } from '#src/formats/index.js';
import { isRequestHistoryValid, projectRequest } from '#src/projection/index.js';
import { msg, type Message } from '#src/messages/message.js';
import { readmeSession } from '../fixtures/projection/readme-session.js';

// A working directory whose config selects the chars estimator: deterministic and WASM-free.
const dir = mkdtempSync(join(tmpdir(), 'compactor-project-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'compactor.config.json'), JSON.stringify({ encoding: 'chars', preset: 'vtcode' }));

function canonicalFile(name: string, messages: Message[]): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ format: 'compactor.canonical', version: 1, id: 'readme', messages }));
  return path;
}
const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

const session = readmeSession({ shape: 'sequential' });
const input = canonicalFile('readme.json', session);

const run = (args: string[], cwd = dir) => runCli(args, { cwd });

describe('compactor project', () => {
  it('C10: --json reports the diagnostics fields; values match projectRequest', async () => {
    const r = await run(['project', 'readme.json', '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as Record<string, unknown>;
    const est = createEstimator({ encoding: 'chars' });
    const expected = projectRequest(session, {
      limits: { prefixTokens: est.message(session[0]) },
      policy: { preset: 'vtcode' },
      estimator: est,
      leadingSystemAsPrefix: true,
    }).diagnostics;
    expect(j).toMatchObject({
      originalTokens: expected.originalTokens,
      projectedTokens: expected.projectedTokens,
      clearedResults: expected.clearedResults,
      protectedBatches: expected.protectedBatches,
      protectedResults: expected.protectedResults,
      clearedInputs: expected.clearedInputs,
      localTrigger: 40_000,
      evidenceBudget: 20_000,
      format: 'canonical',
      session: 'readme',
    });
    expect(expected.clearedResults).toBeGreaterThan(0);
  });

  it('B2: --prefix-tokens defaults to the leading system messages; the flag overrides it', async () => {
    const est = createEstimator({ encoding: 'chars' });
    const j = JSON.parse((await run(['project', input, '--json', '--capacity', '100000'])).out);
    expect(j.prefixTokens).toBe(est.message(session[0]));
    expect(j.budgets.historyBudget).toBe(100_000 - est.message(session[0]));
    const k = JSON.parse(
      (await run(['project', input, '--json', '--capacity', '100000', '--prefix-tokens', '0'])).out,
    );
    expect(k.budgets.historyBudget).toBe(100_000);
  });

  it('B2: project counts the leading system prompt once (as the prefix, not again as history)', async () => {
    const est = createEstimator({ encoding: 'chars' });
    const system = msg.system(`You are a careful agent. ${'Follow the house rules. '.repeat(400)}`);
    const rest = session.slice(1);
    const h = [system, ...rest];
    const f = canonicalFile('big-system.json', h);
    const prefix = est.message(system);
    // A capacity where the history alone stays below the trigger, but history + system again would not.
    const restTokens = est.history(rest);
    const capacity = prefix + Math.ceil((restTokens + prefix / 2) / 0.6);
    const j = JSON.parse(
      (await run(['project', f, '--json', '--capacity', String(capacity), '--trigger', '10000000'])).out,
    );
    expect(j.prefixTokens).toBe(prefix);
    expect(j.localTrigger).toBe(Math.floor(((capacity - prefix) * 3) / 5));
    expect(j.originalTokens).toBe(restTokens);
    expect(j.clearingApplied).toBe(false);
    expect(j.projectedMessages).toBe(h.length);
  });

  it('C3/C4: clearing flags reach the policy (--keep-recent-batches, --keep-tool-uses, --no-clearing)', async () => {
    const small = JSON.parse(
      (
        await run([
          'project',
          input,
          '--json',
          '--trigger',
          '100',
          '--keep-recent-batches',
          '0',
          '--keep-tool-uses',
          '1',
        ])
      ).out,
    );
    const more = JSON.parse(
      (
        await run([
          'project',
          input,
          '--json',
          '--trigger',
          '100',
          '--keep-recent-batches',
          '3',
          '--keep-tool-uses',
          '1',
        ])
      ).out,
    );
    expect(small.evidenceBudget).toBe(50);
    expect(small.protectedBatches).toBe(1);
    expect(more.protectedBatches).toBe(3);
    const off = JSON.parse(
      (await run(['project', input, '--json', '--trigger', '100', '--no-clearing'])).out,
    );
    expect(off).toMatchObject({ clearedResults: 0, clearingApplied: false });
  });

  it('C7: --no-clear-inputs keeps large inputs of cleared calls', async () => {
    const big = `"${'a'.repeat(2_000)}"`;
    const h: Message[] = [
      msg.user('u'),
      msg.assistant('', [{ id: 'w', name: 'write', arguments: big }]),
      msg.tool('w', 'x'.repeat(4_000)),
      msg.assistant('', [{ id: 'k', name: 'read', arguments: '{}' }]),
      msg.tool('k', 'x'.repeat(4_000)),
    ];
    const f = canonicalFile('inputs.json', h);
    const on = JSON.parse(
      (
        await run([
          'project',
          f,
          '--json',
          '--trigger',
          '10',
          '--keep-recent-batches',
          '0',
          '--keep-tool-uses',
          '1',
        ])
      ).out,
    );
    const off = JSON.parse(
      (
        await run([
          'project',
          f,
          '--json',
          '--trigger',
          '10',
          '--keep-recent-batches',
          '0',
          '--keep-tool-uses',
          '1',
          '--no-clear-inputs',
        ])
      ).out,
    );
    expect(on.clearedInputs).toBe(1);
    expect(off.clearedInputs).toBe(0);
    expect(off.clearedResults).toBe(1);
  });

  it('R2/D3: --out writes the projection atomically in the input format; the input file is never modified', async () => {
    const before = sha(input);
    const out = join(dir, 'projected.json');
    const r = await run(['project', input, '--trigger', '5000', '--out', out]);
    expect(r.code).toBe(0);
    expect(sha(input)).toBe(before);
    const back = readSessionFile(out);
    expect(back.format).toBe('canonical');
    const messages = back.sessions[0].messages;
    expect(isRequestHistoryValid(messages)).toBe(true);
    expect(
      messages.some((m) => typeof m.content === 'string' && m.content.includes('"cleared":"tool_result"')),
    ).toBe(true);
    expect(messages).toHaveLength(session.length);
  });

  it('D2: --to selects another output format', async () => {
    const out = join(dir, 'projected-anthropic.json');
    const r = await run(['project', input, '--out', out, '--to', 'anthropic', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).outFormat).toBe('anthropic');
    expect(readSessionFile(out).format).toBe('anthropic');
  });

  it('C10: the human report shows before → after, the reason and a per-tool table', async () => {
    const r = await run(['project', input]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/tokens: [\d,]+ → [\d,]+/);
    expect(r.out).toMatch(/reached, clearing ran/);
    expect(r.out).toMatch(/evidence window: \d+ batch/);
    expect(r.out).toMatch(/^tool\s+cleared\s+kept\s+cleared tokens\s+kept tokens$/m);
    expect(r.out).toMatch(/^read_file\s+0\s+6\s/m);
    expect(r.out).toMatch(/^run_command\s+6\s+0\s/m);
    const below = await run(['project', input, '--trigger', '10000000']);
    expect(below.out).toMatch(/clearing did not run/);
    expect(below.out).toMatch(/below trigger/);
  });

  it('D3: bad flags and inputs give one-line errors, exit 2, and write nothing', async () => {
    const out = join(dir, 'never.json');
    for (const args of [
      ['project'],
      ['project', input, 'extra'],
      ['project', input, '--keep-tool-uses', 'two'],
      ['project', input, '--keep-recent-batches=-1'],
      ['project', input, '--to', 'yaml', '--out', out],
      ['project', input, '--from', 'nope'],
      ['project', input, '--bogus'],
      ['project', input, '--out', input],
      ['project', join(dir, 'missing.json'), '--out', out],
    ]) {
      const r = await run(args);
      expect(r.code).toBe(2);
      expect(r.err.trimEnd().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(/^compactor: /);
    }
    expect(existsSync(out)).toBe(false);
    expect(readFileSync(input, 'utf8')).toContain('compactor.canonical');
  });
});
