// End-to-end test against an OpenAI-compatible server nobody here wrote:
// mock-llm (npm @dwmkerr/mock-llm), configured by e2e/mock-llm-rules.yaml
// to answer Tavern's narrative, combat and data agents with tool calls.
// Like some real servers it streams a message's text but sends tool calls
// only without `stream`, and reports no usage. The script starts mock-llm
// and a Tavern pointed at it (OPENAI_BASE_URL; -model-streaming auto, the
// default), plays a table in the browser's own WebSocket from a character's
// arrival through a fight to its end, then asks the data agent a question.
//
// Usage: node e2e/mockllm.mjs (after `go build -o bin/tavern ./cmd/server`)
// Env: MOCKLLM_PORT (default 18093), TAVERN_MOCK_ADDR (default
// 127.0.0.1:18094), CHROMIUM (default /usr/bin/chromium), E2E_OUT
// (logs, default build/e2e).

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { assert, here, launchBrowser, logger, outDir, runMain, startProcess, startTavern, stopProcess, waitFor as poll } from './lib.mjs';

const mockPort = process.env.MOCKLLM_PORT || '18093';
const addr = process.env.TAVERN_MOCK_ADDR || '127.0.0.1:18094';
const base = `http://${addr}`;
const adminToken = 'e2e-mockllm-admin';
const WAIT = 30_000;
const { log, counts } = logger('e2e mockllm:');
const waitFor = (what, fn, timeout = WAIT) => poll(what, fn, timeout);

// play runs in the page: a player's whole game over the page's WebSocket.
async function play(page) {
  return page.evaluate(async (WAIT) => {
    const post = async (url, body, token) => {
      const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: 'Bearer ' + token } : {}) }, body: JSON.stringify(body) });
      const j = await r.json();
      if (!r.ok) throw new Error(`${url}: ${r.status} ${JSON.stringify(j)}`);
      return j;
    };
    const player = await post('/api/players', { name: 'Brunhild' });
    const table = await post('/api/tables', { name: 'Mock table' }, player.token);
    await post(`/api/tables/${table.id}/seats`, { character: { name: 'Brunhild', class: 'warrior' } }, player.token);
    const frames = [];
    const ws = new WebSocket(`${location.origin.replace('http', 'ws')}/ws/tables/${table.id}?role=player&token=${player.token}`, 'tavern.v1');
    ws.onmessage = (m) => frames.push(JSON.parse(m.data));
    await new Promise((ok, fail) => { ws.onopen = ok; ws.onerror = fail; });
    let seen = 0;
    const until = async (what, pred) => {
      const end = Date.now() + WAIT;
      for (;;) {
        for (; seen < frames.length; seen++) {
          if (pred(frames[seen])) return frames[seen++];
        }
        if (Date.now() > end) throw new Error(`no ${what}; frames: ${JSON.stringify(frames.slice(-5))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const event = (kind, pred = () => true) => until('event ' + kind, (f) => f.type === 'event' && f.kind === kind && pred(f));
    const act = async (id, text) => {
      ws.send(JSON.stringify({ type: 'act', id, text }));
      const a = await until('answer to ' + id, (f) => (f.type === 'ack' || f.type === 'error') && f.id === id);
      if (a.type !== 'ack') throw new Error(`act ${text}: ${JSON.stringify(a)}`);
    };
    const story = [];
    // The arrival's narration may be played before the socket joined: then
    // the snapshot's recent events hold it.
    const isArrival = (f) => f.kind === 'narration' && (f.data.text || '').includes('Greyhollow') && f.turn !== 't0';
    const snap = await until('snapshot', (f) => f.type === 'snapshot');
    const arrival = (snap.recent || []).find(isArrival) || await event('narration', isArrival);
    story.push(arrival.data.text);
    await act('m1', 'go to the old mill');
    story.push((await event('narration', (f) => (f.data.text || '').includes('mill'))).data.text);
    await act('k1', 'attack Snikket');
    story.push((await event('combat_started')).data.narration || 'combat started');
    const ended = await event('combat_ended');
    story.push(ended.data.outcome);
    ws.close();
    return { table: table.id, story };
  }, WAIT);
}

async function main() {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'tavern-mockllm-'));
  const procs = [];
  let browser;
  try {
    procs.push(startProcess('mock-llm', process.execPath, [path.join(here, 'node_modules/@dwmkerr/mock-llm/dist/main.js'), '--config', path.join(here, 'mock-llm-rules.yaml')],
      { HOST: '127.0.0.1', PORT: mockPort }));
    await waitFor('mock-llm', async () => (await fetch(`http://127.0.0.1:${mockPort}/health`)).ok);
    procs.push(await startTavern({ name: 'mockllm-server', addr, db: path.join(tmp, 'mock.db'), env: {
      OPENAI_BASE_URL: `http://127.0.0.1:${mockPort}/v1`, OPENAI_API_KEY: '', TAVERN_ADMIN_TOKEN: adminToken,
      TAVERN_MODEL: 'mock-gm', TAVERN_MODEL_STREAMING: 'auto',
    } }));
    await waitFor('Tavern', async () => (await fetch(base + '/readyz')).ok);

    browser = await launchBrowser();
    const page = await browser.newPage();
    await page.goto(base + '/');
    const game = await play(page);
    log('played', game.table + ':', game.story.join(' | '));
    assert(game.story.at(-1), 'the fight ended');

    const r = await fetch(base + '/api/admin/ask', { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + adminToken },
      body: JSON.stringify({ question: 'How many tables are there?' }) });
    const ask = await r.json();
    assert(r.ok, `ask: ${r.status} ${JSON.stringify(ask)}`);
    assert(!ask.offline, 'the data agent answered, not the offline analyst');
    assert(ask.steps.some((s) => s.sql && s.rows && s.rows.length === 1), `a query ran: ${JSON.stringify(ask.steps)}`);
    assert(ask.answer.includes('tables'), `answer: ${ask.answer}`);
    log('asked:', ask.answer);

    // mock-llm sends no usage: the console counts those calls' tokens and
    // cost as unknown, not as zero.
    const ov = await (await fetch(base + '/api/admin/overview', { headers: { Authorization: 'Bearer ' + adminToken } })).json();
    assert(ov.llm.usage_unknown > 0, `overview llm: ${JSON.stringify(ov.llm)}`);
    log('calls without usage:', ov.llm.usage_unknown, 'of', ov.llm.calls);

    const serverLog = await readFile(path.join(outDir, 'mockllm-server.log'), 'utf8');
    assert(serverLog.includes('tool calls only without streaming'), 'the server found out that mock-llm streams no tool calls');
    log('ok');
  } finally {
    if (browser) await browser.close();
    for (const p of procs) await stopProcess(p);
    await rm(tmp, { recursive: true, force: true });
  }
}

runMain(log, counts, () => main().catch((err) => {
  throw new Error(`${err.message} (logs in ${outDir})`, { cause: err });
}));
