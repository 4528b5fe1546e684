import { describe, expect, it } from 'vitest';
import { browserCallOf } from './e2e-observation-detection';
import { draftCandidates, runPromotion } from './promotion/promotion-pipeline';
import { e2eObservationRule } from './rules/e2e-observation.rule';
import {
  browserCall,
  edit,
  inferenceInput,
  ofType,
  promotionInput,
  runSession,
} from './testing/observer-fixtures';

const CLICK = 'mcp__playwright__browser_click';
const NAVIGATE = 'mcp__playwright__browser_navigate';

const browser = browserCall;

const open = (step: number) =>
  browser(
    step,
    NAVIGATE,
    { url: 'http://localhost:3000/settings?tab=1' },
    {
      result: '- Page URL: http://localhost:3000/settings?tab=1\n- Page Title: Settings',
    },
  );
const clickSave = (step: number, error?: string) =>
  browser(step, CLICK, { element: 'Save button', ref: 'e7' }, error ? { error } : {});
const acceptCookies = (step: number) => browser(step, CLICK, { element: 'Accept cookies' });

describe('browserCallOf', () => {
  it('should recognise browser automation tools and name their action and target', () => {
    expect(browserCallOf(CLICK, '{"element":"Save","ref":"e1"}')).toMatchObject({
      action: 'click',
      target: 'Save',
    });
    expect(browserCallOf('mcp__puppeteer__puppeteer_fill', '{"selector":"#email"}')).toMatchObject({
      action: 'fill',
      target: '#email',
    });
    expect(
      browserCallOf('mcp__electron__send_keyboard_shortcut', '{"key":"Ctrl+S"}'),
    ).toMatchObject({ action: 'key', target: 'Ctrl+S' });
    expect(browserCallOf('mcp__playwright__browser_wait_for', '{"text":"Saved"}')?.action).toBe(
      'wait',
    );
  });

  it('should leave other tools alone, MCP or not', () => {
    expect(browserCallOf('Bash', '{}')).toBeNull();
    expect(browserCallOf('mcp__github__create_issue', '{"title":"x"}')).toBeNull();
    expect(browserCallOf('mcp__postgres__query', '{"sql":"select 1"}')).toBeNull();
  });
});

describe('e2e observations from browser tool calls', () => {
  it('should find a precondition: an action that failed, then worked after another one', () => {
    const { signals } = runSession([
      open(0),
      clickSave(1, 'Element is outside of the viewport: <div class="cookie-banner"> covers it'),
      acceptCookies(2),
      clickSave(3),
    ]);
    expect(ofType(signals, 'e2e_observation')).toEqual([
      expect.objectContaining({
        observationType: 'precondition',
        mcpTool: CLICK,
        action: 'click',
        target: 'Save button',
        page: 'http://localhost:3000/settings',
        before: ['click "Accept cookies"'],
        eventIds: ['s1-e3'],
      }),
    ]);
  });

  it('should find a timing issue: a wait-like failure that worked on a retry or after a wait', () => {
    const timeout =
      'Timeout 5000ms exceeded. waiting for element to be visible, enabled and stable';
    const retried = runSession([open(0), clickSave(1, timeout), clickSave(2)]).signals;
    expect(ofType(retried, 'e2e_observation').map((s) => [s.observationType, s.outcome])).toEqual([
      ['timing', `failed first (${timeout}); worked on a retry`],
    ]);
    const waited = runSession([
      open(0),
      clickSave(1, timeout),
      browser(2, 'mcp__playwright__browser_wait_for', { time: 2 }),
      clickSave(3),
    ]).signals;
    expect(ofType(waited, 'e2e_observation').map((s) => s.observationType)).toEqual(['timing']);
    expect(ofType(waited, 'e2e_observation')[0].outcome).toContain('worked after a wait');
  });

  it('should call a failure never resolved by the session end an MCP gotcha', () => {
    const { signals } = runSession(
      [
        open(0),
        browser(
          1,
          'mcp__playwright__browser_file_upload',
          { paths: [] },
          {
            error: 'The modal state is not a file chooser',
          },
        ),
      ],
      { finish: true },
    );
    expect(ofType(signals, 'e2e_observation')).toEqual([
      expect.objectContaining({
        observationType: 'mcp_gotcha',
        action: 'file_upload',
        outcome: 'failed: The modal state is not a file chooser',
        page: 'http://localhost:3000/settings',
      }),
    ]);
  });

  it('should record a page that reports an error, and an explicit wait for something', () => {
    const { signals } = runSession([
      open(0),
      browser(
        1,
        CLICK,
        { element: 'Delete account' },
        {
          result:
            '- Page URL: http://localhost:3000/settings\n- Console: [error] 403 Forbidden /api/account',
        },
      ),
      browser(2, 'mcp__playwright__browser_wait_for', { text: 'Account deleted' }),
    ]);
    expect(
      ofType(signals, 'e2e_observation').map((s) => [s.observationType, s.target, s.outcome]),
    ).toEqual([
      ['ui_behavior', 'Delete account', '- Console: [error] 403 Forbidden /api/account'],
      ['timing', 'Account deleted', 'had to wait for "Account deleted"'],
    ]);
  });

  it('should say nothing of routine browser calls, nor of sessions without browser tools', () => {
    const routine = runSession([open(0), clickSave(1), acceptCookies(2)], { finish: true });
    expect(ofType(routine.signals, 'e2e_observation')).toEqual([]);
    const coding = runSession(
      [
        edit(0, 'src/a.ts'),
        { step: 1, toolName: 'Bash', outcome: 'error', errorMessage: 'Timeout' },
      ],
      { finish: true },
    );
    expect(ofType(coding.signals, 'e2e_observation')).toEqual([]);
  });
});

