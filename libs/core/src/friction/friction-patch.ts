import type { Proposal } from '@engram/contracts';

/** Up to this many lines of the file follow the inserted ones, as the hunk's context. */
const CONTEXT_LINES = 3;

/** What a patch is made from: the record, or a review API message with its kind. */
export type FrictionPatchInput = Pick<Proposal, 'proposalId' | 'kind' | 'status' | 'text'>;

export type FrictionPatchRefusal =
  { code: 'not-approved'; message: string } | { code: 'not-a-file'; message: string };

/**
 * An approved friction proposal's change, as a unified diff `git apply` takes without options
 * (`engram review apply ID --out patch.diff`): the proposal's lines inserted at the top of its
 * file, followed by the file's first lines as context — or, when the repository has no such file,
 * a patch creating it. `current` is the file's text in the repository (null: absent). The stored
 * proposal carries a zero-context hunk (the report does not read repositories); this one is made
 * against the repository the reviewer applies it to.
 */
export function frictionPatch(
  record: FrictionPatchInput,
  current: string | null,
): { ok: true; file: string; patch: string } | ({ ok: false } & FrictionPatchRefusal) {
  const file = frictionPatchTarget(record);
  if (file === null) {
    return {
      ok: false,
      code: 'not-a-file',
      message: `${record.proposalId} is not a file change (${
        record.kind === 'friction' ? 'a memory to retire' : 'a MEMORY.md line'
      }): there is no patch to write`,
    };
  }
  if (record.status !== 'approved') {
    return {
      ok: false,
      code: 'not-approved',
      message: `${record.proposalId} is ${record.status}: only an approved proposal is applied`,
    };
  }
  const added = record.text
    .split('\n')
    .filter((line) => line.startsWith('+') && !line.startsWith('+++ '))
    .map((line) => line.slice(1));
  const plus = added.map((line) => `+${line}`);
  if (current === null) {
    return {
      ok: true,
      file,
      patch: ['--- /dev/null', `+++ b/${file}`, `@@ -0,0 +1,${added.length} @@`, ...plus, ''].join(
        '\n',
      ),
    };
  }
  const lines = current === '' ? [] : current.replace(/\n$/, '').split('\n');
  const context = lines.slice(0, CONTEXT_LINES);
  const lastLineInContext = context.length === lines.length && lines.length > 0;
  const noNewlineAtEnd = lastLineInContext && !current.endsWith('\n');
  const oldRange = context.length === 0 ? '0,0' : `1,${context.length}`;
  return {
    ok: true,
    file,
    patch: [
      `--- a/${file}`,
      `+++ b/${file}`,
      `@@ -${oldRange} +1,${added.length + context.length} @@`,
      ...plus,
      ...context.map((line) => ` ${line}`),
      ...(noNewlineAtEnd ? ['\\ No newline at end of file'] : []),
      '',
    ].join('\n'),
  };
}

/**
 * The file a friction record changes (AGENTS.md, CLAUDE.md, a skill's SKILL.md): the one its
 * stored patch names. Null for a memory to retire, a reflector proposal, or a path that would
 * leave the repository. Read from the text, so a review API message (which has no target field)
 * says it as well as the record.
 */
export function frictionPatchTarget(record: FrictionPatchInput): string | null {
  const file = /^\+\+\+ b\/(.+)$/m.exec(record.text)?.[1] ?? null;
  if (record.kind !== 'friction' || file === null || !isPlainRelativePath(file)) return null;
  return file;
}

/**
 * A path inside the repository (the record comes from a topic: its target reaches the file system
 * only when it cannot leave the repository).
 */
function isPlainRelativePath(path: string): boolean {
  return (
    path !== '' &&
    !path.startsWith('/') &&
    !/^[A-Za-z]:/.test(path) &&
    !path.includes('\\') &&
    !path.split('/').some((part) => part === '..' || part === '.' || part === '')
  );
}
