import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { startFakeAgentUpstream, type FakeAgentUpstream } from '#dev/fakes/agent-upstream.js';
import { freeEncoders } from '#src/estimate/index.js';
import { startServer, type RunningServer } from '#src/serve/index.js';
import { KeptBodies, reusableOf, toolsCloseOf, type ReadBody } from '#src/serve/body-reuse.js';
import { filledArrayClose } from '#src/serve/json-splice.js';
import { ParseAsItArrives } from '#src/serve/sliced-parse.js';
import { requestChain } from '#src/serve/hash-chain.js';
import { parseRequest, type ProtocolName } from '#src/serve/protocols.js';
import { withRecallToolText } from '#support/serve/recall-tool.js';

/*
 * A body that resends a session's last one is read from where that one's messages end: what it
 * reads must be what reading the whole body gives, byte for byte and message for message.
 */

const PATH: Record<string, string> = {
  'openai-chat': '/v1/chat/completions',
  anthropic: '/v1/messages',
  'openai-responses': '/v1/responses',
  gemini: '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
};

/** What the proxy reads from a body read whole: its text, request and chain. */
function readWhole(protocol: ProtocolName, bytes: Buffer) {
  const text = bytes.toString('utf8');
  const parsed = parseRequest(protocol, text, false, PATH[protocol]);
  return { text, parsed, chain: requestChain(text, parsed, bytes) };
}

/** Reads a body through the kept bodies as the proxy does (keeping it for the next), and checks it against a whole read. */
function readKept(kept: KeptBodies, protocol: ProtocolName, body: string, id = 's'): ReadBody | undefined {
  const bytes = Buffer.from(body);
  const read = kept.read(protocol, PATH[protocol]!, bytes);
  const whole = readWhole(protocol, bytes);
  if (read !== undefined) {
    expect(read.text).toBe(whole.text);
    expect(read.pieces.join('')).toBe(whole.text);
    expect(read.chain).toEqual(whole.chain);
    // Key order too: the messages are hashed and written back as JSON.
    expect(JSON.stringify(read.parsed)).toBe(JSON.stringify(whole.parsed));
    expect(read.parsed).toEqual(whole.parsed);
  }
  // Where the recall tool goes: found in the text, or moved from the kept body's.
  expect(toolsCloseOf(read ?? { ...whole })).toBe(filledArrayClose(whole.text, 'tools'));
  const reading = read ?? reusableOf(protocol, PATH[protocol]!, bytes, whole.text, whole.parsed);
  expect(toolsCloseOf(reading)).toBe(filledArrayClose(whole.text, 'tools'));
  kept.keep(id, reading.reusable);
  return read;
}

/** The length of every string an object holds, counted each time it is reached. */
function stringLengths(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return 0;
  return Object.values(value).reduce((n: number, v) => n + stringLengths(v), 0);
}

const TOOLS = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];

/** A Chat Completions session: a system prompt, a task, then read_file calls and their results. */
function chat(pairs: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const messages: unknown[] = [
    { role: 'system', content: 'You are a coding agent — be brief.' },
    { role: 'user', content: 'Read the files, then say what they do. 日本語も読めます。' },
  ];
  for (let i = 0; i < pairs; i++) {
    const id = `call_${i}`;
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: `{"path":"f${i}"}` } }],
    });
    messages.push({
      role: 'tool',
      tool_call_id: id,
      content: `file ${i}: “quoted” \\ "escaped" ✓ ${'x'.repeat(i * 7)}`,
    });
  }
  return { model: 'gpt-4.1', messages, tools: TOOLS, max_tokens: 1000, ...extra };
}

