import { env, listDurableObjectIds, runInDurableObject } from 'cloudflare:test';
import { it } from 'vitest';
import { api, createRun, runStub } from './helpers.ts';

it('scratch', async () => {
  const before = (await listDurableObjectIds(env.RUNS)).map(String);
  console.log('before', before.length);
  const { json } = await createRun();
  const after = (await listDurableObjectIds(env.RUNS)).map(String);
  console.log('after', after.length, after.includes(env.RUNS.idFromName(json.runId).toString()));
  const r = await api('/runs/run_' + 'a'.repeat(32));
  console.log('get unknown', r.status);
  const after2 = (await listDurableObjectIds(env.RUNS)).map(String);
  console.log('after unknown GET', after2.length, after2.includes(env.RUNS.idFromName('run_' + 'a'.repeat(32)).toString()));
  await runInDurableObject(runStub(json.runId), (_o, state) => {
    try { console.log('total_changes', state.storage.sql.exec('SELECT total_changes() AS n').one()); } catch (e) { console.log('tc err', String(e)); }
    try { console.log('changes', state.storage.sql.exec('SELECT changes() AS n').one()); } catch (e) { console.log('c err', String(e)); }
    try { console.log('data_version', state.storage.sql.exec('PRAGMA data_version').toArray()); } catch (e) { console.log('dv err', String(e)); }
    console.log('size', state.storage.sql.databaseSize);
    const c = state.storage.sql.exec("INSERT INTO events (first_seq,last_seq,chunks,appended_at) VALUES (1000,1000,'{}',0)");
    console.log('rw', c.rowsWritten);
    console.log(state.storage.sql.exec("SELECT name FROM sqlite_master").toArray());
  });
  // chunked body
  const big = new Uint8Array(1_100_000).fill(0x20);
  const stream = new ReadableStream({ start(c) { c.enqueue(big.subarray(0, 600000)); c.enqueue(big.subarray(600000)); c.close(); } });
  try {
    const res = await api('/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
    console.log('chunked', res.status, await res.text());
  } catch (e) { console.log('chunked err', String(e)); }
});
