// Interop test: the TypeScript SDK v2 client (@modelcontextprotocol/client
// with StdioClientTransport from '@modelcontextprotocol/client/stdio')
// launching the mrtrkit fixture server as a subprocess with -stdio, at MCP
// 2026-07-28: the SDK probes server/discover (on a disposable sibling
// process, as it does for stdio servers), then drives input_required
// rounds message by message on the session's process. Each test has a
// process of its own and ends by closing the client, which ends the
// child's stdin; the child must then exit with status 0 by itself, before
// the SDK would signal it.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { fillForm as fillFormFor, record, stdioSessionTests, textOf, watchSession } from '../../harness/harness.mjs';
import { fixtureBinary } from '../../harness/servers.mjs';

const MODERN = '2026-07-28';
const ANSWER_NAME = 'Alice';
const ANSWER_SAMPLING = 'The capital of France is Paris.';
const ROOT = { uri: 'file:///tmp/mrtrkit-interop', name: 'interop root' };

let fixture;

before(() => {
    fixture = fixtureBinary();
});

after(() => fixture?.cleanup());

const fillForm = schema => fillFormFor(schema, ANSWER_NAME);

/**
 * Starts the fixture with -stdio through StdioClientTransport and connects a
 * TS v2 client with elicitation, sampling and roots and the SDK's automatic
 * input_required driver.
 */
async function connectStdio() {
    const wire = [];
    const stderr = [];
    const inputs = { elicit: 0, sampling: 0, roots: 0 };
    const transport = new StdioClientTransport({ command: fixture.bin, args: ['-stdio'], stderr: 'pipe' });
    transport.stderr.on('data', d => stderr.push(String(d)));
    record(transport, wire);
    const client = new Client(
        { name: 'mrtrkit-interop-ts-stdio', version: '1.0.0' },
        {
            capabilities: { elicitation: { form: {} }, sampling: {}, roots: {} },
            versionNegotiation: { mode: 'auto' },
            inputRequired: { autoFulfill: true, maxRounds: 10 }
        }
    );
    client.setRequestHandler('elicitation/create', async request => {
        inputs.elicit++;
        return { action: 'accept', content: fillForm(request.params.requestedSchema) };
    });
    client.setRequestHandler('sampling/createMessage', async () => {
        inputs.sampling++;
        return { role: 'assistant', content: { type: 'text', text: ANSWER_SAMPLING }, model: 'interop-model', stopReason: 'endTurn' };
    });
    client.setRequestHandler('roots/list', async () => {
        inputs.roots++;
        return { roots: [ROOT] };
    });
    const errors = [];
    client.onerror = err => errors.push(err);
    await client.connect(transport, { timeout: 30_000 });
    return {
        client,
        wire,
        inputs,
        stderr,
        errors,
        ...watchSession(client, transport, wire, stderr)
    };
}

const call = (s, name, options = {}) => s.client.callTool({ name, arguments: {} }, { timeout: 30_000, ...options });

/**
 * Checks a 2026-07-28 session's pipe: the client never sends initialize,
 * every request it sends claims 2026-07-28 in _meta, and the child sends no
 * request of its own.
 */
function checkWire(s) {
    for (const { sent, msg } of s.wire) {
        if (sent && msg.method === 'initialize') assert.fail(`initialize sent\n${s.dump()}`);
        if (sent && msg.method && msg.id !== undefined) {
            assert.equal(msg.params?._meta?.['io.modelcontextprotocol/protocolVersion'], MODERN, `${msg.method} _meta protocolVersion`);
        }
        if (!sent && msg.method && msg.id !== undefined) assert.fail(`a server-to-client request at ${MODERN}: ${JSON.stringify(msg)}`);
    }
}

describe('TypeScript SDK v2 client over stdio (2026-07-28)', () => {
    test('connect negotiates 2026-07-28 on the pipe', async () => {
        const s = await connectStdio();
        try {
            assert.equal(s.client.getNegotiatedProtocolVersion(), MODERN);
            assert.equal(s.client.getServerVersion()?.name, 'mrtrkit-conformance-server');
            assert.equal(textOf(await call(s, 'test_simple_text')), 'This is a simple text response for testing.');
            checkWire(s);
        } finally {
            await s.close();
        }
    });

    test('three rounds: elicitation, then sampling, then roots, by input_required', async () => {
        const s = await connectStdio();
        try {
            const result = await call(s, 'test_three_rounds');
            assert.equal(textOf(result), `Three rounds completed: elicitation=${ANSWER_NAME}; sampling=${ANSWER_SAMPLING}; roots=${ROOT.uri}`);
            assert.deepEqual(s.inputs, { elicit: 1, sampling: 1, roots: 1 });
            const legs = s.wire.filter(w => w.sent && w.msg.method === 'tools/call').map(w => w.msg);
            const answers = legs.map(leg => s.wire.find(w => !w.sent && !w.msg.method && w.msg.id === leg.id)?.msg.result);
            assert.deepEqual(
                answers.map(a => a?.resultType),
                ['input_required', 'input_required', 'input_required', 'complete'],
                s.dump()
            );
            assert.deepEqual(
                answers.slice(0, 3).map(a => Object.values(a.inputRequests).map(r => r.method)),
                [['elicitation/create'], ['sampling/createMessage'], ['roots/list']]
            );
            assert.equal(new Set(legs.map(l => l.id)).size, 4, 'a fresh id on every leg');
            legs.forEach((leg, i) => {
                if (i === 0) return assert.equal(leg.params.requestState, undefined);
                assert.equal(leg.params.requestState, answers[i - 1].requestState, `leg ${i} echoes requestState`);
                assert.deepEqual(Object.keys(leg.params.inputResponses), Object.keys(answers[i - 1].inputRequests), `leg ${i} answers the keys asked`);
            });
            checkWire(s);
        } finally {
            await s.close();
        }
    });

    stdioSessionTests({ connect: connectStdio, call, checkWire });
});
