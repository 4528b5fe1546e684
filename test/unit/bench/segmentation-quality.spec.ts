import { decodeReplayLine } from '@engram/contracts';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runSegmentationQuality } from '../../bench/quality/segmentation';
import {
  parseSgd,
  parseTiage,
  SGD_DEV_FILES,
  SGD_TUNING_FILES,
  toSegmentationSet,
} from '../../bench/quality/segmentation/datasets';
import { EmbeddingCache } from '../../bench/quality/segmentation/embedding-cache';

const scratch = mkdtempSync(join(tmpdir(), 'engram-seg-quality-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('parseTiage', () => {
  it('should mark the first utterance and every "1" as segment starts', () => {
    const dialogues = parseTiage(
      JSON.stringify({
        '7': [
          ['hello there', '-1'],
          ['hi , how are you ?', '0'],
          ['do you like dogs ?', '1'],
          ['yes i have two', '0'],
        ],
      }),
    );
    expect(dialogues).toEqual([
      {
        id: '7',
        texts: ['hello there', 'hi , how are you ?', 'do you like dogs ?', 'yes i have two'],
        boundaries: [true, false, true, false],
      },
    ]);
  });
});

describe('parseSgd', () => {
  const frame = (service: string, intent: string) => ({
    service,
    slots: [],
    actions: [],
    state: { active_intent: intent },
  });
  const json = JSON.stringify([
    {
      dialogue_id: '44_00001',
      services: ['Events_2', 'Buses_2'],
      turns: [
        { speaker: 'USER', utterance: 'find me an event', frames: [frame('Events_2', 'NONE')] },
        { speaker: 'SYSTEM', utterance: 'which city?', frames: [{ service: 'Events_2' }] },
        {
          speaker: 'USER',
          utterance: 'in berkeley please',
          frames: [frame('Events_2', 'GetEventDates')],
        },
        {
          speaker: 'USER',
          utterance: 'and a bus there',
          frames: [frame('Buses_2', 'BuyBusTicket'), frame('Events_2', 'GetEventDates')],
        },
        {
          speaker: 'USER',
          utterance: 'one ticket',
          frames: [frame('Events_2', 'GetEventDates'), frame('Buses_2', 'BuyBusTicket')],
        },
      ],
    },
  ]);

  it('should label domain switches on user turns by the set of services', () => {
    const [dialogue] = parseSgd(json, 'domain');
    expect(dialogue.texts).toEqual([
      'find me an event',
      'in berkeley please',
      'and a bus there',
      'one ticket',
    ]);
    // the frames' order does not matter: the last turn has the same set
    expect(dialogue.boundaries).toEqual([true, false, true, false]);
  });

  it('should label intent switches by the set of (service, intent), NONE → intent included', () => {
    expect(parseSgd(json, 'intent')[0].boundaries).toEqual([true, true, true, false]);
  });

  it('should keep tuning and reported files apart', () => {
    expect(SGD_TUNING_FILES.filter((file) => SGD_DEV_FILES.includes(file as never))).toEqual([]);
  });
});

describe('toSegmentationSet', () => {
  it('should write prompts the replay decoder accepts, one session per dialogue, with labels', () => {
    const set = toSegmentationSet('tiage/dev', [
      { id: 'a', texts: ['one', 'two'], boundaries: [true, false] },
      { id: 'b', texts: ['three'], boundaries: [true] },
    ]);
    expect(set.dialogues).toBe(2);
    const events = set.prompts.map(
      (line, index) => decodeReplayLine(line, index + 1, { defaultType: 'PromptSubmitted' }).event,
    );
    expect(events.map((event) => event.type)).toEqual([
      'PromptSubmitted',
      'PromptSubmitted',
      'PromptSubmitted',
    ]);
    expect(
      set.labels.map((label) => [label.sessionId, label.promptId, label.goldBoundary]),
    ).toEqual([
      ['tiage/dev:a', 1, true],
      ['tiage/dev:a', 2, false],
      ['tiage/dev:b', 1, true],
    ]);
    expect(set.labels.map((label) => label.eventId)).toEqual(
      events.map((event) => (event as { eventId: string }).eventId),
    );
  });
});

describe('EmbeddingCache', () => {
  it('should embed each text once and read the vectors back from disk', async () => {
    const dir = join(scratch, 'cache');
    const calls: string[][] = [];
    const embed = (texts: readonly string[]) => {
      calls.push([...texts]);
      return Promise.resolve(texts.map((text) => [text.length, 1]));
    };
    const cache = new EmbeddingCache(dir, 'toy', 2);
    expect(await cache.fill(['ab', 'abc', 'ab'], embed)).toBe(2);
    expect(await cache.fill(['ab', 'abcd'], embed)).toBe(1);
    expect(calls).toEqual([['ab', 'abc'], ['abcd']]);
    const reread = new EmbeddingCache(dir, 'toy', 2);
    expect(await reread.lookup(['abcd', 'ab'])).toEqual([
      [4, 1],
      [2, 1],
    ]);
    await expect(reread.lookup(['never seen'])).rejects.toThrow('no cached embedding');
  });

  it('should start over when the key and vector files disagree (a run killed mid-write)', () => {
    const dir = join(scratch, 'torn');
    const cache = new EmbeddingCache(dir, 'toy', 2);
    expect(cache.size).toBe(0);
    writeFileSync(join(dir, 'toy.keys'), 'k1\nk2\n');
    writeFileSync(join(dir, 'toy.f32'), Buffer.from(new Float32Array([1, 2]).buffer));
    expect(new EmbeddingCache(dir, 'toy', 2).size).toBe(0);
  });
});

