import { afterAll, describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createEstimator, freeEncoders } from '#src/estimate/index.js';
import { readSessionFile } from '#src/formats/index.js';
import { rawDir } from '#support/paths.js';
import { msg, textOf, type Message } from '#src/messages/message.js';
import {
  createOfflineSummarizer,
  rebuildHistory,
  summarySections,
  validateSummary,
  OFFLINE_MODEL,
  ABSTRACT_INSTRUCTIONS,
  ABSTRACT_MAX_OUTPUT_TOKENS,
} from '#src/summary/index.js';

afterAll(freeEncoders);
const est = createEstimator();
const RAW = rawDir;

function corpus(): Array<{ name: string; messages: Message[] }> {
  const out: Array<{ name: string; messages: Message[] }> = [];
  for (const dir of readdirSync(RAW).sort())
    for (const f of readdirSync(join(RAW, dir)).sort())
      for (const s of readSessionFile(join(RAW, dir, f)).sessions)
        out.push({ name: `${f}#${s.id}`, messages: s.messages });
  return out;
}

/** Independent oracle: calls whose results report failure, and files that tools wrote. */
function oracle(messages: Message[]): { failing: string[]; modified: string[] } {
  const calls = new Map<string, { name: string; args: Record<string, unknown> }>();
  const failing: string[] = [];
  const modified: string[] = [];
  for (const m of messages) {
    for (const c of m.toolCalls ?? []) {
      let args: Record<string, unknown> = {};
      try {
        args = JSON.parse(c.arguments) as Record<string, unknown>;
      } catch {
        /* not JSON */
      }
      calls.set(c.id, { name: c.name, args });
    }
    if (m.role !== 'tool' || !m.toolCallId) continue;
    const call = calls.get(m.toolCallId);
    if (!call) continue;
    const exit = m.metadata?.exitCode;
    const failed = (typeof exit === 'number' && exit !== 0 && exit !== -1) || m.metadata?.isError === true;
    const command = typeof call.args.command === 'string' ? call.args.command : undefined;
    if (failed && command && !/^(view|create|str_replace|insert|undo_edit)$/.test(command))
      failing.push(command.split('\n')[0].trim().slice(0, 200));
    const path = call.args.file_path ?? call.args.path;
    const writes =
      /^(Write|Edit|MultiEdit)$/.test(call.name) || /^(create|str_replace|insert)$/.test(command ?? '');
    if (!failed && writes && typeof path === 'string' && !textOf(m.content).startsWith('ERROR'))
      modified.push(path);
  }
  return { failing: [...new Set(failing)], modified: [...new Set(modified)] };
}

