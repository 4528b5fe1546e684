// The observer graph's rows and port live in @engram/core (ports/observer-graph.ts); re-exported
// here so the Neo4j adapter's users import them from one place.
export {
  emptyGraphBatch,
  isEmptyGraphBatch,
  splitGraphBatch,
  type CoAccessDirectionRule,
  type CoAccessReader,
  type GraphCoAccessNeighbour,
  type GraphErrorRow,
  type GraphFileRef,
  type GraphScope,
  type GraphSessionPairRow,
  type GraphSessionRow,
  type GraphTouchRow,
  type ObserverGraphBatch,
  type ObserverGraphStore,
  type ObserverGraphWriter,
} from '@engram/core';
