// The environment as the processes Engram starts need it, without the configuration's parsing
// (zod): `engram hook`'s entry reads it on every hook and loads nothing it can avoid. Imported by
// path (not through the @engram/config barrel, which loads the whole configuration).

/** The ENGRAM_* variables of this process's environment: what its configuration is made of. */
export function engramEnvironment(): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('ENGRAM_') && value !== undefined) picked[name] = value;
  }
  return picked;
}

/** This process's environment with `overrides`, for a child process. */
export function environmentWith(overrides: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, ...overrides };
}