/** An Anthropic session whose client marks its newest message for the prompt cache (as Claude Code does). */
function anthropic(pairs: number): Record<string, unknown> {
  const messages: Array<{ role: string; content: unknown[] }> = [
    { role: 'user', content: [{ type: 'text', text: 'Fix the failing test — then run it.' }] },
  ];
  for (let i = 0; i < pairs; i++) {
    const id = `toolu_${i}`;
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Reading file ${i}.` },
        { type: 'tool_use', id, name: 'Read', input: { path: `src/f${i}.ts`, limit: 2.5 } },
      ],
    });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: `ok ${i} ✓` }],
    });
  }
  const last = messages[messages.length - 1]!.content;
  last[last.length - 1] = { ...(last[last.length - 1] as object), cache_control: { type: 'ephemeral' } };
  return {
    model: 'claude-sonnet-4-5',
    messages,
    system: [{ type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } }],
    tools: [{ name: 'Read', description: 'Reads a file.', input_schema: { type: 'object' } }],
    max_tokens: 32000,
    stream: true,
  };
}

/**
 * The items of a long Codex-like Responses session: turns of reasoning, a call (every third a
 * freeform patch) and its output; every fourth turn ends with a message and a new task.
 */
function responsesItems(turns: number): unknown[] {
  const input: unknown[] = [
    {
      type: 'message',
      role: 'developer',
      content: [{ type: 'input_text', text: 'You are Codex — be brief.' }],
    },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Read the files. 日本語も。' }] },
  ];
  for (let i = 0; i < turns; i++) {
    const id = `call_${i}`;
    input.push({
      type: 'reasoning',
      id: `rs_${i}`,
      summary: [{ type: 'summary_text', text: `Thinking ${i}` }],
      encrypted_content: `gAAA${'x'.repeat(i)}`,
    });
    if (i % 3 === 2) {
      input.push({ type: 'custom_tool_call', call_id: id, name: 'apply_patch', input: `*** patch ${i}` });
      input.push({ type: 'custom_tool_call_output', call_id: id, output: `applied ${i}` });
    } else {
      input.push({
        type: 'function_call',
        name: 'exec_command',
        arguments: `{"cmd":"cat f${i}"}`,
        call_id: id,
      });
      input.push({
        type: 'function_call_output',
        call_id: id,
        output: `file ${i}: “quoted” \\ "escaped" ✓ ${'x'.repeat(i * 7)}`,
      });
    }
    if (i % 4 === 3) {
      input.push({
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: `Done ${i}.` }],
      });
      input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: `Next ${i}` }] });
    }
  }
  return input;
}

/** A Responses request (as Codex sends one) with the first `n` items of a session. */
function responses(n: number, items = responsesItems(40)): Record<string, unknown> {
  return {
    model: 'gpt-5-codex',
    instructions: 'You are Codex.',
    input: items.slice(0, n),
    tools: [{ type: 'function', name: 'exec_command', parameters: { type: 'object' } }],
    tool_choice: 'auto',
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'thread-1',
  };
}

/**
 * The contents of a long Gemini CLI-like session: model turns that call read_file (signed, some
 * with ids, some with two calls answered one turn each) and user turns with the results; every
 * third turn ends with the model's text and a new task.
 */
function geminiContents(turns: number): unknown[] {
  const contents: unknown[] = [{ role: 'user', parts: [{ text: 'Read the files — then say. 日本語' }] }];
  for (let i = 0; i < turns; i++) {
    const call = (k: number) => ({
      functionCall: {
        ...(i % 2 === 0 ? { id: `c${i}.${k}` } : {}),
        name: 'read_file',
        args: { path: `f${i}.${k}` },
      },
      ...(k === 0 ? { thoughtSignature: `sig${i}` } : {}),
    });
    const result = (k: number) => ({
      functionResponse: {
        ...(i % 2 === 0 ? { id: `c${i}.${k}` } : {}),
        name: 'read_file',
        response: { output: `file ${i}: “quoted” ✓ ${'x'.repeat(i * 5)}` },
      },
    });
    if (i % 5 === 4) {
      contents.push({ role: 'model', parts: [call(0), call(1)] });
      contents.push({ role: 'user', parts: [result(0)] }, { role: 'user', parts: [result(1)] });
    } else {
      contents.push({ role: 'model', parts: [{ text: `Reading ${i}.` }, call(0)] });
      contents.push({ role: 'user', parts: [result(0)] });
    }
    if (i % 3 === 2)
      contents.push(
        { role: 'model', parts: [{ text: `Done ${i}.` }] },
        { role: 'user', parts: [{ text: `Next ${i}` }] },
      );
  }
  return contents;
}

/** A Gemini request (as Gemini CLI sends one) with the first `n` contents of a session. */
function gemini(n: number, contents = geminiContents(30)): Record<string, unknown> {
  return {
    contents: contents.slice(0, n),
    systemInstruction: { parts: [{ text: 'You are Gemini CLI.' }] },
    tools: [{ functionDeclarations: [{ name: 'read_file', parameters: { type: 'object' } }] }],
    generationConfig: { temperature: 0, maxOutputTokens: 1000 },
  };
}

describe('compactor serve: a body that resends the last one is read from where it left off', () => {
  it('D2: a Chat Completions session that adds a call and its result each turn reads only what it added, as a whole read does', () => {
    const kept = new KeptBodies();
    expect(readKept(kept, 'openai-chat', JSON.stringify(chat(1)))).toBeUndefined();
    for (let n = 2; n < 8; n++) expect(readKept(kept, 'openai-chat', JSON.stringify(chat(n)))).toBeDefined();
    // The same body again (a retry) reads nothing new.
    expect(readKept(kept, 'openai-chat', JSON.stringify(chat(7)))).toBeDefined();
  });

  it('D2: a session of many requests is read on from its last body every time, its text held in pieces joined now and then', () => {
    const kept = new KeptBodies();
    readKept(kept, 'openai-chat', JSON.stringify(chat(1)));
    const counts: number[] = [];
    for (let n = 2; n < 40; n++)
      counts.push(readKept(kept, 'openai-chat', JSON.stringify(chat(n)))!.pieces.length);
    // Each request adds a piece; past a few they are joined into one, so they stay few.
    expect(Math.max(...counts)).toBeLessThanOrEqual(16);
    expect(counts).toContain(1);
    expect(counts).toContain(16);
  });

  it('D2: an Anthropic session whose cache marker moves to the newest message goes on from before the marked one', () => {
    const kept = new KeptBodies();
    readKept(kept, 'anthropic', JSON.stringify(anthropic(1)));
    for (let n = 2; n < 7; n++)
      expect(readKept(kept, 'anthropic', JSON.stringify(anthropic(n)))).toBeDefined();
  });

  it('D2: a body whose list was edited mid-way is read from before the edit or whole, never as the old one', () => {
    const kept = new KeptBodies();
    readKept(kept, 'openai-chat', JSON.stringify(chat(6)));
    const edited = chat(7);
    (edited.messages as Array<Record<string, unknown>>)[3] = {
      role: 'tool',
      tool_call_id: 'call_0',
      content: 'cut',
    };
    // Too far back for the kept marks: read whole (and checked against a whole read all the same).
    expect(readKept(kept, 'openai-chat', JSON.stringify(edited))).toBeUndefined();
    // An edit of one of the last messages: read from before it, the rest as new.
    const late = chat(8);
    const lateMessages = late.messages as Array<Record<string, unknown>>;
    lateMessages[3] = { role: 'tool', tool_call_id: 'call_0', content: 'cut' };
    lateMessages[15] = { role: 'tool', tool_call_id: 'call_6', content: 'cut too' };
    expect(readKept(kept, 'openai-chat', JSON.stringify(late))).toBeDefined();
  });

  it('D2: a body whose fields after the list changed reads them anew; one whose new items are not JSON is read whole', () => {
    const kept = new KeptBodies();
    readKept(kept, 'openai-chat', JSON.stringify(chat(3)));
    expect(readKept(kept, 'openai-chat', JSON.stringify(chat(4, { max_tokens: 2000 })))).toBeDefined();
    // Fields after the list that are not a valid request: read whole, which reports them.
    const invalid = JSON.stringify(chat(5, { max_tokens: 'many' }));
    expect(kept.read('openai-chat', PATH['openai-chat']!, Buffer.from(invalid))).toBeUndefined();
    const broken = JSON.stringify(chat(5, { max_tokens: 2000 })).replace(
      '"tool_call_id":"call_4"',
      '"tool_call_id":,"call_4"',
    );
    expect(broken).not.toBe(JSON.stringify(chat(5, { max_tokens: 2000 })));
    const bytes = Buffer.from(broken);
    expect(kept.read('openai-chat', PATH['openai-chat']!, bytes)).toBeUndefined();
    // Another path or protocol is not read from a Chat Completions body.
    expect(kept.read('anthropic', '/v1/messages', Buffer.from(JSON.stringify(chat(5))))).toBeUndefined();
  });

  it('D2: number texts JSON.parse would change (1.0, 2.50) in new items and after the list come back as sent', () => {
    const kept = new KeptBodies();
    const withNumbers = (n: number) =>
      JSON.stringify(chat(n, { temperature: 1 }))
        .replace('"temperature":1', '"temperature":1.0')
        .replaceAll('"type":"function","function"', '"type":"function","weight":2.50,"function"');
    readKept(kept, 'openai-chat', withNumbers(2));
    for (let n = 3; n < 6; n++) expect(readKept(kept, 'openai-chat', withNumbers(n))).toBeDefined();
  });

  it('D2: random continuations, edits, retries and other sessions read as whole reads do (seeded fuzz)', () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const kept = new KeptBodies();
    const sessions = ['a', 'b', 'c'].map((name) => ({ name, n: 1 + rand(3), edit: -1 }));
    let reused = 0;
    for (let step = 0; step < 120; step++) {
      const s = sessions[rand(sessions.length)]!;
      const op = rand(10);
      if (op < 6) s.n++;
      else if (op === 6 && s.n > 2) s.n -= 1 + rand(2);
      else if (op === 7) s.edit = rand(2 + 2 * s.n);
      // Session b sends its tools before its messages.
      const body =
        s.name === 'c'
          ? anthropic(s.n)
          : s.name === 'b'
            ? { tools: [], ...chat(s.n, { user: s.name }) }
            : chat(s.n, { user: s.name });
      const messages = body.messages as Array<Record<string, unknown>>;
      if (s.edit >= 0 && s.edit < messages.length && messages[s.edit]!.role === 'tool')
        messages[s.edit] = { ...messages[s.edit], content: `edited ${s.edit}` };
      const protocol = s.name === 'c' ? 'anthropic' : 'openai-chat';
      if (readKept(kept, protocol, JSON.stringify(body), s.name) !== undefined) reused++;
    }
    expect(reused).toBeGreaterThan(40);
  });

  it.each([
    ['openai-responses', (n: number) => JSON.stringify(responses(n)), 'input'],
    ['gemini', (n: number) => JSON.stringify(gemini(n)), 'contents'],
  ] as const)(
    'D2: a %s session read item by item (cut inside turns, continued, cut back, retried, edited) reads as whole reads do',
    (protocol, body, key) => {
      let seed = 11;
      const rand = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      const kept = new KeptBodies();
      let n = 3;
      let reused = 0;
      let sent = 0;
      for (let step = 0; step < 90 && n < 100; step++) {
        const op = rand(10);
        if (op < 6) n += 1 + rand(4);
        else if (op === 6 && n > 4) n -= 1 + rand(3);
        let text = body(n);
        if (op === 7) {
          // An edit of one item, late or early: read from before it, or whole.
          const parsed = JSON.parse(text) as Record<string, unknown[]>;
          const list = parsed[key]!;
          const at = rand(2) === 0 ? list.length - 1 - rand(Math.min(3, list.length - 2)) : 1 + rand(3);
          list[at] = JSON.parse(JSON.stringify(list[at]).replace(/(\d)/, '$1$1')) as unknown;
          text = JSON.stringify(parsed);
        }
        sent++;
        if (readKept(kept, protocol, text) !== undefined) reused++;
      }
      expect(reused).toBeGreaterThan(sent / 2);
    },
  );

  it('D2: a Responses body whose fields after the list come in another key order (as Codex sends them) reads them anew', () => {
    const kept = new KeptBodies();
    // Codex's shape, and instructions sent after the list.
    const meta = (n: number, instructions = 'You are Codex.') => {
      const pairs = Object.entries({ turn_id: 't1', session_id: 's1', thread_id: 'th1', window: 'w:0' });
      const order = [...pairs.slice(n % 4), ...pairs.slice(0, n % 4)];
      const { instructions: _first, ...sent } = responses(4 + 3 * n);
      const body = { ...sent, client_metadata: Object.fromEntries(order), temperature: 1, instructions };
      return JSON.stringify(body).replace('"temperature":1', '"temperature":1.0');
    };
    readKept(kept, 'openai-responses', meta(0));
    for (let n = 1; n < 6; n++) expect(readKept(kept, 'openai-responses', meta(n))).toBeDefined();
    // The instructions changed: the request's system text is the new one.
    expect(readKept(kept, 'openai-responses', meta(7, 'Other.'))).toBeDefined();
  });

  it('D2: an Anthropic body whose system prompt after the list changed is read whole (its fixed part is another)', () => {
    const kept = new KeptBodies();
    const body = (n: number, system: string) => {
      const { system: _old, ...rest } = anthropic(n);
      return JSON.stringify({ ...rest, system });
    };
    readKept(kept, 'anthropic', body(2, 'You are Claude Code.'));
    expect(readKept(kept, 'anthropic', body(3, 'You are Claude Code.'))).toBeDefined();
    expect(readKept(kept, 'anthropic', body(4, 'You are another agent.'))).toBeUndefined();
  });

  it('D2: a Responses body that adds a call to the turn it ends with is read from before that turn', () => {
    const kept = new KeptBodies();
    // Ends with the reasoning of a turn whose call comes next: the call joins that turn.
    readKept(kept, 'openai-responses', JSON.stringify(responses(6)));
    expect(readKept(kept, 'openai-responses', JSON.stringify(responses(8)))).toBeDefined();
    // Ends with a call whose freeform output comes next: typed after the call before the cut.
    readKept(kept, 'openai-responses', JSON.stringify(responses(10)));
    expect(readKept(kept, 'openai-responses', JSON.stringify(responses(13)))).toBeDefined();
  });

  it('D2: a Gemini body whose new turn answers the second call of a turn before the cut reads as a whole read does', () => {
    const kept = new KeptBodies();
    const contents = geminiContents(6);
    // The model turn with two calls, then the first result: the second result comes next.
    const twoCalls = contents.findIndex(
      (c) => (c as { parts: unknown[] }).parts.length === 2 && (c as { role: string }).role === 'model',
    );
    readKept(kept, 'gemini', JSON.stringify(gemini(twoCalls + 1, contents)));
    expect(readKept(kept, 'gemini', JSON.stringify(gemini(twoCalls + 2, contents)))).toBeDefined();
    expect(readKept(kept, 'gemini', JSON.stringify(gemini(twoCalls + 3, contents)))).toBeDefined();
    // A plain generateContent call is another path: its body is not read from the stream's.
    const plain = '/v1beta/models/gemini-2.5-pro:generateContent';
    expect(
      kept.read('gemini', plain, Buffer.from(JSON.stringify(gemini(twoCalls + 4, contents)))),
    ).toBeUndefined();
  });

  it("D2: a large body whose start is a kept body's is not parsed as it arrives (it is read from the kept one); another is", () => {
    const kept = new KeptBodies();
    readKept(kept, 'gemini', JSON.stringify(gemini(6)));
    const next = Buffer.from(JSON.stringify(gemini(8)));
    const start = next.subarray(0, 200);
    expect(kept.startsAsKept('gemini', PATH.gemini!)(start)).toBe(true);
    expect(kept.startsAsKept('gemini', '/v1beta/models/other:generateContent')(start)).toBe(false);
    const other = Buffer.from('{"contents":[{"role":"user","parts":[{"text":"Another task"}]}]}');
    expect(kept.startsAsKept('gemini', PATH.gemini!)(other)).toBe(false);
    const letGo = kept.startsAsKept('gemini', PATH.gemini!);
    const parse = new ParseAsItArrives(letGo);
    parse.write(start);
    parse.write(next.subarray(200));
    expect([parse.dropped, parse.end()]).toEqual([true, undefined]);
    const whole = new ParseAsItArrives(letGo);
    whole.write(other);
    expect([whole.dropped, whole.end()]).toEqual([false, JSON.parse(other.toString())]);
  });

  it('D2: a kept body is counted at what it holds (its bytes and the messages read from them, and its text while it keeps it)', () => {
    const first = JSON.stringify(chat(3));
    const next = JSON.stringify(chat(4));
    // Three bytes a byte (the bytes, and the messages' texts at up to two bytes a character), two a character of the text.
    const bytes = 3 * Buffer.byteLength(first);
    const keptIn = (budget: number) => {
      const kept = new KeptBodies(budget);
      readKept(kept, 'openai-chat', first);
      return readKept(kept, 'openai-chat', next);
    };
    expect(keptIn(bytes - 1)).toBeUndefined();
    // Kept without its text: the next body is read on from its bytes all the same.
    expect(keptIn(bytes)).toBeDefined();
    expect(keptIn(bytes + 2 * first.length)).toBeDefined();
  });

  it('D2: without room the least recent bodies give up their text before their place, and a body kept without its text is read on from its bytes', () => {
    const len = (n: number) => Buffer.byteLength(JSON.stringify(chat(n)));
    // Room for one body's bytes and what was read from them (three bytes a byte), not for its text too.
    const kept = new KeptBodies(4 * len(30));
    readKept(kept, 'openai-chat', JSON.stringify(chat(25)));
    for (let n = 26; n <= 30; n++) {
      const body = JSON.stringify(chat(n));
      const read = readKept(kept, 'openai-chat', body)!;
      expect(read).toBeDefined();
      expect(read.reusable?.bytes.equals(Buffer.from(body))).toBe(true);
      // What the kept body holds as strings, besides the messages and chain read from it, is its end alone.
      const { parsed: _parsed, chain: _chain, ...rest } = read.reusable!;
      expect(stringLengths(rest)).toBeLessThan(body.length / 2);
    }
    // Two sessions with room for both bodies' bytes, not their texts: the older gives up its text and stays.
    const user = (n: number, name: string) => {
      const sent = chat(n, { user: name });
      (sent.messages as Array<{ content: unknown }>)[1]!.content = `${name}: read the files.`;
      return JSON.stringify(sent);
    };
    const two = new KeptBodies(3 * (len(10) + len(10)) + 2 * len(10) + 400);
    readKept(two, 'openai-chat', user(9, 'a'), 'a');
    readKept(two, 'openai-chat', user(9, 'b'), 'b');
    expect(readKept(two, 'openai-chat', user(10, 'a'), 'a')).toBeDefined();
    expect(readKept(two, 'openai-chat', user(10, 'b'), 'b')).toBeDefined();
  });

  // Each session's own task (long, as agents' are): a body of one is never read from another's.
  const ownBody = (n: number, user: string) => {
    const sent = chat(n, { user });
    (sent.messages as Array<{ content: unknown }>)[1]!.content =
      `${user}: read the files. ${'-'.repeat(2_000)}`;
    return JSON.stringify(sent);
  };
  // A kept body is counted at three bytes a byte and two a character of its text.
  const keptSize = (n: number, user: string) =>
    3 * Buffer.byteLength(ownBody(n, user)) + 2 * ownBody(n, user).length;
  // Without its text (what the least recent bodies give up first when room is needed).
  const bytesSize = (n: number, user: string) => 3 * Buffer.byteLength(ownBody(n, user));

  it('D2: beyond their budget the bodies of quiet sessions that sent least recently are dropped, and their next bodies read whole', () => {
    const body = ownBody;
    // Room for any one of these bodies, never for two.
    const budget = keptSize(5, 'a') + 100;
    expect(budget).toBeLessThan(keptSize(3, 'a') + keptSize(3, 'b'));
    // A minute goes by between any two requests: every session is quiet by the next one.
    let minutes = 0;
    const kept = new KeptBodies(budget, () => (minutes += 60_000));
    expect(readKept(kept, 'openai-chat', body(3, 'a'), 'a')).toBeUndefined();
    expect(readKept(kept, 'openai-chat', body(3, 'b'), 'b')).toBeUndefined();
    // a's body made room for b's: a's next body is read whole, and then its next from it.
    expect(readKept(kept, 'openai-chat', body(4, 'a'), 'a')).toBeUndefined();
    expect(readKept(kept, 'openai-chat', body(5, 'a'), 'a')).toBeDefined();
    // b's made room for a's.
    expect(readKept(kept, 'openai-chat', body(4, 'b'), 'b')).toBeUndefined();
  });

  it('D2: sessions that take turns beyond the budget keep the bodies kept first (read on every turn); the others are read whole', () => {
    // Room for two of these bodies (without their text), never for three: with the least recent
    // dropped for each new one, every body of the three would be read whole.
    const budget = bytesSize(5, 'a') + bytesSize(5, 'b') + 100;
    expect(budget).toBeLessThan(bytesSize(3, 'a') + bytesSize(3, 'b') + bytesSize(3, 'c'));
    // A millisecond between requests: no session is quiet.
    let ms = 0;
    const kept = new KeptBodies(budget, () => (ms += 1));
    const readOn = new Map<string, number>();
    for (let n = 3; n < 6; n++)
      for (const user of ['a', 'b', 'c'])
        if (readKept(kept, 'openai-chat', ownBody(n, user), user) !== undefined)
          readOn.set(user, (readOn.get(user) ?? 0) + 1);
    expect(Object.fromEntries(readOn)).toEqual({ a: 2, b: 2 });
  });

  it("D2: a kept body gives way once more than twice as many requests came after its session's last as between its last two", () => {
    const budget = bytesSize(6, 'a') + bytesSize(5, 'b') + 100;
    expect(budget).toBeLessThan(bytesSize(4, 'a') + bytesSize(4, 'b') + bytesSize(4, 'c'));
    // The clock stands still: only the requests count.
    const kept = new KeptBodies(budget, () => 0);
    // a and b take turns twice (each kept 2 requests after its last), then stop.
    for (const n of [3, 4])
      for (const user of ['a', 'b']) readKept(kept, 'openai-chat', ownBody(n, user), user);
    // Up to 4 requests after theirs they may still go on: c's bodies are not kept.
    expect(readKept(kept, 'openai-chat', ownBody(3, 'c'), 'c')).toBeUndefined();
    expect(readKept(kept, 'openai-chat', ownBody(4, 'c'), 'c')).toBeUndefined();
    expect(readKept(kept, 'openai-chat', ownBody(5, 'c'), 'c')).toBeUndefined();
    // The 5th after a's: a is quiet, and c's body takes its place; b's stays, b not yet quiet then.
    expect(readKept(kept, 'openai-chat', ownBody(6, 'c'), 'c')).toBeUndefined();
    expect(readKept(kept, 'openai-chat', ownBody(7, 'c'), 'c')).toBeDefined();
    // c's next body needs room too (none is left without texts to give up): b, quiet by then, gives way.
    expect(readKept(kept, 'openai-chat', ownBody(5, 'b'), 'b')).toBeUndefined();
    expect(readKept(kept, 'openai-chat', ownBody(5, 'a'), 'a')).toBeUndefined();
  });
});

afterAll(() => freeEncoders());

describe('compactor serve: a session read from its last body sends what a whole read sends', () => {
  const started: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const s of started.splice(0).reverse()) await s.close();
  });

  async function proxy(maxMemory?: number): Promise<{ server: RunningServer; upstream: FakeAgentUpstream }> {
    const upstream = await startFakeAgentUpstream({ window: 1_000_000 });
    const server = await startServer({
      port: 0,
      openaiUpstream: upstream.url,
      anthropicUpstream: upstream.url,
      geminiUpstream: upstream.url.replace(/\/v1$/, ''),
      capacity: 1_000_000,
      http: { retries: 0 },
      ...(maxMemory !== undefined ? { maxMemory } : {}),
    });
    started.push(upstream, server);
    return { server, upstream };
  }

  async function send(server: RunningServer, protocol: ProtocolName, body: string): Promise<string> {
    const res = await fetch(`${server.url}${PATH[protocol]}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer sk-reuse',
        'x-api-key': 'sk-reuse',
      },
      body,
    });
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    return res.headers.get('x-compactor-session')!;
  }

  async function held(server: RunningServer, id: string): Promise<unknown> {
    const res = await fetch(`${server.url}/compactor/sessions/${id}`);
    const state = (await res.json()) as { messages: number; tokens: unknown };
    return { messages: state.messages, tokens: state.tokens };
  }

  it.each([
    ['openai-chat', (n: number) => JSON.stringify(chat(n))],
    ['anthropic', (n: number) => JSON.stringify({ ...anthropic(n), stream: false })],
    ['openai-responses', (n: number) => JSON.stringify({ ...responses(4 + 3 * n), stream: false })],
    ['gemini', (n: number) => JSON.stringify(gemini(2 + 2 * n))],
  ] as const)(
    '%s: the upstream gets the same bytes, and the session holds the same, as from a proxy that reads the last body whole',
    async (protocol, body) => {
      const going = await proxy();
      let id = '';
      for (let n = 1; n <= 5; n++) id = await send(going.server, protocol, body(n));
      const fresh = await proxy();
      const freshId = await send(fresh.server, protocol, body(5));
      expect(going.upstream.requests.at(-1)!.raw).toBe(fresh.upstream.requests.at(-1)!.raw);
      expect(await held(going.server, id)).toEqual(await held(fresh.server, freshId));
    },
  );

  it('D2: every request of a long session goes upstream as the client sent it with the recall tool added, byte for byte', async () => {
    const { server, upstream } = await proxy();
    // With characters of several bytes, and all ASCII (where characters are bytes).
    const bodies = [
      (n: number) => JSON.stringify(chat(n)),
      (n: number) => JSON.stringify(chat(n)).replace(/[^\x00-\x7f]/g, '?'),
    ];
    for (const bodyOf of bodies)
      for (let n = 1; n <= 24; n++) {
        const body = bodyOf(n);
        await send(server, 'openai-chat', body);
        expect(upstream.requests.at(-1)!.raw).toBe(withRecallToolText('openai-chat', body));
      }
  });

  it('D2: a Gemini session over 1 MiB, continued and then edited early on, sends what a whole read sends', async () => {
    // A first task of 1.1 MB: every body is parsed as it arrives unless it starts as the kept one.
    const contents = geminiContents(8);
    (contents[0] as { parts: Array<{ text: string }> }).parts[0]!.text = `Read — ${'y'.repeat(1_100_000)}`;
    const body = (n: number, edit = false) => {
      const sent = gemini(n, contents);
      if (edit) (sent.contents as Array<{ parts: unknown[] }>)[2]!.parts = [{ text: 'edited' }];
      return JSON.stringify(sent);
    };
    const going = await proxy();
    for (const [n, edit] of [[3], [5], [7], [9, true]] as const) {
      const id = await send(going.server, 'gemini', body(n, edit));
      const fresh = await proxy();
      const freshId = await send(fresh.server, 'gemini', body(n, edit));
      expect(going.upstream.requests.at(-1)!.raw).toBe(fresh.upstream.requests.at(-1)!.raw);
      expect(await held(going.server, id)).toEqual(await held(fresh.server, freshId));
    }
  });

  it('D2: a session whose body is not kept (others fill their budget) sends what a whole read sends, and no session is closed for the bodies', async () => {
    // --max-memory 1 MiB: a quarter for the kept bodies, room for one of these (about 240 KB
    // each); the four sessions (about 120 KB each) fit in the rest.
    const body = (name: string, n: number) => {
      const sent = chat(n);
      (sent.messages as Array<{ content: unknown }>)[1]!.content = `${name}: ${'x'.repeat(60_000)}`;
      return JSON.stringify(sent);
    };
    const going = await proxy(1);
    // b's body takes the room, and keeps it while b is not quiet: a's bodies are read whole.
    const ids = [await send(going.server, 'openai-chat', body('b', 1))];
    await send(going.server, 'openai-chat', body('a', 1));
    await send(going.server, 'openai-chat', body('a', 2));
    for (const name of ['c', 'd']) ids.push(await send(going.server, 'openai-chat', body(name, 1)));
    const a = await send(going.server, 'openai-chat', body('a', 3));
    const fresh = await proxy();
    const freshId = await send(fresh.server, 'openai-chat', body('a', 3));
    expect(going.upstream.requests.at(-1)!.raw).toBe(fresh.upstream.requests.at(-1)!.raw);
    expect(await held(going.server, a)).toEqual(await held(fresh.server, freshId));
    for (const id of [a, ...ids])
      expect((await fetch(`${going.server.url}/compactor/sessions/${id}`)).status).toBe(200);
  });
});
