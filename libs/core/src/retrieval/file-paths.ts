/**
 * Memories store repository-relative paths (`src/auth/refresh.ts`); agents often name files by
 * absolute path (`/home/me/repo/src/auth/refresh.ts`) or with `./` and Windows separators. Paths
 * are compared after normalising separators, `./` and duplicate slashes; an absolute path matches
 * a relative one when it ends with `/` + that relative path. Nothing here touches the filesystem.
 */
export function normaliseFilePath(path: string): string {
  let out = path
    .trim()
    .replace(/\\/g, '/')
    .replace(/\/{2,}/g, '/');
  while (out.startsWith('./')) out = out.slice(2);
  out = out.replace(/\/\.\//g, '/');
  if (out.length > 1 && out.endsWith('/')) out = out.slice(0, -1);
  return out;
}

export function sameFile(a: string, b: string): boolean {
  const left = normaliseFilePath(a);
  const right = normaliseFilePath(b);
  if (left === '' || right === '') return false;
  if (left === right) return true;
  const [longer, shorter] = left.length >= right.length ? [left, right] : [right, left];
  // Only an absolute path may stand for a relative one: two relative paths are both relative to
  // the repository root, so `packages/a/src/x.ts` and `src/x.ts` are different files.
  return isAbsolute(longer) && !isAbsolute(shorter) && longer.endsWith(`/${shorter}`);
}

/** POSIX `/…` or a Windows drive (`C:/…`, after separator normalisation). */
function isAbsolute(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:\//.test(path);
}

/** True when any of `files` is the same file as any of `wanted`. */
export function anySameFile(files: readonly string[], wanted: readonly string[]): boolean {
  return files.some((file) => wanted.some((target) => sameFile(file, target)));
}

/**
 * Every stored form of a path that `sameFile` could match, for an exact-term store query: the
 * path itself (raw and normalised) and, for an absolute path, each repository-relative tail
 * (`/home/me/repo/src/a.ts` → `home/me/repo/src/a.ts`, …, `src/a.ts`, `a.ts`). A superset: the
 * core still checks `sameFile` on what comes back. (A relative path asked for an absolute one
 * stored is not covered; memories store repository-relative paths.)
 */
export function storedPathForms(path: string): string[] {
  const normalised = normaliseFilePath(path);
  const forms = new Set([path.trim(), normalised]);
  if (isAbsolute(normalised)) {
    const parts = normalised.split('/');
    for (let i = 1; i < parts.length; i += 1) forms.add(parts.slice(i).join('/'));
  }
  forms.delete('');
  return [...forms];
}
