import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer, type ServeOptions } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { startFakeAgentUpstream, type FakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import { estimateBodyTokens } from '#support/fake-window.js';
import {
  claudeCodeHeaders,
  claudeCodeRequest,
  codexHeaders,
  codexRequest,
  opencodeHeaders,
  opencodeRequest,
  qwenHeaders,
  qwenRequest,
} from '#support/serve/agent-requests.js';

afterAll(() => freeEncoders());

const started: Array<RunningServer | FakeAgentUpstream> = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function setup(window: number, options: ServeOptions = {}) {
  const upstream = await startFakeAgentUpstream({ window });
  const lines: string[] = [];
  const server = await startServer({
    port: 0,
    anthropicUpstream: upstream.url,
    openaiUpstream: upstream.url,
    capacity: window,
    http: { retries: 0 },
    log: (line) => lines.push(line),
    ...options,
  });
  started.push(upstream, server);
  return { upstream, server, lines };
}

/** POSTs `text` as the agent does and reads the whole answer (streamed or not). */
async function send(server: RunningServer, path: string, text: string, headers: Record<string, string>) {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers, body: text });
  return { res, answer: await res.text() };
}

const SESSION = '5b0f2c1e-7d3a-4c1b-9e8f-2a6d4b3c1e0f';

