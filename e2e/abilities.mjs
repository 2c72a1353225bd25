// Browser test of abilities in a fight: two players (a warrior and a mage)
// at a d20 table fight the goblins of the old mill with the offline
// narrator. On the first PC turn the acting player sees chips for the
// foes and for each ability with its uses, taps a foe in the initiative
// tracker to aim them, sends an ability from its chip and sees its uses
// drop on the sheet. Then the warrior defends until the mage falls, and
// gives the fallen mage a potion from its chip, which brings her round.
// A fight that ends before the mage falls is played again at a new table.
//
// Usage: TAVERN_URL=http://127.0.0.1:18089 node e2e/abilities.mjs
// (e2e/run.sh builds and starts the server, then runs this.)
// Env: TAVERN_URL (required), CHROMIUM (default /usr/bin/chromium),
// E2E_OUT (screenshots, default build/e2e).

import { WAIT, assert, baseURL, launchBrowser, logger, pickName, runMain, shot, takeSeat, waitFor as poll, watchErrors } from './lib.mjs';

const base = baseURL('e2e abilities:');
const { log, counts } = logger('e2e abilities:');
const waitFor = (what, fn, timeout = WAIT) => poll(what, fn, timeout, 150);
const consoleErrors = [];

// view reads what a table page shows of the fight and the viewer.
function view(page) {
  return page.evaluate(() => {
    const q = (s) => document.querySelector(s);
    const send = q('#action-send');
    return {
      mode: q('#mode')?.dataset.mode || '',
      canAct: !!send && !send.disabled && !q('#action-text').disabled,
      myTurn: document.querySelector('#table-page').classList.contains('my-turn'),
      targets: [...document.querySelectorAll('#hints button[data-target]')].map((b) => ({ id: b.dataset.target, text: b.textContent, on: b.getAttribute('aria-pressed') === 'true' })),
      abilities: [...document.querySelectorAll('#hints button[data-ability]')].map((b) => ({ id: b.dataset.ability, text: b.textContent, fill: b.dataset.fill, disabled: b.disabled })),
      fills: [...document.querySelectorAll('#hints button[data-fill]')].map((b) => b.dataset.fill),
      sheetUses: Object.fromEntries([...document.querySelectorAll('#sheet [data-ability]')].map((li) => [li.dataset.ability, li.querySelector('.a-uses').textContent])),
      party: [...document.querySelectorAll('#party li[data-character]')].map((li) => ({ name: li.querySelector('.c-name').textContent, hp: li.querySelector('.c-hp').textContent, status: li.querySelector('.c-status')?.textContent || '' })),
      targeted: [...document.querySelectorAll('#initiative li.targeted')].map((li) => li.dataset.entry),
    };
  });
}

// send sends what is in the action box and waits for it in the log.
async function send(page) {
  const text = await page.inputValue('#action-text');
  const before = await page.evaluate(() => document.querySelectorAll('#log li').length);
  await page.click('#action-send');
  await waitFor(`"${text}" in the log`, () => page.evaluate(([n, t]) => [...document.querySelectorAll('#log li')].slice(n).some((li) => li.textContent.includes(t)), [before, text]));
}

async function act(page, text) {
  await waitFor('the action box', async () => (await view(page)).canAct);
  await page.fill('#action-text', text);
  await send(page);
}

const down = (v, name) => v.party.some((p) => p.name === name && /unconscious/.test(p.status));

