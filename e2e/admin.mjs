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

import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { chromium } from 'playwright-core';

const base = (process.env.TAVERN_URL || '').replace(/\/$/, '');
if (!base) {
  console.error('e2e admin: set TAVERN_URL');
  process.exit(2);
}
const outDir = process.env.E2E_OUT || 'build/e2e';
const WAIT = 20_000;

function log(...a) {
  console.log('e2e admin:', ...a);
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

async function adminToken() {
  if (process.env.TAVERN_ADMIN_TOKEN) return process.env.TAVERN_ADMIN_TOKEN;
  const text = await readFile(path.join(outDir, 'server.log'), 'utf8');
  const m = text.match(/Admin: \S+\/admin\?token=(\S+)/);
  assert(m, 'the server printed no "Admin: http://HOST/admin?token=..." line');
  return m[1];
}

async function api(method, p, body, token) {
  const headers = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = 'Bearer ' + token;
  const r = await fetch(base + p, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

async function main() {
  await mkdir(outDir, { recursive: true });
  const token = await adminToken();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  const errors = [];
  try {
    // A live table: one player seated and acting, one spectator watching.
    const owner = await api('POST', '/api/players', { name: 'Operator Test' });
    const table = await api('POST', '/api/tables', { name: 'Admin e2e table', seats: 2 }, owner.token);
    await api('POST', `/api/tables/${table.id}/seats`, { character: { name: 'Wren' } }, owner.token);

    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const watcher = await (await browser.newContext()).newPage();
    await watcher.goto(`${base}/tables/${table.id}`);

    const page = await ctx.newPage();
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('dialog', (d) => d.accept());

    await step('the dashboard asks for the token', async () => {
      const r = await page.goto(`${base}/admin`);
      assert(r.status() === 401, `GET /admin without the cookie = ${r.status()}`);
      await page.waitForSelector('#admin-token');
      await page.screenshot({ path: path.join(outDir, 'admin-signin.png') });
      errors.length = 0; // the 401 itself is logged by the browser
    });

    await step('signing in opens the overview', async () => {
      await page.fill('#admin-token', token);
      await Promise.all([page.waitForNavigation(), page.click('#signin-submit')]);
      await page.waitForSelector('#overview-stats');
      const tables = Number(await page.textContent('#stat-tables').then((t) => t.trim().split(/\s/)[0]));
      assert(tables >= 1, `tables stat ${tables}`);
      await page.waitForFunction(() => [...document.images].every((i) => i.complete && i.naturalWidth > 0));
      await page.screenshot({ path: path.join(outDir, 'admin-overview.png'), fullPage: true });
    });

    await step('the tables page lists the live table', async () => {
      await page.click('.admin-nav >> text=Tables');
      const row = page.locator(`tr[data-table-id="${table.id}"]`);
      await row.waitFor({ timeout: WAIT });
      const spect = await row.locator('td').nth(6).textContent();
      assert(Number(spect.trim()) >= 1, `spectators ${spect}`);
      await page.screenshot({ path: path.join(outDir, 'admin-tables.png'), fullPage: true });
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
      await page.screenshot({ path: path.join(outDir, 'admin-table-paused.png'), fullPage: true });
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
      await page.screenshot({ path: path.join(outDir, 'admin-table.png'), fullPage: true });
    });

    await step('the LLM page', async () => {
      await page.click('.admin-nav >> text=LLM');
      await page.waitForSelector('#by-model');
      await page.screenshot({ path: path.join(outDir, 'admin-llm.png'), fullPage: true });
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
      await p.screenshot({ path: path.join(outDir, 'admin-overview-phone.png'), fullPage: true });
    });

    assert(errors.length === 0, 'console errors: ' + errors.join('; '));
  } finally {
    await browser.close();
  }
  log('passed');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