describe('Claude Code as it is installed', () => {
  it('D2: its system message inside messages, thinking signatures, cache breakpoints and beta fields reach the upstream byte for byte', async () => {
    const { server, upstream } = await setup(32_000);
    const text = JSON.stringify(claudeCodeRequest(SESSION, 2, 40, 8_000));
    const { res } = await send(server, '/v1/messages?beta=true', text, claudeCodeHeaders(SESSION));
    expect(res.status).toBe(200);
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0].raw).toBe(text);
    expect(upstream.requests[0].path).toBe('/v1/messages?beta=true');
    expect(upstream.requests[0].headers['anthropic-beta']).toBe(claudeCodeHeaders(SESSION)['anthropic-beta']);
    // The conversation is the one Claude Code names (header and metadata.user_id agree).
    expect(res.headers.get('x-compactor-session')).toBe(SESSION);
    expect(res.headers.get('x-compactor-max-tokens-lowered')).toBeNull();
  });

  it('B2: max_tokens 64000 in a 32000-token window is lowered to the room left, said in a header; every other byte as the agent sent it', async () => {
    const { server, upstream } = await setup(32_000);
    // The turn before put its breakpoint on the result before; this request moved it on.
    const before = JSON.stringify(claudeCodeRequest(SESSION, 1));
    expect(
      (await send(server, '/v1/messages?beta=true', before, claudeCodeHeaders(SESSION))).res.status,
    ).toBe(200);
    const sent = claudeCodeRequest(SESSION, 2);
    const { res } = await send(
      server,
      '/v1/messages?beta=true',
      JSON.stringify(sent),
      claudeCodeHeaders(SESSION),
    );
    expect(res.status).toBe(200);
    const said = /^64000->(\d+)$/.exec(res.headers.get('x-compactor-max-tokens-lowered') ?? '');
    expect(said).not.toBeNull();
    const lowered = Number(said?.[1]);
    const received = upstream.requests[1].body;
    expect(received).toEqual({ ...sent, max_tokens: lowered });
    // Byte for byte (key order and escapes too): the provider's cached prefix still matches.
    expect(upstream.requests[1].raw).toBe(
      JSON.stringify(sent).replace('"max_tokens":64000', `"max_tokens":${lowered}`),
    );
    // Input and answer fill the window, and the fake (holding the request to it) took it.
    const input = estimateBodyTokens(received);
    expect(input + lowered).toBeLessThanOrEqual(32_000);
    expect(input + lowered).toBeGreaterThan(31_000);
  });

  it('moving its cache breakpoint to the newest result keeps one conversation, and the upstream gets the breakpoints as sent', async () => {
    // Stored, so a conversation that split would show as a second branch directory.
    const dataDir = mkdtempSync(join(tmpdir(), 'compactor-agent-shapes-'));
    dirs.push(dataDir);
    const { server, upstream } = await setup(32_000, { dataDir });
    // Without its id the conversation is found by its content, which the marker must not split.
    const noId = (reads: number) =>
      JSON.stringify({ ...claudeCodeRequest(SESSION, reads, 40, 8_000), metadata: {} });
    const first = 1;
    const second = 2;
    const headers = { ...claudeCodeHeaders(SESSION) } as Record<string, string>;
    delete headers['x-claude-code-session-id'];
    const a = await send(server, '/v1/messages', noId(first), headers);
    const b = await send(server, '/v1/messages', noId(second), headers);
    expect([a.res.status, b.res.status]).toEqual([200, 200]);
    expect(b.res.headers.get('x-compactor-session')).toBe(a.res.headers.get('x-compactor-session'));
    const state = (await (
      await fetch(`${server.url}/compactor/sessions/${a.res.headers.get('x-compactor-session')}`)
    ).json()) as any;
    expect(state.branches).toBe(1);
    expect(upstream.requests[1].raw).toBe(noId(second));
    expect(upstream.requests[1].raw.match(/cache_control/g)).toHaveLength(3);
  });

  it('when clearing rewrites the request, the breakpoints are still where this request put them (never piled up from earlier ones)', async () => {
    const { server, upstream, lines } = await setup(8_000);
    for (let reads = 1; reads <= 12 && !lines.some((l) => l.includes('cleared')); reads++) {
      const text = JSON.stringify(claudeCodeRequest(SESSION, reads));
      expect((await send(server, '/v1/messages', text, claudeCodeHeaders(SESSION))).res.status).toBe(200);
    }
    expect(lines.at(-1)).toMatch(/tool result\(s\) cleared or shortened, max output lowered 64000->\d+$/);
    const last = upstream.requests.at(-1)!;
    // Two on the system prompt and one on the newest result, as Claude Code sent them.
    expect(last.raw.match(/cache_control/g)).toHaveLength(3);
    expect(last.body.messages.at(-1).content[0].cache_control).toEqual({ type: 'ephemeral' });
    expect(last.body.messages[1]).toEqual({
      role: 'system',
      content: expect.stringContaining('Available agent types'),
    });
  });

  it('S2: its conversation compacts through the upstream, system message and thinking blocks included, and goes on', async () => {
    const { server, upstream, lines } = await setup(8_000, {
      session: { policy: { enabled: false, clearWhenPassBuysFewerTurns: 0 } },
    });
    for (let reads = 1; reads <= 12 && !lines.some((l) => l.includes('compacted')); reads++) {
      const text = JSON.stringify(claudeCodeRequest(SESSION, reads));
      expect((await send(server, '/v1/messages', text, claudeCodeHeaders(SESSION))).res.status).toBe(200);
    }
    expect(lines.at(-1)).toMatch(/compacted \(local, 1 summary call\(s\)\)/);
    expect(upstream.refusals).toEqual([]);
    const summary = upstream.requests.find((r) => r.raw.includes('You are writing a checkpoint'));
    expect(summary?.headers['anthropic-beta']).toContain('mid-conversation-system-2026-04-07');
    // After the compaction the agent's own request still goes with what it carried.
    const last = upstream.requests.at(-1)!;
    expect(last.body.context_management).toEqual({
      edits: [{ type: 'clear_thinking_20251015', keep: 'all' }],
    });
    expect(last.body.output_config).toEqual({ effort: 'high' });
  });

  it('B2: a system prompt and tools larger than the window are refused as the API refuses a long prompt', async () => {
    const { server, upstream, lines } = await setup(2_000);
    const body = claudeCodeRequest(SESSION, 0);
    body.system.push({ type: 'text', text: 'Follow the rules. '.repeat(800) } as any);
    const { res, answer } = await send(
      server,
      '/v1/messages',
      JSON.stringify(body),
      claudeCodeHeaders(SESSION),
    );
    expect(res.status).toBe(400);
    const error = JSON.parse(answer);
    expect(error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(error.error.message).toMatch(/^prompt is too long: \d+ tokens > 2000 maximum/);
    expect(upstream.requests).toHaveLength(0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^refused \(400\): anthropic: prompt is too long/);
  });
});

describe('Codex as it is installed', () => {
  it('D2: developer messages, encrypted reasoning and custom tools pass byte for byte; the thread is the session and the answer gets a reserve', async () => {
    const thread = '019a6c1e-2f3b-7c4d-8e5f-6a7b8c9d0e1f';
    const { server, upstream, lines } = await setup(16_000);
    const text = JSON.stringify(codexRequest(thread, 2));
    const { res } = await send(server, '/v1/responses', text, codexHeaders(thread));
    expect(res.status).toBe(200);
    expect(upstream.requests[0].raw).toBe(text);
    expect(res.headers.get('x-compactor-session')).toBe(thread);
    const state = (await (await fetch(`${server.url}/compactor/sessions/${thread}`)).json()) as any;
    // No output limit sent: a quarter of the window is kept for the answer.
    expect(state.reservedOutput).toBe(4_000);
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(`^session ${thread}: fake-model: \\d+ -> \\d+ tokens; sent as it came$`),
      ),
    ]);
  });
});

