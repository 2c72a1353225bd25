// Browser test of the operator's console: sign in with the admin token the
// server printed, see a live table (a spectator is watching it), pause and
// resume it from its page, and screenshot every admin page (desktop 1280
// wide; the overview also at 390x844).
//
// Usage: TAVERN_URL=http://127.0.0.1:18089 node e2e/admin.mjs
// (e2e/run.sh runs it after run.mjs.) The admin token comes from
// TAVERN_ADMIN_TOKEN or from the "Admin: …?token=" line the server printed
// into E2E_OUT/server.log. Env: CHROMIUM (default /usr/bin/chromium),
// E2E_OUT (screenshots, default build/e2e).

import { WAIT, adminToken, assert, baseURL, client, launchBrowser, logger, runMain, seatedTable, shot, watchErrors } from './lib.mjs';

const base = baseURL('e2e admin:');
const { log, step, counts } = logger('e2e admin:');
const api = client(base);

async function main() {
  const token = await adminToken();
  const browser = await launchBrowser();
  const errors = [];
  try {
    // A live table: one player seated and acting, one spectator watching.
    const { table } = await seatedTable(api, 'Operator Test', { name: 'Admin e2e table', seats: 2 }, { name: 'Wren' });

    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const watcher = await (await browser.newContext()).newPage();
    await watcher.goto(`${base}/tables/${table.id}`);

    const page = await ctx.newPage();
    watchErrors(page, errors);
    page.on('dialog', (d) => d.accept());

    await step('the dashboard asks for the token', async () => {
      const r = await page.goto(`${base}/admin`);
      assert(r.status() === 401, `GET /admin without the cookie = ${r.status()}`);
      await page.waitForSelector('#admin-token');
      await shot(page, 'admin-signin', false);
      errors.length = 0; // the 401 itself is logged by the browser
    });

    await step('signing in opens the overview', async () => {
      await page.fill('#admin-token', token);
      await Promise.all([page.waitForNavigation(), page.click('#signin-submit')]);
      await page.waitForSelector('#overview-stats');
      const tables = Number(await page.textContent('#stat-tables').then((t) => t.trim().split(/\s/)[0]));
      assert(tables >= 1, `tables stat ${tables}`);
      await page.waitForFunction(() => [...document.images].every((i) => i.complete && i.naturalWidth > 0));
      await shot(page, 'admin-overview');
    });

    await step('the tables page lists the live table', async () => {
      await page.click('.admin-nav >> text=Tables');
      const row = page.locator(`tr[data-table-id="${table.id}"]`);
      await row.waitFor({ timeout: WAIT });
      const spect = await row.locator('td').nth(6).textContent();
      assert(Number(spect.trim()) >= 1, `spectators ${spect}`);
      await shot(page, 'admin-tables');
    });

    await step('pause and resume the table', async () => {
      await page.click(`tr[data-table-id="${table.id}"] a`);
      await page.waitForSelector('#moderation');
      await Promise.all([page.waitForNavigation(), page.click('#moderation button[data-action="Pause"]')]);
      await page.waitForSelector('#paused-badge');
      // The spectator's page sees the audit event.
      await watcher.waitForFunction(() => document.body.textContent.includes('paused the table'), null, { timeout: WAIT });
      const snap = await api('GET', `/api/tables/${table.id}`);
      assert(snap.paused === true, 'snapshot not paused');
      await shot(page, 'admin-table-paused');
      await Promise.all([page.waitForNavigation(), page.click('#moderation button[data-action="Resume"]')]);
      await page.waitForSelector('#moderation button[data-action="Pause"]');
      const again = await api('GET', `/api/tables/${table.id}`);
      assert(!again.paused, 'snapshot still paused');
      // The event log is written by the players' renderer (eventline.js).
      const cells = await page.$$eval('#admin-events td[data-event]', (tds) =>
        tds.map((td) => ({ rendered: td.title !== '', text: td.textContent.trim() })));
      assert(cells.some((c) => c.rendered), 'no event line rendered by eventline.js');
      const raw = cells.filter((c) => c.rendered && c.text.startsWith('{'));
      assert(raw.length === 0, `raw JSON in the event log: ${raw.map((c) => c.text).join(' | ')}`);
      await shot(page, 'admin-table');
    });

    await step('the LLM page', async () => {
      await page.click('.admin-nav >> text=LLM');
      await page.waitForSelector('#by-model');
      await shot(page, 'admin-llm');
    });

    await step('the overview on a phone', async () => {
      const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
      await phone.addCookies((await ctx.cookies()).filter((c) => c.name === 'tavern_admin'));
      const p = await phone.newPage();
      await p.goto(`${base}/admin`);
      await p.waitForSelector('#overview-stats');
      await p.waitForFunction(() => [...document.images].every((i) => i.complete && i.naturalWidth > 0));
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert(overflow <= 1, `the overview scrolls sideways by ${overflow}px on a phone`);
      await shot(p, 'admin-overview-phone');
    });

    assert(errors.length === 0, 'console errors: ' + errors.join('; '));
  } finally {
    await browser.close();
  }
  log('passed');
}

runMain(log, counts, main);
