import { EngramError, MisconfigurationError } from '../errors/engram-error';

export type PathRejection = 'empty' | 'nul_byte' | 'home_relative' | 'escapes_root' | 'no_root';

/**
 * A file path from an event that cannot be placed inside the project. Not retriable: the event is
 * fine, the path is not, so the caller drops the path (and counts it) rather than the event.
 */
export class ProjectPathError extends EngramError {
  readonly code = 'PROJECT_PATH_REJECTED';
  readonly retriable = false;

  constructor(
    readonly path: string,
    readonly reason: PathRejection,
    message: string,
  ) {
    super(message, { path, reason });
  }
}

/** The project root itself, as a normalised path. */
export const PROJECT_ROOT_PATH = '.';

/**
 * A file path as the graph and memories store it: relative to the project root, `/`-separated,
 * `.` and `..` resolved, no leading `./`. Paths are never touched on disk: this is string work,
 * and identical on every platform (agents on Windows send `C:\repo\src\a.ts`).
 *
 * Rejected, with ProjectPathError: empty paths, NUL bytes, `~` paths, relative paths whose `..`
 * climb above the root, absolute paths outside `projectRoot`, and absolute paths when the root
 * is unknown (null) — they cannot be checked, and unchecked paths must not reach the graph.
 */
export function normaliseProjectPath(rawPath: string, projectRoot: string | null): string {
  const trimmed = rawPath.trim();
  if (trimmed === '') throw new ProjectPathError(rawPath, 'empty', 'file path is empty');
  if (trimmed.includes('\0')) {
    throw new ProjectPathError(
      rawPath,
      'nul_byte',
      `file path ${JSON.stringify(rawPath)} has a NUL byte`,
    );
  }
  const path = trimmed.replace(/^file:\/\//, '').replace(/\\/g, '/');
  if (path.startsWith('~')) {
    throw new ProjectPathError(
      rawPath,
      'home_relative',
      `file path ${rawPath} is relative to a home directory, outside the project`,
    );
  }
  if (!isAbsolute(path)) return joinRelative(resolveRelative(path, rawPath));
  if (projectRoot === null) {
    throw new ProjectPathError(
      rawPath,
      'no_root',
      `absolute file path ${rawPath} cannot be checked: the project root is unknown`,
    );
  }
  const root = absoluteSegments(projectRootPath(projectRoot));
  const target = absoluteSegments(path);
  const inside = root.length <= target.length && root.every((part, i) => part === target[i]);
  if (!inside) {
    throw new ProjectPathError(
      rawPath,
      'escapes_root',
      `file path ${rawPath} is outside the project root ${projectRoot}`,
    );
  }
  return joinRelative(target.slice(root.length));
}

/** The module of a normalised path: its first `depth` directories (`.` for top-level files). */
export function moduleOf(path: string, depth: number): string {
  if (!Number.isInteger(depth) || depth < 1) {
    throw new MisconfigurationError(`module depth must be an integer >= 1, got ${depth}`);
  }
  const directories = path.split('/').slice(0, -1);
  if (directories.length === 0) return PROJECT_ROOT_PATH;
  return directories.slice(0, depth).join('/');
}

function projectRootPath(projectRoot: string): string {
  const root = projectRoot.trim().replace(/\\/g, '/');
  if (!isAbsolute(root)) {
    throw new MisconfigurationError(
      `project root must be an absolute path, got ${JSON.stringify(projectRoot)}`,
    );
  }
  return root;
}

function isAbsolute(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:\//.test(path);
}

/** An absolute path's segments; the drive letter (if any) lower-cased, `..` stops at the top. */
function absoluteSegments(path: string): string[] {
  const drive = /^([A-Za-z]):\//.exec(path);
  const rest = drive ? path.slice(2) : path;
  const segments: string[] = drive ? [`${drive[1].toLowerCase()}:`] : [];
  const floor = segments.length;
  for (const part of rest.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (segments.length > floor) segments.pop();
    } else {
      segments.push(part);
    }
  }
  return segments;
}

function resolveRelative(path: string, rawPath: string): string[] {
  const segments: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part !== '..') {
      segments.push(part);
    } else if (segments.pop() === undefined) {
      throw new ProjectPathError(
        rawPath,
        'escapes_root',
        `file path ${rawPath} climbs above the project root`,
      );
    }
  }
  return segments;
}

function joinRelative(segments: string[]): string {
  return segments.length === 0 ? PROJECT_ROOT_PATH : segments.join('/');
}
