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

import { WAIT, assert, baseURL, launchBrowser, logger, pickName, runMain, shot, takeSeat, watchErrors } from './lib.mjs';

const base = baseURL('e2e adventures:');
const { log, step, counts } = logger('e2e adventures:');

async function main() {
  const browser = await launchBrowser();
  const errors = [];
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    // The editor's checks answer 400 for a source with problems.
    watchErrors(page, errors, '', /status of 400/);
    const title = `Cellar ${Date.now().toString(36)}`;

    await step('pick a name and open the editor', async () => {
      await pickName(page, base, 'Author');
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
      await shot(page, 'adventure-editor-problem');
      await page.fill('#source', good);
      await page.waitForFunction(() => document.querySelector('#status')?.textContent.startsWith('No problems'), null, { timeout: WAIT });
      assert((await page.$$('#problems li')).length === 0, 'no problem left once fixed');
    });

    await step('"Play it" opens a playable table of the adventure', async () => {
      await Promise.all([page.waitForURL(/\/tables\/[^/?#]+/, { timeout: WAIT }), page.click('#play')]);
      await takeSeat(page, 'Bree');
      await page.waitForFunction(() => { const b = document.querySelector('#action-send'); return b && !b.disabled; }, null, { timeout: WAIT });
      await page.fill('#action-text', 'I climb down the trapdoor');
      await page.click('#action-send');
      await page.waitForFunction(() => document.querySelector('#location-name')?.textContent.includes('The Cellar'), null, { timeout: WAIT });
      await shot(page, 'adventure-played');
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
      await takeSeat(page, 'Nim', 'rogue');
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
      await shot(page, 'adventure-shop');
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

runMain(log, counts, main);
