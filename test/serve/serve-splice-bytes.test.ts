import { afterAll, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import { startFakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import { freeEncoders } from '#src/estimate/index.js';
import { topLevelArrayAt, withTopLevelValue } from '#src/serve/json-splice.js';
import { startProxyTo } from '#support/serve/proxy.js';

afterAll(() => freeEncoders());

/**
 * A request whose old tool results the proxy clears goes upstream as the client's own text with
 * only the cleared items written anew: every other item keeps the client's bytes (its spacing,
 * key order, escapes, number texts JSON.parse would change, fields the proxy does not know).
 */

const WINDOW = 100_000;
const RESULTS = 6;
// About 2,500 tokens a result: six of them pass the clearing trigger, far from the window.
const result = (i: number) => `file ${i}: ${'lorem ipsum dolor '.repeat(830)}`;

function anthropicBody(): string {
  const items = [`{"content":"Read the files. \\u00e9 \\ud83d\\ude00","role":"user","x_note":1.0}`];
  for (let i = 0; i < RESULTS; i++) {
    items.push(
      `{"role":"assistant","content":[{"input":{"path":"f${i}","n":1.0,"big":12345678901234567890,"huge":1e400},"type":"tool_use","id":"c${i}","name":"read_file"}]}`,
      `{"role":"user","x_unknown":2.50,"x_huge":-1e400,"content":[{"type":"tool_result","tool_use_id":"c${i}","content":"${result(i)}"}]}`,
    );
  }
  items.push(`{"content":"Go on.","role":"user"}`);
  return `{"temperature":1.0,"top_x":1e400,"model":"claude-sonnet-4-5","max_tokens":1000,
 "tools":[{"name":"read_file","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}],
 "messages":[\n  ${items.join(',\n  ')}\n ]}`;
}

function responsesBody(): string {
  const items = [`{"content":"Read the files. \\u00e9 \\ud83d\\ude00","role":"user","x_note":1.0}`];
  for (let i = 0; i < RESULTS; i++) {
    items.push(
      `{"type":"reasoning","id":"rs_${i}","summary":[],"encrypted_content":"ZW5j","x":1e400}`,
      `{"type":"function_call","z":1.0,"call_id":"c${i}","name":"read_file","arguments":"{\\"path\\":\\"f${i}\\"}"}`,
      `{"call_id":"c${i}","x_unknown":2.50,"x_huge":-1e400,"type":"function_call_output","output":"${result(i)}"}`,
    );
  }
  items.push(`{"type":"message","role":"user","content":[{"type":"input_text","text":"Go on."}]}`);
  return `{"model":"gpt-4o","input":[\n  ${items.join(',\n  ')}\n ],"temperature":1.0,"top_x":1e400,
 "tools":[{"type":"function","name":"read_file","parameters":{"type":"object"}}],"max_output_tokens":1000}`;
}

const CASES = [
  { protocol: 'anthropic', path: '/v1/messages', key: 'messages', body: anthropicBody },
  { protocol: 'openai-responses', path: '/v1/responses', key: 'input', body: responsesBody },
] as const;

describe('compactor serve: a cleared Anthropic or Responses request keeps the client bytes of every other item', () => {
  for (const { protocol, path, key, body } of CASES)
    it(`D2: ${protocol}: items left as they came are the client's bytes; cleared ones keep their unknown fields`, async () => {
      const upstream = await startFakeAgentUpstream({ window: WINDOW });
      const proxy = await startProxyTo(upstream, WINDOW, {
        session: {
          policy: { enabled: true, triggerTokens: 10_000, clearAtLeast: 0, clearWhenPassBuysFewerTurns: 0 },
        },
      });
      try {
        const text = body();
        const res = await request(`${proxy.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': 'k', authorization: 'Bearer k' },
          body: text,
        });
        const answer = await res.body.text();
        expect(`${res.statusCode} ${answer.slice(0, 300)}`).toMatch(/^200 /);
        const sent = upstream.requests.at(-1)!.raw;
        const own = topLevelArrayAt(text, key)!.items.map(([a, b]) => text.slice(a, b));
        const out = topLevelArrayAt(sent, key)!.items.map(([a, b]) => sent.slice(a, b));
        expect(out).toHaveLength(own.length);
        const changed = out.flatMap((item, i) => (item === own[i] ? [] : [i]));
        // Some old results were cleared, and nothing else changed.
        expect(changed.length).toBeGreaterThan(0);
        for (const i of changed) {
          expect(own[i]).toContain('lorem ipsum');
          expect(out[i]).not.toContain('lorem ipsum dolor lorem');
          expect(out[i]).toContain('"x_unknown":2.50,"x_huge":-1e400');
        }
        // The newest result is kept whole, and the body around the list is the client's (the
        // recall tool aside).
        expect(changed).not.toContain(own.length - 2);
        const around = (body: string) => {
          const bare = withTopLevelValue(body, 'tools', '[]')!;
          const at = topLevelArrayAt(bare, key)!;
          return [bare.slice(0, at.open), bare.slice(at.close)];
        };
        expect(around(sent)).toEqual(around(text));
        expect(sent).toContain('"temperature":1.0');
        expect(sent).toContain('"top_x":1e400');
      } finally {
        await proxy.close();
        await upstream.close();
      }
    });
});
