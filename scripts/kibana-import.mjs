// `npm run kibana:import`: loads deploy/kibana/saved-objects.ndjson (data views and dashboards over
// the engram-* indices) into a running Kibana 8 through its saved-objects import API
// (`POST /api/saved_objects/_import?overwrite=true`, multipart with one `file` part).
//
// Environment:
//   KIBANA_URL            default http://localhost:5601 (docker-compose.yml's Kibana)
//   KIBANA_API_KEY        sent as `Authorization: ApiKey …`, or
//   KIBANA_USERNAME / KIBANA_PASSWORD   basic auth
//   KIBANA_SPACE          import into that space instead of the default one
//   ENGRAM_TOPIC_PREFIX   the services' index prefix (they name indices `<prefix>engram-…`):
//                         the objects are rewritten to read those indices
//   KIBANA_OBJECTS        another ndjson file to import
//
// Kibana answers 200 even when objects fail (`success: false`, `errors: […]`): every such error
// is printed and the script exits 1, so a half-imported dashboard never passes as done.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const DEFAULT_OBJECTS = join(here, '..', 'deploy', 'kibana', 'saved-objects.ndjson');
export const DEFAULT_KIBANA_URL = 'http://localhost:5601';

/** The services' index base names (libs/elasticsearch retrieval-indices.ts). */
const INDEX_NAME = /(?<![\w.-])engram-(memories|episodes|turns|memory-access)(?![\w-])/g;

/** The objects with every index name under the services' prefix (lowercased, as they do). */
export function withIndexPrefix(ndjson, prefix) {
  if (!prefix) return ndjson;
  const lower = prefix.toLowerCase();
  return ndjson.replace(INDEX_NAME, (name) => `${lower}${name}`);
}

/** The request's headers: Kibana refuses writes without `kbn-xsrf`. */
export function kibanaHeaders(env) {
  const headers = { 'kbn-xsrf': 'engram-kibana-import' };
  if (env.KIBANA_API_KEY) headers.authorization = `ApiKey ${env.KIBANA_API_KEY}`;
  else if (env.KIBANA_USERNAME) {
    const basic = Buffer.from(`${env.KIBANA_USERNAME}:${env.KIBANA_PASSWORD ?? ''}`);
    headers.authorization = `Basic ${basic.toString('base64')}`;
  }
  return headers;
}

export function importUrl(kibanaUrl, space) {
  const base = kibanaUrl.replace(/\/+$/, '');
  const spacePath = space ? `/s/${encodeURIComponent(space)}` : '';
  return `${base}${spacePath}/api/saved_objects/_import?overwrite=true`;
}

function describeImportError(error) {
  const what = `${error.type}/${error.id}${error.meta?.title ? ` ("${error.meta.title}")` : ''}`;
  const why = error.error?.type ?? 'unknown';
  const missing = (error.error?.references ?? []).map((ref) => `${ref.type}/${ref.id}`);
  const detail = error.error?.message ?? (missing.length ? `missing ${missing.join(', ')}` : '');
  return `${what}: ${why}${detail ? ` — ${detail}` : ''}`;
}

/**
 * Posts the objects; resolves to `{ successCount, problems }`, where `problems` lists every object
 * Kibana did not import (empty when all were). Throws when Kibana cannot be reached or refuses
 * the request as a whole.
 */
export async function importSavedObjects({ kibanaUrl, ndjson, env = {}, space }) {
  const form = new FormData();
  form.append('file', new Blob([ndjson], { type: 'application/ndjson' }), 'saved-objects.ndjson');
  const url = importUrl(kibanaUrl, space);
  let response;
  try {
    response = await fetch(url, { method: 'POST', headers: kibanaHeaders(env), body: form });
  } catch (error) {
    throw new Error(
      `Kibana is not reachable at ${kibanaUrl} (${error.cause?.code ?? error.message}): start it (docker compose up -d kibana) or set KIBANA_URL`,
      { cause: error },
    );
  }
  const text = await response.text();
  if (!response.ok) {
    throw new Error(`Kibana refused the import (HTTP ${response.status}): ${text.slice(0, 500)}`);
  }
  const body = JSON.parse(text);
  const problems = (body.errors ?? []).map(describeImportError);
  if (body.success === false && problems.length === 0)
    problems.push('Kibana reported success: false');
  return { successCount: body.successCount ?? 0, problems };
}

async function main(env) {
  const kibanaUrl = env.KIBANA_URL || DEFAULT_KIBANA_URL;
  const file = env.KIBANA_OBJECTS || DEFAULT_OBJECTS;
  const ndjson = withIndexPrefix(readFileSync(file, 'utf8'), env.ENGRAM_TOPIC_PREFIX);
  const { successCount, problems } = await importSavedObjects({
    kibanaUrl,
    ndjson,
    env,
    space: env.KIBANA_SPACE,
  });
  for (const problem of problems) console.error(`not imported: ${problem}`);
  console.log(`imported ${successCount} saved objects into ${kibanaUrl}`);
  return problems.length === 0 ? 0 : 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.env).then(
    (code) => process.exit(code),
    (error) => {
      console.error(error.message);
      process.exit(1);
    },
  );
}
