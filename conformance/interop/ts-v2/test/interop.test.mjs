// Interop test: the TypeScript SDK v2 client (@modelcontextprotocol/client)
// against the mrtrkit fixture server over Streamable HTTP at protocol
// version 2026-07-28, with the client's built-in input_required (MRTR)
// driver answering elicitation, sampling and roots requests.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { startFixture, withToken } from '../../harness/servers.mjs';

const MODERN = '2026-07-28';
const ANSWER_NAME = 'Alice';
const ANSWER_COLOR = 'blue';
const ANSWER_SAMPLING = 'The capital of France is Paris.';
const ROOT = { uri: 'file:///tmp/mrtrkit-interop', name: 'interop root' };

let fixture;

before(async () => {
    fixture = await startFixture();
    console.log(`fixture server at ${fixture.url}`);
});

after(async () => {
    await fixture?.stop();
});

// ---------------------------------------------------------------------------
// Wire recording: a fetch wrapper that keeps every POSTed JSON-RPC message and
// the JSON-RPC messages that came back (plain JSON or an SSE stream).

function parseReplies(contentType, text) {
    if (contentType.startsWith('text/event-stream')) {
        const out = [];
        for (const event of text.split(/\r?\n\r?\n/)) {
            const data = event
                .split(/\r?\n/)
                .filter(l => l.startsWith('data:'))
                .map(l => l.slice(5).replace(/^ /, ''))
                .join('\n');
            if (data) {
                try {
                    out.push(JSON.parse(data));
                } catch {
                    out.push({ unparsable: data });
                }
            }
        }
        return out;
    }
    if (!text.trim()) return [];
    try {
        return [JSON.parse(text)];
    } catch {
        return [{ unparsable: text }];
    }
}

function recordingFetch(exchanges) {
    return async (url, init = {}) => {
        const ex = { httpMethod: init.method ?? 'GET', headers: new Headers(init.headers), replies: [], raw: '' };
        if (typeof init.body === 'string') {
            ex.rawRequest = init.body;
            try {
                const msg = JSON.parse(init.body);
                ex.method = msg.method;
                ex.id = msg.id;
                ex.params = msg.params;
            } catch {
                // not JSON; keep the raw body only
            }
        }
        exchanges.push(ex);
        const res = await fetch(url, withToken(init));
        ex.status = res.status;
        ex.contentType = res.headers.get('content-type') ?? '';
        ex.done = res
            .clone()
            .text()
            .then(text => {
                ex.raw = text;
                ex.replies = parseReplies(ex.contentType, text);
            })
            .catch(() => {});
        return res;
    };
}

async function settled(exchanges) {
    await Promise.all(exchanges.map(ex => ex.done));
    return exchanges;
}

function resultOf(ex) {
    return ex.replies.find(r => r && r.id === ex.id && r.result)?.result;
}

function clip(text = '') {
    return text.length > 2000 ? `${text.slice(0, 2000)}... (${text.length} chars)` : text;
}

function dump(exchanges) {
    return exchanges
        .map(
            (ex, i) =>
                `#${i} ${ex.httpMethod} ${ex.method ?? ''} -> HTTP ${ex.status} ${ex.contentType}\n` +
                `  headers: ${JSON.stringify(Object.fromEntries([...ex.headers].filter(([k]) => k.startsWith('mcp-'))))}\n` +
                `  > ${clip(ex.rawRequest)}\n  < ${clip(ex.raw)}`
        )
        .join('\n');
}

// ---------------------------------------------------------------------------
// Client under test.

function fillForm(schema) {
    const content = {};
    for (const [name, prop] of Object.entries(schema?.properties ?? {})) {
        if (name === 'name') content[name] = ANSWER_NAME;
        else if (name === 'color') content[name] = ANSWER_COLOR;
        else if (prop.type === 'boolean') content[name] = true;
        else if (prop.type === 'integer' || prop.type === 'number') content[name] = 42;
        else content[name] = `interop ${name}`;
    }
    return content;
}

