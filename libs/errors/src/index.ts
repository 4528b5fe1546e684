// The error taxonomy shared by every layer (the bottom of the import graph: it imports nothing of
// ours). @engram/core re-exports it, so `import { InvalidEventError } from '@engram/core'` works.
export * from './engram-error';
