import { lookupModel } from '../../providers/catalog.js';
import type { CompactorSession, CompactorSessionOptions } from '../../session/index.js';
import type { ConversationCall } from './conversations.js';

/** The model's window from the bundled catalog, by the framework's provider name and model id. */
export function catalogCapacity(model: ConversationCall['model']): number | undefined {
  if (!model || model.id === '') return undefined;
  const provider = (model.provider ?? '*').split('.')[0].toLowerCase();
  return lookupModel(provider, provider, model.id)?.contextWindow;
}

/** The limits and clearing policy of a conversation's session for `call`: the shared ones with the call's on top. */
export function callSettings(
  call: Pick<ConversationCall, 'limits' | 'policy' | 'model'>,
  options: CompactorSessionOptions,
): Pick<CompactorSessionOptions, 'limits' | 'policy'> {
  const capacity = options.limits?.capacity ?? catalogCapacity(call.model);
  return {
    limits: { ...options.limits, ...call.limits, ...(capacity !== undefined ? { capacity } : {}) },
    ...(call.policy !== undefined
      ? { policy: { ...options.policy, ...call.policy } }
      : options.policy !== undefined
        ? { policy: options.policy }
        : {}),
  };
}

/** A settings object as a key that changes exactly when a setting does. */
export function settingsKey(settings: Pick<CompactorSessionOptions, 'limits' | 'policy'>): string {
  const sorted = (v: unknown): unknown =>
    typeof v === 'object' && v !== null
      ? Object.fromEntries(
          Object.entries(v)
            .filter(([, x]) => x !== undefined)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, x]) => [k, sorted(x)]),
        )
      : v;
  return JSON.stringify([sorted(settings.limits ?? {}), sorted(settings.policy ?? {})]);
}

/**
 * A call whose limits or clearing policy differ from the ones its conversation's session runs
 * with applies them (the session resolves its settings again); the same settings cost nothing.
 * Returns the key of the settings now in force.
 */
export function applyCallSettings(
  session: CompactorSession,
  current: string,
  call: Pick<ConversationCall, 'limits' | 'policy' | 'model'>,
  options: CompactorSessionOptions,
): string {
  const settings = callSettings(call, options);
  const key = settingsKey(settings);
  if (key !== current) session.configure({ limits: settings.limits, policy: settings.policy });
  return key;
}
