import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';

/**
 * Gives partition p of every subscribed topic to the same member (like Kafka's RangeAssignor for
 * equally partitioned topics). Stateful stages need it: prompts, tool calls, lifecycle events and
 * the state changelog of one session are keyed by sessionId, so they share a partition number,
 * and the member that owns that number owns the session. KafkaJS's only built-in assigner
 * (round robin) spreads the partitions of different topics independently.
 */
export const coPartitionedAssigner: PartitionAssigner = ({ cluster }) => ({
  name: 'EngramCoPartitionedAssigner',
  version: 0,
  assign({ members, topics }) {
    const memberIds = members.map(({ memberId }) => memberId).sort();
    const assignment = new Map<string, Record<string, number[]>>(memberIds.map((id) => [id, {}]));
    for (const topic of topics) {
      for (const { partitionId } of cluster.findTopicPartitionMetadata(topic)) {
        const owner = assignment.get(memberIds[partitionId % memberIds.length])!;
        (owner[topic] ??= []).push(partitionId);
      }
    }
    return Promise.resolve(
      memberIds.map((memberId) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({
          version: 0,
          assignment: assignment.get(memberId)!,
          userData: Buffer.alloc(0),
        }),
      })),
    );
  },
  protocol({ topics }) {
    return {
      name: 'EngramCoPartitionedAssigner',
      metadata: AssignerProtocol.MemberMetadata.encode({
        version: 0,
        topics,
        userData: Buffer.alloc(0),
      }),
    };
  },
});
