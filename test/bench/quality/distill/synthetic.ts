import { SessionBuilder } from '../../../../libs/core/src/distillation/testing/session-builder';
import type { LabelledEpisode, LabelledFact } from './types';
import { episodeWindow } from './windows';

/**
 * Hand-written episodes, each a common way a lesson shows up in a session (a decision with its
 * reason, an error and its fix, a correction in the middle of a task, stated rules, a fix made by
 * a command rather than an edit, a state change) mixed with the noise around it (acknowledgements,
 * questions, reads and searches, routine shell errors), and one episode of noise only.
 */
const T0 = Date.UTC(2026, 2, 2, 9, 0);

interface Synthetic {
  name: string;
  build: (s: SessionBuilder) => void;
  facts: LabelledFact[];
}

const EPISODES: readonly Synthetic[] = [
  {
    name: 'decision with its reason',
    build: (s) => {
      s.user('can you look at how we store user sessions right now?');
      s.tool('Grep', { files: ['src/session/store.ts'] });
      s.tool('Read', { files: ['src/session/store.ts'] });
      s.tool('Read', { files: ['src/session/pg-store.ts'] });
      s.user('ok');
      s.user(
        "Let's move the session store to Redis instead of Postgres, because we need TTL-based expiry and the sessions table keeps growing.",
      );
      s.tool('Edit', { files: ['src/session/store.ts'] });
      s.tool('Write', { files: ['src/session/redis-store.ts'] });
      s.tool('Bash', { command: 'npm test -- session' });
      s.user('thanks, looks good');
    },
    facts: [
      {
        text: 'Sessions are stored in Redis instead of Postgres because they need TTL-based expiry (the sessions table kept growing)',
        keys: ['redis', 'postgres', 'ttl'],
      },
    ],
  },
  {
    name: 'build error and its fix',
    build: (s) => {
      s.user('the build is broken after the monorepo move, please fix it');
      s.tool('Bash', {
        command: 'npm run build',
        error:
          "> app@1.0.0 build\n> tsc -p tsconfig.json\n\nsrc/index.ts(3,24): error TS2307: Cannot find module '@app/utils' or its corresponding type declarations.",
      });
      s.tool('Read', { files: ['tsconfig.json'] });
      s.tool('Read', { files: ['packages/utils/package.json'] });
      s.tool('Edit', { files: ['tsconfig.json'] });
      s.tool('Bash', { command: 'npm run build' });
      s.user('great');
    },
    facts: [
      {
        text: "npm run build failed with TS2307 Cannot find module '@app/utils'; fixed by the path mapping in tsconfig.json",
        keys: ['TS2307|@app/utils', 'tsconfig.json'],
      },
    ],
  },
  {
    name: 'correction in the middle of a task',
    build: (s) => {
      s.user(
        'add retries to the payment client in src/payments/client.ts, 3 attempts with backoff',
      );
      s.tool('Read', { files: ['src/payments/client.ts'] });
      s.tool('Edit', { files: ['src/payments/client.ts'] });
      s.user('no, never retry on 4xx responses, only on 5xx and network timeouts');
      s.tool('Edit', { files: ['src/payments/client.ts'] });
      s.tool('Bash', { command: 'npx vitest run src/payments' });
    },
    facts: [
      {
        text: 'The payment client retries only on 5xx responses and network timeouts, never on 4xx',
        keys: ['4xx', '5xx', 'retr'],
      },
      {
        text: 'The payment client (src/payments/client.ts) retries 3 attempts with backoff',
        keys: ['3 attempts|backoff', 'payment'],
      },
    ],
  },
  {
    name: 'rules and preferences among chatter',
    build: (s) => {
      s.user('I prefer named exports over default exports in this codebase.');
      s.user('sounds good');
      s.user(
        'Never use console.log in library code; use the logger from src/log.ts so the output stays structured.',
      );
      s.tool('Grep', { files: ['src/log.ts'] });
      s.tool('Edit', { files: ['src/lib/parse.ts'] });
      s.user('thanks!');
    },
    facts: [
      {
        text: 'Prefer named exports over default exports',
        keys: ['named export', 'default export'],
      },
      {
        text: 'Never use console.log in library code: use the logger from src/log.ts (structured output)',
        keys: ['console.log', 'logger'],
      },
    ],
  },
  {
    name: 'noise only',
    build: (s) => {
      s.user('what does parseConfig do?');
      s.tool('Grep', { files: ['src/config/parse.ts'] });
      s.tool('Read', { files: ['src/config/parse.ts'] });
      s.user('hmm ok');
      s.user('show me the tests for it');
      s.tool('Glob', { files: ['test/config/parse.test.ts'] });
      s.tool('Read', { files: ['test/config/parse.test.ts'] });
      s.tool('Bash', {
        command: 'ls test/fixtures',
        error: 'ls: test/fixtures: No such file or directory',
      });
      s.tool('Bash', { command: 'ls test' });
      s.user('thanks');
    },
    facts: [],
  },
  {
    name: 'fixed by a command, not an edit',
    build: (s) => {
      s.user('run the e2e tests before we release');
      s.tool('Bash', {
        command: 'npm run test:e2e',
        error:
          "Error: browserType.launch: Executable doesn't exist at /home/dev/.cache/ms-playwright/chromium-1091/chrome-linux/chrome\nLooks like Playwright was just installed or updated. Please run: npx playwright install",
      });
      s.tool('Bash', { command: 'npx playwright install chromium' });
      s.tool('Bash', { command: 'npm run test:e2e' });
      s.user('perfect');
    },
    facts: [
      {
        text: 'The e2e tests failed because the Playwright browsers were missing; `npx playwright install chromium` fixed it',
        keys: ['playwright install', 'e2e'],
      },
    ],
  },
  {
    name: 'state change and cleanup',
    build: (s) => {
      s.user(
        'We moved from Jest to Vitest last month, so the jest config is dead. Delete jest.config.js and drop the @types/jest dependency.',
      );
      s.tool('Bash', { command: 'rm jest.config.js' });
      s.tool('Edit', { files: ['package.json'] });
      s.tool('Bash', { command: 'npm install' });
      s.tool('Bash', { command: 'npx vitest run' });
    },
    facts: [
      {
        text: 'The project moved from Jest to Vitest: the Jest config is no longer used',
        keys: ['jest', 'vitest'],
      },
      {
        text: 'jest.config.js and the @types/jest dependency were removed',
        keys: ['jest.config.js|@types/jest', 'delet|drop|remov'],
      },
    ],
  },
  {
    name: 'a short decision after a question',
    build: (s) => {
      s.user('Should we validate the webhook payloads with zod or io-ts?');
      s.tool('Grep', { files: ['package.json'] });
      s.user("Let's use zod, it is already a dependency.");
      s.tool('Write', { files: ['src/webhooks/schema.ts'] });
      s.tool('Edit', { files: ['src/webhooks/handler.ts'] });
      s.tool('Bash', { command: 'npm test -- webhooks' });
    },
    facts: [
      {
        text: 'Webhook payloads are validated with zod (not io-ts) because it is already a dependency',
        keys: ['zod', 'webhook|dependency'],
      },
    ],
  },
  {
    name: 'a failing migration left unresolved',
    build: (s) => {
      s.user('apply the new orders migration to the local database');
      s.tool('Bash', {
        command: 'npm run migrate',
        error: 'error: relation "customers" does not exist\n    at migrations/0042_orders.sql:7',
      });
      s.tool('Read', { files: ['migrations/0042_orders.sql'] });
      s.tool('Bash', {
        command: 'npm run migrate',
        error: 'error: relation "customers" does not exist\n    at migrations/0042_orders.sql:7',
      });
      s.user('leave it, the customers migration lands tomorrow');
    },
    facts: [
      {
        text: 'The orders migration (0042) fails until the customers table exists: relation "customers" does not exist',
        keys: ['customers', 'migrat'],
      },
    ],
  },
];

export function syntheticEpisodes(): LabelledEpisode[] {
  return EPISODES.map((episode, index) => {
    const s = new SessionBuilder(
      `synthetic-${index + 1}`,
      T0 + index * 3_600_000,
      'bench',
      'synthetic',
    );
    episode.build(s);
    const lastPromptId = Math.max(...s.prompts.map((p) => p.promptId));
    return {
      dataset: 'synthetic',
      name: episode.name,
      window: episodeWindow(s, s.prompts, s.toolCalls, 1, lastPromptId),
      facts: episode.facts,
    };
  });
}
