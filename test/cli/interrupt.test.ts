import { describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import { exitCodeOf } from '#src/cli/exit-codes.js';
import { Interrupted, watchInterrupts } from '#src/cli/interrupt.js';
import { sink } from '#support/cli.js';

/** A process stand-in that only emits signals (the real one would be killed by them). */
function signals() {
  const proc = new EventEmitter();
  const exits: number[] = [];
  const err = sink();
  const w = watchInterrupts(proc as never, (code) => exits.push(code), err);
  return { proc, exits, err, w };
}

describe('interrupt handling of the CLI process (R2)', () => {
  it('R2: a command that did not claim the interrupt ends at once with 128 + signal number', () => {
    const { proc, exits, err, w } = signals();
    proc.emit('SIGTERM');
    expect(exits).toEqual([143]);
    expect(err.text()).toBe('compactor: interrupted by SIGTERM\n');
    expect(w.signal.aborted).toBe(false);
    w.dispose();
  });

  it('R2: a claimed interrupt aborts the signal (reason Interrupted); a second one ends the process', () => {
    const { proc, exits, w } = signals();
    w.claim();
    proc.emit('SIGINT');
    expect(exits).toEqual([]);
    expect(w.signal.reason).toBeInstanceOf(Interrupted);
    expect(exitCodeOf(w.signal.reason as Interrupted)).toBe(130);
    proc.emit('SIGINT');
    expect(exits).toEqual([130]);
    w.dispose();
    expect(proc.listenerCount('SIGINT') + proc.listenerCount('SIGTERM')).toBe(0);
  });
});
