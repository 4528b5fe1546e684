import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

// `npm run kibana:import` (scripts/kibana-import.mjs) against a fake Kibana that speaks the
// saved-objects import API's wire format: Kibana itself cannot be downloaded here. The fake
// parses the multipart body the way a server does, so a malformed request fails.
const ROOT = join(__dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'kibana-import.mjs');
const OBJECTS = readFileSync(join(ROOT, 'deploy', 'kibana', 'saved-objects.ndjson'), 'utf8');

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  file: { field: string; name: string; type: string; text: string }[];
  otherFields: string[];
}

interface SentObject {
  type: string;
  id: string;
  attributes: { visState?: string };
}

/** The index a Vega visualisation's spec reads. */
function vegaIndex(object: SentObject): string {
  const visState = JSON.parse(object.attributes.visState ?? '{}') as { params: { spec: string } };
  return (JSON.parse(visState.params.spec) as { data: { url: { index: string } } }).data.url.index;
}

interface Reply {
  status: number;
  body: unknown;
}

const OBJECT_COUNT = OBJECTS.trim().split('\n').length;
const OK: Reply = {
  status: 200,
  body: { success: true, successCount: OBJECT_COUNT, successResults: [] },
};

async function parse(method: string, url: string, headers: IncomingHttpHeaders, raw: Buffer) {
  const form = await new Response(raw, {
    headers: { 'content-type': headers['content-type'] ?? '' },
  }).formData();
  const received: Received = { method, url, headers, file: [], otherFields: [] };
  for (const [field, value] of form.entries()) {
    if (typeof value === 'string') received.otherFields.push(field);
    else {
      received.file.push({ field, name: value.name, type: value.type, text: await value.text() });
    }
  }
  return received;
}

function run(env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [SCRIPT],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 },
      (error, out, err) => resolve({ code: error ? Number(error.code ?? 1) : 0, out, err }),
    );
  });
}

describe('npm run kibana:import against a fake Kibana', () => {
  let server: Server;
  let url: string;
  let requests: Received[];
  let reply: Reply;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        parse(req.method ?? '', req.url ?? '', req.headers, Buffer.concat(chunks))
          .then((received) => {
            requests.push(received);
            res.writeHead(reply.status, { 'content-type': 'application/json' });
            res.end(JSON.stringify(reply.body));
          })
          .catch((error: Error) => {
            res.writeHead(415, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ statusCode: 415, message: error.message }));
          });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    requests = [];
    reply = OK;
  });

  it('should post the saved objects as one multipart `file` part, with kbn-xsrf and overwrite', async () => {
    const result = await run({ KIBANA_URL: `${url}/` });
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toContain(`imported ${OBJECT_COUNT} saved objects into ${url}/`);
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/api/saved_objects/_import?overwrite=true');
    expect(request.headers['kbn-xsrf']).toBeTruthy();
    expect(request.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(request.headers.authorization).toBeUndefined();
    expect(request.otherFields).toEqual([]);
    expect(request.file).toEqual([
      { field: 'file', name: 'saved-objects.ndjson', type: 'application/ndjson', text: OBJECTS },
    ]);
  });

  it('should authenticate with an API key, or basic auth, and import into a space', async () => {
    await run({ KIBANA_URL: url, KIBANA_API_KEY: 'a2V5OnNlY3JldA==', KIBANA_SPACE: 'ops team' });
    await run({ KIBANA_URL: url, KIBANA_USERNAME: 'elastic', KIBANA_PASSWORD: 'changeme' });
    expect(requests.map((r) => [r.url, r.headers.authorization])).toEqual([
      ['/s/ops%20team/api/saved_objects/_import?overwrite=true', 'ApiKey a2V5OnNlY3JldA=='],
      [
        '/api/saved_objects/_import?overwrite=true',
        `Basic ${Buffer.from('elastic:changeme').toString('base64')}`,
      ],
    ]);
  });

  it("should point the objects at the services' prefixed indices under ENGRAM_TOPIC_PREFIX", async () => {
    expect((await run({ KIBANA_URL: url, ENGRAM_TOPIC_PREFIX: 'Team1.' })).code).toBe(0);
    const sent = requests[0].file[0].text.trim().split('\n');
    const objects = sent.map((line) => JSON.parse(line) as SentObject);
    expect(objects.filter((o) => o.type === 'index-pattern').map((o) => o.id)).toEqual([
      'team1.engram-memories',
      'team1.engram-episodes',
      'team1.engram-turns',
      'team1.engram-memory-access',
    ]);
    // Every index a visualisation reads is prefixed; the objects' own ids are not index names.
    const indices = objects.filter((o) => o.type === 'visualization').map(vegaIndex);
    expect(indices).toHaveLength(8);
    expect(indices.every((index) => index.startsWith('team1.engram-'))).toBe(true);
    expect(objects.map((o) => o.id)).toContain('engram-memories-by-type');
  });

  it('should exit 1 and name every object Kibana did not import', async () => {
    reply = {
      status: 200,
      body: {
        success: false,
        successCount: 14,
        errors: [
          {
            id: 'engram-dashboard-episodes',
            type: 'dashboard',
            meta: { title: 'Engram: episodes' },
            error: {
              type: 'missing_references',
              references: [{ type: 'visualization', id: 'engram-episodes-per-day' }],
            },
          },
          {
            id: 'engram-memories',
            type: 'index-pattern',
            meta: {},
            error: { type: 'unknown', message: 'boom', statusCode: 500 },
          },
        ],
      },
    };
    const result = await run({ KIBANA_URL: url });
    expect(result.code).toBe(1);
    expect(result.err).toContain(
      'not imported: dashboard/engram-dashboard-episodes ("Engram: episodes"): missing_references — missing visualization/engram-episodes-per-day',
    );
    expect(result.err).toContain('not imported: index-pattern/engram-memories: unknown — boom');
  });

  it('should exit 1 with the reason when Kibana refuses the request', async () => {
    reply = { status: 401, body: { statusCode: 401, message: 'unauthorized' } };
    const result = await run({ KIBANA_URL: url });
    expect(result.code).toBe(1);
    expect(result.err).toContain('Kibana refused the import (HTTP 401)');
  });

  it('should say clearly when Kibana is not reachable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const result = await run({ KIBANA_URL: `http://127.0.0.1:${port}` });
    expect(result.code).toBe(1);
    expect(result.err).toContain(
      `Kibana is not reachable at http://127.0.0.1:${port} (ECONNREFUSED)`,
    );
    expect(result.err).toContain('set KIBANA_URL');
  });
});
