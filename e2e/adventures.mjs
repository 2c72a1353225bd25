// Browser test of the adventure editor: pick a name, open /adventures/new
// (the small example of docs/adventures.md), type a mistake (an exit to a
// location that does not exist) and see its problem on the right line,
// beside the text and in the gutter; fix it, press "Play it", take a seat
// at the table it makes and play a move into the new adventure. Then the
// adventures page lists it after the built-in ones, with its table; the
// lobby makes a table of another listed adventure, whose shop panel shows
// prices and buys bread at its price.
//
// Usage: TAVERN_URL=http://127.0.0.1:18089 node e2e/adventures.mjs
// (e2e/run.sh runs it.) Env: CHROMIUM (default /usr/bin/chromium),
// E2E_OUT (screenshots, default build/e2e).

import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium } from 'playwright-core';

const base = (process.env.TAVERN_URL || '').replace(/\/$/, '');
if (!base) {
  console.error('e2e adventures: set TAVERN_URL');
  process.exit(2);
}
const outDir = process.env.E2E_OUT || 'build/e2e';
const WAIT = 20_000;

function log(...a) {
  console.log('e2e adventures:', ...a);
}

function assert(cond, msg) {
  if (!cond) throw new Error('assertion failed: ' + msg);
}

async function step(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (err) {
    log(`FAIL ${name}: ${err && err.stack ? err.stack : err}`);
    throw err;
  }
}

