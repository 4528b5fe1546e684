/**
 * Engram's hooks in a Claude Code settings file (`engram hook install` / `uninstall`, issue #7).
 * Pure: the caller reads and writes the file.
 *
 * Claude Code's settings format (code.claude.com/docs/en/hooks, "Configuration"; the same page
 * at docs.claude.com/docs/claude-code/hooks): `{"hooks": {"<EventName>": [{"matcher": "<tool
 * pattern>", "hooks": [{"type": "command", "command": "…", "timeout": <s>}]}]}}`. `matcher` only
 * applies to the tool events and may be left out elsewhere. Every other key of the file (and
 * every other hook) belongs to the user: it is kept as it is, in its place.
 */

/** One handler of a matcher group (`type: command` and whatever else Claude Code accepts). */
export type ClaudeHookHandler = Record<string, unknown> & { type?: unknown; command?: unknown };

/** One matcher group of an event. */
export interface ClaudeHookGroup {
  matcher?: string;
  hooks: ClaudeHookHandler[];
  [key: string]: unknown;
}

/** `hooks` of a settings file: event name → matcher groups. */
export type ClaudeHooksConfig = Record<string, ClaudeHookGroup[]>;

/** What happened to one event's Engram entry. */
export type HookEntryChange = 'added' | 'updated' | 'unchanged' | 'removed';

export interface SettingsEdit {
  /** The whole settings object after the edit (the input is never modified). */
  settings: Record<string, unknown>;
  /** Per event of Engram's hooks. */
  changes: Record<string, HookEntryChange>;
  /** False when the result equals the input (nothing to write). */
  changed: boolean;
}

/** A settings file whose shape is not Claude Code's; the message names the key. */
export class ClaudeSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClaudeSettingsError';
  }
}

/**
 * Whether a handler runs `engram hook` (however it is called: `npx --no-install engram hook`,
 * `node …/bin/engram hook --data-dir …`, `engram hook`) — the only handlers install replaces and
 * uninstall removes.
 */
export function isEngramHookHandler(handler: unknown): boolean {
  if (!isRecord(handler) || typeof handler.command !== 'string') return false;
  return /(^|[\s/"'])engram(\.js)?["']?\s+hook(\s|$)/.test(handler.command);
}

/**
 * Parses a settings file's text and checks the parts install touches. Empty text is an empty
 * settings object (a new file). Throws ClaudeSettingsError naming what is wrong.
 */
export function parseClaudeSettings(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ClaudeSettingsError(`is not valid JSON (${(error as Error).message})`);
  }
  if (!isRecord(parsed)) throw new ClaudeSettingsError('must hold a JSON object');
  hooksOf(parsed);
  return parsed;
}

/**
 * Adds Engram's hook entries: per event, our one matcher group. An event that already has exactly
 * our entries is left alone (a second install changes nothing); Engram handlers that differ (an
 * older command, another matcher) are replaced; every other group and handler stays, in order.
 */
export function installEngramHooks(
  settings: Record<string, unknown>,
  ours: ClaudeHooksConfig,
): SettingsEdit {
  const hooks = cloneHooks(hooksOf(settings));
  const changes: Record<string, HookEntryChange> = {};
  for (const [event, groups] of Object.entries(ours)) {
    const existing = hooks[event] ?? [];
    const present = existing.map(engramPart).filter((group) => group !== null);
    if (sameJson(present, groups)) {
      changes[event] = 'unchanged';
      continue;
    }
    changes[event] = present.length === 0 ? 'added' : 'updated';
    hooks[event] = [...withoutEngram(existing), ...structuredClone(groups)];
  }
  return edit(settings, hooks, changes);
}

/** Removes Engram's handlers only; groups and events left empty by that go too. */
export function uninstallEngramHooks(settings: Record<string, unknown>): SettingsEdit {
  const hooks = cloneHooks(hooksOf(settings));
  const changes: Record<string, HookEntryChange> = {};
  for (const [event, groups] of Object.entries(hooks)) {
    if (!groups.some((group) => engramPart(group) !== null)) continue;
    changes[event] = 'removed';
    const kept = withoutEngram(groups);
    if (kept.length > 0) hooks[event] = kept;
    else delete hooks[event];
  }
  return edit(settings, hooks, changes);
}

function edit(
  settings: Record<string, unknown>,
  hooks: ClaudeHooksConfig,
  changes: Record<string, HookEntryChange>,
): SettingsEdit {
  const changed = Object.values(changes).some((change) => change !== 'unchanged');
  if (!changed) return { settings, changes, changed };
  const next: Record<string, unknown> = { ...settings };
  // Assigning keeps the key where it was; an uninstall that leaves no hooks drops the key.
  if (Object.keys(hooks).length > 0) next.hooks = hooks;
  else delete next.hooks;
  return { settings: next, changes, changed };
}

/** The group reduced to its Engram handlers, or null when it has none. */
function engramPart(group: ClaudeHookGroup): ClaudeHookGroup | null {
  const handlers = group.hooks.filter(isEngramHookHandler);
  return handlers.length === 0 ? null : { ...group, hooks: handlers };
}

function withoutEngram(groups: ClaudeHookGroup[]): ClaudeHookGroup[] {
  return groups
    .map((group) => ({ ...group, hooks: group.hooks.filter((h) => !isEngramHookHandler(h)) }))
    .filter((group) => group.hooks.length > 0);
}

/** `settings.hooks`, checked: an object of event → array of groups with a `hooks` array. */
function hooksOf(settings: Record<string, unknown>): ClaudeHooksConfig {
  const hooks = settings.hooks;
  if (hooks === undefined) return {};
  if (!isRecord(hooks)) throw new ClaudeSettingsError('"hooks" must be an object');
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) {
      throw new ClaudeSettingsError(`"hooks.${event}" must be an array of matcher groups`);
    }
    groups.forEach((group: unknown, i) => {
      if (!isRecord(group) || !Array.isArray(group.hooks)) {
        throw new ClaudeSettingsError(
          `"hooks.${event}[${i}]" must be an object with a "hooks" array`,
        );
      }
    });
  }
  return hooks as ClaudeHooksConfig;
}

function cloneHooks(hooks: ClaudeHooksConfig): ClaudeHooksConfig {
  return structuredClone(hooks);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
