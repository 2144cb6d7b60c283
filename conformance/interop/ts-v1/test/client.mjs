// A TypeScript SDK v1 client (Client + StreamableHTTPClientTransport) for the
// interop tests, with a recording fetch so the tests can check the wire, and
// elicitation, sampling and roots handlers the tests can steer.

import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
    CreateMessageRequestSchema,
    ElicitRequestSchema,
    ListRootsRequestSchema,
    LATEST_PROTOCOL_VERSION
} from '@modelcontextprotocol/sdk/types.js';
import { fillForm as fillFormFor } from '../../harness/harness.mjs';
import { withToken } from '../../harness/servers.mjs';

export const legacyVersion = '2025-11-25';

// Answers the client gives by default.
export const answers = {
    name: 'Alice',
    sampling: 'The capital of France is Paris.',
    rootURI: 'file:///tmp/mrtrkit-interop-ts1',
    rootName: 'interop root'
};

// Members that belong to the 2026-07-28 wire and must never reach a client
// of the initialize era.
const modernMembers = ['"resultType"', '"inputRequests"', '"requestState"', '"ttlMs"', '"cacheScope"', 'io.modelcontextprotocol/serverInfo'];

/**
 * Wire records every HTTP exchange of one client: the posted JSON-RPC
 * message, the request headers, the status and (for POSTs) the body.
 */
export class Wire {
    constructor() {
        this.exchanges = [];
        this.pending = [];
    }

    fetch = async (url, init = {}) => {
        const headers = new Headers(init.headers ?? {});
        let msg;
        if (typeof init.body === 'string') {
            try {
                msg = JSON.parse(init.body);
            } catch {
                msg = undefined;
            }
        }
        const ex = { method: init.method ?? 'GET', msg, headers, status: 0, contentType: '', body: undefined };
        this.exchanges.push(ex);
        let done;
        this.pending.push(new Promise(r => (done = r)));
        let res;
        try {
            res = await fetch(url, withToken(init));
        } finally {
            done();
        }
        ex.status = res.status;
        ex.contentType = res.headers.get('content-type') ?? '';
        ex.sessionId = res.headers.get('mcp-session-id') ?? undefined;
        if (ex.method === 'POST' && res.body) {
            // A copy of the body, read to its end in the background: an SSE
            // stream ends with the call it answers.
            this.pending.push(
                res
                    .clone()
                    .text()
                    .then(
                        t => (ex.body = t),
                        () => (ex.body = '')
                    )
            );
        }
        return res;
    };

    mark() {
        return this.exchanges.length;
    }

    since(mark) {
        return this.exchanges.slice(mark);
    }

    /** Waits until every exchange so far has its status, and every POST its whole body. */
    async settled() {
        for (let n = 0; n !== this.pending.length; ) {
            n = this.pending.length;
            await Promise.all(this.pending);
        }
    }

    /** The JSON-RPC messages in a body (one JSON object, or SSE data lines). */
    static messages(ex) {
        if (!ex.body) return [];
        if (ex.contentType.startsWith('text/event-stream')) {
            return ex.body
                .split('\n')
                .filter(l => l.startsWith('data:'))
                .map(l => l.slice(5).trim())
                .filter(Boolean)
                .map(d => JSON.parse(d));
        }
        try {
            return [JSON.parse(ex.body)];
        } catch {
            return [];
        }
    }

    dump(mark = 0) {
        return this.since(mark)
            .map(
                (ex, i) =>
                    `#${i} ${ex.method} ${JSON.stringify(ex.msg ?? null)?.slice(0, 400)}\n   -> HTTP ${ex.status} ${ex.contentType} ${String(ex.body ?? '').slice(0, 800)}`
            )
            .join('\n');
    }
}

/** Fills a form elicitation: every property gets a value of its type. */
export const fillForm = schema => fillFormFor(schema, answers.name);

