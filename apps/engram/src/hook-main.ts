import { Command } from 'commander';
import { registerHookCommand } from './commands/hook.command';

/**
 * `engram hook` alone: a hook runs as a fresh process on every agent event, and loading the whole
 * CLI (NestJS, kafkajs, the services) costs about a second before any work. bin/engram comes
 * here for `hook`, so only what the hook needs is loaded. The command is the same one `engram
 * hook` registers in the full CLI. What only some hooks need is loaded by the hook command when
 * they need it: the embedded log, the Kafka producer (`--distributed`), the in-process recall
 * stack (embedded context) or @grpc/grpc-js and recall.proto (`--distributed` context, see
 * hook-context-grpc.ts).
 */
const program = new Command().name('engram');
registerHookCommand(program);
program.parseAsync(process.argv).catch((error: unknown) => {
  // Fail-open: a hook never breaks the agent, whatever happened.
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 0;
});
