import { describe, expect, it } from 'vitest';
import { DecodeError, DownstreamUnavailableError, InvalidEventError } from '../errors/engram-error';
import { backoffDelayMs, failureVerdict } from './retry-policy';

describe('backoffDelayMs', () => {
  const options = { initialMs: 100, maxMs: 5_000 };

  it('should grow exponentially up to the cap at full jitter', () => {
    expect(backoffDelayMs(0, options, () => 1)).toBe(100);
    expect(backoffDelayMs(3, options, () => 1)).toBe(800);
    expect(backoffDelayMs(20, options, () => 1)).toBe(5_000);
  });

  it('should never go below the initial delay', () => {
    expect(backoffDelayMs(5, options, () => 0)).toBe(100);
  });
});

describe('failureVerdict', () => {
  it('should retry outages for ever', () => {
    expect(failureVerdict(new DownstreamUnavailableError('es down'), 10_000, 3)).toBe('retry');
  });

  it('should dead-letter undecodable and invalid events at once', () => {
    expect(failureVerdict(new DecodeError('bad magic'), 0, 3)).toBe('dead-letter');
    expect(failureVerdict(new InvalidEventError('no eventId'), 0, 3)).toBe('dead-letter');
  });

  it('should never retry programmer errors', () => {
    expect(failureVerdict(new TypeError('x is undefined'), 0, 3)).toBe('dead-letter');
  });

  it('should retry unclassified errors a bounded number of times', () => {
    expect(failureVerdict(new Error('?'), 0, 3)).toBe('retry');
    expect(failureVerdict(new Error('?'), 1, 3)).toBe('retry');
    expect(failureVerdict(new Error('?'), 2, 3)).toBe('dead-letter');
  });
});
