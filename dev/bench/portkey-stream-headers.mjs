/*
 * Preloaded (`node --import`) into Portkey's gateway so its streaming path works at all.
 *
 * The gateway's Node build wraps a streamed upstream reply in @hono/node-server's lightweight
 * Response, and that class keeps the upstream reply's own Headers object instead of copying it.
 * Headers of a reply that came from fetch() are read-only, so the gateway's next step (adding its
 * x-portkey-* headers) throws "TypeError: immutable" and every streamed request ends in a 500.
 * Node 20 and Node 24 fail alike: it is the library's doing, not the runtime's.
 *
 * The fix here hands the gateway streamed replies whose headers are a writable copy; the body
 * stream is the upstream's own, passed on untouched. Non-streamed replies are left as they are,
 * so the non-streaming comparison measures the gateway unchanged.
 */
const upstreamFetch = globalThis.fetch;
// Taken now, before the gateway's server replaces the global Response with its own class.
const WebResponse = globalThis.Response;

globalThis.fetch = async (...args) => {
  const reply = await upstreamFetch(...args);
  if (!reply.body || !reply.headers.get('content-type')?.startsWith('text/event-stream')) return reply;
  return new WebResponse(reply.body, {
    status: reply.status,
    statusText: reply.statusText,
    headers: new globalThis.Headers(reply.headers),
  });
};