async function main() {
  await mkdir(outDir, { recursive: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  const errors = [];
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.on('console', (m) => m.type() === 'error' && !/status of 400/.test(m.text()) && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(String(e)));
    const title = `Cellar ${Date.now().toString(36)}`;

    await step('pick a name and open the editor', async () => {
      await page.goto(base + '/');
      await page.fill('#player-name', 'Author');
      await Promise.all([page.waitForEvent('load'), page.click('#player-submit')]);
      await page.waitForSelector('#player-name-current', { timeout: WAIT });
      await page.goto(base + '/adventures/new');
      await page.waitForFunction(() => document.querySelector('#status')?.textContent.startsWith('No problems'), null, { timeout: WAIT });
    });

    let good = '';
    await step('a mistake typed shows its problem on its line', async () => {
      good = (await page.inputValue('#source')).replace(/^name: .*$/m, `name: ${title}`).replace(/^id: .*$/m, `id: cellar-${Date.now().toString(36)}`);
      const lines = good.split('\n');
      const n = lines.findIndex((l) => l.includes('{to: cellar,')) + 1;
      assert(n > 0, 'the example has an exit to the cellar');
      await page.fill('#source', good.replace('{to: cellar,', '{to: attic,'));
      const li = `#problems li[data-line="${n}"]`;
      await page.waitForSelector(li, { timeout: WAIT });
      const text = await page.textContent(li);
      assert(text.includes('"attic"') && text.includes(`Line ${n}`), `the problem on line ${n}: ${text}`);
      const marked = await page.$$eval('#gutter span.bad', (s) => s.map((x) => x.dataset.line));
      assert(marked.length === 1 && marked[0] === String(n), `the gutter marks line ${n}: ${marked}`);
      await page.screenshot({ path: path.join(outDir, 'adventure-editor-problem.png'), fullPage: true });
      await page.fill('#source', good);
      await page.waitForFunction(() => document.querySelector('#status')?.textContent.startsWith('No problems'), null, { timeout: WAIT });
      assert((await page.$$('#problems li')).length === 0, 'no problem left once fixed');
    });

    await step('"Play it" opens a playable table of the adventure', async () => {
      await Promise.all([page.waitForURL(/\/tables\/[^/?#]+/, { timeout: WAIT }), page.click('#play')]);
      await page.waitForSelector('#seat-form', { timeout: WAIT });
      await page.fill('#seat-name', 'Bree');
      await Promise.all([page.waitForEvent('load'), page.click('#seat-submit')]);
      await page.waitForSelector('#sheet', { timeout: WAIT });
      await page.waitForFunction(() => document.querySelector('#conn')?.dataset.state === 'open', null, { timeout: WAIT });
      await page.waitForFunction(() => { const b = document.querySelector('#action-send'); return b && !b.disabled; }, null, { timeout: WAIT });
      await page.fill('#action-text', 'I climb down the trapdoor');
      await page.click('#action-send');
      await page.waitForFunction(() => document.querySelector('#location-name')?.textContent.includes('The Cellar'), null, { timeout: WAIT });
      await page.screenshot({ path: path.join(outDir, 'adventure-played.png'), fullPage: true });
    });

    await step('the adventures page lists it after the built-in ones, with its table', async () => {
      await page.goto(base + '/adventures');
      const rows = await page.$$eval('#adventures tbody tr', (rs) => rs.map((r) => ({ text: r.textContent, tables: r.querySelector('.a-tables').textContent.trim() })));
      const i = rows.findIndex((r) => r.text.includes(title));
      assert(i > 0 && rows[0].text.includes('built in'), `built in first, then ours: ${JSON.stringify(rows.map((r) => r.text.slice(0, 40)))}`);
      assert(rows[i].tables === '1', `one table played it: ${rows[i].tables}`);
    });
    await step('the lobby makes a table of any listed adventure; its shop panel buys at the stated price', async () => {
      await page.goto(base + '/?adventure=brackwater#create-form');
      assert((await page.inputValue('#table-adventure')) === 'brackwater', 'the choice from the adventures page is picked');
      await page.fill('#table-name', 'Salt and lies');
      await Promise.all([page.waitForURL(/\/tables\/[^/?#]+/, { timeout: WAIT }), page.click('#create-submit')]);
      await page.waitForSelector('#seat-form', { timeout: WAIT });
      await page.fill('#seat-name', 'Nim');
      await page.selectOption('#seat-class', 'rogue');
      await Promise.all([page.waitForEvent('load'), page.click('#seat-submit')]);
      await page.waitForFunction(() => document.querySelector('#conn')?.dataset.state === 'open', null, { timeout: WAIT });
      assert(await page.$eval('#shop', (e) => e.hidden), 'no shop panel on the quay');
      const send = async (text) => {
        await page.waitForFunction(() => { const b = document.querySelector('#action-send'); return b && !b.disabled; }, null, { timeout: WAIT });
        await page.fill('#action-text', text);
        await page.click('#action-send');
      };
      await send('I go to the Lantern Market');
      await page.waitForFunction(() => !document.querySelector('#shop').hidden, null, { timeout: WAIT });
      const shop = await page.textContent('#shop');
      assert(shop.includes("Pell's chandlery") && shop.includes('25 gold') && shop.includes('pays 50%'), `the shop panel: ${shop}`);
      await page.screenshot({ path: path.join(outDir, 'adventure-shop.png'), fullPage: true });
      const table = new URL(page.url()).pathname.split('/')[2];
      const gold = () => page.evaluate(async (id) => (await (await fetch(`/api/tables/${id}`)).json()).party[0].gold, table);
      const before = await gold();
      await page.waitForFunction(() => { const b = document.querySelector('#action-send'); return b && !b.disabled; }, null, { timeout: WAIT });
      await page.click('#shop .stock button[data-fill^="buy Bread"]');
      assert((await page.inputValue('#action-text')).startsWith('buy Bread from Pell'), 'the chip fills the action box');
      await page.click('#action-send');
      for (let i = 0; (await gold()) !== before - 1; i++) {
        assert(i < 100, `bread bought for 1 gold: ${before} -> ${await gold()}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      await page.waitForFunction(() => /Bread\s*×2/.test(document.querySelector("#shop").textContent), null, { timeout: WAIT });
    });
    assert(errors.length === 0, `no console errors: ${errors.join('; ')}`);
  } finally {
    await browser.close();
  }
}

main().catch(() => process.exit(1));
