import 'reflect-metadata';
import { Command } from 'commander';
import { registerBenchCommand } from './commands/bench.command';
import { registerBootstrapCommand } from './commands/bootstrap.command';
import { registerDemoCommand } from './commands/demo.command';
import { registerDlqCommand } from './commands/dlq.command';
import { registerFrictionReportCommand } from './commands/friction-report.command';
import { registerHookCommand } from './commands/hook.command';
import { registerHookInstallCommands } from './commands/hook-install';
import { registerImportCommand } from './commands/import.command';
import { registerLinksCommand } from './commands/links.command';
import { registerMemoryCommand } from './commands/memory.command';
import { registerMemoryMdCommand } from './commands/memory-md.command';
import { registerModelsCommand } from './commands/models.command';
import { registerNeighborsCommand } from './commands/neighbors.command';
import { registerRecallCommand } from './commands/recall.command';
import { registerReindexCommand } from './commands/reindex.command';
import { registerReplayCommand } from './commands/replay.command';
import { registerReviewCommand } from './commands/review.command';
import { registerSegmentCommand } from './commands/segment.command';
import { registerStartCommand } from './commands/start.command';
import { embedderForMode } from './embedding';
import { registerMcpCommand } from './mcp/mcp.command';

const program = new Command()
  .name('engram')
  .description('Episodic memory for AI coding agents, on a message log')
  .showHelpAfterError();

registerStartCommand(program);
registerDemoCommand(program);
registerSegmentCommand(program, embedderForMode);
registerBenchCommand(program);
registerLinksCommand(program);
registerNeighborsCommand(program);
registerRecallCommand(program);
registerReindexCommand(program);
registerBootstrapCommand(program);
registerHookCommand(program);
registerHookInstallCommands(program);
registerImportCommand(program);
registerReplayCommand(program);
registerDlqCommand(program);
registerReviewCommand(program);
registerMemoryMdCommand(program);
registerMemoryCommand(program);
registerFrictionReportCommand(program);
registerModelsCommand(program);
registerMcpCommand(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
