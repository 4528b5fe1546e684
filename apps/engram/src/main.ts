import 'reflect-metadata';
import { Command } from 'commander';
import { registerStartCommand } from './commands/start.command';

const program = new Command()
  .name('engram')
  .description('Episodic memory for AI coding agents, on a message log')
  .showHelpAfterError();

registerStartCommand(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