describe('opencode as it is installed', () => {
  it('two runs of the same task are two sessions (their x-session-id), never one', async () => {
    const { server } = await setup(16_000);
    const task = JSON.stringify(opencodeRequest('Read alpha.txt and tell me its marker.'));
    const a = await send(server, '/v1/chat/completions', task, opencodeHeaders('ses_run_one'));
    const b = await send(server, '/v1/chat/completions', task, opencodeHeaders('ses_run_two'));
    expect(a.res.headers.get('x-compactor-session')).toBe('ses_run_one');
    expect(b.res.headers.get('x-compactor-session')).toBe('ses_run_two');
  });
});

describe('Qwen Code as it is installed', () => {
  it('B2: a system prompt larger than the window is a 400 in the OpenAI shape that says the prompt is too long', async () => {
    const { server, upstream } = await setup(2_000);
    const { res, answer } = await send(
      server,
      '/v1/chat/completions',
      JSON.stringify(qwenRequest(400)),
      qwenHeaders,
    );
    expect(res.status).toBe(400);
    const error = JSON.parse(answer);
    expect(error).toMatchObject({ error: { type: 'invalid_request_error' } });
    expect(error.error.message).toMatch(/^prompt is too long: \d+ tokens > 2000 maximum/);
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('what happened is visible to the operator', () => {
  /** Codex's thread read further each request until a line says `until`; the lines and answers. */
  async function readUntil(options: ServeOptions, until: RegExp) {
    const thread = '019a6c1e-0000-7c4d-8e5f-6a7b8c9d0e1f';
    const { server, lines } = await setup(8_000, options);
    const statuses: number[] = [];
    for (let reads = 1; reads <= 12 && !lines.some((l) => until.test(l)); reads++) {
      const text = JSON.stringify(codexRequest(thread, reads));
      statuses.push((await send(server, '/v1/responses', text, codexHeaders(thread))).res.status);
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(lines).toHaveLength(statuses.length);
    for (const line of lines)
      expect(line).toMatch(new RegExp(`^session ${thread}: fake-model: \\d+ -> \\d+ tokens; `));
    return { server, lines, thread };
  }

  it('C10: one line per request, with tokens before and after and the results a clearing step cleared', async () => {
    const cleared = /; \d+ tool result\(s\) cleared or shortened$/;
    const { lines } = await readUntil({}, cleared);
    expect(lines.at(-1)).toMatch(cleared);
    expect(lines[0]).toMatch(/; sent as it came$/);
  });

  it('C10: a compaction is one line naming its strategy and summary calls; the sessions endpoint names who wrote it', async () => {
    const compacted = /; compacted \(local, 1 summary call\(s\)\)/;
    const session = { policy: { enabled: false, clearWhenPassBuysFewerTurns: 0 } };
    const { server, lines, thread } = await readUntil({ session }, compacted);
    expect(lines.at(-1)).toMatch(compacted);
    const state = (await (await fetch(`${server.url}/compactor/sessions/${thread}`)).json()) as any;
    expect(state).toMatchObject({
      summariesMade: 1,
      summarizer: 'a summary through the upstream (openai-responses, model fake-model)',
    });
  });

  it('a request that fails upstream is one line naming the path and the cause, never the credential', async () => {
    const gone = await startFakeAgentUpstream({ window: 8_000 });
    const url = gone.url;
    await gone.close();
    const lines: string[] = [];
    const server = await startServer({
      port: 0,
      openaiUpstream: url,
      anthropicUpstream: url,
      capacity: 8_000,
      http: { retries: 0 },
      log: (l) => lines.push(l),
    });
    started.push(server);
    const { res } = await send(
      server,
      '/v1/responses',
      JSON.stringify(codexRequest('t-gone', 1)),
      codexHeaders('t-gone'),
    );
    expect(res.status).toBe(502);
    expect(lines.at(-1)).toMatch(
      /^failed \(502\): openai-responses \/v1\/responses: compactor: the upstream did not answer/,
    );
    for (const line of lines) expect(line).not.toContain('sk-codex-agent-shapes-test');
  });
});
