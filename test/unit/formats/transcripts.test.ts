import { describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readSessionFile, selectSession, type ImportedSession } from '#src/formats/index.js';
import { fixture, rawDir } from '#support/paths.js';

const rawFiles = readdirSync(rawDir).flatMap((d) => readdirSync(join(rawDir, d)).map((f) => `${d}/${f}`));

function counts(s: ImportedSession) {
  return {
    messages: s.messages.length,
    toolCalls: s.messages.reduce((n, m) => n + (m.toolCalls?.length ?? 0), 0),
    toolResults: s.messages.filter((m) => m.role === 'tool').length,
    parallel: s.messages.filter((m) => (m.toolCalls?.length ?? 0) > 1).length,
  };
}

describe('real transcripts import (D2)', () => {
  it('D2: the bundled corpus has its 18 session files', () => {
    expect(rawFiles).toHaveLength(18);
  });

  it.each(rawFiles)('D2: %s imports without error into valid sessions', (file) => {
    const r = readSessionFile(join(rawDir, file));
    expect(r.sessions.length).toBeGreaterThan(0);
    for (const s of r.sessions) {
      expect(s.messages.length).toBeGreaterThan(0);
      // Every tool result names a call id; every call has an id and a name.
      for (const m of s.messages) {
        if (m.role === 'tool') expect(m.toolCallId).toBeTruthy();
        for (const c of m.toolCalls ?? []) expect(c.id && c.name).toBeTruthy();
      }
    }
  });
});

