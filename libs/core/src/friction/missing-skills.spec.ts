import { describe, expect, it } from 'vitest';
import { frictionProposals } from './friction-report';
import { DEFAULT_FRICTION_SETTINGS } from './friction-settings';
import {
  detectMissingSkills,
  missingSkillTimeline,
  skillName,
  type RecipeRow,
} from './missing-skills';
import { normaliseRecipeCommand, recipeStepOf } from './missing-skills-steps';

const settings = DEFAULT_FRICTION_SETTINGS;
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 20, 9);
const RELEASE = [
  '$ git pull --rebase',
  'Edit CHANGELOG.md',
  '$ npm version patch',
  '$ git push --follow-tags',
  '$ npm publish',
];

function recipe(steps: string[], overrides: Partial<RecipeRow> = {}): RecipeRow {
  return {
    tenantId: 'acme',
    projectId: 'acme/lib',
    steps,
    sessions: 6,
    occurrences: 7,
    durationMs: 120_000,
    tokens: 0,
    firstAt: T0,
    lastAt: T0 + 5 * DAY,
    sessionIds: ['s-1', 's-2'],
    eventIds: ['e-1', 'e-2'],
    agentIds: ['claude-code'],
    ...overrides,
  };
}

describe('recipe steps', () => {
  it('should normalise a command so two runs of a recipe are the same step', () => {
    expect(normaliseRecipeCommand('git commit  -m "release 1.2.3"')).toBe('git commit -m <text>');
    expect(normaliseRecipeCommand('docker build -t app:3f9a2c1 .')).toBe(
      'docker build -t app:<hex> .',
    );
    expect(normaliseRecipeCommand('tar czf /tmp/x-1/out.tgz dist')).toBe('tar czf <tmp> dist');
    expect(recipeStepOf({ toolName: 'Bash', command: 'npm publish', filePaths: [] }, null)).toBe(
      '$ npm publish',
    );
    expect(
      recipeStepOf(
        { toolName: 'Edit', command: null, filePaths: ['/home/ana/lib/CHANGELOG.md'] },
        '/home/ana/lib',
      ),
    ).toBe('Edit CHANGELOG.md');
    expect(recipeStepOf({ toolName: 'TodoWrite', command: null, filePaths: [] }, null)).toBe(
      'TodoWrite',
    );
    // A failed call is troubleshooting, not a step: it breaks a run.
    expect(
      recipeStepOf({ toolName: 'Bash', command: 'pytest', filePaths: [], failed: true }, null),
    ).toBeNull();
  });
});

describe('detectMissingSkills', () => {
  it('should propose a skill for a recipe done by hand in enough sessions', () => {
    const [finding, ...rest] = detectMissingSkills([recipe(RELEASE)], settings);
    expect(rest).toEqual([]);
    expect(finding).toMatchObject({
      kind: 'missing-skill',
      sessions: 6,
      projectIds: ['acme/lib'],
      evidence: { sessionIds: ['s-1', 's-2'], eventIds: ['e-1', 'e-2'] },
      skill: { name: 'npm-publish' },
    });
    expect(finding.title).toContain('git pull --rebase → Edit CHANGELOG.md');
    expect(finding.skill?.lines).toContain('2. Edit `CHANGELOG.md`');
    expect(finding.skill?.lines).toContain('5. Run `npm publish`');
  });

  it('should give the proposal a patch creating the skill file', () => {
    const [proposal] = frictionProposals(detectMissingSkills([recipe(RELEASE)], settings), {
      from: T0,
      to: T0 + 7 * DAY,
    });
    expect(proposal.target).toBe('skill');
    expect(proposal.change).toMatchObject({
      kind: 'file',
      file: '.claude/skills/npm-publish/SKILL.md',
    });
    const patch = proposal.change.kind === 'file' ? proposal.change.patch : '';
    expect(patch.split('\n').slice(0, 3)).toEqual([
      '--- /dev/null',
      '+++ b/.claude/skills/npm-publish/SKILL.md',
      `@@ -0,0 +1,${proposal.change.kind === 'file' ? proposal.change.lines.length : 0} @@`,
    ]);
    expect(patch).toContain('+name: npm-publish');
    const mixed = frictionProposals(
      detectMissingSkills([recipe(RELEASE, { agentIds: ['claude-code', 'codex'] })], settings),
      { from: T0, to: T0 + 7 * DAY },
    );
    expect(mixed[0].change).toMatchObject({ file: '.agents/skills/npm-publish/SKILL.md' });
  });

  it('should report the longest recipe, not the shorter runs inside it', () => {
    const rows = [
      recipe(RELEASE),
      recipe(RELEASE.slice(0, 4), { sessions: 7 }),
      recipe(RELEASE.slice(2, 5), { sessions: 6 }),
      // The same run in another project is a recipe of that project.
      recipe(RELEASE.slice(2, 5), { projectId: 'acme/other' }),
    ];
    const findings = detectMissingSkills(rows, settings);
    expect(findings.map((f) => f.projectIds[0]).sort()).toEqual(['acme/lib', 'acme/other']);
    // Inside the release, but done far more often on its own: a recipe of its own.
    const often = detectMissingSkills(
      [recipe(RELEASE), recipe(RELEASE.slice(2, 5), { sessions: 40 })],
      settings,
    );
    expect(often).toHaveLength(2);
  });

  it('should count the runs of reported recipes per day, not of the runs inside them', () => {
    const rows = [
      recipe(RELEASE, { days: { '2026-11-20': 4, '2026-11-22': 3 } }),
      recipe(RELEASE.slice(0, 3), { days: { '2026-11-20': 4, '2026-11-22': 3 } }),
    ];
    expect(missingSkillTimeline(rows, settings)).toEqual([
      { day: '2026-11-20', kind: 'missing-skill', count: 4 },
      { day: '2026-11-22', kind: 'missing-skill', count: 3 },
    ]);
  });

  it('should not take a retry loop for a recipe', () => {
    const retries = ['$ make e2e', '$ make e2e', '$ make e2e'];
    expect(detectMissingSkills([recipe(retries)], settings)).toEqual([]);
    const fixAndRetry = ['$ make e2e', 'Edit e2e/login.spec.ts', '$ make e2e'];
    expect(detectMissingSkills([recipe(fixAndRetry)], settings)).toHaveLength(1);
  });

  it('should not fire below the sessions, on too few steps, or on reads without commands', () => {
    expect(detectMissingSkills([recipe(RELEASE, { sessions: 4 })], settings)).toEqual([]);
    expect(
      detectMissingSkills([recipe(['$ git add -A', '$ git commit -m <text>'])], settings),
    ).toEqual([]);
    expect(
      detectMissingSkills(
        [recipe(['Read src/app.ts', 'Read src/config.ts', '$ npm test'])],
        settings,
      ),
    ).toEqual([]);
    expect(detectMissingSkills([recipe([...RELEASE, '$ echo done'])], settings)).toEqual([]);
  });

  it('should name a skill after its last command', () => {
    expect(
      skillName(['$ docker build -t app:<hex> .', '$ kubectl rollout status deploy/app']),
    ).toBe('kubectl-rollout-status');
    expect(skillName(['Read a', 'Edit b', 'Write c'])).toBe('write-c');
  });
});
