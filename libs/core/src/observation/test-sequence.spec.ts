import { describe, expect, it } from 'vitest';
import { browserCallOf } from './e2e-observation-detection';
import { runPromotion } from './promotion/promotion-pipeline';
import { e2eObservationRule } from './rules/e2e-observation.rule';
import { MAX_SEQUENCE_STEPS } from './test-sequence-detection';
import { emptyProjectStats } from './project-stats';
import {
  browserCall,
  foldAll,
  inferenceInput,
  NO_RANKING,
  ofType,
  promotionInput,
  read,
  runSession,
  type CallSpec,
} from './testing/observer-fixtures';

const PW = 'mcp__playwright__browser_';
const LOGIN = 'http://localhost:3000/login';
const HOME = 'http://localhost:3000/home';

const browser = (
  step: number,
  tool: string,
  args: Record<string, unknown>,
  outcome: { result?: string; error?: string } = {},
): CallSpec => browserCall(step, PW + tool, args, outcome);

const openLogin = (step: number) =>
  browser(step, 'navigate', { url: `${LOGIN}?next=/home` }, { result: `- Page URL: ${LOGIN}` });
const typeEmail = (step: number) =>
  browser(step, 'type', { element: 'Email textbox', ref: 'e3', text: 'qa@example.com' });
// No element: the typed password is the only `text`, and must not become the target.
const typePassword = (step: number) => browser(step, 'type', { ref: 'e4', text: 'hunter2-secret' });
const signIn = (step: number, error?: string) =>
  browser(step, 'click', { element: 'Sign in button', ref: 'e5' }, error ? { error } : {});
const snapshot = (step: number) =>
  browser(step, 'snapshot', {}, { result: `- Page URL: ${HOME}\n- Page Title: Home` });
const waitForWelcome = (step: number) => browser(step, 'wait_for', { text: 'Welcome back' });

const LOGIN_STEPS = [
  `navigate "${LOGIN}?next=/home"`,
  'fill "Email textbox"',
  'fill "e4"',
  'click "Sign in button"',
];

const sequences = (calls: CallSpec[], sessionId = 's1') =>
  ofType(runSession(calls, { sessionId, finish: true }).signals, 'e2e_observation').filter(
    (s) => s.observationType === 'test_sequence',
  );

describe('test_sequence from browser tool calls', () => {
  it('should name the steps of a run of actions that ended in a snapshot, and the page reached', () => {
    const [sequence, ...rest] = sequences([
      openLogin(0),
      typeEmail(1),
      read(2, 'src/auth/LoginPage.tsx'),
      typePassword(3),
      signIn(4),
      snapshot(5),
    ]);
    expect(rest).toEqual([]);
    expect(sequence).toMatchObject({
      observationType: 'test_sequence',
      mcpTool: `${PW}snapshot`,
      page: HOME,
      target: null,
      outcome: `reached ${HOME}`,
      before: LOGIN_STEPS,
    });
    expect(JSON.stringify(sequence)).not.toContain('hunter2');
    expect(JSON.stringify(sequence)).not.toContain('qa@example.com');
  });

  it('should take the text a wait or an assertion checked as the state reached', () => {
    const [waited] = sequences([openLogin(0), typeEmail(1), signIn(2), waitForWelcome(3)]);
    expect(waited).toMatchObject({ target: 'Welcome back', page: LOGIN });
    const [asserted] = sequences([
      openLogin(0),
      typeEmail(1),
      signIn(2),
      browser(3, 'verify_text_visible', { text: 'Welcome back' }),
    ]);
    expect(asserted).toMatchObject({ action: 'assert', target: 'Welcome back' });
  });

  it('should want three actions: a check after fewer lets the run go on to the next check', () => {
    expect(sequences([openLogin(0), signIn(1), snapshot(2)])).toEqual([]);
    const [sequence] = sequences([
      openLogin(0),
      snapshot(1),
      typeEmail(2),
      snapshot(3),
      signIn(4),
      snapshot(5),
      snapshot(6),
    ]);
    expect(sequence.before).toEqual([LOGIN_STEPS[0], LOGIN_STEPS[1], LOGIN_STEPS[3]]);
    expect(
      sequences([openLogin(0), typeEmail(1), signIn(2), snapshot(3), snapshot(4)]),
    ).toHaveLength(1);
  });

  it('should start again after a failure, and say where a run that did not navigate began', () => {
    const calls = [openLogin(0), typeEmail(1), signIn(2, 'Timeout 5000ms exceeded'), signIn(3)];
    expect(sequences([...calls, snapshot(4)])).toEqual([]);
    const [sequence] = sequences([...calls, typeEmail(4), signIn(5), snapshot(6)]);
    expect(sequence.before).toEqual([
      `start at ${LOGIN}`,
      'click "Sign in button"',
      'fill "Email textbox"',
      'click "Sign in button"',
    ]);
  });

  it(`should keep the latest ${MAX_SEQUENCE_STEPS} steps of a longer run`, () => {
    const clicks = Array.from({ length: 12 }, (_, i) =>
      browser(i + 1, 'click', { element: `Next ${i + 1}` }),
    );
    const [sequence] = sequences([openLogin(0), ...clicks, snapshot(13)]);
    expect(sequence.before).toHaveLength(MAX_SEQUENCE_STEPS + 1);
    expect(sequence.before[0]).toBe(`start at ${LOGIN}`);
    expect(sequence.before.at(-1)).toBe('click "Next 12"');
  });

  it('should never take a fill’s typed text as its target', () => {
    expect(browserCallOf(`${PW}type`, '{"ref":"e4","text":"hunter2"}')?.target).toBe('e4');
    expect(browserCallOf('mcp__electron__fill_input', '{"text":"hunter2"}')?.target).toBeNull();
    expect(browserCallOf(`${PW}click`, '{"text":"Sign in"}')?.target).toBe('Sign in');
  });
});