describe('pinned counts per format (D2)', () => {
  const pin = (file: string, selector?: string) =>
    counts(selectSession(readSessionFile(join(rawDir, file)), selector));

  it('D2 mini-swe-agent: django-16560 = 292 messages, 145 calls / 145 results', () => {
    expect(pin('gruckion__mini-swe-agent/django__django-16560.traj.json')).toEqual({
      messages: 292,
      toolCalls: 145,
      toolResults: 145,
      parallel: 0,
    });
  });

  it('D2 mini-swe-agent: replies with two bash blocks are format errors, not calls (sphinx-9258)', () => {
    expect(pin('gruckion__mini-swe-agent/sphinx-doc__sphinx-9258.traj.json')).toMatchObject({
      toolCalls: 98,
      toolResults: 98,
    });
  });

  it('D2 swe-agent v1 function calling: marshmallow-1867 keeps its 13 call ids', () => {
    const file =
      'SWE-agent__SWE-agent/function_calling_replace_from_source__marshmallow-code__marshmallow-1867.traj';
    expect(pin(file)).toEqual({ messages: 28, toolCalls: 13, toolResults: 13, parallel: 0 });
    const s = selectSession(readSessionFile(join(rawDir, file)));
    expect(s.messages[2].toolCalls?.[0]).toMatchObject({ id: 'call_9diWc1DYm4RLmPfHgIaP2wd', name: 'bash' });
  });

  it('D2 swe-agent v0 classic: pydicom-1458 pairs 12 text actions with the next observation', () => {
    const file = 'SWE-agent__SWE-agent/gpt4__pydicom__pydicom-1458.traj';
    // The final `submit` has no observation in history.
    expect(pin(file)).toEqual({ messages: 26, toolCalls: 12, toolResults: 11, parallel: 0 });
    const s = selectSession(readSessionFile(join(rawDir, file)));
    expect(s.messages.find((m) => m.toolCalls)?.toolCalls?.[0].name).toBe('create');
  });

  it('D2 openhands event stream: 3 sessions (one per line), finish calls have no observation', () => {
    const r = readSessionFile(
      join(rawDir, 'All-Hands-AI__OpenHands/multi_swe_bench__examples__output.jsonl'),
    );
    expect(r.sessions.map((s) => s.id)).toEqual([
      'ponylang__ponyc-4595',
      'ponylang__ponyc-4593',
      'ponylang__ponyc-4588',
    ]);
    expect(r.sessions.map(counts)).toEqual([
      { messages: 47, toolCalls: 23, toolResults: 22, parallel: 0 },
      { messages: 68, toolCalls: 33, toolResults: 32, parallel: 0 },
      { messages: 101, toolCalls: 49, toolResults: 49, parallel: 0 },
    ]);
    const first = r.sessions[0].messages;
    expect(first[0].role).toBe('system');
    expect(first.find((m) => m.role === 'tool')?.metadata?.exitCode).toBe(0);
  });

  it('D2 openhands resolver (2024 flat): 2 sessions paired by adjacency', () => {
    const r = readSessionFile(join(rawDir, 'All-Hands-AI__OpenHands/resolver__mock_output__output.jsonl'));
    expect(r.sessions.map(counts)).toEqual([
      { messages: 8, toolCalls: 3, toolResults: 3, parallel: 0 },
      { messages: 44, toolCalls: 21, toolResults: 21, parallel: 0 },
    ]);
    expect(r.sessions[0].id).toBe('neubig/pr-viewer#5');
  });

  it('D2 claude-code: parallel tool_use lines with one message.id merge into one batch (1af7fc5e: fan-out 5)', () => {
    const r = readSessionFile(
      join(rawDir, 'd-kimuson__claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl'),
    );
    const s = selectSession(r);
    expect(counts(s)).toEqual({ messages: 21, toolCalls: 12, toolResults: 12, parallel: 2 });
    expect(Math.max(...s.messages.map((m) => m.toolCalls?.length ?? 0))).toBe(5);
    const failed = s.messages.find((m) => m.metadata?.isError === true);
    expect(failed?.toolName).toBe('Write');
  });

  it('D2 claude-code: sidechains are separate sessions; main selected by default (fe5e1c67: 167 calls)', () => {
    const r = readSessionFile(
      join(rawDir, 'd-kimuson__claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl'),
    );
    expect(r.sessions).toHaveLength(6);
    const main = selectSession(r);
    expect(main.meta.sidechain).toBe(false);
    expect(counts(main)).toEqual({ messages: 23, toolCalls: 11, toolResults: 11, parallel: 3 });
    const total = r.sessions.reduce((n, s) => n + counts(s).toolCalls, 0);
    expect(total).toBe(167);
    const side = r.sessions.slice(1);
    expect(side.every((s) => s.meta.sidechain === true)).toBe(true);
    // Each sidechain is linked to the Task call that started it.
    const taskIds = main.messages
      .flatMap((m) => m.toolCalls ?? [])
      .filter((c) => c.name === 'Task')
      .map((c) => c.id);
    expect(side.map((s) => s.meta.parentToolCallId).sort()).toEqual([...taskIds].sort());
  });

  it('D2 aider: one session per "# aider chat started" section (afi-core: 9)', () => {
    const r = readSessionFile(join(rawDir, 'AFI-Protocol__afi-core/aider.chat.history.md'));
    expect(r.sessions).toHaveLength(9);
    expect(r.sessions[0]).toMatchObject({
      id: '2025-07-15T11:38:37',
      meta: { model: 'gpt-4o', aiderVersion: '0.85.1' },
    });
    const users = r.sessions.reduce((n, s) => n + s.messages.filter((m) => m.role === 'user').length, 0);
    expect(users).toBeGreaterThan(0);
  });

  it('D2 aider: /run output becomes a `run` tool result (add-test.md)', () => {
    const s = selectSession(readSessionFile(join(rawDir, 'Aider-AI__aider/add-test.md')));
    expect(counts(s)).toEqual({ messages: 13, toolCalls: 5, toolResults: 5, parallel: 0 });
    const run = s.messages.find((m) => m.role === 'tool' && m.toolName === 'run');
    expect(run?.content).toContain('test session starts');
    // The editorial intro and front matter are not part of the transcript.
    expect(JSON.stringify(s.messages)).not.toContain('nav_order');
  });
});

