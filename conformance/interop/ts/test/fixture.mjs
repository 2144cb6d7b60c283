// Starts (or locates) the mrtrkit fixture server for the interop tests.
//
//   FIXTURE_URL  use an already running server at this URL
//   FIXTURE_BIN  start this prebuilt fixture binary on a free loopback port
//   FIXTURE_TOKEN  send "Authorization: Bearer FIXTURE_TOKEN" with every
//                request (withToken), for a fixture run with -production
//
// With neither set, the fixture is built with `go build` from the mrtrkit
// module that contains this folder (Go must be on PATH). The stdio tests
// start the fixture binary themselves, as a subprocess of the client
// (fixtureBinary).

import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..', '..', '..');
const endpointPath = '/mcp';

function freePort() {
    return new Promise((resolve, reject) => {
        const srv = net.createServer();
        srv.unref();
        srv.on('error', reject);
        srv.listen(0, '127.0.0.1', () => {
            const { port } = srv.address();
            srv.close(() => resolve(port));
        });
    });
}

function canConnect(port) {
    return new Promise(resolve => {
        const sock = net.connect({ host: '127.0.0.1', port });
        sock.once('connect', () => {
            sock.destroy();
            resolve(true);
        });
        sock.once('error', () => resolve(false));
    });
}

const sleep = ms => new Promise(r => setTimeout(r, ms));

async function launch(bin, log) {
    const port = await freePort();
    const child = spawn(bin, ['-addr', `127.0.0.1:${port}`, '-path', endpointPath], {
        stdio: ['ignore', 'pipe', 'pipe']
    });
    child.stdout.on('data', d => log.push(String(d)));
    child.stderr.on('data', d => log.push(String(d)));
    let exit = null;
    child.once('exit', (code, signal) => {
        exit = { code, signal };
    });
    child.once('error', err => {
        exit = { error: err.message };
    });
    const stop = async () => {
        if (exit) return;
        const exited = new Promise(r => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
    };
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
        if (exit) throw new Error(`fixture exited before listening: ${JSON.stringify(exit)}\n${log.join('')}`);
        if (await canConnect(port)) return { url: `http://127.0.0.1:${port}${endpointPath}`, stop };
        await sleep(100);
    }
    await stop();
    throw new Error(`fixture did not listen on port ${port} within 30s\n${log.join('')}`);
}

/**
 * Returns fetch's init with "Authorization: Bearer FIXTURE_TOKEN" added when
 * that variable is set, and init unchanged otherwise.
 */
export function withToken(init = {}) {
    const token = process.env.FIXTURE_TOKEN;
    if (!token) return init;
    const headers = new Headers(init.headers ?? {});
    headers.set('authorization', `Bearer ${token}`);
    return { ...init, headers };
}

/**
 * Returns { url, stop, log } for a running fixture server.
 */
export async function startFixture() {
    const log = [];
    if (process.env.FIXTURE_URL) return { url: process.env.FIXTURE_URL, stop: async () => {}, log };
    let bin = process.env.FIXTURE_BIN;
    let tmp;
    if (!bin) {
        tmp = mkdtempSync(path.join(os.tmpdir(), 'mrtrkit-interop-ts-'));
        bin = path.join(tmp, 'fixture');
        execFileSync('go', ['build', '-C', repoRoot, '-o', bin, './conformance/server'], {
            stdio: ['ignore', 'inherit', 'inherit'],
            timeout: 5 * 60_000
        });
    }
    const cleanup = () => tmp && rmSync(tmp, { recursive: true, force: true });
    let lastErr;
    // A port picked by listening on :0 can be taken before the fixture binds it.
    for (let attempt = 0; attempt < 3; attempt++) {
        try {
            const { url, stop } = await launch(bin, log);
            return {
                url,
                log,
                stop: async () => {
                    await stop();
                    cleanup();
                }
            };
        } catch (err) {
            lastErr = err;
        }
    }
    cleanup();
    throw lastErr;
}

/**
 * Returns { bin, cleanup } for the fixture binary the stdio tests start
 * with -stdio: FIXTURE_BIN, or one built now (even with FIXTURE_URL set:
 * a stdio server is a subprocess of its client).
 */
export function fixtureBinary() {
    if (process.env.FIXTURE_BIN) return { bin: process.env.FIXTURE_BIN, cleanup: () => {} };
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'mrtrkit-interop-ts-stdio-'));
    const bin = path.join(tmp, 'fixture');
    execFileSync('go', ['build', '-C', repoRoot, '-o', bin, './conformance/server'], {
        stdio: ['ignore', 'inherit', 'inherit'],
        timeout: 5 * 60_000
    });
    return { bin, cleanup: () => rmSync(tmp, { recursive: true, force: true }) };
}
