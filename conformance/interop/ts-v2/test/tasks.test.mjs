// Interop test: the TypeScript SDK v2 client (@modelcontextprotocol/client)
// driving the Tasks extension (SEP-2663) of the mrtrkit fixture by hand at
// 2026-07-28. The client declares the extension per request, but (2.4.0)
// refuses a CreateTaskResult with UNSUPPORTED_RESULT_TYPE and drops its
// taskId; the test reads the id from the wire through the transport's
// fetch, then polls, answers and completes the task with client.request().

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { startFixture, withToken } from '../../harness/servers.mjs';

const TASKS = 'io.modelcontextprotocol/tasks';
const anyResult = { '~standard': { version: 1, vendor: 'mrtrkit-interop', validate: value => ({ value }) } };

let fixture;
before(async () => {
    fixture = await startFixture();
});
after(async () => {
    await fixture?.stop();
});

test('a task with an input round, driven by the TypeScript client', async () => {
    const created = [];
    const fetchTap = async (url, init = {}) => {
        const res = await fetch(url, withToken(init));
        if ((res.headers.get('content-type') ?? '').startsWith('application/json')) {
            const body = await res.clone().json().catch(() => null);
            if (body?.result?.resultType === 'task') created.push(body.result);
        }
        return res;
    };
    const client = new Client(
        { name: 'mrtrkit-interop-ts-tasks', version: '1.0.0' },
        {
            capabilities: { elicitation: { form: {} }, extensions: { [TASKS]: {} } },
            versionNegotiation: { mode: 'auto' },
            inputRequired: { autoFulfill: false }
        }
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(fixture.url), { fetch: fetchTap }), { timeout: 30_000 });
    try {
        await assert.rejects(
            client.request({ method: 'tools/call', params: { name: 'confirm_delete', arguments: { filename: 'ts.txt' } } }, anyResult),
            e => e.code === 'UNSUPPORTED_RESULT_TYPE' && e.data?.resultType === 'task'
        );
        assert.equal(created.length, 1, 'the server answered a CreateTaskResult');
        const { taskId, status, ttlMs } = created[0];
        assert.equal(status, 'working');
        assert.ok(Number.isInteger(ttlMs));

        const get = () => client.request({ method: 'tasks/get', params: { taskId } }, anyResult);
        let task;
        for (let i = 0; i < 100; i++) {
            task = await get();
            if (task.status !== 'working') break;
            await new Promise(r => setTimeout(r, 50));
        }
        assert.equal(task.status, 'input_required');
        const keys = Object.keys(task.inputRequests);
        assert.equal(keys.length, 1);
        assert.equal(task.inputRequests[keys[0]].method, 'elicitation/create');

        const ack = await client.request(
            { method: 'tasks/update', params: { taskId, inputResponses: { [keys[0]]: { action: 'accept', content: { confirm: true } } } } },
            anyResult
        );
        assert.equal(ack.taskId, undefined);
        for (let i = 0; i < 100; i++) {
            task = await get();
            if (task.status !== 'working' && task.status !== 'input_required') break;
            await new Promise(r => setTimeout(r, 50));
        }
        assert.equal(task.status, 'completed');
        assert.match(task.result.content[0].text, /Deleted ts\.txt/);
    } finally {
        await client.close();
    }
});