// connect opens a client session. Options:
//   mode          versionNegotiation mode ('auto' or { pin })
//   samplingOnly  declare and handle sampling alone (no elicitation, no roots)
//   manual        turn off auto-fulfilment; the test drives the rounds
async function connect({ mode = 'auto', samplingOnly = false, manual = false } = {}) {
    const exchanges = [];
    const inputs = { elicit: [], sampling: [], roots: 0 };
    const client = new Client(
        { name: 'mrtrkit-interop-ts', version: '1.0.0' },
        {
            capabilities: samplingOnly ? { sampling: {} } : { elicitation: { form: {} }, sampling: {}, roots: {} },
            versionNegotiation: { mode },
            inputRequired: { autoFulfill: !manual, maxRounds: 10 }
        }
    );
    if (!samplingOnly) {
        client.setRequestHandler('elicitation/create', async request => {
            inputs.elicit.push(request.params);
            return { action: 'accept', content: fillForm(request.params.requestedSchema) };
        });
        client.setRequestHandler('roots/list', async () => {
            inputs.roots++;
            return { roots: [ROOT] };
        });
    }
    client.setRequestHandler('sampling/createMessage', async request => {
        inputs.sampling.push(request.params);
        return {
            role: 'assistant',
            content: { type: 'text', text: ANSWER_SAMPLING },
            model: 'interop-model',
            stopReason: 'endTurn'
        };
    });
    const transport = new StreamableHTTPClientTransport(new URL(fixture.url), { fetch: recordingFetch(exchanges) });
    await client.connect(transport, { timeout: 30_000 });
    return { client, exchanges, inputs };
}

// withSession runs fn with a session that connect(opts) opened (opts may
// be left out), and closes the session when fn is done.
async function withSession(opts, fn) {
    if (typeof opts === 'function') {
        [opts, fn] = [{}, opts];
    }
    const s = await connect(opts);
    try {
        return await fn(s);
    } finally {
        await s.client.close();
    }
}

async function callTool(session, name) {
    const mark = session.exchanges.length;
    let result;
    try {
        result = await session.client.callTool({ name, arguments: {} }, { timeout: 30_000 });
    } catch (err) {
        const exs = await settled(session.exchanges.slice(mark));
        err.message += `\nwire:\n${dump(exs)}`;
        throw err;
    }
    const exs = await settled(session.exchanges.slice(mark));
    return { result, exs };
}

function textOf(result) {
    assert.notEqual(result.isError, true, `tool result has isError: ${JSON.stringify(result)}`);
    const texts = (result.content ?? []).filter(c => c.type === 'text').map(c => c.text);
    assert.ok(texts.length > 0, `tool result has no text: ${JSON.stringify(result)}`);
    return texts.join('\n');
}

// Verifies the MRTR contract on the tools/call legs of one call: modern
// envelope on every leg, fresh JSON-RPC ids, byte-exact requestState echo
// (none when none was issued), and exactly the asked-for keys answered.
function checkRounds(exs, wantLegs, method = 'tools/call') {
    const legs = exs.filter(ex => ex.method === method);
    assert.equal(legs.length, wantLegs, `tools/call legs\n${dump(exs)}`);
    const ids = new Set();
    legs.forEach((leg, i) => {
        const meta = leg.params?._meta ?? {};
        assert.equal(leg.headers.get('mcp-protocol-version'), MODERN, `leg ${i} MCP-Protocol-Version header`);
        assert.equal(meta['io.modelcontextprotocol/protocolVersion'], MODERN, `leg ${i} _meta protocolVersion`);
        assert.ok(meta['io.modelcontextprotocol/clientCapabilities'], `leg ${i} _meta clientCapabilities`);
        assert.ok(!ids.has(leg.id), `leg ${i} reuses JSON-RPC id ${leg.id}`);
        ids.add(leg.id);
        const res = resultOf(leg);
        assert.ok(res, `leg ${i} has no result\n${dump(exs)}`);
        assert.equal(res.resultType, i === legs.length - 1 ? 'complete' : 'input_required', `leg ${i} resultType`);
        if (i === 0) {
            assert.equal(leg.params.requestState, undefined, 'first leg sends requestState');
            assert.equal(leg.params.inputResponses, undefined, 'first leg sends inputResponses');
            return;
        }
        const prev = resultOf(legs[i - 1]);
        assert.equal(leg.params.requestState, prev.requestState, `leg ${i} requestState echo`);
        assert.deepEqual(
            Object.keys(leg.params.inputResponses ?? {}).sort(),
            Object.keys(prev.inputRequests ?? {}).sort(),
            `leg ${i} answers exactly the asked keys`
        );
    });
    return legs.map(resultOf);
}

