import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import type { RunningServer } from '#src/serve/index.js';
import { freeEncoders } from '#src/estimate/index.js';
import { startFakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import type { FakeServer } from '#support/fake-http.js';
import { COMPACTING_POLICY, startProxyTo } from '#support/serve/proxy.js';

afterAll(() => freeEncoders());

const WINDOW = 16_000;
const started: Array<RunningServer | FakeServer> = [];

afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
});

async function setup() {
  const upstream = await startFakeAgentUpstream({ window: WINDOW });
  // Clearing off, so the loop compacts and a summary request carries the tools too.
  const server = await startProxyTo(upstream, WINDOW, { session: { policy: COMPACTING_POLICY } });
  started.push(upstream, server);
  return { upstream, server };
}

// A tool list about 3,000 tokens long whose bulk is in tools that are not functions, as Codex
// (a custom apply_patch tool with its grammar, web search) and Claude Code (server tools) send.
const GRAMMAR = Array.from({ length: 600 }, (_, i) => `rule${i} ::= "token ${i}"`).join('\n');
const DOMAINS = Array.from({ length: 150 }, (_, i) => `docs-${i}.reference-manuals-and-guides.example.com`);
const READ_SCHEMA = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };

const RESPONSES_TOOLS = [
  { type: 'function', name: 'read_file', description: 'Reads a file.', parameters: READ_SCHEMA },
  { type: 'web_search', search_context_size: 'low' },
  {
    type: 'custom',
    name: 'apply_patch',
    description: 'Applies a patch.',
    format: { type: 'grammar', syntax: 'lark', definition: GRAMMAR },
  },
];
const ANTHROPIC_TOOLS = [
  { name: 'read_file', description: 'Reads a file.', input_schema: READ_SCHEMA },
  { type: 'web_search_20250305', name: 'web_search', max_uses: 3, allowed_domains: DOMAINS },
];

const RESULT = (n: number) => `file ${n}: ${'lorem ipsum dolor '.repeat(500)}`;

const LOOPS = {
  responses: {
    path: '/v1/responses',
    body: (input: unknown[]) => ({ model: 'gpt-4o', max_output_tokens: 256, tools: RESPONSES_TOOLS, input }),
    step: (n: number) => [
      { type: 'function_call', call_id: `c${n}`, name: 'read_file', arguments: '{"path":"a"}' },
      { type: 'function_call_output', call_id: `c${n}`, output: RESULT(n) },
    ],
    toolsOf: (body: any): any[] => body.tools ?? [],
  },
  anthropic: {
    path: '/v1/messages',
    body: (messages: unknown[]) => ({
      model: 'claude-sonnet-4-6',
      max_tokens: 256,
      tools: ANTHROPIC_TOOLS,
      messages,
    }),
    step: (n: number) => [
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: `c${n}`, name: 'read_file', input: { path: 'a' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: `c${n}`, content: RESULT(n) }] },
    ],
    toolsOf: (body: any): any[] => body.tools ?? [],
  },
};

describe('compactor serve: tools that are not functions', () => {
  for (const [name, loop] of Object.entries(LOOPS)) {
    it(`N1/C1: ${name}: a tool loop whose tools include provider tools compacts, and every upstream request fits the window`, async () => {
      const { upstream, server } = await setup();
      const messages: unknown[] = [{ role: 'user', content: 'Read every file and report.' }];
      const compacted: boolean[] = [];
      for (let step = 0; step < 16; step++) {
        messages.push(...loop.step(step));
        const res = await fetch(`${server.url}${loop.path}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: 'Bearer sk-test',
            'x-compactor-session': name,
          },
          body: JSON.stringify(loop.body(messages)),
        });
        expect(res.status).toBe(200);
        await res.text();
        compacted.push(res.headers.get('x-compactor-compacted') === 'true');
      }
      expect(upstream.violations).toEqual([]);
      expect(compacted).toContain(true);
      const summaries = upstream.requests.filter((r) => r.raw.includes('You are writing a checkpoint'));
      expect(summaries.length).toBeGreaterThanOrEqual(1);
      // A provider tool goes upstream as the client wrote it, never as a function of the same name.
      for (const req of upstream.requests) {
        for (const tool of loop.toolsOf(req.body)) {
          // The recall tool the proxy adds is a function of its own.
          if (tool.name === 'read_file' || tool.name === 'recall') continue;
          expect(RESPONSES_TOOLS.concat(ANTHROPIC_TOOLS as any[])).toContainEqual(tool);
        }
      }
    });
  }
});
