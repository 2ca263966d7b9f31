/**
 * Requests shaped exactly as the coding agents send them (Claude Code 2.1.197, Codex 0.171.0,
 * opencode 1.18.33, Qwen Code 0.15.10, as recorded against a fake model): their headers, the
 * fields and blocks the proxy does not model, and where each puts its conversation id. Texts
 * are shortened; the shapes are not.
 */

/** A file's content as each agent's read tool returns it (numbered lines). */
export const fileText = (name: string, lines: number) =>
  Array.from(
    { length: lines },
    (_, i) => `${i + 1}\t${name} line ${i}: const v${i} = ${(i * 7919) % 10007};`,
  ).join('\n');

const CLAUDE_BETAS =
  'claude-code-20250219,interleaved-thinking-2025-05-14,thinking-token-count-2026-05-13,context-management-2025-06-27,prompt-caching-scope-2026-01-05,mid-conversation-system-2026-04-07,effort-2025-11-24';

/** Claude Code's headers for conversation `session` (its key in `x-api-key`). */
export const claudeCodeHeaders = (session: string): Record<string, string> => ({
  'content-type': 'application/json',
  'anthropic-version': '2023-06-01',
  'anthropic-beta': CLAUDE_BETAS,
  'x-api-key': 'sk-ant-agent-shapes-test',
  'x-app': 'cli',
  'user-agent': 'claude-cli/2.1.197 (external, sdk-cli)',
  'x-claude-code-session-id': session,
  'anthropic-dangerous-direct-browser-access': 'true',
});

const ephemeral = { type: 'ephemeral' };

/**
 * Claude Code's request after `reads` file reads: a system message inside `messages` (its
 * agent list), thinking with signatures, a redacted thinking block, cache breakpoints on the
 * system prompt and on the newest user content only, `context_management`, `output_config`,
 * adaptive thinking and `metadata.user_id` as a JSON string naming the session.
 */
export function claudeCodeRequest(session: string, reads: number, lines = 40, maxTokens = 64_000) {
  const messages: any[] = [
    {
      role: 'user',
      content: [
        {
          type: 'text',
          text: '<system-reminder>\nAs you answer the user, use the context below.\n</system-reminder>',
        },
        {
          type: 'text',
          text: 'Read alpha.txt and beta.txt and tell me their markers.',
          ...(reads === 0 ? { cache_control: ephemeral } : {}),
        },
      ],
    },
    {
      role: 'system',
      content: 'Available agent types for the Task tool:\n- general-purpose: researches questions.',
    },
  ];
  for (let n = 0; n < reads; n++) {
    messages.push({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: `I should read file ${n}.`, signature: `EqQBCkgIBxABGAIiQL${n}sig==` },
        ...(n === 0 ? [{ type: 'redacted_thinking', data: 'EmwKAhgBEgy3redacted==' }] : []),
        { type: 'text', text: `Reading file ${n}.` },
        { type: 'tool_use', id: `toolu_0${n}`, name: 'Read', input: { file_path: `/ws/file-${n}.txt` } },
      ],
    });
    messages.push({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: `toolu_0${n}`,
          content: fileText(`file-${n}`, lines),
          ...(n === reads - 1 ? { cache_control: ephemeral } : {}),
        },
      ],
    });
  }
  return {
    model: 'claude-opus-4-8',
    messages,
    system: [
      { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.197; cc_entrypoint=sdk-cli;' },
      { type: 'text', text: 'You are Claude Code, an interactive CLI tool.', cache_control: ephemeral },
      { type: 'text', text: 'Use the Read tool to read files.', cache_control: ephemeral },
    ],
    tools: [
      {
        name: 'Read',
        description: 'Reads a file from the local filesystem.',
        input_schema: {
          type: 'object',
          properties: { file_path: { type: 'string', description: 'The absolute path' } },
          required: ['file_path'],
          additionalProperties: false,
          $schema: 'http://json-schema.org/draft-07/schema#',
        },
      },
    ],
    metadata: {
      user_id: JSON.stringify({ device_id: 'a1b2c3d4e5f6', account_uuid: '', session_id: session }),
    },
    max_tokens: maxTokens,
    thinking: { type: 'adaptive' },
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    output_config: { effort: 'high' },
    stream: true,
  };
}

