import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateOrganisation } from '../../apps/engram/src/commands/bench-friction-generate';

// The friction report's HTML page in a real headless browser (issue #21): the compiled CLI's
// `engram friction-report` writes it from a generated organisation's data directory, Chromium
// opens it offline (file://, every other request refused), and the test asserts the three SVG
// charts drew — shapes with a size, pixels that are not background — with no console or page
// errors. Without Chromium the test fails: the page is only checked when a browser renders it.

const ROOT = join(__dirname, '..', '..');
const ENGRAM = join(ROOT, 'bin', 'engram');
const CHARTS = [
  'Friction over time',
  'Top clusters (severity)',
  'Estimated minutes lost by project',
];

/** Debian's Chromium (apt-get install chromium), or the browser CHROME_PATH names. */
function chromiumPath(): string {
  const named = process.env.CHROME_PATH ?? process.env.PUPPETEER_EXECUTABLE_PATH;
  if (named !== undefined && named !== '') {
    if (!existsSync(named)) throw new Error(`CHROME_PATH=${named}: no such file`);
    return named;
  }
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '');
  for (const name of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']) {
    for (const dir of dirs) {
      if (existsSync(join(dir, name))) return join(dir, name);
    }
  }
  throw new Error(
    'no Chromium found (looked for chromium, chromium-browser, google-chrome on PATH and ' +
      'CHROME_PATH): install it with `apt-get install -y chromium` (.ci/run does) — the ' +
      "friction report's HTML page is checked only in a real browser",
  );
}

/**
 * In the page: per figure, its caption, how many SVG shapes have a non-zero size, and the texts
 * (labels, legend) that run out of the chart's box, where the browser clips them.
 */
const CHART_SHAPES = `[...document.querySelectorAll('figure')].map((figure) => {
  const svg = figure.querySelector('svg');
  const width = svg.viewBox.baseVal.width, height = svg.viewBox.baseVal.height;
  return {
    caption: figure.querySelector('figcaption')?.textContent ?? '',
    drawn: [...svg.querySelectorAll('rect, path, line, circle')].filter(
      (shape) => { const box = shape.getBBox(); return box.width > 0 && box.height > 0; },
    ).length,
    clipped: [...svg.querySelectorAll('text')].filter((text) => {
      const box = text.getBBox();
      return box.x < 0 || box.y < 0 || box.x + box.width > width || box.y + box.height > height;
    }).map((text) => text.textContent),
  };
})`;

/**
 * In the page: the share of a PNG's pixels (a chart's screenshot, base64) that are not the
 * white background, decoded on a canvas.
 */
const INKED_SHARE = `async (data) => {
  const image = new Image();
  image.src = 'data:image/png;base64,' + data;
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.width;
  canvas.height = image.height;
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
  let inked = 0;
  for (let at = 0; at < pixels.length; at += 4) {
    if (pixels[at] < 235 || pixels[at + 1] < 235 || pixels[at + 2] < 235) inked += 1;
  }
  return inked / (pixels.length / 4);
}`;

const MIN_INKED_SHARE = 0.02;

interface ChartShapes {
  caption: string;
  /** Bars and paths with a non-zero width and height. */
  drawn: number;
  clipped: string[];
}

describe('friction report HTML in headless Chromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-friction-html-'));
  const out = join(dir, 'report');
  let browser: Browser | undefined;

  beforeAll(() => {
    // Two weeks of a 50-developer organisation with the bench's planted frictions.
    generateOrganisation(dir, {
      developers: 50,
      weeks: 2,
      sessionsPerDay: 2,
      eventsPerSession: 40,
    });
    execFileSync(
      process.execPath,
      [
        ENGRAM,
        'friction-report',
        '--data-dir',
        dir,
        '--until',
        '2026-10-17T00:00:00Z',
        '--window',
        '2w',
        '--format',
        'html,md,json',
        '--out',
        out,
        '--no-progress',
      ],
      { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], timeout: 120_000 },
    );
  });

  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should write the three formats, every proposal with evidence', () => {
    for (const ext of ['html', 'md', 'json']) {
      expect(statSync(`${out}.${ext}`).size).toBeGreaterThan(0);
    }
    const report = JSON.parse(readFileSync(`${out}.json`, 'utf8')) as {
      proposals: { kind: string; evidence: { eventIds: string[] } }[];
    };
    expect(report.proposals.length).toBeGreaterThan(0);
    expect(report.proposals.every((p) => p.evidence.eventIds.length > 0)).toBe(true);
  });

  it('should draw every chart offline, with no console or page errors', async () => {
    browser = await puppeteer.launch({
      executablePath: chromiumPath(),
      headless: true,
      // Root in a container has no user namespace for Chromium's sandbox.
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    const refused: string[] = [];
    const errors: string[] = [];
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      const url = request.url();
      if (url.startsWith('file:') || url.startsWith('data:')) void request.continue();
      else {
        refused.push(url);
        void request.abort('blockedbyclient');
      }
    });
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => errors.push(`page: ${String(error)}`));

    await page.goto(pathToFileURL(`${out}.html`).href, { waitUntil: 'load' });

    const charts = (await page.evaluate(CHART_SHAPES)) as ChartShapes[];
    expect(charts.map((chart) => chart.caption)).toEqual(CHARTS);
    expect(charts.filter((chart) => chart.drawn === 0)).toEqual([]);
    expect(charts.flatMap((chart) => chart.clipped)).toEqual([]);

    const screenshot = await page.screenshot({ path: join(dir, 'friction.png'), fullPage: true });
    expect(screenshot.length).toBeGreaterThan(10_000);
    // Each chart's own pixels: a figure screenshot decoded on a canvas, counted where it is not
    // the page's white background.
    const figures = await page.$$('figure svg');
    expect(figures).toHaveLength(CHARTS.length);
    const inked: { chart: string; share: number }[] = [];
    for (const [i, figure] of figures.entries()) {
      const png = await figure.screenshot({ encoding: 'base64' });
      const share = (await page.evaluate(`(${INKED_SHARE})(${JSON.stringify(png)})`)) as number;
      inked.push({ chart: CHARTS[i], share });
    }
    // Bars take a visible share of each chart, far more than its axis labels alone.
    expect(inked.filter(({ share }) => share < MIN_INKED_SHARE)).toEqual([]);

    expect(refused).toEqual([]);
    expect(errors).toEqual([]);
  });
});
