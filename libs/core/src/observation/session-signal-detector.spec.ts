import { observerSettings } from './observer-settings';
import { describe, expect, it } from 'vitest';
import { SessionSignalDetector } from './session-signal-detector';
import {
  edit,
  grep,
  ofType,
  read,
  ROOT,
  runSession,
  SECOND,
  toolCall,
} from './testing/observer-fixtures';

describe('SessionSignalDetector', () => {
  describe('file_access', () => {
    it('should emit one access per file per call, relative to the root, with its module', () => {
      const { signals } = runSession([
        read(0, `${ROOT}/src/auth/token.ts`),
        edit(1, 'src/auth/token.ts'),
      ]);
      const accesses = ofType(signals, 'file_access');
      expect(accesses.map((s) => [s.filePath, s.module, s.access, s.firstInSession])).toEqual([
        ['src/auth/token.ts', 'src/auth', 'read', true],
        ['src/auth/token.ts', 'src/auth', 'edit', false],
      ]);
      expect(accesses[0].eventIds).toEqual(['s1-e0']);
    });

    it('should count a file read by two tools in the same step once', () => {
      const { signals } = runSession([
        read(3, 'src/a.ts'),
        { ...grep(3, 'src/a.ts'), eventId: 'b' },
        read(4, 'src/b.ts'),
      ]);
      expect(ofType(signals, 'file_access').map((s) => s.filePath)).toEqual([
        'src/a.ts',
        'src/b.ts',
      ]);
      expect(ofType(signals, 'co_access')).toHaveLength(1);
    });

    it('should skip failed calls, drop the root itself and report paths outside the project', () => {
      const detector = SessionSignalDetector.start(
        { tenantId: 't', projectId: 'p', sessionId: 's1' },
        ROOT,
        observerSettings(),
      );
      const failed = detector.observe(
        toolCall({ ...read(0, 'src/a.ts'), outcome: 'error', errorMessage: 'ENOENT' }),
      );
      expect(failed.signals).toEqual([]);
      const result = detector.observe(
        toolCall({ step: 1, toolName: 'Read', filePaths: [ROOT, '/etc/passwd', 'src/b.ts'] }),
      );
      expect(ofType(result.signals, 'file_access').map((s) => s.filePath)).toEqual(['src/b.ts']);
      expect(result.rejectedPaths).toEqual([
        expect.objectContaining({ path: '/etc/passwd', reason: 'escapes_root' }),
      ]);
    });

    it('should ignore a redelivered call', () => {
      const detector = SessionSignalDetector.start(
        { tenantId: 't', projectId: 'p', sessionId: 's1' },
        ROOT,
        observerSettings(),
      );
      const call = toolCall(read(0, 'src/a.ts'));
      expect(detector.observe(call).signals).toHaveLength(1);
      expect(detector.observe(call)).toEqual({ signals: [], rejectedPaths: [], duplicate: true });
    });
  });

  describe('co_access', () => {
    it('should pair files within 3 steps with their step and time deltas, earlier file first', () => {
      const { signals } = runSession([
        read(0, 'src/a.ts'),
        read(3, 'src/b.ts'),
        read(7, 'src/c.ts'),
      ]);
      const pairs = ofType(signals, 'co_access');
      expect(pairs.map((s) => [s.fileA, s.fileB, s.stepDelta, s.timeDeltaMs, s.direction])).toEqual(
        [['src/a.ts', 'src/b.ts', 3, 3 * SECOND, 'a_then_b']],
      );
      expect(pairs[0].eventIds).toEqual(['s1-e0', 's1-e3']);
    });

    it('should not pair files 4 steps apart', () => {
      const { signals } = runSession([read(0, 'src/a.ts'), read(4, 'src/b.ts')]);
      expect(ofType(signals, 'co_access')).toEqual([]);
    });

    it('should pair files of one call as same_step, and use the latest touch of a file', () => {
      const { signals } = runSession([
        read(0, 'src/a.ts'),
        read(1, 'src/a.ts'),
        { step: 2, toolName: 'Read', filePaths: ['src/b.ts', 'src/c.ts'] },
      ]);
      expect(
        ofType(signals, 'co_access').map((s) => [s.fileA, s.fileB, s.stepDelta, s.direction]),
      ).toEqual([
        ['src/a.ts', 'src/b.ts', 1, 'a_then_b'],
        ['src/a.ts', 'src/c.ts', 1, 'a_then_b'],
        ['src/b.ts', 'src/c.ts', 0, 'same_step'],
      ]);
    });

    it('should flag only the first co-access of a pair in the session, whatever the order', () => {
      const { signals } = runSession([
        read(0, 'src/a.ts'),
        read(1, 'src/b.ts'),
        read(2, 'src/a.ts'),
      ]);
      expect(ofType(signals, 'co_access').map((s) => [s.fileA, s.fileB, s.firstInSession])).toEqual(
        [
          ['src/a.ts', 'src/b.ts', true],
          ['src/b.ts', 'src/a.ts', false],
        ],
      );
    });

    it('should not pair searches: a Grep path names a scope, not a file looked at', () => {
      const { signals } = runSession([grep(0, 'src'), read(1, 'src/a.ts')]);
      expect(ofType(signals, 'co_access')).toEqual([]);
    });
  });

  describe('time_anomaly', () => {
    it('should fire once when a never-edited file is read the 4th time', () => {
      const reads = [0, 2, 5, 9, 12].map((step) => read(step, 'src/a.ts'));
      const anomalies = ofType(runSession(reads).signals, 'time_anomaly');
      expect(anomalies.map((s) => [s.filePath, s.readCount, s.dwellMs, s.stepIndex])).toEqual([
        ['src/a.ts', 4, 9 * SECOND, 9],
      ]);
    });

    it('should not fire at 3 reads, nor for a file edited before its 4th read', () => {
      expect(
        ofType(runSession([0, 1, 2].map((s) => read(s, 'src/a.ts'))).signals, 'time_anomaly'),
      ).toEqual([]);
      const edited = [
        read(0, 'src/a.ts'),
        edit(1, 'src/a.ts'),
        read(2, 'src/a.ts'),
        read(3, 'src/a.ts'),
        read(4, 'src/a.ts'),
      ];
      expect(ofType(runSession(edited).signals, 'time_anomaly')).toEqual([]);
    });
  });

  describe('snapshot / restore', () => {
    it('should continue from a restored JSON snapshot exactly as without the restart', () => {
      const calls = [
        read(0, 'src/a.ts'),
        edit(1, 'src/a.ts'),
        read(2, 'src/b.ts'),
        edit(3, 'src/a.ts'),
        read(4, 'src/c.ts'),
      ];
      const uninterrupted = runSession(calls).signals;
      const first = runSession(calls.slice(0, 2));
      const persisted = JSON.parse(JSON.stringify(first.detector.snapshot())) as ReturnType<
        SessionSignalDetector['snapshot']
      >;
      const resumed = SessionSignalDetector.restore(persisted, observerSettings());
      const rest = calls.slice(2).flatMap((spec) => resumed.observe(toolCall(spec)).signals);
      expect([...first.signals, ...rest]).toEqual(uninterrupted);
    });
  });

  describe('summarise', () => {
    it('should summarise files, modules, tokens per module and sequence keys', () => {
      const { detector } = runSession([
        { ...read(0, 'src/auth/a.ts'), tokensUsed: 100 },
        { step: 1, toolName: 'Read', filePaths: ['src/auth/b.ts', 'lib/x.ts'], tokensUsed: 50 },
        edit(2, 'src/auth/a.ts'),
      ]);
      const summary = detector.summarise({ endedAt: 0, succeeded: true, plannedSteps: 5 });
      expect(summary).toMatchObject({
        sessionId: 's1',
        stepCount: 3,
        plannedSteps: 5,
        filesEdited: ['src/auth/a.ts'],
        modules: ['lib', 'src/auth'],
        tokensByModule: { 'src/auth': 125, lib: 25 },
        totalTokens: 150,
      });
    });
  });
});
