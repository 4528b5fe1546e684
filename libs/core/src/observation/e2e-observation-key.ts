import type { E2eObservationSignal } from './signals';

/**
 * What makes two e2e observations the same memory: a test sequence is the state reached (page,
 * text checked) and the steps that reached it, however the state was checked; the other kinds
 * are one action on one page.
 */
export function e2eObservationKey(
  s: Pick<E2eObservationSignal, 'observationType' | 'page' | 'action' | 'target' | 'before'>,
): string {
  const key =
    s.observationType === 'test_sequence'
      ? [s.observationType, s.page ?? '', s.target ?? '', s.before.join(' → ')]
      : [s.observationType, s.page ?? '', s.action, s.target ?? ''];
  return key.join('\u0000');
}
