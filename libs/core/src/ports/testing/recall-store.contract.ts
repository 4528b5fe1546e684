// The RecallStore contract: one suite, run against every adapter (SQLite FTS5 + exact kNN in the
// unit tier, Elasticsearch in the integration tier). Documents go in through the real indexer
// (the fixture's), with the deterministic "concept" embedder of contract-embedder.ts, so a
// paraphrase with no word in common is near in vector space and far lexically. The cases live in
// recall-store-contract.*.ts by theme; each uses a project of its own. Test support only.
import { afterAll, beforeAll, describe } from 'vitest';
import { candidateSearchCases } from './recall-store-contract.candidates';
import { recallStoreHarness, type RecallStoreFixture } from './recall-store-contract.harness';
import { storeListingCases } from './recall-store-contract.listings';
import { storeWriteCases } from './recall-store-contract.writes';

// What the adapters' suites import with the contract.
export { CONTRACT_MODEL, contractEmbedder, type ContractEmbedder } from './contract-embedder';
export type {
  ContractIndexer,
  ContractItem,
  RecallStoreFixture,
} from './recall-store-contract.harness';

/** Runs the RecallStore contract against the store a fixture provides. */
export function describeRecallStoreContract(
  name: string,
  makeFixture: () => Promise<RecallStoreFixture>,
): void {
  describe(`RecallStore contract: ${name}`, () => {
    let fx: RecallStoreFixture | undefined;
    beforeAll(async () => {
      fx = await makeFixture();
    });
    afterAll(async () => {
      await fx?.close();
    });
    const harness = recallStoreHarness(() => fx!);
    candidateSearchCases(harness);
    storeWriteCases(harness);
    storeListingCases(harness);
  });
}
