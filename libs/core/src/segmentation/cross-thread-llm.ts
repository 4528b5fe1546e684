import { clamp01 } from './clamp01';

// The optional LLM assessment of cross-thread continuity (seed 004 §2.3 PATH B), bounded by a
// timeout: an LLM that times out, throws or answers malformed counts as absent.

/** What the LLM is asked (seed 004 §2.3 PATH B). */
export interface ContinuityAssessmentInput {
  currentThreadId: string;
  previousThreadId: string;
  previousSummary: string | null;
  /** The previous thread's last turns, oldest first. */
  previousTurns: string[];
  currentMessage: string;
  hoursSincePreviousActivity: number;
}

/** The LLM's answer (seed 004 §2.3). */
export interface LlmContinuityAssessment {
  related: boolean;
  /** 0..1. */
  confidence: number;
  reasoning: string;
  /** What made it decide. */
  keySignals: string[];
}

/** An LLM that judges whether two threads are one conversation. Optional. */
export interface LlmContinuityAssessor {
  /** `signal` aborts when the decision stops waiting (timeout); implementations may ignore it. */
  assess(input: ContinuityAssessmentInput, signal?: AbortSignal): Promise<LlmContinuityAssessment>;
}

/** ok: the LLM answered; the others count as no LLM. */
export type LlmAssessmentStatus = 'ok' | 'not_configured' | 'timeout' | 'error' | 'invalid';

const MAX_LLM_ERROR_CHARS = 200;

export interface AssessResult {
  assessment: LlmContinuityAssessment | null;
  status: LlmAssessmentStatus;
  error: string | null;
}

export async function assessWithTimeout(
  assessor: LlmContinuityAssessor,
  input: ContinuityAssessmentInput,
  timeoutMs: number,
): Promise<AssessResult> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  // A non-finite timeout (Infinity) waits for the answer, however long it takes.
  const timedOut = new Promise<'timeout'>((resolve) => {
    if (Number.isFinite(timeoutMs)) {
      timer = setTimeout(() => resolve('timeout'), Math.max(0, timeoutMs));
    }
  });
  // A synchronous throw becomes a rejection; a late rejection after the timeout is swallowed.
  const answer = Promise.resolve()
    .then(() => assessor.assess(input, controller.signal))
    .then(
      (assessment) => ({ ok: true as const, assessment }),
      (error: unknown) => ({ ok: false as const, error }),
    );
  try {
    const result = await Promise.race([answer, timedOut]);
    if (result === 'timeout') {
      controller.abort();
      return { assessment: null, status: 'timeout', error: `no answer within ${timeoutMs} ms` };
    }
    if (!result.ok) {
      return { assessment: null, status: 'error', error: errorText(result.error) };
    }
    const problem = assessmentProblem(result.assessment);
    if (problem !== null) return { assessment: null, status: 'invalid', error: problem };
    const { related, confidence, reasoning, keySignals } = result.assessment;
    return {
      assessment: {
        related,
        confidence: clamp01(confidence),
        reasoning: typeof reasoning === 'string' ? reasoning : '',
        keySignals: Array.isArray(keySignals)
          ? keySignals.filter((signal): signal is string => typeof signal === 'string')
          : [],
      },
      status: 'ok',
      error: null,
    };
  } finally {
    clearTimeout(timer);
  }
}

function assessmentProblem(assessment: unknown): string | null {
  if (typeof assessment !== 'object' || assessment === null) return 'answer is not an object';
  const { related, confidence } = assessment as Record<string, unknown>;
  if (typeof related !== 'boolean') return 'related is not a boolean';
  if (typeof confidence !== 'number' || !Number.isFinite(confidence)) {
    return 'confidence is not a finite number';
  }
  return null;
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > MAX_LLM_ERROR_CHARS ? `${text.slice(0, MAX_LLM_ERROR_CHARS - 1)}…` : text;
}
