import { describe, expect, it } from '@jest/globals';
import { MAX_FAILURE_MESSAGE_CHARS } from '#machines/index.js';
import { parentContextFor, requestToolsFor, rootCauseOf } from '#src/session/index.js';
import { SYSTEM, TOOLS } from '#support/session/fixtures.js';

const route = { provider: 'openai-compatible', label: 'deepseek', model: 'deepseek-chat', wire: 'chat' };
const envelope = { provider: 'deepseek', model: 'deepseek-chat', system: SYSTEM, tools: TOOLS };

describe('S2 parent context', () => {
  it('S2: reused when provider (kind or preset label) and model match', () => {
    expect(parentContextFor(envelope, route, 'manual')).toEqual({ system: SYSTEM, tools: TOOLS });
    expect(parentContextFor({ ...envelope, provider: 'OpenAI-Compatible' }, route, 'automatic')).toEqual({
      system: SYSTEM,
      tools: TOOLS,
    });
  });

  it('S2: absent when the provider or model differs, after a model switch, or without an envelope', () => {
    expect(parentContextFor({ ...envelope, model: 'deepseek-reasoner' }, route, 'manual')).toBeNull();
    expect(parentContextFor({ ...envelope, provider: 'anthropic' }, route, 'recovery')).toBeNull();
    expect(parentContextFor(envelope, route, 'modelSwitch')).toBeNull();
    expect(parentContextFor(undefined, route, 'targeted')).toBeNull();
  });

  it('S2: an envelope that only knows its wire (a saved request file) matches the route by wire and model', () => {
    const file = { wire: 'chat' as const, model: 'deepseek-chat', tools: TOOLS };
    expect(parentContextFor(file, route, 'automatic')).toEqual({ tools: TOOLS });
    expect(parentContextFor({ ...file, wire: 'responses' }, route, 'manual')).toBeNull();
    expect(parentContextFor({ ...file, model: 'deepseek-reasoner' }, route, 'manual')).toBeNull();
    expect(parentContextFor(file, { ...route, wire: null }, 'manual')).toBeNull();
    // A named provider decides on its own: a matching wire does not rescue a different provider.
    expect(parentContextFor({ ...file, provider: 'anthropic' }, route, 'manual')).toBeNull();
  });
});

describe('S2 tools on a wire that needs them for a tool loop', () => {
  // Anthropic refuses tool blocks from a request that does not define its tools.
  const anthropic = {
    provider: 'anthropic',
    label: 'anthropic',
    model: 'claude-haiku-4-5',
    wire: 'messages',
  };
  const framework = { provider: 'framework', model: 'claude-sonnet-4-6', system: SYSTEM, tools: TOOLS };

  it("S2: an Anthropic route lists the envelope's tools for another model, a model switch too, but not its system prompt", () => {
    expect(parentContextFor(framework, anthropic, 'automatic')).toBeNull();
    expect(requestToolsFor(framework, anthropic, null)).toEqual(TOOLS);
    expect(
      requestToolsFor(framework, anthropic, parentContextFor(framework, anthropic, 'modelSwitch')),
    ).toEqual(TOOLS);
  });

  it('S2: other wires follow the parent context alone; no tools when the envelope has none', () => {
    expect(
      requestToolsFor(framework, route, parentContextFor(framework, route, 'automatic')),
    ).toBeUndefined();
    expect(requestToolsFor(envelope, route, parentContextFor(envelope, route, 'manual'))).toEqual(TOOLS);
    expect(requestToolsFor({ ...framework, tools: [] }, anthropic, null)).toBeUndefined();
    expect(requestToolsFor(undefined, anthropic, null)).toBeUndefined();
    const same = { ...framework, provider: 'anthropic', model: 'claude-haiku-4-5', tools: TOOLS.slice(0, 1) };
    expect(requestToolsFor(same, anthropic, parentContextFor(same, anthropic, 'manual'))).toEqual(
      TOOLS.slice(0, 1),
    );
  });
});

describe("S2 parent context when summaries come from the caller's own model", () => {
  // What `withSummarizer` makes of a route: the caller's model writes the summaries.
  const callerRoute = { ...route, model: 'claude-sonnet-4-6', caller: { model: 'claude-sonnet-4-6' } };
  const framework = { provider: 'framework', model: 'claude-sonnet-4-6', system: SYSTEM, tools: TOOLS };

  it("S2: the agent's system prompt and tools are reused when the agent's request goes to that same model, whatever provider it names", () => {
    expect(parentContextFor(framework, callerRoute, 'automatic')).toEqual({ system: SYSTEM, tools: TOOLS });
    expect(parentContextFor({ ...framework, provider: 'anthropic' }, callerRoute, 'manual')).toEqual({
      system: SYSTEM,
      tools: TOOLS,
    });
  });

  it("S2: a summarizer that follows the request's model (a proxy) reuses them for any model", () => {
    const proxy = { ...callerRoute, model: 'the request model', caller: { model: null } };
    expect(parentContextFor(framework, proxy, 'automatic')).toEqual({ system: SYSTEM, tools: TOOLS });
    expect(parentContextFor({ ...framework, model: 'gpt-4o' }, proxy, 'automatic')).toEqual({
      system: SYSTEM,
      tools: TOOLS,
    });
  });

  it("S2: absent when the caller's summary model is another model, after a model switch, or without an envelope", () => {
    expect(parentContextFor({ ...framework, model: 'agent-model' }, callerRoute, 'automatic')).toBeNull();
    expect(parentContextFor(framework, callerRoute, 'modelSwitch')).toBeNull();
    expect(parentContextFor(undefined, callerRoute, 'manual')).toBeNull();
  });
});

describe('S4 root cause', () => {
  it('S4: the provider JSON body is cut off, secrets are redacted, and the line is bounded', () => {
    const cause = rootCauseOf(
      'openai/gpt-5.4: HTTP 500: upstream failed {"error":{"message":"boom","trace":"x"}} key sk-proj-ABCDEFGHIJKLMNOP',
    );
    expect(cause).toBe('openai/gpt-5.4: HTTP 500: upstream failed …');
    expect(rootCauseOf('header Authorization: Bearer ABCDEFGHIJKLMNOP')).toBe(
      'header Authorization: Bearer [REDACTED]',
    );
    const long = rootCauseOf('x'.repeat(1_000));
    expect(long).toHaveLength(MAX_FAILURE_MESSAGE_CHARS);
    expect(long.endsWith('…')).toBe(true);
    expect(rootCauseOf('line one\n  line two')).toBe('line one line two');
  });
});
