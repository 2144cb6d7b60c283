// Interop: the TypeScript SDK v1 client (@modelcontextprotocol/sdk 1.x,
// MCP 2025-11-25: initialize, Mcp-Session-Id, server-to-client requests)
// against the mrtrkit conformance fixture server, which serves that era
// through package mrtr/legacy on its one Streamable HTTP endpoint.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { McpError } from '@modelcontextprotocol/sdk/types.js';

import { aborted, answers, checkWire, connectV1, fillForm, legacyVersion, sleep, textOf, within, Wire } from './client.mjs';

const lateMessage = 'Answer this after the leg timeout, or never';
import { startFixture, withToken } from '../../harness/servers.mjs';

let fixture;

before(async () => {
    fixture = await startFixture({ legTimeout: true });
});

after(async () => {
    await fixture?.stop();
});

// withSession runs fn with a connected client and closes it after; on
// failure it prints the session's wire and the fixture's log.
async function withSession(hooks, fn) {
    const s = await connectV1(fixture.url, hooks);
    try {
        await fn(s);
    } catch (err) {
        await Promise.race([s.wire.settled(), sleep(500)]);
        console.error(`wire:\n${s.wire.dump()}\nfixture log (tail):\n${fixture.log.join('').slice(-4000)}`);
        throw err;
    } finally {
        await s.close();
    }
}

