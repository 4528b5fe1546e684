// Test support only: distillations of three sessions over a week, for the reflector's tests.
import { distillExtractively } from '../extractive/extractive-distiller';
import { debuggingSession, SessionBuilder } from './session-builder';
import { distillationWindow, type DistillationTrigger } from '../triggers';
import type { Distillation } from '../types';

const DAY = 86_400_000;
/** "Now" of the reflection: the morning after the debugging session. */
export const REFLECT_AT = Date.UTC(2026, 1, 17, 6, 30);

function distilled(session: SessionBuilder, trigger: DistillationTrigger): Distillation {
  const decision = distillationWindow(trigger, session.events());
  if (decision.kind !== 'distill') throw new Error(decision.reason);
  return distillExtractively(decision.window);
}

export function weekOfDistillations(): Distillation[] {
  const debug = debuggingSession(Date.UTC(2026, 1, 16, 9, 0));

  const review = new SessionBuilder('sess-review', Date.UTC(2026, 1, 16, 15, 0));
  review.user('Review the session refresh changes and tidy up the tests in src/auth.');
  review.tool('Read', { files: ['src/auth/refresh.ts'] });
  review.user('Always run the auth tests with --no-file-parallelism, they share the clock.');
  review.tool('Bash', { command: 'npx vitest run src/auth --no-file-parallelism' });
  review.user('I prefer small commits with conventional commit messages.');
  review.tool('Bash', { command: 'git commit -m "test(auth): fake timers"' });
  review.user('Open the pull request against develop.');
  review.user('thanks');

  const old = new SessionBuilder('sess-old', Date.UTC(2026, 1, 10, 11, 0));
  old.user('Set up the Kafka consumer for the billing topic in src/billing/consumer.ts');
  old.tool('Bash', {
    command: 'npm run build',
    error: "error TS2307: Cannot find module 'kafkajs'",
  });
  old.tool('Bash', { command: 'npm install kafkajs' });
  old.tool('Edit', { files: ['src/billing/consumer.ts'] });
  old.tool('Bash', { command: 'npm run build' });
  old.user("Let's use one consumer group per service because rebalances were slow.");
  old.user('Never commit the .env file.');
  old.user('Check the lag dashboard later maybe.');
  old.user('ok');

  return [
    distilled(debug, debug.sessionEnded()),
    distilled(review, review.sessionEnded()),
    distilled(old, old.sessionEnded()),
  ];
}

export { DAY };
