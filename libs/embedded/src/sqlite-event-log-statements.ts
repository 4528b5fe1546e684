import type { Database } from 'better-sqlite3';
import type { RecordRow, TopicRow } from './sqlite-event-log-records';

// The prepared statements of the embedded event log (sqlite-event-log.ts).

export function prepareStatements(db: Database) {
  return {
    topicByName: db.prepare<[string], TopicRow>(
      'SELECT id, name, partitions, compacted FROM topics WHERE name = ?',
    ),
    allTopics: db.prepare<[], TopicRow>(
      'SELECT id, name, partitions, compacted FROM topics ORDER BY name',
    ),
    insertTopic: db.prepare<[string, number, number, number]>(
      'INSERT INTO topics (name, partitions, compacted, created_at) VALUES (?, ?, ?, ?)',
    ),
    insertPartition: db.prepare<[number, number]>(
      'INSERT INTO partitions (topic_id, partition, next_offset) VALUES (?, ?, 0)',
    ),
    nextOffset: db.prepare<[number, number], { next_offset: number }>(
      'SELECT next_offset FROM partitions WHERE topic_id = ? AND partition = ?',
    ),
    setNextOffset: db.prepare<[number, number, number]>(
      'UPDATE partitions SET next_offset = ? WHERE topic_id = ? AND partition = ?',
    ),
    endOffsets: db.prepare<[number], { partition: number; next_offset: number }>(
      'SELECT partition, next_offset FROM partitions WHERE topic_id = ?',
    ),
    insertRecord: db.prepare<
      [number, number, number, string | null, string | Buffer | null, string | null, number]
    >(
      `INSERT INTO records (topic_id, partition, offset, key, value, headers, timestamp)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    read: db.prepare<[number, number, number, number], RecordRow>(
      `SELECT offset, key, value, headers, timestamp FROM records
       WHERE topic_id = ? AND partition = ? AND offset >= ? ORDER BY offset LIMIT ?`,
    ),
    firstAtTime: db.prepare<[number, number, number], { offset: number | null }>(
      `SELECT MIN(offset) AS offset FROM records
       WHERE topic_id = ? AND partition = ? AND timestamp >= ?`,
    ),
    upsertLatest: db.prepare<[number, number, string, number]>(
      `INSERT INTO compacted_keys (topic_id, partition, key, offset) VALUES (?, ?, ?, ?)
       ON CONFLICT (topic_id, partition, key) DO UPDATE SET offset = excluded.offset`,
    ),
    deleteLatest: db.prepare<[number, number, string]>(
      'DELETE FROM compacted_keys WHERE topic_id = ? AND partition = ? AND key = ?',
    ),
    latestByKey: db.prepare<[number, number], { key: string; value: string | Buffer }>(
      `SELECT k.key, r.value FROM compacted_keys k
       JOIN records r ON r.topic_id = k.topic_id AND r.partition = k.partition AND r.offset = k.offset
       WHERE k.topic_id = ? AND k.partition = ? ORDER BY k.offset`,
    ),
    compact: db.prepare<[number, number]>(
      `DELETE FROM records WHERE topic_id = ?
         AND NOT EXISTS (SELECT 1 FROM compacted_keys k WHERE k.topic_id = records.topic_id
                         AND k.partition = records.partition AND k.offset = records.offset)
         AND NOT (value IS NULL AND timestamp > ?)`,
    ),
    commitOffset: db.prepare<[string, number, number, number, number]>(
      `INSERT INTO consumer_offsets (group_id, topic_id, partition, offset, committed_at)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (group_id, topic_id, partition)
       DO UPDATE SET offset = excluded.offset, committed_at = excluded.committed_at`,
    ),
    committedOffsets: db.prepare<[string, number], { partition: number; offset: number }>(
      'SELECT partition, offset FROM consumer_offsets WHERE group_id = ? AND topic_id = ?',
    ),
  };
}
