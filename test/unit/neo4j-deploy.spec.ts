import { ENGRAM_GRAPH_SCHEMA } from '@engram/neo4j';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const DEPLOY = join(__dirname, '..', '..', 'deploy', 'neo4j');

/** The statements of a .cypher file: `//` comment lines dropped, split on `;`, whitespace folded. */
function cypherStatements(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => !line.trim().startsWith('//'))
    .join('\n')
    .split(';')
    .map((statement) => statement.replace(/\s+/g, ' ').trim())
    .filter((statement) => statement !== '');
}

describe('deploy/neo4j', () => {
  it('should hold exactly the schema the services apply (schema-setup.ts)', () => {
    const file = cypherStatements(readFileSync(join(DEPLOY, 'constraints.cypher'), 'utf8'));
    expect(file).toEqual(ENGRAM_GRAPH_SCHEMA.map((s) => s.replace(/\s+/g, ' ').trim()));
    expect(file.every((s) => s.includes('IF NOT EXISTS'))).toBe(true);
  });

  it('should show every saved query in the Browser guide, as saved', () => {
    const guide = readFileSync(join(DEPLOY, 'browser-guide.html'), 'utf8').replace(/\s+/g, ' ');
    const queries = readdirSync(join(DEPLOY, 'queries')).filter((f) => f.endsWith('.cypher'));
    expect(queries.length).toBeGreaterThanOrEqual(4);
    for (const name of queries) {
      const statements = cypherStatements(readFileSync(join(DEPLOY, 'queries', name), 'utf8'));
      expect(statements.length === 1 ? name : `${name}: ${statements.length} statements`).toBe(
        name,
      );
      expect(guide.includes(statements[0]) ? name : `${name} is not in the guide`).toBe(name);
    }
  });
});
