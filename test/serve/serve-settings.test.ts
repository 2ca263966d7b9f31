import { describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { command, serveOptions, ServeFlagsSchema } from '#src/cli/commands/serve.js';
import { CompactorConfigSchema, type CompactorConfig } from '#src/cli/config.js';
import { parseFlags } from '#src/cli/flags.js';
import { CLEARING, COMPACTION } from '#src/projection/index.js';
import { HTTP } from '#src/providers/http-limits.js';
import { startServer } from '#src/serve/index.js';
import { resolveServeOptions } from '#src/serve/options.js';
import { SERVE } from '#src/serve/settings.js';
import { sink } from '#support/cli.js';

/** The context `compactor serve` runs in, with `config` as compactor.config.json. */
function context(config: CompactorConfig, env: NodeJS.ProcessEnv = {}) {
  return { stdout: sink(), stderr: sink(), env, cwd: '/work/here', stderrIsTTY: false, config };
}

/** The flags as `compactor serve` parses them from the command line. */
const flags = (values: Record<string, string | boolean>) => parseFlags('serve', ServeFlagsSchema, values);

describe('compactor serve: its settings come from one table, with the shared tables of run', () => {
  it('every flag of the serve, time-limit, clearing and compaction tables is a serve flag named in its help', () => {
    for (const g of [SERVE, HTTP, CLEARING, COMPACTION])
      for (const name of Object.keys(g.flagOptions)) {
        expect(command.options).toHaveProperty([name]);
        expect(command.help).toContain(`--${name}`);
      }
  });

  it('config "serve" takes exactly the table keys: each checked by its row, an unknown one refused', () => {
    for (const key of Object.keys(SERVE.settings)) {
      const bad = CompactorConfigSchema.safeParse({ serve: { [key]: null } });
      expect(bad.error?.issues[0].path).toEqual(['serve', key]);
    }
    expect(CompactorConfigSchema.safeParse({ serve: { host: 'h', nope: 1 } }).success).toBe(false);
    expect(CompactorConfigSchema.safeParse({ serve: { anthropicUpstream: 'ftp://x' } }).success).toBe(false);
  });

  it('flags win over config "serve", and clearing, compaction and time limits reach the sessions as for run', () => {
    const config: CompactorConfig = {
      preset: 'vtcode',
      serve: {
        host: '0.0.0.0',
        port: 9000,
        dataDir: 'sessions',
        summarizer: 'offline',
        authTokenEnv: 'TOKEN',
      },
      toolResultClearing: { keepToolUses: 3 },
      compaction: { waitRatio: 0.5 },
      http: { retries: 1 },
    };
    const given = flags({
      port: '9001',
      capacity: '16000',
      'max-body-bytes': '1024',
      timeout: '2',
      'keep-recent-batches': '4',
      'compaction-wait-max': '500',
    });
    expect(serveOptions(given, context(config, { TOKEN: 'secret' }))).toEqual({
      host: '0.0.0.0',
      port: 9001,
      dataDir: '/work/here/sessions',
      capacity: 16_000,
      summarizer: 'offline',
      maxBodyBytes: 1024,
      authToken: 'secret',
      http: { retries: 1, timeoutMs: 2_000 },
      env: { TOKEN: 'secret' },
      session: {
        policy: { preset: 'vtcode', keepToolUses: 3, keepRecentToolBatches: 4 },
        compaction: { waitRatio: 0.5, waitMaxTokens: 500 },
      },
    });
  });

  it('--max-sessions and --max-memory, or their config keys, bound the open sessions (the memory in bytes)', () => {
    const fromConfig = serveOptions(flags({}), context({ serve: { maxSessions: 50, maxMemory: 256 } }));
    expect(resolveServeOptions(fromConfig)).toMatchObject({ maxSessions: 50, maxSessionBytes: 256 << 20 });
    const fromFlags = serveOptions(
      flags({ 'max-sessions': '7', 'max-memory': '64' }),
      context({ serve: { maxSessions: 50, maxMemory: 256 } }),
    );
    expect(resolveServeOptions(fromFlags)).toMatchObject({ maxSessions: 7, maxSessionBytes: 64 << 20 });
    // No budget unless given: only the session count bounds them.
    expect(resolveServeOptions(serveOptions(flags({}), context({})))).not.toHaveProperty('maxSessionBytes');
    expect(() => flags({ 'max-memory': '0' })).toThrow(/^serve: --max-memory: /);
    expect(CompactorConfigSchema.safeParse({ serve: { maxSessions: 0 } }).success).toBe(false);
  });

  it('a serve flag out of its row bounds is one line naming the flag; a missing token variable too', () => {
    expect(() => flags({ port: '70000' })).toThrow(
      /^serve: --port: expected a port, 0 to 65535 \(got "70000"\)$/,
    );
    expect(() => flags({ 'openai-upstream': 'localhost:1' })).toThrow(/^serve: --openai-upstream: /);
    expect(() => serveOptions({}, context({ serve: { authTokenEnv: 'NOT_SET' } }))).toThrow(
      /^serve: --auth-token-env: the environment variable NOT_SET is not set$/,
    );
  });

  it('startServer checks its options by the same rows: a bad value names the option', async () => {
    await expect(startServer({ port: 70_000 })).rejects.toThrow(
      /^startServer: options\.port: expected a port/,
    );
    await expect(startServer({ summarizer: 'nobody' as never })).rejects.toThrow(
      /^startServer: options\.summarizer: /,
    );
    await expect(startServer({ authTokenEnv: 'X' } as never)).rejects.toThrow(/^startServer: options: /);
  });

  it('R3: --engine restate takes its ingress from --restate-ingress or config; each without the other is one line', async () => {
    const given = flags({ engine: 'restate', 'restate-ingress': 'http://127.0.0.1:8080' });
    expect(serveOptions(given, context({}))).toMatchObject({
      engine: 'restate',
      restateIngress: 'http://127.0.0.1:8080',
    });
    expect(
      serveOptions(flags({}), context({ serve: { engine: 'restate', restateIngress: 'http://r:8080' } })),
    ).toMatchObject({ engine: 'restate', restateIngress: 'http://r:8080' });
    expect(() => flags({ engine: 'etcd' })).toThrow(/^serve: --engine: /);
    await expect(startServer({ engine: 'restate' })).rejects.toThrow(
      /^startServer: options\.restateIngress: the restate engine needs the ingress URL/,
    );
    await expect(startServer({ restateIngress: 'http://127.0.0.1:8080' })).rejects.toThrow(
      /^startServer: options\.restateIngress: only used with engine "restate"$/,
    );
    await expect(
      startServer({ engine: 'restate', restateIngress: 'http://127.0.0.1:8080', dataDir: '/tmp/x' }),
    ).rejects.toThrow(/^startServer: options\.dataDir: /);
  });

  it('R3: with the restate engine, a Restate server that does not answer fails the request with a 502 in the protocol shape', async () => {
    // A port that was free a moment ago: nothing listens on it.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const ingress = `http://127.0.0.1:${port}`;
    const server = await startServer({
      port: 0,
      capacity: 16_000,
      engine: 'restate',
      restateIngress: ingress,
    });
    try {
      const res = await fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-x' },
        body: JSON.stringify({
          model: 'claude-sonnet-4-6',
          max_tokens: 64,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      });
      expect(res.status).toBe(502);
      expect(await res.json()).toEqual({
        type: 'error',
        error: {
          type: 'api_error',
          message: `compactor: the Restate server at ${ingress} did not answer (ECONNREFUSED)`,
        },
      });
    } finally {
      await server.close();
    }
  });
});
