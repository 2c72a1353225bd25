// What the browser tests share: where they write, how they log and wait,
// how they start a Tavern (or another program) and a browser, and how they
// make players and tables through the JSON API. Each script imports the
// few it needs.

import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const here = path.dirname(fileURLToPath(import.meta.url));
// root is the repository: bin/tavern and build/e2e are under it.
export const root = path.dirname(here);
export const outDir = process.env.E2E_OUT || path.join(root, 'build/e2e');
export const WAIT = 20_000;
await mkdir(outDir, { recursive: true });

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function assert(cond, msg) {
  if (!cond) throw new Error('assertion failed: ' + msg);
}

// logger prints lines under a prefix ("e2e admin:") and runs named steps,
// counting those that pass and fail.
export function logger(prefix) {
  const counts = { passed: 0, failed: 0 };
  const log = (...a) => console.log(prefix, ...a);
  async function step(name, fn) {
    const t0 = Date.now();
    try {
      await fn();
      counts.passed++;
      log(`ok   ${name} (${Date.now() - t0} ms)`);
    } catch (err) {
      counts.failed++;
      log(`FAIL ${name}: ${err && err.stack ? err.stack : err}`);
      throw err;
    }
  }
  return { log, step, counts };
}

// runMain runs a script's main and exits 1 if it throws; the error is
// printed unless a failed step already did. With summary it ends with
// "N passed, M failed".
export function runMain(log, counts, main, summary = false) {
  main()
    .catch((err) => {
      if (!counts.failed) {
        counts.failed++;
        log('FAIL', err && err.stack ? err.stack : err);
      }
    })
    .finally(() => {
      if (summary) console.log(`${counts.passed} passed, ${counts.failed} failed`);
      if (counts.failed) process.exitCode = 1;
    });
}

// waitFor polls fn until it returns a truthy value; a throw counts as not yet.
export async function waitFor(what, fn, timeout = WAIT, every = 200) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${JSON.stringify(last && last.message ? last.message : last)})`);
    await sleep(every);
  }
}

// baseURL is the Tavern that e2e/run.sh started (TAVERN_URL).
export function baseURL(prefix) {
  const base = (process.env.TAVERN_URL || '').replace(/\/$/, '');
  if (!base) {
    console.error(`${prefix} set TAVERN_URL, e.g. TAVERN_URL=http://127.0.0.1:18089`);
    process.exit(2);
  }
  return base;
}

// launchBrowser starts Debian's chromium (CHROMIUM) through playwright-core.
export function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

// watchErrors pushes a page's script errors and console errors (who: text)
// into errors; skip drops console messages it matches.
export function watchErrors(page, errors, who = '', skip = null) {
  const tag = who ? `${who}: ` : '';
  page.on('console', (m) => {
    if (m.type() === 'error' && !(skip && skip.test(m.text()))) errors.push(tag + m.text());
  });
  page.on('pageerror', (e) => errors.push(tag + (e && e.message ? e.message : String(e))));
}

export function shot(page, name, fullPage = true) {
  return page.screenshot({ path: path.join(outDir, `${name}.png`), fullPage });
}

// healthy says whether a Tavern answers /healthz at base.
export async function healthy(base) {
  try {
    return (await fetch(`${base}/healthz`)).ok;
  } catch {
    return false;
  }
}

// startProcess runs a program with its output in outDir/<name>.log.
export function startProcess(name, cmd, args, env = {}, append = false) {
  const out = createWriteStream(path.join(outDir, name + '.log'), append ? { flags: 'a' } : {});
  const p = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  p.stdout.pipe(out);
  p.stderr.pipe(out);
  return p;
}

