// The observer's public entry (`@engram/app-observer`): what other apps (the `engram` CLI) may use.
// Other apps import the observer only through this file (dependency-cruiser rule
// apps-cross-import-public-entry); the modules of this app never import it (that would be a cycle).
export { ObserverModule, ObserverService } from './observer.module';
export {
  DEFAULT_OBSERVER_GROUP,
  ensureObserverTopics,
  observerCodecs,
  prefixedObserverTopics,
  startObserver,
  type ObserverOptions,
  type RunningObserver,
} from './observer.topology';
export { DEFAULT_OBSERVER_TOPICS, ObserverStage } from './observer.stage';