describe('§14 offline summarizer on the real session corpus', () => {
  const sessions = corpus();
  const summarizer = createOfflineSummarizer({ estimator: est });

  it('§14: reports provider offline / compactor-offline-v1 and needs no network', () => {
    expect(summarizer.provider).toBe('offline');
    expect(summarizer.model).toBe(OFFLINE_MODEL);
    expect(sessions.length).toBeGreaterThanOrEqual(20);
  });

  it('§14: making one counts nothing until it summarizes (every session makes one, few summarize)', async () => {
    const own = createEstimator();
    const made = createOfflineSummarizer({ estimator: own });
    const { textHits, textMisses } = own.stats();
    expect(textHits + textMisses).toBe(0);
    await made.summarize({
      model: 'offline',
      messages: [msg.user('Fix the build.')],
      instructions: 'Summarize.',
    });
    expect(own.stats().textMisses).toBeGreaterThan(0);
  });

  it('§14/L8: every failing command and every modified file appears; output within budget; all sections', async () => {
    let failingChecked = 0;
    let modifiedChecked = 0;
    for (const s of sessions) {
      const r = await summarizer.summarize({
        model: 'x',
        messages: s.messages,
        instructions: '',
        maxOutputTokens: 4096,
      });
      expect(r.finishReason).toBe('stop');
      expect(est.text(r.text)).toBeLessThanOrEqual(4096);
      for (const h of summarySections()) expect(r.text).toContain(`## ${h}`);
      const { failing, modified } = oracle(s.messages);
      for (const f of failing) {
        if (!r.text.includes(f)) throw new Error(`${s.name}: failing command missing: ${f}`);
        failingChecked++;
      }
      for (const f of modified) {
        if (!r.text.includes(f)) throw new Error(`${s.name}: modified file missing: ${f}`);
        modifiedChecked++;
      }
    }
    expect(failingChecked).toBeGreaterThan(20);
    expect(modifiedChecked).toBeGreaterThan(20);
  });

  it('§14: commands keep their exact text and exit codes (mini-swe-agent django-12276)', async () => {
    const s = sessions.find((x) => x.name.startsWith('django__django-12276'))!;
    const r = await summarizer.summarize({ model: 'x', messages: s.messages, instructions: '' });
    const commands = r.text.split('## Commands (exact, with exit codes)')[1].split('\n## ')[0];
    expect(commands).toContain("- `nl -ba django/forms/widgets.py | sed -n '440,470p'` → exit 0");
    expect(commands).toContain("- `sed -i '454,455d' django/forms/widgets.py` → exit 0");
    expect(r.text).toMatch(/## Files modified[\s\S]*- django\/forms\/widgets\.py/);
    expect(r.text).toContain('"DO NOT MODIFY: Tests, configuration files (pyproject.toml, setup.cfg, etc.)"');
  });

  it('§14: deterministic: the same input gives a byte-identical summary, even from a new instance', async () => {
    const s = sessions.find((x) => x.name.startsWith('fe5e1c67'))!;
    const a = await summarizer.summarize({ model: 'x', messages: s.messages, instructions: '' });
    const b = await createOfflineSummarizer().summarize({
      model: 'x',
      messages: s.messages,
      instructions: '',
    });
    expect(b.text).toBe(a.text);
  });

  it('§14: a small budget drops whole lines by priority, says so, and never exceeds it', async () => {
    const s = sessions.find((x) => x.name.startsWith('sympy__sympy-13091'))!;
    const r = await summarizer.summarize({
      model: 'x',
      messages: s.messages,
      instructions: '',
      maxOutputTokens: 900,
    });
    expect(r.finishReason).toBe('stop');
    expect(est.text(r.text)).toBeLessThanOrEqual(900);
    expect(r.text).toMatch(/more omitted/);
    const tooSmall = await summarizer.summarize({
      model: 'x',
      messages: s.messages,
      instructions: '',
      maxOutputTokens: 40,
    });
    // Under the full template's floor the condensed (abstract) rendering takes over.
    expect(tooSmall.finishReason).toBe('stop');
    expect(tooSmall.text).toMatch(/^## Goal\n- /);
    expect(est.text(tooSmall.text)).toBeLessThanOrEqual(40);
    const noRoom = await summarizer.summarize({
      model: 'x',
      messages: s.messages,
      instructions: '',
      maxOutputTokens: 6,
    });
    expect(noRoom.finishReason).toBe('length');
    expect(est.text(noRoom.text)).toBeLessThanOrEqual(6);
  });

  it('§14: its summaries pass validation and shrink real sessions', async () => {
    for (const name of ['psf__requests-1142', 'sphinx-doc__sphinx-9258', 'ponylang__ponyc-4588']) {
      const s = sessions.find((x) => x.name.includes(name))!;
      const inputTokens = est.history(s.messages);
      const r = await summarizer.summarize({ model: 'x', messages: s.messages, instructions: '' });
      expect(validateSummary(r, { inputTokens, estimator: est })).toEqual({ ok: true });
    }
  });
});

describe('§14 offline summarizer facts (hand-made session)', () => {
  const call = (id: string, name: string, args: object) => ({ id, name, arguments: JSON.stringify(args) });
  const h: Message[] = [
    msg.user("Fix the flaky test in api.py. Don't touch the migrations. Only use pytest."),
    msg.assistant('', [call('1', 'Bash', { command: 'pytest tests/test_api.py' })]),
    msg.tool('1', 'E   AssertionError: 1 != 2\nFAILED tests/test_api.py::test_x', 'Bash', {
      metadata: { isError: true },
    }),
    msg.assistant('', [call('2', 'Edit', { file_path: 'api.py', old_string: 'a', new_string: 'b' })]),
    msg.tool('2', 'The file api.py has been updated.', 'Edit', { metadata: { isError: false } }),
    msg.assistant('', [call('3', 'Bash', { command: 'npm run dev', run_in_background: true })]),
    msg.tool('3', 'Command running in background with ID: bash_7', 'Bash'),
    msg.assistant('', [call('4', 'Bash', { command: 'pytest tests/test_api.py' })]),
    msg.tool('4', '1 passed\n[Command finished with exit code 0]', 'Bash'),
    msg.assistant('The fix works now, all green.', [call('5', 'Bash', { command: 'rm -rf migrations' })]),
  ];

  it('§14/L8: restrictions, failed-then-passed checks, running session ids, unanswered calls, claims as claims', async () => {
    const r = await createOfflineSummarizer({ estimator: est }).summarize({
      model: 'x',
      messages: h,
      instructions: '',
    });
    const section = (name: string) => r.text.split(`## ${name}`)[1].split('\n## ')[0];
    expect(section('User restrictions')).toContain(`"Don't touch the migrations."`);
    expect(section('User restrictions')).toContain('"Only use pytest."');
    expect(section('Failed')).toContain('`pytest tests/test_api.py` → failed: E AssertionError: 1 != 2');
    expect(section('Failed')).toContain('latest run: exit 0');
    expect(section('Completed checks')).toContain('`pytest tests/test_api.py` → exit 0 (×2)');
    expect(section('Running')).toContain('`npm run dev` → still running');
    expect(section('Pending approvals & session ids')).toContain('session bash_7 still running');
    expect(section('Pending approvals & session ids')).toContain(
      'awaiting result or approval: Bash `rm -rf migrations`',
    );
    expect(section('Not run')).toContain('`rm -rf migrations` → not run');
    expect(section('Files modified')).toContain('- api.py');
    expect(section('Plan & next steps')).toContain(
      '(its own claim, not evidence): The fix works now, all green.',
    );
    expect(section('Completed checks')).not.toContain('all green');
  });

  it('L4/§14: the abstract band (VT Code cap 150) gets a condensed rendering: goal, outcomes, failing checks, files modified, within the cap', async () => {
    const failing = [
      ...h,
      msg.tool('5', 'removed', 'Bash'),
      msg.assistant('', [call('6', 'Bash', { command: 'npm test' })]),
      msg.tool('6', 'FAIL src/x.test.js\n[Command finished with exit code 1]', 'Bash'),
    ];
    const r = await createOfflineSummarizer({ estimator: est }).summarize({
      model: 'x',
      messages: failing,
      instructions: ABSTRACT_INSTRUCTIONS,
      maxOutputTokens: ABSTRACT_MAX_OUTPUT_TOKENS,
    });
    expect(r.finishReason).toBe('stop');
    expect(est.text(r.text)).toBeLessThanOrEqual(150);
    expect(r.text).toMatch(/^## Goal\n- Fix the flaky test in api\.py/);
    const section = (name: string) => r.text.split(`## ${name}`)[1]?.split('\n## ')[0] ?? '';
    expect(section('Completed checks')).toContain('`pytest tests/test_api.py` → exit 0');
    // Failing = still failing: the pytest failure that later passed is an outcome, not a failure.
    expect(section('Failed')).toContain('`npm test` → exit 1');
    expect(section('Failed')).not.toContain('pytest');
    expect(section('Files modified')).toContain('api.py');
    // Condensed: not the twelve-section template.
    expect(r.text).not.toContain('## Commands (exact, with exit codes)');
    // A small output cap alone (no abstract instructions) also gets the condensed form.
    const capped = await createOfflineSummarizer({ estimator: est }).summarize({
      model: 'x',
      messages: h,
      instructions: '',
      maxOutputTokens: 120,
    });
    expect(capped.finishReason).toBe('stop');
    expect(est.text(capped.text)).toBeLessThanOrEqual(120);
    expect(capped.text).toMatch(/^## Goal\n/);
  });

  it('§14: a previous summary in the fork is carried forward, not lost', async () => {
    const s = createOfflineSummarizer({ estimator: est });
    const first = await s.summarize({ model: 'x', messages: h, instructions: '' });
    const rebuilt = rebuildHistory(h, first.text, {
      estimator: est,
      continuityTailTokens: 1024,
      capacity: null,
    });
    const next = [...rebuilt.history, msg.user('now also update the docs')];
    const second = await s.summarize({ model: 'x', messages: next, instructions: '' });
    expect(second.text).toContain("Don't touch the migrations.");
    expect(second.text).toContain('- api.py');
    expect(second.text).toContain('now also update the docs');
  });
});
