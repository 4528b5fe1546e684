import { Command } from 'commander';
import { registerHookCommand } from './commands/hook.command';

/**
 * `engram hook` alone: a hook runs as a fresh process on every agent event, and loading the whole
 * CLI (NestJS, kafkajs, the services) costs about a second before any work. bin/engram comes
 * here for `hook` (through hook-entry.ts, which first tries the running service's socket), so
 * only what the hook needs is loaded. The command is the same one `engram hook` registers in the
 * full CLI. What only some hooks need is loaded by the hook command when they need it: the
 * embedded log, the Kafka producer (`--distributed`), the in-process recall stack (embedded
 * context) or @grpc/grpc-js and recall.proto (`--distributed` context, see
 * hook-context-grpc.ts). `stdin`: the hook's input when the caller has read it already.
 */
export async function runDirectHook(argv: readonly string[], stdin?: string): Promise<void> {
  const program = new Command().name('engram');
  registerHookCommand(program, stdin === undefined ? {} : { stdin });
  await program.parseAsync([...argv]).catch((error: unknown) => {
    // Fail-open: a hook never breaks the agent, whatever happened.
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 0;
  });
}

// Run as a script (`node dist/apps/engram/src/hook-main.js hook …`): the direct path alone.
if (require.main === module) void runDirectHook(process.argv);