// callRounds calls tool on s, checks that the final text holds each of
// want and that the call took legs tools/call legs (checkRounds), and
// returns the legs' results; the final text is logged.
async function callRounds(s, tool, legs, ...want) {
    const { result, exs } = await callTool(s, tool);
    const text = textOf(result);
    for (const w of want) {
        assert.ok(text.includes(w), `final text ${JSON.stringify(text)} lacks ${w}`);
    }
    console.log(`${tool} final text: ${JSON.stringify(text)}`);
    return checkRounds(exs, legs);
}

function methodsOf(inputRequests) {
    return Object.fromEntries(Object.entries(inputRequests ?? {}).map(([k, v]) => [k, v.method]));
}

// ---------------------------------------------------------------------------

describe('TypeScript SDK client vs mrtrkit fixture', () => {
    test('connect negotiates 2026-07-28 through server/discover', async () => {
        await withSession(async s => {
            assert.equal(s.client.getNegotiatedProtocolVersion(), MODERN);
            const exs = await settled(s.exchanges);
            assert.equal(exs[0]?.method, 'server/discover', dump(exs));
            assert.ok(!exs.some(ex => ex.method === 'initialize'), `legacy initialize sent\n${dump(exs)}`);
            assert.equal(resultOf(exs[0])?.resultType, 'complete');
            assert.ok(s.client.getServerVersion()?.name, 'serverInfo from discover _meta');
        });
    });

    test('connect with the version pinned to 2026-07-28', async () => {
        await withSession({ mode: { pin: MODERN } }, async s => {
            assert.equal(s.client.getNegotiatedProtocolVersion(), MODERN);
            const { result } = await callTool(s, 'test_simple_text');
            assert.equal(textOf(result), 'This is a simple text response for testing.');
        });
    });

    test('tools/list shows the fixture tools', async () => {
        await withSession(async s => {
            const { tools } = await s.client.listTools();
            const names = new Set(tools.map(t => t.name));
            for (const want of [
                'test_simple_text',
                'test_input_required_result_elicitation',
                'test_input_required_result_sampling',
                'test_input_required_result_multi_round',
                'test_input_required_result_multiple_inputs'
            ]) {
                assert.ok(names.has(want), `tools/list lacks ${want}`);
            }
            const ex = (await settled(s.exchanges)).find(e => e.method === 'tools/list');
            const res = resultOf(ex);
            assert.equal(res.resultType, 'complete');
            assert.equal(typeof res.ttlMs, 'number');
            assert.ok(['public', 'private'].includes(res.cacheScope), `cacheScope ${res.cacheScope}`);
        });
    });

    test('simple tool call', async () => {
        await withSession(async s => {
            const { result, exs } = await callTool(s, 'test_simple_text');
            assert.equal(textOf(result), 'This is a simple text response for testing.');
            checkRounds(exs, 1);
        });
    });

    test('MRTR: elicitation', async () => {
        await withSession(async s => {
            const [r1] = await callRounds(s, 'test_input_required_result_elicitation', 2, ANSWER_NAME);
            assert.deepEqual(methodsOf(r1.inputRequests), { user_name: 'elicitation/create' });
            assert.equal(s.inputs.elicit.length, 1);
        });
    });

    test('MRTR: sampling', async () => {
        await withSession(async s => {
            const [r1] = await callRounds(s, 'test_input_required_result_sampling', 2, ANSWER_SAMPLING);
            assert.deepEqual(methodsOf(r1.inputRequests), { capital_question: 'sampling/createMessage' });
            assert.equal(s.inputs.sampling.length, 1);
            assert.ok(s.inputs.sampling[0].messages?.length > 0 && s.inputs.sampling[0].maxTokens > 0);
        });
    });

    test('MRTR: multi-round (step1 -> step2 -> complete)', async () => {
        await withSession(async s => {
            const [r1, r2] = await callRounds(s, 'test_input_required_result_multi_round', 3, ANSWER_NAME, ANSWER_COLOR);
            assert.deepEqual(methodsOf(r1.inputRequests), { step1: 'elicitation/create' });
            assert.deepEqual(methodsOf(r2.inputRequests), { step2: 'elicitation/create' });
            assert.ok(r1.requestState && r2.requestState && r1.requestState !== r2.requestState, 'requestState evolves');
            assert.equal(s.inputs.elicit.length, 2);
        });
    });

    test('MRTR: multiple inputs (elicitation + sampling + roots + requestState)', async () => {
        await withSession(async s => {
            const [r1] = await callRounds(s, 'test_input_required_result_multiple_inputs', 2, ANSWER_NAME, ANSWER_SAMPLING, ROOT.uri);
            assert.deepEqual(methodsOf(r1.inputRequests), {
                user_name: 'elicitation/create',
                greeting: 'sampling/createMessage',
                client_roots: 'roots/list'
            });
            assert.ok(typeof r1.requestState === 'string' && r1.requestState.length > 0, 'requestState issued');
            assert.equal(s.inputs.elicit.length, 1);
            assert.equal(s.inputs.sampling.length, 1);
            assert.equal(s.inputs.roots, 1);
        });
    });

    test('MRTR: roots only', async () => {
        await withSession(async s => {
            const [r1] = await callRounds(s, 'test_input_required_result_list_roots', 2, ROOT.uri);
            assert.deepEqual(methodsOf(r1.inputRequests), { client_roots: 'roots/list' });
            assert.equal(s.inputs.roots, 1);
        });
    });

    test('MRTR: requestState round trip', async () => {
        await withSession(async s => {
            const [r1] = await callRounds(s, 'test_input_required_result_request_state', 2, 'state-ok');
            assert.deepEqual(methodsOf(r1.inputRequests), { confirm: 'elicitation/create' });
            assert.ok(typeof r1.requestState === 'string' && r1.requestState.length > 0, 'requestState issued');
        });
    });

    test('MRTR on prompts/get', async () => {
        await withSession(async s => {
            const mark = s.exchanges.length;
            const res = await s.client.getPrompt({ name: 'test_input_required_result_prompt' }, { timeout: 30_000 });
            const exs = await settled(s.exchanges.slice(mark));
            const texts = res.messages.filter(m => m.content?.type === 'text').map(m => m.content.text);
            assert.ok(
                texts.some(t => t.includes('interop context')),
                `prompt messages ${JSON.stringify(texts)} lack the elicited context`
            );
            const [r1] = checkRounds(exs, 2, 'prompts/get');
            assert.deepEqual(methodsOf(r1.inputRequests), { user_context: 'elicitation/create' });
        });
    });

    test('MRTR: a sampling-only client is asked for sampling only', async () => {
        await withSession({ samplingOnly: true }, async s => {
            const [r1] = await callRounds(s, 'test_input_required_result_capabilities', 2);
            assert.deepEqual(methodsOf(r1.inputRequests), { greeting: 'sampling/createMessage' });
            assert.equal(s.inputs.sampling.length, 1);
            assert.equal(s.inputs.elicit.length, 0);
        });
    });

    test('manual rounds: tampered requestState is refused, the untouched one completes', async () => {
        const name = 'test_input_required_result_tampered_state';
        const opts = { allowInputRequired: true, timeout: 30_000 };
        await withSession({ manual: true }, async s => {
            const r1 = await s.client.callTool({ name, arguments: {} }, opts);
            assert.equal(r1.resultType, 'input_required');
            assert.deepEqual(methodsOf(r1.inputRequests), { confirm: 'elicitation/create' });
            assert.ok(typeof r1.requestState === 'string' && r1.requestState.length > 0, 'requestState issued');
            const inputResponses = {
                confirm: { action: 'accept', content: fillForm(r1.inputRequests.confirm.params.requestedSchema) }
            };
            const mid = Math.floor(r1.requestState.length / 2);
            const flipped =
                r1.requestState.slice(0, mid) + (r1.requestState[mid] === 'A' ? 'B' : 'A') + r1.requestState.slice(mid + 1);
            for (const bad of [r1.requestState + '-TAMPERED', flipped]) {
                await assert.rejects(
                    s.client.callTool({ name, arguments: {}, inputResponses, requestState: bad }, opts),
                    err => {
                        assert.equal(err.code, -32602, `error ${err.code} ${err.message}`);
                        return true;
                    },
                    `tampered requestState ${bad.slice(0, 24)}... was accepted`
                );
            }
            const r2 = await s.client.callTool({ name, arguments: {}, inputResponses, requestState: r1.requestState }, opts);
            assert.notEqual(r2.resultType, 'input_required');
            const text = textOf(r2);
            console.log(`manual-rounds final text: ${JSON.stringify(text)}`);
        });
    });
});
