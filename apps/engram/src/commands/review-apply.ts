import { ReviewRequestError } from '@engram/app-distiller';
import type { ProposalStatus } from '@engram/contracts';
import { frictionPatch, frictionPatchTarget } from '@engram/core';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { reviewTenant, type ReviewBackend } from './review-backends';
import { isFrictionMessage } from './review-format';

/** `engram review apply ID [--out FILE] [--repo DIR]`. */
export interface ReviewApplyAction {
  kind: 'apply';
  id: string;
  /** Where the diff goes (absent: stdout). */
  out?: string;
  /** The repository the diff is made against (its file gives the hunk's context). */
  repo: string;
}

/** The command's outcome, as runReview's (review.command.ts). */
export interface ReviewApplyRun {
  stdout: string;
  stderr: string;
  exitCode: number;
}

const EXIT_CODES = { invalid: 2, 'not-found': 3, 'not-approved': 4 } as const;

/**
 * Writes an approved friction proposal's file change as a unified diff against the repository's
 * current file (`git apply` takes it as is). Refused, with the review command's exit codes: an
 * unknown id (3), a proposal not approved (4), one that changes no file — a memory to retire or
 * a MEMORY.md line (2).
 */
export async function runReviewApply(
  backend: ReviewBackend,
  action: ReviewApplyAction,
  options: { tenant?: string; json?: boolean },
): Promise<ReviewApplyRun> {
  const refuse = (code: keyof typeof EXIT_CODES, message: string): ReviewApplyRun => ({
    stdout: '',
    stderr: `engram review apply: ${message}`,
    exitCode: EXIT_CODES[code],
  });
  let proposal;
  try {
    proposal = await backend.get(await reviewTenant(backend, options.tenant), action.id);
  } catch (error) {
    if (!(error instanceof ReviewRequestError)) throw error;
    return refuse(error.code === 'not-found' ? 'not-found' : 'invalid', error.message);
  }
  const input = {
    proposalId: proposal.proposalId,
    kind: isFrictionMessage(proposal) ? ('friction' as const) : ('reflection' as const),
    status: proposal.status as ProposalStatus,
    text: proposal.text,
  };

  const file = frictionPatchTarget(input);
  const current =
    file !== null && existsSync(join(action.repo, file))
      ? readFileSync(join(action.repo, file), 'utf8')
      : null;
  const made = frictionPatch(input, current);
  if (!made.ok) {
    return refuse(made.code === 'not-a-file' ? 'invalid' : 'not-approved', made.message);
  }
  if (action.out !== undefined) writeFileSync(action.out, made.patch, 'utf8');
  const summary = {
    proposalId: proposal.proposalId,
    file: made.file,
    out: action.out === undefined ? null : resolve(action.out),
    repoHasFile: current !== null,
  };
  if (options.json) {
    return { stdout: JSON.stringify({ ...summary, patch: made.patch }), stderr: '', exitCode: 0 };
  }
  if (action.out === undefined) return { stdout: made.patch.trimEnd(), stderr: '', exitCode: 0 };
  return {
    stdout:
      `wrote ${action.out}: ${proposal.proposalId} ${current === null ? 'creates' : 'changes'} ` +
      `${made.file} (git apply ${action.out})`,
    stderr: '',
    exitCode: 0,
  };
}
