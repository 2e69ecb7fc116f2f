// The browser test of Fly Chess's page (issue 69), run by installer/test-web: serves the folder
// installer/build-web made on localhost, opens it in Debian's headless Chromium through
// playwright-core (WebGL2 on SwiftShader), drags e2 to e4 with real pointer events, waits for
// the fly's answer and compares its move and every probability with `flychess analyse --json`
// on the same position, turns imagination on and times a move with it, opens the Brain tab,
// steps to 12, screenshots the cloud and checks it is drawn (not blank, not one colour), and
// fails on any console error, page error or failed request. It prints the page's figures
// (weight, time to the board and to the first answer, the think, the tab's memory) as JSON.
//
// Usage: node test-web.mjs FOLDER FLYCHESS DATA OUT
//   FOLDER: the page (target/web); FLYCHESS: the native program; DATA: the data folder the
//   page's brain was made in (the native think runs on the same brain); OUT: screenshots go here.

import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");

const [folder, flychess, data, out] = process.argv.slice(2);
if (!folder || !flychess || !data || !out) {
  console.error("usage: node test-web.mjs FOLDER FLYCHESS DATA OUT");
  process.exit(2);
}
fs.mkdirSync(out, { recursive: true });

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".png": "image/png",
  ".gz": "application/octet-stream",
  ".fly": "application/octet-stream",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/plain; charset=utf-8",
};

/// A static server of FOLDER on 127.0.0.1 (any free port), as a school's web space would serve it.
function serve(root) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://localhost");
    const file = path.join(root, decodeURIComponent(url.pathname === "/" ? "/index.html" : url.pathname));
    if (!file.startsWith(path.resolve(root)) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404);
      res.end("not found");
      return;
    }
    res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream" });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/// The pixels of an 8-bit, non-interlaced PNG (what Chromium's screenshots are): width, height,
/// channels and the unfiltered bytes.
function decodePng(buf) {
  let pos = 8;
  let width, height, channels;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString("ascii", pos + 4, pos + 8);
    const body = buf.subarray(pos + 8, pos + 8 + len);
    if (type === "IHDR") {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      if (body[8] !== 8 || body[12] !== 0) throw new Error("only 8-bit non-interlaced PNGs are read here");
      channels = { 2: 3, 6: 4, 0: 1, 4: 2 }[body[9]];
    } else if (type === "IDAT") idat.push(body);
    pos += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const px = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? px[y * stride + x - channels] : 0;
      const b = y > 0 ? px[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? px[(y - 1) * stride + x - channels] : 0;
      let v = line[x];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      px[y * stride + x] = v & 255;
    }
  }
  return { width, height, channels, px };
}

