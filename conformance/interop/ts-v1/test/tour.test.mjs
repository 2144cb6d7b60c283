// Interop: the TypeScript SDK v1 client (MCP 2025-11-25) completes
// examples/tour, the reference server: every tool (greet's form and haiku's
// completion answered by this client's handlers as real server-to-client
// requests), the resource and the prompt, over Streamable HTTP (the tour's
// endpoint serves this era by default, through the bridge) and over stdio
// (the tour started with -stdio as a subprocess).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { answers, checkWire, connectV1, fillForm, legacyVersion, textOf } from './client.mjs';
import { startTour, tourBinary } from '../../harness/servers.mjs';

// exercise calls every tool of the tour, reads its resource and gets its
// prompt, and checks the answers.
async function exercise(client) {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map(t => t.name).sort(), ['greet', 'haiku', 'sum']);

    const sum = await client.callTool({ name: 'sum', arguments: { a: 2, b: 3.5 } });
    assert.ok(!sum.isError, JSON.stringify(sum));
    // The SDK checked structuredContent against sum's outputSchema.
    assert.deepEqual(sum.structuredContent, { total: 5.5 });
    const wrong = await client.callTool({ name: 'sum', arguments: { a: 'two', b: 3 } });
    assert.equal(wrong.isError, true, JSON.stringify(wrong));
    assert.match(textOf(wrong), /a must be a number/);

    assert.equal(textOf(await client.callTool({ name: 'greet', arguments: {} })), `Hello, ${answers.name}!`);
    assert.equal(textOf(await client.callTool({ name: 'haiku', arguments: {} })), answers.sampling);

    const { contents } = await client.readResource({ uri: 'tour://about' });
    assert.equal(contents.length, 1);
    assert.equal(contents[0].mimeType, 'text/plain');
    assert.match(contents[0].text, /tour/);

    const prompt = await client.getPrompt({ name: 'review', arguments: { code: 'x := 1' } });
    assert.deepEqual(prompt.messages, [{ role: 'user', content: { type: 'text', text: 'Please review this Go code:\n\nx := 1' } }]);
}

describe('TypeScript SDK v1 client and the tour example over HTTP (MCP 2025-11-25)', () => {
    let tour;
    before(async () => {
        tour = await startTour();
    });
    after(async () => {
        await tour?.stop();
    });

    test('every tool, the resource and the prompt', async () => {
        const s = await connectV1(tour.url);
        try {
            assert.equal(s.transport.protocolVersion, legacyVersion);
            assert.equal(s.client.getServerVersion()?.name, 'tour');
            await exercise(s.client);
            assert.deepEqual(s.requests.map(r => r.method), ['elicitation/create', 'sampling/createMessage']);
            await checkWire(s);
        } catch (err) {
            console.error(`wire:\n${s.wire.dump()}\ntour log (tail):\n${tour.log.join('').slice(-4000)}`);
            throw err;
        } finally {
            await s.close();
        }
    });

    test('a declined form is greeted anyway, and not asked again', async () => {
        const s = await connectV1(tour.url, { elicit: async () => ({ action: 'decline' }) });
        try {
            assert.equal(textOf(await s.client.callTool({ name: 'greet', arguments: {} })), 'Hello, whoever you are!');
            assert.equal(s.requests.length, 1);
            await checkWire(s);
        } finally {
            await s.close();
        }
    });

    test('a client without the sampling capability is told what is missing', async () => {
        const s = await connectV1(tour.url, {}, { capabilities: { elicitation: { form: {} } } });
        try {
            const res = await s.client.callTool({ name: 'haiku', arguments: {} });
            assert.equal(res.isError, true, JSON.stringify(res));
            assert.match(textOf(res), /sampling capability/);
            assert.equal(s.requests.length, 0, 'nothing was asked');
            await checkWire(s);
        } finally {
            await s.close();
        }
    });
});

describe('TypeScript SDK v1 client and the tour example over stdio (MCP 2025-11-25)', () => {
    let tour;
    before(() => {
        tour = tourBinary();
    });
    after(() => tour?.cleanup());

    test('every tool, the resource and the prompt', async () => {
        const stderr = [];
        const transport = new StdioClientTransport({ command: tour.bin, args: ['-stdio'], stderr: 'pipe' });
        transport.stderr.on('data', d => stderr.push(String(d)));
        const client = new Client(
            { name: 'mrtrkit-interop-ts1-stdio', version: '1.0.0' },
            { capabilities: { elicitation: { form: {} }, sampling: {} } }
        );
        const asked = [];
        client.setRequestHandler(ElicitRequestSchema, async req => {
            asked.push('elicitation/create');
            return { action: 'accept', content: fillForm(req.params.requestedSchema) };
        });
        client.setRequestHandler(CreateMessageRequestSchema, async () => {
            asked.push('sampling/createMessage');
            return { role: 'assistant', model: 'interop-model', stopReason: 'endTurn', content: { type: 'text', text: answers.sampling } };
        });
        await client.connect(transport);
        try {
            assert.equal(client.getServerVersion()?.name, 'tour');
            await exercise(client);
            assert.deepEqual(asked, ['elicitation/create', 'sampling/createMessage']);
        } catch (err) {
            console.error(`tour stderr:\n${stderr.join('')}`);
            throw err;
        } finally {
            await client.close();
        }
    });
});
