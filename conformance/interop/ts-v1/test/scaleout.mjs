// The TypeScript SDK v1 client (MCP 2025-11-25, sessions) against the
// scale-out deployment of redis/scaleout/run.sh: three replicas sharing
// Redis behind nginx with round-robin balancing and no affinity. Run by
// that script (node test/scaleout.mjs), which describes the deployment in
// SCALEOUT_* variables; without them it fails.
//
// relay asks three questions (an elicitation, a sampling request, an
// elicitation), each naming the replica that runs the call. The client
// POSTs each answer through nginx, which places it on whichever replica
// comes next: answers land on other replicas than the call's, and every
// call must complete all the same.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const proxyURL = process.env.SCALEOUT_PROXY_URL;

/** Connects through nginx at 2025-11-25, recording the replica behind every POST. */
async function connect(tag) {
    const posts = [];
    const asked = [];
    const fetchRecorded = async (url, init = {}) => {
        let msg;
        if (typeof init.body === 'string') {
            try {
                msg = JSON.parse(init.body);
            } catch {
                msg = undefined;
            }
        }
        if ((init.method ?? 'GET') !== 'POST') return fetch(url, init);
        const entry = { msg, status: 0, replica: undefined };
        posts.push(entry);
        const p = fetch(url, init).then(res => {
            entry.status = res.status;
            entry.replica = res.headers.get('x-replica');
            return res;
        });
        pending.push(p.catch(() => {}));
        return p;
    };
    const pending = [];
    // Waits until every POST so far has its status: the call's result can
    // come before the 202 of the last answer.
    const settled = async () => {
        for (let n = 0; n !== pending.length; ) {
            n = pending.length;
            await Promise.all(pending);
        }
    };
    const client = new Client({ name: 'mrtrkit-scaleout-ts1', version: '1.0.0' }, { capabilities: { elicitation: { form: {} }, sampling: {} } });
    client.setRequestHandler(ElicitRequestSchema, async req => {
        asked.push(`elicitation/create: ${req.params.message}`);
        const fields = Object.keys(req.params.requestedSchema?.properties ?? {});
        if (fields.includes('name')) return { action: 'accept', content: { name: tag } };
        return { action: 'accept', content: { colour: `teal-${tag}` } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async req => {
        asked.push(`sampling/createMessage: ${req.params.messages?.[0]?.content?.text ?? ''}`);
        return { role: 'assistant', model: 'scaleout', stopReason: 'endTurn', content: { type: 'text', text: `hello ${tag}` } };
    });
    const transport = new StreamableHTTPClientTransport(new URL(proxyURL), { fetch: fetchRecorded });
    await client.connect(transport);
    return { client, transport, posts, asked, settled };
}

test('TS SDK v1 at 2025-11-25: three-round calls through round-robin nginx, answers landing on other replicas', async () => {
    assert.ok(proxyURL, 'SCALEOUT_PROXY_URL is not set: run redis/scaleout/run.sh');
    let elsewhere = 0;
    for (let i = 0; i < 4; i++) {
        const tag = `ts1-${i}`;
        const s = await connect(tag);
        try {
            assert.equal(s.transport.protocolVersion, '2025-11-25');
            const mark = s.posts.length;
            const res = await s.client.callTool({ name: 'relay', arguments: {} }, undefined, { timeout: 60_000 });
            await s.settled();
            const mine = s.posts.slice(mark);
            const call = mine.find(p => p.msg?.method === 'tools/call');
            assert.ok(call?.replica, `the tools/call POST names its replica: ${JSON.stringify(mine)}`);
            const holder = call.replica;
            const answers = mine.filter(p => p.msg && !('method' in p.msg) && 'id' in p.msg);
            const text = (res.content ?? []).map(c => c.text).join('\n');
            assert.ok(!res.isError, `call ${i}: ${text}`);
            assert.equal(text, `name=${tag}; sample=hello ${tag}; colour=teal-${tag}; served=${[holder, holder, holder, holder].join(',')}`);
            assert.equal(s.asked.length, 3, `questions: ${s.asked}`);
            for (const q of s.asked) assert.ok(q.includes(`(replica ${holder})`), `question ${q} comes from the call's replica ${holder}`);
            assert.equal(answers.length, 3, `answers: ${JSON.stringify(answers)}`);
            for (const a of answers) {
                assert.equal(a.status, 202, `an answer is accepted with 202: ${JSON.stringify(a)}`);
                if (a.replica !== holder) elsewhere++;
            }
            console.log(`# call ${i}: ran on ${holder}; answers served by ${answers.map(a => a.replica).join(', ')}`);
        } finally {
            await s.client.close();
        }
    }
    assert.ok(elsewhere > 0, 'no answer landed on a replica other than its call\'s: nothing was proved');
    console.log(`# ${elsewhere} answers landed on another replica than their call's; every call completed`);
});
