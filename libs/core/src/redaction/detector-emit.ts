import type { RedactionKind } from './types';

// How a detector (detectors.ts) reports a candidate span, and which one wins when spans overlap.

export type Emit = (kind: RedactionKind, start: number, end: number, priority: number) => void;

export const PRIORITY_PEM = 4;
export const PRIORITY_TOKEN = 3;
export const PRIORITY_CONTEXT = 2;
export const PRIORITY_ASSIGNMENT = 1;
export const PRIORITY_ENTROPY = 0;
