// Browser test of "Ask the data": the operator signs in with the
// token the server printed, asks a question on /admin/ask, watches the
// steps arrive (SQL, rows, chart — never the raw chart spec), sees the
// chart and the answer, which says how it read the question, then asks
// a follow-up in the same conversation. With no API key the offline analyst
// answers. Run after e2e/run.mjs, which plays a game, so there is data.
//
// Usage: TAVERN_URL=http://127.0.0.1:18089 node e2e/ask.mjs
// Env: TAVERN_URL (required), TAVERN_ADMIN_TOKEN (default: read from the
// "Admin: …?token=" line of build/e2e/server.log), CHROMIUM (default
// /usr/bin/chromium), E2E_OUT (screenshots, default build/e2e).

import { adminLogIn, adminToken, assert, baseURL, launchBrowser, logger, runMain, shot, waitFor as poll, watchErrors } from './lib.mjs';

const base = baseURL('e2e ask:');
const { log, counts } = logger('e2e ask:');
const waitFor = (what, fn) => poll(what, fn, undefined, 100);

// reply reads the n-th answered question on the page.
function reply(page, n) {
  return page.evaluate((n) => {
    const a = document.querySelectorAll('#ask-log .ask-reply')[n];
    if (!a) return null;
    const img = a.querySelector('img.ask-chart');
    return {
      question: a.querySelector('.ask-question')?.textContent || '',
      answer: a.querySelector('.ask-answer')?.textContent || '',
      sql: [...a.querySelectorAll('.ask-sql')].map((e) => e.textContent),
      spec: [...a.querySelectorAll('.ask-spec')].map((e) => e.textContent),
      rows: a.querySelectorAll('.ask-rows tbody tr').length,
      chart: img ? { loaded: img.complete && img.naturalWidth > 0, width: Math.round(img.getBoundingClientRect().width), alt: img.alt } : null,
      conversation: document.getElementById('ask-conversation').value,
      error: document.getElementById('ask-error').hidden ? '' : document.getElementById('ask-error').textContent,
    };
  }, n);
}

async function main() {
  const token = await adminToken();
  const browser = await launchBrowser();
  const errors = [];
  let page;
  try {
    const ctx = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    page = await ctx.newPage();
    watchErrors(page, errors);

    await adminLogIn(page, base, token);
    await page.goto(`${base}/admin/ask`);
    assert((await page.title()).startsWith('Ask the data'), 'the Ask page opens for the operator');

    const q1 = 'Which tables played most this week?';
    await page.fill('#ask-question', q1);
    await page.click('#ask-submit');
    const r1 = await waitFor('the first answer and its chart', async () => {
      const r = await reply(page, 0);
      return r && r.answer && r.chart && r.chart.loaded ? r : null;
    });
    log('answer:', r1.answer);
    assert(r1.question === q1, `question shown: ${r1.question}`);
    assert(/^I read this as the top \d+ tables by turns played this week\. .*played most/.test(r1.answer), `answer: ${r1.answer}`);
    assert(r1.sql.length === 1 && /FROM v_turns/.test(r1.sql[0]), `SQL shown: ${r1.sql}`);
    assert(r1.spec.length === 0, `the raw chart spec is shown: ${r1.spec}`);
    assert(r1.rows >= 1, 'result rows shown as a table');
    assert(r1.chart.width >= 600, `chart shown ${r1.chart.width} px wide`);
    assert(/^q-[0-9a-f]{16}$/.test(r1.conversation), `conversation ${r1.conversation}`);
    assert(new URL(page.url()).searchParams.get('conversation') === r1.conversation, 'the URL keeps the conversation');
    await shot(page, 'ask');

    await page.fill('#ask-question', 'How many turns were played this week?');
    await page.click('#ask-submit');
    const r2 = await waitFor('the follow-up answer', async () => {
      const r = await reply(page, 1);
      return r && r.answer ? r : null;
    });
    log('follow-up:', r2.answer);
    assert(/^I read this as the number of turns this week\. There were \d+ turns this week\.$/.test(r2.answer), `follow-up answer: ${r2.answer}`);
    assert(r2.conversation === r1.conversation, 'the follow-up stays in the conversation');
    await shot(page, 'ask-followup');

    // Without JavaScript: the form posts and the server renders the answer.
    const nojs = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1100, height: 900 } });
    const p2 = await nojs.newPage();
    await adminLogIn(p2, base, token);
    await p2.goto(`${base}/admin/ask`);
    await p2.fill('#ask-question', 'How many tables are there?');
    await Promise.all([p2.waitForNavigation(), p2.click('#ask-submit')]);
    const r3 = await reply(p2, 0);
    assert(r3 && /^I read this as the number of tables\. There (is|are) \d+ tables?\.$/.test(r3.answer), `no-JS answer: ${r3 && r3.answer}`);
    await shot(p2, 'ask-nojs');

    const errs = errors.filter((e) => !/favicon/.test(e));
    assert(errs.length === 0, 'browser console errors:\n' + errs.join('\n'));
    log('ok');
  } catch (err) {
    if (page) await shot(page, 'ask-failed').catch(() => {});
    if (errors.length) log('browser errors:\n' + errors.join('\n'));
    throw err;
  } finally {
    await browser.close();
  }
}

runMain(log, counts, main);