describe('e2eObservationRule and its promotion', () => {
  const qaSession = (sessionId: string) =>
    runSession(
      [
        open(0),
        clickSave(1, 'element intercepts pointer events'),
        acceptCookies(2),
        { ...clickSave(3), filePaths: ['src/settings/SettingsPage.tsx'] },
      ],
      { sessionId },
    ).signals;

  it('should make one global mcp_auto candidate per kind, action and page, with its files', () => {
    const candidates = e2eObservationRule(
      inferenceInput({ signals: [...qaSession('qa1'), ...qaSession('qa2')] }),
    );
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toMatchObject({
      memoryType: 'e2e_observation',
      source: 'mcp_auto',
      scope: 'global',
      frequency: 2,
      relatedFiles: ['src/settings/SettingsPage.tsx'],
      relatedModules: ['src/settings'],
      evidence: { sessionIds: ['qa1', 'qa2'] },
      facts: { kind: 'e2e_observation', observationType: 'precondition', occurrences: 2 },
    });
    expect(e2eObservationRule(inferenceInput({ signals: [] }))).toEqual([]);
  });

  it('should promote a single observation: 0.75 confidence, for review, seed tags', async () => {
    const input = promotionInput(qaSession('qa1'));
    const { memories } = await runPromotion(
      input,
      { complexity: null, alreadyPromoted: 0 },
      { workUnitRef: null, fallbackSessionId: 'qa1' },
    );
    const e2e = memories.filter((m) => m.memoryType === 'e2e_observation');
    expect(e2e).toHaveLength(1);
    expect(e2e[0]).toMatchObject({
      source: 'mcp_auto',
      confidence: 0.75,
      needsReview: true,
      scope: 'global',
      e2eObservation: {
        observationType: 'precondition',
        mcpToolUsed: CLICK,
        appState: 'http://localhost:3000/settings',
      },
    });
    expect(e2e[0].tags).toEqual(expect.arrayContaining(['e2e', CLICK, 'precondition']));
    expect(e2e[0].content).toBe(
      'Before click "Save button" on http://localhost:3000/settings, do: click "Accept cookies". Observed: failed first (element intercepts pointer events); worked after click "Accept cookies".',
    );
    expect(draftCandidates(input).drafts.map((d) => d.memoryType)).toContain('e2e_observation');
  });

  it('should confirm an observation seen in a second session at 0.9 (seed 002 §15 Q6)', async () => {
    const input = promotionInput([...qaSession('qa1'), ...qaSession('qa2')]);
    const { memories } = await runPromotion(
      input,
      { complexity: null, alreadyPromoted: 0 },
      { workUnitRef: null, fallbackSessionId: 'qa2' },
    );
    const e2e = memories.filter((m) => m.memoryType === 'e2e_observation');
    expect(e2e.map((m) => [m.confidence, m.provenanceSessionIds])).toEqual([[0.9, ['qa1', 'qa2']]]);
    expect(e2e[0].content).toContain('(seen 2 times)');
  });
});
