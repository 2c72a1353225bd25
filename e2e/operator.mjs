// Browser test of the operator's console, continued: the alert banner on
// every console page, a player's page (found by search, then banned), an
// Ask conversation reopened from the list, and the data agent's history
// opened from a table's session browser. It starts its own server
// (bin/tavern, built by e2e/run.sh) on a scratch database, with a model
// server that refuses connections, so turns fail (an action waits, raising
// the action alert) and Ask falls back to the offline analyst with a note.
//
// Usage: node e2e/operator.mjs (e2e/run.sh runs it last).
// Env: TAVERN_OPERATOR_ADDR (default 127.0.0.1:18190), CHROMIUM (default
// /usr/bin/chromium), E2E_OUT (screenshots and server log, default
// build/e2e).

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { adminLogIn, assert, client, launchBrowser, logger, runMain, seatedTable, shot, startTavern, stopProcess, waitFor as poll, watchErrors } from './lib.mjs';

const addr = process.env.TAVERN_OPERATOR_ADDR || '127.0.0.1:18190';
const base = `http://${addr}`;
const token = 'e2e-operator-root';
const WAIT = 30_000;
const { log, counts } = logger('e2e operator:');
const api = client(base);
const waitFor = (what, fn) => poll(what, fn, WAIT);

// startServer runs bin/tavern with the operator's settings under test.
function startServer(dir) {
  return startTavern({
    name: 'operator-server', addr, db: path.join(dir, 'op.db'),
    env: {
      TAVERN_ADMIN_TOKEN: token,
      // Port 9 (discard) refuses: every model call fails at once.
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      OPENAI_API_KEY: 'e2e',
    },
    args: ['-alert-action-wait', '2s', '-alert-every', '1s', '-llm-timeout', '2s'],
  });
}

async function main() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tavern-operator-'));
  const srv = await startServer(dir);
  const browser = await launchBrowser();
  const errors = [];
  let page;
  try {
    // A player sits: the arrival turn fails (no model), so their action
    // waits and the action alert fires.
    const { owner: player, table } = await seatedTable(api, 'Quill Tester', { name: 'Operator e2e table', seats: 2 }, { name: 'Wren', backstory: 'a lighthouse keeper' });
    await waitFor('the action alert', async () => {
      const a = await api('GET', '/api/admin/alerts', null, token);
      return a.alerts.some((x) => x.id === 'action_waiting:' + table.id);
    });

    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await ctx.newPage();
    watchErrors(page, errors);
    await adminLogIn(page, base, token);

    // The banner, on every console page.
    for (const p of ['/admin', '/admin/tables', '/admin/llm', '/admin/spend', '/admin/players', '/admin/users', '/admin/ask']) {
      await page.goto(base + p);
      const banner = await page.locator('#alert-banner').textContent();
      assert(/alert/.test(banner) && banner.includes(table.id), `${p}: banner ${banner}`);
    }
    await page.goto(`${base}/admin`);
    assert(await page.locator('#alert-history tr[data-alert-id]').count() >= 1, 'the overview lists the alert history');
    await shot(page, 'operator-alerts');
    log('ok   alert banner on every page');

    // The player's page, found by search; then a ban.
    await page.goto(`${base}/admin/players`);
    await page.fill('#player-q', 'quill');
    await Promise.all([page.waitForNavigation(), page.click('#player-search')]);
    await Promise.all([page.waitForNavigation(), page.click(`#admin-players a[href="/admin/players/${player.player_id}"]`)]);
    assert((await page.locator('#player-name').textContent()) === 'Quill Tester', 'the player page names them');
    assert((await page.locator('#player-seats').textContent()).includes('Operator e2e table'), 'the player page lists their table');
    assert((await page.locator('#player-actions-list').textContent()).includes('lighthouse'), 'the player page lists their actions');
    await page.fill('#ban-reason', 'e2e');
    await Promise.all([page.waitForNavigation(), page.click('#player-ban-button')]);
    assert(await page.locator('#player-unban').count() === 1, 'a banned player shows the lift-ban button');
    const me = await fetch(base + '/api/players/me', { headers: { Authorization: 'Bearer ' + player.token } });
    assert(me.status === 401, `the banned player's token: ${me.status}`);
    await shot(page, 'operator-player');
    log('ok   player page and ban');

    // Ask: the model fails, the offline analyst answers with a note; the
    // conversation is listed and reopens.
    await page.goto(`${base}/admin/ask`);
    const q = 'How many tables are there?';
    await page.fill('#ask-question', q);
    await page.click('#ask-submit');
    const answer = await waitFor('the answer', async () => {
      const t = await page.locator('#ask-log .ask-answer').first().textContent({ timeout: 500 });
      return t && t.length ? t : null;
    });
    assert(/^I read this as the number of tables\. There (is|are) 1 tables?\.$/.test(answer), `answer: ${answer}`);
    assert(/model did not answer/.test(await page.locator('#ask-log .ask-note').first().textContent()), 'the note says the model failed');
    assert(await page.locator('.ask-spec').count() === 0, 'no raw chart spec on the page');
    const conv = await page.inputValue('#ask-conversation');
    await page.goto(`${base}/admin/ask`);
    await Promise.all([page.waitForNavigation(), page.click(`#ask-history a[data-conversation="${conv}"]`)]);
    assert(new URL(page.url()).searchParams.get('conversation') === conv, 'the link reopens the conversation');
    const past = await page.locator('#ask-log .ask-past').first();
    assert((await past.locator('.ask-question').textContent()) === q, 'the reopened conversation shows the question');
    assert((await past.locator('.ask-answer').textContent()) === answer, 'the reopened conversation shows the answer');
    assert(/FROM v_tables/.test(await past.locator('.ask-sql').first().textContent()), 'the reopened conversation shows its SQL');
    assert((await page.locator('label[for="ask-question"]').textContent()).includes('Follow-up'), 'a follow-up continues it');
    await shot(page, 'operator-ask');
    log('ok   Ask conversation reopened');

    // The data agent's own history, from a table's session browser: the
    // conversation with its question, SQL, answer and its failed model call.
    await waitFor('the data agent\'s logged call', async () => {
      const h = await api('GET', '/api/admin/agents/data/history', null, token);
      return h.conversations.some((c) => c.conversation === conv && c.turns[0].calls.length > 0);
    });
    await page.goto(`${base}/admin/tables/${table.id}#sessions`);
    await Promise.all([page.waitForNavigation(), page.click('#data-agent-link')]);
    const hist = page.locator(`#data-agent-history details[data-conversation="${conv}"]`);
    await hist.locator('summary').click();
    assert((await hist.locator('.data-question').first().textContent()) === q, 'the data agent history shows the question');
    assert((await hist.locator('.data-answer').first().textContent()) === answer, 'the data agent history shows the answer');
    assert(/FROM v_tables/.test(await hist.locator('.data-sql').first().textContent()), 'the data agent history shows the SQL');
    assert(await hist.locator('.data-calls .pill.failed').count() > 0, 'the data agent history shows the failed model call');
    await shot(page, 'operator-data-agent');
    log('ok   data agent history');

    const errs = errors.filter((e) => !/favicon/.test(e));
    assert(errs.length === 0, 'browser console errors:\n' + errs.join('\n'));
    log('ok');
  } catch (err) {
    if (page) await shot(page, 'operator-failed').catch(() => {});
    if (errors.length) log('browser errors:\n' + errors.join('\n'));
    throw err;
  } finally {
    await browser.close();
    await stopProcess(srv);
    await rm(dir, { recursive: true, force: true });
  }
}

runMain(log, counts, main);
