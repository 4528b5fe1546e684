import { loadConfig } from '@engram/config';
import {
  deadLetterView,
  parseDeadLetterId,
  REPLAY_DEAD_LETTER_SERVICE,
  shownPayload,
  type DeadLetterRecord,
  type DeadLetterView,
} from '@engram/core';
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { listDeadLetters, type DeadLetterStore } from '../dead-letters';
import { oneLine } from './cli-text';
import { DEFAULT_DATA_DIR } from './replay.command';

// `engram dlq list|show|redrive` (SPEC §12, additions 2026-11; issue 19 finding 5): the records
// every stage dead-lettered (`<topic>.dlq`, SPEC §11 headers), readable without sqlite3, and sent
// back to their source topic once the cause is fixed.

/** `engram dlq`'s exit codes (README). */
export const DLQ_EXIT = {
  ok: 0,
  /** No such dead letter, a malformed id, or nothing to read (no data dir). */
  notFound: 2,
  /** redrive: some could not be redriven (no source topic, or a replay line: replay it fixed). */
  notRedriven: 3,
} as const;

export interface DlqListed {
  view: DeadLetterView;
  redriven: boolean;
}

/** The dead letters, oldest first per dead-letter topic (`--topic` takes a topic or its .dlq). */
export async function dlqList(store: DeadLetterStore, topic?: string): Promise<DlqListed[]> {
  return (await listDeadLetters(store, { topic })).map(({ view, redriven }) => ({
    view,
    redriven,
  }));
}

export interface DlqShown extends DeadLetterView {
  redriven: boolean;
  key: string | null;
  headers: Record<string, string | string[]>;
  /** Redacted (SPEC §11) and cut at MAX_SHOWN_PAYLOAD_CHARS. */
  payload: ReturnType<typeof shownPayload>;
}

/** One dead letter with its headers and payload (redacted, truncated); null when there is none. */
export async function dlqShow(store: DeadLetterStore, id: string): Promise<DlqShown | null> {
  const record = await findDeadLetter(store, id);
  if (!record) return null;
  const redriven = (await store.redriven()).has(deadLetterView(record).id);
  return {
    ...deadLetterView(record),
    redriven,
    key: record.key,
    headers: record.headers,
    payload: shownPayload(record.value),
  };
}

async function findDeadLetter(
  store: DeadLetterStore,
  id: string,
): Promise<DeadLetterRecord | null> {
  const parsed = parseDeadLetterId(id);
  if (!parsed) return null;
  const [record] = await store.read(parsed.topic, parsed.partition, parsed.offset, 1);
  return record && record.offset === parsed.offset ? record : null;
}

export interface RedriveOutcome {
  id: string;
  outcome: 'redriven' | 'already' | 'skipped';
  to: string | null;
  reason?: string;
}

/**
 * Republishes dead letters to their source topic: the record as it was (key and value), once —
 * a second redrive of the same dead letter publishes nothing (`already`). Replay's own rejected
 * lines are skipped: they never were events (fix the line and replay it).
 */
