// A real OpenAI-compatible Chat Completions server for cairn's end-to-end
// tests (issue 60): node-llama-cpp running a real GGUF model on the CPU, so
// the client, the gateway and `ask` are checked on the wire against an
// independent implementation rather than only against a scripted receiver.
//
//   node tests/e2e/data/llm/server.mjs --model FILE.gguf [--port 0]
//
// GET /v1/models lists the model (its file name); POST /v1/chat/completions
// takes messages (system, user, assistant with tool_calls, tool), tools,
// max_tokens, stream and stream_options.include_usage, and answers with a
// message (text or tool calls) and usage, or as server-sent events (the
// text as it is written, then the tool calls, then the usage when asked
// for). One request runs at a time.
// Stdout carries exactly one line, `READY <base url>`, once it listens.
// node-llama-cpp is loaded from $CAIRN_LLM_MODULES (a node_modules folder),
// default <repo>/target/llm-node/node_modules.

import { createServer } from 'node:http';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

for (const method of ['log', 'info', 'debug']) console[method] = console.error;

const { values: args } = parseArgs({
  options: { port: { type: 'string', default: '0' }, model: { type: 'string' } },
});
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const modules = process.env.CAIRN_LLM_MODULES ?? join(root, 'target/llm-node/node_modules');
const { getLlama, LlamaChat } = await import(
  pathToFileURL(join(modules, 'node-llama-cpp/dist/index.js')).href
);

const llama = await getLlama({ gpu: false, build: 'never' });
const model = await llama.loadModel({ modelPath: args.model });
const context = await model.createContext({ contextSize: 4096, threads: 2 });
const sequence = context.getSequence();
const id = basename(args.model);

// The conversation as node-llama-cpp's chat history: an assistant's tool
// calls and the tool answers that follow become function-call items.
function history(messages) {
  const out = [];
  for (const m of messages) {
    const text = Array.isArray(m.content)
      ? m.content.filter((p) => p.type === 'text').map((p) => p.text).join('\n')
      : (m.content ?? '');
    if (m.role === 'system' || m.role === 'developer') out.push({ type: 'system', text });
    else if (m.role === 'user') out.push({ type: 'user', text });
    else if (m.role === 'assistant') {
      const response = text ? [text] : [];
      for (const c of m.tool_calls ?? []) {
        let params;
        try { params = JSON.parse(c.function.arguments || '{}'); } catch { params = {}; }
        response.push({ type: 'functionCall', name: c.function.name, params, result: '', _id: c.id });
      }
      out.push({ type: 'model', response });
    } else if (m.role === 'tool') {
      const last = out.at(-1);
      const call = last?.type === 'model'
        ? last.response.find((r) => r.type === 'functionCall' && r._id === m.tool_call_id)
        : undefined;
      if (call) call.result = text;
      else out.push({ type: 'user', text });
    }
  }
  for (const item of out) {
    if (item.type === 'model') for (const r of item.response) if (typeof r === 'object') delete r._id;
  }
  return out;
}

// The offered tools as node-llama-cpp functions (their schemas left out:
// the grammar takes a subset of JSON schema, and the model is told them in words).
function functions(tools) {
  if (!tools?.length) return undefined;
  return Object.fromEntries(
    tools.map((t) => [t.function.name, { description: t.function.description }]),
  );
}

let queue = Promise.resolve();
function serially(job) {
  const run = queue.then(job, job);
  queue = run.catch(() => {});
  return run;
}

async function complete(body, onText) {
  const chat = new LlamaChat({ contextSequence: sequence });
  try {
    const chatHistory = history(body.messages ?? []);
    const r = await chat.generateResponse(chatHistory, {
      maxTokens: Math.min(body.max_tokens ?? 256, 512),
      functions: functions(body.tools),
      onTextChunk: onText,
    });
    const prompt = model.tokenize(JSON.stringify(body.messages ?? [])).length;
    const completion = model.tokenize(r.response ?? '').length;
    return { r, usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } };
  } finally {
    chat.dispose({ disposeSequence: false });
    sequence.clearHistory();
  }
}

// The functions a response called, as Chat Completions tool calls.
function toolCalls(r) {
  return (r.functionCalls ?? []).map((c, i) => ({
    id: `call_${i}`, type: 'function',
    function: { name: c.functionName, arguments: JSON.stringify(c.params ?? {}) },
  }));
}

function send(res, status, value) {
  const data = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/v1/models') {
    return send(res, 200, { object: 'list', data: [{ id, object: 'model' }] });
  }
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
    return send(res, 404, { error: { message: 'not found' } });
  }
  let raw = '';
  req.on('data', (c) => { raw += c; });
  req.on('end', () => serially(async () => {
    let body;
    try { body = JSON.parse(raw); } catch { return send(res, 400, { error: { message: 'not JSON' } }); }
    if (body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (value) => res.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', model: id, ...value })}\n\n`);
      const chunk = (delta, finish = null) => event({ choices: [{ index: 0, delta, finish_reason: finish }] });
      const { r, usage } = await complete(body, (text) => chunk({ content: text }));
      const calls = toolCalls(r);
      calls.forEach((c, index) => chunk({ tool_calls: [{ index, ...c }] }));
      chunk({}, calls.length ? 'tool_calls' : 'stop');
      if (body.stream_options?.include_usage) event({ choices: [], usage });
      res.end('data: [DONE]\n\n');
      return;
    }
    const { r, usage } = await complete(body);
    const calls = toolCalls(r);
    const message = calls.length
      ? { role: 'assistant', content: null, tool_calls: calls }
      : { role: 'assistant', content: r.response ?? '' };
    send(res, 200, {
      id: 'chatcmpl-local', object: 'chat.completion', model: id,
      choices: [{ index: 0, message, finish_reason: calls.length ? 'tool_calls' : 'stop' }],
      usage,
    });
  }).catch((e) => {
    console.error(e);
    if (!res.headersSent) send(res, 500, { error: { message: String(e.message ?? e) } });
    else res.end();
  }));
});
server.listen(Number(args.port), '127.0.0.1', () => {
  process.stdout.write(`READY http://127.0.0.1:${server.address().port}/v1\n`);
});
