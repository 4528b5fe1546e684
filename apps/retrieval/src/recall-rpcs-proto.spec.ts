import { describe, expect, it } from 'vitest';
import { recallRequestAsGiven as given } from '../../../libs/grpc/src/testing/received-message';
import {
  buildContextInput,
  buildContextResponse,
  contextItemKindToEnum,
  episodeSequenceInput,
  injectForFileInput,
} from './recall-rpcs-proto';
import { rememberInput } from './remember.grpc.controller';

describe('recall rpcs ⇄ proto messages', () => {
  it('should take the tenant from the token and leave unset numbers and enums to the defaults', () => {
    expect(
      injectForFileInput(
        given('InjectForFile', {
          scope: { tenantId: 'ignored', projectId: 'p' },
          filePath: 'a.ts',
          phase: 'UNIVERSAL_PHASE_UNSPECIFIED',
        }),
        'acme',
      ),
    ).toEqual({
      tenantId: 'acme',
      projectId: 'p',
      filePath: 'a.ts',
      toolName: '',
      phase: undefined,
      limit: 0,
      sessionId: '',
    });
    expect(
      buildContextInput(
        given('BuildContext', { sessionId: 's', phase: 'UNIVERSAL_PHASE_VALIDATE' }),
        'acme',
      ),
    ).toEqual({
      tenantId: 'acme',
      projectId: '',
      sessionId: 's',
      query: '',
      phase: 'validate',
      tokenBudget: 0,
    });
    expect(episodeSequenceInput(given('ReplayTopic', { topic: 't' }), 'acme')).toMatchObject({
      limit: 0,
      minRelevance: 0,
    });
    expect(
      rememberInput(given('Remember', { text: 'x', relatedFiles: ['a'] }), 'acme'),
    ).toMatchObject({
      tenantId: 'acme',
      agentId: '',
      userId: '',
      type: '',
      relatedFiles: ['a'],
    });
  });

  it('should name context item kinds as the proto enum does, and give unscored items no scores', () => {
    expect(contextItemKindToEnum('cross_thread_episode')).toBe(
      'CONTEXT_ITEM_KIND_CROSS_THREAD_EPISODE',
    );
    const provenance = {
      tenantId: 'acme',
      projectId: 'p',
      sessionIds: ['s'],
      episodeIds: [],
      promptIds: [1],
      eventIds: ['e'],
      memoryId: null,
      commitSha: null,
    };
    const response = buildContextResponse({
      items: [
        {
          citationId: 'turn-e',
          kind: 'current_thread',
          text: 'User: hi',
          tokens: 5,
          score: null,
          provenance,
          clipped: false,
        },
      ],
      rendered: '## Current thread\n[turn-e] User: hi',
      tokensUsed: 10,
      tokenBudget: 2000,
      truncated: false,
      omitted: [],
      threadId: 't',
    });
    expect(response.items[0]).toMatchObject({
      kind: 'CONTEXT_ITEM_KIND_CURRENT_THREAD',
      scores: null,
      provenance: { memoryId: '', commitSha: '' },
    });
    expect(response).toMatchObject({ tokensUsed: 10, threadId: 't', truncated: false });
  });
});