/**
 * A miniature copy of the public sets' formats, written here so the section runs end to end where
 * ../shared/datasets is absent (a clone elsewhere); the real sets are used when present.
 */
function writeMiniatureDatasets(dir: string): string {
  const topics = [
    ['do you like dogs ?', 'i have two labradors at home', 'they love long walks in the park'],
    ['what music do you play ?', 'mostly jazz piano these days', 'i practise scales every night'],
    ['any plans for the holidays ?', 'we are flying to lisbon', 'the old town has great food'],
  ];
  const tiageDialogue = (shift: number) =>
    topics
      .slice(shift)
      .concat(topics.slice(0, shift))
      .flatMap((turns) => turns.map((text, index) => [text, index === 0 ? '1' : '0']));
  mkdirSync(join(dir, 'tiage'), { recursive: true });
  for (const split of ['train', 'dev']) {
    const dialogues = Object.fromEntries(
      [0, 1, 2].map((shift) => [String(shift), tiageDialogue(shift)]),
    );
    writeFileSync(join(dir, 'tiage', `anno_${split}.json`), JSON.stringify(dialogues));
  }
  const turn = (utterance: string, service: string, intent: string) => ({
    speaker: 'USER',
    utterance,
    frames: [{ service, slots: [], actions: [], state: { active_intent: intent } }],
  });
  mkdirSync(join(dir, 'sgd-train'), { recursive: true });
  for (const file of [...SGD_TUNING_FILES, ...SGD_DEV_FILES]) {
    const dialogue = {
      dialogue_id: `${file}_00000`,
      services: ['Events_2', 'Buses_2'],
      turns: [
        turn('find me a concert this weekend', 'Events_2', 'FindEvents'),
        turn('in berkeley please', 'Events_2', 'FindEvents'),
        turn('book two tickets for it', 'Events_2', 'BuyEventTickets'),
        turn('now i need a bus to get there from san jose', 'Buses_2', 'FindBus'),
        turn('leaving at noon', 'Buses_2', 'FindBus'),
      ],
    };
    writeFileSync(join(dir, 'sgd-train', `dialogues_${file}.json`), JSON.stringify([dialogue]));
  }
  return dir;
}

const publicDatasets =
  process.env.ENGRAM_DATASETS ?? resolve(process.cwd(), '..', 'shared', 'datasets');
const datasetsDir = existsSync(join(publicDatasets, 'tiage'))
  ? publicDatasets
  : writeMiniatureDatasets(join(scratch, 'datasets'));

describe('runSegmentationQuality (quick)', () => {
  it('should score every set with the baselines and the methods, saying what was skipped', async () => {
    const section = await runSegmentationQuality({
      datasetsDir,
      workDir: scratch,
      quick: true,
      log: () => undefined,
    });
    expect(section.area).toBe('segmentation');
    const datasets = [...new Set(section.rows.map((row) => row.dataset))];
    expect(datasets).toEqual(
      expect.arrayContaining(['tiage/train', 'tiage/dev', 'sgd/domain', 'sgd/intent', 'synthetic']),
    );
    for (const dataset of datasets) {
      const methods = section.rows.filter((row) => row.dataset === dataset);
      const never = methods.find((row) => row.method === 'baseline: never split')!;
      expect(never.baseline).toBe(true);
      expect(never.metrics.F1).toBe(0);
      expect(methods.find((row) => row.method === 'baseline: always split')!.metrics.R).toBe(1);
      expect(methods.some((row) => row.method === 'keyword (seed 000)')).toBe(true);
      expect(methods.some((row) => row.method.startsWith('engram default'))).toBe(true);
      for (const row of methods) {
        for (const name of ['Pk', 'WindowDiff', 'P', 'R', 'F1']) {
          expect(row.metrics[name]).toBeGreaterThanOrEqual(0);
          expect(row.metrics[name]).toBeLessThanOrEqual(1);
        }
      }
    }
    const hybridRows = section.rows.filter((row) => row.method === 'hybrid');
    const skipped = section.notes.some((note) => note.includes('embedding model missing'));
    // Either the model ran (hybrid rows present) or the notes say it was skipped.
    expect(hybridRows.length > 0 || skipped).toBe(true);
    expect(hybridRows.length > 0 && skipped).toBe(false);
  }, 60_000);
});
