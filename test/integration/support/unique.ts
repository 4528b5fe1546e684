import { randomBytes } from 'node:crypto';

/** A name no other test (or earlier run) uses: tests isolate by name, never by truncating. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/**
 * Polls `probe` until it returns a value. On timeout the error carries `state()`, if given: what
 * was seen instead, so a failure on CI says which part of the condition did not hold.
 */
export async function eventually<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  {
    timeoutMs = 30_000,
    intervalMs = 200,
    state,
  }: { timeoutMs?: number; intervalMs?: number; state?: () => unknown } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      const seen = state ? `; state: ${JSON.stringify(state())}` : '';
      throw new Error(`condition not met within ${timeoutMs} ms${seen}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
