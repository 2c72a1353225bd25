// Browser test of the table owner's side and of a seat kept through an
// outage. It runs its own server (it stops and restarts it), on its own
// port and database file:
//
//   - an owner creates a private table from the lobby and sits; a stranger
//     gets 404 for it; the owner's card makes an invite link;
//   - a guest opens /join/<code>, picks a name, makes a character and sits
//     in one form;
//   - the owner switches NPC health to words and pauses: the guest's page
//     says the table is paused and keeps what the guest typed, which is
//     sent once the owner resumes;
//   - the server stops for 12 s: the guest's page says it is reconnecting,
//     stays a player's page, and acts again once the server is back;
//   - the owner removes the guest: the guest's page becomes a spectator's
//     and says why; the owner bans them: their page says they are banned.
//
// Usage: node e2e/owners.mjs (e2e/run.sh runs it after building
// bin/tavern). Env: TAVERN_BIN (default bin/tavern), OWNERS_ADDR (default
// 127.0.0.1:18161), CHROMIUM (default /usr/bin/chromium), E2E_OUT
// (screenshots and the server's log, default build/e2e).

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WAIT, assert, launchBrowser, logger, runMain, shot, sleep, startTavern, stopProcess } from './lib.mjs';

const addr = process.env.OWNERS_ADDR || '127.0.0.1:18161';
const base = `http://${addr}`;
const OUTAGE_MS = 12_000;
const { log, step, counts } = logger('e2e owners:');

// The server: started and stopped by this script, on one database file.
let server = null;
let dbDir = '';

async function startServer() {
  server = await startTavern({ name: 'owners-server', addr, db: path.join(dbDir, 'owners.db'), append: true });
}

async function stopServer() {
  await stopProcess(server);
  server = null;
}

// inPage calls the JSON API from page, with its cookie.
function inPage(page, method, p, body) {
  return page.evaluate(async ([m, u, b]) => {
    const r = await fetch(u, { method: m, headers: { 'Content-Type': 'application/json' }, body: b ? JSON.stringify(b) : undefined });
    const t = await r.text();
    return { status: r.status, body: t ? JSON.parse(t) : null };
  }, [method, p, body]);
}

