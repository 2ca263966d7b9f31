/**
 * Fake xAI server: `POST /v1/responses/compact` answers with one compaction item,
 * `usage.dropped_message_count` and the model echoed (wire-formats §4); Chat Completions
 * as in fake-openai.ts. Usage: `const srv = await startFakeXai({ script }); srv.url; srv.requests; await srv.close();`
 */
export { startFakeXai } from './fake-openai.js';
