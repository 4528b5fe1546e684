/**
 * What a tool call did to the files it names. Agents name their tools differently (Claude Code
 * `Read`/`Edit`/`Bash`, Codex `shell`/`apply_patch`, MCP servers `read_file`/`write_file`), so
 * the kind comes from an exact table first and a keyword match second.
 */
export const TOOL_KINDS = ['read', 'edit', 'search', 'execute', 'other'] as const;
export type ToolKind = (typeof TOOL_KINDS)[number];

const KNOWN_TOOLS: Readonly<Record<string, ToolKind>> = {
  read: 'read',
  view: 'read',
  readfile: 'read',
  notebookread: 'read',
  edit: 'edit',
  multiedit: 'edit',
  write: 'edit',
  notebookedit: 'edit',
  applypatch: 'edit',
  strreplaceeditor: 'edit',
  grep: 'search',
  glob: 'search',
  ls: 'search',
  bash: 'execute',
  shell: 'execute',
};

// Edit words are tested before read words: "str_replace_editor" and "write_file" modify files.
const KEYWORD_KINDS: ReadonlyArray<[RegExp, ToolKind]> = [
  [/edit|write|patch|replace|create|insert|delete|rename|move/, 'edit'],
  [/read|view|open|show|(?:^|[^a-z])cat(?:[^a-z]|$)/, 'read'],
  [/grep|glob|search|find|list|(?:^|[^a-z])ls(?:[^a-z]|$)/, 'search'],
  [/bash|shell|exec|run|command|terminal/, 'execute'],
];

/** The kind of a tool; `overrides` (exact tool names) win over the built-in guesses. */
export function toolKindOf(
  toolName: string,
  overrides: Readonly<Record<string, ToolKind>> = {},
): ToolKind {
  const override = overrides[toolName];
  if (override !== undefined) return override;
  const compact = toolName.toLowerCase().replace(/[^a-z]/g, '');
  const known = KNOWN_TOOLS[compact];
  if (known !== undefined) return known;
  const lower = toolName.toLowerCase();
  for (const [pattern, kind] of KEYWORD_KINDS) if (pattern.test(lower)) return kind;
  return 'other';
}

/** Reads and edits name files the agent looked at; a Grep or Bash path names only a scope. */
export function isFileTouch(kind: ToolKind): boolean {
  return kind === 'read' || kind === 'edit';
}