async function main() {
  dbDir = await mkdtemp(path.join(os.tmpdir(), 'tavern-owners-'));
  await startServer();
  const browser = await launchBrowser();
  const errors = [];
  const watchErrors = (page) => {
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => process.env.E2E_DEBUG && log('console:', m.text()));
    page.on('framenavigated', (f) => process.env.E2E_DEBUG && f === page.mainFrame() && log('navigated:', f.url()));
    page.on('dialog', (d) => d.accept());
  };
  try {
    const owner = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const guest = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    watchErrors(owner);
    watchErrors(guest);
    let tableId = '';
    let inviteURL = '';

    await step('the owner creates a private table from the lobby and sits', async () => {
      await owner.goto(base + '/');
      await owner.fill('#player-name', 'Olwen');
      await Promise.all([owner.waitForNavigation(), owner.click('#player-submit')]);
      await owner.fill('#table-name', 'Owners e2e');
      await owner.check('#table-private');
      await Promise.all([owner.waitForURL(/\/tables\//), owner.click('#create-submit')]);
      tableId = new URL(owner.url()).pathname.split('/').pop();
      await owner.fill('#seat-name', 'Wren');
      await Promise.all([owner.waitForNavigation(), owner.click('#seat-submit')]);
      await owner.waitForSelector('#owner-panel');
      await owner.waitForSelector('#conn[data-state="open"]', { timeout: WAIT });
      const lobby = await owner.goto(base + '/');
      assert(lobby.ok(), 'lobby');
      const mine = await owner.textContent('#your-tables');
      assert(mine.includes('Owners e2e') && mine.includes('private'), `Your tables: ${mine}`);
      await owner.goto(`${base}/tables/${tableId}`);
      await owner.waitForSelector('#conn[data-state="open"]', { timeout: WAIT });
    });

    await step('a stranger finds nothing', async () => {
      const r = await fetch(`${base}/tables/${tableId}`);
      assert(r.status === 404, `stranger's page: ${r.status}`);
      const list = await (await fetch(`${base}/api/tables`)).json();
      assert(!list.tables.some((t) => t.id === tableId), 'the lobby lists the private table');
    });

    await step('the owner makes an invite link', async () => {
      await owner.click('#owner-invite');
      await owner.waitForSelector('#owner-invite-url:not([hidden])');
      inviteURL = await owner.inputValue('#owner-invite-url');
      assert(/\/join\/[A-Za-z0-9_-]{16,}$/.test(inviteURL), `invite ${inviteURL}`);
    });

    await step('the guest joins through /join/<code> in one form', async () => {
      await guest.goto(inviteURL);
      assert((await guest.textContent('#join-table')).includes('Owners e2e'), 'join page names the table');
      assert((await guest.textContent('#join-adventure')).length > 0, 'join page names the adventure');
      await shot(guest, 'owners-join');
      await guest.fill('#join-player', 'Gideon');
      await guest.fill('#join-character', 'Pim');
      await Promise.all([guest.waitForURL(new RegExp(`/tables/${tableId}\\?invite=`)), guest.click('#join-sit')]);
      await guest.waitForSelector('#action-form');
      await guest.waitForSelector('#conn[data-state="open"]', { timeout: WAIT });
      assert(await guest.getAttribute('#table-page', 'data-role') === 'player', 'guest is not a player');
      await owner.waitForFunction(() => document.querySelectorAll('#owner-seats [data-kick]').length === 1, null, { timeout: WAIT });
    });

    await step('the owner switches NPC health to words and pauses; the guest keeps what they typed', async () => {
      await owner.selectOption('#owner-npc-hp', 'words');
      await owner.waitForFunction(async (id) => (await (await fetch(`/api/tables/${id}`)).json()).table.npc_hp === 'words', tableId, { timeout: WAIT });
      await guest.waitForFunction(() => !document.getElementById('action-text').disabled, null, { timeout: WAIT });
      await guest.fill('#action-text', 'I look around the square');
      await owner.click('#owner-pause');
      await guest.waitForSelector('#paused-banner:not([hidden])', { timeout: WAIT });
      assert(await guest.isDisabled('#action-send'), 'Act is enabled on a paused table');
      assert(await guest.inputValue('#action-text') === 'I look around the square', 'the typed action is gone');
      assert((await guest.textContent('#turn-hint')).includes('paused'), 'the hint does not say paused');
      await shot(guest, 'owners-paused');
      await owner.waitForFunction(() => document.getElementById('owner-pause').textContent.includes('Resume'), null, { timeout: WAIT });
      await owner.click('#owner-pause');
      await guest.waitForSelector('#paused-banner', { state: 'hidden', timeout: WAIT });
      await guest.waitForFunction(() => !document.getElementById('action-send').disabled, null, { timeout: WAIT });
      const before = await guest.locator('#log li').count();
      await guest.click('#action-send');
      await guest.waitForFunction((n) => document.querySelectorAll('#log li').length > n + 1, before, { timeout: WAIT });
    });

    await step(`a ${OUTAGE_MS / 1000} s outage leaves the guest seated and able to act`, async () => {
      await stopServer();
      await guest.waitForSelector('#conn-banner:not([hidden])', { timeout: WAIT });
      await sleep(OUTAGE_MS);
      const banner = await guest.textContent('#conn-banner');
      assert(/reconnecting/i.test(banner) && /seat is kept/.test(banner), `banner: ${banner}`);
      assert(await guest.getAttribute('#table-page', 'data-role') === 'player', 'the page gave up the seat');
      assert(await guest.locator('#action-form').isVisible(), 'the action box is gone');
      await shot(guest, 'owners-outage');
      await startServer();
      await guest.waitForSelector('#conn[data-state="open"]', { timeout: 40_000 });
      await guest.waitForSelector('#conn-banner', { state: 'hidden', timeout: WAIT });
      await guest.waitForFunction(() => !document.getElementById('action-send').disabled, null, { timeout: WAIT });
      const before = await guest.locator('#log li').count();
      await guest.fill('#action-text', 'I go to the old mill');
      await guest.click('#action-send');
      await guest.waitForFunction((n) => document.querySelectorAll('#log li').length > n + 1, before, { timeout: WAIT });
      const snap = await inPage(guest, 'GET', `/api/tables/${tableId}`);
      const pim = snap.body.party.find((c) => c.name === 'Pim');
      assert(pim, 'Pim left the party');
      assert((snap.body.online || []).includes(pim.seat), 'the guest is not connected as the seat\'s player');
      await owner.waitForSelector('#conn[data-state="open"]', { timeout: 40_000 });
    });

    await step('the owner removes the guest: their page becomes a spectator page and says why', async () => {
      await owner.click('#owner-seats [data-kick]');
      await guest.waitForSelector('#notice:not([hidden])', { timeout: WAIT });
      const why = await guest.textContent('#notice');
      assert(why.includes("owner removed you"), `notice: ${why}`);
      assert(await guest.getAttribute('#table-page', 'data-role') === 'spectator', 'not a spectator page');
      assert(await guest.locator('#action-form').count() === 0, 'the action box stayed');
      await shot(guest, 'owners-removed');
    });

    await step('the owner bans the guest: their page says so', async () => {
      const me = await inPage(guest, 'GET', '/api/players/me');
      const r = await inPage(owner, 'POST', `/api/tables/${tableId}/bans`, { player_id: me.body.player_id });
      assert(r.status === 204, `ban: ${r.status}`);
      await guest.waitForFunction(() => document.body.textContent.includes('banned from this table'), null, { timeout: WAIT });
      const again = await fetch(inviteURL.replace(/^https?:\/\/[^/]+/, base));
      assert(again.status === 200, 'the invite stays valid for others');
    });

    assert(errors.length === 0, 'page errors: ' + errors.join('; '));
  } finally {
    await browser.close();
    await stopServer();
    await rm(dbDir, { recursive: true, force: true });
  }
  log('passed');
}

runMain(log, counts, () => main().catch(async (err) => {
  await stopServer().catch(() => {});
  throw err;
}));