describe('format-note fixtures: Codex and Gemini CLI (D2)', () => {
  it('D2 codex: response_items import, event_msg duplicates skipped, exit codes joined, compacted kept', () => {
    const r = readSessionFile(fixture('codex-rollout.jsonl'));
    expect(r.format).toBe('codex');
    const [s] = r.sessions;
    expect(s.id).toBe('0199a000-0000-7000-8000-000000000001');
    expect(s.meta.model).toBe('gpt-5-codex');
    expect(s.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'user',
      'user',
      'assistant',
    ]);
    expect(counts(s)).toEqual({ messages: 12, toolCalls: 4, toolResults: 3, parallel: 1 });
    expect(s.messages[3].reasoningDetails?.[0]).toMatchObject({
      encrypted_content: 'gAAAAABo-opaque-base64==',
    });
    expect(s.messages[4].metadata?.exitCode).toBe(1);
    expect(s.messages[6].toolCalls?.[0].freeformInput).toContain('Begin Patch');
    expect(s.messages[9].metadata?.codex).toBe('compacted');
  });

  it('D2 gemini-cli: chunks join, tool_use pairs by tool_id, each init starts a session', () => {
    const r = readSessionFile(fixture('gemini-stream.jsonl'));
    expect(r.format).toBe('gemini-cli');
    expect(r.sessions.map((s) => s.id)).toEqual([
      '3f1c9a52-aaaa-4bbb-8ccc-000000000001',
      '3f1c9a52-aaaa-4bbb-8ccc-000000000002',
    ]);
    const [a, b] = r.sessions;
    expect(a.messages[2]).toMatchObject({ role: 'assistant', content: "I'll list the files first." });
    expect(counts(a)).toEqual({ messages: 7, toolCalls: 2, toolResults: 2, parallel: 0 });
    const err = a.messages.find((m) => m.metadata?.isError === true);
    expect(err?.content).toBe('File not found: /app/tsconfig.jsonx');
    expect(counts(b)).toEqual({ messages: 4, toolCalls: 1, toolResults: 1, parallel: 0 });
  });
});

describe('Claude Code details (D2)', () => {
  const r = readSessionFile(fixture('claude-code-small.jsonl'));

  it('D2: one message.id → one assistant message with both calls; thinking kept verbatim', () => {
    const main = selectSession(r);
    expect(main.id).toBe('sess-1');
    expect(main.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(main.messages[1].toolCalls?.map((c) => c.id)).toEqual(['toolu_1', 'toolu_2']);
    expect(main.messages[1].reasoningDetails).toEqual([
      { type: 'thinking', thinking: '', signature: 'sigA' },
    ]);
    expect(main.messages[1].metadata).toMatchObject({
      messageId: 'msg_A',
      model: 'claude-sonnet-4-20250514',
    });
  });

  it('D2: duplicate copies of a tool_result are dropped and counted; toolUseResult is not imported', () => {
    const main = selectSession(r);
    expect(main.messages.filter((m) => m.toolCallId === 'toolu_1')).toHaveLength(1);
    expect(main.meta.duplicateResultsDropped).toBe(1);
    expect(JSON.stringify(main.messages)).not.toContain('numLines');
  });

  it('D2: sidechain lines stay out of the main history, in their own session linked to the Task call', () => {
    expect(r.sessions).toHaveLength(2);
    const side = r.sessions[1];
    expect(side.meta).toMatchObject({ sidechain: true, parentToolCallId: 'toolu_2' });
    expect(side.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(side.messages[2].metadata?.isError).toBe(true);
    expect(JSON.stringify(selectSession(r).messages)).not.toContain('cat b.ts');
    expect(selectSession(r, '1')).toBe(side);
    expect(selectSession(r, 'sess-1/sidechain-1')).toBe(side);
  });
});
