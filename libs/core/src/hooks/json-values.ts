/** A parsed JSON object (not an array, not null): the shape every hook payload field is read from. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
