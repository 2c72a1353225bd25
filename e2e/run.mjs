// Browser test of Tavern: two players and a spectator at one table, played
// with the offline narrator until tactical combat has shown a PC turn where
// the action box is enabled for exactly the active player, the one the
// server's can_act names.
//
// Usage: TAVERN_URL=http://127.0.0.1:18089 node e2e/run.mjs
// (e2e/run.sh builds and starts the server, then runs this.)
// Env: TAVERN_URL (required), CHROMIUM (default /usr/bin/chromium),
// E2E_OUT (screenshots, default build/e2e).

import { WAIT, assert, baseURL, launchBrowser, logger, pickName, runMain, shot, takeSeat, waitFor, watchErrors } from './lib.mjs';

const base = baseURL('e2e:');
const { log, step, counts } = logger('e2e:');
const consoleErrors = [];

// view reads what the table page shows.
function view(page) {
  return page.evaluate(() => {
    const q = (s) => document.querySelector(s);
    const send = q('#action-send');
    return {
      seat: q('#table-page')?.dataset.seat || '',
      role: q('#table-page')?.dataset.role || '',
      mode: q('#mode')?.dataset.mode || '',
      modeText: q('#mode')?.textContent.trim() || '',
      title: document.title,
      round: q('#round')?.textContent.trim() || '',
      entries: [...document.querySelectorAll('#initiative li')].map((li) => li.dataset.entry),
      active: [...document.querySelectorAll('#initiative li.active')].map((li) => ({ id: li.dataset.entry, current: li.getAttribute('aria-current') })),
      hasActionBox: !!send,
      canAct: !!send && !send.disabled && !q('#action-text').disabled,
      conn: q('#conn')?.dataset.state || '',
      location: q('#location-name')?.textContent.trim() || '',
      log: [...document.querySelectorAll('#log li')].map((li) => li.textContent),
    };
  });
}

// act types text into the action box once it is enabled and sends it.
async function act(page, text) {
  await page.waitForFunction(() => {
    const b = document.querySelector('#action-send');
    return b && !b.disabled;
  }, null, { timeout: WAIT });
  const before = (await view(page)).log.length;
  await page.fill('#action-text', text);
  await page.click('#action-send');
  // The action comes back as a log line.
  await waitFor(`the action "${text}" in the log`, async () => (await view(page)).log.slice(before).some((l) => l.includes(text)));
}

