import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicAnswer, chatAnswer, responsesAnswer, type Reply } from '#dev/fakes/agent-wire.js';
import { heldWrites } from '#support/fake-http.js';

/** Where each protocol's requests go, and how the fake model answers there. */
export const HELD_ANSWERS = {
  anthropic: { path: '/v1/messages', answer: anthropicAnswer },
  'openai-chat': { path: '/v1/chat/completions', answer: chatAnswer },
  'openai-responses': { path: '/v1/responses', answer: responsesAnswer },
} as const;
export type HeldProtocol = keyof typeof HELD_ANSWERS;

export interface HeldUpstream {
  url: string;
  /** The `tools` of every request, as JSON. */
  tools: string[];
  close(): Promise<void>;
}

/**
 * A fake model on 127.0.0.1 that answers every request with `reply`; a streamed answer holds
 * after its first write (or the first `holdAfter` picks) until the promise `gate()` gave for
 * that request resolves. It shows whether the proxy passes a stream on as it comes: a proxy
 * that gathered it first would never deliver the part before the hold.
 */
export async function startHeldUpstream(options: {
  reply: Reply;
  gate(): Promise<void>;
  holdAfter?(chunk: string): boolean;
}): Promise<HeldUpstream> {
  const tools: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw) as { stream?: boolean; tools?: unknown };
      tools.push(JSON.stringify(body.tools));
      const entry = Object.values(HELD_ANSWERS).find((a) => req.url?.endsWith(a.path));
      if (!entry) return void res.writeHead(404).end();
      const gate = options.gate();
      const held = body.stream ? heldWrites(res, () => gate, options.holdAfter) : res;
      entry.answer(body, options.reply, held, 500);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tools,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
