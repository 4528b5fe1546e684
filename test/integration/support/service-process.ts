import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

/** A compiled Engram service run as child processes, so a test can SIGKILL it. */
export interface ServiceProcess {
  /** Starts one process of the service (stderr kept for `alive`'s error). */
  start(): ChildProcess;
  /** Throws, with the end of what the service wrote on stderr, if `child` has exited. */
  alive(child: ChildProcess): void;
  /** Sends `signal` and waits until the process has exited. */
  stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void>;
}

/**
 * `node dist/apps/<service>/src/main.js` with `env` added to this process's environment (run
 * `npm run build` first). Every process started shares one stderr buffer.
 */
export function serviceProcess(service: string, env: Record<string, string>): ServiceProcess {
  const stderr: string[] = [];
  const main = join(ROOT, 'dist', 'apps', service, 'src', 'main.js');
  return {
    start() {
      const child = spawn(process.execPath, [main], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
      return child;
    },
    alive(child) {
      if (child.exitCode !== null) {
        throw new Error(
          `the ${service} exited (${child.exitCode}): ${stderr.join('').slice(-2_000)}`,
        );
      }
    },
    async stop(child, signal) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
    },
  };
}
