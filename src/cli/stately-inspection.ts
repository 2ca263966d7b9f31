import type { CommandContext } from './command.js';
import { UserError } from '../core/errors.js';
import { createStatelyInspector, type StatelyInspector } from '../session/index.js';
import type { StatelySettings } from './inspect-flags.js';

/**
 * Starts the Stately relay for `--inspect=stately`, prints the address to open, and waits up
 * to the configured time for the inspector to connect; then the run goes on either way and
 * stderr says which. A port that cannot be opened is a one-line error (exit 2).
 */
export async function openStatelyInspection(
  command: string,
  ctx: CommandContext,
  settings: StatelySettings,
): Promise<StatelyInspector> {
  let stately: StatelyInspector;
  try {
    stately = await createStatelyInspector({
      port: settings.port,
      fallbackToFreePort: !settings.portGiven,
      env: ctx.env,
    });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    throw new UserError(`${command}: --inspect-port: cannot listen on 127.0.0.1:${settings.port} (${code})`);
  }
  const wait = settings.waitSeconds;
  const note = (line: string) => void ctx.stderr.write(`compactor: ${line}\n`);
  note(
    `open ${stately.url} to watch the run in the Stately inspector (${wait > 0 ? `waiting up to ${wait} s for it to connect` : 'not waiting for it'})`,
  );
  if (wait === 0) return stately;
  const connected = await stately.waitForViewer(wait * 1000, ctx.signal);
  note(connected ? 'inspector connected' : `no inspector connected after ${wait} s; running without it`);
  return stately;
}
