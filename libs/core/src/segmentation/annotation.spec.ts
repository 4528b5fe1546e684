import { describe, expect, it } from 'vitest';
import { annotateEpisode, episodeOutcome, extractKeyDecisions } from './annotation';
import type {
  AnnotationPrompt,
  AnnotationToolCall,
  EpisodeAnnotationInput,
} from './annotation-types';
import { classifyTool } from './tool-activity';

const T0 = Date.UTC(2026, 1, 18, 10, 0, 0);

function prompt(
  promptId: number,
  text: string,
  extra: Partial<AnnotationPrompt> = {},
): AnnotationPrompt {
  return {
    promptId,
    source: 'user',
    text,
    timestamp: T0 + promptId * 60_000,
    agentId: 'claude-code',
    userId: 'tim',
    methodology: null,
    methodologyPhase: null,
    ...extra,
  };
}

let step = 0;
function call(
  promptId: number,
  toolName: string,
  extra: Partial<AnnotationToolCall> = {},
): AnnotationToolCall {
  step += 1;
  return {
    promptId,
    stepIndex: step,
    toolName,
    filePaths: [],
    command: null,
    outcome: 'ok',
    errorMessage: null,
    timestamp: T0 + promptId * 60_000 + step * 1_000,
    agentId: 'claude-code',
    userId: 'tim',
    mcp: false,
    ...extra,
  };
}

function episode(input: Partial<EpisodeAnnotationInput>): EpisodeAnnotationInput {
  return { firstPromptId: 1, lastPromptId: 10, prompts: [], toolCalls: [], closed: true, ...input };
}

describe('classifyTool', () => {
  it("should count Claude Code's reads and searches as investigate", () => {
    for (const toolName of [
      'Read',
      'Grep',
      'Glob',
      'LS',
      'WebFetch',
      'WebSearch',
      'NotebookRead',
    ]) {
      expect(classifyTool({ toolName })).toBe('investigate');
    }
  });

  it('should count edits, writes and commands as execute', () => {
    for (const toolName of ['Edit', 'MultiEdit', 'Write', 'NotebookEdit', 'Bash']) {
      expect(classifyTool({ toolName })).toBe('execute');
    }
    expect(classifyTool({ toolName: 'RunTests', command: 'npm test' })).toBe('execute');
  });

  it('should classify MCP tools by the verb of their own name', () => {
    expect(classifyTool({ toolName: 'mcp__github__get_issue', mcp: true })).toBe('investigate');
    expect(classifyTool({ toolName: 'mcp__docs__searchDocs', mcp: true })).toBe('investigate');
    expect(classifyTool({ toolName: 'mcp__jira__list_tickets', mcp: true })).toBe('investigate');
    expect(classifyTool({ toolName: 'mcp__code__find_references', mcp: true })).toBe('investigate');
    expect(classifyTool({ toolName: 'mcp__github__create_issue', mcp: true })).toBe('execute');
    expect(classifyTool({ toolName: 'mcp__x__frobnicate', mcp: true })).toBe('other');
  });

  it('should treat an mcp__ name as MCP even when the flag is off, and not by its server name', () => {
    expect(classifyTool({ toolName: 'mcp__read_server__create_page' })).toBe('execute');
  });

  it('should count planning tools as neither', () => {
    for (const toolName of ['Task', 'TodoWrite', 'ExitPlanMode']) {
      expect(classifyTool({ toolName })).toBe('other');
    }
  });

  it("should recognise other agents' spellings", () => {
    expect(classifyTool({ toolName: 'read_file' })).toBe('investigate');
    expect(classifyTool({ toolName: 'apply_patch' })).toBe('execute');
    expect(classifyTool({ toolName: 'shell' })).toBe('execute');
  });
});

