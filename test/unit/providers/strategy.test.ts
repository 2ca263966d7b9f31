import { describe, expect, it } from '@jest/globals';
import { isAnthropicInlineModel } from '#src/providers/catalog-data.js';
import { selectStrategy } from '#src/providers/strategy.js';

const s = (provider: string, model: string, baseUrl?: string, extra: object = {}) =>
  selectStrategy({ provider, model, ...(baseUrl ? { baseUrl } : {}), ...extra });

describe('selectStrategy (S1)', () => {
  it('S1: OpenAI Responses on api.openai.com is NativeStandalone; a custom host is Local', () => {
    expect(s('openai', 'gpt-5.4').kind).toBe('nativeStandalone');
    expect(s('openai', 'gpt-5.4', 'https://api.openai.com/v1').kind).toBe('nativeStandalone');
    expect(s('openai', 'gpt-5.4', 'https://proxy.example.com/v1').kind).toBe('local');
  });

  it('S1: OpenResponses is NativeStandalone on its own host and on api.openai.com', () => {
    expect(s('openresponses', 'gpt-5.4').kind).toBe('nativeStandalone');
    expect(s('openresponses', 'gpt-5.4', 'https://api.openai.com/v1').kind).toBe('nativeStandalone');
    expect(s('openresponses', 'gpt-5.4', 'https://elsewhere.example/v1').kind).toBe('local');
  });

  it('S1: Vercel only for openai/* on the gateway endpoint', () => {
    expect(s('vercel', 'openai/gpt-5.4').kind).toBe('nativeStandalone');
    expect(s('vercel', 'openai/gpt-5.4', 'https://ai-gateway.vercel.sh/v1').kind).toBe('nativeStandalone');
    expect(s('vercel', 'anthropic/claude-opus-4-6').kind).toBe('local');
    expect(s('vercel', 'openai/gpt-5.4', 'https://my-gateway.example.com/v1').kind).toBe('local');
  });

  it('S1: xAI only for allow-listed models on the xAI host', () => {
    expect(s('xai', 'grok-4').kind).toBe('nativeStandalone');
    expect(s('xai', 'grok-4-0709').kind).toBe('nativeStandalone');
    expect(s('xai', 'grok-2-vision').kind).toBe('local');
    expect(s('xai', 'grok-4', 'https://xai-proxy.example.com/v1').kind).toBe('local');
    expect(s('xai', 'grok-9-preview', undefined, { nativeCompaction: true }).kind).toBe('nativeStandalone');
  });

  it('S1: Anthropic Claude Opus 4.x and Sonnet 4.6+ are NativeInline; older models are Local', () => {
    for (const m of [
      'claude-opus-4-20250514',
      'claude-opus-4-1',
      'claude-opus-4-6',
      'claude-sonnet-4-6',
      'claude-sonnet-5',
      'claude-opus-5-5',
    ]) {
      expect([m, s('anthropic', m).kind]).toEqual([m, 'nativeInline']);
    }
    for (const m of [
      'claude-sonnet-4-5-20250929',
      'claude-sonnet-4-20250514',
      'claude-haiku-4-5',
      'claude-3-5-sonnet-20241022',
    ]) {
      expect([m, s('anthropic', m).kind]).toEqual([m, 'local']);
    }
  });

  it('S1: every other provider is Local, with a reason', () => {
    for (const p of ['openai-compatible', 'anthropic-compatible', 'offline']) {
      const c = s(p, 'claude-opus-4-6', 'https://openrouter.ai/api/v1');
      expect(c.kind).toBe('local');
      expect(c.reason).toMatch(/no native compaction/);
    }
  });

  it('S1: a catalog verdict nativeCompaction=false forces Local; extra trusted hosts enable fakes', () => {
    expect(s('openai', 'gpt-5.4', undefined, { nativeCompaction: false }).kind).toBe('local');
    expect(s('openai', 'gpt-5.4', 'http://127.0.0.1:9/v1', { nativeHosts: ['127.0.0.1'] }).kind).toBe(
      'nativeStandalone',
    );
  });

  it('S1: model family parser accepts anthropic/ prefixes', () => {
    expect(isAnthropicInlineModel('anthropic/claude-sonnet-4-6')).toBe(true);
    expect(isAnthropicInlineModel('claude-sonnet-4.6')).toBe(true);
    expect(isAnthropicInlineModel('claude-instant-1')).toBe(false);
  });
});
