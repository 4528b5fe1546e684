// Which kind of work a tool call is (investigation, execution, other), from its tool name.

export type ToolActivity = 'investigate' | 'execute' | 'other';

/**
 * Claude Code's reading and searching tools (then other agents' spellings of the same), names
 * lower-cased without separators.
 */
const INVESTIGATE_TOOLS: ReadonlySet<string> = new Set(
  words(`
  read grep glob ls webfetch websearch notebookread readfile viewfile view search find listdir
  listfiles codebasesearch filesearch grepsearch
`),
);

/** Claude Code's editing, writing and command tools, then other agents' spellings. */
const EXECUTE_TOOLS: ReadonlySet<string> = new Set(
  words(`
  edit multiedit write notebookedit bash shell exec execcommand runterminalcmd runcommand
  terminal applypatch editfile writefile createfile strreplace strreplaceeditor deletefile
`),
);

/** Planning and orchestration tools: neither investigation nor execution. */
const OTHER_TOOLS: ReadonlySet<string> = new Set(
  words(`
  task agent todowrite todoread exitplanmode enterplanmode askuserquestion skill slashcommand
  bashoutput killshell killbash
`),
);

/** Leading verbs of a read-only tool name (`mcp__github__get_issue`, `search_docs`). */
const READ_VERBS: ReadonlySet<string> = new Set(
  words(`
  read search get list find fetch query view show lookup look describe browse grep glob inspect
  retrieve recall ls cat check count explain status diff preview download
`),
);

/** Leading verbs of a tool name that changes something. */
const WRITE_VERBS: ReadonlySet<string> = new Set(
  words(`
  write create update delete remove edit set put post insert add apply run exec execute push
  send merge commit deploy move rename patch upload replace modify save close comment approve
  install build start stop restart kill reset drop publish trigger invoke call assign archive
  upsert store remember navigate click type fill submit
`),
);

/**
 * Whether a tool call investigated (reads, searches), executed (edits, writes, commands) or did
 * neither. In order: Claude Code's tool names (and common spellings of other agents, compared
 * lower-case without separators); planning tools (Task, TodoWrite, …) → other; any other call
 * that carries a command → execute; otherwise the first verb of the tool's own name — for MCP
 * tools the part after the last `__` (`mcp__github__get_issue` → `get`) — read / search / get /
 * list / find … → investigate, create / update / run … → execute; no known verb → other.
 */
export function classifyTool(call: {
  toolName: string;
  command?: string | null;
  mcp?: boolean;
}): ToolActivity {
  const normalized = call.toolName.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (!isMcpName(call.toolName, call.mcp)) {
    if (INVESTIGATE_TOOLS.has(normalized)) return 'investigate';
    if (EXECUTE_TOOLS.has(normalized)) return 'execute';
    if (OTHER_TOOLS.has(normalized)) return 'other';
    if (call.command !== null && call.command !== undefined && call.command.trim() !== '') {
      return 'execute';
    }
  }
  for (const word of toolNameWords(call.toolName)) {
    if (READ_VERBS.has(word)) return 'investigate';
    if (WRITE_VERBS.has(word)) return 'execute';
  }
  return 'other';
}

function isMcpName(toolName: string, mcp: boolean | undefined): boolean {
  return mcp === true || /^mcp__/i.test(toolName);
}

/** "mcp__github__getIssue" → ["get", "issue"]; "search_docs" → ["search", "docs"]. */
function toolNameWords(toolName: string): string[] {
  const separator = toolName.lastIndexOf('__');
  const own = separator >= 0 ? toolName.slice(separator + 2) : toolName;
  return own
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '' && word !== 'mcp');
}

/** Whitespace-separated words of a template literal. */
function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== '');
}