describe('annotateEpisode', () => {
  it('should annotate an episode without events as empty, unknown and talk-free', () => {
    expect(annotateEpisode(episode({}))).toEqual({
      obsCount: 0,
      investigate: 0,
      execute: 0,
      failures: 0,
      hotFiles: [],
      durationMs: 0,
      startedAt: null,
      lastEventAt: null,
      toolsUsed: [],
      participants: [],
      entities: [],
      outcome: 'unknown',
      tags: ['discussion'],
      keyDecisions: [],
      intent: null,
    });
  });

  it('should compute the seed 000 phase signature: obs count, investigate, execute, failures', () => {
    const annotation = annotateEpisode(
      episode({
        prompts: [prompt(1, 'fix the failing refresh test in the auth module')],
        toolCalls: [
          call(1, 'Read', { filePaths: ['src/auth/refresh.ts'] }),
          call(1, 'Grep'),
          call(1, 'Edit', { filePaths: ['src/auth/refresh.ts'] }),
          call(1, 'Bash', { command: 'npm test', outcome: 'error', errorMessage: 'TypeError' }),
          call(1, 'TodoWrite'),
        ],
      }),
    );
    expect(annotation).toMatchObject({ obsCount: 5, investigate: 2, execute: 2, failures: 1 });
  });

  it("should only use the events of the episode's prompt range", () => {
    const annotation = annotateEpisode(
      episode({
        firstPromptId: 2,
        lastPromptId: 3,
        prompts: [
          prompt(1, 'an earlier episode about the build pipeline'),
          prompt(2, 'now fix the refresh token race'),
          prompt(4, 'a later episode about docs'),
        ],
        toolCalls: [call(1, 'Read'), call(2, 'Edit'), call(3, 'Bash'), call(4, 'Write')],
      }),
    );
    expect(annotation.obsCount).toBe(2);
    expect(annotation.toolsUsed).toEqual(['Bash', 'Edit']);
    expect(annotation.intent).toBe('now fix the refresh token race');
  });

  it('should rank hot files by touches, then path, counting a path once per call, top N', () => {
    const annotation = annotateEpisode(
      episode({
        toolCalls: [
          call(1, 'Read', { filePaths: ['b.ts', 'b.ts', 'a.ts'] }),
          call(1, 'Edit', { filePaths: ['b.ts'] }),
          call(1, 'Read', { filePaths: ['c.ts', ' '] }),
          call(1, 'Read', { filePaths: ['a.ts'] }),
          call(1, 'Read', { filePaths: ['d.ts'] }),
        ],
      }),
      { maxHotFiles: 3 },
    );
    expect(annotation.hotFiles).toEqual([
      { path: 'a.ts', touches: 2 },
      { path: 'b.ts', touches: 2 },
      { path: 'c.ts', touches: 1 },
    ]);
  });

  it('should measure the duration from the first user prompt to the last event', () => {
    const annotation = annotateEpisode(
      episode({
        prompts: [
          prompt(1, 'start the work on the exporter', { timestamp: T0 }),
          prompt(2, 'and now the importer side', { timestamp: T0 + 60_000 }),
        ],
        toolCalls: [call(2, 'Edit', { timestamp: T0 + 95_000 })],
        validations: [{ passed: true, timestamp: T0 + 120_000 }],
      }),
    );
    expect(annotation).toMatchObject({
      startedAt: T0,
      lastEventAt: T0 + 120_000,
      durationMs: 120_000,
    });
  });

  it('should list tools by use count, then name', () => {
    const annotation = annotateEpisode(
      episode({
        toolCalls: [call(1, 'Read'), call(1, 'Edit'), call(1, 'Bash'), call(1, 'Edit')],
      }),
    );
    expect(annotation.toolsUsed).toEqual(['Edit', 'Bash', 'Read']);
  });

  it('should list distinct users first, then distinct agents', () => {
    const annotation = annotateEpisode(
      episode({
        prompts: [prompt(1, 'hello there team members'), prompt(2, 'x', { userId: 'emerson' })],
        toolCalls: [call(1, 'Read', { agentId: 'codex', userId: null })],
      }),
    );
    expect(annotation.participants).toEqual(['tim', 'emerson', 'claude-code', 'codex']);
  });

  it('should rank entities by mentions across prompts, touched files and error classes', () => {
    const annotation = annotateEpisode(
      episode({
        prompts: [prompt(1, 'the TokenRefresher in refresh.ts throws for ABC-123')],
        toolCalls: [
          call(1, 'Read', { filePaths: ['src/auth/refresh.ts'] }),
          call(1, 'Bash', {
            command: 'npm test',
            outcome: 'error',
            errorMessage: 'TypeError: cannot read property of undefined at parseToken (store.ts)',
          }),
          call(1, 'Edit', { filePaths: ['src/auth/refresh.ts', 'src/auth/Makefile'] }),
        ],
      }),
      { maxEntities: 4 },
    );
    expect(annotation.entities).toEqual(['refresh.ts', 'TokenRefresher', 'ABC-123', 'TypeError']);
  });

  it('should take the first non-terse user prompt as the intent (seed 000 terse prompts)', () => {
    const annotation = annotateEpisode(
      episode({
        prompts: [
          prompt(1, 'ok push'),
          prompt(2, 'internal planning', { source: 'agent' }),
          prompt(3, '5,6'),
          prompt(4, 'so what signals are we trying to detect again, this list will probably grow'),
          prompt(5, 'we should exclude the ../library'),
        ],
      }),
    );
    expect(annotation.intent).toBe(
      'so what signals are we trying to detect again, this list will probably grow',
    );
  });

  it('should fall back to the first user prompt when all are terse, and cut long intents', () => {
    expect(
      annotateEpisode(episode({ prompts: [prompt(1, '  '), prompt(2, 'yes'), prompt(3, 'do it')] }))
        .intent,
    ).toBe('yes');
    expect(
      annotateEpisode(episode({ prompts: [prompt(1, 'word '.repeat(50))] }), { maxIntentChars: 12 })
        .intent,
    ).toBe('word word w…');
  });

  it('should give the same annotation whatever the order of the input, counting duplicates once', () => {
    const prompts = [
      prompt(1, "let's use zod instead of joi for the config", { eventId: 'p1' }),
      prompt(2, 'now wire it into the loader module please', { eventId: 'p2' }),
    ];
    const toolCalls = [
      call(1, 'Read', { eventId: 'c1', filePaths: ['src/config.ts'] }),
      call(1, 'Edit', { eventId: 'c2', filePaths: ['src/config.ts'] }),
      call(2, 'Bash', { eventId: 'c3', command: 'npm test', outcome: 'error' }),
      call(2, 'Bash', { eventId: 'c4', command: 'npm test' }),
    ];
    const ordered = annotateEpisode(episode({ prompts, toolCalls }));
    const shuffled = annotateEpisode(
      episode({
        prompts: [prompts[1], prompts[0], prompts[1]],
        toolCalls: [toolCalls[3], toolCalls[1], toolCalls[0], toolCalls[2], toolCalls[3]],
      }),
    );
    expect(shuffled).toEqual(ordered);
    expect(ordered.obsCount).toBe(4);
    expect(ordered.outcome).toBe('success');
  });

  describe('outcome', () => {
    it('should be ongoing while the episode is open and has no QA verdict', () => {
      expect(
        annotateEpisode(episode({ closed: false, toolCalls: [call(1, 'Edit')] })).outcome,
      ).toBe('ongoing');
    });

    it('should be unknown for a closed episode without tool calls', () => {
      expect(annotateEpisode(episode({ prompts: [prompt(1, 'just talking here')] })).outcome).toBe(
        'unknown',
      );
    });

    it('should be success when the last execute call succeeded, even after failures', () => {
      const calls = [
        call(1, 'Bash', { command: 'npm test', outcome: 'error' }),
        call(1, 'Edit'),
        call(1, 'Bash', { command: 'npm test' }),
        call(1, 'Read', { outcome: 'error' }),
      ];
      expect(episodeOutcome(calls, [], true)).toBe('success');
    });

    it('should be partial when the last execute call failed after an earlier one succeeded', () => {
      const calls = [call(1, 'Edit'), call(1, 'Bash', { command: 'npm test', outcome: 'error' })];
      expect(episodeOutcome(calls, [], true)).toBe('partial');
    });

    it('should be failure when every execute call failed', () => {
      const calls = [
        call(1, 'Read'),
        call(1, 'Bash', { outcome: 'error' }),
        call(1, 'Edit', { outcome: 'error' }),
      ];
      expect(episodeOutcome(calls, [], true)).toBe('failure');
    });

    it('should judge a read-only episode by all its calls', () => {
      expect(
        episodeOutcome([call(1, 'Read', { outcome: 'error' }), call(1, 'Grep')], [], true),
      ).toBe('success');
      expect(episodeOutcome([call(1, 'Read', { outcome: 'error' })], [], true)).toBe('failure');
    });

    it('should let the last QA verdict decide over tool outcomes, open or closed', () => {
      const failing = [call(1, 'Bash', { outcome: 'error' })];
      expect(episodeOutcome(failing, [{ passed: true, timestamp: 5 }], true)).toBe('success');
      expect(episodeOutcome([], [{ passed: true, timestamp: 5 }], false)).toBe('success');
      expect(
        episodeOutcome(
          [],
          [
            { passed: false, timestamp: 9 },
            { passed: true, timestamp: 5 },
          ],
          true,
        ),
      ).toBe('partial');
      expect(episodeOutcome([call(1, 'Edit')], [{ passed: false, timestamp: 5 }], true)).toBe(
        'failure',
      );
    });
  });

  describe('tags', () => {
    it('should tag the methodology and its phases, lower-cased, first seen first', () => {
      const annotation = annotateEpisode(
        episode({
          prompts: [
            prompt(1, 'plan the feature now', {
              methodology: 'BMAD',
              methodologyPhase: 'Planning',
            }),
            prompt(2, 'build it', { methodology: 'bmad', methodologyPhase: 'coding' }),
          ],
        }),
      );
      expect(annotation.tags).toEqual([
        'methodology:bmad',
        'phase:planning',
        'phase:coding',
        'discussion',
      ]);
    });

    it('should tag the dominant activity only with enough activity', () => {
      const tagsOf = (...toolNames: string[]): string[] =>
        annotateEpisode(episode({ toolCalls: toolNames.map((name) => call(1, name)) })).tags;
      expect(tagsOf('Read', 'Grep', 'Edit')).toEqual(['investigate-heavy']);
      expect(tagsOf('Edit', 'Write', 'Read')).toEqual(['execute-heavy']);
      expect(tagsOf('Edit', 'Write', 'Read', 'Grep')).toEqual(['mixed']);
      expect(tagsOf('Read', 'Grep')).toEqual([]);
    });

    it('should tag debugging when a failed execute call is later fixed by the same tool', () => {
      const annotation = annotateEpisode(
        episode({
          toolCalls: [
            call(1, 'Bash', { command: 'npm test', outcome: 'error' }),
            call(1, 'Edit'),
            call(1, 'Bash', { command: 'npm test' }),
          ],
        }),
      );
      expect(annotation.tags).toContain('debugging');
      const readFailure = annotateEpisode(
        episode({ toolCalls: [call(1, 'Read', { outcome: 'error' }), call(1, 'Read')] }),
      );
      expect(readFailure.tags).not.toContain('debugging');
    });

    it('should tag a stuck loop after three failures in a row', () => {
      const failing = (): AnnotationToolCall => call(1, 'Bash', { outcome: 'error' });
      expect(
        annotateEpisode(episode({ toolCalls: [failing(), failing(), failing()] })).tags,
      ).toEqual(['execute-heavy', 'stuck-loop']);
      expect(
        annotateEpisode(episode({ toolCalls: [failing(), failing(), call(1, 'Bash'), failing()] }))
          .tags,
      ).toEqual(['execute-heavy', 'debugging']);
    });

    it('should tag episodes with more than one agent', () => {
      const annotation = annotateEpisode(
        episode({ toolCalls: [call(1, 'Task'), call(1, 'Read', { agentId: 'sub-agent' })] }),
      );
      expect(annotation.tags).toEqual(['multi-agent']);
    });
  });
});

