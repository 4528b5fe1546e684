import { detectSecretCandidates, type SecretCandidate } from './detectors';
import {
  redactionMarker,
  redactionMarkerSpans,
  type RedactionFinding,
  type RedactionResult,
} from './types';

/**
 * SPEC §11: secrets in prompts and tool calls are redacted before anything is stored or
 * published downstream. Pure and synchronous: no I/O, no state between calls.
 *
 * Each secret is replaced by `[REDACTED:<kind>]`; findings give the kind and the position in
 * the ORIGINAL text, never the secret. Overlapping candidates merge into one finding named by
 * the most specific detector (a `ghp_…` token assigned to `GITHUB_TOKEN` is a github-token).
 *
 * Idempotent: text inside a marker is never redacted again, and the result is a fixed point.
 * A marker can expose what its secret hid: in `ghp_…--password x1y2z3w4` the flag is glued to
 * the token and is no flag, but after `[REDACTED:github-token]` it is one. So when a pass finds
 * something, the redacted text is scanned again (at most `MAX_PASSES` times; one pass when the
 * text holds no secret) and the new findings are mapped back to the original text.
 *
 * Linear in the length of the text (see detectors.ts).
 */
const MAX_PASSES = 4;

export function findSecrets(text: string): RedactionFinding[] {
  let findings = findInOnePass(text);
  for (let pass = 1; pass < MAX_PASSES && findings.length > 0; pass += 1) {
    const more = findInOnePass(applyFindings(text, findings));
    if (more.length === 0) break;
    findings = mergeFindings(findings, mapToOriginal(more, findings));
  }
  return findings;
}

/** Replaces every secret in the text with `[REDACTED:<kind>]`. */
export function redactSecrets(text: string): RedactionResult {
  const findings = findSecrets(text);
  if (findings.length === 0) return { text, findings };
  return { text: applyFindings(text, findings), findings };
}

function findInOnePass(text: string): RedactionFinding[] {
  if (text.length === 0) return [];
  const candidates = detectSecretCandidates(text);
  if (candidates.length === 0) return [];
  candidates.sort(
    (left, right) =>
      left.start - right.start || right.end - left.end || right.priority - left.priority,
  );
  const markers = redactionMarkerSpans(text);
  let marker = 0;
  const merged: SecretCandidate[] = [];
  for (const candidate of candidates) {
    while (marker < markers.length && markers[marker].end <= candidate.start) marker += 1;
    if (marker < markers.length && markers[marker].start < candidate.end) continue;
    const last = merged.length > 0 ? merged[merged.length - 1] : undefined;
    if (last !== undefined && candidate.start < last.end) {
      last.end = Math.max(last.end, candidate.end);
      if (candidate.priority > last.priority) {
        last.kind = candidate.kind;
        last.priority = candidate.priority;
      }
      continue;
    }
    merged.push({ ...candidate });
  }
  return merged.map(({ kind, start, end }) => ({ kind, start, end }));
}

/** `findings` must be ordered and disjoint. */
function applyFindings(text: string, findings: readonly RedactionFinding[]): string {
  const parts: string[] = [];
  let cursor = 0;
  for (const finding of findings) {
    parts.push(text.slice(cursor, finding.start), redactionMarker(finding.kind));
    cursor = finding.end;
  }
  parts.push(text.slice(cursor));
  return parts.join('');
}

/**
 * Findings of a later pass, in the text redacted with `applied`, moved to the original text. A
 * later finding never overlaps a marker, so it lies in one stretch of unchanged text.
 */
function mapToOriginal(
  later: readonly RedactionFinding[],
  applied: readonly RedactionFinding[],
): RedactionFinding[] {
  const mapped: RedactionFinding[] = [];
  let index = 0;
  // Redacted offset minus original offset, after the markers passed so far.
  let shift = 0;
  for (const finding of later) {
    while (index < applied.length && applied[index].start + shift < finding.end) {
      const next = applied[index];
      shift += redactionMarker(next.kind).length - (next.end - next.start);
      index += 1;
    }
    mapped.push({ kind: finding.kind, start: finding.start - shift, end: finding.end - shift });
  }
  return mapped;
}

function mergeFindings(
  left: readonly RedactionFinding[],
  right: readonly RedactionFinding[],
): RedactionFinding[] {
  return [...left, ...right].sort((a, b) => a.start - b.start);
}