describe('TypeScript SDK v1 client, MCP 2025-11-25 session', () => {
    test('initialize negotiates 2025-11-25 and opens a session', async () => {
        await withSession({}, async s => {
            assert.equal(s.transport.protocolVersion, legacyVersion);
            assert.equal(s.client.getServerVersion()?.name, 'mrtrkit-conformance-server');
            const caps = s.client.getServerCapabilities();
            assert.ok(caps?.tools && caps?.prompts && caps?.resources?.subscribe && caps?.logging, JSON.stringify(caps));
            await s.wire.settled();
            const init = s.wire.exchanges.find(ex => ex.msg?.method === 'initialize');
            assert.equal(init.status, 200);
            assert.ok(init.sessionId, 'initialize answers with Mcp-Session-Id');
            const [res] = Wire.messages(init);
            assert.equal(res.result.protocolVersion, legacyVersion);
            assert.equal(res.result.resultType, undefined, 'no resultType in the initialize result');
            const initialized = s.wire.exchanges.find(ex => ex.msg?.method === 'notifications/initialized');
            assert.equal(initialized?.status, 202, 'notifications/initialized is accepted with 202');
            await checkWire(s);
        });
    });

    test('ping, logging/setLevel, resources/subscribe and unsubscribe answer exactly {}', async () => {
        await withSession({}, async s => {
            const mark = s.wire.mark();
            // The SDK validates these against its strict EmptyResult schema:
            // any extra member would make it throw.
            assert.deepEqual(await s.client.ping(), {});
            assert.deepEqual(await s.client.setLoggingLevel('debug'), {});
            assert.deepEqual(await s.client.subscribeResource({ uri: 'test://watched-resource' }), {});
            assert.deepEqual(await s.client.unsubscribeResource({ uri: 'test://watched-resource' }), {});
            await s.wire.settled();
            for (const ex of s.wire.since(mark).filter(ex => ex.msg?.method)) {
                const [m] = Wire.messages(ex);
                assert.deepEqual(m.result, {}, `${ex.msg.method}: ${ex.body}`);
            }
            await checkWire(s, mark);
        });
    });

    test('lists and a plain call', async () => {
        await withSession({}, async s => {
            const { tools } = await s.client.listTools();
            const names = tools.map(t => t.name);
            for (const n of ['test_simple_text', 'test_three_rounds', 'test_leg_timeout']) assert.ok(names.includes(n), n);
            const { prompts } = await s.client.listPrompts();
            assert.ok(prompts.some(p => p.name === 'test_input_required_result_prompt'));
            const { resources } = await s.client.listResources();
            assert.ok(resources.some(r => r.uri === 'test://input-required-resource'));
            const res = await s.client.callTool({ name: 'test_simple_text', arguments: {} });
            assert.equal(textOf(res), 'This is a simple text response for testing.');
            await checkWire(s);
        });
    });

    test('a handler of three rounds: elicitation, then sampling, then roots', async () => {
        await withSession({}, async s => {
            const mark = s.wire.mark();
            const res = await s.client.callTool({ name: 'test_three_rounds', arguments: {} });
            assert.ok(!res.isError, JSON.stringify(res));
            assert.equal(
                textOf(res),
                `Three rounds completed: elicitation=${answers.name}; sampling=${answers.sampling}; roots=${answers.rootURI}`
            );
            // One real request per round, in order, with fresh ids >= 1.
            assert.deepEqual(
                s.requests.map(r => r.method),
                ['elicitation/create', 'sampling/createMessage', 'roots/list']
            );
            const ids = s.requests.map(r => r.id);
            assert.ok(ids.every(id => Number.isInteger(id) && id >= 1), `leg ids ${ids}`);
            assert.equal(new Set(ids).size, 3, `leg ids are distinct: ${ids}`);
            await checkWire(s, mark);
            // The three answers were POSTed and accepted.
            const answersPosted = s.wire.since(mark).filter(ex => ex.msg && !('method' in ex.msg));
            assert.deepEqual(
                answersPosted.map(ex => [ex.msg.id, ex.status]),
                ids.map(id => [id, 202])
            );
        });
    });

    test('MRTR prompts/get: the prompt asks by elicitation, then renders', async () => {
        await withSession({}, async s => {
            const res = await s.client.getPrompt({ name: 'test_input_required_result_prompt' });
            assert.deepEqual(
                s.requests.map(r => r.method),
                ['elicitation/create']
            );
            assert.equal(res.messages[0].content.text, 'Context: interop context');
            await checkWire(s);
        });
    });

    test('MRTR resources/read: the resource asks for roots, then is read', async () => {
        await withSession({}, async s => {
            const res = await s.client.readResource({ uri: 'test://input-required-resource' });
            assert.deepEqual(
                s.requests.map(r => r.method),
                ['roots/list']
            );
            assert.equal(res.contents[0].text, `Client roots: ${answers.rootURI}`);
            await checkWire(s);
        });
    });

    test('a refused leg: the handler throws, the tool returns isError naming the request', async () => {
        await withSession(
            {
                sample: async () => {
                    throw new McpError(-32600, 'the user declined to sample');
                }
            },
            async s => {
                const res = await s.client.callTool({ name: 'test_three_rounds', arguments: {} });
                assert.equal(res.isError, true, JSON.stringify(res));
                const text = textOf(res);
                assert.match(text, /refused the sampling\/createMessage request "sampling"/);
                assert.match(text, /the user declined to sample/);
                // The session goes on.
                const again = await s.client.callTool({ name: 'test_simple_text', arguments: {} });
                assert.ok(!again.isError);
                await checkWire(s);
            }
        );
    });

    test('a leg that times out, then a late answer: 202, and the session keeps working', async t => {
        let leg;
        await withSession(
            {
                elicit: async (req, extra) => {
                    if (req.params.message !== lateMessage) {
                        return { action: 'accept', content: fillForm(req.params.requestedSchema) };
                    }
                    leg = { id: extra.requestId, reason: aborted(extra.signal) };
                    // Answers too late: after the server's leg timeout. The SDK
                    // drops this answer, because the server cancelled the
                    // request when it timed out (the signal below).
                    await sleep(fixture.legTimeoutMs + 500);
                    return { action: 'accept', content: { answer: 'too late' } };
                }
            },
            async s => {
                const start = Date.now();
                const res = await s.client.callTool({ name: 'test_leg_timeout', arguments: {} });
                const took = Date.now() - start;
                assert.equal(res.isError, true, JSON.stringify(res));
                assert.match(textOf(res), /did not answer the elicitation\/create request "late" within/);
                assert.ok(took >= fixture.legTimeoutMs - 50, `the call ended after ${took} ms, before the leg timeout`);
                assert.ok(leg.id >= 1, `leg id ${leg.id}`);
                // The server told the client it no longer wants the answer:
                // notifications/cancelled for the leg id, which fires the
                // handler's AbortSignal (the SDK ignores id 0, hence ids >= 1).
                assert.equal(await within(1000, leg.reason, 'the leg handler AbortSignal'), 'timed out');

                // The late answer, as a client that ignores the cancellation
                // would send it, through the SDK's own transport (the SDK
                // itself drops an answer to a cancelled request).
                const mark = s.wire.mark();
                await s.transport.send({ jsonrpc: '2.0', id: leg.id, result: { action: 'accept', content: { answer: 'too late' } } });
                const [late] = s.wire.since(mark);
                assert.equal(late.status, 202, 'a late answer is accepted');
                // A later call on the same session succeeds.
                const again = await s.client.callTool({ name: 'test_three_rounds', arguments: {} });
                assert.ok(!again.isError, JSON.stringify(again));
                await checkWire(s);
                // Let the handler's sleep end before the session closes.
                await sleep(Math.max(0, fixture.legTimeoutMs + 600 - (Date.now() - start)));
            }
        );
    });

    test('a cancelled outer request (AbortSignal) cancels the open leg', async () => {
        const outer = new AbortController();
        let leg;
        await withSession(
            {
                elicit: async (req, extra) => {
                    if (req.params.message !== lateMessage) {
                        return { action: 'accept', content: fillForm(req.params.requestedSchema) };
                    }
                    leg = { id: extra.requestId, reason: aborted(extra.signal) };
                    // The user gives up on the tool call while this question is open.
                    outer.abort('the user gave up');
                    await leg.reason;
                    return { action: 'decline' };
                }
            },
            async s => {
                await assert.rejects(s.client.callTool({ name: 'test_leg_timeout', arguments: {} }, undefined, { signal: outer.signal }));
                assert.ok(leg, 'the leg was asked');
                assert.ok(leg.id >= 1, `leg id ${leg.id}`);
                const reason = await within(1500, leg.reason, 'the leg handler AbortSignal after the outer request was cancelled');
                assert.equal(reason, 'the request was cancelled');
                // The client sent notifications/cancelled for its call.
                await s.wire.settled();
                const cancel = s.wire.exchanges.find(ex => ex.msg?.method === 'notifications/cancelled');
                assert.equal(cancel?.status, 202);
                // The session keeps working.
                const again = await s.client.callTool({ name: 'test_three_rounds', arguments: {} });
                assert.ok(!again.isError, JSON.stringify(again));
                await checkWire(s);
            }
        );
    });

    test('a request timeout while a leg is open cancels the leg', async () => {
        let leg;
        await withSession(
            {
                elicit: async (req, extra) => {
                    if (req.params.message !== lateMessage) {
                        return { action: 'accept', content: fillForm(req.params.requestedSchema) };
                    }
                    leg = { id: extra.requestId, reason: aborted(extra.signal) };
                    await leg.reason;
                    return { action: 'decline' };
                }
            },
            async s => {
                await assert.rejects(s.client.callTool({ name: 'test_leg_timeout', arguments: {} }, undefined, { timeout: 1000 }), /timed out/i);
                assert.ok(leg?.id >= 1, `leg id ${leg?.id}`);
                assert.equal(await within(1500, leg.reason, 'the leg handler AbortSignal after the request timeout'), 'the request was cancelled');
                const again = await s.client.callTool({ name: 'test_simple_text', arguments: {} });
                assert.ok(!again.isError);
                await checkWire(s);
            }
        );
    });

    test('DELETE ends the session; its id is then unknown (404)', async () => {
        const s = await connectV1(fixture.url);
        try {
            const sid = s.transport.sessionId;
            await s.transport.terminateSession();
            const del = s.wire.exchanges.find(ex => ex.method === 'DELETE');
            assert.equal(del?.status, 204);
            assert.equal(s.transport.sessionId, undefined);
            // The ended session's id is refused with 404, which tells a
            // client to initialize again.
            const res = await fetch(fixture.url, withToken({
                method: 'POST',
                headers: {
                    'content-type': 'application/json',
                    accept: 'application/json, text/event-stream',
                    'mcp-session-id': sid,
                    'mcp-protocol-version': legacyVersion
                },
                body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' })
            }));
            assert.equal(res.status, 404);
        } finally {
            await s.close();
        }
    });
});