async function main() {
  const browser = await launchBrowser();
  try {
    const ctxA = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const ctxB = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const ctxS = await browser.newContext({ viewport: { width: 420, height: 900 }, colorScheme: 'dark' });
    const a = await ctxA.newPage();
    const b = await ctxB.newPage();
    const s = await ctxS.newPage();
    watchErrors(a, consoleErrors, 'player 1');
    watchErrors(b, consoleErrors, 'player 2');
    watchErrors(s, consoleErrors, 'spectator');
    a.setDefaultTimeout(WAIT);
    b.setDefaultTimeout(WAIT);
    s.setDefaultTimeout(WAIT);

    let tableURL = '';
    const tableName = `E2E <b>table</b> ${Date.now()}`;
    const seats = {};

    await step('lobby renders and shows the DM', async () => {
      await a.goto(base + '/');
      await a.waitForSelector('#name-form');
      const dm = await a.textContent('#dm');
      assert(/Game master/.test(dm), `#dm says who runs the game, got ${dm}`);
      await shot(a, '01-lobby');
    });

    await step('player 1 picks a name and creates a table', async () => {
      await pickName(a, base, 'Aldric');
      await a.fill('#table-name', tableName);
      await a.selectOption('#table-ruleset', 'd100');
      await a.selectOption('#table-combat-mode', 'tactical');
      await a.fill('#table-seats', '4');
      await Promise.all([a.waitForURL(/\/tables\/[^/?#]+/), a.click('#create-submit')]);
      tableURL = a.url().replace(/#.*$/, '');
      const h1 = await a.textContent('#table-name');
      assert(h1 === tableName, `the table name is shown as text (escaped), got ${h1}`);
    });

    await step('player 1 takes a seat', async () => {
      // The class list tells the chosen class's summary below it.
      await a.waitForSelector('#seat-class-about', { timeout: WAIT });
      const about = () => a.textContent('#seat-class-about');
      const first = await about();
      await a.selectOption('#seat-class', 'mage');
      assert((await about()) !== first && (await about()).length > 10, `the mage's summary replaces the first class's: ${await about()}`);
      seats.a = await takeSeat(a, 'Brunhild', 'warrior');
      const sheet = await a.textContent('#sheet');
      assert(/Brunhild/.test(sheet) && /Longsword/.test(sheet), `the sheet shows the character and weapon: ${sheet}`);
      await shot(a, '02-table-seated');
    });

    await step('player 2 picks a name in the lobby and sits from the table list; an open lobby follows live', async () => {
      const id = new URL(tableURL).pathname.split('/').pop();
      // The spectator's browser has the lobby open, on a phone.
      await s.setViewportSize({ width: 390, height: 844 });
      await s.goto(base + '/');
      await s.waitForSelector(`tr[data-table-id="${id}"]`);
      await s.evaluate(() => { window.__noReload = 1; });
      const seatsText = () => s.textContent(`tr[data-table-id="${id}"] .t-seats`);
      assert((await seatsText()) === '1/4', `lobby seats before: ${await seatsText()}`);
      const label = await s.evaluate((tid) => getComputedStyle(document.querySelector(`tr[data-table-id="${tid}"] td[data-label="Seats"]`), '::before').content, id);
      assert(/Seats/.test(label), `the phone lobby labels each field as a card, got ${label}`);
      await shot(s, '02-lobby-phone');
      await pickName(b, base, 'Mira');
      await b.waitForSelector(`tr[data-table-id="${id}"]`);
      await shot(b, '02-lobby-with-table');
      await Promise.all([b.waitForURL(/\/tables\//), b.click(`tr[data-table-id="${id}"] a[data-action="sit"]`)]);
      seats.b = await takeSeat(b, 'Vesna', 'rogue');
      assert(seats.a !== seats.b, `different seats: ${seats.a} vs ${seats.b}`);
      await waitFor('the open lobby to show 2/4 seats without a reload', async () => (await seatsText()) === '2/4');
      assert(await s.evaluate(() => window.__noReload === 1), 'the lobby updated without a reload');
      await s.setViewportSize({ width: 420, height: 900 });
    });

    await step('a spectator watches without an action box', async () => {
      await s.goto(tableURL + '?watch=1');
      await s.waitForFunction(() => document.querySelector('#conn')?.dataset.state === 'open');
      const v = await view(s);
      assert(v.role === 'spectator', `spectator role, got ${v.role}`);
      assert(!v.hasActionBox, 'no action box for spectators');
      await waitFor('both characters in the spectator party list', async () => {
        const t = await s.textContent('#party');
        return t.includes('Brunhild') && t.includes('Vesna');
      });
    });

    await step('player 1 goes to the old mill', async () => {
      await act(a, 'I go to the old mill');
      await waitFor('the party at The Old Mill (both players)', async () =>
        (await view(a)).location.includes('Old Mill') && (await view(b)).location.includes('Old Mill'));
      await shot(a, '03-old-mill');
    });

    await step('the DM\'s hints are chips that fill the action box; so are exits, people and items', async () => {
      // Whoever may act next sees the hints of the last narration.
      const who = await waitFor('a player who may act', async () =>
        ((await view(a)).canAct && a) || ((await view(b)).canAct && b));
      const chip = await waitFor('hint chips', async () => {
        const t = await who.evaluate(() => [...document.querySelectorAll('#hints button')].map((x) => x.textContent));
        return t.length > 0 && t;
      });
      assert(!chip.some((h) => /\bthe the\b/i.test(h)), `no "the the" in hints: ${chip}`);
      assert(!chip.some((h) => /go to The Old Mill/i.test(h)), `hints describe the place after the move, not before: ${chip}`);
      await who.click('#hints button >> nth=0');
      assert((await who.inputValue('#action-text')) === chip[0], `the hint "${chip[0]}" is in the action box`);
      await shot(who, '03-hints');
      await who.click('#location .exits button >> nth=0');
      assert(/^go to /.test(await who.inputValue('#action-text')), `an exit fills "go to …": ${await who.inputValue('#action-text')}`);
      await who.click('#location [data-npc] button >> nth=0');
      assert(/^(attack|talk to) /.test(await who.inputValue('#action-text')), `an NPC fills "attack …"/"talk to …": ${await who.inputValue('#action-text')}`);
      await who.fill('#action-text', '');
    });

    await step('attacking Snikket starts tactical combat', async () => {
      if ((await view(a)).mode !== 'combat') {
        // Whoever may act first attacks.
        const who = await waitFor('a player who may act', async () =>
          ((await view(a)).canAct && a) || ((await view(b)).canAct && b));
        await act(who, 'I attack Snikket');
      }
      for (const [p, name] of [[a, 'player 1'], [b, 'player 2'], [s, 'spectator']]) {
        const v = await waitFor(`combat on the ${name}'s page`, async () => {
          const v = await view(p);
          return v.mode === 'combat' && v.entries.length > 0 && v.active.length === 1 && Number(v.round) >= 1 && v;
        });
        assert(v.active[0].current === 'true', `the active entry has aria-current=true on the ${name}'s page`);
        assert(v.entries.includes('pc:' + seats.a) && v.entries.includes('pc:' + seats.b), `both PCs in the initiative: ${v.entries}`);
        await waitFor(`HP on every fighter in the ${name}'s tracker`, () => p.evaluate(() =>
          [...document.querySelectorAll('#initiative li:not(.kind-bookend)')].every((li) => /\d+\/\d+ HP/.test(li.querySelector('.e-hp')?.textContent || ''))));
      }
      await shot(a, '04-combat-started');
      await shot(s, '04-combat-spectator');
    });

    await step('each panel is panels.js drawing the JSON view the server sends; what drawing one state costs', async () => {
      const id = new URL(tableURL).pathname.split('/').pop();
      const r = await waitFor('the spectator\'s party panel to match the server\'s snapshot', () => s.evaluate(async (tid) => {
        const panels = await import('/static/panels.js');
        const { mount } = await import('/static/dom.js');
        const snap = await (await fetch(`/api/tables/${encodeURIComponent(tid)}`)).json();
        const drawn = panels.party(snap).map((v) => mount(v).outerHTML).join('');
        if (drawn !== document.querySelector('#party').innerHTML) return null;
        // Every panel drawn from this snapshot, as on each state frame.
        const n = 200;
        const t0 = performance.now();
        for (let i = 0; i < n; i++) {
          for (const f of [panels.combatPanel, panels.party, panels.location, panels.quests]) f(snap).map((v) => mount(v));
        }
        return { ms: (performance.now() - t0) / n, entries: snap.combat ? snap.combat.initiative.length : 0 };
      }, id));
      log(`drawing the panels from one state (${r.entries} initiative entries) takes ${r.ms.toFixed(3)} ms in the browser`);
    });

    await step('on a phone (390x844) the compact combat bar shows the round, the turn and your HP', async () => {
      await b.setViewportSize({ width: 390, height: 844 });
      const bar = await waitFor('the combat bar', async () => {
        const r = await b.evaluate(() => {
          const el = document.querySelector('#combat-bar');
          if (!el || el.hidden || getComputedStyle(el).display === 'none') return null;
          const box = el.getBoundingClientRect();
          return { top: box.top, bottom: box.bottom, text: el.textContent.replace(/\s+/g, ' ').trim() };
        });
        return r;
      });
      assert(bar.top >= 0 && bar.bottom <= 844, `the bar is on screen: ${JSON.stringify(bar)}`);
      assert(/Round \d+/.test(bar.text) && /Vesna \d+\/\d+ HP/.test(bar.text), `round and your HP in the bar: ${bar.text}`);
      // Scrolled down to the action box, the bar is still in view.
      await b.evaluate(() => document.querySelector('#action-form').scrollIntoView());
      const top = await b.evaluate(() => document.querySelector('#combat-bar').getBoundingClientRect().top);
      assert(top >= 0 && top < 60, `the bar sticks at the top while scrolled: top ${top}`);
      await shot(b, '04-combat-phone', false);
      await b.evaluate(() => window.scrollTo(0, 0));
      await b.setViewportSize({ width: 1280, height: 900 });
    });

    await step('on a PC turn, exactly the active player may act', async () => {
      const players = [[a, seats.a, 'player 1'], [b, seats.b, 'player 2']];
      let verified = 0;
      const deadline = Date.now() + 180_000;
      while (verified < 2 && Date.now() < deadline) {
        const va = await view(a);
        if (va.mode !== 'combat') {
          log(`combat ended after ${verified} verified PC turn(s)`);
          break;
        }
        // Wait until every page agrees on the active entry and it is a PC's.
        let agreed;
        try {
          agreed = await waitFor('all pages agreeing on a PC turn', async () => {
            const vs = await Promise.all([view(a), view(b), view(s)]);
            if (vs.some((v) => v.mode !== 'combat')) return 'ended';
            const ids = vs.map((v) => (v.active.length === 1 ? v.active[0].id : null));
            if (!ids[0] || ids.some((x) => x !== ids[0]) || !ids[0].startsWith('pc:')) return null;
            // The active player's box opens once the DM is idle.
            const mine = players.find(([, seat]) => 'pc:' + seat === ids[0]);
            return mine && vs[players.indexOf(mine)].canAct ? { id: ids[0], vs } : null;
          }, 60_000);
        } catch (err) {
          throw new Error('no PC turn came: ' + err.message);
        }
        if (agreed === 'ended') break;
        const { id, vs } = agreed;
        players.forEach(([, seat, name], i) => {
          const mine = 'pc:' + seat === id;
          assert(vs[i].canAct === mine, `${name} (seat ${seat}) action box enabled=${vs[i].canAct} on ${id}'s turn`);
        });
        assert(!vs[2].hasActionBox, 'spectator still has no action box');
        // The server decided it: its snapshot lets exactly the active player act.
        const sent = await a.evaluate(async (url) => (await (await fetch('/api/tables/' + url.split('/').pop())).json()).party, tableURL);
        players.forEach(([, seat, name], i) => {
          const c = sent.find((x) => x.seat === seat);
          assert(c.can_act === ('pc:' + seat === id) && c.can_act === vs[i].canAct, `${name}: the server's can_act ${c.can_act} (turn ${c.turn}), the box enabled=${vs[i].canAct}, on ${id}'s turn`);
        });
        verified++;
        const [p, , name] = players.find(([, seat]) => 'pc:' + seat === id);
        log(`round ${vs[0].round}: ${id} (${name}) may act, the other may not`);
        players.forEach(([, seat, pname], i) => {
          const mine = 'pc:' + seat === id;
          assert(/Your turn/.test(vs[i].title) === mine, `${pname}'s page title on ${id}'s turn: "${vs[i].title}"`);
        });
        await shot(p, `05-pc-turn-${verified}`);
        if (verified === 1) {
          // The other player forces the disabled box: the server refuses
          // and the page shows the error frame.
          const [o, , oname] = players.find(([, seat]) => 'pc:' + seat !== id);
          await o.evaluate(() => {
            const t = document.querySelector('#action-text');
            t.disabled = false;
            t.value = 'I attack out of turn';
            document.querySelector('#action-form').requestSubmit();
          });
          await o.waitForSelector('#error:not([hidden])');
          const msg = await o.textContent('#error');
          assert(/turn/i.test(msg), `${oname} sees the not-your-turn error, got ${msg}`);
          log(`${oname} acting out of turn is told: ${msg}`);
          await shot(o, '05-not-your-turn');
        }
        await act(p, 'I attack Snikket');
        // Wait for the turn to move on (or the fight to end).
        await waitFor('the turn to move on', async () => {
          const v = await view(p);
          return v.mode !== 'combat' || (v.active.length === 1 && v.active[0].id !== id) || !v.canAct;
        }, 60_000);
      }
      assert(verified >= 1, 'saw at least one PC turn');
      const dice = await a.evaluate(() => [...document.querySelectorAll('#log li.ev-dice')].map((li) => li.textContent));
      const attack = dice.find((t) => /vs defence \d+ \u2014 (HIT|MISS|CRIT|FUMBLE)$/.test(t));
      assert(attack, `a dice line with the target and HIT/MISS:\n${dice.slice(-5).join('\n')}`);
      log(`dice line: ${attack}`);
      // An advantage roll (d20, blessed) as the page's renderer shows it:
      // the offline narrator never blesses, so the event is made here.
      const adv = await a.evaluate(async () => {
        const { eventLine } = await import('/static/eventline.js');
        return eventLine({ kind: 'dice', data: { roller: 'Vesna', purpose: 'attack on Snikket (advantage)', notation: '2d20kh1+4', rolls: [3, 14], kept: 14, modifier: 4, total: 18, against: 13, outcome: 'hit' } }).text;
      });
      assert(/2d20kh1\+4.*keeps 14 of 3 and 14 \+ 4 = 18 vs AC 13 \u2014 HIT/.test(adv), `advantage line: ${adv}`);
      await shot(a, '06-after-turns-player1');
      await shot(b, '06-after-turns-player2');
      await shot(s, '06-after-turns-spectator');
    });

    await step('after a reload, the log rendered from the page JSON reads as the live log did', async () => {
      const lines = (p) => p.evaluate(() => Object.fromEntries(
        [...document.querySelectorAll('#log li[data-seq]')].map((li) => [li.dataset.seq, li.textContent.trim()])));
      const live = await lines(a);
      await a.reload();
      await a.waitForSelector('#log li[data-seq]');
      const shipped = await lines(a);
      const common = Object.keys(shipped).filter((k) => k in live);
      assert(common.length >= 10, `at least 10 events in both logs, got ${common.length}`);
      for (const k of common) {
        assert(live[k] === shipped[k], `event ${k}: live "${live[k]}" vs after a reload "${shipped[k]}"`);
      }
      log(`${common.length} log lines identical after a reload`);
      await shot(a, '07-log-after-reload');
    });

    await step('load earlier pages back to the first event; the story downloads', async () => {
      const seqs = () => a.evaluate(() => [...document.querySelectorAll('#log li[data-seq]')].map((li) => Number(li.dataset.seq)));
      const before = await seqs();
      const visible = await a.evaluate(() => !document.querySelector('#load-earlier').hidden);
      assert(visible === (Math.min(...before) > 1), `"load earlier" shown iff the log does not start at event 1 (first ${Math.min(...before)})`);
      for (let i = 0; i < 10 && (await a.evaluate(() => !document.querySelector('#load-earlier').hidden)); i++) {
        const n = (await seqs()).length;
        await a.click('#load-earlier');
        await waitFor('earlier events', async () => (await seqs()).length > n || (await a.evaluate(() => document.querySelector('#load-earlier').hidden)));
      }
      const after = await seqs();
      assert(Math.min(...after) === 1 || after.length > before.length, `paged back: ${before.length} -> ${after.length} lines, first seq ${Math.min(...after)}`);
      assert(after.every((x, i) => i === 0 || x > after[i - 1]), 'the log stays in order');
      await a.evaluate(() => { document.querySelector('#log').scrollTop = 0; });
      await shot(a, '08-load-earlier');
      const story = await a.evaluate(async () => {
        const r = await fetch(document.querySelector('#story-md').getAttribute('href'));
        return { status: r.status, type: r.headers.get('content-type'), text: await r.text() };
      });
      assert(story.status === 200 && /markdown/.test(story.type) && story.text.startsWith('# ') && /\*\*Brunhild:\*\*/.test(story.text), `the story as Markdown: ${story.status} ${story.text.slice(0, 200)}`);
    });

    await step('no script errors and nothing injected', async () => {
      const injected = await a.evaluate(() => document.querySelectorAll('#table-name b, #log script, #log b').length);
      assert(injected === 0, 'the hostile table name rendered as text');
      const errs = consoleErrors.filter((e) => !/favicon/.test(e));
      assert(errs.length === 0, 'browser console errors:\n' + errs.join('\n'));
    });
  } finally {
    await browser.close();
  }
}

runMain(log, counts, main, true);
