import { connect } from 'node:net';
import { lineReader, type HookSocketReply, type HookSocketRequest } from './hook-socket-protocol';

// The hook's end of the hook socket (protocol in hook-socket-protocol.ts). Node built-ins only:
// this is loaded by every hook.

export type HookSocketResult =
  /** The service did the hook's work: print this, exit 0. */
  | { kind: 'done'; stdout: string | null; messages: string[] }
  /** The service did not take the event (or may have lost it): do the work directly. */
  | { kind: 'direct'; reason: string };

/**
 * Hands the hook to the service listening on `path`. `direct` when nothing listens there, the
 * service refuses or does not take the event within `handshakeMs` (connecting included), or does
 * not say the event is durable within the time it gave in `accepted`; `done` otherwise — with no
 * context (and a line for stderr) when the answer does not come in time after the ack.
 */
export function viaHookSocket(
  path: string,
  request: HookSocketRequest,
  handshakeMs: number,
): Promise<HookSocketResult> {
  return new Promise((resolve) => {
    // Connects once this function has attached its listeners (the events come on later turns).
    const socket = connect(path);
    let stage: 'handshake' | 'working' | 'acknowledged' | 'over' = 'handshake';
    let timer: NodeJS.Timeout | undefined;
    let acknowledged = () => undefined as void;
    const settle = (result: HookSocketResult) => {
      if (stage === 'over') return;
      stage = 'over';
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const arm = (ms: number, onTimeout: () => void) => {
      clearTimeout(timer);
      timer = setTimeout(onTimeout, ms);
    };
    const noContext = (why: string): HookSocketResult => ({
      kind: 'done',
      stdout: null,
      messages: [`engram hook: no memory context (${why})`],
    });
    const onMessage = (message: unknown) => {
      const reply = message as HookSocketReply;
      if (stage === 'handshake') {
        if (reply.kind !== 'accepted') {
          settle({
            kind: 'direct',
            reason: reply.kind === 'error' ? reply.message : `unexpected ${reply.kind}`,
          });
          return;
        }
        stage = 'working';
        const answerBy = Date.now() + reply.doneMs;
        socket.write(`${JSON.stringify({ kind: 'go' })}\n`);
        // At-least-once: a service that never says the event is durable may have lost it.
        arm(reply.ackMs, () => settle({ kind: 'direct', reason: 'no ack from the service' }));
        acknowledged = () =>
          arm(Math.max(0, answerBy - Date.now()), () =>
            settle(noContext('the service did not answer in time')),
          );
      } else if (stage === 'working' && reply.kind === 'ack') {
        stage = 'acknowledged';
        acknowledged();
      } else if (stage === 'acknowledged' && reply.kind === 'done') {
        settle({ kind: 'done', stdout: reply.stdout, messages: reply.messages });
      }
    };
    const read = lineReader(onMessage);
    arm(handshakeMs, () => settle({ kind: 'direct', reason: 'the service is busy' }));
    socket.on('connect', () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on('data', (chunk: Buffer) => {
      try {
        read(chunk);
      } catch (error) {
        gone(`unreadable answer (${String(error)})`);
      }
    });
    const gone = (why: string) => {
      if (stage === 'acknowledged') settle(noContext(why));
      else settle({ kind: 'direct', reason: why });
    };
    socket.on('error', (error: NodeJS.ErrnoException) => gone(error.code ?? error.message));
    socket.on('close', () => gone('the service closed the connection'));
  });
}
