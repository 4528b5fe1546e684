// The distiller's test helpers for other apps (`@engram/app-distiller/testing`): recorded sessions
// as distiller input, and waits on the embedded log.
export { compactedSession, debuggingSession, type RecordedSession } from './distiller-events';
export { caughtUp, until } from './embedded-waits';
export { testDistillerSettings } from './test-settings';
