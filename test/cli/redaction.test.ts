import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { redactSecrets } from '#src/core/redact.js';
import { msg, textOf } from '#src/messages/message.js';
import { rootCauseOf } from '#src/session/report.js';
import { openSessionStore } from '#src/store/index.js';
import type { FakeServer } from '#support/fake-http.js';
import { startFakeOpenAI } from '#support/fake-openai.js';
import { agentSession, canonicalFile, cli, templateSummary, workDir } from '#support/cli-sessions.js';

// Text that merely looks like a key (conversation content), and the key Compactor is configured with.
const LOOKALIKE = 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789';
const KEY = 'sk-FAKE-redaction-key-0123456789abcdef';

describe('redaction covers what Compactor says about errors and configuration, not conversations', () => {
  it('S4: printed causes keep key-like conversation text; known keys, bearer tokens and key headers go', () => {
    const env = { FAKE_KEY: KEY };
    expect(rootCauseOf(`the tool printed ${LOOKALIKE}`)).toBe(`the tool printed ${LOOKALIKE}`);
    expect(redactSecrets(`key ${KEY} echoed`, env)).toBe('key [REDACTED] echoed');
    expect(redactSecrets('Authorization: Bearer abcdefghijklmnop1234', {})).toBe(
      'Authorization: Bearer [REDACTED]',
    );
    expect(redactSecrets('"x-api-key": "zzzzzzzzzzzz"', {})).toBe('"x-api-key": "[REDACTED]"');
  });
});

describe('compactor compact: key-like text in the conversation (S4)', () => {
  const dir = workDir('redaction');
  let srv: FakeServer;
  const session = agentSession(30, 1_600, 900, 3);
  const last = session.length - 1;
  session[last] = msg.tool('call_29', `export OPENAI_API_KEY=${LOOKALIKE}\nexit 0`, 'bash');
  canonicalFile(dir, 'session.json', session);
  beforeAll(async () => {
    srv = await startFakeOpenAI({ window: 8_000 });
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await srv.close();
  });

  it('S4: a tool result with key-like text reaches the provider byte-identical; the stored summary has only the configured key redacted', async () => {
    srv.script = [
      { kind: 'summary-text', text: `${templateSummary()}\n- key seen: ${KEY}; token seen: ${LOOKALIKE}` },
    ];
    const r = await cli(
      [
        ...['compact', 'session.json', '--provider', 'openai-compatible', '--model', 'local-model'],
        ...['--base-url', srv.url, '--api-key-env', 'FAKE_KEY', '--capacity', '8000'],
        ...['--session-dir', 's1', '--json'],
      ],
      { cwd: dir, env: { FAKE_KEY: KEY } },
    );
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const sent = (srv.requests[0].body.messages as Array<{ role: string; content: unknown }>).filter(
      (m) => m.role === 'tool',
    );
    expect(sent.at(-1)?.content).toBe(textOf(session[last].content));
    const store = openSessionStore(join(dir, 's1'), { create: false });
    // The summary message, wherever the rebuilt history puts it.
    const summary = store
      .loadHistory()
      .map((m) => textOf(m.content))
      .find((t) => t.startsWith('Previous conversation summary'));
    store.close();
    expect(summary).toContain(`token seen: ${LOOKALIKE}`);
    expect(summary).toContain('key seen: [REDACTED]');
    expect(summary).not.toContain(KEY);
  });
});