/**
 * Connects a TS v1 client to url at 2025-11-25 with elicitation (form),
 * sampling and roots, or the given capabilities. hooks may replace a handler: elicit(req, extra),
 * sample(req, extra), roots(req, extra). Every server-to-client request is
 * recorded in `requests` as { method, id, params, signal }.
 */
export async function connectV1(url, hooks = {}, { capabilities } = {}) {
    const wire = new Wire();
    const requests = [];
    const errors = [];
    const caps = capabilities ?? { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true } };
    const client = new Client({ name: 'mrtrkit-interop-ts1', version: '1.0.0' }, { capabilities: caps });
    client.onerror = err => errors.push(err);
    const record = (method, req, extra) => {
        requests.push({ method, id: extra.requestId, params: req.params, signal: extra.signal });
    };
    // The SDK refuses a handler for a capability the client did not declare.
    if (caps.elicitation) {
        client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
            record('elicitation/create', req, extra);
            if (hooks.elicit) return hooks.elicit(req, extra);
            return { action: 'accept', content: fillForm(req.params.requestedSchema) };
        });
    }
    if (caps.sampling) {
        client.setRequestHandler(CreateMessageRequestSchema, async (req, extra) => {
            record('sampling/createMessage', req, extra);
            if (hooks.sample) return hooks.sample(req, extra);
            return { role: 'assistant', model: 'interop-model', stopReason: 'endTurn', content: { type: 'text', text: answers.sampling } };
        });
    }
    if (caps.roots) {
        client.setRequestHandler(ListRootsRequestSchema, async (req, extra) => {
            record('roots/list', req, extra);
            if (hooks.roots) return hooks.roots(req, extra);
            return { roots: [{ uri: answers.rootURI, name: answers.rootName }] };
        });
    }
    const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: wire.fetch });
    await client.connect(transport);
    return { client, transport, wire, requests, errors, close: () => client.close() };
}

/**
 * Checks what every exchange since mark shows about the session: each POST
 * after initialize carries the session id and the negotiated version; each
 * answer to a server request is accepted with 202; no body carries a member
 * of the 2026-07-28 wire; every server-to-client request has an integer id
 * of at least 1.
 */
export async function checkWire(s, mark = 0) {
    await s.wire.settled();
    const sid = s.transport.sessionId;
    assert.ok(sid, 'the session has an id');
    for (const ex of s.wire.since(mark)) {
        const what = `${ex.method} ${JSON.stringify(ex.msg ?? null)?.slice(0, 200)}`;
        if (ex.msg?.method === 'initialize') continue;
        assert.equal(ex.headers.get('mcp-session-id'), sid, `${what}: Mcp-Session-Id`);
        assert.equal(ex.headers.get('mcp-protocol-version'), legacyVersion, `${what}: MCP-Protocol-Version`);
        if (ex.method === 'POST' && ex.msg && !('method' in ex.msg)) {
            assert.equal(ex.status, 202, `${what}: an answer to a server request is accepted with 202`);
        }
        for (const m of modernMembers) {
            assert.ok(!String(ex.body ?? '').includes(m), `${what}: the body carries ${m}:\n${ex.body}`);
        }
        for (const m of Wire.messages(ex)) {
            if (m.method && m.id !== undefined) {
                assert.ok(Number.isInteger(m.id) && m.id >= 1, `server request ${m.method} has id ${JSON.stringify(m.id)}; want an integer >= 1`);
            }
        }
    }
}

export { LATEST_PROTOCOL_VERSION };

export { sleep } from '../../harness/harness.mjs';

/** Resolves when signal aborts, with its reason. */
export function aborted(signal) {
    if (signal.aborted) return Promise.resolve(signal.reason);
    return new Promise(resolve => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

/** Races p against a timer; rejects with what when the timer wins. */
export function within(ms, p, what) {
    let timer;
    return Promise.race([
        p.finally(() => clearTimeout(timer)),
        new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms);
        })
    ]);
}

/** The text of a tool result's text blocks. */
export function textOf(res) {
    return (res.content ?? [])
        .filter(c => c.type === 'text')
        .map(c => c.text)
        .join('\n');
}
