import { describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';
import * as family from '#src/core/errors.js';
import { CompactorError } from '#src/core/errors.js';
import { exitCodeOf } from '#src/cli/exit-codes.js';

const info = { provider: 'openai', model: 'gpt-test' };

/** One instance of every class the errors module exports, built with plausible arguments. */
const samples: Record<string, CompactorError> = {
  CompactorError: new CompactorError('some-code', 'base'),
  UserError: new family.UserError('bad file'),
  CompactorOptionsError: new family.CompactorOptionsError(
    'createCompactorSession: options.x',
    'must be a number',
  ),
  StoredSessionConflictError: new family.StoredSessionConflictError(
    '/tmp/s',
    'holds another session',
    'pick another',
  ),
  WindowTooSmallError: new family.WindowTooSmallError({ prefix: 10, task: 20, reserved: 30 }, 50),
  SessionBusyError: new family.SessionBusyError('busy'),
  RequestRefusedError: new family.RequestRefusedError(413, 'request body is larger than 10 bytes'),
  ProviderError: new family.ProviderError('failed', info),
  RetryableProviderError: new family.RetryableProviderError('timed out', info),
  ContextCapacityError: new family.ContextCapacityError('too long', info),
  EmptySummaryError: new family.EmptySummaryError(info),
  BudgetError: new family.BudgetError('summary input budget', 10, 5),
  NothingToSummarizeError: new family.NothingToSummarizeError('summary input budget', 3, 5),
  RouteError: new family.RouteError('unknown provider'),
  ActorFailureError: new family.ActorFailureError('capacity', 'too long'),
  PeerDependencyError: new family.PeerDependencyError('install it'),
  ModelPathError: new family.ModelPathError('not a path'),
  CancelledError: new family.CancelledError('cancelled'),
  InternalError: new family.InternalError('broken'),
  Interrupted: new family.Interrupted('SIGINT'),
};

const classes = Object.entries(family).filter(
  (e): e is [string, typeof CompactorError] => typeof e[1] === 'function',
);

describe('the error family', () => {
  it('has a sample for every exported class (a new class gets one here)', () => {
    expect(classes.map(([name]) => name).sort()).toEqual(Object.keys(samples).sort());
  });

  it.each(classes)(
    '%s is an instance of the base and of itself, with a code and its own name',
    (name, cls) => {
      const e = samples[name];
      expect(CompactorError.isInstance(e)).toBe(true);
      expect(cls.isInstance(e)).toBe(true);
      expect(e).toBeInstanceOf(cls);
      expect(e).toBeInstanceOf(Error);
      expect(e.name).toBe(name);
      expect(e.code).toMatch(/^[a-z]+(-[a-z]+)*$/);
    },
  );

  it('isInstance of a subclass refuses its parent and its siblings', () => {
    expect(family.ContextCapacityError.isInstance(samples.ProviderError)).toBe(false);
    expect(family.ContextCapacityError.isInstance(samples.EmptySummaryError)).toBe(false);
    expect(family.ProviderError.isInstance(samples.ContextCapacityError)).toBe(true);
    expect(family.UserError.isInstance(samples.ProviderError)).toBe(false);
    expect(family.UserError.isInstance(samples.WindowTooSmallError)).toBe(true);
    expect(CompactorError.isInstance(new Error('plain'))).toBe(false);
    expect(CompactorError.isInstance(null)).toBe(false);
    expect(CompactorError.isInstance('ProviderError')).toBe(false);
  });

  it('recognises an error made by another copy of the package (same registry marks, other classes)', () => {
    // A second copy defines its own classes; only the Symbol.for marks are shared.
    class OtherCopyError extends Error {
      readonly code = 'context-capacity';
      constructor() {
        super('too long');
        for (const name of ['', '.ProviderError', '.ContextCapacityError'])
          Object.defineProperty(this, Symbol.for(`context-compactor.error${name}`), { value: true });
      }
    }
    const foreign = new OtherCopyError();
    expect(foreign).not.toBeInstanceOf(CompactorError);
    expect(CompactorError.isInstance(foreign)).toBe(true);
    expect(family.ProviderError.isInstance(foreign)).toBe(true);
    expect(family.ContextCapacityError.isInstance(foreign)).toBe(true);
    expect(family.EmptySummaryError.isInstance(foreign)).toBe(false);
  });

  it('keeps the cause it wraps', () => {
    const cause = new Error('socket hang up');
    expect(new family.ProviderError('failed', info, { cause }).cause).toBe(cause);
    expect(new family.ActorFailureError('provider', 'failed', { cause }).cause).toBe(cause);
  });

  it('carries no exit code: the CLI maps codes (user errors 2, interrupts 130/143, the rest 1)', () => {
    for (const e of Object.values(samples)) expect(e).not.toHaveProperty('exitCode');
    const user = ['UserError', 'CompactorOptionsError', 'StoredSessionConflictError', 'WindowTooSmallError'];
    for (const [name, e] of Object.entries(samples)) {
      const expected = user.includes(name) ? 2 : name === 'Interrupted' ? 130 : 1;
      expect([name, exitCodeOf(e)]).toEqual([name, expected]);
    }
    expect(exitCodeOf(new family.Interrupted('SIGTERM'))).toBe(143);
    expect(exitCodeOf(new Error('plain'))).toBe(1);
  });
});

describe('the lint keeps errors in the family', () => {
  it('refuses a built-in error and an error class outside src/core/errors.ts', async () => {
    const eslint = new ESLint();
    const code =
      "export class FooError extends Error {}\nexport const f = (): never => {\n  throw new Error('x');\n};\n";
    const [result] = await eslint.lintText(code, { filePath: 'src/core/probe.ts' });
    const family = result.messages.filter((m) => m.ruleId === 'no-restricted-syntax');
    expect(family.map((m) => m.line)).toEqual([1, 3]);
  });
});