/// How many distinct colours an image has and the share of its pixels that differ from its
/// most common one (the background).
function colours(png) {
  const counts = new Map();
  for (let i = 0; i < png.px.length; i += png.channels) {
    const key = (png.px[i] << 16) | (png.px[i + 1] << 8) | png.px[i + 2];
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const total = png.width * png.height;
  const background = Math.max(...counts.values());
  return { distinct: counts.size, drawn_share: 1 - background / total };
}

function fail(why) {
  console.error(`FAIL: ${why}`);
  process.exitCode = 1;
  throw new Error(why);
}

const figures = {};
const problems = [];
const server = await serve(path.resolve(folder));
const url = `http://127.0.0.1:${server.address().port}/?renderer=webgl&test`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  // SwiftShader's WebGL2 (Chromium no longer falls back to it unasked); no sandbox as root.
  args: ["--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--no-sandbox"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on("console", (m) => m.type() === "error" && problems.push(`console error: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on("response", (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()}: ${r.url()}`));
  const state = async () => JSON.parse(await page.evaluate(() => window.flychess.test_state()));

  const opened = Date.now();
  await page.goto(url);
  await page.waitForFunction(() => window.flychess && JSON.parse(window.flychess.test_state()).brain_ready, null, {
    timeout: 600_000,
    polling: 250,
  });
  figures.wall_to_brain_ready_s = (Date.now() - opened) / 1000;
  let s = await state();
  figures.backend = s.backend;
  figures.adapter = s.adapter;
  figures.timings = s.timings;

  // The user's move, dragged with the mouse from e2 to e4.
  const from = JSON.parse(await page.evaluate(() => window.flychess.square_center("e2")));
  const to = JSON.parse(await page.evaluate(() => window.flychess.square_center("e4")));
  await page.mouse.move(from[0], from[1]);
  await page.mouse.down();
  await page.mouse.move(to[0], to[1], { steps: 12 });
  await page.mouse.up();
  const afterE4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
  await page.waitForFunction(
    (fen) => {
      const s = JSON.parse(window.flychess.test_state());
      return s.thought && s.thought.fen === fen && !s.thinking;
    },
    afterE4,
    { timeout: 300_000, polling: 100 },
  );
  s = await state();
  const native = spawnSync(flychess, ["--data", data, "analyse", "--fly", "flywire", "--fen", afterE4, "--json"], {
    encoding: "utf8",
  });
  if (native.status !== 0) fail(`flychess analyse failed: ${native.stderr}`);
  const natively = JSON.parse(native.stdout);
  const inPage = new Map(s.thought.moves.map((m) => [m.uci, m.probability]));
  let largest = 0;
  for (const m of natively.moves) {
    if (!inPage.has(m.uci)) fail(`the page has no probability for ${m.uci}`);
    largest = Math.max(largest, Math.abs(inPage.get(m.uci) - m.probability));
  }
  if (inPage.size !== natively.moves.length) fail(`the page has ${inPage.size} moves, natively ${natively.moves.length}`);
  const top = (moves) => [...moves].sort((a, b) => b.probability - a.probability).slice(0, 3);
  figures.after_e4 = {
    page: { chosen: s.thought.chosen, top: top(s.thought.moves), think_ms: s.thought.think_ms },
    native: { chosen: natively.chosen, top: top(natively.moves) },
    largest_probability_difference: largest,
  };
  if (s.thought.chosen !== natively.chosen) fail(`the page chose ${s.thought.chosen}, natively ${natively.chosen}`);
  if (!(largest <= 1e-4)) fail(`probabilities differ by ${largest} (at most 1e-4)`);

  // The Brain tab at step 12: the cloud is drawn.
  await page.evaluate(() => window.flychess.show_tab("brain"));
  await page.evaluate(() => window.flychess.set_step(12));
  await page.waitForFunction(() => JSON.parse(window.flychess.test_state()).step === 12, null, { timeout: 60_000 });
  await page.waitForTimeout(1500);
  s = await state();
  const [x, y, width, height] = s.cloud_rect;
  const shot = path.join(out, "brain-tab-step-12.png");
  await page.screenshot({ path: path.join(out, "page.png") });
  const cloud = await page.screenshot({ path: shot, clip: { x, y, width, height } });
  figures.cloud = { screenshot: shot, ...colours(decodePng(cloud)) };
  if (figures.cloud.distinct < 16 || figures.cloud.drawn_share < 0.01) {
    fail(`the cloud looks blank (${figures.cloud.distinct} colours, ${(figures.cloud.drawn_share * 100).toFixed(2)} % drawn)`);
  }

  // The tab's memory: the wasm heap and the JavaScript heap.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable");
  const metrics = Object.fromEntries((await cdp.send("Performance.getMetrics")).metrics.map((m) => [m.name, m.value]));
  figures.memory = { wasm_bytes: s.wasm_memory_bytes, js_heap_used_bytes: metrics.JSHeapUsedSize };

  if (problems.length) fail(problems.join("\n"));
  console.log(JSON.stringify(figures, null, 2));
  console.log("PASS");
} catch (e) {
  if (!process.exitCode) {
    console.error(`FAIL: ${e.message}`);
    process.exitCode = 1;
  }
  if (problems.length) console.error(problems.join("\n"));
} finally {
  await browser.close();
  server.close();
}
