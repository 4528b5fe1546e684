import { existsSync } from 'node:fs';
import { engramEnvironment } from '../../../libs/config/src/process-env';
import {
  DEFAULT_HANDSHAKE_MS,
  hookSocketOptions,
  hookSocketPath,
  HOOK_SOCKET_VERSION,
} from './hook-socket-protocol';

/**
 * `engram hook` (bin/engram comes here for it): a fresh process on every agent event. When
 * `engram start` runs on the hook's data directory, the hook hands its payload to it over
 * `<data-dir>/hook.sock` and prints the answer — the warm process maps, publishes and recalls,
 * and this process loads nothing but Node built-ins and the socket protocol. Otherwise (no
 * socket, a stale one, a refusal, a busy or vanished service, `--flush`, an option the socket
 * does not know) the hook command itself runs, in this process, exactly as before
 * (hook-main.ts), with the stdin already read.
 */
const started = Date.now();
/** How long the hook waits for stdin's end (hook.command.ts STDIN_WAIT_MS). */
const STDIN_WAIT_MS = 5_000;
/** Errors that just mean "no service here": no line on stderr for them. */
const NOBODY_LISTENS = new Set(['ENOENT', 'ECONNREFUSED']);

async function main(): Promise<void> {
  const options = hookSocketOptions(process.argv.slice(3), process.cwd());
  const socket = options && hookSocketPath(options.dataDir);
  if (!options || !socket || !existsSync(socket)) return direct();
  const input = await readStdin(started + STDIN_WAIT_MS);
  // Loaded only when a socket is there: the direct path pays for nothing it does not use.
  const { viaHookSocket } = await import('./hook-socket-client');
  const result = await viaHookSocket(
    socket,
    {
      v: HOOK_SOCKET_VERSION,
      kind: 'hook',
      options,
      input,
      cwd: process.cwd(),
      env: engramEnvironment(),
      elapsedMs: Date.now() - started,
    },
    DEFAULT_HANDSHAKE_MS,
  );
  if (result.kind === 'direct') {
    const note = NOBODY_LISTENS.has(result.reason)
      ? []
      : [`engram hook: the service did not take the event (${result.reason}); publishing directly`];
    return direct(input, note);
  }
  for (const message of result.messages) process.stderr.write(`${message}\n`);
  if (result.stdout) process.stdout.write(`${result.stdout}\n`, () => process.exit(0));
  else process.exit(0);
}

async function direct(input?: string, messages: readonly string[] = []): Promise<void> {
  for (const message of messages) process.stderr.write(`${message}\n`);
  const { runDirectHook } = await import('./hook-main');
  await runDirectHook(process.argv, input);
}

function readStdin(deadline: number): Promise<string> {
  if (process.stdin.isTTY) return Promise.resolve('');
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      process.stdin.pause();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
    process.stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
    process.stdin.on('end', done);
    process.stdin.on('error', done);
  });
}

main().catch((error: unknown) => {
  // Fail-open: a hook never breaks the agent, whatever happened.
  console.error(error instanceof Error ? error.message : error);
  process.exit(0);
});
