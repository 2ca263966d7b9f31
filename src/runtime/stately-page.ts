/** Where the Stately inspector's UI is loaded from (it accepts events posted by its parent page). */
const STATELY_INSPECTOR_UI = 'https://stately.ai/inspect';

/**
 * The page the relay serves: it embeds the Stately inspector and hands it every message that
 * arrives on the relay's WebSocket. Messages that arrive before the inspector says it is
 * ready (`@statelyai.connected`) are kept and handed over then, as `@statelyai/inspect/server`
 * does.
 */
export function statelyBridgePage(): string {
  return `<!doctype html>
<html>
<head>
  <meta charset="utf-8">
  <title>Compactor — Stately inspector</title>
  <style>html, body, iframe { margin: 0; width: 100%; height: 100%; border: 0; }</style>
</head>
<body>
  <iframe id="inspector" src="${STATELY_INSPECTOR_UI}"></iframe>
  <script>
    const frame = document.getElementById('inspector');
    const waiting = [];
    let ready = false;
    window.addEventListener('message', (e) => {
      if (!e.data || e.data.type !== '@statelyai.connected') return;
      ready = true;
      for (const event of waiting.splice(0)) frame.contentWindow.postMessage(event, '*');
    });
    const socket = new WebSocket('ws://' + location.host + '/');
    socket.onmessage = (m) => {
      const event = JSON.parse(m.data);
      if (ready) frame.contentWindow.postMessage(event, '*');
      else waiting.push(event);
    };
  </script>
</body>
</html>
`;
}
