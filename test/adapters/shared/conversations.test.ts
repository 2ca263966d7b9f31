import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, run, setTracingDisabled } from '@openai/agents';
import { ScriptedModel, assistantMessage } from '@openai/agents/testing';
import { generateText, wrapLanguageModel, type ModelMessage } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { compactorMiddleware, fromModelMessages } from '#src/adapters/ai-sdk/index.js';
import { compactorInputFilter } from '#src/adapters/openai-agents/index.js';
import { createConversations } from '#src/adapters/shared/conversations.js';
import { conversationIdOf } from '#src/adapters/shared/public.js';
import { CompactorOptionsError } from '#src/core/errors.js';
import { freeEncoders } from '#src/estimate/index.js';
import { msg, textOf } from '#src/messages/message.js';
import { fullConversation, loadRealSession } from '#support/adapters/real-session.js';

afterAll(freeEncoders);
setTracingDisabled(true);

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'compactor-conversations-'));
  dirs.push(dir);
  return dir;
}

/** An AI SDK chat model that answers every prompt with `answer <n>`. */
function chatModel(): MockLanguageModelV4 {
  let n = 0;
  return new MockLanguageModelV4({
    provider: 'openai.chat',
    modelId: 'chat-model',
    doGenerate: async () => ({
      content: [{ type: 'text', text: `answer ${n++}` }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: {
        inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 2, text: 2, reasoning: 0 },
      },
      warnings: [],
    }),
  });
}

