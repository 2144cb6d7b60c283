// The TypeScript SDK v1 client (MCP 2025-11-25) when the replica running
// its bridged call is killed: run by redis/scaleout/run.sh (phase
// kill-ts1, node test/scaleout-kill.mjs) against replicas sharing Redis
// behind round-robin nginx. The replica that asks the call's first
// question is killed with SIGKILL while the client answers it: the call
// must fail (the SDK waits for its request timeout), and the session must
// go on, on the replicas left, without a new initialize.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const proxyURL = process.env.SCALEOUT_PROXY_URL;
const pids = Object.fromEntries(
    (process.env.SCALEOUT_PIDS ?? '')
        .split(',')
        .filter(Boolean)
        .map(kv => kv.split('='))
        .map(([k, v]) => [k, Number(v)])
);

function alive(pid) {
    try {
        process.kill(pid, 0);
        return true;
    } catch {
        return false;
    }
}

test('TS SDK v1 at 2025-11-25: the replica running its call is killed mid-call', async () => {
    assert.ok(proxyURL && Object.keys(pids).length >= 2, 'SCALEOUT_PROXY_URL and SCALEOUT_PIDS are not set: run redis/scaleout/run.sh');
    let killed;
    const client = new Client({ name: 'mrtrkit-scaleout-ts1', version: '1.0.0' }, { capabilities: { elicitation: { form: {} }, sampling: {} } });
    client.setRequestHandler(ElicitRequestSchema, async req => {
        for (const [name, pid] of Object.entries(pids)) {
            if (!killed && req.params.message.includes(`(replica ${name})`) && alive(pid)) {
                killed = name;
                process.kill(pid, 'SIGKILL');
            }
        }
        return { action: 'accept', content: { name: 'killed' } };
    });
    const transport = new StreamableHTTPClientTransport(new URL(proxyURL));
    await client.connect(transport);
    try {
        // The SDK does not take the end of the call's stream for the end of
        // the call: it waits for its request timeout (60 s by default; 10 s
        // here) and rejects with -32001 Request timed out.
        let failure;
        try {
            const res = await client.callTool({ name: 'relay', arguments: {} }, undefined, { timeout: 10_000 });
            failure = `the call returned ${JSON.stringify(res)}`;
        } catch (err) {
            console.log(`# the bridged call on replica ${killed}, killed mid-call: callTool rejected: ${err.message}`);
            assert.equal(err.code, -32001, `callTool rejected with ${err.message}; want the SDK's request timeout (-32001)`);
        }
        assert.ok(killed, 'no question named a live replica to kill');
        assert.equal(failure, undefined, `the call on the killed replica ${killed} did not fail: ${failure}`);

        for (let i = 0; i < 3; i++) {
            let res;
            try {
                res = await client.callTool({ name: 'whoami', arguments: {} });
            } catch (err) {
                // Just after a kill, nginx may answer 502 for a request it
                // sent over a kept-alive connection to the dead replica
                // (docs/deployment.md): the client retries once.
                assert.ok(i === 0 && /502|Bad Gateway/.test(err.message), `call ${i} after the kill: ${err.message}`);
                console.log(`# the first call after the kill got 502 (${err.message}): retried`);
                res = await client.callTool({ name: 'whoami', arguments: {} });
            }
            const text = (res.content ?? []).map(c => c.text).join('\n');
            assert.ok(!res.isError && text.startsWith('replica='), `call ${i}: ${JSON.stringify(res)}`);
            assert.ok(!text.startsWith(`replica=${killed} `), `served by the killed replica: ${text}`);
            console.log(`# the same session, call ${i}: ${text}`);
        }
    } finally {
        await client.close();
    }
});