describe('test_sequence memories', () => {
  const login = (sessionId: string) =>
    runSession([openLogin(0), typeEmail(1), typePassword(2), signIn(3), snapshot(4)], {
      sessionId,
    }).signals;

  it('should make one candidate per state and steps, whichever session saw it', () => {
    const other = runSession([openLogin(0), typeEmail(1), signIn(2), snapshot(3)], {
      sessionId: 'qa3',
    }).signals;
    const candidates = e2eObservationRule(
      inferenceInput({ signals: [...login('qa1'), ...login('qa2'), ...other] }),
    );
    expect(candidates.map((c) => [c.frequency, c.evidence.sessionIds])).toEqual([
      [2, ['qa1', 'qa2']],
      [1, ['qa3']],
    ]);
    expect(new Set(candidates.map((c) => c.key)).size).toBe(2);
  });

  it('should promote it at 0.75 for review, with the steps and the state, no typed value', async () => {
    const { memories } = await runPromotion(promotionInput(login('qa1')), NO_RANKING, {
      workUnitRef: null,
      fallbackSessionId: 'qa1',
    });
    const [memory] = memories.filter((m) => m.memoryType === 'e2e_observation');
    expect(memory).toMatchObject({
      source: 'mcp_auto',
      scope: 'global',
      confidence: 0.75,
      needsReview: true,
      e2eObservation: { observationType: 'test_sequence', appState: HOME },
    });
    expect(memory.content).toBe(`To reach ${HOME}, follow: ${LOGIN_STEPS.join(' → ')}.`);
    expect(memory.tags).toEqual(expect.arrayContaining(['e2e', 'test_sequence']));
    expect(JSON.stringify(memory)).not.toContain('hunter2');
  });

  it('should confirm the same sequence seen in a second session at 0.9, under the same id', async () => {
    const once = await runPromotion(promotionInput(login('qa1')), NO_RANKING, {
      workUnitRef: null,
      fallbackSessionId: 'qa1',
    });
    const twice = await runPromotion(
      promotionInput([...login('qa1'), ...login('qa2')]),
      NO_RANKING,
      { workUnitRef: null, fallbackSessionId: 'qa2' },
    );
    const e2e = (ms: typeof once.memories) => ms.filter((m) => m.memoryType === 'e2e_observation');
    expect(e2e(twice.memories).map((m) => [m.memoryId, m.confidence])).toEqual([
      [e2e(once.memories)[0].memoryId, 0.9],
    ]);
  });

  it('should confirm it when only the second session is promoted, from the project statistics', async () => {
    // The observer promotes one session's scratchpad; the earlier session is in the statistics.
    const stats = emptyProjectStats();
    foldAll(stats, [...login('qa1'), ...login('qa2')]);
    const { memories } = await runPromotion(promotionInput(login('qa2'), { stats }), NO_RANKING, {
      workUnitRef: null,
      fallbackSessionId: 'qa2',
    });
    const e2e = memories.filter((m) => m.memoryType === 'e2e_observation');
    expect(e2e.map((m) => [m.confidence, m.provenanceSessionIds])).toEqual([[0.9, ['qa1', 'qa2']]]);
    const alone = await runPromotion(promotionInput(login('qa2')), NO_RANKING, {
      workUnitRef: null,
      fallbackSessionId: 'qa2',
    });
    expect(alone.memories.find((m) => m.memoryType === 'e2e_observation')?.confidence).toBe(0.75);
  });
});