describe('conversations behave like chats', () => {
  it('H1: with sessionDir an edited last user message forks the conversation; the old branch stays in the store', async () => {
    const sessionDir = tempDir();
    const middleware = compactorMiddleware({ sessionDir, limits: { capacity: 50_000 } });
    const model = wrapLanguageModel({ model: chatModel(), middleware });
    const providerOptions = { compactor: { conversationId: 'chat-1' } };
    const chat = async (messages: ModelMessage[]) =>
      (await generateText({ model, messages, providerOptions })).text;
    const first = await chat([{ role: 'user', content: 'hi' }]);
    const asked: ModelMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: first },
      { role: 'user', content: 'what is 2+2?' },
    ];
    await chat(asked);
    await chat(asked); // regenerate: the same list again is the same branch
    expect(middleware.conversations.branches('chat-1')).toHaveLength(1);
    const edited = [...asked.slice(0, 2), { role: 'user' as const, content: 'what is 3+3?' }];
    await chat(edited);

    const branches = middleware.conversations.branches('chat-1');
    expect(branches).toHaveLength(2);
    const session = middleware.conversations.session('chat-1')!;
    expect(session.history.map((m) => textOf(m.content))).toEqual(['hi', first, 'what is 3+3?']);
    middleware.conversations.close();

    // The old branch is untouched; a restarted process continues the new one.
    const again = compactorMiddleware({ sessionDir, limits: { capacity: 50_000 } });
    const reopened = wrapLanguageModel({ model: chatModel(), middleware: again });
    const next = [
      ...edited,
      { role: 'assistant' as const, content: 'six' },
      { role: 'user' as const, content: 'thanks' },
    ];
    await generateText({ model: reopened, messages: next, providerOptions });
    expect(again.conversations.branches('chat-1')).toEqual(branches);
    expect(again.conversations.session('chat-1')!.history.map((m) => textOf(m.content))).toEqual([
      'hi',
      first,
      'what is 3+3?',
      'six',
      'thanks',
    ]);
    again.conversations.close();
    expect(readdirSync(branches[0]).length).toBeGreaterThan(0);
  });

  for (const stored of [false, true])
    it(`H1/C1: ${stored ? 'with' : 'without'} sessionDir a fork keeps the compaction boundary of the shared prefix`, async () => {
      const real = loadRealSession();
      const conversations = createConversations({
        limits: { capacity: 8_000 },
        ...(stored ? { sessionDir: tempDir() } : {}),
      });
      const call = (messages: ReturnType<typeof fullConversation>) =>
        conversations.project({ conversationId: 'loop', system: real.system, messages });
      // The loop runs until its first compaction; the chat then goes on from there.
      let steps = 0;
      while ((await call(fullConversation(real, ++steps))).decision !== 'compacted')
        expect(steps).toBeLessThan(40);
      const done = fullConversation(real, steps);
      await call([...done, msg.user('now run the tests')]);
      const old = conversations.session('loop')!;
      const summary = old.history[0];
      expect(old.history.length).toBeLessThan(done.length); // the prefix is compacted

      await call([...done, msg.user('now write the docs')]);
      const fork = conversations.session('loop')!;
      expect(fork).not.toBe(old);
      expect(fork.history[0]).toEqual(summary);
      expect(fork.history.length).toBe(old.history.length);
      expect(textOf(fork.history.at(-1)!.content)).toBe('now write the docs');
      expect(conversations.branches('loop')).toHaveLength(stored ? 2 : 0);
      conversations.close();
    });

  it("H1: a projection reports the turn under the turn machine's own names (request, decision, strategy, summaryCalls, compaction)", async () => {
    const real = loadRealSession();
    const conversations = createConversations({ limits: { capacity: 8_000 } });
    let steps = 0;
    let p;
    do {
      expect(++steps).toBeLessThan(40);
      p = await conversations.project({
        conversationId: 'names',
        system: real.system,
        messages: fullConversation(real, steps),
      });
    } while (p.decision !== 'compacted');
    const session = conversations.session('names')!;
    expect(p.session).toBe(session);
    expect(p.strategy).toBe('local');
    expect(p.compaction).toMatchObject({ status: 'compacted', strategy: 'local' });
    expect(p.summaryCalls).toBe(p.compaction!.summaryCalls);
    expect(p.compaction!.receipt).not.toBeNull();
    // The request the session would send next is the turn's own.
    expect(p.request).toBe(session.prepareRequest().messages);
    // The old names stay as aliases of the same values.
    expect(p.messages).toBe(p.request);
    expect(p.compacted).toBe(true);
    conversations.close();
  });

  it('H1: a conversation without a framework id is named by its system prompt and first message', async () => {
    const hi = [msg.user('hi')];
    expect(conversationIdOf(hi, undefined, 'You are a tutor.')).not.toBe(
      conversationIdOf(hi, undefined, 'You are a travel agent.'),
    );
    const middleware = compactorMiddleware({ limits: { capacity: 50_000 } });
    const chat = chatModel();
    const model = wrapLanguageModel({ model: chat, middleware });
    for (const system of ['You are a tutor.', 'You are a travel agent.'])
      await generateText({ model, system, messages: [{ role: 'user', content: 'hi' }] });
    // Each chat has its own conversation, named from what the model was sent.
    const sessions = chat.doGenerateCalls.map(({ prompt }) => {
      const system = textOf(prompt[0].content as string);
      const id = conversationIdOf(fromModelMessages(prompt.slice(1) as never), undefined, system);
      return middleware.conversations.session(id);
    });
    expect(sessions[0]).toBeDefined();
    expect(sessions[1]).toBeDefined();
    expect(sessions[0]).not.toBe(sessions[1]);
  });

  it('H1: the Agents SDK names a conversation by the run context conversationId', async () => {
    const filter = compactorInputFilter({ limits: { capacity: 50_000 } });
    const agent = new Agent({ name: 'chat', model: new ScriptedModel([[assistantMessage('hello')]]) });
    const result = await run(agent, 'hi', {
      callModelInputFilter: filter,
      context: { conversationId: 'chat-7' },
    });
    expect(result.finalOutput).toBe('hello');
    expect(filter.conversations.session('chat-7')?.history).toHaveLength(1);
  });

  it('H1: beyond maxConversations the least recently used is closed, and with sessionDir reopened from its store', async () => {
    const sessionDir = tempDir();
    const conversations = createConversations({
      sessionDir,
      limits: { capacity: 50_000 },
      maxConversations: 2,
    });
    const a = [msg.user('a')];
    await conversations.project({ conversationId: 'a', messages: a });
    await conversations.project({ conversationId: 'b', messages: [msg.user('b')] });
    await conversations.project({ conversationId: 'a', messages: a }); // a is the most recent now
    await conversations.project({ conversationId: 'c', messages: [msg.user('c')] });
    expect(conversations.session('b')).toBeUndefined();
    expect(conversations.session('a')).toBeDefined();
    expect(conversations.session('c')).toBeDefined();
    const b = [msg.user('b'), msg.assistant('ok'), msg.user('more')];
    await conversations.project({ conversationId: 'b', messages: b });
    expect(conversations.session('b')!.history.map((m) => textOf(m.content))).toEqual(['b', 'ok', 'more']);
    expect(conversations.session('a')).toBeUndefined();
    conversations.close();
  });

  it('H1: delete(id) closes a conversation and removes its stored branches', async () => {
    const sessionDir = tempDir();
    const conversations = createConversations({ sessionDir, limits: { capacity: 50_000 } });
    await conversations.project({ conversationId: 'gone', messages: [msg.user('x')] });
    await conversations.project({ conversationId: 'gone', messages: [msg.user('y')] }); // a fork
    expect(conversations.branches('gone')).toHaveLength(2);
    await conversations.delete('gone');
    expect(conversations.session('gone')).toBeUndefined();
    expect(conversations.branches('gone')).toEqual([]);
    expect(existsSync(join(sessionDir, 'gone.sync.json'))).toBe(false);
    await conversations.project({ conversationId: 'gone', messages: [msg.user('z')] });
    expect(conversations.session('gone')!.history).toHaveLength(1);
    conversations.close();
  });

  it('a damaged sync point under sessionDir is a one-line error naming the file', async () => {
    const sessionDir = tempDir();
    writeFileSync(join(sessionDir, 'broken.sync.json'), '{"synced": "many"}');
    const conversations = createConversations({ sessionDir });
    const error = await conversations.project({ conversationId: 'broken', messages: [msg.user('x')] }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/broken\.sync\.json is not a conversation sync point/);
    expect(error?.message.split('\n')).toHaveLength(1);
    conversations.close();
  });

  it('a bad maxConversations throws one CompactorOptionsError naming the option', () => {
    expect(() => compactorMiddleware({ maxConversations: 0 })).toThrow(CompactorOptionsError);
    expect(() => compactorMiddleware({ maxConversations: 0 })).toThrow(
      /compactorMiddleware: options\.maxConversations/,
    );
  });
});