/** Codex's headers for thread `thread` (every id it sends is the thread's). */
export const codexHeaders = (thread: string): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'text/event-stream',
  authorization: 'Bearer sk-codex-agent-shapes-test',
  originator: 'codex_exec',
  'user-agent': 'codex_exec/0.171.0 (Linux; x86_64) dumb (codex_exec; 0.171.0)',
  'session-id': thread,
  'thread-id': thread,
  'x-client-request-id': thread,
  'x-codex-window-id': `${thread}:0`,
  'x-codex-turn-metadata': JSON.stringify({ session_id: thread, turn_id: 't-1', request_kind: 'turn' }),
  'x-codex-beta-features': 'remote_compaction_v2',
});

/**
 * Codex's Responses request after `reads` reads: its system prompt as a `developer` message,
 * encrypted reasoning items, a custom (grammar) tool, no output limit, `client_metadata`.
 */
export function codexRequest(thread: string, reads: number, lines = 40) {
  const input: any[] = [
    {
      type: 'message',
      role: 'developer',
      content: [{ type: 'input_text', text: 'You are Codex, a coding agent.' }],
    },
    {
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: '<environment_context>\n  <cwd>/ws</cwd>\n</environment_context>' },
      ],
    },
    {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'Read alpha.txt and beta.txt and tell me their markers.' }],
    },
  ];
  for (let n = 0; n < reads; n++)
    input.push(
      { type: 'reasoning', summary: [], content: null, encrypted_content: `gAAAAABo${n}encrypted==` },
      {
        type: 'function_call',
        name: 'exec_command',
        arguments: JSON.stringify({ cmd: `cat file-${n}.txt` }),
        call_id: `call_0${n}`,
      },
      {
        type: 'function_call_output',
        call_id: `call_0${n}`,
        output: `Chunk ID: ${n}\nWall time: 0.0 seconds\nProcess exited with code 0\nOutput:\n${fileText(`file-${n}`, lines)}`,
      },
    );
  return {
    model: 'fake-model',
    instructions: null,
    input,
    tools: [
      {
        type: 'function',
        name: 'exec_command',
        description: 'Runs a command.',
        strict: false,
        parameters: {
          type: 'object',
          properties: { cmd: { type: 'string' } },
          required: ['cmd'],
          additionalProperties: false,
        },
      },
      {
        type: 'custom',
        name: 'apply_patch',
        description: 'Edits files.',
        format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch"' },
      },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    reasoning: { summary: 'auto' },
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: thread,
    client_metadata: { session_id: thread, thread_id: thread, turn_id: 't-1' },
  };
}

/** opencode's Chat Completions headers for its session `ses`. */
export const opencodeHeaders = (ses: string): Record<string, string> => ({
  'content-type': 'application/json',
  authorization: 'Bearer sk-opencode-agent-shapes-test',
  'user-agent': 'opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14',
  'x-session-id': ses,
  'x-session-affinity': ses,
});

/** opencode's first request of a task (openai-compatible provider: `max_tokens` is the model's output limit). */
export const opencodeRequest = (task: string) => ({
  model: 'fake-model',
  max_tokens: 8_192,
  messages: [
    { role: 'system', content: 'You are opencode, an interactive CLI tool.' },
    { role: 'user', content: task },
  ],
  tools: [
    {
      type: 'function',
      function: {
        name: 'read',
        description: 'Read a file',
        parameters: { type: 'object', properties: { filePath: { type: 'string' } }, required: ['filePath'] },
      },
    },
  ],
  tool_choice: 'auto',
  stream: true,
  stream_options: { include_usage: true },
});

/** Qwen Code's request: a large system prompt and tools, `max_tokens: 8000`, no session id anywhere. */
export const qwenRequest = (systemLines: number) => ({
  model: 'fake-model',
  messages: [
    {
      role: 'system',
      content: Array.from(
        { length: systemLines },
        (_, i) => `Rule ${i}: follow the project conventions.`,
      ).join('\n'),
    },
    { role: 'user', content: 'This is the Qwen Code. We are setting up the context for our chat.' },
    { role: 'assistant', content: 'Got it. Thanks for the context!' },
    { role: 'user', content: 'Read alpha.txt.' },
  ],
  tools: [
    {
      type: 'function',
      function: {
        name: 'read_file',
        description: 'Reads a file',
        parameters: { type: 'object', properties: { file_path: { type: 'string' } } },
      },
    },
  ],
  max_tokens: 8_000,
  stream: true,
  stream_options: { include_usage: true },
});

export const qwenHeaders: Record<string, string> = {
  'content-type': 'application/json',
  authorization: 'Bearer sk-qwen-agent-shapes-test',
  'user-agent': 'QwenCode/0.15.10 (linux; x64)',
};