// stopProcess ends p (SIGTERM) and waits for it to exit.
export async function stopProcess(p) {
  if (!p || p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  await exited;
}

// startTavern runs bin/tavern (TAVERN_BIN) on addr and db, its log in
// outDir/<name>.log, and waits until it answers /healthz. Quotas are off
// unless env says otherwise: the tests make players faster than people do.
export async function startTavern({ name, addr, db, env = {}, args = [], append = false }) {
  const base = `http://${addr}`;
  if (await healthy(base)) throw new Error(`another server answers at ${base}`);
  const bin = process.env.TAVERN_BIN || path.join(root, 'bin/tavern');
  const p = startProcess(name, bin, ['-addr', addr, '-db', db, ...args], { TAVERN_QUOTAS: 'off', ...env }, append);
  for (let i = 0; i < 150; i++) {
    if (await healthy(base)) return p;
    if (p.exitCode !== null) break;
    await sleep(200);
  }
  await stopProcess(p);
  throw new Error(`the server did not start at ${base}; see ${outDir}/${name}.log`);
}

// adminToken is TAVERN_ADMIN_TOKEN or the token in the "Admin: …?token="
// line the shared server printed into outDir/server.log.
export async function adminToken() {
  if (process.env.TAVERN_ADMIN_TOKEN) return process.env.TAVERN_ADMIN_TOKEN;
  const text = await readFile(path.join(outDir, 'server.log'), 'utf8');
  const m = text.match(/Admin: \S+\/admin\?token=(\S+)/);
  assert(m, 'the server printed no "Admin: http://HOST/admin?token=..." line; set TAVERN_ADMIN_TOKEN');
  return m[1];
}

// client calls the JSON API at base; token is a player's or the admin's.
export function client(base) {
  return async function api(method, p, body, token) {
    const headers = { 'Content-Type': 'application/json' };
    if (token) headers.Authorization = 'Bearer ' + token;
    const r = await fetch(base + p, { method, headers, body: body ? JSON.stringify(body) : undefined });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
}

// seatedTable makes a player, a table they own and a seat for them at it.
export async function seatedTable(api, player, table, character) {
  const owner = await api('POST', '/api/players', { name: player });
  const t = await api('POST', '/api/tables', table, owner.token);
  await api('POST', `/api/tables/${t.id}/seats`, { character }, owner.token);
  return { owner, table: t };
}

// logIn gives a browser context the player's cookie.
export function logIn(ctx, base, token) {
  const u = new URL(base);
  return ctx.addCookies([{ name: 'tavern_player', value: token, domain: u.hostname, path: '/', httpOnly: true, sameSite: 'Lax' }]);
}

// adminLogIn gives a browser context the operator's cookie by visiting
// /admin?token=.
export async function adminLogIn(page, base, token) {
  await page.goto(`${base}/admin?token=${encodeURIComponent(token)}`);
}

// pickName picks a player name in the lobby's form.
export async function pickName(page, base, name) {
  await page.goto(base + '/');
  await page.fill('#player-name', name);
  await Promise.all([page.waitForEvent('load'), page.click('#player-submit')]);
  await page.waitForSelector('#player-name-current', { timeout: WAIT });
  const shown = await page.textContent('#player-name-current');
  assert(shown === name, `lobby shows the player name ${name}, got ${shown}`);
}

// takeSeat makes a character in the table page's seat form and waits for
// the live connection; it returns the seat.
export async function takeSeat(page, character, cls) {
  await page.waitForSelector('#seat-form', { timeout: WAIT });
  await page.fill('#seat-name', character);
  if (cls) await page.selectOption('#seat-class', cls);
  await Promise.all([page.waitForEvent('load'), page.click('#seat-submit')]);
  await page.waitForSelector('#sheet', { timeout: WAIT });
  await page.waitForFunction(() => document.querySelector('#conn')?.dataset.state === 'open', null, { timeout: WAIT });
  const r = await page.evaluate(() => ({ seat: document.querySelector('#table-page')?.dataset.seat || '', role: document.querySelector('#table-page')?.dataset.role || '' }));
  assert(r.role === 'player' && r.seat, `seated as a player, got role=${r.role} seat=${r.seat}`);
  return r.seat;
}

// canAct says whether the page's action box is open.
export function canAct(page) {
  return page.evaluate(() => {
    const b = document.querySelector('#action-send');
    return !!b && !b.disabled && !document.querySelector('#action-text').disabled;
  });
}
