// Makes the official conformance CLI send a bearer token, which it has no
// option for. Loaded into Node with NODE_OPTIONS="--require <this file>" by
// the production harness (main.go), it does something only in the process
// whose script is the @modelcontextprotocol/conformance CLI, and only when
// MRTRKIT_SUITE_TOKEN and MRTRKIT_SUITE_ORIGIN are set: it installs, as
// the global HTTP dispatcher that fetch and undici's request use, an
// undici Agent (the CLI's own copy of undici) that adds
// "Authorization: Bearer $MRTRKIT_SUITE_TOKEN" to every request to
// MRTRKIT_SUITE_ORIGIN that has no Authorization header, and it wraps
// node:http's request and get the same way (a few scenarios send raw
// requests with them). Requests to other origins are left alone. When MRTRKIT_SUITE_TOKEN_LOG names a file, the
// number of requests it added the header to is appended to it at exit.
'use strict';

const fs = require('node:fs');
const { createRequire } = require('node:module');

const token = process.env.MRTRKIT_SUITE_TOKEN;
const origin = (process.env.MRTRKIT_SUITE_ORIGIN || '').replace(/\/+$/, '');
let script = '';
try {
    script = fs.realpathSync(process.argv[1] || '');
} catch {
    // not a script (node -e, node -): nothing to do
}

if (token && origin && script.includes('@modelcontextprotocol/conformance')) {
    const { Agent, setGlobalDispatcher } = createRequire(script)('undici');
    const value = `Bearer ${token}`;
    const isAuth = name => String(name).toLowerCase() === 'authorization';

    // withToken returns headers, in the form undici was given them, with
    // the Authorization header added unless one is there.
    const withToken = headers => {
        if (headers == null) return { authorization: value };
        if (Array.isArray(headers)) {
            if (headers.length > 0 && Array.isArray(headers[0])) {
                return headers.some(([k]) => isAuth(k)) ? headers : [...headers, ['authorization', value]];
            }
            for (let i = 0; i < headers.length; i += 2) if (isAuth(headers[i])) return headers;
            return [...headers, 'authorization', value];
        }
        if (typeof headers[Symbol.iterator] === 'function') {
            const out = {};
            for (const [k, v] of headers) out[k] = v;
            return withToken(out);
        }
        return Object.keys(headers).some(isAuth) ? headers : { ...headers, authorization: value };
    };

    let added = 0;
    class BearerAgent extends Agent {
        dispatch(opts, handler) {
            if (String(opts.origin || '').replace(/\/+$/, '') === origin) {
                const headers = withToken(opts.headers);
                if (headers !== opts.headers) {
                    added++;
                    opts = { ...opts, headers };
                }
            }
            return super.dispatch(opts, handler);
        }
    }
    setGlobalDispatcher(new BearerAgent());

    // A few scenarios send raw requests with node:http (headers fetch
    // would refuse); give those the token too.
    const http = require('node:http');
    const target = new URL(origin);
    const targetPort = target.port || '80';
    const request = http.request;
    http.request = function (...args) {
        const hasURL = typeof args[0] === 'string' || args[0] instanceof URL;
        const url = hasURL ? new URL(String(args[0])) : null;
        const i = hasURL ? 1 : 0;
        const opts = args[i] !== null && typeof args[i] === 'object' && !(args[i] instanceof URL) ? args[i] : null;
        const host = (opts && (opts.hostname || opts.host)) || (url && url.hostname) || '';
        const port = String((opts && opts.port) || (url && url.port) || '80');
        if (host === target.hostname && port === targetPort) {
            const headers = (opts && opts.headers) || {};
            if (!Object.keys(headers).some(isAuth)) {
                added++;
                const withAuth = { ...(opts || {}), headers: { ...headers, authorization: value } };
                if (opts) args[i] = withAuth;
                else args.splice(i, 0, withAuth);
            }
        }
        return request.apply(this, args);
    };
    http.get = function (...args) {
        const req = http.request(...args);
        req.end();
        return req;
    };

    const log = process.env.MRTRKIT_SUITE_TOKEN_LOG;
    if (log) process.on('exit', () => fs.appendFileSync(log, `${added}\n`));
}
