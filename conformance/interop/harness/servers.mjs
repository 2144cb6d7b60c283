// Starts (or locates) the servers the TypeScript SDK tests (ts-v1/ and
// ts-v2/) talk to: the mrtrkit conformance fixture server, the
// summarize_repo example and the tour example. It imports only Node's own
// modules.
//
//   FIXTURE_URL          use an already running fixture server at this URL
//   FIXTURE_BIN          start this prebuilt fixture binary on a free loopback port
//   FIXTURE_LEG_TIMEOUT  the -leg-timeout the fixture runs with, for the v1
//                        tests (default 2s when they start it; with FIXTURE_URL
//                        the timeout tests run only when this says what the
//                        server uses)
//   EXAMPLE_BIN          start this prebuilt summarize_repo binary
//   TOUR_BIN             start this prebuilt tour binary
//   FIXTURE_TOKEN        send "Authorization: Bearer FIXTURE_TOKEN" with every
//                        request of the clients (withToken), for a fixture run
//                        with -production
//
// A binary that is not given is built with `go build` from the mrtrkit module
// that contains this folder (Go must be on PATH). The stdio tests start the
// fixture binary themselves, as a subprocess of the client (fixtureBinary).

import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { sleep } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..', '..', '..');

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

/** The leg timeout the tests start the fixture with, in milliseconds. */
export const defaultLegTimeoutMs = 2000;

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


// launch starts bin with args(port) and waits until it accepts connections.
async function launch(bin, args, log) {
    const port = await freePort();
    const child = spawn(bin, args(port), { stdio: ['ignore', 'pipe', 'pipe'] });
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
        if (exit) throw new Error(`${bin} exited before listening: ${JSON.stringify(exit)}\n${log.join('')}`);
        if (await canConnect(port)) return { url: `http://127.0.0.1:${port}/mcp`, stop };
        await sleep(100);
    }
    await stop();
    throw new Error(`${bin} did not listen on port ${port} within 30s\n${log.join('')}`);
}

// start builds pkg unless bin is given, then launches it.
async function start(bin, pkg, args) {
    const log = [];
    let tmp;
    if (!bin) {
        tmp = mkdtempSync(path.join(os.tmpdir(), 'mrtrkit-interop-ts-'));
        bin = path.join(tmp, path.basename(pkg));
        execFileSync('go', ['build', '-C', repoRoot, '-o', bin, pkg], {
            stdio: ['ignore', 'inherit', 'inherit'],
            timeout: 5 * 60_000
        });
    }
    const cleanup = () => tmp && rmSync(tmp, { recursive: true, force: true });
    let lastErr;
    // A port picked by listening on :0 can be taken before the server binds it.
    for (let attempt = 0; attempt < 3; attempt++) {
        try {
            const { url, stop } = await launch(bin, args, log);
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
 * Returns { url, stop, log, legTimeoutMs } for a running fixture server.
 * With legTimeout (the 2025-11-25 tests, whose bridged legs time out), the
 * fixture runs with -leg-timeout, and a server given by FIXTURE_URL needs
 * FIXTURE_LEG_TIMEOUT too; without it, the fixture runs with its defaults
 * and legTimeoutMs is undefined.
 */
export async function startFixture({ legTimeout = false } = {}) {
    if (!legTimeout) {
        if (process.env.FIXTURE_URL) return { url: process.env.FIXTURE_URL, stop: async () => {}, log: [] };
        return start(process.env.FIXTURE_BIN, './conformance/server', port => ['-addr', `127.0.0.1:${port}`, '-path', '/mcp']);
    }
    const fromEnv = process.env.FIXTURE_LEG_TIMEOUT ? parseDuration(process.env.FIXTURE_LEG_TIMEOUT) : undefined;
    if (process.env.FIXTURE_URL) {
        if (fromEnv === undefined) {
            throw new Error('FIXTURE_URL needs FIXTURE_LEG_TIMEOUT, the -leg-timeout that server runs with: the timeout tests depend on it');
        }
        return { url: process.env.FIXTURE_URL, stop: async () => {}, log: [], legTimeoutMs: fromEnv };
    }
    const legTimeoutMs = fromEnv ?? defaultLegTimeoutMs;
    const srv = await start(process.env.FIXTURE_BIN, './conformance/server', port => [
        '-addr',
        `127.0.0.1:${port}`,
        '-path',
        '/mcp',
        '-leg-timeout',
        `${legTimeoutMs}ms`
    ]);
    return { ...srv, legTimeoutMs };
}

/**
 * Returns { url, stop, log } for the summarize_repo example serving dir.
 */
export async function startExample(dir) {
    return start(process.env.EXAMPLE_BIN, './examples/summarize_repo', port => ['-addr', `127.0.0.1:${port}`, '-dir', dir]);
}

// parseDuration reads a Go duration of the forms the tests use: 1500ms, 2s.
function parseDuration(s) {
    const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(s.trim());
    if (!m) throw new Error(`FIXTURE_LEG_TIMEOUT: want a duration such as 2s or 1500ms, got ${JSON.stringify(s)}`);
    return Number(m[1]) * (m[2] === 's' ? 1000 : 1);
}

/**
 * Returns { bin, cleanup } for the fixture binary the stdio tests start
 * with -stdio: FIXTURE_BIN, or one built now (even with FIXTURE_URL set:
 * a stdio server is a subprocess of its client).
 */
export function fixtureBinary() {
    return binary(process.env.FIXTURE_BIN, './conformance/server');
}

/**
 * Returns { url, stop, log } for the tour example (examples/tour), started
 * from TOUR_BIN or built now.
 */
export async function startTour() {
    return start(process.env.TOUR_BIN, './examples/tour', port => ['-addr', `127.0.0.1:${port}`]);
}

/** Returns { bin, cleanup } for the tour binary: TOUR_BIN, or one built now. */
export function tourBinary() {
    return binary(process.env.TOUR_BIN, './examples/tour');
}

// binary returns { bin, cleanup } for bin when given, else for pkg built now.
function binary(bin, pkg) {
    if (bin) return { bin, cleanup: () => {} };
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'mrtrkit-interop-ts-stdio-'));
    bin = path.join(tmp, path.basename(pkg));
    execFileSync('go', ['build', '-C', repoRoot, '-o', bin, pkg], {
        stdio: ['ignore', 'inherit', 'inherit'],
        timeout: 5 * 60_000
    });
    return { bin, cleanup: () => rmSync(tmp, { recursive: true, force: true }) };
}
