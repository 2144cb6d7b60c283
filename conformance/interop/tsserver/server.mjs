// A TypeScript SDK v2 (@modelcontextprotocol/server 2.4.0) server for the
// Go client's interop tests: one tool, "ask", that needs a name
// (elicitation) and a model's answer (sampling) before it answers, written
// in the SDK's multi round-trip style.
//
//   node server.mjs --http PORT   Streamable HTTP on 127.0.0.1:PORT/mcp (createMcpHandler:
//                                 2026-07-28, with the SDK's stateless 2025 fallback)
//   node server.mjs               stdio
import http from 'node:http';
import * as z from 'zod';
import {
  McpServer,
  createMcpHandler,
  inputRequired,
  acceptedContent,
  inputResponse,
} from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

function build() {
  const server = new McpServer({ name: 'ts-v2-interop', version: '2.4.0' });
  server.registerTool('ask', { description: 'Asks a name and a model, then greets', inputSchema: z.object({}) }, async (_args, ctx) => {
    const responses = ctx.mcpReq.inputResponses;
    const who = acceptedContent(responses, 'who');
    const model = inputResponse(responses, 'model');
    if (who && model.kind === 'sampling') {
      return { content: [{ type: 'text', text: `hello ${who.name} from ${model.result.model}` }] };
    }
    return inputRequired({
      inputRequests: {
        who: inputRequired.elicit({ message: 'Your name?', requestedSchema: z.object({ name: z.string() }) }),
        model: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 10 }),
      },
    });
  });
  return server;
}

const i = process.argv.indexOf('--http');
if (i < 0) {
  await build().connect(new StdioServerTransport());
} else {
  const port = Number(process.argv[i + 1]);
  const handler = createMcpHandler(build);
  http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    const request = new Request(`http://127.0.0.1:${port}${req.url}`, {
      method: req.method,
      headers: req.headers,
      body: body.length && req.method !== 'GET' && req.method !== 'HEAD' ? body : undefined,
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) for await (const c of response.body) res.write(c);
    res.end();
  }).listen(port, '127.0.0.1', () => process.stdout.write('listening\n'));
}