describe('extractKeyDecisions', () => {
  it('should pick the sentences that assert a decision, in order', () => {
    expect(
      extractKeyDecisions([
        "Let's use zod for validation. The old parser is slow.",
        "We'll go with Kafka transactions instead of an outbox table!",
        "Don't touch the migrations.\nAlways run prettier before committing",
        'We should never log tokens. I decided to keep the retries at three.',
      ]),
    ).toEqual([
      "Let's use zod for validation.",
      "We'll go with Kafka transactions instead of an outbox table!",
      "Don't touch the migrations.",
      'Always run prettier before committing',
      'We should never log tokens.',
    ]);
  });

  it('should skip questions, prose that only contains the words, and very short sentences', () => {
    expect(
      extractKeyDecisions([
        'Should we use zod instead of joi?',
        "I don't know why the build fails.",
        "Let's look at the logs first.",
        "don't.",
        'It always fails on CI.',
      ]),
    ).toEqual([]);
  });

  it('should normalise apostrophes, strip bullets, drop duplicates and cap the count', () => {
    expect(
      extractKeyDecisions(
        [
          '- Let\u2019s use pnpm from now on',
          "let's use pnpm from now on",
          '1. never push to main directly',
          'rather than mocks, use the real broker',
        ],
        { maxKeyDecisions: 2 },
      ),
    ).toEqual(['Let\u2019s use pnpm from now on', 'never push to main directly']);
  });

  it('should cut long decisions', () => {
    const [decision] = extractKeyDecisions([`Let's use ${'very '.repeat(60)}long names`], {
      maxDecisionChars: 20,
    });
    expect(decision).toBe("Let's use very very…");
  });
});
