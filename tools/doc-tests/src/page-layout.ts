/**
 * Lays a page out in headless Chromium (Debian's `chromium`, installed by .ci/run) at a given
 * width and reports what a reader would trip over: a table cell narrower than one of its words (a
 * word broken because it cannot fit, as `X-Request-Id` in three pieces was), an identifier in
 * `code` broken over lines at all, a code block whose text is cut off behind a scrollbar, and a
 * page wider than the window. A long word broken at a hyphen only because the line was full is
 * ordinary typesetting and passes.
 *
 * Chromium is driven by its command line only (`--dump-dom`): a script appended to a copy of the
 * page measures the laid-out page and writes its findings into the DOM that Chromium prints. No
 * browser automation library is needed for that, and the page under test stays exactly as served.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface LayoutProblem {
  kind: 'broken-word' | 'overflowing-block' | 'page-overflow';
  /** The word, or the start of the block's text. */
  text: string;
  /** The nearest section's id, to find it on the page. */
  where: string;
}

const RESULT_ID = 'doc-tests-layout-result';

/** Runs in the page: measures and writes its findings as JSON into a new element. */
const MEASURE = `
(() => {
  const problems = [];
  const where = (el) => (el.closest('section[id]') || {}).id || '';
  const lineCount = (range) => new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
  // How wide a word is unbroken, in the cell's own font.
  const naturalWidth = (cell, word) => {
    const probe = document.createElement('span');
    probe.style.whiteSpace = 'nowrap';
    probe.style.position = 'absolute';
    probe.style.visibility = 'hidden';
    probe.textContent = word;
    cell.append(probe);
    const width = probe.getBoundingClientRect().width;
    probe.remove();
    return width;
  };
  for (const cell of document.querySelectorAll('td, th')) {
    const style = getComputedStyle(cell);
    const inner = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    for (const code of cell.querySelectorAll('code')) {
      const range = document.createRange();
      range.selectNodeContents(code);
      if (lineCount(range) > 1) problems.push({ kind: 'broken-word', text: code.textContent, where: where(cell) });
    }
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest('code')) continue;
      for (const m of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        if (lineCount(range) > 1 && naturalWidth(cell, m[0]) > inner) {
          problems.push({ kind: 'broken-word', text: m[0], where: where(cell) });
        }
      }
    }
  }
  for (const block of document.querySelectorAll('pre')) {
    if (block.closest('details:not([open])')) continue;
    if (block.scrollWidth > block.clientWidth) {
      problems.push({ kind: 'overflowing-block', text: block.textContent.slice(0, 80), where: where(block) });
    }
  }
  if (document.documentElement.scrollWidth > window.innerWidth) {
    problems.push({ kind: 'page-overflow', text: String(document.documentElement.scrollWidth), where: '' });
  }
  const out = document.createElement('script');
  out.type = 'application/json';
  out.id = '${RESULT_ID}';
  out.textContent = JSON.stringify(problems);
  document.body.append(out);
})();
`;

/** The Chromium binary: CHROMIUM_BIN, else Debian's name for it. */
export const chromiumBinary = () => process.env['CHROMIUM_BIN'] ?? 'chromium';

function run(binary: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${binary} exited ${code}: ${err.slice(-2000)}`));
    });
  });
}

/** What is wrong with `html` laid out `width` pixels wide (empty: nothing). */
export async function layoutProblems(
  html: string,
  options: { width: number; height?: number; timeoutMs?: number },
): Promise<LayoutProblem[]> {
  const dir = await mkdtemp(join(tmpdir(), 'doc-tests-chromium-'));
  try {
    const page = join(dir, 'page.html');
    const measured = html.includes('</body>')
      ? html.replace('</body>', `<script>${MEASURE}</script></body>`)
      : `${html}<script>${MEASURE}</script>`;
    await writeFile(page, measured);
    const dom = await run(
      chromiumBinary(),
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--no-first-run',
        `--user-data-dir=${join(dir, 'profile')}`,
        `--window-size=${options.width},${options.height ?? 900}`,
        '--dump-dom',
        pathToFileURL(page).href,
      ],
      options.timeoutMs ?? 60_000,
    );
    const found = new RegExp(
      `<script type="application/json" id="${RESULT_ID}">(.*?)</script>`,
      's',
    ).exec(dom);
    if (!found?.[1]) throw new Error('the page did not report its layout (did its script run?)');
    return JSON.parse(found[1]) as LayoutProblem[];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
