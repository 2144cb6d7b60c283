// Interop test: the TypeScript SDK v1 client (@modelcontextprotocol/sdk
// Client with StdioClientTransport) launching the mrtrkit fixture server as
// a subprocess with -stdio, at MCP 2025-11-25: initialize, then the
// fixture's questions as real server-to-client requests on the child's
// stdout, answered on its stdin. Each test has a process of its own and
// ends by closing the client, which ends the child's stdin; the child must
// then exit with status 0 by itself, before the SDK would signal it.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { answers, fillForm, legacyVersion } from './client.mjs';
import { bound, record, stdioSessionTests, textOf, watchSession } from '../../harness/harness.mjs';
import { defaultLegTimeoutMs, fixtureBinary } from '../../harness/servers.mjs';

const lateMessage = 'Answer this after the leg timeout, or never';
const modernMembers = ['"resultType"', '"inputRequests"', '"requestState"', '"ttlMs"', '"cacheScope"', 'io.modelcontextprotocol/serverInfo'];

let fixture;

before(() => {
    fixture = fixtureBinary();
});

after(() => fixture?.cleanup());

/**
 * Starts the fixture with -stdio through StdioClientTransport and connects a
 * TS v1 client with elicitation, sampling and roots. hooks.elicit may
 * replace the elicitation handler.
 */
async function connectStdio(hooks = {}) {
    const wire = [];
    const requests = [];
    const stderr = [];
    const transport = new StdioClientTransport({
        command: fixture.bin,
        args: ['-stdio', '-leg-timeout', `${defaultLegTimeoutMs}ms`],
        stderr: 'pipe'
    });
    transport.stderr.on('data', d => stderr.push(String(d)));
    record(transport, wire);
    const client = new Client(
        { name: 'mrtrkit-interop-ts1-stdio', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } } }
    );
    client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
        requests.push({ method: 'elicitation/create', id: extra.requestId });
        if (hooks.elicit) return hooks.elicit(req, extra);
        return { action: 'accept', content: fillForm(req.params.requestedSchema) };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (_req, extra) => {
        requests.push({ method: 'sampling/createMessage', id: extra.requestId });
        return { role: 'assistant', model: 'interop-model', stopReason: 'endTurn', content: { type: 'text', text: answers.sampling } };
    });
    client.setRequestHandler(ListRootsRequestSchema, async (_req, extra) => {
        requests.push({ method: 'roots/list', id: extra.requestId });
        return { roots: [{ uri: answers.rootURI, name: answers.rootName }] };
    });
    const errors = [];
    client.onerror = err => errors.push(err);
    await client.connect(transport);
    return {
        client,
        transport,
        wire,
        requests,
        stderr,
        errors,
        ...watchSession(client, transport, wire, stderr)
    };
}

const call = (s, name, options = {}) => s.client.callTool({ name, arguments: {} }, undefined, { timeout: 30_000, ...options });

/**
 * Checks a 2025-11-25 session's pipe: no message from the child carries a
 * member of the 2026-07-28 wire, and every server-to-client request has an
 * integer id of at least 1.
 */
function checkWire(s) {
    for (const { sent, msg } of s.wire) {
        if (sent) continue;
        const raw = JSON.stringify(msg);
        for (const m of modernMembers) assert.ok(!raw.includes(m), `a message from the child carries ${m}: ${raw}`);
        if (msg.method && msg.id !== undefined) {
            assert.ok(Number.isInteger(msg.id) && msg.id >= 1, `server request ${msg.method} has id ${JSON.stringify(msg.id)}`);
        }
    }
}

describe('TypeScript SDK v1 client over stdio (2025-11-25)', () => {
    test('connect: initialize negotiates 2025-11-25 on the pipe', async () => {
        const s = await connectStdio();
        try {
            assert.equal(s.client.getServerVersion()?.name, 'mrtrkit-conformance-server');
            const sentMethods = s.wire.filter(w => w.sent && w.msg.method).map(w => w.msg.method);
            assert.deepEqual(sentMethods.slice(0, 2), ['initialize', 'notifications/initialized'], s.dump());
            assert.ok(!sentMethods.includes('server/discover'), s.dump());
            const init = s.wire.find(w => !w.sent && w.msg.id === s.wire[0].msg.id);
            assert.equal(init?.msg.result?.protocolVersion, legacyVersion, s.dump());
            assert.equal(textOf(await call(s, 'test_simple_text')), 'This is a simple text response for testing.');
            checkWire(s);
        } finally {
            await s.close();
        }
    });

    test('three rounds: elicitation, sampling, roots as real requests on the pipe', async () => {
        const s = await connectStdio();
        try {
            const result = await call(s, 'test_three_rounds');
            assert.equal(
                textOf(result),
                `Three rounds completed: elicitation=${answers.name}; sampling=${answers.sampling}; roots=${answers.rootURI}`
            );
            assert.deepEqual(
                s.requests.map(r => r.method),
                ['elicitation/create', 'sampling/createMessage', 'roots/list'],
                s.dump()
            );
            const ids = s.requests.map(r => r.id);
            assert.equal(new Set(ids).size, 3, `distinct ids ${ids}`);
            for (const id of ids) {
                assert.ok(
                    s.wire.some(w => w.sent && w.msg.id === id && w.msg.result && !w.msg.method),
                    `the client answered request ${id}\n${s.dump()}`
                );
            }
            assert.equal(s.wire.filter(w => w.sent && w.msg.method === 'tools/call').length, 1, 'one tools/call');
            checkWire(s);
        } finally {
            await s.close();
        }
    });

    test('cancel mid-leg: the server withdraws its open question before the leg timeout', async () => {
        let asked;
        const askedP = new Promise(r => (asked = r));
        let withdrawn;
        const withdrawnP = new Promise(r => (withdrawn = r));
        const s = await connectStdio({
            elicit: async (req, extra) => {
                if (req.params.message !== lateMessage) return { action: 'accept', content: fillForm(req.params.requestedSchema) };
                asked();
                await new Promise(resolve => {
                    extra.signal.addEventListener('abort', () => {
                        withdrawn(Date.now());
                        resolve();
                    });
                });
                return { action: 'decline' };
            }
        });
        try {
            const ac = new AbortController();
            const pending = call(s, 'test_leg_timeout', { signal: ac.signal });
            pending.catch(() => {});
            await Promise.race([askedP, bound(10_000).then(() => assert.fail('the question was not asked'))]);
            const cancelledAt = Date.now();
            ac.abort('interop cancel');
            await assert.rejects(pending);
            const at = await Promise.race([withdrawnP, bound(defaultLegTimeoutMs + 5000).then(() => undefined)]);
            assert.ok(at, `the elicitation handler's signal did not fire\n${s.dump()}`);
            assert.ok(at - cancelledAt < defaultLegTimeoutMs, `withdrawn ${at - cancelledAt} ms after the cancellation, not before the leg timeout`);
            const leg = s.requests.find(r => r.method === 'elicitation/create');
            assert.ok(
                s.wire.some(w => !w.sent && w.msg.method === 'notifications/cancelled' && w.msg.params.requestId === leg.id),
                `no notifications/cancelled from the server for its question ${leg.id}\n${s.dump()}`
            );
            assert.equal(textOf(await call(s, 'test_simple_text')), 'This is a simple text response for testing.');
            checkWire(s);
        } finally {
            await s.close();
        }
    });

    stdioSessionTests({ connect: connectStdio, call, checkWire });
});
