// Interop: the TypeScript SDK v1 client (MCP 2025-11-25) completes the
// summarize_repo example's tool end to end. The example serves that era
// through package mrtr/legacy, so each of the tool's rounds reaches this
// client as a real sampling/createMessage request, answered here from
// canned answers that pass the example's checks.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { checkWire, connectV1, legacyVersion, sleep, textOf } from './client.mjs';
import { startExample } from '../../harness/servers.mjs';

// The directory summarised: a few small text files the model picks from.
const files = {
    'README.md': '# tiny\n\nA tiny Go program that greets.\n',
    'go.mod': 'module example.com/tiny\n\ngo 1.26\n',
    'main.go': 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n',
    'notes.txt': 'Nothing to see here.\n'
};
const pick = ['README.md', 'main.go', 'go.mod'];
const summary = 'tiny is a Go program of one file, main.go, that prints a greeting.';

let dir;
let example;

before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'mrtrkit-interop-summarize-'));
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    example = await startExample(dir);
});

after(async () => {
    await example?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
});

// model answers the example's two questions the way a model would: the
// listing question (pick_files) with a JSON array of listed paths, the
// summary question with a summary.
function model(asked) {
    return async req => {
        const p = req.params;
        const text = p.messages[0].content.text;
        asked.push(p);
        let answer;
        if (p.systemPrompt.startsWith('You select files')) {
            for (const f of pick) assert.ok(text.split('\n').includes(f), `the listing shows ${f}:\n${text}`);
            answer = JSON.stringify(pick);
        } else {
            for (const f of pick) assert.ok(text.includes(`===== ${f} =====\n${files[f]}`), `the summary question holds ${f}:\n${text}`);
            answer = summary;
        }
        return { role: 'assistant', model: 'canned-model', stopReason: 'endTurn', content: { type: 'text', text: answer } };
    };
}

describe('TypeScript SDK v1 client and the summarize_repo example (MCP 2025-11-25)', () => {
    test('summarize_repo completes: pick_files, then summary, by sampling', async () => {
        const asked = [];
        const s = await connectV1(example.url, { sample: model(asked) }, { capabilities: { sampling: {} } });
        try {
            assert.equal(s.transport.protocolVersion, legacyVersion);
            assert.equal(s.client.getServerVersion()?.name, 'summarize-repo');
            const { tools } = await s.client.listTools();
            assert.deepEqual(
                tools.map(t => t.name),
                ['summarize_repo']
            );
            const res = await s.client.callTool({ name: 'summarize_repo', arguments: { audience: 'developer' } });
            assert.ok(!res.isError, JSON.stringify(res));
            assert.equal(textOf(res), summary);
            // The SDK checked structuredContent against the tool's outputSchema.
            assert.deepEqual(res.structuredContent, { files: pick, summary });
            assert.equal(asked.length, 2, 'two model rounds');
            assert.ok(asked[0].messages[0].content.text.includes('for a reader who is a developer'));
            assert.ok(asked[1].messages[0].content.text.startsWith('Summarise this repository for a reader who is a developer'));
            const ids = s.requests.map(r => r.id);
            assert.ok(ids.every(id => Number.isInteger(id) && id >= 1) && new Set(ids).size === 2, `leg ids ${ids}`);
            await checkWire(s);
        } catch (err) {
            await Promise.race([s.wire.settled(), sleep(500)]);
            console.error(`wire:\n${s.wire.dump()}\nexample log (tail):\n${example.log.join('').slice(-4000)}`);
            throw err;
        } finally {
            await s.close();
        }
    });

    test('an answer the example refuses ends the call with -32602', async () => {
        // A pick that is not a JSON array of listed paths is refused by the
        // tool with -32602 (as on the 2026-07-28 wire), naming the key; the
        // session goes on.
        const s = await connectV1(
            example.url,
            {
                sample: async () => ({ role: 'assistant', model: 'canned-model', content: { type: 'text', text: 'README.md, main.go' } })
            },
            { capabilities: { sampling: {} } }
        );
        try {
            await assert.rejects(s.client.callTool({ name: 'summarize_repo', arguments: { audience: 'developer' } }), err => {
                assert.equal(err.code, -32602);
                assert.match(err.message, /Invalid answer to pick_files: not a JSON array/);
                assert.deepEqual(err.data, { key: 'pick_files' });
                return true;
            });
            assert.equal(s.requests.length, 1, 'one question was asked');
            assert.deepEqual(await s.client.ping(), {});
            await checkWire(s);
        } finally {
            await s.close();
        }
    });

    test('a client without the sampling capability is told what is missing', async () => {
        const s = await connectV1(example.url, {}, { capabilities: {} });
        try {
            const res = await s.client.callTool({ name: 'summarize_repo', arguments: { audience: 'developer' } });
            assert.equal(res.isError, true, JSON.stringify(res));
            assert.match(textOf(res), /sampling capability.*did not declare it at initialize/);
            assert.equal(s.requests.length, 0, 'nothing was asked');
            await checkWire(s);
        } finally {
            await s.close();
        }
    });
});
