import { classifyTool } from '../segmentation/tool-activity';

/**
 * What counts as repairing the environment by hand (configuration drift, seed 001 phase 4:
 * "worker restarted 3 times, same root cause"): editing a configuration file, or running a
 * setup command (install dependencies, restart a service, switch a runtime, load variables).
 * Both are decided on one tool call; the adapter pairs them with the failure before them.
 */
export type ConfigRepair =
  { kind: 'config-edit'; target: string } | { kind: 'setup-command'; target: string };

/** A tool call as the drift and recipe detectors see it. */
export interface FrictionToolCall {
  toolName: string;
  command: string | null;
  filePaths: readonly string[];
  /** The call failed (outcome `error`). */
  failed?: boolean;
}

/** File names (lower-cased) that configure a project, its tools or its services. */
const CONFIG_NAMES: ReadonlySet<string> = new Set(
  `dockerfile makefile package.json tsconfig.json jsconfig.json pyproject.toml setup.cfg
  requirements.txt go.mod cargo.toml gemfile pom.xml build.gradle build.gradle.kts
  composer.json settings.json launch.json procfile justfile .tool-versions .node-version
  .python-version .ruby-version .editorconfig .gitattributes .dockerignore`.split(/\s+/),
);

/** Configuration by shape: dot-env files, rc files, `*.config.*`, config formats, service units. */
const CONFIG_SHAPES: readonly RegExp[] = [
  /^\.env(\..+)?$/,
  /\.env$/,
  /^\.[\w.-]*rc(\.[a-z]+)?$/,
  /\.config\.[cm]?[jt]s$/,
  /^(docker-)?compose([.-][\w-]+)?\.ya?ml$/,
  /\.(ya?ml|toml|ini|cfg|conf|properties|plist|service)$/,
  /^tsconfig[\w.-]*\.json$/,
  /^requirements[\w.-]*\.txt$/,
  /(config|settings)\.json$/,
];

/** Directories whose files are configuration whatever their names. */
const CONFIG_DIRS = /(^|\/)(\.github\/workflows|\.devcontainer|\.vscode|\.config|config|etc)\//;

/** Whether a path (relative to the checkout, or `~/…`) is a configuration file. */
export function isConfigFile(path: string): boolean {
  const name = (path.split('/').pop() ?? '').toLowerCase();
  if (name === '') return false;
  return (
    CONFIG_NAMES.has(name) ||
    CONFIG_SHAPES.some((shape) => shape.test(name)) ||
    CONFIG_DIRS.test(path.toLowerCase())
  );
}

/**
 * Setup commands: their first words (after `sudo`), as a program and the subcommands that make
 * it a repair of the environment (`*`: any). `npm test` is no setup; `npm ci` is.
 */
const SETUP_COMMANDS: readonly (readonly [string, readonly string[]])[] = [
  ['npm', ['install', 'i', 'ci', 'rebuild']],
  ['pnpm', ['install', 'i', 'rebuild']],
  ['yarn', ['install']],
  ['bun', ['install']],
  ['pip', ['install']],
  ['pip3', ['install']],
  ['uv', ['sync', 'pip']],
  ['poetry', ['install', 'lock']],
  ['bundle', ['install']],
  ['go', ['mod']],
  ['cargo', ['fetch', 'clean']],
  ['composer', ['install']],
  ['docker', ['compose', 'restart', 'start', 'volume', 'network']],
  ['docker-compose', ['up', 'restart', 'down', 'start']],
  ['systemctl', ['restart', 'start', 'reload', 'daemon-reload']],
  ['launchctl', ['*']],
  ['service', ['*']],
  ['brew', ['services', 'install', 'link']],
  ['nvm', ['use', 'install']],
  ['pyenv', ['*']],
  ['asdf', ['install', 'local']],
  ['direnv', ['allow', 'reload']],
  ['corepack', ['enable', 'prepare']],
  ['source', ['*']],
  ['.', ['*']],
  ['export', ['*']],
  ['make', ['setup', 'bootstrap', 'install', 'deps', 'env']],
];

/** Scripts named like environment setup: `./scripts/setup.sh`, `bin/bootstrap`. */
const SETUP_SCRIPT = /(^|\/)(setup|bootstrap|install|init[-_]?env)[\w.-]*$/;

/** Whitespace collapsed, at most this long: the command is a grouping key. */
const MAX_COMMAND_CHARS = 160;

/** The setup command a shell command is (normalised), or null when it is none. */
export function setupCommandOf(command: string): string | null {
  const normalised = command.replace(/\s+/g, ' ').trim().slice(0, MAX_COMMAND_CHARS);
  const words = normalised.split(' ').filter((word) => word !== 'sudo');
  const [program, subcommand] = words;
  if (program === undefined) return null;
  if (SETUP_SCRIPT.test(program)) return normalised;
  const known = SETUP_COMMANDS.find(([name]) => name === program);
  if (known === undefined) return null;
  const [, subcommands] = known;
  return subcommands.includes('*') || subcommands.includes(subcommand ?? '') ? normalised : null;
}

/**
 * A path as the same file in every developer's checkout: relative to the session's working
 * directory when under it, the home directory written `~` otherwise (`~/.zshrc`), `./` dropped.
 */
export function checkoutPath(path: string, cwd: string | null): string {
  const trimmed = path.trim();
  if (cwd !== null && cwd !== '') {
    const base = cwd.endsWith('/') ? cwd : `${cwd}/`;
    if (trimmed.startsWith(base)) return trimmed.slice(base.length);
  }
  return trimmed.replace(/^\/(home|Users)\/[^/]+\//, '~/').replace(/^\.\//, '');
}

/**
 * The repair a successful tool call is: an edit or write (classifyTool's `execute` without a
 * command) of a configuration file — the first such path — or a setup command. Null otherwise.
 */
export function configRepairOf(call: FrictionToolCall, cwd: string | null): ConfigRepair | null {
  const command = call.command?.trim() ?? '';
  if (command !== '') {
    const setup = setupCommandOf(command);
    return setup === null ? null : { kind: 'setup-command', target: setup };
  }
  if (classifyTool({ toolName: call.toolName, command: null }) !== 'execute') return null;
  for (const path of call.filePaths) {
    const file = checkoutPath(path, cwd);
    if (isConfigFile(file)) return { kind: 'config-edit', target: file };
  }
  return null;
}
