// Browser test of the table's notes and the owner's undo: the owner, seated,
// adds a note from the page and sees it in the notes panel; acts; then
// undoes the turn with "Undo last turn" and sees its lines struck through,
// a retcon line in the log, and the story export without them; then
// corrects a narration and scores it 👍.
//
// Usage: TAVERN_URL=http://127.0.0.1:18089 node e2e/retcon.mjs
// (e2e/run.sh runs it after run.mjs.) Env: CHROMIUM (default
// /usr/bin/chromium), E2E_OUT (screenshots, default build/e2e).

import { WAIT, assert, baseURL, client, launchBrowser, logIn, logger, runMain, seatedTable, shot, watchErrors } from './lib.mjs';

const base = baseURL('e2e retcon:');
const { log, step, counts } = logger('e2e retcon:');
const api = client(base);

async function main() {
  const browser = await launchBrowser();
  const errors = [];
  try {
    const { owner, table } = await seatedTable(api, 'Retcon Owner', { name: 'Retcon e2e table', seats: 2 }, { name: 'Wren' });

    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await logIn(ctx, base, owner.token);
    const page = await ctx.newPage();
    watchErrors(page, errors);
    let promptAnswer = '';
    page.on('dialog', (d) => (d.type() === 'prompt' ? d.accept(promptAnswer) : d.accept()));
    await page.goto(`${base}/tables/${table.id}`);
    const narrations = page.locator('#log li.ev-narration:not(.streaming)');

    await step('the owner sees the page, arrived, with the owner tools', async () => {
      await page.locator('#conn[data-state="open"]').waitFor({ timeout: WAIT });
      await narrations.first().waitFor({ timeout: WAIT });
      await page.locator('#owner-tools:not([hidden])').waitFor({ timeout: WAIT });
      await page.locator('#note-form:not([hidden])').waitFor({ timeout: WAIT });
    });

    const note = 'The innkeeper is called Bram.';
    await step('a note added on the page shows in the notes panel and the log', async () => {
      await page.fill('#note-text', note);
      await page.click('#note-add');
      await page.locator('#notes li.note', { hasText: note }).waitFor({ timeout: WAIT });
      await page.locator('#log li.ev-note', { hasText: note }).waitFor({ timeout: WAIT });
      const res = await api('GET', `/api/tables/${table.id}/notes`);
      assert(res.notes.length === 1 && res.notes[0].text === note, `GET /notes: ${JSON.stringify(res)}`);
    });

    let undone = '';
    await step('the owner acts, then undoes the turn: its lines are struck through', async () => {
      const before = await narrations.count();
      await page.locator('#action-text:not([disabled])').waitFor({ timeout: WAIT });
      await page.fill('#action-text', 'I look around the square');
      await page.click('#action-send');
      await page.waitForFunction((n) => document.querySelectorAll('#log li.ev-narration:not(.streaming)').length > n, before, { timeout: WAIT });
      undone = (await narrations.last().locator('.text').textContent()) || '';
      await page.locator('#action-text:not([disabled])').waitFor({ timeout: WAIT });
      await page.click('#undo-turn');
      await page.locator('#log li.ev-retcon').waitFor({ timeout: WAIT });
      const struck = page.locator('#log li.ev-narration.retracted');
      await struck.first().waitFor({ timeout: WAIT });
      assert((await struck.last().locator('.text').textContent()) === undone, 'the undone narration is struck through');
      const deco = await struck.last().evaluate((el) => getComputedStyle(el).textDecorationLine);
      assert(deco.includes('line-through'), `text-decoration ${deco}`);
      assert(await page.locator('#log li.ev-action.retracted').count() === 1, 'the dropped action is struck through');
      // The note is not the DM's turn: it stays.
      assert(await page.locator('#log li.ev-note.retracted').count() === 0, 'the note line is not struck');
      await shot(page, 'retcon');
    });

    await step('after a reload the lines are still struck through; the story leaves them out', async () => {
      await page.reload();
      await page.locator('#log li.ev-narration.retracted').first().waitFor({ timeout: WAIT });
      const story = await (await fetch(`${base}/api/tables/${table.id}/story?format=text`)).text();
      assert(!story.includes('I look around the square'), 'the story export keeps the dropped action');
      assert(!story.includes(undone.slice(0, 40)), 'the story export keeps the undone narration');
    });
    await step('"Replay it" undoes a turn and the DM plays it again, the same way', async () => {
      const before = await narrations.count();
      await page.fill('#action-text', 'I take the coil of rope');
      await page.click('#action-send');
      await page.waitForFunction((n) => document.querySelectorAll('#log li.ev-narration:not(.streaming)').length > n, before, { timeout: WAIT });
      const first = (await narrations.last().locator('.text').textContent()) || '';
      await page.locator('#action-text:not([disabled])').waitFor({ timeout: WAIT });
      await page.click('#replay-turn');
      await page.locator('#log li.ev-retcon', { hasText: 'plays it again' }).waitFor({ timeout: WAIT });
      await page.waitForFunction((n) => document.querySelectorAll('#log li.ev-narration:not(.streaming)').length > n, before + 1, { timeout: WAIT });
      const again = (await narrations.last().locator('.text').textContent()) || '';
      assert(again === first, `the replayed narration reads ${again}, the first ${first}`);
      assert(!(await narrations.last().evaluate((el) => el.classList.contains('retracted'))), 'the replayed narration is not struck');
    });

    await step('the owner whispers to the DM; the page says it was taken', async () => {
      await page.fill('#whisper-text', 'Let a crow land on the well.');
      await page.click('#whisper-send');
      await page.locator('#whisper-status', { hasText: 'Whispered' }).waitFor({ timeout: WAIT });
    });

    await step('the owner corrects a narration; a 👍 is taken', async () => {
      const first = narrations.first();
      promptAnswer = 'Greyhollow sleeps under a grey sky.';
      await first.locator('[data-edit]').click();
      await page.locator('#log li.ev-narration.edited', { hasText: promptAnswer }).first().waitFor({ timeout: WAIT });
      await first.locator('[data-feedback="1"]').click();
      await page.locator('#log li.ev-narration [data-feedback="1"][aria-pressed="true"]').first().waitFor({ timeout: WAIT });
      const story = await (await fetch(`${base}/api/tables/${table.id}/story?format=text`)).text();
      assert(story.includes(promptAnswer), 'the story export tells the corrected narration');
      await shot(page, 'retcon-edited');
    });
    assert(errors.length === 0, 'page errors: ' + errors.join('; '));
  } finally {
    await browser.close();
  }
}

runMain(log, counts, main);