// playTable plays one table; it returns true once the potion has brought
// the fallen mage round, false if the fight ended first.
async function playTable(browser, attempt, checked) {
  const ctxA = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const ctxB = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const a = await ctxA.newPage();
    const b = await ctxB.newPage();
    for (const [p, who] of [[a, 'warrior'], [b, 'mage']]) {
      p.setDefaultTimeout(WAIT);
      watchErrors(p, consoleErrors, who);
    }
    await pickName(a, base, 'Ann');
    await a.fill('#table-name', `Abilities ${attempt} ${Date.now()}`);
    await a.selectOption('#table-ruleset', 'd20');
    await a.selectOption('#table-combat-mode', 'tactical');
    await Promise.all([a.waitForURL(/\/tables\/[^/?#]+/), a.click('#create-submit')]);
    const tableURL = a.url().replace(/#.*$/, '');
    await takeSeat(a, 'Odo', 'warrior');
    await pickName(b, base, 'Bea');
    await b.goto(tableURL);
    await takeSeat(b, 'Sel', 'mage');
    const who = () => waitFor('a player who may act', async () => ((await view(a)).canAct && a) || ((await view(b)).canAct && b));
    await act(await who(), 'I go to the old mill');
    await act(await who(), 'I attack Snikket');
    await waitFor('the fight', async () => (await view(a)).mode === 'combat');
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const p = await waitFor('a PC turn, or the end', async () => {
        const [va, vb] = await Promise.all([view(a), view(b)]);
        if (va.mode !== 'combat') return 'ended';
        if (va.canAct && va.myTurn) return a;
        if (vb.canAct && vb.myTurn) return b;
        return null;
      }, 60_000);
      if (p === 'ended') return false;
      const v = await waitFor('the fight chips', async () => {
        const v = await view(p);
        return v.abilities.length > 0 && v;
      });
      if (!checked.chips) {
        // The chips: foes to target, each ability with its uses.
        assert(v.targets.length >= 2 && v.targets.filter((t) => t.on).length === 1, `target chips, one selected: ${JSON.stringify(v.targets)}`);
        assert(v.abilities.every((x) => /\d+\/\d+$/.test(x.text)), `ability chips show their uses: ${JSON.stringify(v.abilities)}`);
        // Tapping a foe in the tracker aims the chips at it.
        const other = v.targets.find((t) => !t.on);
        await p.click(`#initiative li[data-entry="${other.id}"]`);
        const aimed = await waitFor('the chips aimed at the tapped foe', async () => {
          const w = await view(p);
          return w.targets.find((t) => t.on)?.id === other.id && w.targeted.includes(other.id) && w;
        });
        const strike = aimed.abilities.find((x) => (x.id === 'magic_missile' || x.id === 'power_attack') && !x.disabled);
        assert(strike && strike.fill.endsWith(other.text), `the ${strike && strike.id} chip names ${other.text}: ${strike && strike.fill}`);
        const before = aimed.sheetUses[strike.id];
        await p.click(`#hints button[data-ability="${strike.id}"]`);
        assert((await p.inputValue('#action-text')) === strike.fill, 'the chip fills the action box');
        await shot(p, 'abilities-1-chips');
        await send(p);
        await waitFor(`the sheet's ${strike.id} uses to drop from ${before}`, async () => {
          const u = (await view(p)).sheetUses[strike.id];
          return u && u !== before && Number(u.split('/')[0]) === Number(before.split('/')[0]) - 1;
        });
        checked.chips = true;
        log(`chips: targets ${v.targets.map((t) => t.text).join(', ')}; ${strike.id} on ${other.text}, uses ${before} → one less`);
        continue;
      }
      if (p === a && down(v, 'Sel')) {
        // The fallen friend: a potion from its chip brings her round.
        const give = v.fills.find((f) => /^give my healing potion to Sel$/.test(f));
        assert(give, `a potion chip for the fallen Sel: ${v.fills.join(' | ')}`);
        await p.click(`#hints button[data-fill="${give}"]`);
        await shot(p, 'abilities-2-potion');
        await send(p);
        // The log's heal line is the proof: the goblins may knock her
        // down again before the page is looked at.
        const up = await waitFor('Sel to come round', async () => {
          const w = await view(b);
          const sel = w.party.find((x) => x.name === 'Sel');
          if (sel && !/unconscious/.test(sel.status) && !/^0\//.test(sel.hp)) return sel.hp + ' HP';
          const healed = await b.evaluate(() => [...document.querySelectorAll('#log li')].map((li) => li.textContent).find((t) => /\bSel heals\b/.test(t)));
          return healed || null;
        });
        log(`potion: Sel comes round (${up})`);
        return true;
      }
      // The warrior holds; the mage casts. The goblins go for the weakest.
      await p.click(p === a ? '#hints button[data-fill="defend"]' : '#hints button[data-ability="firebolt"]');
      await send(p);
    }
    throw new Error('the fight ran past two minutes');
  } finally {
    await ctxA.close();
    await ctxB.close();
  }
}

async function main() {
  const browser = await launchBrowser();
  const checked = { chips: false };
  try {
    for (let attempt = 1; ; attempt++) {
      if (await playTable(browser, attempt, checked)) break;
      log(`table ${attempt}: the fight ended before the mage fell; again`);
      if (attempt >= 5) throw new Error('the mage never fell in five fights');
    }
    assert(checked.chips, 'the chips were checked');
    assert(consoleErrors.length === 0, `no console errors: ${consoleErrors.join('\n')}`);
    log('ok');
  } finally {
    await browser.close();
  }
}

runMain(log, counts, main);