export async function dlqRedrive(
  store: DeadLetterStore,
  select: { ids?: readonly string[]; topic?: string; all?: boolean },
): Promise<RedriveOutcome[]> {
  const records: (DeadLetterRecord | string)[] = [];
  if (select.ids && select.ids.length > 0) {
    for (const id of select.ids) records.push((await findDeadLetter(store, id)) ?? id);
  } else if (select.all || select.topic) {
    // Replay's own rejected lines cannot be redriven: only named ids report them as skipped.
    for (const { record, view, redriven } of await listDeadLetters(store, {
      topic: select.topic,
    })) {
      if (!redriven && view.service !== REPLAY_DEAD_LETTER_SERVICE) records.push(record);
    }
  }
  const outcomes: RedriveOutcome[] = [];
  for (const record of records) {
    if (typeof record === 'string') {
      outcomes.push({ id: record, outcome: 'skipped', to: null, reason: 'no such dead letter' });
      continue;
    }
    const view = deadLetterView(record);
    if (view.service === REPLAY_DEAD_LETTER_SERVICE) {
      outcomes.push({
        id: view.id,
        outcome: 'skipped',
        to: view.sourceTopic,
        reason: 'a rejected replay line, not an event: fix the line and replay it',
      });
      continue;
    }
    const to = view.sourceTopic ?? view.topic.replace(/\.dlq$/, '');
    try {
      outcomes.push({ id: view.id, outcome: await store.redrive(record, to), to });
    } catch (error) {
      outcomes.push({
        id: view.id,
        outcome: 'skipped',
        to,
        reason: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return outcomes;
}

/** A listed dead letter as one line of text. */
export function formatListed({ view, redriven }: DlqListed): string {
  const source =
    view.sourceTopic === null
      ? '-'
      : `${view.sourceTopic}[${view.sourcePartition ?? '?'}]@${view.sourceOffset ?? '?'}`;
  return [
    view.id,
    view.time,
    view.errorClass,
    `from ${source}`,
    view.service ?? '-',
    oneLine(view.message, 120),
    ...(redriven ? ['(redriven)'] : []),
  ].join('  ');
}

/** `engram dlq show` as text: the facts, the headers, then the payload. */
export function formatShown(shown: DlqShown): string {
  const payload = shown.payload;
  return [
    `id:            ${shown.id}`,
    `dead-lettered: ${shown.time} by ${shown.service ?? '?'}${shown.redriven ? ' (redriven since)' : ''}`,
    `error:         ${shown.errorClass}: ${shown.message}`,
    `source:        ${shown.sourceTopic ?? '?'} partition ${shown.sourcePartition ?? '?'} offset ${shown.sourceOffset ?? '?'}`,
    `key:           ${shown.key ?? '(none)'}`,
    'headers:',
    ...Object.entries(shown.headers).map(
      ([name, value]) => `  ${name}: ${Array.isArray(value) ? value.join(', ') : value}`,
    ),
    `payload (${payload.length} characters${payload.encoding === 'base64' ? ', not UTF-8: base64' : ''}` +
      `${payload.truncated ? ', truncated' : ''}, secrets redacted):`,
    payload.text ?? '(none: a tombstone)',
  ].join('\n');
}

interface DlqOptions {
  dataDir: string;
  distributed?: boolean;
  json?: boolean;
  topic?: string;
  all?: boolean;
}

/** The embedded log's dead letters, or null when the data dir has no log. */
async function openEmbedded(
  dataDir: string,
): Promise<{ store: DeadLetterStore; close(): Promise<void> } | null> {
  if (!existsSync(join(dataDir, 'events.db'))) return null;
  const { SqliteEventLog } = await import('@engram/embedded');
  const { embeddedDeadLetters } = await import('../dead-letters');
  const log = SqliteEventLog.open({ dataDir });
  return { store: embeddedDeadLetters(log), close: () => Promise.resolve(log.close()) };
}

/** The configured Kafka's dead letters (the `<prefix>….dlq` topics). */
async function openDistributed(): Promise<{ store: DeadLetterStore; close(): Promise<void> }> {
  const config = loadConfig();
  const { AvroRegistry, createKafka } = await import('@engram/kafka');
  const { kafkaDeadLetters } = await import('../dead-letters-kafka');
  const kafka = createKafka({ brokers: config.kafka.brokers, clientId: 'engram-dlq' });
  const store = await kafkaDeadLetters(
    kafka,
    new AvroRegistry(config.schemaRegistry.url),
    config.topicPrefix,
  );
  return { store, close: () => store.close() };
}

async function withStore(
  options: DlqOptions,
  work: (store: DeadLetterStore) => Promise<number>,
): Promise<void> {
  void loadConfig(); // A bad configuration fails here, as in every command.
  const opened = options.distributed
    ? await openDistributed()
    : await openEmbedded(options.dataDir);
  if (!opened) {
    console.error(`no embedded log in ${options.dataDir} (events.db): nothing was dead-lettered`);
    process.exitCode = DLQ_EXIT.notFound;
    return;
  }
  try {
    process.exitCode = await work(opened.store);
  } finally {
    await opened.close();
  }
}

export function registerDlqCommand(program: Command): void {
  const dlq = program
    .command('dlq')
    .description('the dead-letter topics: list, show and redrive what a stage rejected');
  const common = (command: Command) =>
    command
      .option('--data-dir <dir>', 'embedded mode: the data directory', DEFAULT_DATA_DIR)
      .option('--distributed', "the configured Kafka's <topic>.dlq topics instead")
      .option('--json', 'JSON output (one object per line for list and redrive)');

  common(
    dlq
      .command('list')
      .description(
        'every dead letter: id, time, error class, source topic/partition/offset, service, message',
      )
      .option('--topic <topic>', 'only this topic (or its .dlq)'),
  ).action((options: DlqOptions) =>
    withStore(options, async (store) => {
      const listed = await dlqList(store, options.topic);
      for (const entry of listed) {
        console.log(
          options.json
            ? JSON.stringify({ ...entry.view, redriven: entry.redriven })
            : formatListed(entry),
        );
      }
      if (!options.json) console.error(`${listed.length} dead letter(s)`);
      return DLQ_EXIT.ok;
    }),
  );

  common(
    dlq
      .command('show <id>')
      .description('one dead letter (id as list prints it): headers and payload, redacted'),
  ).action((id: string, options: DlqOptions) =>
    withStore(options, async (store) => {
      const shown = await dlqShow(store, id);
      if (!shown) {
        console.error(`no dead letter ${id} (ids look like agent.prompts.v1.dlq:0:12)`);
        return DLQ_EXIT.notFound;
      }
      console.log(options.json ? JSON.stringify(shown) : formatShown(shown));
      return DLQ_EXIT.ok;
    }),
  );

  common(
    dlq
      .command('redrive [ids...]')
      .description(
        'republish dead letters to their source topic, once each (ids, or --topic / --all: ' +
          'those not redriven yet)',
      )
      .option('--topic <topic>', 'every dead letter of this topic not redriven yet')
      .option('--all', 'every dead letter not redriven yet'),
  ).action((ids: string[], options: DlqOptions) =>
    withStore(options, async (store) => {
      if (ids.length === 0 && !options.all && !options.topic) {
        console.error('name the dead letters to redrive (ids), or pass --topic or --all');
        return DLQ_EXIT.notFound;
      }
      const outcomes = await dlqRedrive(store, { ids, topic: options.topic, all: options.all });
      for (const outcome of outcomes) {
        console.log(
          options.json
            ? JSON.stringify(outcome)
            : `${outcome.id}: ${outcome.outcome}${outcome.to ? ` → ${outcome.to}` : ''}` +
                (outcome.reason ? ` (${outcome.reason})` : ''),
        );
      }
      const count = (kind: RedriveOutcome['outcome']) =>
        outcomes.filter((outcome) => outcome.outcome === kind).length;
      if (!options.json) {
        console.error(
          `${count('redriven')} redriven, ${count('already')} redriven before, ${count('skipped')} skipped`,
        );
      }
      return count('skipped') > 0 ? DLQ_EXIT.notRedriven : DLQ_EXIT.ok;
    }),
  );
}
