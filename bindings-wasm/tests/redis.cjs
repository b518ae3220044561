'use strict';
// A throw-away redis-server for the suite (RedisDedupStore, RedisFleet) and the smallest RESP
// client those take (`sendCommand(args)`, as node-redis has it), shared by the tests and their
// child processes.
const net = require('node:net');
const { spawn } = require('node:child_process');

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * The smallest RESP client a RedisDedupStore or a RedisFleet takes (`sendCommand(args)`):
 * commands in order over one connection, replies as node-redis gives them (a bulk or simple
 * string, null for nil, an integer; an error reply rejects). Like node-redis with
 * `disableOfflineQueue`, it fails fast: while Redis cannot be reached each command rejects (the
 * commands waiting on a connection that closes reject too), and the next command connects again.
 */
function respClient(port) {
  let socket = null;
  let buffer = Buffer.alloc(0);
  let waiting = [];
  const parse = (at) => {
    const end = buffer.indexOf('\r\n', at);
    if (end < 0) return null;
    const kind = String.fromCharCode(buffer[at]);
    const text = buffer.toString('utf8', at + 1, end);
    if (kind === '+') return [text, end + 2];
    if (kind === '-') return [new Error(text), end + 2];
    if (kind === ':') return [Number(text), end + 2];
    if (kind === '$') {
      const n = Number(text);
      if (n < 0) return [null, end + 2];
      if (buffer.length < end + 2 + n + 2) return null;
      return [buffer.toString('utf8', end + 2, end + 2 + n), end + 2 + n + 2];
    }
    throw new Error(`unexpected reply ${kind}`);
  };
  const connect = () => {
    const s = net.connect(port, '127.0.0.1');
    const gone = (e) => {
      if (socket !== s) return;
      socket = null;
      for (const w of waiting) w.reject(e);
      waiting = [];
    };
    s.on('error', gone);
    s.on('close', () => gone(new Error('the connection to Redis closed')));
    s.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (let r = parse(0); r !== null && waiting.length; r = parse(0)) {
        buffer = buffer.subarray(r[1]);
        const { resolve, reject } = waiting.shift();
        if (r[0] instanceof Error) reject(r[0]);
        else resolve(r[0]);
      }
    });
    socket = s;
    buffer = Buffer.alloc(0);
    return s;
  };
  return {
    sendCommand(args) {
      return new Promise((resolve, reject) => {
        const s = socket ?? connect();
        waiting.push({ resolve, reject });
        s.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`);
      });
    },
    close() {
      const s = socket;
      socket = null;
      s?.destroy();
    },
  };
}

/** A RESP client once Redis on `port` answers PING (at most 10 s). */
async function connected(port) {
  const conn = respClient(port);
  for (let i = 0; ; i++) {
    try {
      if ((await conn.sendCommand(['PING'])) === 'PONG') return conn;
    } catch (e) {
      if (i > 200) throw e;
      await pause(50);
    }
  }
}

/** Starts redis-server (no persistence) on `port` (default: a free one): `{ port, process,
 * client() (a connected RESP client), stop() }`. */
async function startRedis(port) {
  const p = port ?? await freePort();
  const child = spawn('redis-server', ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  (await connected(p)).close();
  return {
    port: p,
    process: child,
    client: () => connected(p),
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill();
    }),
  };
}

module.exports = { freePort, respClient, connected, startRedis };
